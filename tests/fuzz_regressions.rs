//! Inputs that crashed a fuzz target (fuzz/), kept as named regressions. Each runs through the
//! same entry point as its target and must not panic.

use kafka_pcap::output::VecSink;
use kafka_pcap::{run_slice, Config};
use std::path::Path;

/// As the `pipeline` fuzz target: inputs without a capture magic number get a raw-IP pcap
/// header.
fn pipeline(data: &[u8]) -> VecSink {
    let mut sink = VecSink::default();
    let is_capture = matches!(
        data.get(..4),
        Some(
            [0xd4, 0xc3, 0xb2, 0xa1]
                | [0xa1, 0xb2, 0xc3, 0xd4]
                | [0x4d, 0x3c, 0xb2, 0xa1]
                | [0x0a, 0x0d, 0x0d, 0x0a]
        )
    );
    if is_capture {
        let _ = run_slice(data, &Config::default(), &mut sink);
        return sink;
    }
    let mut file = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    file.extend_from_slice(&65535u32.to_le_bytes());
    file.extend_from_slice(&101u32.to_le_bytes());
    file.extend_from_slice(data);
    let _ = run_slice(&file, &Config::default(), &mut sink);
    sink
}

fn input(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fuzz_regressions")
            .join(name),
    )
    .unwrap()
}

/// A ControlledShutdown v0 request (header v0) passed the request probe with 10 bytes, and the
/// correlation-id check then read past them (index out of bounds in `Handler::plausible`).
#[test]
fn pipeline_short_v0_request_probe() {
    let sink = pipeline(&input("pipeline-short-v0-request-probe.bin"));
    // Whatever it decodes, it finishes; the input is a single mangled TCP conversation.
    assert!(sink.0.len() < 1000);
}

/// The same short ControlledShutdown v0 request on a port nobody named: Kafka detection
/// (`detect_request`) read its correlation id past the 8 bytes the probe had looked at.
#[test]
fn pipeline_short_v0_request_detect() {
    let sink = pipeline(&input("pipeline-short-v0-request-detect.bin"));
    assert!(sink.0.len() < 1000);
}

/// As the `walks` fuzz target: byte 0 picks Produce (even) or Fetch and the version, byte 1
/// the piece size; the walk fed whole and in pieces must agree.
fn walks(
    data: &[u8],
) -> Result<
    (kafka_pcap::kafka::apis::Body, Option<usize>, Option<usize>),
    kafka_pcap::kafka::primitives::DecodeError,
> {
    use kafka_pcap::kafka::apis::{fetch, produce, WalkFn};
    let (pick, piece, body) = (data[0], data[1], &data[2..]);
    let (start, version): (WalkFn, i16) = if pick & 1 == 0 {
        (produce::walk_request, 3 + i16::from(pick >> 1) % 11)
    } else {
        (fetch::walk_response, 4 + i16::from(pick >> 1) % 15)
    };
    let mut whole = start(version, body.len() as u64);
    whole.feed(body);
    // Bytes after the structure: how many (the same however the bytes came).
    let whole = whole.finish().map(|f| {
        (
            f.body,
            f.trailing.map(|e| e.remaining),
            f.damage.map(|e| e.remaining),
        )
    });
    let mut pieces = start(version, body.len() as u64);
    for chunk in body.chunks(usize::from(piece % 64) + 1) {
        pieces.feed(chunk);
    }
    let pieces = pieces.finish().map(|f| {
        (
            f.body,
            f.trailing.map(|e| e.remaining),
            f.damage.map(|e| e.remaining),
        )
    });
    match (&whole, &pieces) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(a), Err(b)) => {
            assert_eq!(a.kind, b.kind);
            assert_eq!(a.offset_in(body.len()), b.offset_in(body.len()));
            assert_eq!(a.path(), b.path());
        }
        _ => panic!("whole {whole:?} != pieces {pieces:?}"),
    }
    whole
}

