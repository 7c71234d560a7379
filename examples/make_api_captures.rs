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

use bytes::Bytes;
use common::frames::{req, resp};
use common::*;
use kafka_protocol::messages::{
    ApiKey, EndTxnRequest, EndTxnResponse, ProducerId, TransactionalId,
};
use kafka_protocol::protocol::StrBytes;
use serde_json::{json, Value};

/// Writes `captures/NAME.pcap` (one connection to 127.0.0.1:9092 carrying `exchanges`, then
/// the seed's WriteTxnMarkers exchange) and `captures/NAME.expected.json` (`bodies`, in order).
fn write(name: &str, exchanges: &[(Vec<u8>, Vec<u8>)], bodies: Vec<Value>) {
    let mut c = Conversation::new(false, 9092);
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

fn main() {
    end_txn();
}
