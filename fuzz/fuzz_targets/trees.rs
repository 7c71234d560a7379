//! The `--format tree` path: the field trace recorded while the header and body decoders of
//! every API in the decoder table read arbitrary bytes. The first byte picks the API (of the
//! table) and the version; the rest is a frame with its size prefix. Checks that a tree, when
//! there is one, tiles its frame: each node's children lie inside it, in order, without gaps
//! or overlaps, and the root covers the whole frame (a frame cut inside its body, shorter than
//! its size prefix says, the bytes the prefix declares: the tree ends with the missing ones as
//! a `not_captured` node); and that a response the decoder accepts always has a tree.
#![no_main]
use kafka_pcap::kafka::apis::{self, KEYS};
use kafka_pcap::kafka::primitives::Budget;
use kafka_pcap::kafka::header::decode_response_header;
use kafka_pcap::kafka::tree::{request_tree, response_tree};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, frame)) = data.split_first() else { return };
    let key = KEYS[usize::from(pick) % KEYS.len()];
    let d = apis::decoder(key).unwrap();
    let span = (d.versions.end() - d.versions.start() + 1) as u8;
    let version = d.versions.start() + i16::from((pick / 16) % span);
    // What a tree covers: the frame, or for a frame cut inside its body (the tree ends with
    // `not_captured`) what its prefix declares.
    let declared = frame
        .get(..4)
        .map_or(0, |p| i32::from_be_bytes([p[0], p[1], p[2], p[3]]));
    let covered = |t: &kafka_pcap::kafka::trace::Node| {
        if t.children.last().is_some_and(|c| c.name == "not_captured") {
            usize::try_from(declared).map_or(frame.len(), |d| d + 4)
        } else {
            frame.len()
        }
    };
    if let Ok(t) = request_tree(frame) {
        assert_eq!(t.size, covered(&t));
        assert_eq!(t.untiled(), None);
    }
    let tree = response_tree(frame, key, version);
    if let Ok(t) = &tree {
        assert_eq!(t.size, covered(t));
        assert_eq!(t.untiled(), None);
    }
    // A frame whose response decodes whole has a tree.
    if frame.len() >= 4 {
        let hv = kafka_pcap::kafka::api::response_header_version(key, version);
        let b = Budget::default();
        if let Ok(h) = decode_response_header(&frame[4..], hv, &b) {
            if (d.decode_response)(&frame[4 + h.len..], version, &b).is_ok() {
                assert!(tree.is_ok());
            }
        }
    }
});
