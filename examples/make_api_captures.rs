//! Writes `captures/api-*.pcap`: one synthetic capture per decoded Kafka API other than
//! WriteTxnMarkers, with every version of the API, encoded by the `kafka-protocol` crate (an
//! implementation other than ours), and `<name>.expected.json`: the bodies it encoded, in
//! kafka-pcap's JSON schema, written from the values given to the encoder (not by kafka-pcap).
//! Each capture also carries one WriteTxnMarkers v1 exchange (the seed's), so that the default
//! output (WriteTxnMarkers only) is not empty. Deterministic: the same files every run.
//!
//! Usage: `cargo run --example make_api_captures`, then
//! `KAFKA_PCAP_BLESS=1 cargo test --test captures` to regenerate their golden outputs.

#[path = "../tests/common/mod.rs"]
mod common;

use bytes::BufMut;
use bytes::Bytes;
use common::frames::{framed, req, resp};
use common::*;
use kafka_protocol::messages::{
    find_coordinator_response::Coordinator, AddOffsetsToTxnRequest, AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, ApiKey, BrokerId, EndTxnRequest,
    EndTxnResponse, FindCoordinatorRequest, FindCoordinatorResponse, GroupId,
    InitProducerIdRequest, InitProducerIdResponse, ProducerId, TopicName, TransactionalId,
};
use kafka_protocol::protocol::StrBytes;
use serde_json::{json, Value};

/// Writes `captures/NAME.pcap` (one connection to 127.0.0.1:9092 carrying `exchanges`, then
/// the seed's WriteTxnMarkers exchange) and `captures/NAME.expected.json` (`bodies`, in order).
fn write(name: &str, exchanges: &[(Vec<u8>, Vec<u8>)], bodies: Vec<Value>) {
    write_mss(name, exchanges, bodies, 65_000)
}

/// [`write`] with segments of at most `mss` bytes, so that large frames span many packets.
fn write_mss(name: &str, exchanges: &[(Vec<u8>, Vec<u8>)], bodies: Vec<Value>, mss: usize) {
    let mut c = Conversation::new(false, 9092).mss(mss);
    for (q, r) in exchanges {
        c = c.client(q).server(r);
    }
    let next = exchanges.len() as u8 + 1;
    c = c
        .client(&request_with_corr(next))
        .server(&response_with_corr(next));
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
    for (i, p) in c.packets().iter().enumerate() {
        w.packet(1_767_225_600, i as u32 * 250, &ethernet(&p.ip));
    }
    let dir = format!("{}/captures", env!("CARGO_MANIFEST_DIR"));
    std::fs::write(format!("{dir}/{name}.pcap"), w.bytes()).expect("write capture");
    let text = serde_json::to_string_pretty(&Value::Array(bodies)).expect("json");
    std::fs::write(format!("{dir}/{name}.expected.json"), text + "\n").expect("write json");
    println!("{dir}/{name}.pcap: {} exchanges", exchanges.len() + 1);
}

/// The seed's WriteTxnMarkers v1 request and response bodies, as kafka-pcap writes them.
fn seed_bodies() -> [Value; 2] {
    [
        json!({"message": "request", "body": {"markers": [{"producer_id": 0,
            "producer_epoch": 0, "transaction_result": "ABORT", "topics": [{"name": "",
            "partition_indexes": [0]}], "coordinator_epoch": 0}]}}),
        json!({"message": "response", "body": {"markers": [{"producer_id": 0,
            "topics": [{"name": "", "partitions": [{"partition_index": 0, "error_code": 0,
            "error": "NONE"}]}]}]}}),
    ]
}

/// EndTxn v0 to v5 (Kafka's `EndTxnRequest.json` / `EndTxnResponse.json`): commit and abort,
/// errors of the versions that added them, v5's bumped epoch, and unknown tagged fields.
fn end_txn() {
    // (version, transactional id, producer id, epoch, committed, error code, error name)
    let cases: [(i16, &str, i64, i16, bool, i16, &str); 6] = [
        (0, "orders-tx", 4000, 0, true, 0, "NONE"),
        (1, "orders-tx", 4000, 1, false, 0, "NONE"),
        (2, "payments-tx", 4001, 7, true, 90, "PRODUCER_FENCED"),
        (
            3,
            "payments-tx",
            4001,
            8,
            true,
            47,
            "INVALID_PRODUCER_EPOCH",
        ),
        (
            4,
            "søk-tx",
            9_007_199_254_740_993,
            32767,
            false,
            120,
            "TRANSACTION_ABORTABLE",
        ),
        (5, "orders-tx", 4002, 12, true, 0, "NONE"),
    ];
    let mut exchanges = Vec::new();
    let mut bodies = Vec::new();
    for (i, &(v, tid, pid, epoch, committed, code, error)) in cases.iter().enumerate() {
        let corr = i as i32 + 1;
        let mut q = EndTxnRequest::default()
            .with_transactional_id(TransactionalId(StrBytes::from_string(tid.to_string())))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_committed(committed);
        let mut r = EndTxnResponse::default()
            .with_throttle_time_ms(i as i32 * 10)
            .with_error_code(code);
        let mut qbody = json!({"transactional_id": tid, "producer_id": pid,
            "producer_epoch": epoch, "committed": committed});
        let mut rbody = json!({"throttle_time_ms": i as i32 * 10, "error_code": code,
            "error": error});
        if v >= 5 {
            // Transaction version 2: the coordinator bumps the epoch at every end.
            r = r
                .with_producer_id(ProducerId(pid))
                .with_producer_epoch(epoch + 1);
            rbody["producer_id"] = json!(pid);
            rbody["producer_epoch"] = json!(epoch + 1);
        }
        if v == 3 {
            q = q.with_unknown_tagged_field(7, Bytes::from_static(&[0xca, 0xfe]));
            r = r.with_unknown_tagged_field(0, Bytes::from_static(&[]));
            qbody["unknown_tagged_fields"] = json!([{"tag": 7, "size": 2, "data": "cafe"}]);
            rbody["unknown_tagged_fields"] = json!([{"tag": 0, "size": 0, "data": ""}]);
        }
        exchanges.push((
            req(ApiKey::EndTxn, v, corr, "producer-1", &q),
            resp(ApiKey::EndTxn, v, corr, &r),
        ));
        bodies.push(json!({"message": "request", "body": qbody}));
        bodies.push(json!({"message": "response", "body": rbody}));
    }
    bodies.extend(seed_bodies());
    write("api-end-txn", &exchanges, bodies);
}

