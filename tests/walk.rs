//! The streaming walks of Produce requests and Fetch responses (`kafka::walk`,
//! `kafka::apis::produce`, `kafka::apis::fetch`), and the whole-frame decoders beside them,
//! against a second implementation: the `kafka-protocol` crate encodes the messages at every
//! version and its `RecordBatchEncoder` the record batches (data, transactional, control,
//! gzip- and snappy-compressed); our walk must give back every batch header, whether the body
//! arrives whole or in pieces of any size.

use bytes::{Bytes, BytesMut};
use kafka_pcap::kafka::apis::{fetch, produce, Body};
use kafka_pcap::kafka::primitives::{Budget, DecodeErrorKind};
use kafka_pcap::kafka::walk::uuid_text;
use kafka_protocol::messages::{
    fetch_request, fetch_response, produce_request, produce_response, BrokerId, FetchRequest,
    FetchResponse, ProduceRequest, ProduceResponse, ProducerId, TopicName, TransactionalId,
};
use kafka_protocol::protocol::{Encodable, StrBytes};
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use proptest::prelude::*;

/// One batch to encode: producer id, epoch, transactional, compression, records.
#[derive(Debug, Clone)]
struct Batch {
    producer_id: i64,
    epoch: i16,
    transactional: bool,
    compression: u8,
    records: usize,
    base_offset: i64,
    sequence: i32,
}

fn batch() -> impl Strategy<Value = Batch> {
    (
        any::<i64>(),
        any::<i16>(),
        any::<bool>(),
        0u8..3,
        1usize..5,
        0i64..1_000_000,
        0i32..1000,
    )
        .prop_map(
            |(producer_id, epoch, transactional, compression, records, base_offset, sequence)| {
                Batch {
                    producer_id,
                    epoch,
                    transactional,
                    compression,
                    records,
                    base_offset,
                    sequence,
                }
            },
        )
}

fn compression(c: u8) -> (Compression, &'static str) {
    match c {
        1 => (Compression::Gzip, "gzip"),
        2 => (Compression::Snappy, "snappy"),
        _ => (Compression::None, "none"),
    }
}

/// Encodes `b` with kafka-protocol's batch encoder.
fn encode_batch(b: &Batch) -> Vec<u8> {
    let records: Vec<Record> = (0..b.records)
        .map(|i| Record {
            transactional: b.transactional,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 7,
            producer_id: b.producer_id,
            producer_epoch: b.epoch,
            timestamp_type: TimestampType::Creation,
            offset: b.base_offset + i as i64,
            sequence: b.sequence + i as i32,
            timestamp: 1_700_000_000_000 + i as i64,
            key: Some(Bytes::from(format!("key-{i}"))),
            value: Some(Bytes::from(vec![b'v'; 20 + i])),
            headers: Default::default(),
        })
        .collect();
    let mut buf = BytesMut::new();
    let options = RecordEncodeOptions {
        version: 2,
        compression: compression(b.compression).0,
    };
    RecordBatchEncoder::encode(&mut buf, &records, &options).unwrap();
    buf.to_vec()
}

/// A control batch (COMMIT when `commit`, else ABORT) written by kafka-protocol's encoder,
/// with the coordinator epoch in its value.
fn encode_marker(commit: bool, coordinator_epoch: i32, producer_id: i64, offset: i64) -> Vec<u8> {
    let mut value = vec![0, 0];
    value.extend(coordinator_epoch.to_be_bytes());
    let r = Record {
        transactional: true,
        control: true,
        delete_horizon: false,
        partition_leader_epoch: 3,
        producer_id,
        producer_epoch: 2,
        timestamp_type: TimestampType::Creation,
        offset,
        sequence: -1,
        timestamp: 1_700_000_000_000,
        key: Some(Bytes::from(vec![0, 0, 0, u8::from(commit)])),
        value: Some(Bytes::from(value)),
        headers: Default::default(),
    };
    let mut buf = BytesMut::new();
    let options = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    RecordBatchEncoder::encode(&mut buf, [&r], &options).unwrap();
    buf.to_vec()
}

