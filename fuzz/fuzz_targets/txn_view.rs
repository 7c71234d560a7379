//! The transaction view (`--transactions`) on arbitrary sequences of decoded messages: each
//! 12 input bytes make one request or response record (InitProducerId, AddPartitionsToTxn v3
//! and v4 VerifyOnly, EndTxn, WriteTxnMarkers, Produce with transactional batches, Fetch
//! read_committed, Metadata) on one of a few connections, with producer ids, epochs, results,
//! partitions, error codes and time steps drawn from small sets and the extremes, so that the
//! fuzzer reaches joins, ends, markers, fencing, sweeps and verdicts in a few steps. Checks:
//! no panic, and every transaction begun is written exactly once (by the end at the latest).
#![no_main]
use kafka_pcap::kafka::apis::add_partitions_to_txn::{AddPartitionsToTxnRequest, Transaction, TxnTopic};
use kafka_pcap::kafka::apis::end_txn::{EndTxnRequest, EndTxnResponse};
use kafka_pcap::kafka::apis::fetch::{FetchRequest, FetchResponse, FetchableTopicResponse, PartitionData};
use kafka_pcap::kafka::apis::init_producer_id::{InitProducerIdRequest, InitProducerIdResponse};
use kafka_pcap::kafka::apis::metadata::{MetadataResponse, MetadataResponseBroker};
use kafka_pcap::kafka::apis::produce::{PartitionProduceData, ProduceRequest, Records, TopicProduceData};
use kafka_pcap::kafka::apis::write_txn_markers::{
    TransactionResult, WritableTxnMarker, WritableTxnMarkerPartitionResult, WritableTxnMarkerResult,
    WritableTxnMarkerTopic, WritableTxnMarkerTopicResult, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
};
use kafka_pcap::kafka::apis::Body;
use kafka_pcap::kafka::event::{Event, KafkaMessage, MessageKind, Record};
use kafka_pcap::kafka::walk::BatchHeader;
use kafka_pcap::memory::Memory;
use kafka_pcap::txn::{TxnOut, TxnView};
use kafka_pcap::vocab::{Endpoint, Location, Timestamp};
use libfuzzer_sys::fuzz_target;
use std::net::{IpAddr, Ipv4Addr};

const PIDS: [i64; 6] = [1000, 1001, 1002, 0, -1, i64::MAX];
const EPOCHS: [i16; 6] = [0, 1, 2, 3, i16::MAX, -1];
const TOPICS: [&str; 3] = ["orders", "__consumer_offsets", ""];
const ERRORS: [i16; 6] = [0, 0, 6, 47, 52, 51];

fn msg(kind: MessageKind, api_key: i16, version: i16, corr: i32, body: Body, request: Option<Record>) -> std::sync::Arc<KafkaMessage> {
    std::sync::Arc::new(KafkaMessage {
        message: kind,
        api_key,
        api_name: kafka_pcap::kafka::api::api_name(api_key).unwrap_or("?"),
        api_version: version,
        header_version: 1,
        correlation_id: corr,
        client_id: (kind == MessageKind::Request).then(|| Some("fuzz".into())),
        size: 10,
        request_frame: request.as_ref().map(|r| r.loc.frame),
        latency_us: None,
        clock_went_back: false,
        request_not_decoded: false,
        inferred: false,
        request_lost: None,
        truncated: false,
        captured_bytes: None,
        truncated_field: None,
        trailing_bytes: None,
        unknown_tagged_fields: Vec::new(),
        body,
        frame_bytes: None,
        packets: Vec::new(),
        response_missing: None,
        request: request.map(Box::new),
        held: kind == MessageKind::Request,
    })
}

fn batch(pid: i64, epoch: i16, n: i32, control: bool) -> BatchHeader {
    BatchHeader {
        base_offset: 0,
        batch_length: 49,
        partition_leader_epoch: Some(0),
        magic: 2,
        crc: Some(0),
        attributes: Some(16),
        compression: Some("none"),
        timestamp_type: Some("CreateTime"),
        is_transactional: Some(true),
        is_control: Some(control),
        last_offset_delta: Some(n - 1),
        base_timestamp: Some(0),
        max_timestamp: Some(0),
        producer_id: Some(pid),
        producer_epoch: Some(epoch),
        base_sequence: Some(0),
        records_count: Some(n),
        control: None,
        control_unreadable: false,
    }
}