/// InitProducerId v0 to v6 (Kafka's `InitProducerIdRequest.json` / `...Response.json`): a
/// transactional and an idempotent producer (null transactional id), v3's producer id and
/// epoch in the request (an epoch bump), the errors of later versions, unknown tagged fields,
/// and v6 (two-phase commit, KIP-939), whose request the kafka-protocol crate does not encode:
/// written here by hand from the schema.
fn init_producer_id() {
    // (version, transactional id, timeout, request producer id/epoch, response producer
    // id/epoch, error code, error name)
    type Case = (
        i16,
        Option<&'static str>,
        i32,
        (i64, i16),
        (i64, i16),
        i16,
        &'static str,
    );
    let cases: [Case; 7] = [
        (0, Some("orders-tx"), 60_000, (-1, -1), (4000, 0), 0, "NONE"),
        (1, None, 2_147_483_647, (-1, -1), (5000, 0), 0, "NONE"),
        (
            2,
            Some("payments-tx"),
            30_000,
            (-1, -1),
            (4001, 3),
            0,
            "NONE",
        ),
        (
            3,
            Some("orders-tx"),
            60_000,
            (4000, 0),
            (4000, 1),
            0,
            "NONE",
        ),
        (
            4,
            Some("orders-tx"),
            60_000,
            (4000, 1),
            (-1, -1),
            90,
            "PRODUCER_FENCED",
        ),
        (
            5,
            Some("søk-tx"),
            900_000,
            (-1, -1),
            (-1, -1),
            51,
            "CONCURRENT_TRANSACTIONS",
        ),
        (6, Some("2pc-tx"), 60_000, (4002, 7), (4002, 8), 0, "NONE"),
    ];
    let mut exchanges = Vec::new();
    let mut bodies = Vec::new();
    for (i, &(v, tid, timeout, (qpid, qepoch), (rpid, repoch), code, error)) in
        cases.iter().enumerate()
    {
        let corr = i as i32 + 1;
        let mut qbody = json!({"transactional_id": tid, "transaction_timeout_ms": timeout});
        if v >= 3 {
            qbody["producer_id"] = json!(qpid);
            qbody["producer_epoch"] = json!(qepoch);
        }
        let mut r = InitProducerIdResponse::default()
            .with_throttle_time_ms(i as i32)
            .with_error_code(code)
            .with_producer_id(ProducerId(rpid))
            .with_producer_epoch(repoch);
        let mut rbody = json!({"throttle_time_ms": i as i32, "error_code": code, "error": error,
            "producer_id": rpid, "producer_epoch": repoch});
        let request = if v == 6 {
            qbody["enable_2_pc"] = json!(true);
            qbody["keep_prepared_txn"] = json!(false);
            r = r
                .with_ongoing_txn_producer_id(ProducerId(-1))
                .with_ongoing_txn_producer_epoch(-1);
            rbody["ongoing_txn_producer_id"] = json!(-1);
            rbody["ongoing_txn_producer_epoch"] = json!(-1);
            // Request header v2 (api key, version, correlation id, client id, no tags), then
            // the body: compact string, int32, int64, int16, two booleans, no tags.
            let name = tid.unwrap_or_default().as_bytes();
            framed(|b| {
                b.put_i16(22);
                b.put_i16(6);
                b.put_i32(corr);
                b.put_i16(10);
                b.put_slice(b"producer-1");
                b.put_u8(0);
                b.put_u8(name.len() as u8 + 1);
                b.put_slice(name);
                b.put_i32(timeout);
                b.put_i64(qpid);
                b.put_i16(qepoch);
                b.put_u8(1);
                b.put_u8(0);
                b.put_u8(0);
            })
        } else {
            let mut q = InitProducerIdRequest::default()
                .with_transactional_id(
                    tid.map(|t| TransactionalId(StrBytes::from_string(t.into()))),
                )
                .with_transaction_timeout_ms(timeout);
            if v >= 3 {
                q = q
                    .with_producer_id(ProducerId(qpid))
                    .with_producer_epoch(qepoch);
            }
            if v == 2 {
                q = q.with_unknown_tagged_field(3, Bytes::from_static(&[0x01]));
                qbody["unknown_tagged_fields"] = json!([{"tag": 3, "size": 1, "data": "01"}]);
            }
            req(ApiKey::InitProducerId, v, corr, "producer-1", &q)
        };
        exchanges.push((request, resp(ApiKey::InitProducerId, v, corr, &r)));
        bodies.push(json!({"message": "request", "body": qbody}));
        bodies.push(json!({"message": "response", "body": rbody}));
    }
    bodies.extend(seed_bodies());
    write("api-init-producer-id", &exchanges, bodies);
}

