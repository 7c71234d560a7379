//! The seed vectors of ../shared/seeds/WriteTxnMarkers.txt (copied here byte for byte): the
//! smallest legal v1 request (41 bytes) and response (31 bytes), decoded to exactly the values,
//! and the byte offsets, of the seed's object tree. Then a property test against a second
//! implementation: any WriteTxnMarkers v1 request or response encoded by the `kafka-protocol`
//! crate decodes to the same values.

use kafka_pcap::kafka::apis::write_txn_markers::{
    decode_request, decode_response, TransactionResult, WritableTxnMarker,
    WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopic,
    WritableTxnMarkerTopicResult, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
};
use kafka_pcap::kafka::header::{decode_request_header, decode_response_header};
use kafka_pcap::kafka::primitives::{Budget, DecodeErrorKind};

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    hex::decode(s).unwrap()
}

/// `WriteTxnMarkersRequest message v1 [0x0000, 41B]`.
fn seed_request() -> Vec<u8> {
    hex("00000025 001b 0001 00000000 0000 00 | 02 0000000000000000 0000 00 02 01 02 00000000 00 00000000 00 00")
}

/// `WriteTxnMarkersResponse message v1 [0x0000, 31B]`.
fn seed_response() -> Vec<u8> {
    hex("0000001b 00000000 00 | 02 0000000000000000 02 01 02 00000000 0000 00 00 00 00")
}

#[test]
fn seed_request_decodes_to_the_object_tree() {
    let f = seed_request();
    assert_eq!(f.len(), 41);
    // Frame [0x0000, 4B]: size int32 = 37.
    assert_eq!(i32::from_be_bytes([f[0], f[1], f[2], f[3]]), 37);
    // RequestHeader v2 [0x0004, 11B].
    let h = decode_request_header(&f[4..], 2, &Budget::default()).unwrap();
    assert_eq!(h.len, 11);
    assert_eq!((h.api_key, h.api_version, h.correlation_id), (27, 1, 0));
    // client_id nullable_string = "" (int16 len=0) [0x000c, 2B]; tagged_fields = 0 [0x000e, 1B].
    assert_eq!(h.client_id.as_deref(), Some(""));
    assert!(h.unknown_tagged_fields.is_empty());
    // WriteTxnMarkersRequest struct [0x000f, 26B].
    let body = &f[0x0f..];
    assert_eq!(body.len(), 26);
    let r = decode_request(body, 1, &Budget::default()).unwrap();
    assert_eq!(
        r,
        WriteTxnMarkersRequest {
            markers: vec![WritableTxnMarker {
                producer_id: 0,
                producer_epoch: 0,
                transaction_result: TransactionResult::Abort,
                topics: vec![WritableTxnMarkerTopic {
                    name: String::new(),
                    partition_indexes: vec![0],
                    unknown_tagged_fields: vec![],
                }],
                coordinator_epoch: 0,
                transaction_version: None,
                unknown_tagged_fields: vec![],
            }],
            unknown_tagged_fields: vec![],
        }
    );
}

#[test]
fn seed_response_decodes_to_the_object_tree() {
    let f = seed_response();
    assert_eq!(f.len(), 31);
    assert_eq!(i32::from_be_bytes([f[0], f[1], f[2], f[3]]), 27);
    // ResponseHeader v1 [0x0004, 5B].
    let h = decode_response_header(&f[4..], 1, &Budget::default()).unwrap();
    assert_eq!((h.correlation_id, h.len), (0, 5));
    // WriteTxnMarkersResponse struct [0x0009, 22B]: no throttle time, no top-level error.
    let body = &f[0x09..];
    assert_eq!(body.len(), 22);
    let r = decode_response(body, 1, &Budget::default()).unwrap();
    assert_eq!(
        r,
        WriteTxnMarkersResponse {
            markers: vec![WritableTxnMarkerResult {
                producer_id: 0,
                topics: vec![WritableTxnMarkerTopicResult {
                    name: String::new(),
                    partitions: vec![WritableTxnMarkerPartitionResult {
                        partition_index: 0,
                        error_code: 0,
                        error: Some("NONE"),
                        unknown_tagged_fields: vec![],
                    }],
                    unknown_tagged_fields: vec![],
                }],
                unknown_tagged_fields: vec![],
            }],
            unknown_tagged_fields: vec![],
        }
    );
}

