//! Sends scripted Kafka exchanges between two real TCP sockets on loopback, so that tcpdump can
//! record them into the test captures in `captures/` (see `captures/make.sh`).
//!
//! Usage: `cargo run --example make_captures -- <scenario> <port> <expected.json>`
//!
//! Frames are encoded independently of kafka-pcap's decoder: WriteTxnMarkers v1 and every other
//! API by the `kafka-protocol` crate, WriteTxnMarkers v0 and v2 by hand from the schema facts
//! (`WriteTxnMarkersRequest.json`, `WriteTxnMarkersResponse.json`, KIP-1228). The program
//! writes, beside the capture, the bodies it encoded in kafka-pcap's JSON schema, so that the
//! tests compare two implementations.
//!
//! Scenarios:
//! - `seed`: exactly the seed's 41-byte v1 request and 31-byte v1 response.
//! - `v1`: ApiVersions v3, Metadata v12, WriteTxnMarkers v1 (several markers, topics and
//!   partitions, COMMIT and ABORT, non-zero error codes), a 200 KB
//!   Produce v9 spanning several segments, and a pipelined batch of three requests in one write.
//! - `v0v2`: WriteTxnMarkers v0 and v2 (one response with an unknown tagged field) after an
//!   ApiVersions v0 exchange, on port 19092, where Kafka must be recognised from the bytes.

#[path = "../tests/common/enc.rs"]
mod enc;
#[path = "../tests/common/frames.rs"]
mod frames;

use enc::Enc;

use bytes::Bytes;
use frames::{req, resp};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::write_txn_markers_request::{
    WritableTxnMarker, WritableTxnMarkerTopic,
};
use kafka_protocol::messages::write_txn_markers_response::{
    WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse,
    ProduceRequest, ProduceResponse, TopicName, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
};
use kafka_protocol::protocol::StrBytes;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::Duration;

/// One exchange: request bytes (with size prefix), optional response bytes.
struct Exchange {
    request: Vec<u8>,
    response: Option<Vec<u8>>,
    /// Sent in the same write as the next exchange's request.
    batch_with_next: bool,
}

fn topic(name: &str) -> TopicName {
    TopicName(StrBytes::from_string(name.to_string()))
}

/// A WriteTxnMarkers v1 request from `(producer_id, epoch, commit, [(topic, [partitions])],
/// coordinator_epoch)`, with its expected JSON body.
type MarkerSpec<'a> = (i64, i16, bool, &'a [(&'a str, &'a [i32])], i32);

fn wtm_v1_request(corr: i32, client: &str, markers: &[MarkerSpec<'_>]) -> (Vec<u8>, Value) {
    let body = WriteTxnMarkersRequest::default().with_markers(
        markers
            .iter()
            .map(|(pid, epoch, commit, topics, ce)| {
                WritableTxnMarker::default()
                    .with_producer_id((*pid).into())
                    .with_producer_epoch(*epoch)
                    .with_transaction_result(*commit)
                    .with_coordinator_epoch(*ce)
                    .with_topics(
                        topics
                            .iter()
                            .map(|(t, ps)| {
                                WritableTxnMarkerTopic::default()
                                    .with_name(topic(t))
                                    .with_partition_indexes(ps.to_vec())
                            })
                            .collect(),
                    )
            })
            .collect(),
    );
    (
        req(ApiKey::WriteTxnMarkers, 1, corr, client, &body),
        expected_request(markers, None),
    )
}

fn expected_request(markers: &[MarkerSpec<'_>], tv: Option<i8>) -> Value {
    json!({"markers": markers.iter().map(|(pid, epoch, commit, topics, ce)| {
        let mut m = json!({
            "producer_id": pid, "producer_epoch": epoch,
            "transaction_result": if *commit { "COMMIT" } else { "ABORT" },
            "topics": topics.iter().map(|(t, ps)| json!({"name": t, "partition_indexes": ps})).collect::<Vec<_>>(),
            "coordinator_epoch": ce,
        });
        if let Some(tv) = tv {
            m["transaction_version"] = json!(tv);
        }
        m
    }).collect::<Vec<_>>()})
}

/// `(producer_id, [(topic, [(partition, error_code)])])`.
type ResultSpec<'a> = (i64, &'a [(&'a str, &'a [(i32, i16)])]);

fn error_name(code: i16) -> &'static str {
    match code {
        0 => "NONE",
        3 => "UNKNOWN_TOPIC_OR_PARTITION",
        6 => "NOT_LEADER_OR_FOLLOWER",
        47 => "INVALID_PRODUCER_EPOCH",
        52 => "TRANSACTION_COORDINATOR_FENCED",
        _ => panic!("add {code} to error_name"),
    }
}