/// AddOffsetsToTxn v0 to v4 (Kafka's `AddOffsetsToTxnRequest.json` / `...Response.json`): a
/// group joining a transaction, the errors a coordinator answers with, an unknown tagged field.
fn add_offsets_to_txn() {
    // (version, transactional id, producer id, epoch, group id, error code, error name)
    type Case = (i16, &'static str, i64, i16, &'static str, i16, &'static str);
    let cases: [Case; 5] = [
        (0, "orders-tx", 4000, 0, "orders-app", 0, "NONE"),
        (
            1,
            "orders-tx",
            4000,
            1,
            "orders-app",
            48,
            "INVALID_TXN_STATE",
        ),
        (
            2,
            "payments-tx",
            4001,
            7,
            "payments",
            47,
            "INVALID_PRODUCER_EPOCH",
        ),
        (3, "payments-tx", 4001, 8, "payments", 0, "NONE"),
        (4, "søk-tx", 4002, 3, "grüppe", 120, "TRANSACTION_ABORTABLE"),
    ];
    let mut exchanges = Vec::new();
    let mut bodies = Vec::new();
    for (i, &(v, tid, pid, epoch, group, code, error)) in cases.iter().enumerate() {
        let corr = i as i32 + 1;
        let mut q = AddOffsetsToTxnRequest::default()
            .with_transactional_id(TransactionalId(StrBytes::from_string(tid.to_string())))
            .with_producer_id(ProducerId(pid))
            .with_producer_epoch(epoch)
            .with_group_id(GroupId(StrBytes::from_string(group.to_string())));
        let r = AddOffsetsToTxnResponse::default()
            .with_throttle_time_ms(i as i32 * 3)
            .with_error_code(code);
        let mut qbody = json!({"transactional_id": tid, "producer_id": pid,
            "producer_epoch": epoch, "group_id": group});
        if v == 3 {
            q = q.with_unknown_tagged_field(9, Bytes::from_static(&[0xbe, 0xef]));
            qbody["unknown_tagged_fields"] = json!([{"tag": 9, "size": 2, "data": "beef"}]);
        }
        exchanges.push((
            req(ApiKey::AddOffsetsToTxn, v, corr, "producer-1", &q),
            resp(ApiKey::AddOffsetsToTxn, v, corr, &r),
        ));
        bodies.push(json!({"message": "request", "body": qbody}));
        bodies.push(
            json!({"message": "response", "body": {"throttle_time_ms": i as i32 * 3,
            "error_code": code, "error": error}}),
        );
    }
    bodies.extend(seed_bodies());
    write("api-add-offsets-to-txn", &exchanges, bodies);
}

/// FindCoordinator v0 to v6 (Kafka's `FindCoordinatorRequest.json` / `...Response.json`): a
/// group (v0), transactional ids (key type 1), errors with and without message, several keys
/// in one request (v4+, KIP-699), a share group (key type 2, v6).
fn find_coordinator() {
    let s = |x: &str| StrBytes::from_string(x.to_string());
    let mut exchanges = Vec::new();
    let mut bodies = Vec::new();
    // (version, keys, key type, per key: (node id, error code, error name, message))
    type Answer = (i32, i16, &'static str, Option<&'static str>);
    let cases: [(i16, &[&str], i8, &[Answer]); 7] = [
        (0, &["orders-app"], 0, &[(1, 0, "NONE", None)]),
        (1, &["orders-tx"], 1, &[(2, 0, "NONE", None)]),
        (
            2,
            &["payments-tx"],
            1,
            &[(
                -1,
                15,
                "COORDINATOR_NOT_AVAILABLE",
                Some("partition not found"),
            )],
        ),
        (3, &["payments-tx"], 1, &[(3, 0, "NONE", None)]),
        (
            4,
            &["orders-tx", "payments-tx"],
            1,
            &[(2, 0, "NONE", None), (3, 0, "NONE", None)],
        ),
        (
            5,
            &["søk-tx"],
            1,
            &[(-1, 14, "COORDINATOR_LOAD_IN_PROGRESS", Some("loading"))],
        ),
        (6, &["share-group-1"], 2, &[(1, 0, "NONE", None)]),
    ];
    for (i, &(v, keys, key_type, answers)) in cases.iter().enumerate() {
        let corr = i as i32 + 1;
        let host = |node: i32| {
            if node < 0 {
                String::new()
            } else {
                format!("broker-{node}")
            }
        };
        let mut q = FindCoordinatorRequest::default();
        let mut qbody = json!({});
        if v <= 3 {
            q = q.with_key(s(keys[0]));
            qbody["key"] = json!(keys[0]);
        } else {
            q = q.with_coordinator_keys(keys.iter().map(|k| s(k)).collect());
        }
        if v >= 1 {
            q = q.with_key_type(key_type);
            qbody["key_type"] = json!(key_type);
        }
        if v >= 4 {
            qbody["coordinator_keys"] = json!(keys);
        }
        let mut r = FindCoordinatorResponse::default();
        let mut rbody = json!({});
        if v >= 1 {
            r = r.with_throttle_time_ms(i as i32);
            rbody["throttle_time_ms"] = json!(i as i32);
        }
        if v <= 3 {
            let (node, code, error, message) = answers[0];
            r = r
                .with_error_code(code)
                .with_node_id(BrokerId(node))
                .with_host(s(&host(node)))
                .with_port(if node < 0 { -1 } else { 9092 });
            rbody["error_code"] = json!(code);
            rbody["error"] = json!(error);
            if v >= 1 {
                r = r.with_error_message(message.map(s));
                rbody["error_message"] = json!(message);
            }
            rbody["node_id"] = json!(node);
            rbody["host"] = json!(host(node));
            rbody["port"] = json!(if node < 0 { -1 } else { 9092 });
        } else {
            let mut cs = Vec::new();
            let mut cbodies = Vec::new();
            for (k, &(node, code, error, message)) in keys.iter().zip(answers) {
                let port = if node < 0 { -1 } else { 9092 };
                cs.push(
                    Coordinator::default()
                        .with_key(s(k))
                        .with_node_id(BrokerId(node))
                        .with_host(s(&host(node)))
                        .with_port(port)
                        .with_error_code(code)
                        .with_error_message(message.map(s)),
                );
                cbodies.push(
                    json!({"key": k, "node_id": node, "host": host(node), "port": port,
                    "error_code": code, "error": error, "error_message": message}),
                );
            }
            r = r.with_coordinators(cs);
            rbody["coordinators"] = json!(cbodies);
        }
        exchanges.push((
            req(ApiKey::FindCoordinator, v, corr, "producer-1", &q),
            resp(ApiKey::FindCoordinator, v, corr, &r),
        ));
        bodies.push(json!({"message": "request", "body": qbody}));
        bodies.push(json!({"message": "response", "body": rbody}));
    }
    bodies.extend(seed_bodies());
    write("api-find-coordinator", &exchanges, bodies);
}

/// AddPartitionsToTxn v0 to v5 (Kafka's `AddPartitionsToTxnRequest.json` / `...Response.json`):
/// a client adding partitions of two topics (v0-v3, one of them refused), and a partition
/// leader verifying partitions of two transactions at once (v4-v5, `VerifyOnly`, KIP-890).
fn add_partitions_to_txn() {
    use kafka_protocol::messages::add_partitions_to_txn_request::{
        AddPartitionsToTxnTopic, AddPartitionsToTxnTransaction,
    };
    use kafka_protocol::messages::add_partitions_to_txn_response::{
        AddPartitionsToTxnPartitionResult, AddPartitionsToTxnResult, AddPartitionsToTxnTopicResult,
    };
    let s = |x: &str| StrBytes::from_string(x.to_string());
    let topic = |n: &str, ps: &[i32]| {
        AddPartitionsToTxnTopic::default()
            .with_name(TopicName(s(n)))
            .with_partitions(ps.to_vec())
    };
    let result = |n: &str, ps: &[(i32, i16)]| {
        AddPartitionsToTxnTopicResult::default()
            .with_name(TopicName(s(n)))
            .with_results_by_partition(
                ps.iter()
                    .map(|&(p, c)| {
                        AddPartitionsToTxnPartitionResult::default()
                            .with_partition_index(p)
                            .with_partition_error_code(c)
                    })
                    .collect(),
            )
    };
    let name = |c: i16| match c {
        0 => "NONE",
        3 => "UNKNOWN_TOPIC_OR_PARTITION",
        48 => "INVALID_TXN_STATE",
        55 => "OPERATION_NOT_ATTEMPTED",
        _ => unreachable!(),
    };
    let result_json = |n: &str, ps: &[(i32, i16)]| {
        let rs: Vec<Value> = ps
            .iter()
            .map(|&(p, c)| json!({"partition_index": p, "partition_error_code": c, "error": name(c)}))
            .collect();
        json!({"name": n, "results_by_partition": rs})
    };
    let mut exchanges = Vec::new();
    let mut bodies = Vec::new();
    for v in 0i16..=5 {
        let corr = i32::from(v) + 1;
        let (q, qbody, r, rbody);
        if v <= 3 {
            // Partitions 0 and 2 of orders, 1 of audit; audit is unknown: the others are then
            // not attempted.
            let ok = if v == 2 { 55 } else { 0 };
            let bad = if v == 2 { 3 } else { 0 };
            q = AddPartitionsToTxnRequest::default()
                .with_v3_and_below_transactional_id(TransactionalId(s("orders-tx")))
                .with_v3_and_below_producer_id(ProducerId(4000))
                .with_v3_and_below_producer_epoch(v)
                .with_v3_and_below_topics(vec![topic("orders", &[0, 2]), topic("audit", &[1])]);
            qbody = json!({"transactional_id": "orders-tx", "producer_id": 4000,
                "producer_epoch": v, "topics": [{"name": "orders", "partitions": [0, 2]},
                {"name": "audit", "partitions": [1]}]});
            let parts = [(0, ok), (2, ok)];
            r = AddPartitionsToTxnResponse::default()
                .with_throttle_time_ms(i32::from(v))
                .with_results_by_topic_v3_and_below(vec![
                    result("orders", &parts),
                    result("audit", &[(1, bad)]),
                ]);
            rbody = json!({"throttle_time_ms": v, "results_by_topic": [
                result_json("orders", &parts), result_json("audit", &[(1, bad)])]});
        } else {
            let tx = |id: &str, pid: i64| {
                AddPartitionsToTxnTransaction::default()
                    .with_transactional_id(TransactionalId(s(id)))
                    .with_producer_id(ProducerId(pid))
                    .with_producer_epoch(3)
                    .with_verify_only(true)
                    .with_topics(vec![topic("orders", &[1])])
            };
            q = AddPartitionsToTxnRequest::default()
                .with_transactions(vec![tx("orders-tx", 4000), tx("payments-tx", 4001)]);
            let txj = |id: &str, pid: i64| {
                json!({"transactional_id": id, "producer_id": pid, "producer_epoch": 3,
                    "verify_only": true, "topics": [{"name": "orders", "partitions": [1]}]})
            };
            qbody = json!({"transactions": [txj("orders-tx", 4000), txj("payments-tx", 4001)]});
            // payments-tx never added orders-1: INVALID_TXN_STATE.
            let res = |id: &str, c: i16| {
                AddPartitionsToTxnResult::default()
                    .with_transactional_id(TransactionalId(s(id)))
                    .with_topic_results(vec![result("orders", &[(1, c)])])
            };
            r = AddPartitionsToTxnResponse::default()
                .with_throttle_time_ms(i32::from(v))
                .with_error_code(0)
                .with_results_by_transaction(vec![res("orders-tx", 0), res("payments-tx", 48)]);
            let resj = |id: &str, c: i16| json!({"transactional_id": id, "topic_results": [result_json("orders", &[(1, c)])]});
            rbody = json!({"throttle_time_ms": v, "error_code": 0, "error": "NONE",
                "results_by_transaction": [resj("orders-tx", 0), resj("payments-tx", 48)]});
        }
        let client = if v >= 4 { "broker-1" } else { "producer-1" };
        exchanges.push((
            req(ApiKey::AddPartitionsToTxn, v, corr, client, &q),
            resp(ApiKey::AddPartitionsToTxn, v, corr, &r),
        ));
        bodies.push(json!({"message": "request", "body": qbody}));
        bodies.push(json!({"message": "response", "body": rbody}));
    }
    bodies.extend(seed_bodies());
    write("api-add-partitions-to-txn", &exchanges, bodies);
}

/// TxnOffsetCommit v0 to v5 (Kafka's `TxnOffsetCommitRequest.json` / `...Response.json`):
/// offsets of two partitions committed in a transaction, v2's leader epoch, v3's group member
/// fields (a static member in v4), metadata null and not, errors of the group coordinator.
fn txn_offset_commit() {
    use kafka_protocol::messages::txn_offset_commit_request::{
        TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
    };
    use kafka_protocol::messages::txn_offset_commit_response::{
        TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
    };
    use kafka_protocol::messages::{TxnOffsetCommitRequest, TxnOffsetCommitResponse};
    let s = |x: &str| StrBytes::from_string(x.to_string());
    // (version, error of partition 1, its name)
    let cases: [(i16, i16, &str); 6] = [
        (0, 0, "NONE"),
        (1, 0, "NONE"),
        (2, 16, "NOT_COORDINATOR"),
        (3, 0, "NONE"),
        (4, 90, "PRODUCER_FENCED"),
        (5, 22, "ILLEGAL_GENERATION"),
    ];
    let mut exchanges = Vec::new();
    let mut bodies = Vec::new();
    for (i, &(v, code, error)) in cases.iter().enumerate() {
        let corr = i as i32 + 1;
        let offset = 100 * i64::from(v);
        let part = |p: i32, off: i64, meta: Option<&str>| {
            let mut q = TxnOffsetCommitRequestPartition::default()
                .with_partition_index(p)
                .with_committed_offset(off)
                .with_committed_metadata(meta.map(s));
            if v >= 2 {
                q = q.with_committed_leader_epoch(7);
            }
            q
        };
        let mut q = TxnOffsetCommitRequest::default()
            .with_transactional_id(TransactionalId(s("orders-tx")))
            .with_group_id(GroupId(s("orders-app")))
            .with_producer_id(ProducerId(4000))
            .with_producer_epoch(v)
            .with_topics(vec![TxnOffsetCommitRequestTopic::default()
                .with_name(TopicName(s("orders")))
                .with_partitions(vec![
                    part(0, offset, None),
                    part(1, offset + 1, Some("m")),
                ])]);
        let pj = |p: i32, off: i64, meta: Option<&str>| {
            let mut j = json!({"partition_index": p, "committed_offset": off,
                "committed_metadata": meta});
            if v >= 2 {
                j["committed_leader_epoch"] = json!(7);
            }
            j
        };
        let mut qbody = json!({"transactional_id": "orders-tx", "group_id": "orders-app",
            "producer_id": 4000, "producer_epoch": v});
        if v >= 3 {
            let instance = (v == 4).then_some("instance-1");
            q = q
                .with_generation_id(3)
                .with_member_id(s("member-1"))
                .with_group_instance_id(instance.map(s));
            qbody["generation_id"] = json!(3);
            qbody["member_id"] = json!("member-1");
            qbody["group_instance_id"] = json!(instance);
        }
        qbody["topics"] = json!([{"name": "orders",
            "partitions": [pj(0, offset, None), pj(1, offset + 1, Some("m"))]}]);
        let r = TxnOffsetCommitResponse::default()
            .with_throttle_time_ms(i as i32)
            .with_topics(vec![TxnOffsetCommitResponseTopic::default()
                .with_name(TopicName(s("orders")))
                .with_partitions(vec![
                    TxnOffsetCommitResponsePartition::default()
                        .with_partition_index(0)
                        .with_error_code(0),
                    TxnOffsetCommitResponsePartition::default()
                        .with_partition_index(1)
                        .with_error_code(code),
                ])]);
        let rbody = json!({"throttle_time_ms": i as i32, "topics": [{"name": "orders",
            "partitions": [{"partition_index": 0, "error_code": 0, "error": "NONE"},
            {"partition_index": 1, "error_code": code, "error": error}]}]});
        exchanges.push((
            req(ApiKey::TxnOffsetCommit, v, corr, "producer-1", &q),
            resp(ApiKey::TxnOffsetCommit, v, corr, &r),
        ));
        bodies.push(json!({"message": "request", "body": qbody}));
        bodies.push(json!({"message": "response", "body": rbody}));
    }
    bodies.extend(seed_bodies());
    write("api-txn-offset-commit", &exchanges, bodies);
}

/// DescribeTransactions v0 (Kafka's `DescribeTransactionsRequest.json` / `...Response.json`), as
/// `kafka-transactions.sh describe` sends it: an ongoing transaction with two partitions, an
/// empty one, and an id the coordinator does not know.
fn describe_transactions() {
    use kafka_protocol::messages::describe_transactions_response::{TopicData, TransactionState};
    use kafka_protocol::messages::{DescribeTransactionsRequest, DescribeTransactionsResponse};
    let s = |x: &str| StrBytes::from_string(x.to_string());
    let ids = ["orders-tx", "payments-tx", "gone-tx"];
    let q = DescribeTransactionsRequest::default()
        .with_transactional_ids(ids.iter().map(|t| TransactionalId(s(t))).collect());
    // (id, error code, error name, state, start, producer id, epoch, partitions of orders)
    type St = (
        &'static str,
        i16,
        &'static str,
        &'static str,
        i64,
        i64,
        i16,
        &'static [i32],
    );
    let states: [St; 3] = [
        (
            "orders-tx",
            0,
            "NONE",
            "Ongoing",
            1_767_225_600_000,
            4000,
            3,
            &[0, 2],
        ),
        ("payments-tx", 0, "NONE", "Empty", -1, 4001, 8, &[]),
        (
            "gone-tx",
            105,
            "TRANSACTIONAL_ID_NOT_FOUND",
            "",
            -1,
            -1,
            -1,
            &[],
        ),
    ];
    let r = DescribeTransactionsResponse::default()
        .with_throttle_time_ms(0)
        .with_transaction_states(
            states
                .iter()
                .map(|&(id, code, _, st, start, pid, epoch, ps)| {
                    let topics = if ps.is_empty() {
                        vec![]
                    } else {
                        vec![TopicData::default()
                            .with_topic(TopicName(s("orders")))
                            .with_partitions(ps.to_vec())]
                    };
                    TransactionState::default()
                        .with_error_code(code)
                        .with_transactional_id(TransactionalId(s(id)))
                        .with_transaction_state(s(st))
                        .with_transaction_timeout_ms(60_000)
                        .with_transaction_start_time_ms(start)
                        .with_producer_id(ProducerId(pid))
                        .with_producer_epoch(epoch)
                        .with_topics(topics)
                })
                .collect(),
        );
    let sj: Vec<Value> = states
        .iter()
        .map(|&(id, code, error, st, start, pid, epoch, ps)| {
            let topics: Vec<Value> = if ps.is_empty() {
                vec![]
            } else {
                vec![json!({"topic": "orders", "partitions": ps})]
            };
            json!({"error_code": code, "error": error, "transactional_id": id,
                "transaction_state": st, "transaction_timeout_ms": 60_000,
                "transaction_start_time_ms": start, "producer_id": pid, "producer_epoch": epoch,
                "topics": topics})
        })
        .collect();
    let mut bodies = vec![
        json!({"message": "request", "body": {"transactional_ids": ids}}),
        json!({"message": "response", "body": {"throttle_time_ms": 0, "transaction_states": sj}}),
    ];
    bodies.extend(seed_bodies());
    let exchanges = vec![(
        req(ApiKey::DescribeTransactions, 0, 1, "adminclient-1", &q),
        resp(ApiKey::DescribeTransactions, 0, 1, &r),
    )];
    write("api-describe-transactions", &exchanges, bodies);
}

fn main() {
    end_txn();
    init_producer_id();
    add_offsets_to_txn();
    find_coordinator();
    add_partitions_to_txn();
    txn_offset_commit();
    describe_transactions();
    list_transactions();
    describe_producers();
    produce();
    fetch();
    metadata();
}

/// DescribeProducers v0 (Kafka's `DescribeProducersRequest.json` / `...Response.json`), as
/// `kafka-transactions.sh describe-producers` sends it: two partitions, one with a producer
/// whose transaction is open since offset 1200 (what `find-hanging` looks for), one this
/// broker does not lead.
fn describe_producers() {
    use kafka_protocol::messages::describe_producers_request::TopicRequest;
    use kafka_protocol::messages::describe_producers_response::{
        PartitionResponse, ProducerState, TopicResponse,
    };
    use kafka_protocol::messages::{DescribeProducersRequest, DescribeProducersResponse};
    let s = |x: &str| StrBytes::from_string(x.to_string());
    let q = DescribeProducersRequest::default().with_topics(vec![TopicRequest::default()
        .with_name(TopicName(s("orders")))
        .with_partition_indexes(vec![0, 1])]);
    let r = DescribeProducersResponse::default()
        .with_throttle_time_ms(0)
        .with_topics(vec![TopicResponse::default()
            .with_name(TopicName(s("orders")))
            .with_partitions(vec![
                PartitionResponse::default()
                    .with_partition_index(0)
                    .with_error_code(0)
                    .with_active_producers(vec![ProducerState::default()
                        .with_producer_id(ProducerId(4000))
                        .with_producer_epoch(3)
                        .with_last_sequence(41)
                        .with_last_timestamp(1_767_225_600_000)
                        .with_coordinator_epoch(2)
                        .with_current_txn_start_offset(1200)]),
                PartitionResponse::default()
                    .with_partition_index(1)
                    .with_error_code(6)
                    .with_error_message(Some(s("not the leader"))),
            ])]);
    let mut bodies = vec![
        json!({"message": "request", "body": {"topics": [{"name": "orders",
            "partition_indexes": [0, 1]}]}}),
        json!({"message": "response", "body": {"throttle_time_ms": 0, "topics": [{"name": "orders",
            "partitions": [
                {"partition_index": 0, "error_code": 0, "error": "NONE", "error_message": null,
                 "active_producers": [{"producer_id": 4000, "producer_epoch": 3,
                    "last_sequence": 41, "last_timestamp": 1_767_225_600_000_i64,
                    "coordinator_epoch": 2, "current_txn_start_offset": 1200}]},
                {"partition_index": 1, "error_code": 6, "error": "NOT_LEADER_OR_FOLLOWER",
                 "error_message": "not the leader", "active_producers": []}]}]}}),
    ];
    bodies.extend(seed_bodies());
    let exchanges = vec![(
        req(ApiKey::DescribeProducers, 0, 1, "adminclient-1", &q),
        resp(ApiKey::DescribeProducers, 0, 1, &r),
    )];
    write("api-describe-producers", &exchanges, bodies);
}

/// ListTransactions v0 to v2 (Kafka's `ListTransactionsRequest.json` / `...Response.json`), as
/// `kafka-transactions.sh list` and `find-hanging` send it: no filter, a state and producer
/// filter with an unknown state, v1's duration filter, v2's transactional id pattern.
fn list_transactions() {
    use kafka_protocol::messages::list_transactions_response::TransactionState;
    use kafka_protocol::messages::{ListTransactionsRequest, ListTransactionsResponse};
    let s = |x: &str| StrBytes::from_string(x.to_string());
    let listed = |ts: &[(&str, i64, &str)]| -> Vec<TransactionState> {
        ts.iter()
            .map(|&(id, pid, st)| {
                TransactionState::default()
                    .with_transactional_id(TransactionalId(s(id)))
                    .with_producer_id(ProducerId(pid))
                    .with_transaction_state(s(st))
            })
            .collect()
    };
    let listed_json = |ts: &[(&str, i64, &str)]| -> Vec<Value> {
        ts.iter()
            .map(|&(id, pid, st)| {
                json!({"transactional_id": id, "producer_id": pid, "transaction_state": st})
            })
            .collect()
    };
    let all: &[(&str, i64, &str)] = &[
        ("orders-tx", 4000, "Ongoing"),
        ("payments-tx", 4001, "Empty"),
    ];
    let ongoing: &[(&str, i64, &str)] = &[("orders-tx", 4000, "Ongoing")];
    // (version, states, producer ids, duration, pattern, unknown states, listed)
    type Case<'a> = (
        i16,
        &'a [&'a str],
        &'a [i64],
        i64,
        Option<&'a str>,
        &'a [&'a str],
        &'a [(&'a str, i64, &'a str)],
    );
    let cases: [Case; 3] = [
        (0, &[], &[], -1, None, &[], all),
        (
            1,
            &["Ongoing", "Hanging"],
            &[4000],
            900_000,
            None,
            &["Hanging"],
            ongoing,
        ),
        (2, &[], &[], -1, Some("orders-.*"), &[], ongoing),
    ];
    let mut exchanges = Vec::new();
    let mut bodies = Vec::new();
    for (i, &(v, states, pids, duration, pattern, unknown, ts)) in cases.iter().enumerate() {
        let corr = i as i32 + 1;
        let mut q = ListTransactionsRequest::default()
            .with_state_filters(states.iter().map(|x| s(x)).collect())
            .with_producer_id_filters(pids.iter().map(|&p| ProducerId(p)).collect());
        let mut qbody = json!({"state_filters": states, "producer_id_filters": pids});
        if v >= 1 {
            q = q.with_duration_filter(duration);
            qbody["duration_filter"] = json!(duration);
        }
        if v >= 2 {
            q = q.with_transactional_id_pattern(pattern.map(s));
            qbody["transactional_id_pattern"] = json!(pattern);
        }
        let r = ListTransactionsResponse::default()
            .with_throttle_time_ms(0)
            .with_error_code(0)
            .with_unknown_state_filters(unknown.iter().map(|x| s(x)).collect())
            .with_transaction_states(listed(ts));
        exchanges.push((
            req(ApiKey::ListTransactions, v, corr, "adminclient-1", &q),
            resp(ApiKey::ListTransactions, v, corr, &r),
        ));
        bodies.push(json!({"message": "request", "body": qbody}));
        bodies.push(
            json!({"message": "response", "body": {"throttle_time_ms": 0,
            "error_code": 0, "error": "NONE", "unknown_state_filters": unknown,
            "transaction_states": listed_json(ts)}}),
        );
    }
    bodies.extend(seed_bodies());
    write("api-list-transactions", &exchanges, bodies);
}