/// Each (seed offset, field path) of the object tree: corrupting the byte at that offset into
/// an impossible value makes decoding fail exactly there, naming exactly that field. This pins
/// the decoder's idea of where each field lies to the seed's offsets.
#[test]
fn seed_request_field_offsets() {
    // (absolute offset in the 41-byte frame, byte to write, expected kind, expected path)
    let cases: &[(usize, u8, DecodeErrorKind, &str)] = &[
        // Markers length uvarint [0x000f, 1B]: 100 elements cannot fit in 25 bytes.
        (
            0x0f,
            0x65,
            DecodeErrorKind::ArrayCountExceedsFrame,
            "markers",
        ),
        // Topics length uvarint [0x001b, 1B].
        (
            0x1b,
            0x40,
            DecodeErrorKind::ArrayCountExceedsFrame,
            "markers[0].topics",
        ),
        // Name compact string [0x001c, 1B]: length 31 runs past the frame.
        (
            0x1c,
            0x20,
            DecodeErrorKind::StringLengthExceedsFrame,
            "markers[0].topics[0].name",
        ),
        // PartitionIndexes length [0x001d, 1B]: null (0) is not allowed.
        (
            0x1d,
            0x00,
            DecodeErrorKind::NullNotAllowed,
            "markers[0].topics[0].partition_indexes",
        ),
        // Topic's tagged_fields [0x0022, 1B]: 127 fields cannot fit.
        (
            0x22,
            0x7f,
            DecodeErrorKind::ArrayCountExceedsFrame,
            "markers[0].topics[0].tagged_fields",
        ),
        // Marker's tagged_fields [0x0027, 1B].
        (
            0x27,
            0x03,
            DecodeErrorKind::ArrayCountExceedsFrame,
            "markers[0].tagged_fields",
        ),
        // Top-level tagged_fields [0x0028, 1B]: one field, but no bytes follow.
        (
            0x28,
            0x01,
            DecodeErrorKind::ArrayCountExceedsFrame,
            "tagged_fields",
        ),
    ];
    for &(at, byte, kind, path) in cases {
        let mut f = seed_request();
        f[at] = byte;
        let body = &f[0x0f..];
        let e = decode_request(body, 1, &Budget::default()).expect_err(path);
        assert_eq!(e.kind, kind, "{path}");
        assert_eq!(e.path(), path);
        assert_eq!(e.offset_in(body.len()) + 0x0f, at, "{path}: offset");
    }
    // A topic name holding the byte 0xff, which is not UTF-8.
    let body = hex("02 0000000000000000 0000 01 02 02 ff 02 00000000 00 00000000 00 00");
    let e = decode_request(&body, 1, &Budget::default()).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::InvalidUtf8);
    assert_eq!(e.path(), "markers[0].topics[0].name");
    assert_eq!(e.offset_in(body.len()), 13);
    // One byte too many: trailing bytes at the very end.
    let mut f = seed_request();
    f.push(0);
    let e = decode_request(&f[0x0f..], 1, &Budget::default()).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::TrailingBytes);
    assert_eq!(e.offset_in(27), 26);
}

#[test]
fn seed_response_field_offsets() {
    let cases: &[(usize, u8, DecodeErrorKind, &str)] = &[
        (
            0x09,
            0x20,
            DecodeErrorKind::ArrayCountExceedsFrame,
            "markers",
        ),
        (
            0x12,
            0x20,
            DecodeErrorKind::ArrayCountExceedsFrame,
            "markers[0].topics",
        ),
        (
            0x13,
            0x30,
            DecodeErrorKind::StringLengthExceedsFrame,
            "markers[0].topics[0].name",
        ),
        (
            0x14,
            0x00,
            DecodeErrorKind::NullNotAllowed,
            "markers[0].topics[0].partitions",
        ),
        (
            0x1b,
            0x05,
            DecodeErrorKind::ArrayCountExceedsFrame,
            "markers[0].topics[0].partitions[0].tagged_fields",
        ),
        (
            0x1c,
            0x05,
            DecodeErrorKind::ArrayCountExceedsFrame,
            "markers[0].topics[0].tagged_fields",
        ),
        (
            0x1d,
            0x05,
            DecodeErrorKind::ArrayCountExceedsFrame,
            "markers[0].tagged_fields",
        ),
        (0x1e, 0x80, DecodeErrorKind::TruncatedBody, "tagged_fields"),
    ];
    for &(at, byte, kind, path) in cases {
        let mut f = seed_response();
        f[at] = byte;
        let body = &f[0x09..];
        let e = decode_response(body, 1, &Budget::default()).expect_err(path);
        assert_eq!(e.kind, kind, "{path}");
        assert_eq!(e.path(), path);
        assert_eq!(e.offset_in(body.len()) + 0x09, at, "{path}: offset");
    }
}

