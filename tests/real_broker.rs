//! The real broker capture (../shared/captures/real-broker/r4-crabka-wtm-v1-lo.pcap: a
//! two-node Kafka-compatible cluster on 127.0.0.1:9092 and :9094, 10,278 packets, whose
//! transaction coordinator sent 12 WriteTxnMarkers v1 requests, 8 COMMIT and 4 ABORT, each for
//! partition 0 of `__consumer_offsets`, per its README).
//!
//! Two checks: every Kafka message of every API is framed, numbered and paired exactly as
//! Wireshark 4.4.19 does it (tests/data/real-broker.tshark-4.4.19.tsv, made by tshark and kept
//! here), and the 12 WriteTxnMarkers exchanges decode to the values the README describes.
//! Skipped, with a message, where ../shared is absent (a fresh clone).

mod common;

use assert_cmd::Command;
use serde_json::{json, Value};
use std::path::PathBuf;

fn capture() -> Option<PathBuf> {
    common::shared("captures/real-broker/r4-crabka-wtm-v1-lo.pcap")
}

/// The second real broker capture and its truth file (../shared/captures/real-broker-2), or
/// `None` with a note on standard error when they are absent (a fresh clone).
fn real_broker_2() -> Option<(PathBuf, Value)> {
    let pcap = common::shared("captures/real-broker-2/rb2-01-many-txn-lo.pcap")?;
    let truth = common::shared("captures/real-broker-2/rb2-01-many-txn-lo.truth.json")?;
    let truth = serde_json::from_str(&std::fs::read_to_string(truth).unwrap()).unwrap();
    Some((pcap, truth))
}

/// kafka-pcap run with `args` on `f`.
fn run(args: &[&str], f: &PathBuf) -> std::process::Output {
    Command::cargo_bin("kafka-pcap")
        .unwrap()
        .args(args)
        .arg(f)
        .output()
        .unwrap()
}

fn records(args: &[&str], f: &PathBuf) -> Vec<Value> {
    let out = run(args, f);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// (frame, "request" or "response", api_key, api_version, correlation_id); tshark gives the
/// version of requests only, so a response's is `None`.
type Message = (u64, String, i64, Option<i64>, i64);

#[test]
fn every_message_is_framed_as_wireshark_4_4_frames_it() {
    let Some(f) = capture() else { return };
    let tsv = include_str!("data/real-broker.tshark-4.4.19.tsv");
    let expected: Vec<Message> = tsv
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            let n = |i: usize| c[i].parse::<i64>().unwrap();
            let to_broker = matches!(c[1], "9092" | "9094");
            let kind = if to_broker { "request" } else { "response" };
            let version = to_broker.then(|| n(3));
            assert_eq!(c[3].is_empty(), !to_broker, "{l}");
            (n(0) as u64, kind.to_string(), n(2), version, n(4))
        })
        .collect();
    assert_eq!(expected.len(), 3817);
    let recs = records(&["--all-apis"], &f);
    // The brokers' replica fetchers close their connections while a Fetch waits: 75 Fetch
    // responses have only their first 9 bytes (size, correlation id, header tags) when the
    // fetcher, which had sent its FIN, resets the connection. Fetch is decoded, so each is a
    // truncated_frame saying the fetcher reset the connection after closing its side; nothing
    // else is anomalous.
    let anomalies: Vec<&Value> = recs.iter().filter(|r| r["event_type"] != "kafka").collect();
    let cut = |a: &&Value| {
        a["anomaly"]["kind"] == "truncated_frame"
            && a["anomaly"]["api_key"] == 1
            && a["anomaly"]["message"].as_str().is_some_and(|m| {
                // Reset by the fetcher, the receiving side of the response.
                let by = format!("{}:{}", a["dest_ip"].as_str().unwrap_or(""), a["dest_port"]);
                m == format!(
                    "the last 67 bytes of a 72-byte frame never came: the connection was reset \
                     by {by}, which had closed its side before"
                )
            })
    };
    // And the test driver's admin client (`wtm-admin`) sends its Metadata v13 request with a
    // v8-v10 body (an INT32 topic count of 0 and three booleans): three bytes more than the
    // v13 layout (null compact topics, two booleans, tags) takes, so trailing_bytes.
    let admin = |a: &&Value| {
        a["anomaly"]["kind"] == "trailing_bytes"
            && a["anomaly"]["api_key"] == 3
            && a["anomaly"]["data"] == "0003000d00000003000977746d2d61646d696e0000000000010000"
    };
    assert!(
        anomalies.iter().all(|a| cut(a) || admin(a)),
        "{anomalies:#?}"
    );
    assert_eq!(anomalies.iter().filter(|a| cut(a)).count(), 75);
    assert_eq!(anomalies.iter().filter(|a| admin(a)).count(), 1);
    // Each of those 75 is also written as what its 5 bytes hold (its header: decoded in part,
    // at the frame the connection ended), which Wireshark does not show as a message.
    let partial = |r: &Value| r["kafka"]["truncated"] == true;
    let cut_records: Vec<&Value> = recs.iter().filter(|r| partial(r)).collect();
    assert_eq!(cut_records.len(), 75);
    assert!(cut_records.iter().all(|r| {
        let k = &r["kafka"];
        k["api_name"] == "Fetch"
            && k["message"] == "response"
            && k["size"] == 72
            && k["captured_bytes"] == 5
            && k["truncated_field"] == "throttle_time_ms"
            && k["body"] == serde_json::json!({})
    }));
    let admin_frame = anomalies.iter().find(|a| admin(a)).unwrap()["frame"].clone();
    let recs: Vec<Value> = recs.into_iter().filter(|r| !partial(r)).collect();
    // The admin request's fields all read (as v13's), so it is still a message, its record
    // holding them and the three bytes left after them.
    let admin_record: Vec<&Value> = recs
        .iter()
        .filter(|r| r["kafka"]["trailing_bytes"].is_number())
        .collect();
    assert_eq!(admin_record.len(), 1, "{admin_record:#?}");
    let k = &admin_record[0]["kafka"];
    assert_eq!(
        (
            &k["api_name"],
            &k["api_version"],
            &k["client_id"],
            &k["trailing_bytes"]
        ),
        (
            &json!("Metadata"),
            &json!(13),
            &json!("wtm-admin"),
            &json!(3)
        )
    );
    assert_eq!(
        k["body"],
        json!({"topics": null, "allow_auto_topic_creation": false,
               "include_topic_authorized_operations": false})
    );
    assert_eq!(admin_frame, admin_record[0]["frame"]);
    let recs: Vec<Value> = recs
        .into_iter()
        .filter(|r| r["event_type"] == "kafka")
        .collect();
    let got: Vec<Message> = recs
        .iter()
        .map(|r| {
            let k = &r["kafka"];
            let request = k["message"] == "request";
            (
                r["frame"].as_u64().unwrap(),
                k["message"].as_str().unwrap().to_string(),
                k["api_key"].as_i64().unwrap(),
                k["api_version"].as_i64().filter(|_| request),
                k["correlation_id"].as_i64().unwrap(),
            )
        })
        .collect();
    let mut sorted = got.clone();
    sorted.sort();
    let mut expected_sorted = expected.clone();
    expected_sorted.sort();
    for (g, e) in sorted.iter().zip(&expected_sorted) {
        assert_eq!(g, e, "first message that differs from Wireshark's");
    }
    assert_eq!(sorted.len(), expected_sorted.len());
    // Records come out in frame order here (no segment of this capture is held).
    assert!(got.windows(2).all(|w| w[0].0 <= w[1].0));
}