/// One record batch for the Produce and Fetch captures, encoded by kafka-protocol's
/// `RecordBatchEncoder`, and its header as kafka-pcap writes it (from the values given to the
/// encoder; the CRC as the encoder computed it).
struct TestBatch {
    producer_id: i64,
    epoch: i16,
    transactional: bool,
    compression: kafka_protocol::records::Compression,
    records: usize,
    base_offset: i64,
    sequence: i32,
    /// A control batch: COMMIT (true) or ABORT, with this coordinator epoch.
    marker: Option<(bool, i32)>,
}

impl TestBatch {
    fn data(producer_id: i64, epoch: i16, records: usize, base_offset: i64) -> Self {
        TestBatch {
            producer_id,
            epoch,
            transactional: true,
            compression: kafka_protocol::records::Compression::None,
            records,
            base_offset,
            sequence: 0,
            marker: None,
        }
    }

    fn encode(&self) -> Vec<u8> {
        use kafka_protocol::records::{
            Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
        };
        let records: Vec<Record> = match self.marker {
            Some((commit, epoch)) => {
                let mut value = vec![0, 0];
                value.extend(epoch.to_be_bytes());
                vec![Record {
                    transactional: true,
                    control: true,
                    delete_horizon: false,
                    partition_leader_epoch: 4,
                    producer_id: self.producer_id,
                    producer_epoch: self.epoch,
                    timestamp_type: TimestampType::Creation,
                    offset: self.base_offset,
                    sequence: -1,
                    timestamp: 1_767_225_600_500,
                    key: Some(Bytes::from(vec![0, 0, 0, u8::from(commit)])),
                    value: Some(Bytes::from(value)),
                    headers: Default::default(),
                }]
            }
            None => (0..self.records)
                .map(|i| Record {
                    transactional: self.transactional,
                    control: false,
                    delete_horizon: false,
                    partition_leader_epoch: 4,
                    producer_id: self.producer_id,
                    producer_epoch: self.epoch,
                    timestamp_type: TimestampType::Creation,
                    offset: self.base_offset + i as i64,
                    sequence: self.sequence + i as i32,
                    timestamp: 1_767_225_600_000 + i as i64,
                    key: Some(Bytes::from(format!("order-{i}"))),
                    value: Some(Bytes::from(format!("{{\"amount\":{}}}", 100 + i).repeat(8))),
                    headers: Default::default(),
                })
                .collect(),
        };
        let mut buf = bytes::BytesMut::new();
        let options = RecordEncodeOptions {
            version: 2,
            compression: self.compression,
        };
        RecordBatchEncoder::encode(&mut buf, &records, &options).expect("batch");
        buf.to_vec()
    }