/// Version 0 (classic) and version 2 (TransactionVersion) of the same marker, laid out by hand
/// from the schema facts.
#[test]
fn v0_and_v2_layouts() {
    // v0: int32 array counts, int16 string lengths, no tagged fields.
    let v0 = hex(
        "00000001 0000000000000fa0 0003 01 00000001 0006 6f7264657273 00000002 00000000 00000001 00000005",
    );
    let r = decode_request(&v0, 0, &Budget::default()).unwrap();
    let m = &r.markers[0];
    assert_eq!((m.producer_id, m.producer_epoch), (4000, 3));
    assert_eq!(m.transaction_result, TransactionResult::Commit);
    assert_eq!(m.topics[0].name, "orders");
    assert_eq!(m.topics[0].partition_indexes, vec![0, 1]);
    assert_eq!((m.coordinator_epoch, m.transaction_version), (5, None));
    // The same bytes are not a v1 body.
    assert!(decode_request(&v0, 1, &Budget::default()).is_err());
    // v2: as v1 plus TransactionVersion int8 after CoordinatorEpoch.
    let v2 = hex("02 0000000000000fa0 0003 01 02 07 6f7264657273 02 00000007 00 00000005 02 00 00");
    let r = decode_request(&v2, 2, &Budget::default()).unwrap();
    assert_eq!(r.markers[0].transaction_version, Some(2));
    assert_eq!(r.markers[0].topics[0].partition_indexes, vec![7]);
    // As v1 the TransactionVersion byte is taken for the tagged-field count and then the
    // struct runs out: the version matters.
    assert!(decode_request(&v2, 1, &Budget::default()).is_err());
    // Response v0: partition 1 with NOT_LEADER_OR_FOLLOWER.
    let resp = hex("00000001 0000000000000fa0 00000001 0006 6f7264657273 00000001 00000001 0006");
    let r = decode_response(&resp, 0, &Budget::default()).unwrap();
    let p = &r.markers[0].topics[0].partitions[0];
    assert_eq!(
        (p.partition_index, p.error_code, p.error),
        (1, 6, Some("NOT_LEADER_OR_FOLLOWER"))
    );
    // An error code Kafka does not define keeps its number and has no name.
    let resp = hex("00000001 0000000000000fa0 00000001 0001 61 00000001 00000001 7fff");
    let p = decode_response(&resp, 0, &Budget::default())
        .unwrap()
        .markers[0]
        .topics[0]
        .partitions[0]
        .clone();
    assert_eq!((p.error_code, p.error), (32767, None));
}

mod against_kafka_protocol {
    //! A second implementation: the `kafka-protocol` crate encodes, we decode.
    use super::*;
    use bytes::{Bytes, BytesMut};
    use kafka_protocol::messages::write_txn_markers_request as kreq;
    use kafka_protocol::messages::write_txn_markers_response as kresp;
    use kafka_protocol::messages::TopicName;
    use kafka_protocol::protocol::{Encodable, StrBytes};
    use proptest::prelude::*;

    fn name() -> impl Strategy<Value = String> {
        "[a-zA-Z0-9._-]{0,20}|[\\p{L}]{1,5}"
    }

    fn tags() -> impl Strategy<Value = Vec<(u32, Vec<u8>)>> {
        prop::collection::vec((0u32..5000, prop::collection::vec(any::<u8>(), 0..6)), 0..2)
    }

    type Req = Vec<(i64, i16, bool, Vec<(String, Vec<i32>)>, i32)>;