fn expected_response(results: &[ResultSpec<'_>]) -> Value {
    json!({"markers": results.iter().map(|(pid, topics)| json!({
        "producer_id": pid,
        "topics": topics.iter().map(|(t, ps)| json!({
            "name": t,
            "partitions": ps.iter().map(|(p, e)| json!({"partition_index": p, "error_code": e, "error": error_name(*e)})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })).collect::<Vec<_>>()})
}

fn wtm_v1_response(corr: i32, results: &[ResultSpec<'_>]) -> (Vec<u8>, Value) {
    let body = WriteTxnMarkersResponse::default().with_markers(
        results
            .iter()
            .map(|(pid, topics)| {
                WritableTxnMarkerResult::default()
                    .with_producer_id((*pid).into())
                    .with_topics(
                        topics
                            .iter()
                            .map(|(t, ps)| {
                                WritableTxnMarkerTopicResult::default()
                                    .with_name(topic(t))
                                    .with_partitions(
                                        ps.iter()
                                            .map(|(p, e)| {
                                                WritableTxnMarkerPartitionResult::default()
                                                    .with_partition_index(*p)
                                                    .with_error_code(*e)
                                            })
                                            .collect(),
                                    )
                            })
                            .collect(),
                    )
            })
            .collect(),
    );
    (
        resp(ApiKey::WriteTxnMarkers, 1, corr, &body),
        expected_response(results),
    )
}

/// WriteTxnMarkers v0 (request header v1, classic body) or v2 (request header v2, flexible
/// body with TransactionVersion), encoded by hand.
fn wtm_hand_request(
    version: i16,
    corr: i32,
    client: &str,
    markers: &[MarkerSpec<'_>],
    tv: i8,
) -> (Vec<u8>, Value) {
    let flex = version >= 1;
    let mut e = Enc::default();
    e.i16(27).i16(version).i32(corr).classic_str(client);
    if flex {
        e.tags(&[]);
    }
    e.len(flex, markers.len());
    for (pid, epoch, commit, topics, ce) in markers {
        e.i64(*pid)
            .i16(*epoch)
            .i8(*commit as i8)
            .len(flex, topics.len());
        for (t, ps) in topics.iter() {
            e.s(flex, t).len(flex, ps.len());
            for p in ps.iter() {
                e.i32(*p);
            }
            if flex {
                e.tags(&[]);
            }
        }
        e.i32(*ce);
        if version >= 2 {
            e.i8(tv);
        }
        if flex {
            e.tags(&[]);
        }
    }
    if flex {
        e.tags(&[]);
    }
    let tv = (version >= 2).then_some(tv);
    (e.frame(), expected_request(markers, tv))
}

/// WriteTxnMarkers v0 (response header v0, classic) or v2 (response header v1, flexible)
/// response encoded by hand; `top_tag` adds an unknown top-level tagged field in v2.
fn wtm_hand_response(
    version: i16,
    corr: i32,
    results: &[ResultSpec<'_>],
    top_tag: Option<(u32, &[u8])>,
) -> (Vec<u8>, Value) {
    let flex = version >= 1;
    let mut e = Enc::default();
    e.i32(corr);
    if flex {
        e.tags(&[]);
    }
    e.len(flex, results.len());
    for (pid, topics) in results {
        e.i64(*pid).len(flex, topics.len());
        for (t, ps) in topics.iter() {
            e.s(flex, t).len(flex, ps.len());
            for (p, code) in ps.iter() {
                e.i32(*p).i16(*code);
                if flex {
                    e.tags(&[]);
                }
            }
            if flex {
                e.tags(&[]);
            }
        }
        if flex {
            e.tags(&[]);
        }
    }
    let mut expected = expected_response(results);
    if flex {
        match top_tag {
            Some((tag, data)) => {
                e.tags(&[(tag, data)]);
                expected["unknown_tagged_fields"] = json!([{"tag": tag, "size": data.len(), "data": data.iter().map(|b| format!("{b:02x}")).collect::<String>()}]);
            }
            None => {
                e.tags(&[]);
            }
        }
    }
    (e.frame(), expected)
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '|')
        .collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn api_versions(corr: i32, version: i16) -> Exchange {
    let mut body = ApiVersionsRequest::default();
    if version >= 3 {
        body = body
            .with_client_software_name(StrBytes::from_static_str("kafka-pcap"))
            .with_client_software_version(StrBytes::from_static_str("0.1.0"));
    }
    let request = req(ApiKey::ApiVersions, version, corr, "kafka-pcap-test", &body);
    let body = ApiVersionsResponse::default().with_api_keys(vec![
        ApiVersion::default()
            .with_api_key(27)
            .with_min_version(0)
            .with_max_version(2),
        ApiVersion::default()
            .with_api_key(0)
            .with_min_version(3)
            .with_max_version(12),
    ]);
    Exchange {
        request,
        response: Some(resp(ApiKey::ApiVersions, version, corr, &body)),
        batch_with_next: false,
    }
}

fn metadata(corr: i32) -> Exchange {
    let body = MetadataRequest::default().with_topics(Some(vec![
        MetadataRequestTopic::default().with_name(Some(topic("orders")))
    ]));
    Exchange {
        request: req(ApiKey::Metadata, 12, corr, "kafka-pcap-test", &body),
        response: Some(resp(
            ApiKey::Metadata,
            12,
            corr,
            &MetadataResponse::default(),
        )),
        batch_with_next: false,
    }
}

fn produce(corr: i32, bytes: usize) -> Exchange {
    let records: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8).collect();
    let body = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(30000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(topic("orders"))
            .with_partition_data(vec![PartitionProduceData::default()
                .with_index(0)
                .with_records(Some(Bytes::from(records)))])]);
    Exchange {
        request: req(ApiKey::Produce, 9, corr, "kafka-pcap-test", &body),
        response: Some(resp(ApiKey::Produce, 9, corr, &ProduceResponse::default())),
        batch_with_next: false,
    }
}

fn exchange(r: (Vec<u8>, Value), s: (Vec<u8>, Value), expected: &mut Vec<Value>) -> Exchange {
    expected.push(json!({"message": "request", "body": r.1}));
    expected.push(json!({"message": "response", "body": s.1}));
    Exchange {
        request: r.0,
        response: Some(s.0),
        batch_with_next: false,
    }
}

fn scenario(name: &str, expected: &mut Vec<Value>) -> Vec<Exchange> {
    const BROKER: &str = "broker-2-txn-coordinator";
    match name {
        "seed" => {
            let r = hex("00000025 001b 0001 00000000 0000 00 | 02 0000000000000000 0000 00 02 01 02 00000000 00 00000000 00 00");
            let s = hex(
                "0000001b 00000000 00 | 02 0000000000000000 02 01 02 00000000 0000 00 00 00 00",
            );
            let seed_req = json!({"markers": [{"producer_id": 0, "producer_epoch": 0, "transaction_result": "ABORT",
                "topics": [{"name": "", "partition_indexes": [0]}], "coordinator_epoch": 0}]});
            let seed_resp = json!({"markers": [{"producer_id": 0, "topics": [{"name": "",
                "partitions": [{"partition_index": 0, "error_code": 0, "error": "NONE"}]}]}]});
            vec![exchange((r, seed_req), (s, seed_resp), expected)]
        }
        "v1" => {
            let mut v = vec![api_versions(0, 3), metadata(1)];
            v.push(exchange(
                wtm_v1_request(
                    2,
                    BROKER,
                    &[
                        (4000, 3, true, &[("orders", &[0, 1]), ("payments", &[7])], 5),
                        (4001, 0, false, &[("orders", &[2])], 5),
                    ],
                ),
                wtm_v1_response(
                    2,
                    &[
                        (
                            4000,
                            &[("orders", &[(0, 0), (1, 6)]), ("payments", &[(7, 0)])],
                        ),
                        (4001, &[("orders", &[(2, 0)])]),
                    ],
                ),
                expected,
            ));
            v.push(produce(3, 200_000));
            // Pipelined: three requests in one write, three responses in one write.
            let mut b = exchange(
                wtm_v1_request(
                    4,
                    BROKER,
                    &[(4002, 1, false, &[("txn-audit", &[0, 1, 2])], 6)],
                ),
                wtm_v1_response(4, &[(4002, &[("txn-audit", &[(0, 47), (1, 47), (2, 47)])])]),
                expected,
            );
            b.batch_with_next = true;
            v.push(b);
            let mut m = metadata(5);
            m.batch_with_next = true;
            v.push(m);
            v.push(exchange(
                wtm_v1_request(6, BROKER, &[(4003, 7, true, &[("payments", &[0, 3])], 6)]),
                wtm_v1_response(6, &[(4003, &[("payments", &[(0, 0), (3, 52)])])]),
                expected,
            ));
            v
        }
        "v0v2" => {
            let mut v = vec![api_versions(0, 0)];
            v.push(exchange(
                wtm_hand_request(
                    0,
                    1,
                    BROKER,
                    &[
                        (
                            5000,
                            2,
                            true,
                            &[("orders", &[0]), ("inventory", &[4, 5])],
                            11,
                        ),
                        (5001, 9, false, &[("orders", &[1])], 11),
                    ],
                    0,
                ),
                wtm_hand_response(
                    0,
                    1,
                    &[
                        (
                            5000,
                            &[("orders", &[(0, 0)]), ("inventory", &[(4, 3), (5, 0)])],
                        ),
                        (5001, &[("orders", &[(1, 6)])]),
                    ],
                    None,
                ),
                expected,
            ));
            v.push(exchange(
                wtm_hand_request(
                    2,
                    2,
                    BROKER,
                    &[(5002, 0, true, &[("orders", &[0, 1, 2])], 12)],
                    2,
                ),
                wtm_hand_response(
                    2,
                    2,
                    &[(5002, &[("orders", &[(0, 0), (1, 0), (2, 0)])])],
                    Some((7, &[0x0a, 0x0b, 0x0c])),
                ),
                expected,
            ));
            v.push(exchange(
                wtm_hand_request(
                    2,
                    3,
                    BROKER,
                    &[(5003, 4, false, &[("payments", &[9])], 12)],
                    2,
                ),
                wtm_hand_response(2, 3, &[(5003, &[("payments", &[(9, 0)])])], None),
                expected,
            ));
            v
        }
        other => panic!("unknown scenario {other}"),
    }
}

fn read_frame(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut size = [0u8; 4];
    s.read_exact(&mut size).ok()?;
    let mut body = vec![0u8; i32::from_be_bytes(size) as usize];
    s.read_exact(&mut body).ok()?;
    Some(body)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    assert!(
        args.len() == 4,
        "usage: make_captures <scenario> <port> <expected.json>"
    );
    let port: u16 = args[2].parse().expect("port");
    let mut expected = Vec::new();
    let exchanges = scenario(&args[1], &mut expected);
    let responses: Vec<Option<Vec<u8>>> = exchanges.iter().map(|e| e.response.clone()).collect();
    let batches: Vec<bool> = exchanges.iter().map(|e| e.batch_with_next).collect();

    let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind");
    let server = thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        s.set_nodelay(true).expect("nodelay");
        let mut out = Vec::new();
        for (i, r) in responses.iter().enumerate() {
            read_frame(&mut s).expect("request");
            if let Some(r) = r {
                out.extend_from_slice(r);
            }
            if !batches[i] {
                s.write_all(&out).expect("write");
                out.clear();
            }
        }
        thread::sleep(Duration::from_millis(50));
    });
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.set_nodelay(true).expect("nodelay");
    thread::sleep(Duration::from_millis(20));
    let mut pending = Vec::new();
    let mut waiting = 0;
    for e in &exchanges {
        pending.extend_from_slice(&e.request);
        waiting += usize::from(e.response.is_some());
        if !e.batch_with_next {
            c.write_all(&pending).expect("write");
            pending.clear();
            for _ in 0..waiting {
                read_frame(&mut c).expect("response");
            }
            waiting = 0;
            thread::sleep(Duration::from_millis(5));
        }
    }
    server.join().expect("server");
    drop(c);
    thread::sleep(Duration::from_millis(50));
    let text = serde_json::to_string_pretty(&expected).expect("json");
    std::fs::write(&args[3], text + "\n").expect("write expected");
}