    fn header_json(&self) -> Value {
        use kafka_protocol::records::Compression;
        let enc = self.encode();
        let (name, bits) = match self.compression {
            Compression::None => ("none", 0),
            Compression::Gzip => ("gzip", 1),
            Compression::Snappy => ("snappy", 2),
            Compression::Lz4 => ("lz4", 3),
            Compression::Zstd => ("zstd", 4),
        };
        let control = self.marker.is_some();
        let attributes =
            bits | if self.transactional { 0x10 } else { 0 } | if control { 0x20 } else { 0 };
        let n = if control { 1 } else { self.records as i64 };
        let ts = if control {
            1_767_225_600_500_i64
        } else {
            1_767_225_600_000
        };
        let mut h = json!({
            "base_offset": self.base_offset,
            "batch_length": enc.len() - 12,
            "partition_leader_epoch": 4,
            "magic": 2,
            "crc": u32::from_be_bytes([enc[17], enc[18], enc[19], enc[20]]),
            "attributes": attributes,
            "compression": name,
            "timestamp_type": "create_time",
            "is_transactional": self.transactional,
            "is_control": control,
            "last_offset_delta": n - 1,
            "base_timestamp": ts,
            "max_timestamp": ts + n - 1,
            "producer_id": self.producer_id,
            "producer_epoch": self.epoch,
            "base_sequence": if control { -1 } else { self.sequence },
            "records_count": n,
        });
        if let Some((commit, epoch)) = self.marker {
            h["control"] = json!({"type": if commit { "COMMIT" } else { "ABORT" },
                "type_code": i16::from(commit), "version": 0, "coordinator_epoch": epoch});
        }
        h
    }
}