/// A Produce v11 request whose batch is a magic-0 message set with a batch_length below 5:
/// the walk subtracted the 17 bytes it had read from the batch's 12 + batch_length (overflow;
/// a wrapped skip in release builds). Then a truncated_body at that batch_length; now that
/// batch and the rest of its records field are passed over (damage the walk goes on after),
/// and the walk fails at the partition's tagged fields after it, whose count these bytes do
/// not hold.
#[test]
fn walks_short_legacy_batch() {
    let e = walks(&input("walks-short-legacy-batch.bin")).unwrap_err();
    assert_eq!(
        e.kind,
        kafka_pcap::kafka::primitives::DecodeErrorKind::ArrayCountExceedsFrame
    );
    assert_eq!(e.path(), "topic_data[0].partition_data[0].tagged_fields");
}

/// A Fetch response cut inside its first unit: fed whole, the walk named the field it ran
/// out in (`throttle_time_ms`); fed in pieces, it found the truncation only at the end and named
/// none. Both now report it at the unit, with the field.
#[test]
fn walks_truncated_field() {
    let e = walks(&input("walks-truncated-field.bin")).unwrap_err();
    assert_eq!(
        e.kind,
        kafka_pcap::kafka::primitives::DecodeErrorKind::TruncatedBody
    );
}

/// As the `trees` fuzz target: a Fetch v4 response whose walk fails. The walk's one trace node
/// covered the whole body even so, past the point where the tree's body ended: the tree did not
/// tile its frame. The node is now traced only for a walk that succeeds.
#[test]
fn trees_walked_body_error() {
    use kafka_pcap::kafka::tree::{request_tree, response_tree};
    let data = input("trees-walked-body-error.bin");
    let frame = &data[1..];
    if let Ok(t) = request_tree(frame) {
        assert_eq!(t.untiled(), None);
    }
    let t = response_tree(frame, 1, 4).expect("a tree, with the walk's failure in it");
    assert_eq!(t.size, frame.len());
    assert_eq!(t.untiled(), None);
}

/// As the `trees` fuzz target: a Produce v10 response with a NodeEndpoints tagged field. The
/// field's bytes (a copy) were decoded with the traced budget, so its nodes were placed outside
/// the frame. Tagged fields' contents are now decoded untraced.
#[test]
fn trees_produce_tagged_endpoints() {
    use kafka_pcap::kafka::tree::response_tree;
    let data = input("trees-produce-tagged-endpoints.bin");
    let frame = &data[1..];
    let t = response_tree(frame, 0, 10).expect("the response decodes: it has a tree");
    assert_eq!(t.size, frame.len());
    assert_eq!(t.untiled(), None);
}

/// As the `trees` fuzz target: an EndTxn v0 request whose size prefix declares 26 bytes of
/// which 24 were captured, cut before its last field. Its tree spans the 30 bytes the prefix
/// declares, the 2 never captured a `not_captured` node, as every tree of a frame cut inside
/// its body does since such trees came; the target still asked for the captured size (28) and
/// failed on it. The target now asks for the declared size when the tree ends in
/// `not_captured` (a body decoded whole from fewer bytes than the prefix declares, as a
/// damaged prefix gives, still spans the bytes there are).
#[test]
fn trees_cut_frame_spans_its_declared_size() {
    let data = input("trees-cut-after-last-field.bin");
    let frame = &data[1..];
    let t = kafka_pcap::kafka::tree::request_tree(frame).unwrap();
    assert_eq!((frame.len(), t.size), (28, 30));
    assert_eq!(t.untiled(), None);
    let last = t.children.last().unwrap();
    assert_eq!(
        (last.name.as_str(), last.offset, last.size),
        ("not_captured", 28, 2)
    );
    let names: Vec<String> = t.flatten().into_iter().map(|(n, _, _)| n).collect();
    assert!(names.iter().any(|n| n == "ProducerEpoch"), "{names:?}");
}