fuzz_target!(|data: &[u8]| {
    let mut view = TxnView::new(&Memory::new(256 * 1024));
    let mut written = 0usize;
    let mut now: i64 = 1_767_225_600;
    let mut nanos: u32 = 0;
    let mut frame = 0u64;
    let mut last: Vec<Option<Record>> = vec![None; 4];
    let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
    for op in data.chunks_exact(12) {
        let step = op[11];
        match step % 4 {
            0 => nanos = nanos.wrapping_add(1000) % 1_000_000_000,
            1 => now += 1,
            2 => now += 11,
            _ => now -= 1, // the clock goes back
        }
        frame += 1;
        let conn = (op[0] as usize) % 4;
        let loc = Location {
            ts: Timestamp { secs: now, nanos, digits: 6 },
            frame,
            stream: Some((conn as u64, Endpoint { ip, port: 40000 + conn as u16 }, Endpoint { ip, port: 9092 + (op[1] % 3) as u16 })),
            tunnel: None,
        };
        let pid = PIDS[op[2] as usize % PIDS.len()];
        let epoch = EPOCHS[op[3] as usize % EPOCHS.len()];
        let topic = TOPICS[op[4] as usize % TOPICS.len()].to_string();
        let partition = i32::from(op[5] % 4) - i32::from(op[5] == 255);
        let error = ERRORS[op[6] as usize % ERRORS.len()];
        let flag = op[7] & 1 == 1;
        let tid = format!("t{}", op[8] % 3);
        let corr = i32::from(op[9]);
        // Requests open a slot on their connection; responses answer the slot's request.
        let (kind, body, key, version) = match op[10] % 16 {
            0 => (MessageKind::Request, Body::InitProducerIdRequest(InitProducerIdRequest {
                transactional_id: Some(tid), transaction_timeout_ms: i32::from(op[7]) * 100, producer_id: None,
                producer_epoch: None, enable_2_pc: None, keep_prepared_txn: None, unknown_tagged_fields: Vec::new() }), 22, 4),
            1 => (MessageKind::Response, Body::InitProducerIdResponse(InitProducerIdResponse {
                throttle_time_ms: 0, error_code: error, error: None, producer_id: pid, producer_epoch: epoch,
                ongoing_txn_producer_id: None, ongoing_txn_producer_epoch: None, unknown_tagged_fields: Vec::new() }), 22, 4),
            2 | 3 => (MessageKind::Request, Body::AddPartitionsToTxnRequest(AddPartitionsToTxnRequest {
                transactional_id: Some(tid), producer_id: Some(pid), producer_epoch: Some(epoch),
                topics: Some(vec![TxnTopic { name: topic, partitions: vec![partition, partition + 1], unknown_tagged_fields: Vec::new() }]),
                transactions: None, unknown_tagged_fields: Vec::new() }), 24, 3),
            4 => (MessageKind::Request, Body::AddPartitionsToTxnRequest(AddPartitionsToTxnRequest {
                transactional_id: None, producer_id: None, producer_epoch: None, topics: None,
                transactions: Some(vec![Transaction { transactional_id: tid, producer_id: pid, producer_epoch: epoch,
                    verify_only: flag, topics: vec![TxnTopic { name: topic, partitions: vec![partition], unknown_tagged_fields: Vec::new() }],
                    unknown_tagged_fields: Vec::new() }]), unknown_tagged_fields: Vec::new() }), 24, 5),
            5 | 6 => (MessageKind::Request, Body::ProduceRequest(ProduceRequest {
                transactional_id: Some(tid.into()), acks: -1, timeout_ms: 1000,
                topic_data: vec![TopicProduceData { name: Some(topic.into()), topic_id: None, partition_data: vec![PartitionProduceData {
                    index: partition, records: Some(Records { size: 61, batches: [batch(pid, epoch, i32::from(op[7]), op[6] == 9)].into_iter().collect(),
                    partial_batch_bytes: 0, batches_not_listed: 0, damaged_batch_bytes: 0 }) }] }],
                elements_not_listed: 0 }), 0, 9),
            7 => (MessageKind::Request, Body::EndTxnRequest(EndTxnRequest {
                transactional_id: tid, producer_id: pid, producer_epoch: epoch, committed: flag, unknown_tagged_fields: Vec::new() }), 26, if op[6] & 2 == 0 { 3 } else { 5 }),
            8 => (MessageKind::Response, Body::EndTxnResponse(EndTxnResponse {
                throttle_time_ms: 0, error_code: error, error: None, producer_id: flag.then_some(pid),
                producer_epoch: flag.then_some(epoch.wrapping_add(1)), unknown_tagged_fields: Vec::new() }), 26, 5),
            9 | 10 => (MessageKind::Request, Body::WriteTxnMarkersRequest(WriteTxnMarkersRequest {
                markers: vec![WritableTxnMarker { producer_id: pid, producer_epoch: epoch,
                    transaction_result: if flag { TransactionResult::Commit } else { TransactionResult::Abort },
                    topics: vec![WritableTxnMarkerTopic { name: topic, partition_indexes: vec![partition], unknown_tagged_fields: Vec::new() }],
                    coordinator_epoch: i32::from(op[8] % 4), transaction_version: (op[6] & 4 != 0).then_some(2), unknown_tagged_fields: Vec::new() }],
                unknown_tagged_fields: Vec::new() }), 27, 1),
            11 | 12 => (MessageKind::Response, Body::WriteTxnMarkersResponse(WriteTxnMarkersResponse {
                markers: vec![WritableTxnMarkerResult { producer_id: pid, topics: vec![WritableTxnMarkerTopicResult {
                    name: topic, partitions: vec![WritableTxnMarkerPartitionResult { partition_index: partition, error_code: error,
                    error: None, unknown_tagged_fields: Vec::new() }], unknown_tagged_fields: Vec::new() }], unknown_tagged_fields: Vec::new() }],
                unknown_tagged_fields: Vec::new() }), 27, 1),
            13 => (MessageKind::Request, Body::FetchRequest(FetchRequest {
                replica_id: Some(-1), max_wait_ms: 500, min_bytes: 1, max_bytes: 1 << 20, isolation_level: i8::from(flag),
                isolation: "READ_COMMITTED", session_id: None, session_epoch: None, topics: Vec::new(),
                forgotten_topics_data: None, rack_id: None, unknown_tagged_fields: Vec::new() }), 1, 11),
            14 => (MessageKind::Response, Body::FetchResponse(FetchResponse {
                throttle_time_ms: 0, error_code: Some(0), error: None, session_id: Some(0),
                responses: vec![FetchableTopicResponse { topic: Some(topic.into()), topic_id: None, partitions: vec![PartitionData {
                    partition_index: partition, error_code: 0, error: None, high_watermark: i64::from(op[7]) + i64::from(op[9]),
                    last_stable_offset: i64::from(op[9] % 4), log_start_offset: None, aborted_transactions: None,
                    preferred_read_replica: None, records: kafka_pcap::kafka::walk::Read::Value(None), diverging_epoch: None, current_leader: None, snapshot_id: None }] }],
                node_endpoints: None, elements_not_listed: 0 }), 1, 11),
            _ => (MessageKind::Response, Body::MetadataResponse(MetadataResponse {
                throttle_time_ms: Some(0), brokers: vec![MetadataResponseBroker { node_id: i32::from(op[1] % 3),
                    host: "127.0.0.1".to_string(), port: 9092 + i32::from(op[1] % 3), rack: None }],
                cluster_id: None, controller_id: Some(0), topics: Vec::new(), cluster_authorized_operations: None,
                error_code: None, error: None, unknown_tagged_fields: Vec::new() }), 3, 12),
        };
        let request = match kind {
            MessageKind::Response => last[conn].take(),
            MessageKind::Request => None,
        };
        let rec = Record { loc, event: Event::Kafka(msg(kind, key, version, corr, body, request)) };
        if kind == MessageKind::Request {
            last[conn] = Some(rec.clone());
        }
        view.observe(&rec, &mut |o| {
            if let TxnOut::Transaction(_) = o {
                written += 1;
            }
        });
    }
    let end = Location { ts: Timestamp { secs: now, nanos, digits: 6 }, frame: frame + 1, stream: None, tunnel: None };
    view.finish(end, &mut |o| {
        if let TxnOut::Transaction(_) = o {
            written += 1;
        }
    });
    assert_eq!(written as u64, view.begun(), "every transaction begun is written once");
});