/// Produce v9 to v13 (Kafka's `ProduceRequest.json` / `ProduceResponse.json`): a transactional
/// producer's batches (uncompressed, gzip, snappy: left compressed), two partitions in one
/// request, v13's topic ids, an idempotent producer without a transactional id; responses with
/// base offsets, v8+'s record errors and error message, v10+'s current leader.
fn produce() {
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use kafka_protocol::messages::produce_response::{
        LeaderIdAndEpoch, PartitionProduceResponse, TopicProduceResponse,
    };
    use kafka_protocol::messages::{ProduceRequest, ProduceResponse};
    use kafka_protocol::records::Compression;
    let s = |x: &str| StrBytes::from_string(x.to_string());
    let topic_id = uuid_of(7);
    let mut exchanges = Vec::new();
    let mut bodies = Vec::new();
    type Case<'a> = (i16, Option<&'a str>, Vec<(i32, TestBatch)>);
    let cases: [Case; 5] = [
        (
            9,
            Some("orders-tx"),
            vec![(0, TestBatch::data(4000, 3, 3, 0))],
        ),
        (
            10,
            Some("orders-tx"),
            vec![
                (
                    1,
                    TestBatch {
                        compression: Compression::Gzip,
                        ..TestBatch::data(4000, 3, 5, 0)
                    },
                ),
                (
                    2,
                    TestBatch {
                        compression: Compression::Snappy,
                        sequence: 5,
                        ..TestBatch::data(4000, 3, 2, 0)
                    },
                ),
            ],
        ),
        (
            11,
            None,
            vec![(
                0,
                TestBatch {
                    transactional: false,
                    ..TestBatch::data(5000, 0, 2, 0)
                },
            )],
        ),
        (
            12,
            Some("payments-tx"),
            vec![(3, TestBatch::data(4001, 7, 1, 0))],
        ),
        (
            13,
            Some("payments-tx"),
            vec![(
                3,
                TestBatch {
                    sequence: 1,
                    ..TestBatch::data(4001, 7, 4, 0)
                },
            )],
        ),
    ];
    for (corr, (v, tid, parts)) in cases.iter().enumerate() {
        let corr = corr as i32 + 1;
        let v = *v;
        let pd: Vec<PartitionProduceData> = parts
            .iter()
            .map(|(i, b)| {
                PartitionProduceData::default()
                    .with_index(*i)
                    .with_records(Some(Bytes::from(b.encode())))
            })
            .collect();
        let mut td = TopicProduceData::default().with_partition_data(pd);
        let mut topic_json = json!({});
        if v >= 13 {
            td = td.with_topic_id(topic_id);
            topic_json["topic_id"] = json!(uuid_text(7));
        } else {
            td = td.with_name(TopicName(s("orders")));
            topic_json["name"] = json!("orders");
        }
        topic_json["partition_data"] = json!(parts
            .iter()
            .map(|(i, b)| json!({"index": i,
            "records": {"size": b.encode().len(), "batches": [b.header_json()]}}))
            .collect::<Vec<_>>());
        let q = ProduceRequest::default()
            .with_transactional_id(tid.map(|t| TransactionalId(s(t))))
            .with_acks(-1)
            .with_timeout_ms(30_000)
            .with_topic_data(vec![td]);
        bodies.push(
            json!({"message": "request", "body": {"transactional_id": tid, "acks": -1,
            "timeout_ms": 30_000, "topic_data": [topic_json]}}),
        );
        let prs: Vec<PartitionProduceResponse> = parts
            .iter()
            .map(|(i, _)| {
                let mut p = PartitionProduceResponse::default()
                    .with_index(*i)
                    .with_base_offset(1000 + i64::from(*i))
                    .with_log_append_time_ms(-1)
                    .with_log_start_offset(0);
                if v == 12 {
                    p = p
                        .with_error_code(6)
                        .with_base_offset(-1)
                        .with_error_message(Some(s("not the leader")))
                        .with_current_leader(
                            LeaderIdAndEpoch::default()
                                .with_leader_id(BrokerId(2))
                                .with_leader_epoch(5),
                        );
                }
                p
            })
            .collect();
        let mut rt = TopicProduceResponse::default().with_partition_responses(prs);
        let mut rtopic = json!({});
        if v >= 13 {
            rt = rt.with_topic_id(topic_id);
            rtopic["topic_id"] = json!(uuid_text(7));
        } else {
            rt = rt.with_name(TopicName(s("orders")));
            rtopic["name"] = json!("orders");
        }
        rtopic["partition_responses"] = json!(parts.iter().map(|(i, _)| {
            let mut p = json!({"index": i, "error_code": 0, "error": "NONE", "base_offset": 1000 + i64::from(*i),
                "log_append_time_ms": -1, "log_start_offset": 0, "record_errors": [], "error_message": null});
            if v == 12 {
                p["error_code"] = json!(6);
                p["error"] = json!("NOT_LEADER_OR_FOLLOWER");
                p["base_offset"] = json!(-1);
                p["error_message"] = json!("not the leader");
                p["current_leader"] = json!({"leader_id": 2, "leader_epoch": 5});
            }
            p
        }).collect::<Vec<_>>());
        let r = ProduceResponse::default()
            .with_responses(vec![rt])
            .with_throttle_time_ms(0);
        bodies.push(
            json!({"message": "response", "body": {"responses": [rtopic], "throttle_time_ms": 0}}),
        );
        exchanges.push((
            req(ApiKey::Produce, v, corr, "producer-1", &q),
            resp(ApiKey::Produce, v, corr, &r),
        ));
    }
    bodies.extend(seed_bodies());
    write_mss("api-produce", &exchanges, bodies, 1460);
}