#[test]
fn the_twelve_write_txn_markers_exchanges() {
    let Some(f) = capture() else { return };
    let recs = records(&["--pair"], &f);
    // (request frame, response frame, stream, latency_us, producer_id, producer_epoch, result)
    let expected: [(u64, u64, u64, i64, i64, i64, &str); 12] = [
        (781, 782, 68, 1750, 1000, 0, "COMMIT"),
        (1064, 1065, 72, 204, 1000, 2, "COMMIT"),
        (1417, 1418, 76, 237, 1000, 4, "ABORT"),
        (1667, 1668, 81, 195, 1000, 6, "COMMIT"),
        (2185, 2187, 87, 243, 1000, 8, "COMMIT"),
        (2808, 2809, 92, 210, 1000, 10, "ABORT"),
        (3045, 3048, 96, 178, 1001, 0, "COMMIT"),
        (3539, 3541, 100, 291, 1001, 2, "COMMIT"),
        (3894, 3895, 104, 162, 1001, 4, "ABORT"),
        (4393, 4394, 110, 133, 1001, 6, "COMMIT"),
        (4649, 4651, 115, 327, 1001, 8, "COMMIT"),
        (5255, 5256, 119, 271, 1001, 10, "ABORT"),
    ];
    assert_eq!(recs.len(), 12, "{recs:#?}");
    for (r, e) in recs.iter().zip(&expected) {
        assert_eq!(r["event_type"], "exchange");
        assert_eq!(r["stream"], e.2);
        // The coordinator (node 2) opens a new connection to node 1 for each request.
        assert_eq!(r["src_ip"], "127.0.0.1");
        assert_eq!(r["dest_port"], 9092);
        let x = &r["exchange"];
        assert_eq!(x["api_name"], "WriteTxnMarkers");
        assert_eq!(x["api_version"], 1);
        assert_eq!(x["correlation_id"], 1);
        assert_eq!(x["client_id"], "crabka-broker-txn-2");
        assert_eq!(x["request_frame"], e.0);
        assert_eq!(x["response_frame"], e.1);
        assert_eq!(x["latency_us"], e.3);
        let m = &x["request"]["markers"];
        assert_eq!(m.as_array().unwrap().len(), 1);
        assert_eq!(m[0]["producer_id"], e.4);
        assert_eq!(m[0]["producer_epoch"], e.5);
        assert_eq!(m[0]["transaction_result"], e.6);
        assert_eq!(m[0]["topics"][0]["name"], "__consumer_offsets");
        assert_eq!(
            m[0]["topics"][0]["partition_indexes"],
            serde_json::json!([0])
        );
        assert!(m[0]["coordinator_epoch"].is_i64());
        let p = &x["response"]["markers"][0];
        assert_eq!(p["producer_id"], e.4);
        assert_eq!(p["topics"][0]["name"], "__consumer_offsets");
        let part = &p["topics"][0]["partitions"][0];
        assert_eq!(part["partition_index"], 0);
        assert_eq!(part["error_code"], 0);
        assert_eq!(part["error"], "NONE");
    }
    let commits = expected.iter().filter(|e| e.6 == "COMMIT").count();
    assert_eq!(
        (commits, 12 - commits),
        (8, 4),
        "the README's 8 committed, 4 aborted"
    );
}

/// The case: r4 captured with a snapshot length of 128 (62 Kafka bytes a packet) still
/// says, for each of the 12 requests, the producer id, epoch and COMMIT or ABORT, marked
/// truncated; `--stats` counts 8 COMMIT and 4 ABORT markers; and the default output is not
/// buried under harmless gaps.
#[test]
fn r4_cut_to_a_snaplen_of_128_keeps_every_marker() {
    let Some(f) = capture() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("r4-128.pcap");
    std::fs::write(&cut, common::snapped(&std::fs::read(&f).unwrap(), 128)).unwrap();
    let recs = records(&["--stats=json"], &cut);
    let requests: Vec<&Value> = recs
        .iter()
        .filter(|r| r["event_type"] == "kafka" && r["kafka"]["message"] == "request")
        .collect();
    assert_eq!(requests.len(), 12);
    let mut results = Vec::new();
    for r in &requests {
        let k = &r["kafka"];
        assert_eq!(k["truncated"], true, "{r}");
        assert_eq!(k["client_id"], "crabka-broker-txn-2");
        let m = &k["body"]["markers"][0];
        assert!(
            [1000, 1001].contains(&m["producer_id"].as_i64().unwrap()),
            "{r}"
        );
        assert!(m["producer_epoch"].is_i64());
        results.push(m["transaction_result"].as_str().unwrap().to_string());
    }
    assert_eq!(results.iter().filter(|r| *r == "COMMIT").count(), 8);
    assert_eq!(results.iter().filter(|r| *r == "ABORT").count(), 4);
    let stats = &recs.last().unwrap()["stats"]["write_txn_markers"];
    assert_eq!(stats["commit_markers"], 8);
    assert_eq!(stats["abort_markers"], 4);
    assert_eq!(stats["partial_markers"], 12);
    // Harmless gaps (inside frames of other APIs) are counted, not written.
    let written = recs.len();
    assert!(written < 100, "{written} records");
}