/// Feeds `body` to a walk in pieces cut at `cuts` (offsets taken modulo the length).
fn walk_in_pieces(
    start: kafka_pcap::kafka::apis::WalkFn,
    body: &[u8],
    version: i16,
    cuts: &[usize],
) -> Result<Body, kafka_pcap::kafka::primitives::DecodeError> {
    let mut w = start(version, body.len() as u64);
    let mut at: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
    at.push(0);
    at.push(body.len());
    at.sort_unstable();
    for pair in at.windows(2) {
        w.feed(&body[pair[0]..pair[1]]);
    }
    // Bytes after the structure are an error here, as in a whole decode.
    w.finish().and_then(|f| match f.trailing.or(f.damage) {
        None => Ok(f.body),
        Some(e) => Err(e),
    })
}

fn topic_uuid(n: u8) -> uuid::Uuid {
    uuid::Uuid::from_bytes([n; 16])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Produce requests at every version: every batch header comes back, the body the same
    /// whole or in pieces.
    #[test]
    fn produce_requests_match(v in 3i16..=13, tid in proptest::option::of("[a-z0-9-]{0,20}"),
                              acks in -1i16..=1, timeout in any::<i32>(),
                              topics in prop::collection::vec(prop::collection::vec(
                                  (any::<i32>(), proptest::option::of(prop::collection::vec(batch(), 1..3))), 1..3), 1..3),
                              cuts in prop::collection::vec(any::<usize>(), 0..12)) {
        let mut data = Vec::new();
        for (t, parts) in topics.iter().enumerate() {
            let mut pd = Vec::new();
            for (index, batches) in parts {
                let records = batches.as_ref().map(|bs| {
                    Bytes::from(bs.iter().flat_map(encode_batch).collect::<Vec<u8>>())
                });
                pd.push(produce_request::PartitionProduceData::default()
                    .with_index(*index)
                    .with_records(records));
            }
            let mut td = produce_request::TopicProduceData::default().with_partition_data(pd);
            if v >= 13 {
                td = td.with_topic_id(topic_uuid(t as u8));
            } else {
                td = td.with_name(TopicName(StrBytes::from_string(format!("topic-{t}"))));
            }
            data.push(td);
        }
        let msg = ProduceRequest::default()
            .with_transactional_id(tid.clone().map(|s| TransactionalId(StrBytes::from_string(s))))
            .with_acks(acks)
            .with_timeout_ms(timeout)
            .with_topic_data(data);
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = produce::decode_request(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!(got.transactional_id.as_deref(), tid.as_deref());
        prop_assert_eq!((got.acks, got.timeout_ms), (acks, timeout));
        prop_assert_eq!(got.topic_data.len(), topics.len());
        for (t, (gt, parts)) in got.topic_data.iter().zip(&topics).enumerate() {
            if v >= 13 {
                prop_assert_eq!(gt.topic_id.clone(), Some(uuid_text(&[t as u8; 16])));
                prop_assert!(gt.name.is_none());
            } else {
                prop_assert_eq!(gt.name.as_deref().map(str::to_owned), Some(format!("topic-{t}")));
            }
            prop_assert_eq!(gt.partition_data.len(), parts.len());
            for (gp, (index, batches)) in gt.partition_data.iter().zip(parts) {
                prop_assert_eq!(gp.index, *index);
                let Some(batches) = batches else {
                    prop_assert!(gp.records.is_none());
                    continue;
                };
                let r = gp.records.as_ref().unwrap();
                let bytes: Vec<Vec<u8>> = batches.iter().map(encode_batch).collect();
                prop_assert_eq!(r.size, bytes.iter().map(Vec::len).sum::<usize>() as u64);
                prop_assert_eq!(r.batches.len(), batches.len());
                prop_assert_eq!(r.partial_batch_bytes, 0);
                for ((h, b), enc) in r.batches.iter().zip(batches).zip(&bytes) {
                    prop_assert_eq!(h.magic, 2);
                    prop_assert_eq!(h.producer_id, Some(b.producer_id));
                    prop_assert_eq!(h.producer_epoch, Some(b.epoch));
                    prop_assert_eq!(h.is_transactional, Some(b.transactional));
                    prop_assert_eq!(h.is_control, Some(false));
                    prop_assert_eq!(h.records_count, Some(b.records as i32));
                    prop_assert_eq!(h.last_offset_delta, Some(b.records as i32 - 1));
                    prop_assert_eq!(h.base_offset, b.base_offset);
                    prop_assert_eq!(h.base_sequence, Some(b.sequence));
                    prop_assert_eq!(h.partition_leader_epoch, Some(7));
                    prop_assert_eq!(h.compression, Some(compression(b.compression).1));
                    prop_assert_eq!(h.batch_length as usize, enc.len() - 12);
                    let crc = u32::from_be_bytes([enc[17], enc[18], enc[19], enc[20]]);
                    prop_assert_eq!(h.crc, Some(crc));
                    prop_assert_eq!(h.base_timestamp, Some(1_700_000_000_000));
                }
            }
        }
        let whole = Body::ProduceRequest(got);
        let pieces = walk_in_pieces(produce::walk_request, &buf, v, &cuts).unwrap();
        prop_assert_eq!(pieces, whole);
    }

    /// Fetch responses at every version: partitions, aborted transactions, data batches
    /// counted, control batches listed with their marker, a batch cut at the end.
    #[test]
    fn fetch_responses_match(v in 4i16..=18, throttle in any::<i32>(),
                             parts in prop::collection::vec((any::<i32>(), -1i16..120, any::<i64>(), any::<i64>(),
                                 proptest::option::of(prop::collection::vec((any::<i64>(), any::<i64>()), 0..3)),
                                 prop::collection::vec(batch(), 0..3), proptest::option::of((any::<bool>(), any::<i32>())),
                                 0usize..40), 1..4),
                             cuts in prop::collection::vec(any::<usize>(), 0..12)) {
        let mut pds = Vec::new();
        let mut expected = Vec::new();
        for (index, code, hw, lso, aborted, batches, marker, cut) in &parts {
            let mut records: Vec<u8> = batches.iter().flat_map(encode_batch).collect();
            if let Some((commit, epoch)) = marker {
                records.extend(encode_marker(*commit, *epoch, 4242, 99));
            }
            // A batch cut short at the end, as a broker sends at its fetch size.
            let partial = if *cut > 0 && !batches.is_empty() {
                let b = encode_batch(&batches[0]);
                let n = (*cut).min(b.len() - 1);
                records.extend(&b[..n]);
                n as u64
            } else {
                0
            };
            let mut pd = fetch_response::PartitionData::default()
                .with_partition_index(*index)
                .with_error_code(*code)
                .with_high_watermark(*hw)
                .with_last_stable_offset(*lso)
                .with_aborted_transactions(aborted.as_ref().map(|a| {
                    a.iter().map(|(p, f)| fetch_response::AbortedTransaction::default()
                        .with_producer_id(ProducerId(*p)).with_first_offset(*f)).collect()
                }))
                .with_records(Some(Bytes::from(records.clone())));
            if v >= 5 {
                pd = pd.with_log_start_offset(hw.wrapping_sub(1));
            }
            if v >= 11 {
                pd = pd.with_preferred_read_replica(BrokerId(3));
            }
            if v >= 12 {
                pd = pd.with_current_leader(fetch_response::LeaderIdAndEpoch::default()
                    .with_leader_id(BrokerId(2)).with_leader_epoch(9));
            }
            pds.push(pd);
            expected.push((records.len() as u64, partial));
        }
        let mut topic = fetch_response::FetchableTopicResponse::default().with_partitions(pds);
        if v >= 13 {
            topic = topic.with_topic_id(topic_uuid(5));
        } else {
            topic = topic.with_topic(TopicName(StrBytes::from_static_str("txn-a")));
        }
        let mut msg = FetchResponse::default().with_throttle_time_ms(throttle).with_responses(vec![topic]);
        if v >= 7 {
            msg = msg.with_error_code(0).with_session_id(77);
        }
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = fetch::decode_response(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!(got.throttle_time_ms, throttle);
        prop_assert_eq!(got.session_id, (v >= 7).then_some(77));
        let t = &got.responses[0];
        if v >= 13 {
            prop_assert_eq!(t.topic_id.clone(), Some(uuid_text(&[5; 16])));
        } else {
            prop_assert_eq!(t.topic.as_deref(), Some("txn-a"));
        }
        prop_assert_eq!(t.partitions.len(), parts.len());
        for (gp, ((index, code, hw, lso, aborted, batches, marker, _), (size, partial))) in
            t.partitions.iter().zip(parts.iter().zip(&expected)) {
            prop_assert_eq!((gp.partition_index, gp.error_code), (*index, *code));
            prop_assert_eq!((gp.high_watermark, gp.last_stable_offset), (*hw, *lso));
            prop_assert_eq!(gp.log_start_offset, (v >= 5).then(|| hw.wrapping_sub(1)));
            prop_assert_eq!(gp.preferred_read_replica, (v >= 11).then_some(3));
            let got_aborted: Option<Vec<(i64, i64)>> = gp.aborted_transactions.as_ref()
                .map(|a| a.iter().map(|x| (x.producer_id, x.first_offset)).collect());
            prop_assert_eq!(&got_aborted, aborted);
            if v >= 12 {
                let l = gp.current_leader.as_ref().unwrap();
                prop_assert_eq!((l.leader_id, l.leader_epoch), (2, 9));
            }
            let r = gp.records.get().unwrap().as_ref().unwrap();
            prop_assert_eq!(r.size, *size);
            prop_assert_eq!(r.partial_batch_bytes, *partial);
            prop_assert_eq!(r.data_batches, batches.len() as u64);
            prop_assert_eq!(r.data_records, batches.iter().map(|b| b.records as u64).sum::<u64>());
            prop_assert_eq!(r.transactional_batches, batches.iter().filter(|b| b.transactional).count() as u64);
            prop_assert_eq!(r.first_offset, batches.first().map(|b| b.base_offset).or(marker.map(|_| 99)));
            match marker {
                Some((commit, epoch)) => {
                    prop_assert_eq!(r.control_batches.len(), 1);
                    let h = &r.control_batches[0];
                    prop_assert_eq!((h.base_offset, h.producer_id, h.producer_epoch), (99, Some(4242), Some(2)));
                    let c = h.control.as_ref().unwrap();
                    prop_assert_eq!(c.control_type, if *commit { "COMMIT" } else { "ABORT" });
                    prop_assert_eq!(c.coordinator_epoch, Some(*epoch));
                    prop_assert_eq!(r.last_offset, Some(99));
                }
                None => prop_assert!(r.control_batches.is_empty()),
            }
        }
        let whole = Body::FetchResponse(got);
        let pieces = walk_in_pieces(fetch::walk_response, &buf, v, &cuts).unwrap();
        prop_assert_eq!(pieces, whole);
    }

    /// Fetch requests at every version (a whole-frame decoder).
    #[test]
    fn fetch_requests_match(v in 4i16..=18, max_wait in any::<i32>(), iso in 0i8..2,
                            parts in prop::collection::vec((any::<i32>(), any::<i64>(), any::<i32>()), 0..4)) {
        let fps: Vec<_> = parts.iter().map(|(p, off, max)| fetch_request::FetchPartition::default()
            .with_partition(*p).with_fetch_offset(*off).with_partition_max_bytes(*max)
            .with_log_start_offset(if v >= 5 { 11 } else { -1 })).collect();
        let mut topic = fetch_request::FetchTopic::default().with_partitions(fps);
        if v >= 13 {
            topic = topic.with_topic_id(topic_uuid(9));
        } else {
            topic = topic.with_topic(TopicName(StrBytes::from_static_str("txn-b")));
        }
        let mut msg = FetchRequest::default().with_max_wait_ms(max_wait).with_min_bytes(1)
            .with_max_bytes(1 << 20).with_isolation_level(iso).with_topics(vec![topic]);
        if v <= 14 {
            msg = msg.with_replica_id(BrokerId(-1));
        }
        if v >= 7 {
            msg = msg.with_session_id(5).with_session_epoch(6);
        }
        if v >= 11 {
            msg = msg.with_rack_id(StrBytes::from_static_str("rack-1"));
        }
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = fetch::decode_request(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!(got.max_wait_ms, max_wait);
        prop_assert_eq!((got.isolation_level, got.isolation), (iso, if iso == 1 { "READ_COMMITTED" } else { "READ_UNCOMMITTED" }));
        prop_assert_eq!(got.replica_id, (v <= 14).then_some(-1));
        prop_assert_eq!(got.session_epoch, (v >= 7).then_some(6));
        prop_assert_eq!(got.rack_id.as_deref(), (v >= 11).then_some("rack-1"));
        let t = &got.topics[0];
        prop_assert_eq!(t.partitions.len(), parts.len());
        for (gp, (p, off, max)) in t.partitions.iter().zip(&parts) {
            prop_assert_eq!((gp.partition, gp.fetch_offset, gp.partition_max_bytes), (*p, *off, *max));
            prop_assert_eq!(gp.log_start_offset, (v >= 5).then_some(11));
        }
    }

    /// Produce responses at every version (a whole-frame decoder).
    #[test]
    fn produce_responses_match(v in 3i16..=13, throttle in any::<i32>(),
                               parts in prop::collection::vec((any::<i32>(), -1i16..120, any::<i64>()), 0..4)) {
        let prs: Vec<_> = parts.iter().map(|(i, code, base)| {
            let mut p = produce_response::PartitionProduceResponse::default()
                .with_index(*i).with_error_code(*code).with_base_offset(*base);
            if v >= 5 {
                p = p.with_log_start_offset(3);
            }
            if v >= 8 {
                p = p.with_error_message(Some(StrBytes::from_static_str("boom")));
            }
            if v >= 10 {
                p = p.with_current_leader(produce_response::LeaderIdAndEpoch::default()
                    .with_leader_id(BrokerId(4)).with_leader_epoch(12));
            }
            p
        }).collect();
        let mut topic = produce_response::TopicProduceResponse::default().with_partition_responses(prs);
        if v >= 13 {
            topic = topic.with_topic_id(topic_uuid(1));
        } else {
            topic = topic.with_name(TopicName(StrBytes::from_static_str("txn-a")));
        }
        let msg = ProduceResponse::default().with_responses(vec![topic]).with_throttle_time_ms(throttle);
        let mut buf = BytesMut::new();
        msg.encode(&mut buf, v).unwrap();
        let got = produce::decode_response(&buf, v, &Budget::default()).unwrap();
        prop_assert_eq!(got.throttle_time_ms, throttle);
        let t = &got.responses[0];
        prop_assert_eq!(t.name.as_deref(), (v < 13).then_some("txn-a"));
        for (gp, (i, code, base)) in t.partition_responses.iter().zip(&parts) {
            prop_assert_eq!((gp.index, gp.error_code, gp.base_offset), (*i, *code, *base));
            prop_assert_eq!(gp.log_start_offset, (v >= 5).then_some(3));
            prop_assert_eq!(gp.error_message.clone(), (v >= 8).then(|| Some("boom".to_string())));
            prop_assert_eq!(gp.current_leader.as_ref().map(|l| (l.leader_id, l.leader_epoch)),
                            (v >= 10).then_some((4, 12)));
        }
    }

    /// No byte string makes a walk panic, fed whole or in pieces, at any version.
    #[test]
    fn arbitrary_bytes_never_panic_a_walk(bytes in prop::collection::vec(any::<u8>(), 0..300),
                                          v in 3i16..=18, cuts in prop::collection::vec(any::<usize>(), 0..8)) {
        let _ = walk_in_pieces(produce::walk_request, &bytes, v.min(13), &cuts);
        let _ = walk_in_pieces(fetch::walk_response, &bytes, v.max(4), &cuts);
    }
}

/// A Produce v9 request by hand from the schema, with byte offsets: one topic, one partition,
/// one transactional batch; then cut, then with a bad batch length.
#[test]
fn produce_v9_by_hand() {
    let batch = encode_batch(&Batch {
        producer_id: 1000,
        epoch: 1,
        transactional: true,
        compression: 0,
        records: 5,
        base_offset: 0,
        sequence: 0,
    });
    let mut b = Vec::new();
    b.extend([5, b'm', b't', b'-', b'c']); // 0: transactional_id, compact: len+1 = 5, "mt-c"
    b.extend((-1i16).to_be_bytes()); // 5: acks -1
    b.extend(30_000i32.to_be_bytes()); // 7: timeout_ms
    b.push(2); // 11: topic_data: 1 element (compact)
    b.extend([6, b't', b'x', b'n', b'-', b'a']); // 12: name "txn-a"
    b.push(2); // 18: partition_data: 1 element
    b.extend(1i32.to_be_bytes()); // 19: index 1
                                  // 23: records, compact length + 1 as an unsigned varint of two bytes.
    let n = batch.len() + 1;
    assert!((128..16384).contains(&n));
    b.extend([(n & 0x7f) as u8 | 0x80, (n >> 7) as u8]);
    b.extend(&batch); // 25: the batch
    b.extend([0, 0, 0]); // partition, topic and request tagged fields
    let got = produce::decode_request(&b, 9, &Budget::default()).unwrap();
    assert_eq!(got.transactional_id.as_deref(), Some("mt-c"));
    assert_eq!((got.acks, got.timeout_ms), (-1, 30_000));
    let p = &got.topic_data[0].partition_data[0];
    assert_eq!(
        (got.topic_data[0].name.as_deref(), p.index),
        (Some("txn-a"), 1)
    );
    let h = p.records.as_ref().unwrap().batches.get(0).unwrap();
    assert_eq!(
        (h.producer_id, h.producer_epoch, h.records_count),
        (Some(1000), Some(1), Some(5))
    );
    assert_eq!((h.is_transactional, h.attributes), (Some(true), Some(0x10)));
    // A frame whose records field runs past its end.
    let err = produce::decode_request(&b[..60], 9, &Budget::default()).unwrap_err();
    assert_eq!(err.kind, DecodeErrorKind::StringLengthExceedsFrame);
    assert_eq!(err.path(), "topic_data[0].partition_data[0].records");
    // A walk that ends inside the batch header (the stream stopped): truncated, at the batch.
    let mut w = produce::walk_request(9, b.len() as u64);
    w.feed(&b[..60]);
    let err = w.finish().unwrap_err();
    assert_eq!(err.kind, DecodeErrorKind::TruncatedBody);
    assert_eq!(
        err.path(),
        "topic_data[0].partition_data[0].records.batches[0]"
    );
    assert_eq!(err.offset_in(b.len()), 25);
    // A negative batch length at offset 25 + 8.
    let mut bad = b.clone();
    bad[33..37].copy_from_slice(&(-5i32).to_be_bytes());
    let err = produce::decode_request(&bad, 9, &Budget::default()).unwrap_err();
    assert_eq!(err.kind, DecodeErrorKind::NegativeLength);
    assert_eq!(err.offset_in(bad.len()), 33);
    // Walked as it streams by, the batch and the rest of its records field are passed over,
    // the body read, and the damage said with its path.
    let mut w = produce::walk_request(9, bad.len() as u64);
    for chunk in bad.chunks(5) {
        w.feed(chunk);
    }
    let f = w.finish().unwrap();
    let damage = f.damage.unwrap();
    assert_eq!(damage.kind, DecodeErrorKind::NegativeLength);
    assert_eq!(damage.offset_in(bad.len()), 33);
    assert_eq!(
        damage.path(),
        "topic_data[0].partition_data[0].records.batches[0].batch_length"
    );
    let Body::ProduceRequest(body) = f.body else {
        panic!("{:?}", f.body)
    };
    assert_eq!(body.transactional_id.as_deref(), Some("mt-c"));
    let r = body.topic_data[0].partition_data[0]
        .records
        .as_ref()
        .unwrap();
    assert_eq!(
        (r.batches.len(), r.damaged_batch_bytes),
        (0, batch.len() as u64)
    );
    // A records length past the frame.
    let mut bad = b.clone();
    bad[24] = 0x7f;
    let err = produce::decode_request(&bad, 9, &Budget::default()).unwrap_err();
    assert_eq!(err.kind, DecodeErrorKind::StringLengthExceedsFrame);
    assert_eq!(err.offset_in(bad.len()), 23);
    assert_eq!(err.path(), "topic_data[0].partition_data[0].records");
    // Bytes after the last tagged fields.
    let mut long = b.clone();
    long.push(0);
    let err = produce::decode_request(&long, 9, &Budget::default()).unwrap_err();
    assert_eq!(err.kind, DecodeErrorKind::TrailingBytes);
    assert_eq!(err.offset_in(long.len()), b.len());
    // Walked as it streams by (3 bytes at a time), the same bytes give the whole body and
    // the byte after it.
    let mut w = produce::walk_request(9, long.len() as u64);
    for chunk in long.chunks(3) {
        w.feed(chunk);
    }
    let f = w.finish().unwrap();
    let (body, trailing) = (f.body, f.trailing);
    let clean = produce::decode_request(&b, 9, &Budget::default()).unwrap();
    assert_eq!(body, Body::ProduceRequest(clean));
    let t = trailing.unwrap();
    assert_eq!(t.kind, DecodeErrorKind::TrailingBytes);
    assert_eq!(t.offset_in(long.len()), b.len());
}

/// A Fetch v4 response by hand (classic layout): one partition with one aborted transaction
/// and a COMMIT control batch; offsets from the schema.
#[test]
fn fetch_v4_by_hand() {
    let marker = encode_marker(true, 12, 1000, 5);
    let mut b = Vec::new();
    b.extend(0i32.to_be_bytes()); // 0: throttle_time_ms
    b.extend(1i32.to_be_bytes()); // 4: responses: 1
    b.extend(5i16.to_be_bytes()); // 8: topic "txn-a"
    b.extend(b"txn-a");
    b.extend(1i32.to_be_bytes()); // 15: partitions: 1
    b.extend(2i32.to_be_bytes()); // 19: partition_index 2
    b.extend(0i16.to_be_bytes()); // 23: error_code
    b.extend(6i64.to_be_bytes()); // 25: high_watermark 6
    b.extend(5i64.to_be_bytes()); // 33: last_stable_offset 5
    b.extend(1i32.to_be_bytes()); // 41: aborted_transactions: 1
    b.extend(1000i64.to_be_bytes()); // 45: producer_id
    b.extend(0i64.to_be_bytes()); // 53: first_offset
    b.extend((marker.len() as i32).to_be_bytes()); // 61: records length
    b.extend(&marker); // 65
    let got = fetch::decode_response(&b, 4, &Budget::default()).unwrap();
    let p = &got.responses[0].partitions[0];
    assert_eq!(
        (p.partition_index, p.high_watermark, p.last_stable_offset),
        (2, 6, 5)
    );
    assert_eq!(p.log_start_offset, None);
    let a = p.aborted_transactions.as_ref().unwrap();
    assert_eq!((a[0].producer_id, a[0].first_offset), (1000, 0));
    let r = p.records.get().unwrap().as_ref().unwrap();
    assert_eq!((r.data_batches, r.control_batches.len()), (0, 1));
    let c = r.control_batches[0].control.as_ref().unwrap();
    assert_eq!(
        (c.control_type, c.type_code, c.coordinator_epoch),
        ("COMMIT", 1, Some(12))
    );
    let json = serde_json::to_value(&r.control_batches[0]).unwrap();
    assert_eq!(json["control"]["type"], "COMMIT");
    assert_eq!(json["is_control"], true);
    // An aborted-transactions count past the frame, at offset 41.
    let mut bad = b.clone();
    bad[41..45].copy_from_slice(&1000i32.to_be_bytes());
    let err = fetch::decode_response(&bad, 4, &Budget::default()).unwrap_err();
    assert_eq!(err.kind, DecodeErrorKind::ArrayCountExceedsFrame);
    assert_eq!(err.offset_in(bad.len()), 41);
    assert_eq!(
        err.path(),
        "responses[0].partitions[0].aborted_transactions"
    );
}