/// A topic id for the captures: 16 bytes of `n`.
fn uuid_of(n: u8) -> uuid::Uuid {
    uuid::Uuid::from_bytes([n; 16])
}

/// Kafka's text of [`uuid_of`] (URL-safe base64 without padding), computed here by hand.
fn uuid_text(n: u8) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let b = [n; 16];
    let mut out = String::new();
    let mut bits = 0u32;
    let mut nbits = 0;
    for &x in &b {
        bits = (bits << 8) | u32::from(x);
        nbits += 8;
        while nbits >= 6 {
            nbits -= 6;
            out.push(A[((bits >> nbits) & 63) as usize] as char);
        }
    }
    if nbits > 0 {
        out.push(A[((bits << (6 - nbits)) & 63) as usize] as char);
    }
    out
}

/// Fetch v12 to v18 (Kafka's `FetchRequest.json` / `FetchResponse.json`), as a
/// `read_committed` consumer sees a committed and an aborted transaction: data batches, a COMMIT
/// and an ABORT control batch, the aborted transaction listed, the last stable offset behind the
/// high watermark while one is open, v13+'s topic ids, and a response that ends in a batch cut
/// short (as brokers send at the fetch size). Segments of 1,000 bytes, so responses stream.
fn fetch() {
    use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
    use kafka_protocol::messages::fetch_response::{
        AbortedTransaction, FetchableTopicResponse, PartitionData,
    };
    use kafka_protocol::messages::{FetchRequest, FetchResponse};
    let s = |x: &str| StrBytes::from_string(x.to_string());
    let mut exchanges = Vec::new();
    let mut bodies = Vec::new();
    // (version, batches, aborted transactions, high watermark, last stable offset, cut bytes)
    let commit = TestBatch {
        marker: Some((true, 5)),
        ..TestBatch::data(4000, 3, 1, 3)
    };
    let abort = TestBatch {
        marker: Some((false, 5)),
        ..TestBatch::data(4001, 7, 1, 6)
    };
    type Case = (
        i16,
        Vec<TestBatch>,
        Option<Vec<(i64, i64)>>,
        i64,
        i64,
        usize,
    );
    let cases: Vec<Case> = vec![
        (
            12,
            vec![TestBatch::data(4000, 3, 3, 0), commit],
            Some(vec![]),
            4,
            4,
            0,
        ),
        (
            13,
            vec![TestBatch::data(4001, 7, 2, 4), abort],
            Some(vec![(4001, 4)]),
            7,
            7,
            0,
        ),
        (
            15,
            vec![TestBatch::data(4002, 1, 2, 7)],
            Some(vec![]),
            9,
            7,
            0,
        ),
        (
            18,
            vec![
                TestBatch {
                    transactional: false,
                    ..TestBatch::data(-1, -1, 4, 9)
                },
                TestBatch::data(4003, 0, 3, 13),
            ],
            None,
            20,
            16,
            50,
        ),
    ];
    for (corr, (v, batches, aborted, hw, lso, cut)) in cases.iter().enumerate() {
        let corr = corr as i32 + 1;
        let v = *v;
        let mut part = FetchPartition::default()
            .with_partition(0)
            .with_fetch_offset(batches[0].base_offset)
            .with_partition_max_bytes(1 << 20)
            .with_log_start_offset(0)
            .with_current_leader_epoch(4)
            .with_last_fetched_epoch(4);
        if v == 18 {
            part = part.with_partition_max_bytes(400);
        }
        let mut qt = FetchTopic::default().with_partitions(vec![part]);
        let mut qtopic = json!({});
        let name_key = if v >= 13 {
            qt = qt.with_topic_id(uuid_of(7));
            qtopic["topic_id"] = json!(uuid_text(7));
            None
        } else {
            qt = qt.with_topic(TopicName(s("orders")));
            qtopic["topic"] = json!("orders");
            Some("orders")
        };
        qtopic["partitions"] = json!([{"partition": 0, "current_leader_epoch": 4,
            "fetch_offset": batches[0].base_offset, "last_fetched_epoch": 4, "log_start_offset": 0,
            "partition_max_bytes": if v == 18 { 400 } else { 1 << 20 }}]);
        let mut q = FetchRequest::default()
            .with_max_wait_ms(500)
            .with_min_bytes(1)
            .with_max_bytes(52_428_800)
            .with_isolation_level(1)
            .with_session_id(0)
            .with_session_epoch(-1)
            .with_topics(vec![qt])
            .with_rack_id(s(""));
        let mut qbody = json!({"max_wait_ms": 500, "min_bytes": 1, "max_bytes": 52_428_800,
            "isolation_level": 1, "isolation": "READ_COMMITTED", "session_id": 0,
            "session_epoch": -1, "topics": [qtopic], "forgotten_topics_data": [], "rack_id": ""});
        if v <= 14 {
            q = q.with_replica_id(BrokerId(-1));
            qbody["replica_id"] = json!(-1);
        }
        let mut records: Vec<u8> = batches.iter().flat_map(TestBatch::encode).collect();
        let whole = records.len();
        if *cut > 0 {
            records.truncate(whole - cut);
        }
        let mut pd = PartitionData::default()
            .with_partition_index(0)
            .with_high_watermark(*hw)
            .with_last_stable_offset(*lso)
            .with_log_start_offset(0)
            .with_aborted_transactions(aborted.as_ref().map(|a| {
                a.iter()
                    .map(|(p, f)| {
                        AbortedTransaction::default()
                            .with_producer_id(ProducerId(*p))
                            .with_first_offset(*f)
                    })
                    .collect()
            }))
            .with_records(Some(Bytes::from(records.clone())));
        // What the walk reports: whole batches (the last one cut short when `cut`).
        let whole_batches: Vec<&TestBatch> = if *cut > 0 {
            batches[..batches.len() - 1].iter().collect()
        } else {
            batches.iter().collect()
        };
        let data: Vec<&&TestBatch> = whole_batches
            .iter()
            .filter(|b| b.marker.is_none())
            .collect();
        let last = whole_batches.last().map(|b| {
            b.base_offset
                + if b.marker.is_some() {
                    0
                } else {
                    b.records as i64 - 1
                }
        });
        let mut rrecords = json!({"size": records.len(), "data_batches": data.len(),
            "data_records": data.iter().map(|b| b.records).sum::<usize>(),
            "transactional_batches": data.iter().filter(|b| b.transactional).count(),
            "first_offset": whole_batches.first().map(|b| b.base_offset), "last_offset": last,
            "control_batches": whole_batches.iter().filter(|b| b.marker.is_some()).map(|b| b.header_json()).collect::<Vec<_>>()});
        if *cut > 0 {
            let last_len = batches[batches.len() - 1].encode().len();
            rrecords["partial_batch_bytes"] = json!(last_len - cut);
        }
        if v >= 12 {
            pd = pd.with_preferred_read_replica(BrokerId(-1));
        }
        let mut rt = FetchableTopicResponse::default().with_partitions(vec![pd]);
        let mut rtopic = json!({});
        match name_key {
            Some(n) => {
                rt = rt.with_topic(TopicName(s(n)));
                rtopic["topic"] = json!(n);
            }
            None => {
                rt = rt.with_topic_id(uuid_of(7));
                rtopic["topic_id"] = json!(uuid_text(7));
            }
        }
        rtopic["partitions"] = json!([{"partition_index": 0, "error_code": 0, "error": "NONE",
            "high_watermark": hw, "last_stable_offset": lso, "log_start_offset": 0,
            "aborted_transactions": aborted.as_ref().map(|a| a.iter().map(|(p, f)| json!({"producer_id": p, "first_offset": f})).collect::<Vec<_>>()),
            "preferred_read_replica": -1, "records": rrecords}]);
        let r = FetchResponse::default()
            .with_throttle_time_ms(0)
            .with_error_code(0)
            .with_session_id(0)
            .with_responses(vec![rt]);
        bodies.push(json!({"message": "request", "body": qbody}));
        bodies.push(
            json!({"message": "response", "body": {"throttle_time_ms": 0, "error_code": 0,
            "error": "NONE", "session_id": 0, "responses": [rtopic]}}),
        );
        exchanges.push((
            req(ApiKey::Fetch, v, corr, "consumer-1", &q),
            resp(ApiKey::Fetch, v, corr, &r),
        ));
    }
    bodies.extend(seed_bodies());
    write_mss("api-fetch", &exchanges, bodies, 1000);
}