/// The second real broker capture (../shared/captures/real-broker-2: 120 transactions of three
/// transactional producers) against the producer side's own record of it (the truth file):
/// every EndTxn request says the transactional id, producer id, epoch and commit or abort the
/// producer logged, one per transaction, and every EndTxn response answers it with NONE.
#[test]
fn end_txn_of_120_transactions_match_the_producers_record() {
    let Some((pcap, truth)) = real_broker_2() else {
        return;
    };
    let mut want: Vec<(String, i64, i64, bool)> = truth["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["transactional_id"].as_str().unwrap().to_string(),
                t["producer_id"].as_i64().unwrap(),
                t["producer_epoch"].as_i64().unwrap(),
                t["requested"] == "commit",
            )
        })
        .collect();
    want.sort();
    assert_eq!(want.len(), 120);

    let recs = records(&["--all-apis"], &pcap);
    let end_txn: Vec<&Value> = recs
        .iter()
        .filter(|r| r["kafka"]["api_name"] == "EndTxn")
        .collect();
    let requests: Vec<&Value> = end_txn
        .iter()
        .copied()
        .filter(|r| r["kafka"]["message"] == "request")
        .collect();
    let mut got: Vec<(String, i64, i64, bool)> = requests
        .iter()
        .map(|r| {
            let b = &r["kafka"]["body"];
            (
                b["transactional_id"].as_str().unwrap().to_string(),
                b["producer_id"].as_i64().unwrap(),
                b["producer_epoch"].as_i64().unwrap(),
                b["committed"].as_bool().unwrap(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, want);
    // Each response answers one of these requests, without error.
    let request_frames: std::collections::HashSet<u64> = requests
        .iter()
        .map(|r| r["frame"].as_u64().unwrap())
        .collect();
    let responses: Vec<&Value> = end_txn
        .iter()
        .copied()
        .filter(|r| r["kafka"]["message"] == "response")
        .collect();
    assert_eq!(responses.len(), 120);
    for r in responses {
        let k = &r["kafka"];
        assert!(
            request_frames.contains(&k["request_frame"].as_u64().unwrap()),
            "{r}"
        );
        assert_eq!(k["body"]["error"], "NONE", "{r}");
    }
    // Without --all-apis, EndTxn is not written.
    let default = records(&[], &pcap);
    assert!(default.iter().all(|r| r["kafka"]["api_name"] != "EndTxn"));
}

/// The same capture's InitProducerId exchanges against the truth file: each of its 120
/// transactions and 3 probe producers (a client id of its own each) asked with its
/// transactional id and timeout, and got the producer id and epoch the producer logged.
#[test]
fn init_producer_id_of_123_producers_match_the_producers_record() {
    let Some((pcap, truth)) = real_broker_2() else {
        return;
    };
    let producers = truth["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .chain(truth["init_only_producers"].as_array().unwrap());
    let mut want: Vec<(String, String, i64, i64, i64)> = producers
        .map(|t| {
            (
                t["client_id"].as_str().unwrap().to_string(),
                t["transactional_id"].as_str().unwrap().to_string(),
                t["transaction_timeout_ms"].as_i64().unwrap(),
                t["producer_id"].as_i64().unwrap(),
                t["producer_epoch"].as_i64().unwrap(),
            )
        })
        .collect();
    want.sort();
    assert_eq!(want.len(), 123);
    let mut got: Vec<(String, String, i64, i64, i64)> = records(&["--all-apis", "--pair"], &pcap)
        .iter()
        .filter(|r| r["exchange"]["api_name"] == "InitProducerId")
        .map(|r| {
            let (x, q, p) = (
                &r["exchange"],
                &r["exchange"]["request"],
                &r["exchange"]["response"],
            );
            assert_eq!(p["error"], "NONE", "{r}");
            (
                x["client_id"].as_str().unwrap().to_string(),
                q["transactional_id"].as_str().unwrap().to_string(),
                q["transaction_timeout_ms"].as_i64().unwrap(),
                p["producer_id"].as_i64().unwrap(),
                p["producer_epoch"].as_i64().unwrap(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, want);
}

/// The same capture's AddOffsetsToTxn requests against the truth file: every transaction that
/// committed consumer offsets added its group, with its transactional id, producer id and
/// epoch; each answered NONE.
#[test]
fn add_offsets_to_txn_match_the_producers_record() {
    let Some((pcap, truth)) = real_broker_2() else {
        return;
    };
    let mut want: Vec<(String, i64, i64, String)> = truth["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["offsets"].is_object())
        .map(|t| {
            (
                t["transactional_id"].as_str().unwrap().to_string(),
                t["producer_id"].as_i64().unwrap(),
                t["producer_epoch"].as_i64().unwrap(),
                t["offsets"]["group"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    want.sort();
    assert!(want.len() >= 100, "{}", want.len());
    let mut got: Vec<(String, i64, i64, String)> = records(&["--all-apis", "--pair"], &pcap)
        .iter()
        .filter(|r| r["exchange"]["api_name"] == "AddOffsetsToTxn")
        .map(|r| {
            let (q, p) = (&r["exchange"]["request"], &r["exchange"]["response"]);
            assert_eq!(p["error"], "NONE", "{r}");
            (
                q["transactional_id"].as_str().unwrap().to_string(),
                q["producer_id"].as_i64().unwrap(),
                q["producer_epoch"].as_i64().unwrap(),
                q["group_id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, want);
}

/// The same capture's FindCoordinator exchanges against the truth file: every lookup of a
/// transactional id (key type 1) that found its coordinator found the broker the producer
/// logged as its coordinator.
#[test]
fn find_coordinator_answers_match_the_producers_record() {
    let Some((pcap, truth)) = real_broker_2() else {
        return;
    };
    let coordinator: std::collections::HashMap<String, i64> = truth["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["transactional_id"].as_str().unwrap().to_string(),
                t["coordinator"].as_i64().unwrap(),
            )
        })
        .collect();
    let mut found = 0;
    for r in records(&["--all-apis", "--pair"], &pcap) {
        let x = &r["exchange"];
        if x["api_name"] != "FindCoordinator" || x["request"]["key_type"] != 1 {
            continue;
        }
        let key = x["request"]["key"].as_str().unwrap();
        let p = &x["response"];
        if p["error"] == "NONE" {
            assert_eq!(p["node_id"].as_i64(), coordinator.get(key).copied(), "{r}");
            assert!(p["host"].as_str().is_some_and(|h| !h.is_empty()), "{r}");
            found += 1;
        } else {
            assert_eq!(p["node_id"], -1, "{r}");
        }
    }
    assert!(found >= 120, "{found}");
}

/// The same capture's AddPartitionsToTxn requests against the truth file: for each
/// transaction, the partitions its client added (over all its requests) are the data
/// partitions the producer wrote to, under its producer id and epoch; every partition result
/// is NONE.
#[test]
fn add_partitions_to_txn_match_the_producers_record() {
    let Some((pcap, truth)) = real_broker_2() else {
        return;
    };
    type Key = (String, i64, i64);
    let mut want: std::collections::BTreeMap<Key, std::collections::BTreeSet<(String, i64)>> =
        Default::default();
    for t in truth["transactions"].as_array().unwrap() {
        let key = (
            t["transactional_id"].as_str().unwrap().to_string(),
            t["producer_id"].as_i64().unwrap(),
            t["producer_epoch"].as_i64().unwrap(),
        );
        let parts = want.entry(key).or_default();
        for p in t["data_partitions"].as_array().unwrap() {
            parts.insert((
                p["topic"].as_str().unwrap().to_string(),
                p["partition"].as_i64().unwrap(),
            ));
        }
    }
    assert_eq!(want.len(), 120);
    let mut got: std::collections::BTreeMap<Key, std::collections::BTreeSet<(String, i64)>> =
        Default::default();
    for r in records(&["--all-apis", "--pair"], &pcap) {
        let x = &r["exchange"];
        if x["api_name"] != "AddPartitionsToTxn" {
            continue;
        }
        let q = &x["request"];
        let key = (
            q["transactional_id"].as_str().unwrap().to_string(),
            q["producer_id"].as_i64().unwrap(),
            q["producer_epoch"].as_i64().unwrap(),
        );
        let parts = got.entry(key).or_default();
        for t in q["topics"].as_array().unwrap() {
            for p in t["partitions"].as_array().unwrap() {
                parts.insert((t["name"].as_str().unwrap().to_string(), p.as_i64().unwrap()));
            }
        }
        for t in x["response"]["results_by_topic"].as_array().unwrap() {
            for p in t["results_by_partition"].as_array().unwrap() {
                assert_eq!(p["error"], "NONE", "{r}");
            }
        }
    }
    assert_eq!(got, want);
}

/// The same capture's TxnOffsetCommit requests against the truth file: each transaction that
/// committed offsets sent its group's positions (topic, partition, offset) under its
/// transactional id, producer id and epoch; every partition result is NONE.
#[test]
fn txn_offset_commit_match_the_producers_record() {
    let Some((pcap, truth)) = real_broker_2() else {
        return;
    };
    type Entry = (String, String, i64, i64, Vec<(String, i64, i64)>);
    let mut want: Vec<Entry> = truth["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["offsets"].is_object())
        .map(|t| {
            let o = &t["offsets"];
            let mut ps: Vec<(String, i64, i64)> = o["committed_positions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    (
                        p["topic"].as_str().unwrap().to_string(),
                        p["partition"].as_i64().unwrap(),
                        p["offset"].as_i64().unwrap(),
                    )
                })
                .collect();
            ps.sort();
            (
                t["transactional_id"].as_str().unwrap().to_string(),
                o["group"].as_str().unwrap().to_string(),
                t["producer_id"].as_i64().unwrap(),
                t["producer_epoch"].as_i64().unwrap(),
                ps,
            )
        })
        .collect();
    want.sort();
    assert!(want.len() >= 100, "{}", want.len());
    let mut got: Vec<Entry> = records(&["--all-apis", "--pair"], &pcap)
        .iter()
        .filter(|r| r["exchange"]["api_name"] == "TxnOffsetCommit")
        .map(|r| {
            let (q, p) = (&r["exchange"]["request"], &r["exchange"]["response"]);
            for t in p["topics"].as_array().unwrap() {
                for part in t["partitions"].as_array().unwrap() {
                    assert_eq!(part["error"], "NONE", "{r}");
                }
            }
            let mut ps: Vec<(String, i64, i64)> = q["topics"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|t| {
                    let name = t["name"].as_str().unwrap().to_string();
                    t["partitions"].as_array().unwrap().iter().map(move |p| {
                        (
                            name.clone(),
                            p["partition_index"].as_i64().unwrap(),
                            p["committed_offset"].as_i64().unwrap(),
                        )
                    })
                })
                .collect();
            ps.sort();
            (
                q["transactional_id"].as_str().unwrap().to_string(),
                q["group_id"].as_str().unwrap().to_string(),
                q["producer_id"].as_i64().unwrap(),
                q["producer_epoch"].as_i64().unwrap(),
                ps,
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, want);
}

/// The same capture's Produce requests against the truth file: every data partition of each
/// transaction got its records in transactional batches that carry the transaction's producer
/// id and epoch, under its transactional id, and every Produce response says NONE.
#[test]
fn produce_batches_match_the_producers_record() {
    let Some((pcap, truth)) = real_broker_2() else {
        return;
    };
    type Key = (String, i64, i64);
    type Parts = std::collections::BTreeMap<(String, i64), i64>;
    let mut want: std::collections::BTreeMap<Key, Parts> = Default::default();
    for t in truth["transactions"].as_array().unwrap() {
        let key = (
            t["transactional_id"].as_str().unwrap().to_string(),
            t["producer_id"].as_i64().unwrap(),
            t["producer_epoch"].as_i64().unwrap(),
        );
        let parts = want.entry(key).or_default();
        for p in t["data_partitions"].as_array().unwrap() {
            let at = (
                p["topic"].as_str().unwrap().to_string(),
                p["partition"].as_i64().unwrap(),
            );
            *parts.entry(at).or_default() += p["records"].as_i64().unwrap();
        }
    }
    assert_eq!(want.len(), 120);
    let mut got: std::collections::BTreeMap<Key, Parts> = Default::default();
    let mut exchanges = 0;
    for r in records(&["--api", "Produce", "--pair"], &pcap) {
        let x = &r["exchange"];
        assert_eq!(x["api_name"], "Produce", "{r}");
        exchanges += 1;
        let q = &x["request"];
        let tid = q["transactional_id"].as_str().unwrap().to_string();
        for t in q["topic_data"].as_array().unwrap() {
            let topic = t["name"].as_str().unwrap();
            for p in t["partition_data"].as_array().unwrap() {
                for b in p["records"]["batches"].as_array().unwrap() {
                    assert_eq!(b["is_transactional"], true, "{r}");
                    assert_eq!(
                        (b["magic"].as_i64(), b["is_control"].as_bool()),
                        (Some(2), Some(false))
                    );
                    let key = (
                        tid.clone(),
                        b["producer_id"].as_i64().unwrap(),
                        b["producer_epoch"].as_i64().unwrap(),
                    );
                    let at = (topic.to_string(), p["index"].as_i64().unwrap());
                    *got.entry(key).or_default().entry(at).or_default() +=
                        b["records_count"].as_i64().unwrap();
                }
            }
        }
        for t in x["response"]["responses"].as_array().unwrap() {
            for p in t["partition_responses"].as_array().unwrap() {
                assert_eq!(p["error"], "NONE", "{r}");
                assert!(p["base_offset"].as_i64().unwrap() >= 0, "{r}");
            }
        }
    }
    assert_eq!(exchanges, 360);
    assert_eq!(got, want);
}

/// r4's 12 transactions joined from the bodies alone: each EndTxn names the producer id and
/// epoch its InitProducerId got, its Produce batches carry them, transactional, and the one
/// WriteTxnMarkers marker for them says COMMIT exactly when the client asked to commit (the
/// README's 8 committed, 4 aborted).
#[test]
fn r4_transactions_join_from_init_to_marker() {
    let Some(f) = capture() else { return };
    let args = [
        "--api",
        "InitProducerId",
        "--api",
        "Produce",
        "--api",
        "EndTxn",
    ];
    let mut args = args.to_vec();
    args.extend(["--api", "WriteTxnMarkers", "--pair"]);
    let mut given: std::collections::HashMap<String, (i64, i64)> = Default::default();
    let mut produced: std::collections::BTreeSet<(String, i64, i64)> = Default::default();
    let mut ended = Vec::new();
    let mut markers = std::collections::BTreeMap::new();
    for r in records(&args, &f) {
        let x = &r["exchange"];
        let (q, a) = (&x["request"], &x["response"]);
        match x["api_name"].as_str().unwrap() {
            "InitProducerId" => {
                let tid = q["transactional_id"].as_str().unwrap().to_string();
                assert_eq!(a["error"], "NONE");
                given.insert(
                    tid,
                    (
                        a["producer_id"].as_i64().unwrap(),
                        a["producer_epoch"].as_i64().unwrap(),
                    ),
                );
            }
            "Produce" => {
                let tid = q["transactional_id"].as_str().unwrap().to_string();
                for t in q["topic_data"].as_array().unwrap() {
                    for p in t["partition_data"].as_array().unwrap() {
                        for b in p["records"]["batches"].as_array().unwrap() {
                            assert_eq!(b["is_transactional"], true);
                            let ids = (
                                b["producer_id"].as_i64().unwrap(),
                                b["producer_epoch"].as_i64().unwrap(),
                            );
                            assert_eq!(given.get(&tid), Some(&ids), "{r}");
                            produced.insert((tid.clone(), ids.0, ids.1));
                        }
                    }
                }
            }
            "EndTxn" => {
                let tid = q["transactional_id"].as_str().unwrap().to_string();
                let ids = (
                    q["producer_id"].as_i64().unwrap(),
                    q["producer_epoch"].as_i64().unwrap(),
                );
                assert_eq!(given.get(&tid), Some(&ids), "{r}");
                assert_eq!(a["error"], "NONE");
                ended.push((tid, ids.0, ids.1, q["committed"].as_bool().unwrap()));
            }
            "WriteTxnMarkers" => {
                for m in q["markers"].as_array().unwrap() {
                    let ids = (
                        m["producer_id"].as_i64().unwrap(),
                        m["producer_epoch"].as_i64().unwrap(),
                    );
                    let prev =
                        markers.insert(ids, m["transaction_result"].as_str().unwrap().to_string());
                    assert!(prev.is_none(), "one marker per transaction: {r}");
                }
            }
            other => panic!("{other}: {r}"),
        }
    }
    assert_eq!(ended.len(), 12);
    assert_eq!(
        ended.iter().filter(|e| e.3).count(),
        8,
        "the README's 8 committed, 4 aborted"
    );
    for (tid, pid, epoch, committed) in &ended {
        assert!(
            produced.contains(&(tid.clone(), *pid, *epoch)),
            "{tid} wrote data"
        );
        let want = if *committed { "COMMIT" } else { "ABORT" };
        assert_eq!(
            markers.get(&(*pid, *epoch)).map(String::as_str),
            Some(want),
            "{tid} {pid} {epoch}"
        );
    }
    assert_eq!(markers.len(), 12);
}

/// `--topic NAME` also keeps the messages that name the topic by id (Fetch v13+), by the ids
/// the capture's Metadata responses gave that name: rb2-01's replica fetchers read
/// `__transaction_state` by id only.
#[test]
fn topic_filter_follows_metadata_topic_ids() {
    let Some((pcap, _)) = real_broker_2() else {
        return;
    };
    let recs = records(&["--all-apis", "--topic", "__transaction_state"], &pcap);
    let count = |name: &str| {
        recs.iter()
            .filter(|r| r["event_type"] == "kafka" && r["kafka"]["api_name"] == name)
            .count()
    };
    assert_eq!(count("Metadata"), 8);
    // Of the 2,118 Fetch requests and 2,043 responses, those before the first Metadata
    // response that named the topic cannot be known to be about it (50 and 25); 75 responses
    // more are the replica fetchers' last, cut by the capture's end after their header
    // (decoded in part: their request named the topic).
    let fetches = |m: &str| {
        recs.iter()
            .filter(|r| r["kafka"]["api_name"] == "Fetch" && r["kafka"]["message"] == m)
            .count()
    };
    assert_eq!((fetches("request"), fetches("response")), (2068, 2018 + 75));
    assert_eq!(count("Fetch"), 2068 + 2018 + 75);
}

/// The (topic, partition) pairs of a JSON array of partitions, sorted.
fn topic_partitions(list: &Value) -> Vec<(String, i64)> {
    let mut v: Vec<(String, i64)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["topic"].as_str().unwrap().to_string(),
                p["partition"].as_i64().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// The transaction records of `--transactions` on `f`, and every other record.
/// The one transaction of `txns` (records) with the producer id and epoch of `want` (a
/// transaction of the truth file); fails unless there is exactly one.
fn the_transaction<'a>(txns: &'a [Value], want: &Value) -> &'a Value {
    let key = (&want["producer_id"], &want["producer_epoch"]);
    let got: Vec<&Value> = txns
        .iter()
        .map(|r| &r["transaction"])
        .filter(|t| (&t["producer_id"], &t["producer_epoch"]) == key)
        .collect();
    assert_eq!(got.len(), 1, "{key:?}");
    got[0]
}

fn transactions(args: &[&str], f: &PathBuf) -> (Vec<Value>, Vec<Value>) {
    let mut args = args.to_vec();
    args.push("--transactions");
    records(&args, f)
        .into_iter()
        .partition(|r| r["event_type"] == "transaction")
}

/// `--transactions` on rb2-01 gives its 120 transactions as the producer side recorded them
/// (transactional id, client id, producer id and epoch, timeout, outcome, every partition of
/// `partitions_in_txn` and the records written to each data partition, the offsets), and no
/// other: its three init-only producers began none.
#[test]
fn transaction_view_of_120_transactions_matches_the_producers_record() {
    let Some((f, truth)) = real_broker_2() else {
        return;
    };
    let (txns, others) = transactions(&[], &f);
    assert!(
        others.iter().all(|r| r["event_type"] == "anomaly"),
        "message records are left out without --api"
    );
    let truth = truth["transactions"].as_array().unwrap();
    assert_eq!(
        txns.len(),
        truth.len(),
        "one record per transaction, no other"
    );
    for want in truth {
        let t = the_transaction(&txns, want);
        assert_eq!(t["transactional_id"], want["transactional_id"]);
        assert_eq!(t["client_id"], want["client_id"]);
        assert_eq!(t["transaction_timeout_ms"], want["transaction_timeout_ms"]);
        assert_eq!(t["outcome"], want["result"], "{t}");
        assert_eq!(t["requested"], want["requested"]);
        assert_eq!(t["ended_by"], "client");
        assert_eq!(t["reason"], Value::Null);
        assert_eq!(t["begun_in_capture"], true);
        assert_eq!(t["end_error"], "NONE");
        assert_eq!(t["coordinator"]["port"], 9094);
        assert_eq!(t["coordinator"]["node_id"], want["coordinator"]);
        assert_eq!(
            topic_partitions(&t["partitions"]),
            topic_partitions(&want["partitions_in_txn"]),
            "{t}"
        );
        for d in want["data_partitions"].as_array().unwrap() {
            let p = t["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["topic"] == d["topic"] && p["partition"] == d["partition"])
                .unwrap();
            assert_eq!(p["records"], d["records"], "{p}");
            assert_eq!(p["leader"], d["leader"], "{p}");
            assert_eq!(p["joined"], "AddPartitionsToTxn");
            let (first, last) = (p["first_offset"].as_i64(), p["last_offset"].as_i64());
            assert_eq!(
                last.unwrap() - first.unwrap() + 1,
                d["records"].as_i64().unwrap(),
                "{p}"
            );
            // Partitions the coordinator leads are marked without a message, and say so.
            assert_eq!(p["marker"], Value::Null);
            assert_eq!(p["marker_written"], false);
            assert_eq!(p["marker_local"], true, "{p}");
        }
        // The offsets partition is marked on the wire, by node 2 to node 1.
        let remote: Vec<&Value> = t["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["marker"] != Value::Null)
            .collect();
        let want_marker = want.get("wire_marker_expected").cloned();
        match &want["offsets"] {
            Value::Null => assert!(remote.is_empty(), "{t}"),
            o => {
                assert_eq!(remote.len(), 1, "{t}");
                let m = remote[0];
                assert_eq!(m["topic"], "__consumer_offsets");
                assert_eq!(m["joined"], "offsets");
                assert_eq!(m["marker_written"], true);
                assert_eq!(m.get("marker_local"), None, "{m}");
                assert_eq!(m["marker_broker"]["node_id"], 1);
                if let Some(w) = want_marker {
                    assert_eq!(m["marker"], w);
                }
                let offsets = t["offsets"].as_array().unwrap();
                assert_eq!(offsets.len(), 1);
                assert_eq!(offsets[0]["group_id"], o["group"]);
                let got: Vec<(Value, Value, Value)> = offsets[0]["positions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| {
                        (
                            p["topic"].clone(),
                            p["partition"].clone(),
                            p["committed_offset"].clone(),
                        )
                    })
                    .collect();
                let want: Vec<(Value, Value, Value)> = o["committed_positions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| {
                        (
                            p["topic"].clone(),
                            p["partition"].clone(),
                            p["offset"].clone(),
                        )
                    })
                    .collect();
                assert_eq!(got, want);
            }
        }
        assert_eq!(t["errors"], serde_json::json!([]), "{t}");
    }
}

/// `--transactions` on r4: its 12 transactions (8 committed, 4 aborted, as its README says),
/// each ended by its client, each with its one marker written for `__consumer_offsets` 0;
/// `--format text` gives one line each.
#[test]
fn transaction_view_of_r4() {
    let Some(f) = capture() else { return };
    let (txns, _) = transactions(&[], &f);
    assert_eq!(txns.len(), 12);
    let outcome = |o: &str| {
        txns.iter()
            .filter(|r| r["transaction"]["outcome"] == o)
            .count()
    };
    assert_eq!((outcome("committed"), outcome("aborted")), (8, 4));
    for r in &txns {
        let t = &r["transaction"];
        assert_eq!(t["ended_by"], "client");
        let marked: Vec<&Value> = t["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["marker"] != Value::Null)
            .collect();
        assert_eq!(marked.len(), 1, "{t}");
        assert_eq!(marked[0]["topic"], "__consumer_offsets");
        assert_eq!(marked[0]["partition"], 0);
        assert_eq!(marked[0]["marker_written"], true);
        let want = if t["outcome"] == "committed" {
            "COMMIT"
        } else {
            "ABORT"
        };
        assert_eq!(marked[0]["marker"], want);
    }
    let out = run(&["--transactions", "--format", "text"], &f);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("  txn ")).collect();
    assert_eq!(lines.len(), 12, "{text}");
    assert!(
        lines[0].ends_with(
            "pid 1000 epoch 0 COMMITTED by client in 11.9 ms, 4 partitions, 1 marker written, 3 \
             local (led by the coordinator: no marker message)"
        ),
        "{}",
        lines[0]
    );
}

/// rb2-01 cut to 128 bytes a packet (as `tcpdump -s 128` would have taken it): by default
/// only the anomalies about its 108 WriteTxnMarkers requests are written (a gap and a
/// `frame_lost` each), not the 7,500 gaps inside the Produce and Fetch frames it skips;
/// `--anomalies all` writes those too.
#[test]
fn snaplen_128_shows_only_the_anomalies_that_matter() {
    let Some((f, _)) = real_broker_2() else {
        return;
    };
    let out = common::snaplen_cut(&std::fs::read(&f).unwrap(), 128);
    let cut = std::env::temp_dir().join(format!(
        "kafka-pcap-rb2-snap128-{}.pcap",
        std::process::id()
    ));
    std::fs::write(&cut, out).unwrap();
    let anomalies = |args: &[&str]| -> Vec<Value> {
        records(args, &cut)
            .into_iter()
            .filter(|r| r["event_type"] == "anomaly")
            .collect()
    };
    let relevant = anomalies(&[]);
    assert_eq!(relevant.len(), 216);
    assert!(
        relevant.iter().all(|r| r["anomaly"]["api_key"] == 27),
        "{relevant:?}"
    );
    let all = anomalies(&["--anomalies", "all"]);
    assert!(all.len() > 7_000, "{}", all.len());
    std::fs::remove_file(&cut).unwrap();
}

/// rb2-01 without the packets of four WriteTxnMarkers responses (from a README-only trial of
/// a lossy copy): each of those markers was sent and never answered on the capture's wire,
/// but the producer's next InitProducerId was accepted, which the coordinator answers only
/// once the markers before are written: the transaction says its marker was written
/// (`marker_written_later`), not `NOT WRITTEN`.
#[test]
fn a_marker_whose_response_was_lost_is_written_by_the_producers_next_transaction() {
    let Some((f, _)) = real_broker_2() else {
        return;
    };
    let responses: Vec<(u64, i64)> = records(&[], &f)
        .into_iter()
        .filter(|r| r["kafka"]["message"] == "response")
        .map(|r| {
            (
                r["frame"].as_u64().unwrap(),
                r["kafka"]["body"]["markers"][0]["producer_id"]
                    .as_i64()
                    .unwrap(),
            )
        })
        .collect();
    assert_eq!(responses.len(), 108);
    let lost: Vec<(u64, i64)> = [10, 30, 50, 70].iter().map(|&i| responses[i]).collect();
    let frames: Vec<u64> = lost.iter().map(|l| l.0).collect();
    let cut = std::env::temp_dir().join(format!(
        "kafka-pcap-rb2-lost-responses-{}.pcap",
        std::process::id()
    ));
    std::fs::write(
        &cut,
        common::drop_frames(&std::fs::read(&f).unwrap(), &frames),
    )
    .unwrap();
    let out = records(&["--transactions"], &cut);
    let later: Vec<&Value> = out
        .iter()
        .filter(|r| r["event_type"] == "transaction")
        .filter(|r| {
            r["transaction"]["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["marker_written_later"] == true)
        })
        .collect();
    assert_eq!(later.len(), 4, "{later:#?}");
    for (r, (_, pid)) in later.iter().zip(&lost) {
        assert_eq!(r["transaction"]["producer_id"], *pid, "{r}");
    }
    assert!(
        !out.iter().any(|r| r["anomaly"]["kind"] == "marker_failed"
            || r["anomaly"]["kind"] == "hanging_transaction"),
        "a lost response made a verdict"
    );
    std::fs::remove_file(&cut).unwrap();
}

/// rb2-01 without three packets of one Produce connection (from a README-only trial): a
/// TxnOffsetCommit of producer 1000 epoch 49 was held back by the loss till after its
/// transaction ended and was given out; it was taken as the start of a new transaction at
/// that epoch, which the producer's next InitProducerId then "fenced" (a transaction the
/// producer never had, and `fenced_producer`). A message sent before the end of a
/// transaction of its epoch is that transaction's.
#[test]
fn a_message_held_back_past_its_transactions_end_begins_no_other() {
    let Some((f, truth)) = real_broker_2() else {
        return;
    };
    let cut = std::env::temp_dir().join(format!(
        "kafka-pcap-rb2-late-message-{}.pcap",
        std::process::id()
    ));
    std::fs::write(
        &cut,
        common::drop_frames(&std::fs::read(&f).unwrap(), &[13260, 13281, 13286]),
    )
    .unwrap();
    let (txns, others) = transactions(&[], &cut);
    std::fs::remove_file(&cut).unwrap();
    assert_eq!(txns.len(), 120, "one record per transaction");
    assert!(
        !others
            .iter()
            .any(|r| r["anomaly"]["kind"] == "fenced_producer"),
        "no transaction was fenced"
    );
    for want in truth["transactions"].as_array().unwrap() {
        let t = the_transaction(&txns, want);
        assert_eq!(t["outcome"], want["result"], "{t}");
    }
}

/// rb2-01 (a cluster that speaks WriteTxnMarkers v2 only) without the packet of one
/// WriteTxnMarkers request, alone on its connection: its response is inferred, as v2 (the
/// version the run's other requests had; v1 and v2 responses share a layout), not v1 (from a
/// README-only trial: `--stats` said "responses by version v1:8 v2:97").
#[test]
fn an_inferred_response_takes_the_version_the_run_speaks() {
    let Some((f, _)) = real_broker_2() else {
        return;
    };
    let requests: Vec<u64> = records(&[], &f)
        .into_iter()
        .filter(|r| r["kafka"]["message"] == "request")
        .map(|r| r["frame"].as_u64().unwrap())
        .collect();
    assert_eq!(requests.len(), 108);
    let cut = std::env::temp_dir().join(format!(
        "kafka-pcap-rb2-lost-request-{}.pcap",
        std::process::id()
    ));
    std::fs::write(
        &cut,
        common::drop_frames(&std::fs::read(&f).unwrap(), &[requests[40]]),
    )
    .unwrap();
    let out = records(&[], &cut);
    std::fs::remove_file(&cut).unwrap();
    let inferred: Vec<&Value> = out
        .iter()
        .filter(|r| r["kafka"]["inferred"] == true)
        .collect();
    assert_eq!(inferred.len(), 1, "{inferred:#?}");
    assert_eq!(inferred[0]["kafka"]["api_version"], 2, "{}", inferred[0]);
}

/// rb2-01 without the AddPartitionsToTxn and EndTxn requests of mt-g pid 1001 epoch 59 (from
/// a README-only trial): the transaction began from its Produce batches, so its own messages
/// named no coordinator connection; the loss there, on the connection of the producer's
/// InitProducerId, says its end may have been lost: `unknown` with `end_not_captured`, not
/// fenced by the next InitProducerId (which the view said before). And without both the
/// EndTxn request and response of epoch 79, not open at the capture's end.
#[test]
fn a_transaction_whose_end_was_lost_is_unknown_not_fenced_nor_open() {
    let Some((f, _)) = real_broker_2() else {
        return;
    };
    let data = std::fs::read(&f).unwrap();
    for (frames, pid, epoch) in [
        (vec![15092, 15146], 1001, 59),
        (vec![20476, 20483], 1001, 79),
    ] {
        let cut = std::env::temp_dir().join(format!(
            "kafka-pcap-rb2-end-lost-{epoch}-{}.pcap",
            std::process::id()
        ));
        std::fs::write(&cut, common::drop_frames(&data, &frames)).unwrap();
        let (txns, others) = transactions(&[], &cut);
        std::fs::remove_file(&cut).unwrap();
        let t = the_transaction(
            &txns,
            &serde_json::json!({"producer_id": pid, "producer_epoch": epoch}),
        );
        assert_eq!(t["outcome"], "unknown", "{t}");
        assert_eq!(t["end_not_captured"], true, "{t}");
        assert!(
            !others
                .iter()
                .any(|r| r["anomaly"]["kind"] == "fenced_producer"
                    && r["anomaly"]["transaction"]["producer_epoch"] == epoch),
            "no fenced verdict for epoch {epoch}"
        );
    }
}

/// In `--pair --format text`, a response cut short whose body holds nothing is still set
/// after `=>` with its note (a README-only trial found the note run into the request's body);
/// the admin client's Metadata request read with 3 bytes left over says so on its line.
#[test]
fn text_exchanges_of_a_cut_response_and_a_request_with_bytes_left_over() {
    let Some(f) = capture() else { return };
    let out = run(&["--all-apis", "--pair", "--format", "text"], &f);
    let text = String::from_utf8(out.stdout).unwrap();
    let cut = text
        .lines()
        .find(|l| l.starts_with("8107 ") && l.contains("Fetch v18 exchange corr=24"))
        .expect("the exchange of stream 20's last Fetch");
    assert!(
        cut.ends_with(
            "READ_UNCOMMITTED e2Xyovj3TziTLYu0ZHvEsg[7@0]  => (truncated: 5 of 72 bytes \
             captured, stopped in throttle_time_ms)"
        ),
        "{cut}"
    );
    let admin = text
        .lines()
        .find(|l| l.contains("Metadata v13 exchange corr=3 "))
        .expect("the admin client's second Metadata exchange");
    assert!(
        admin.contains("(request 57, ")
            && admin.contains(")  (3 bytes after the schema's last field)  topics=all"),
        "{admin}"
    );
}

/// `--format tree` of a walked frame cut short (a Fetch v18 response of 5 captured bytes out
/// of 72, walked as it streamed by, none kept) says it has no tree, instead of a tree that
/// calls all 72 bytes cut off (a README-only trial).
#[test]
fn tree_of_a_walked_frame_cut_short_says_its_bytes_were_not_kept() {
    let Some(f) = capture() else { return };
    let out = run(
        &["--all-apis", "--format", "tree", "-x", "--stream", "20"],
        &f,
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let at = text
        .find("Fetch v18 response corr=24 (request 7572) (truncated: 5 of 72 bytes captured")
        .expect("the cut response's line");
    let next: Vec<&str> = text[at..].lines().take(3).collect();
    assert_eq!(
        next[1..],
        [
            "(no tree: walked as its bytes streamed by, none kept; the record has the fields \
             read from the 5 bytes captured)",
            ""
        ],
        "{next:#?}"
    );
}

/// rb2-01's text lines say its coordinator-led partitions need no marker message (a README-only
/// trial read "no markers seen" on the twelve transactions with no offsets as a hang).
#[test]
fn text_lines_of_rb2_say_which_markers_need_no_message() {
    let Some((f, _)) = real_broker_2() else {
        return;
    };
    let out = run(&["--transactions", "--format", "text"], &f);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("  txn ")).collect();
    assert_eq!(lines.len(), 120);
    let local = "3 local (led by the coordinator: no marker message)";
    assert!(lines.iter().all(|l| l.ends_with(local)), "{text}");
    assert_eq!(
        lines
            .iter()
            .filter(
                |l| l.contains("(as EndTxn accepted) in ") && l.contains("3 partitions, 3 local")
            )
            .count(),
        12
    );
    assert!(
        !text.contains("no markers seen") && !text.contains("no marker seen"),
        "{text}"
    );
}

/// rb2-01 under `--memory-limit 64K` (from a hostile review): the budget passes over some
/// transactions' EndTxn and marker requests (once mt-k epoch 55's, followed by its next
/// InitProducerId: the view said "fenced", a verdict the capture does not hold; which ones
/// move with the view's own size). A frame passed over for the budget is a loss: no
/// `fenced_producer`, such a transaction `unknown` with `end_not_captured`, and no outcome
/// against the truth file. The transactions written early for the budget say so
/// (`given_up`), and an open one is not "open till the capture's end". With room enough
/// (144K; 128K before each of its 1,045 ended connections' records held its directions' next
/// sequence numbers, to tell bytes that come after the end), all 120 as the truth file has
/// them.
#[test]
fn frames_passed_over_for_the_memory_budget_are_losses_to_the_view() {
    let Some((f, truth)) = real_broker_2() else {
        return;
    };
    let (txns, others) = transactions(&["--memory-limit", "64K"], &f);
    assert!(
        !others
            .iter()
            .any(|r| r["anomaly"]["kind"] == "fenced_producer"),
        "no fenced verdict"
    );
    let lost: Vec<&Value> = txns
        .iter()
        .map(|r| &r["transaction"])
        .filter(|t| t["end_not_captured"] == true)
        .collect();
    assert!(lost.len() >= 10, "{}", lost.len());
    assert!(lost.iter().all(|t| t["outcome"] == "unknown"), "{lost:?}");
    let outcome: std::collections::HashMap<(i64, i64), &str> = truth["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                (
                    t["producer_id"].as_i64().unwrap(),
                    t["producer_epoch"].as_i64().unwrap(),
                ),
                t["result"].as_str().unwrap(),
            )
        })
        .collect();
    let mut decided = 0;
    for t in txns.iter().map(|r| &r["transaction"]) {
        let got = t["outcome"].as_str().unwrap();
        if got == "committed" || got == "aborted" {
            let key = (
                t["producer_id"].as_i64().unwrap(),
                t["producer_epoch"].as_i64().unwrap(),
            );
            assert_eq!(outcome.get(&key), Some(&got), "{t}");
            decided += 1;
        }
    }
    assert!(decided >= 60, "{decided}");
    let early: Vec<&Value> = txns
        .iter()
        .filter(|r| r["transaction"]["given_up"] == true)
        .collect();
    assert!(!early.is_empty());
    // Every open one was written early (none was open at the capture's end).
    for r in &txns {
        if r["transaction"]["outcome"] == "open" {
            assert_eq!(r["transaction"]["given_up"], true, "{r}");
        }
    }
    let text = run(
        &[
            "--transactions",
            "--memory-limit",
            "64K",
            "--format",
            "text",
        ],
        &f,
    );
    let text = String::from_utf8(text.stdout).unwrap();
    // Which were open when written early depends on which frames the budget passed over,
    // which moves with the size of what every connection holds: each says so in its line.
    let open_early = txns
        .iter()
        .filter(|r| r["transaction"]["outcome"] == "open" && r["transaction"]["given_up"] == true)
        .count();
    assert_eq!(
        text.lines()
            .filter(|l| l.contains(" OPEN for ") && l.contains(" when written early (memory budget"))
            .count(),
        open_early,
        "{text}"
    );
    assert!(!text.contains("till the capture's end"));
    let (txns, _) = transactions(&["--memory-limit", "144K"], &f);
    assert_eq!(txns.len(), 120);
    assert!(txns
        .iter()
        .all(|r| r["transaction"].get("given_up").is_none()));
}

/// rb2-01's clients reset 75 connections inside a Fetch response: each was paired with its
/// request by its header, so `--stats` counts it as a paired response in every mode (from a
/// README-only trial: 2,118 / 2,043 in the default mode, which skips Fetch bodies, and
/// 2,118 / 2,118 with `--transactions`, which walks them).
#[test]
fn a_skipped_frame_cut_by_a_reset_is_counted_as_a_walked_one_is() {
    let Some((f, _)) = real_broker_2() else {
        return;
    };
    for args in [
        &["--stats=json"][..],
        &["--stats=json", "--transactions"][..],
    ] {
        let recs = records(args, &f);
        let apis = &recs.last().unwrap()["stats"]["apis"];
        let fetch = apis
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["api_key"] == 1)
            .unwrap();
        assert_eq!(fetch["requests"], 2118, "{args:?} {fetch}");
        assert_eq!(fetch["responses"], 2118, "{args:?} {fetch}");
        // Their latencies are not known (their ends were not captured).
        assert_eq!(fetch["latency_us"]["count"], 2043, "{args:?} {fetch}");
    }
}
