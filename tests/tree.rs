//! `kafka::tree`: every field of the seed's smallest v1 request and response with exactly the
//! byte offset and size of the seed's object tree (../shared/seeds/WriteTxnMarkers.txt, copied
//! here node by node; also read from the file itself when ../shared is present), and the trees
//! of the project's v0 and v2 captures' frames cover their frames exactly.

mod common;

use common::{seed_request, seed_response};
use kafka_pcap::kafka::tree::{render, request_tree, response_tree};

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    hex::decode(s).unwrap()
}

/// The seed's request object tree: (first word of the node, offset, size), in order.
const SEED_REQUEST: &[(&str, usize, usize)] = &[
    ("WriteTxnMarkersRequest", 0x00, 41),
    ("Frame", 0x00, 4),
    ("size", 0x00, 4),
    ("RequestHeader", 0x04, 11),
    ("request_api_key", 0x04, 2),
    ("request_api_version", 0x06, 2),
    ("correlation_id", 0x08, 4),
    ("client_id", 0x0c, 2),
    ("tagged_fields", 0x0e, 1),
    ("WriteTxnMarkersRequest", 0x0f, 26),
    ("Markers", 0x0f, 25),
    ("length", 0x0f, 1),
    ("WritableTxnMarker[0]", 0x10, 24),
    ("ProducerId", 0x10, 8),
    ("ProducerEpoch", 0x18, 2),
    ("TransactionResult", 0x1a, 1),
    ("Topics", 0x1b, 8),
    ("length", 0x1b, 1),
    ("WritableTxnMarkerTopic[0]", 0x1c, 7),
    ("Name", 0x1c, 1),
    ("PartitionIndexes", 0x1d, 5),
    ("length", 0x1d, 1),
    ("int32[0]", 0x1e, 4),
    ("tagged_fields", 0x22, 1),
    ("CoordinatorEpoch", 0x23, 4),
    ("tagged_fields", 0x27, 1),
    ("tagged_fields", 0x28, 1),
];

/// The seed's response object tree.
const SEED_RESPONSE: &[(&str, usize, usize)] = &[
    ("WriteTxnMarkersResponse", 0x00, 31),
    ("Frame", 0x00, 4),
    ("size", 0x00, 4),
    ("ResponseHeader", 0x04, 5),
    ("correlation_id", 0x04, 4),
    ("tagged_fields", 0x08, 1),
    ("WriteTxnMarkersResponse", 0x09, 22),
    ("Markers", 0x09, 21),
    ("length", 0x09, 1),
    ("WritableTxnMarkerResult[0]", 0x0a, 20),
    ("ProducerId", 0x0a, 8),
    ("Topics", 0x12, 11),
    ("length", 0x12, 1),
    ("WritableTxnMarkerTopicResult[0]", 0x13, 10),
    ("Name", 0x13, 1),
    ("Partitions", 0x14, 8),
    ("length", 0x14, 1),
    ("WritableTxnMarkerPartitionResult[0]", 0x15, 7),
    ("PartitionIndex", 0x15, 4),
    ("ErrorCode", 0x19, 2),
    ("tagged_fields", 0x1b, 1),
    ("tagged_fields", 0x1c, 1),
    ("tagged_fields", 0x1d, 1),
    ("tagged_fields", 0x1e, 1),
];

fn first_words(flat: Vec<(String, usize, usize)>) -> Vec<(String, usize, usize)> {
    flat.into_iter()
        .map(|(n, o, s)| (n.split(' ').next().unwrap().to_string(), o, s))
        .collect()
}

fn owned(v: &[(&str, usize, usize)]) -> Vec<(String, usize, usize)> {
    v.iter().map(|(n, o, s)| (n.to_string(), *o, *s)).collect()
}

#[test]
fn seed_request_tree_has_the_seed_offsets_and_sizes() {
    let t = request_tree(&seed_request()).unwrap();
    assert_eq!(first_words(t.flatten()), owned(SEED_REQUEST));
    let text = render(&t);
    assert!(text.starts_with("WriteTxnMarkersRequest message v1 [0x0000, 41B]\n+-- Frame [0x0000, 4B]\n|   +-- size int32 = 37 [0x0000, 4B]\n+-- RequestHeader v2 [0x0004, 11B]\n|   +-- request_api_key int16 = 27 (WriteTxnMarkers) [0x0004, 2B]\n"), "{text}");
    assert!(
        text.contains("|   +-- client_id nullable_string = \"\" (int16 len=0) [0x000c, 2B]\n"),
        "{text}"
    );
    assert!(
        text.contains("+-- length uvarint = 2 (compact, n+1) [0x000f, 1B]\n"),
        "{text}"
    );
    assert!(
        text.contains("+-- TransactionResult bool = false (ABORT) [0x001a, 1B]\n"),
        "{text}"
    );
    assert!(
        text.contains("+-- Name string = \"\" (compact, len+1=1) [0x001c, 1B]\n"),
        "{text}"
    );
    assert!(
        text.ends_with("    +-- tagged_fields uvarint = 0 [0x0028, 1B]\n"),
        "{text}"
    );
}

#[test]
fn seed_response_tree_has_the_seed_offsets_and_sizes() {
    let t = response_tree(&seed_response(), 27, 1).unwrap();
    assert_eq!(first_words(t.flatten()), owned(SEED_RESPONSE));
    assert!(render(&t).contains("+-- ErrorCode int16 = 0 (NONE) [0x0019, 2B]\n"));
}