/// Metadata v1, v4, v9, v12 and v13 (Kafka's `MetadataRequest.json` / `...Response.json`): two
/// brokers (one with a rack), the controller, a topic with two partitions (one without a
/// leader, an offline replica), v10+'s topic ids (what Produce v13 and Fetch v13+ name topics
/// by), a null topic list (all topics), an unknown topic, v13's top-level error code.
fn metadata() {
    use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
    use kafka_protocol::messages::metadata_response::{
        MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
    };
    use kafka_protocol::messages::{MetadataRequest, MetadataResponse};
    let s = |x: &str| StrBytes::from_string(x.to_string());
    let mut exchanges = Vec::new();
    let mut bodies = Vec::new();
    for (corr, v) in [1i16, 4, 9, 12, 13].into_iter().enumerate() {
        let corr = corr as i32 + 1;
        let all = v == 9;
        let mut q = MetadataRequest::default();
        let mut qbody = json!({});
        if all {
            q = q.with_topics(None);
            qbody["topics"] = Value::Null;
        } else {
            let mut t = MetadataRequestTopic::default().with_name(Some(TopicName(s("orders"))));
            let mut tj = json!({"name": "orders"});
            if v >= 10 {
                t = t.with_topic_id(uuid::Uuid::nil());
                tj = json!({"topic_id": "AAAAAAAAAAAAAAAAAAAAAA", "name": "orders"});
            }
            q = q.with_topics(Some(vec![t]));
            qbody["topics"] = json!([tj]);
        }
        if v >= 4 {
            q = q.with_allow_auto_topic_creation(false);
            qbody["allow_auto_topic_creation"] = json!(false);
        }
        if v >= 8 {
            qbody["include_topic_authorized_operations"] = json!(false);
        }
        if (8..=10).contains(&v) {
            qbody["include_cluster_authorized_operations"] = json!(false);
        }
        let brokers = vec![
            MetadataResponseBroker::default()
                .with_node_id(BrokerId(1))
                .with_host(s("broker-1.kafka.svc"))
                .with_port(9092)
                .with_rack(if v >= 1 { Some(s("eu-west-1a")) } else { None }),
            MetadataResponseBroker::default()
                .with_node_id(BrokerId(2))
                .with_host(s("broker-2.kafka.svc"))
                .with_port(9092),
        ];
        let mut bj = vec![
            json!({"node_id": 1, "host": "broker-1.kafka.svc", "port": 9092, "rack": "eu-west-1a"}),
            json!({"node_id": 2, "host": "broker-2.kafka.svc", "port": 9092, "rack": null}),
        ];
        if v == 0 {
            for b in &mut bj {
                b.as_object_mut().map(|o| o.remove("rack"));
            }
        }
        let mut parts = vec![
            MetadataResponsePartition::default()
                .with_partition_index(0)
                .with_leader_id(BrokerId(1))
                .with_replica_nodes(vec![BrokerId(1), BrokerId(2)])
                .with_isr_nodes(vec![BrokerId(1), BrokerId(2)]),
            MetadataResponsePartition::default()
                .with_partition_index(1)
                .with_error_code(5)
                .with_leader_id(BrokerId(-1))
                .with_replica_nodes(vec![BrokerId(2)])
                .with_isr_nodes(vec![]),
        ];
        if v >= 5 {
            parts[1] = parts[1].clone().with_offline_replicas(vec![BrokerId(2)]);
        }
        if v >= 7 {
            parts = parts.into_iter().map(|p| p.with_leader_epoch(4)).collect();
        }
        let mut pj = vec![
            json!({"error_code": 0, "error": "NONE", "partition_index": 0, "leader_id": 1,
                "replica_nodes": [1, 2], "isr_nodes": [1, 2]}),
            json!({"error_code": 5, "error": "LEADER_NOT_AVAILABLE", "partition_index": 1,
                "leader_id": -1, "replica_nodes": [2], "isr_nodes": []}),
        ];
        for (i, p) in pj.iter_mut().enumerate() {
            if v >= 7 {
                p["leader_epoch"] = json!(4);
            }
            if v >= 5 {
                p["offline_replicas"] = if i == 1 { json!([2]) } else { json!([]) };
            }
        }
        let mut topic = MetadataResponseTopic::default()
            .with_name(Some(TopicName(s("orders"))))
            .with_partitions(parts);
        let mut tj = json!({"error_code": 0, "error": "NONE", "name": "orders"});
        if v >= 10 {
            topic = topic.with_topic_id(uuid_of(7));
            tj["topic_id"] = json!(uuid_text(7));
        }
        if v >= 1 {
            tj["is_internal"] = json!(false);
        }
        tj["partitions"] = json!(pj);
        if v >= 8 {
            topic = topic.with_topic_authorized_operations(-2147483648);
            tj["topic_authorized_operations"] = json!(-2147483648i64);
        }
        let mut topics = vec![topic];
        let mut tjs = vec![tj];
        if v == 12 {
            // An unknown topic asked by name.
            topics.push(
                MetadataResponseTopic::default()
                    .with_error_code(3)
                    .with_name(Some(TopicName(s("missing"))))
                    .with_topic_id(uuid::Uuid::nil())
                    .with_topic_authorized_operations(-2147483648),
            );
            tjs.push(
                json!({"error_code": 3, "error": "UNKNOWN_TOPIC_OR_PARTITION", "name": "missing",
                "topic_id": "AAAAAAAAAAAAAAAAAAAAAA", "is_internal": false, "partitions": [],
                "topic_authorized_operations": -2147483648i64}),
            );
        }
        let mut r = MetadataResponse::default()
            .with_brokers(brokers)
            .with_controller_id(BrokerId(2))
            .with_topics(topics);
        let mut rbody = json!({"brokers": bj});
        if v >= 3 {
            r = r.with_throttle_time_ms(0);
            rbody["throttle_time_ms"] = json!(0);
        }
        if v >= 2 {
            r = r.with_cluster_id(Some(s("Jg0Ny2mSQn-1kZ1s9a3Ybw")));
            rbody["cluster_id"] = json!("Jg0Ny2mSQn-1kZ1s9a3Ybw");
        }
        rbody["controller_id"] = json!(2);
        rbody["topics"] = json!(tjs);
        if (8..=10).contains(&v) {
            rbody["cluster_authorized_operations"] = json!(-2147483648i64);
        }
        if v >= 13 {
            rbody["error_code"] = json!(0);
            rbody["error"] = json!("NONE");
        }
        bodies.push(json!({"message": "request", "body": qbody}));
        bodies.push(json!({"message": "response", "body": rbody}));
        exchanges.push((
            req(ApiKey::Metadata, v, corr, "producer-1", &q),
            resp(ApiKey::Metadata, v, corr, &r),
        ));
    }
    bodies.extend(seed_bodies());
    write("api-metadata", &exchanges, bodies);
}