    fn request() -> impl Strategy<Value = Req> {
        prop::collection::vec(
            (
                any::<i64>(),
                any::<i16>(),
                any::<bool>(),
                prop::collection::vec((name(), prop::collection::vec(any::<i32>(), 0..5)), 0..4),
                any::<i32>(),
            ),
            0..5,
        )
    }

    type Resp = Vec<(i64, Vec<(String, Vec<(i32, i16)>)>)>;

    fn response() -> impl Strategy<Value = Resp> {
        prop::collection::vec(
            (
                any::<i64>(),
                prop::collection::vec(
                    (
                        name(),
                        prop::collection::vec((any::<i32>(), -1i16..130), 0..5),
                    ),
                    0..4,
                ),
            ),
            0..5,
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn v1_requests_match(markers in request(), top in tags()) {
            let mut msg = kreq::WriteTxnMarkersRequest::default().with_markers(
                markers.iter().map(|(pid, epoch, commit, topics, ce)| {
                    kreq::WritableTxnMarker::default()
                        .with_producer_id((*pid).into())
                        .with_producer_epoch(*epoch)
                        .with_transaction_result(*commit)
                        .with_coordinator_epoch(*ce)
                        .with_topics(topics.iter().map(|(n, ps)| {
                            kreq::WritableTxnMarkerTopic::default()
                                .with_name(TopicName(StrBytes::from_string(n.clone())))
                                .with_partition_indexes(ps.clone())
                        }).collect())
                }).collect());
            for (t, d) in &top {
                msg = msg.with_unknown_tagged_field(*t as i32, Bytes::from(d.clone()));
            }
            let mut buf = BytesMut::new();
            msg.encode(&mut buf, 1).unwrap();
            let got = decode_request(&buf, 1, &Budget::default()).unwrap();
            prop_assert_eq!(got.markers.len(), markers.len());
            for (g, (pid, epoch, commit, topics, ce)) in got.markers.iter().zip(&markers) {
                prop_assert_eq!(g.producer_id, *pid);
                prop_assert_eq!(g.producer_epoch, *epoch);
                prop_assert_eq!(g.transaction_result == TransactionResult::Commit, *commit);
                prop_assert_eq!(g.coordinator_epoch, *ce);
                let gt: Vec<(String, Vec<i32>)> = g.topics.iter().map(|t| (t.name.clone(), t.partition_indexes.clone())).collect();
                prop_assert_eq!(&gt, topics);
            }
            // Unknown tagged fields come back in tag order (kafka-protocol keeps a BTreeMap).
            let mut want: std::collections::BTreeMap<u32, Vec<u8>> = Default::default();
            for (t, d) in &top { want.insert(*t, d.clone()); }
            let got_tags: Vec<(u32, Vec<u8>)> = got.unknown_tagged_fields.iter().map(|f| (f.tag, f.data.clone())).collect();
            prop_assert_eq!(got_tags, want.into_iter().collect::<Vec<_>>());
        }

        #[test]
        fn v1_responses_match(markers in response()) {
            let msg = kresp::WriteTxnMarkersResponse::default().with_markers(
                markers.iter().map(|(pid, topics)| {
                    kresp::WritableTxnMarkerResult::default()
                        .with_producer_id((*pid).into())
                        .with_topics(topics.iter().map(|(n, ps)| {
                            kresp::WritableTxnMarkerTopicResult::default()
                                .with_name(TopicName(StrBytes::from_string(n.clone())))
                                .with_partitions(ps.iter().map(|(p, e)| {
                                    kresp::WritableTxnMarkerPartitionResult::default()
                                        .with_partition_index(*p)
                                        .with_error_code(*e)
                                }).collect())
                        }).collect())
                }).collect());
            let mut buf = BytesMut::new();
            msg.encode(&mut buf, 1).unwrap();
            let got = decode_response(&buf, 1, &Budget::default()).unwrap();
            let flat: Resp = got.markers.iter().map(|m| (m.producer_id, m.topics.iter().map(|t| {
                (t.name.clone(), t.partitions.iter().map(|p| (p.partition_index, p.error_code)).collect())
            }).collect())).collect();
            prop_assert_eq!(flat, markers);
        }

        /// No byte string makes the decoders panic, and every success consumes the whole body.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200), v in 0i16..3) {
            let _ = decode_request(&bytes, v, &Budget::default());
            let _ = decode_response(&bytes, v, &Budget::default());
        }
    }
}