/// The same lists, read from the seed file itself: every `[0x...., NB]` of its object trees.
#[test]
fn seed_file_object_trees_match() {
    let Some(path) = common::shared("seeds/WriteTxnMarkers.txt") else {
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap();
    let trees: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("WriteTxnMarkers") && l.contains(" +-- "))
        .collect();
    assert_eq!(trees.len(), 2, "the seed's two object trees");
    let parse = |line: &str| -> Vec<(String, usize, usize)> {
        // Nodes are separated by "+-- " (after "| " runs); each ends in "[0xOFFS, NB]".
        line.split("+-- ")
            .map(|node| {
                let node = node.trim_start_matches(['|', ' ']);
                let name = node.split(' ').next().unwrap().to_string();
                let open = node.find("[0x").unwrap();
                let close = node[open..].find(']').unwrap() + open;
                let (off, size) = node[open + 1..close].split_once(", ").unwrap();
                (
                    name,
                    usize::from_str_radix(&off[2..], 16).unwrap(),
                    size.trim_end_matches('B').parse().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(parse(trees[0]), owned(SEED_REQUEST));
    assert_eq!(parse(trees[1]), owned(SEED_RESPONSE));
}

/// Every node's children tile it exactly (no byte unaccounted for, none twice), for frames of
/// each version, with topics, several partitions and errors.
#[test]
fn trees_tile_their_frames() {
    fn check(n: &kafka_pcap::kafka::tree::Node) {
        assert_eq!(n.untiled(), None);
    }
    // v0 request: header v1 (no tagged fields), classic strings and arrays.
    let v0 = hex("00000034 001b 0000 00000007 0003 616263 | 00000001 0000000000000fa0 0003 01 00000001 0006 6f7264657273 00000001 00000002 00000005");
    let t = request_tree(&v0).unwrap();
    assert_eq!(t.size, v0.len());
    check(&t);
    let text = render(&t);
    assert!(
        text.contains("+-- ProducerId int64 = 4000 [0x0015, 8B]"),
        "{text}"
    );
    assert!(
        text.contains("+-- Name string = \"orders\" (int16 len=6) [0x0024, 8B]"),
        "{text}"
    );
    assert!(
        text.contains("+-- TransactionResult bool = true (COMMIT)"),
        "{text}"
    );
    // v2 request adds TransactionVersion (int8) to each marker.
    let v2 = hex("00000027 001b 0002 00000001 0000 00 | 02 0000000000000001 0000 01 02 02 78 02 00000000 00 00000000 02 00 00");
    let t = request_tree(&v2).unwrap();
    assert_eq!(t.size, v2.len());
    check(&t);
    assert!(
        render(&t).contains("+-- TransactionVersion int8 = 2 [0x0028, 1B]"),
        "{}",
        render(&t)
    );
    // v1 response with an error code.
    let r = hex("00000021 00000001 00 | 02 0000000000000fa0 02 07 6f7264657273 02 00000001 0006 00 00 00 00");
    let t = response_tree(&r, 27, 1).unwrap();
    assert_eq!(t.size, r.len());
    check(&t);
    assert!(
        render(&t).contains("ErrorCode int16 = 6 (NOT_LEADER_OR_FOLLOWER)"),
        "{}",
        render(&t)
    );
    // Bytes after the body are a last node, so the tree still covers the frame.
    let mut long = seed_request();
    long.extend_from_slice(&[0xde, 0xad]);
    let t = request_tree(&long).unwrap();
    assert_eq!(t.size, 43);
    check(&t);
    assert!(render(&t).ends_with(
        "+-- trailing_bytes bytes = 2 bytes the schema does not describe [0x0029, 2B]\n"
    ));
    // A frame cut short (its prefix gives more bytes than it has) is laid out as far as it
    // goes, then `cut_field` (the captured bytes of the field cut) and `not_captured`.
    for t in [
        request_tree(&v0[..20]).unwrap(),
        response_tree(&r[..12], 27, 1).unwrap(),
    ] {
        assert_eq!(t.untiled(), None, "{}", render(&t));
        let last = t.children.last().unwrap();
        assert_eq!(last.name, "not_captured", "{}", render(&t));
        assert_eq!(last.offset + last.size, t.size);
    }
    assert_eq!(
        request_tree(&v0[..20])
            .unwrap()
            .children
            .last()
            .unwrap()
            .offset,
        20
    );
    // A frame cut before its header is an error, not a panic.
    assert!(request_tree(&v0[..5]).is_err());
}

/// Every truncation and every single-byte change of the seed frames gives a tree or an error,
/// never a panic; a tree never claims more bytes than the frame has.
#[test]
fn damaged_frames_never_panic() {
    for frame in [seed_request(), seed_response()] {
        for cut in 0..frame.len() {
            let _ = request_tree(&frame[..cut]);
            let _ = response_tree(&frame[..cut], 27, 1);
        }
        for at in 0..frame.len() {
            for b in [0x00, 0x01, 0x7f, 0x80, 0xff] {
                let mut f = frame.clone();
                f[at] = b;
                for v in 0..=2 {
                    if let Ok(t) = response_tree(&f, 27, v) {
                        assert!(t.size <= f.len());
                    }
                }
                if let Ok(t) = request_tree(&f) {
                    assert!(t.size <= f.len());
                }
            }
        }
    }
}
