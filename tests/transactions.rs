//! The transaction view (`--transactions`) on the synthetic scenario captures
//! `captures/txn-*.pcap` (written by `examples/make_txn_captures.rs`, frames encoded by the
//! `kafka-protocol` crate and WriteTxnMarkers v2 by hand):
//! 1. each capture's transactions and verdicts equal `<name>.transactions.json`, which the
//!    generator wrote from the scenario's own values (transactional id, producer id and epoch,
//!    outcome, requested, ended_by, reason, and per partition its records, marker and last
//!    marker error; the verdict anomalies by producer id);
//! 2. the whole `--transactions` output equals the golden `<name>.transactions.ndjson`
//!    (regenerate on purpose with `KAFKA_PCAP_BLESS=1 cargo test --test transactions`);
//! 3. the text and tree views, the filters and `--stats` on chosen scenarios.

mod common;

use assert_cmd::Command;
use kafka_pcap::kafka::apis::Body;
use kafka_pcap::kafka::event::Event;
use kafka_pcap::output::VecSink;
use kafka_pcap::txn::{TransactionRecord, APIS};
use kafka_pcap::vocab::Layer;
use kafka_pcap::{run_slice, Config};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn scenarios() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("txn-") && n.ends_with(".pcap")
        })
        .collect();
    v.sort();
    assert!(
        v.len() >= 10,
        "captures/ holds too few txn-* captures: {v:?}"
    );
    v
}

fn config() -> Config {
    Config {
        apis: APIS.to_vec(),
        hold_requests: true,
        transactions: true,
        ..Config::default()
    }
}

/// The library's records of `path` under `--transactions`: every record, and the
/// transactions.
fn view(path: &Path) -> VecSink {
    let data = std::fs::read(path).unwrap();
    let mut sink = VecSink::default();
    run_slice(&data, &config(), &mut sink).unwrap();
    sink
}

fn cli(args: &[&str], path: &Path) -> String {
    String::from_utf8(run_ok(args, path).stdout).unwrap()
}

/// `kafka-pcap ARGS path`, which must exit 0.
fn run_ok(args: &[&str], path: &Path) -> std::process::Output {
    let out = Command::cargo_bin("kafka-pcap")
        .unwrap()
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    out
}

/// The kinds of the records `--transactions ARGS` writes for `path`: an anomaly's kind, else
/// `transaction`, or `transaction (markers_not_captured)` for one whose hanging was not judged
/// for want of marker traffic in the capture (a client's host).
fn record_kinds(args: &[&str], path: &Path) -> Vec<String> {
    let mut a = vec!["--transactions"];
    a.extend_from_slice(args);
    cli(&a, path)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            if v["transaction"]["markers_not_captured"] == true {
                return "transaction (markers_not_captured)".to_string();
            }
            v["anomaly"]["kind"]
                .as_str()
                .unwrap_or("transaction")
                .to_string()
        })
        .collect()
}

/// What `kafka-pcap ARGS path` writes to standard error (it must exit 0).
fn stderr_of(args: &[&str], path: &Path) -> String {
    String::from_utf8(run_ok(args, path).stderr).unwrap()
}

/// The hostile review capture `name` (tests/data/txn-hostile).
fn hostile(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/txn-hostile")
        .join(name)
}

/// The records `kafka-pcap --transactions ARGS` writes for `path`, parsed.
fn records_of(args: &[&str], path: &Path) -> Vec<Value> {
    let mut a = vec!["--transactions"];
    a.extend_from_slice(args);
    cli(&a, path)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A transaction record's partitions.
fn partitions(t: &Value) -> &[Value] {
    t["partitions"].as_array().map_or(&[], Vec::as_slice)
}

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(format!("{name}.pcap"))
}

/// The fields `<name>.transactions.json` states, taken from one transaction record.
fn stated(r: &TransactionRecord) -> Value {
    let t = serde_json::to_value(&r.transaction).unwrap();
    let mut parts: Vec<Value> = t["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            json!({"topic": p["topic"], "partition": p["partition"], "records": p["records"],
                "marker": p["marker"], "marker_error": p["marker_error"]})
        })
        .collect();
    parts.sort_by_key(|p| (p["topic"].to_string(), p["partition"].as_i64()));
    json!({
        "transactional_id": t["transactional_id"], "producer_id": t["producer_id"],
        "producer_epoch": t["producer_epoch"], "outcome": t["outcome"],
        "requested": t["requested"], "ended_by": t["ended_by"], "reason": t["reason"],
        "partitions": parts,
    })
}

#[test]
fn scenarios_give_the_transactions_the_generator_wrote() {
    for cap in scenarios() {
        let truth: Value = serde_json::from_str(
            &std::fs::read_to_string(cap.with_extension("transactions.json")).unwrap(),
        )
        .unwrap();
        let got = view(&cap);
        let name = cap.display();
        let txns: Vec<Value> = got.1.iter().map(stated).collect();
        let want: Vec<Value> = truth["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let mut t = t.clone();
                let mut parts = t["partitions"].as_array().unwrap().clone();
                parts.sort_by_key(|p| (p["topic"].to_string(), p["partition"].as_i64()));
                t["partitions"] = Value::Array(parts);
                t
            })
            .collect();
        assert_eq!(txns, want, "{name}");
        let mut verdicts: Vec<(String, i64)> = Vec::new();
        for r in &got.0 {
            if let kafka_pcap::kafka::event::Event::Anomaly(a) = &r.event {
                assert_eq!(a.layer, Layer::Transaction, "{name}: {a:?}");
                let pid = a.transaction.as_ref().map_or(-1, |t| t.producer_id);
                verdicts.push((a.kind.as_str().to_string(), pid));
            }
        }
        verdicts.sort();
        let mut want: Vec<(String, i64)> = truth["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                (
                    v["kind"].as_str().unwrap().to_string(),
                    v["producer_id"].as_i64().unwrap(),
                )
            })
            .collect();
        want.sort();
        assert_eq!(verdicts, want, "{name}");
    }
}

#[test]
fn golden_transaction_outputs() {
    for cap in scenarios() {
        let got = cli(&["--transactions"], &cap);
        common::check_golden(&cap.with_extension("transactions.ndjson"), &got);
    }
}

/// Transaction version 1: one epoch, two transactions in turn; the first with offsets and a
/// marker for the offsets partition; times, frames, data offsets and markers as encoded.
#[test]
fn transaction_version_1_flow_in_detail() {
    let got = view(&scenario("txn-v1-flow"));
    assert_eq!(got.1.len(), 2);
    let t = serde_json::to_value(&got.1[0].transaction).unwrap();
    assert_eq!(t["transaction_version"], 1);
    assert_eq!(
        t["coordinator"],
        json!({"ip": "127.0.0.1", "port": 9092, "node_id": 0})
    );
    assert_eq!(t["transaction_timeout_ms"], 60000);
    assert_eq!(t["begun_in_capture"], true);
    assert_eq!(t["begin"]["frame"], 10, "its AddPartitionsToTxn");
    assert_eq!(t["end_requested"]["frame"], 23);
    assert_eq!(t["end_response"]["frame"], 24);
    assert_eq!(t["markers_sent"]["frame"], 28);
    assert_eq!(t["markers_answered"]["frame"], 29);
    assert_eq!(
        got.1[0].loc.frame, 29,
        "written at its last marker response"
    );
    let p = &t["partitions"][0];
    assert_eq!(
        (
            &p["topic"],
            &p["partition"],
            &p["joined"],
            &p["leader"],
            &p["batches"],
            &p["first_offset"],
            &p["last_offset"]
        ),
        (
            &json!("orders"),
            &json!(0),
            &json!("AddPartitionsToTxn"),
            &json!(1),
            &json!(1),
            &json!(100),
            &json!(103)
        )
    );
    assert_eq!(p["coordinator_epoch"], 7);
    assert_eq!(p["marker_broker"]["node_id"], 1);
    let offsets = &t["offsets"][0];
    assert_eq!(offsets["group_id"], "grp-v1");
    assert_eq!(offsets["add_offsets_frame"], 17);
    assert_eq!(offsets["commit_frame"], 21);
    assert_eq!(offsets["positions"][0]["committed_offset"], 42);
    let joined: Vec<&Value> = t["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["joined"])
        .collect();
    assert_eq!(
        joined,
        ["AddPartitionsToTxn", "AddPartitionsToTxn", "offsets"]
    );
    let second = serde_json::to_value(&got.1[1].transaction).unwrap();
    assert_eq!(second["begin"]["frame"], 30);
    assert_eq!(second["begun_in_capture"], true, "after the first's end");
    // The offsets partition joined with the AddOffsetsToTxn, not with its marker.
    assert_eq!(t["partitions"][2]["joined_frame"], 17);
    assert_eq!(t["outcome_from"], "markers");
}

/// Transaction version 2: no AddPartitionsToTxn from the client (the leader's v5 adds the
/// partition), EndTxn v5 returns the bumped epoch that the markers carry.
#[test]
fn transaction_version_2_flow_in_detail() {
    let got = view(&scenario("txn-v2-flow"));
    assert_eq!(got.1.len(), 1);
    let t = serde_json::to_value(&got.1[0].transaction).unwrap();
    assert_eq!(t["producer_epoch"], 10);
    assert_eq!(t["marker_producer_epoch"], 11);
    assert_eq!(t["transaction_version"], 2);
    assert_eq!(t["partitions"][0]["joined"], "implicit");
    assert_eq!(t["partitions"][0]["marker_written"], true);
}

#[test]
fn text_lines_say_what_happened() {
    let line = |name: &str| -> String {
        cli(&["--transactions", "--format", "text"], &scenario(name))
            .lines()
            .filter(|l| l.contains("  txn "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        line("txn-timeout"),
        "29  00:00:04.013084  txn app-slow pid 7000 epoch 0 (markers at epoch 1) ABORTED by coordinator \
         (timeout), though the client asked to commit, in 4.00 s, 1 partition, 1 marker written, \
         errors: EndTxn INVALID_PRODUCER_EPOCH"
    );
    assert_eq!(
        line("txn-fenced"),
        "39  00:00:02.102362  txn app-zombie pid 8000 epoch 4 (markers at epoch 5) ABORTED by coordinator \
         (fenced) in 2.00 s, 1 partition, 1 marker written"
    );
    // An epoch bump told only by an EndTxn v5 response, no marker seen: not called the
    // markers' epoch (from a README-only trial).
    let text = cli(
        &["--transactions", "--format", "text"],
        &scenario("api-end-txn"),
    );
    assert!(
        text.contains("txn orders-tx pid 4002 epoch 12 (bumped to epoch 13 at its end) COMMITTED"),
        "{text}"
    );
    assert!(line("txn-marker-retry")
        .contains("COMMITTED by client in 130.4 ms, 1 partition, 1 marker written (after NOT_LEADER_OR_FOLLOWER)"));
    assert!(line("txn-admin-abort").contains(
        "ABORTED by an admin client (markers sent by adminclient-1), though the client asked \
         to commit, in 15.03 s"
    ));
    // Markers alone (a capture of inter-broker traffic): said so, and not begun in it.
    assert!(line("txn-inter-broker").starts_with(
        "5  00:00:00.001250  txn - pid 9500 epoch 2 COMMITTED (markers only: none of its \
         client's messages captured) in 250 us"
    ));
    let got = view(&scenario("txn-inter-broker"));
    assert!(got.1.iter().all(|r| !r.transaction.begun_in_capture));
    // A partial commit says so.
    let partial = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/txn-hostile/partial_commit_admin_abort.pcap");
    let text = cli(&["--transactions", "--format", "text"], &partial);
    assert!(
        text.contains(
            "25  00:01:00.000100  txn tx pid 4000 epoch 0 COMMITTED by client IN PART: 1 \
             partition ABORTED by an admin client in 60.00 s, 2 partitions"
        ),
        "{text}"
    );
    let tree = cli(&["--transactions", "--format", "tree"], &partial);
    assert!(
        tree.contains(
            "    orders 1: joined by AddPartitionsToTxn (frame 6), 2 records in 1 batch, offsets \
             200-201, ABORT marker written (frame 24 -> 25, 100 us, coordinator_epoch 5), after a \
             COMMIT marker unanswered (frame 20)\n"
        ),
        "{tree}"
    );
}

/// Fencing: the InitProducerId that fenced is the first one after the transaction began
/// (frame 28, answered CONCURRENT_TRANSACTIONS while the coordinator aborts), not its retry;
/// that answer is the new instance's, not an error of the fenced transaction (it was listed
/// in its errors, on the page too);
/// the hanging transaction's outcome is from its EndTxn only, and it is written at the end
/// of the capture, with its verdict.
#[test]
fn fencing_frame_and_outcome_sources() {
    let got = view(&scenario("txn-fenced"));
    let t = &got.1[0].transaction;
    assert_eq!(t.fenced_by_frame, Some(28));
    assert!(t.errors.is_empty(), "{:?}", t.errors);
    // The tree names it (the fencing message is not one of the transaction's own).
    let tree = cli(
        &["--transactions", "--format", "tree"],
        &scenario("txn-fenced"),
    );
    assert!(
        tree.contains(
            "    coordinator 127.0.0.1:9092 (node 0), transaction_timeout_ms 60000\n    fenced \
             by the InitProducerId for its transactional id in frame 28 (a new instance of its \
             producer)\n    orders 4"
        ),
        "{tree}"
    );
    let got = view(&scenario("txn-hanging"));
    let r = &got.1[1];
    assert_eq!(r.transaction.transactional_id.as_deref(), Some("app-hang"));
    assert_eq!(
        serde_json::to_value(r.transaction.outcome_from).unwrap(),
        "end_txn"
    );
    assert_eq!(r.loc.frame, 64, "the capture's last packet");
}

#[test]
fn tree_shows_partitions_and_the_timeline() {
    let out = cli(
        &["--transactions", "--format", "tree"],
        &scenario("txn-marker-retry"),
    );
    let want = "    orders 6 (leader 2): joined by AddPartitionsToTxn (frame 10), 2 records in 1 \
                batch, offsets 800-801, COMMIT marker written after NOT_LEADER_OR_FOLLOWER \
                (frame 25 -> 39, 108.4 ms, coordinator_epoch 7, 2 attempts to node 1 then node 2)";
    assert!(out.contains(want), "{out}");
    assert!(
        out.contains("      +20.0 ms     frame 20       EndTxn request\n"),
        "{out}"
    );
    assert!(
        out.contains("      +130.4 ms    frame 39       WriteTxnMarkers response\n"),
        "{out}"
    );
}

#[test]
fn filters_select_transactions_and_their_verdicts() {
    let lines = |args: &[&str], name: &str| -> Vec<Value> {
        let mut a = vec!["--transactions"];
        a.extend_from_slice(args);
        cli(&a, &scenario(name))
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let out = lines(&["--outcome", "aborted"], "txn-v1-flow");
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["transaction"]["begin"]["frame"], 30);
    // A verdict goes with its transaction under --outcome too: the hanging transaction's
    // (committed by its client) with --outcome committed, not with --outcome aborted.
    let kinds = |out: &[Value]| -> Vec<String> {
        out.iter()
            .map(|r| {
                r["anomaly"]["kind"]
                    .as_str()
                    .unwrap_or_else(|| r["event_type"].as_str().unwrap())
                    .to_string()
            })
            .collect()
    };
    assert_eq!(
        kinds(&lines(&["--outcome", "committed"], "txn-hanging")),
        ["transaction", "transaction", "hanging_transaction"]
    );
    assert!(lines(&["--outcome", "aborted"], "txn-hanging").is_empty());
    // A verdict written before its transaction's record waits for it under a filter only the
    // record answers: txn-stale-epoch's two verdicts (a committed transaction's) are left out
    // under --outcome aborted and hanging, and follow their record under --outcome committed;
    // txn-lso-stuck's lso_stuck (an open transaction's) is left out under --outcome committed.
    assert!(lines(&["--outcome", "aborted"], "txn-stale-epoch").is_empty());
    assert!(lines(&["--outcome", "hanging"], "txn-stale-epoch").is_empty());
    assert_eq!(
        kinds(&lines(&["--outcome", "committed"], "txn-stale-epoch")),
        [
            "transaction",
            "transaction",
            "stale_coordinator_epoch",
            "marker_failed"
        ]
    );
    assert!(lines(&["--outcome", "committed"], "txn-lso-stuck").is_empty());
    assert!(lines(&["--topic", "nope"], "txn-stale-epoch").is_empty());
    // A `refused_request` (a fenced zombie's AddPartitionsToTxn and EndTxn, after its fenced
    // transaction's record and another transaction's) goes with the transaction it was meant
    // for: kept with it (--outcome aborted, --errors), left out with it (--outcome committed,
    // --producer-id of another), but under --errors, an error of its own. Where the capture does not hold that
    // transaction (the same capture from frame 15 on) it is an error by itself, judged at its
    // own time and connection.
    let two_pids =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile/two_pids.pcap");
    let dir = tempfile::tempdir().unwrap();
    let late_path = dir.path().join("late.pcap");
    let frames: Vec<u64> = (1..15).collect();
    let bytes = common::drop_frames(&std::fs::read(&two_pids).unwrap(), &frames);
    std::fs::write(&late_path, bytes).unwrap();
    let hostile_in = |args: &[&str], path: &Path| -> Vec<String> {
        let mut a = vec!["--transactions"];
        a.extend_from_slice(args);
        cli(&a, path)
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                v["anomaly"]["kind"].as_str().map_or_else(
                    || format!("txn {}", v["transaction"]["producer_id"]),
                    str::to_string,
                )
            })
            .collect()
    };
    let hostile = |args: &[&str]| hostile_in(args, &two_pids);
    let zombie = [
        "txn 4000",
        "fenced_producer",
        "refused_request",
        "refused_request",
    ];
    assert_eq!(hostile(&["--outcome", "aborted"]), zombie);
    assert_eq!(hostile(&["--errors"]), zombie);
    assert_eq!(hostile(&["--outcome", "committed"]), ["txn 5000"]);
    // (An error of its own: --errors keeps it when its transaction is left out by time.)
    assert_eq!(
        hostile(&["--errors", "--since", "+4.4ms"]),
        ["refused_request", "refused_request"]
    );
    assert!(hostile(&["--outcome", "aborted", "--since", "+4.4ms"]).is_empty());
    assert!(hostile(&["--errors", "--producer-id", "5000"]).is_empty());
    let late = |args: &[&str]| hostile_in(args, &late_path);
    let both = ["refused_request", "refused_request"];
    assert_eq!(late(&["--errors"]), both);
    assert_eq!(late(&["--errors", "--until", "+1ms"]), ["refused_request"]);
    assert_eq!(late(&["--errors", "--host", "127.0.0.1"]), both);
    assert!(late(&["--errors", "--host", "10.9.9.9"]).is_empty());
    assert_eq!(late(&["--outcome", "committed"]), ["txn 5000"]);
    assert_eq!(
        kinds(&lines(&["--outcome", "open"], "txn-lso-stuck")),
        ["transaction", "lso_stuck", "hanging_transaction"]
    );
    // --outcome hanging: the committed transaction whose partition got no marker and the open
    // one past its timeout, each with its verdict; none of a capture where nothing hangs.
    let out = lines(&["--outcome", "hanging"], "txn-hanging");
    assert_eq!(kinds(&out), ["transaction", "hanging_transaction"]);
    assert_eq!(out[0]["transaction"]["outcome"], "committed");
    assert_eq!(out[0]["transaction"]["hanging"], true);
    let out = lines(&["--outcome", "hanging"], "txn-lso-stuck");
    let hanging: Vec<&Value> = out
        .iter()
        .filter(|r| r["transaction"].is_object())
        .collect();
    assert_eq!(hanging.len(), 1, "{out:?}");
    assert_eq!(hanging[0]["transaction"]["outcome"], "open");
    assert_eq!(hanging[0]["transaction"]["timed_out"], true);
    assert!(lines(&["--outcome", "hanging"], "txn-v1-flow").is_empty());
    // Not hanging: the field is absent.
    assert!(lines(&[], "txn-v1-flow")
        .iter()
        .all(|r| r["transaction"].get("hanging").is_none()));
    // A transactional id's verdicts go with it; another's are left out.
    let out = lines(&["--transactional-id", "app-v1"], "txn-stale-epoch");
    assert!(out.is_empty(), "{out:?}");
    let out = lines(&["--transactional-id", "app-s1"], "txn-stale-epoch");
    let kinds: Vec<&str> = out
        .iter()
        .map(|r| {
            r["anomaly"]["kind"]
                .as_str()
                .unwrap_or_else(|| r["event_type"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "transaction",
            "stale_coordinator_epoch",
            "marker_failed",
            "transaction"
        ]
    );
    let out = lines(&["--producer-id", "9201"], "txn-stale-epoch");
    assert!(out.is_empty(), "{out:?}");
    let out = lines(&["--errors"], "txn-v1-flow");
    assert!(out.is_empty(), "no errors there: {out:?}");
    // A fenced producer's transaction is kept, with its verdict, though none of its own
    // messages got an error; one aborted on its timeout only with its refused EndTxn.
    let out = lines(&["--errors"], "txn-fenced");
    let kinds: Vec<&str> = out
        .iter()
        .map(|r| r["anomaly"]["kind"].as_str().unwrap_or("transaction"))
        .collect();
    assert_eq!(kinds, ["transaction", "fenced_producer"], "{out:?}");
    assert_eq!(out[0]["transaction"]["reason"], "fenced");
    assert_eq!(out[0]["transaction"]["errors"], json!([]));
    let out = lines(&["--result", "commit"], "txn-inter-broker");
    assert_eq!(out.len(), 3);
    // Repeatable: any of them.
    let out = lines(
        &["--producer-id", "9500", "--producer-id", "9503"],
        "txn-inter-broker",
    );
    let pids: Vec<&Value> = out
        .iter()
        .map(|r| &r["transaction"]["producer_id"])
        .collect();
    assert_eq!(pids, [9500, 9503]);
    let out = lines(
        &["--outcome", "aborted", "--outcome", "committed"],
        "txn-inter-broker",
    );
    assert_eq!(out.len(), 4);
    let out = lines(&["--topic", "__consumer_offsets"], "txn-v1-flow");
    assert_eq!(out.len(), 1);
}

#[test]
fn stats_count_transactions() {
    let out = cli(
        &["--transactions", "--stats=json"],
        &scenario("txn-inter-broker"),
    );
    let stats: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let t = &stats["stats"]["transactions"];
    assert_eq!(t["count"], 4);
    assert_eq!(
        t["by_outcome"],
        json!([{"outcome": "aborted", "count": 1}, {"outcome": "committed", "count": 3}])
    );
    assert_eq!(
        t["by_transactional_id"],
        json!([{"transactional_id": "-", "count": 4}])
    );
    assert_eq!(t["duration_us"]["max"], 639);
    // The max names its transaction (from a README-only trial: which one was it?).
    assert_eq!(
        t["longest"],
        json!({"duration_us": 639, "transactional_id": null, "producer_id": 9503,
               "producer_epoch": 1, "begin_frame": 6, "frame": 7, "outcome": "committed"})
    );
    let out = cli(
        &["--transactions", "--stats=json"],
        &scenario("txn-hanging"),
    );
    let stats: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(stats["stats"]["transactions"]["hanging"], 1);
    assert_eq!(stats["stats"]["transactions"]["hanging_partitions"], 1);
    assert_eq!(stats["stats"]["transactions"]["unjudged_partitions"], 0);
    assert_eq!(stats["stats"]["transactions"]["read_committed_fetches"], 0);
    // The read_committed consumers whose last stable offset is judged (from a README-only
    // trial: with none, no lso_stuck read as no consumer stuck).
    let out = cli(
        &["--transactions", "--stats=json"],
        &scenario("txn-lso-stuck"),
    );
    let stats: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(stats["stats"]["transactions"]["read_committed_fetches"], 12);
    // A commit whose marker for orders 1 never came, in a capture with no Metadata exchange
    // (from a README-only trial: once "hanging 0 (0 partitions with no marker)" alone).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    let path = dir.join("no_marker_no_metadata.pcap");
    let out = cli(&["--transactions", "--stats=json", "--port", "9093"], &path);
    let stats: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(stats["stats"]["transactions"]["hanging"], 0);
    assert_eq!(stats["stats"]["transactions"]["unjudged_partitions"], 1);
    let run = Command::cargo_bin("kafka-pcap")
        .unwrap()
        .args(["--transactions", "--stats", "--port", "9093"])
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8(run.stderr).unwrap();
    assert!(
        err.contains(
            "hanging 0 (0 partitions with no marker; 1 partition not judged: transactional \
             data, no marker seen written, and no Metadata response named the leader)"
        ),
        "{err}"
    );
    let run = Command::cargo_bin("kafka-pcap")
        .unwrap()
        .args(["-q", "--transactions", "--stats=text"])
        .arg(scenario("txn-hanging"))
        .output()
        .unwrap();
    let out = String::from_utf8(run.stderr).unwrap();
    assert!(
        out.contains("; hanging 1 (1 partition with no marker)")
            && out.contains(
                "\n  longest: app-ok producer 9001 epoch 0, committed, 22418 us, frames 34-50\n"
            )
            && out.contains(
                "\n  last stable offsets not judged: no read_committed Fetch request captured"
            ),
        "{out}"
    );
}

/// From a hostile review: of two transactions written out with no marker seen for one
/// partition, the one whose first batch is where the last stable offset stays holds it, the
/// earlier one settled (a Fetch showed the offset past it).
#[test]
fn lso_stuck_names_the_later_of_two_unsettled_transactions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    for (file, held) in [
        (
            "unsettled_shadow_two.pcap",
            json!({"transactional_id": "tx-b", "producer_id": 5000, "producer_epoch": 0, "begin_frame": 34}),
        ),
        (
            "unsettled_shadow_same.pcap",
            json!({"transactional_id": "tx-a", "producer_id": 4000, "producer_epoch": 0, "begin_frame": 34}),
        ),
    ] {
        let out = cli(&["--transactions", "--port", "9093"], &dir.join(file));
        let stuck: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r["anomaly"]["kind"] == "lso_stuck")
            .collect();
        assert_eq!(stuck.len(), 1, "{file}: {out}");
        assert_eq!(stuck[0]["frame"], 63, "{file}");
        assert_eq!(stuck[0]["anomaly"]["transaction"], held, "{file}");
        let message = stuck[0]["anomaly"]["message"].as_str().unwrap();
        assert!(
            message.ends_with(
                "written out in frame 50, holds it: its first batch there is at offset 300, and \
                 no marker for orders 1 was seen written"
            ),
            "{file}: {message}"
        );
    }
}

/// From a README-only trial: the quick start's filters for trouble (`--outcome hanging`,
/// `--errors`) found nothing on a capture whose consumers are stuck behind a committed
/// transaction's unmarked partition, and `--errors` missed a marker left out of its response.
#[test]
fn trouble_filters_keep_stuck_consumers_and_left_out_markers() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    let kinds = |args: &[&str], file: &str| -> Vec<String> {
        let mut a = vec!["--transactions", "--port", "9093"];
        a.extend_from_slice(args);
        cli(&a, &dir.join(file))
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                match v["event_type"].as_str().unwrap() {
                    "anomaly" => {
                        format!("{} {}", v["frame"], v["anomaly"]["kind"].as_str().unwrap())
                    }
                    other => format!("{} {other}", v["frame"]),
                }
            })
            .collect()
    };
    // Committed, its orders 1 never marked (not judged: no Metadata): not hanging, but the
    // stuck consumers' lso_stuck is what both filters look for.
    for args in [&["--outcome", "hanging"][..], &["--errors"][..]] {
        assert_eq!(
            kinds(args, "no_marker_no_metadata.pcap"),
            ["40 lso_stuck"],
            "{args:?}"
        );
    }
    // Standard error says why a verdict came where no transaction matched.
    let run = Command::cargo_bin("kafka-pcap")
        .unwrap()
        .args(["--transactions", "--errors", "--port", "9093"])
        .arg(dir.join("no_marker_no_metadata.pcap"))
        .output()
        .unwrap();
    let err = String::from_utf8(run.stderr).unwrap();
    assert!(
        err.ends_with(
            "no transaction matched the filters (1 transaction read); whether 1 partition \
             hangs was not judged (no Metadata named the leader, or no WriteTxnMarkers from the \
             coordinator in the capture: --stats says which); 1 lso_stuck verdict written: a \
             read_committed consumer stuck behind a transaction the filters left out\n"
        ),
        "{err}"
    );
    // With a filter the verdict follows its transaction for, it does.
    assert_eq!(
        kinds(
            &["--errors", "--topic", "payments"],
            "no_marker_no_metadata.pcap"
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        kinds(&["--outcome", "aborted"], "no_marker_no_metadata.pcap"),
        Vec::<String>::new()
    );
    // A COMMIT marker left out of its response: an error for --errors.
    assert_eq!(
        kinds(&["--errors"], "marker_left_out.pcap"),
        [
            "23 response_mismatch",
            "42 lso_stuck",
            "46 transaction",
            "46 hanging_transaction"
        ]
    );
    let out = cli(
        &["--transactions", "--port", "9093"],
        &dir.join("marker_left_out.pcap"),
    );
    assert!(
        out.contains(
            "orders 1 (led by node 1) holds 2 transactional records and its COMMIT marker, \
             sent in frame 22, was left out of its response: not written by the end of the \
             capture"
        ),
        "{out}"
    );
    // The text line says the partition that got no marker; the tree how each joined.
    let text = cli(
        &["--transactions", "--port", "9093", "--format", "text"],
        &dir.join("no_marker_no_metadata.pcap"),
    );
    assert!(
        text.lines().next().unwrap().ends_with(
            "COMMITTED by client in 3.1 ms, 2 partitions, 1 marker written, 1 with data and no \
             marker seen"
        ),
        "{text}"
    );
    let tree = cli(
        &["--transactions", "--port", "9093", "--format", "tree"],
        &dir.join("deposed_coordinator_resend2.pcap"),
    );
    assert!(
        tree.contains("    orders 0: joined implicitly by its first Produce (frame 18), 3 records"),
        "{tree}"
    );
}

/// A transaction written out at its end with a partition no marker was seen for (no
/// Metadata named its leader, so it was not judged hanging) still holds that partition's
/// last stable offset: the `lso_stuck` seen after it names it, where its first batch there
/// is the offset the consumers are stuck at.
#[test]
fn lso_stuck_names_a_holder_already_written_out() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    let out = cli(
        &["--transactions", "--port", "9093"],
        &dir.join("no_marker_no_metadata.pcap"),
    );
    let recs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let txn = recs
        .iter()
        .find(|r| r["event_type"] == "transaction")
        .unwrap();
    assert_eq!(txn["frame"], 27);
    let stuck = recs
        .iter()
        .find(|r| r["anomaly"]["kind"] == "lso_stuck")
        .unwrap();
    assert_eq!(stuck["frame"], 40);
    assert_eq!(
        stuck["anomaly"]["transaction"],
        json!({"transactional_id": "tx", "producer_id": 4000, "producer_epoch": 0, "begin_frame": 8})
    );
    let message = stuck["anomaly"]["message"].as_str().unwrap();
    assert!(
        message.ends_with(
            "longer than the transaction timeout of the transaction that holds it (60000 ms; \
             said once, when it passed it: the stall may go on past this frame): the \
             transaction of producer 4000 epoch 0 (tx), written out in frame 27, holds it: \
             its first batch there is at offset 200, and no marker for orders 1 was seen \
             written"
        ),
        "{message}"
    );
}

/// Message records are left out under `--transactions` unless asked for; `--api` brings
/// those of one API back.
#[test]
fn message_records_only_when_asked() {
    let cap = scenario("txn-v1-flow");
    let kinds = |args: &[&str]| -> Vec<String> {
        let mut a = vec!["--transactions"];
        a.extend_from_slice(args);
        cli(&a, &cap)
            .lines()
            .map(|l| {
                let r: Value = serde_json::from_str(l).unwrap();
                match r["event_type"].as_str().unwrap() {
                    "kafka" => r["kafka"]["api_name"].as_str().unwrap().to_string(),
                    other => other.to_string(),
                }
            })
            .collect()
    };
    assert_eq!(kinds(&[]), ["transaction", "transaction"]);
    assert_eq!(
        kinds(&["--api", "EndTxn"]),
        [
            "EndTxn",
            "EndTxn",
            "transaction",
            "EndTxn",
            "EndTxn",
            "transaction"
        ]
    );
}

/// The packets of `c` as a pcap file (Ethernet), packet `i` at microsecond `usec(i)` of one
/// second.
fn pcap_of(c: &common::Conversation, usec: impl Fn(usize) -> u32) -> Vec<u8> {
    let mut w = common::PcapWriter::new(
        common::Endian::Little,
        common::Resolution::Micro,
        1,
        262_144,
    );
    for (i, p) in c.packets().iter().enumerate() {
        w.packet(1_767_225_600, usec(i), &common::ethernet(&p.ip));
    }
    w.into_bytes()
}

/// A capture of `n` transactions left open, one AddPartitionsToTxn v3 each (producer ids
/// 100000 + i, 20 partitions each), on one connection, answered.
fn many_open(n: usize) -> Vec<u8> {
    use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
    use kafka_protocol::messages::{
        AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, ApiKey, ProducerId, TopicName,
        TransactionalId,
    };
    use kafka_protocol::protocol::StrBytes;
    let mut c = common::Conversation::new(false, 9092);
    for i in 0..n {
        let q = AddPartitionsToTxnRequest::default()
            .with_v3_and_below_transactional_id(TransactionalId(StrBytes::from_string(format!(
                "t-{i}"
            ))))
            .with_v3_and_below_producer_id(ProducerId(100_000 + i as i64))
            .with_v3_and_below_producer_epoch(0)
            .with_v3_and_below_topics(vec![AddPartitionsToTxnTopic::default()
                .with_name(TopicName(StrBytes::from_static_str("orders")))
                .with_partitions((0..20).collect())]);
        let corr = i as i32 + 1;
        c = c
            .client(&common::frames::req(
                ApiKey::AddPartitionsToTxn,
                3,
                corr,
                "c",
                &q,
            ))
            .server(&common::frames::resp(
                ApiKey::AddPartitionsToTxn,
                3,
                corr,
                &AddPartitionsToTxnResponse::default(),
            ));
    }
    pcap_of(&c, |i| i as u32 % 1_000_000)
}

/// A capture of one transaction (producer id 100000, `t-0`) whose one AddPartitionsToTxn v3
/// names `partitions` partitions of `orders`, answered.
fn wide(partitions: i32) -> Vec<u8> {
    use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
    use kafka_protocol::messages::{
        AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, ApiKey, ProducerId, TopicName,
        TransactionalId,
    };
    use kafka_protocol::protocol::StrBytes;
    let q = AddPartitionsToTxnRequest::default()
        .with_v3_and_below_transactional_id(TransactionalId(StrBytes::from_static_str("t-0")))
        .with_v3_and_below_producer_id(ProducerId(100_000))
        .with_v3_and_below_producer_epoch(0)
        .with_v3_and_below_topics(vec![AddPartitionsToTxnTopic::default()
            .with_name(TopicName(StrBytes::from_static_str("orders")))
            .with_partitions((0..partitions).collect())]);
    let c = common::Conversation::new(false, 9092)
        .client(&common::frames::req(
            ApiKey::AddPartitionsToTxn,
            3,
            1,
            "c",
            &q,
        ))
        .server(&common::frames::resp(
            ApiKey::AddPartitionsToTxn,
            3,
            1,
            &AddPartitionsToTxnResponse::default(),
        ));
    pcap_of(&c, |i| i as u32)
}

/// The `transaction_limit` anomalies of `sink`.
fn limits(sink: &VecSink) -> Vec<String> {
    sink.0
        .iter()
        .filter_map(|r| match &r.event {
            kafka_pcap::kafka::event::Event::Anomaly(a)
                if a.kind.as_str() == "transaction_limit" =>
            {
                Some(a.message.clone())
            }
            _ => None,
        })
        .collect()
}

/// A transaction lists at most 1,000 partitions; the rest are counted in
/// `partitions_not_listed` and a `transaction_limit` anomaly says which bound it was: the
/// partition bound, or (under a budget too small to keep a topic's name) the budget.
#[test]
fn partitions_past_the_bound_are_counted_and_said() {
    let mut sink = VecSink::default();
    run_slice(&wide(1_005), &config(), &mut sink).unwrap();
    assert_eq!(sink.1.len(), 1);
    let t = &sink.1[0].transaction;
    assert_eq!(t.partitions.len(), 1_000);
    assert_eq!(t.partitions_not_listed, 5);
    assert_eq!(t.partitions[999].partition, 999);
    // The report's broker table says the five partitions' marker attempts are not in it.
    let mut data = kafka_pcap::output::report::ReportData::default();
    data.add(&sink.1[0]);
    assert_eq!(data.partitions_not_listed, 5);
    let mut page = Vec::new();
    kafka_pcap::output::report::write_html(
        &data,
        "wide",
        &kafka_pcap::stats::Stats::default(),
        &mut page,
    )
    .unwrap();
    let page = String::from_utf8(page).unwrap();
    assert!(
        page.contains("<p data-partitions-not-listed=\"5\">The marker attempts counted are those of the partitions the transaction records list: 5 partitions the records count"),
        "{page}"
    );
    assert_eq!(
        limits(&sink),
        vec![
            "the transaction of producer 100000 epoch 0 (t-0) covered more than 1000 \
             partitions: the others are counted in partitions_not_listed (reported once)"
                .to_string()
        ]
    );
    // No topic name kept: the budget, not the bound. The page's data holds the view's whole share: nothing more is remembered.
    let memory = kafka_pcap::memory::Memory::new(1 << 20);
    let mut page = memory.charge(kafka_pcap::memory::Holding::Report);
    page.force(1 << 19);
    let config = Config { memory, ..config() };
    let mut sink = VecSink::default();
    run_slice(&wide(3), &config, &mut sink).unwrap();
    assert_eq!(sink.1.len(), 1);
    assert_eq!(sink.1[0].transaction.partitions_not_listed, 3);
    assert_eq!(
        limits(&sink),
        vec![
            "the transaction of producer 100000 epoch 0 (t-0) touched 3 partitions of topics \
             whose names the memory budget did not keep: they are counted in \
             partitions_not_listed (reported once)"
                .to_string()
        ]
    );
}

/// A capture of `n` transactions known from their markers only: one WriteTxnMarkers v1
/// exchange each (producer id 100000 + i, COMMIT of `orders-0`), on one connection.
fn markers_only(n: usize) -> Vec<u8> {
    markers_only_at(n, |i| i as u32 % 1_000_000)
}

/// As [`markers_only`], packet `i` at microsecond `usec(i)` of one second.
fn markers_only_at(n: usize, usec: impl Fn(usize) -> u32) -> Vec<u8> {
    use kafka_protocol::messages::write_txn_markers_request::{
        WritableTxnMarker, WritableTxnMarkerTopic,
    };
    use kafka_protocol::messages::write_txn_markers_response::{
        WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
    };
    use kafka_protocol::messages::{
        ApiKey, ProducerId, TopicName, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
    };
    use kafka_protocol::protocol::StrBytes;
    let mut c = common::Conversation::new(false, 9092);
    for i in 0..n {
        let pid = ProducerId(100_000 + i as i64);
        let orders = || TopicName(StrBytes::from_static_str("orders"));
        let q = WriteTxnMarkersRequest::default().with_markers(vec![WritableTxnMarker::default()
            .with_producer_id(pid)
            .with_producer_epoch(0)
            .with_transaction_result(true)
            .with_coordinator_epoch(5)
            .with_topics(vec![WritableTxnMarkerTopic::default()
                .with_name(orders())
                .with_partition_indexes(vec![0])])]);
        let a = WriteTxnMarkersResponse::default().with_markers(vec![
            WritableTxnMarkerResult::default()
                .with_producer_id(pid)
                .with_topics(vec![WritableTxnMarkerTopicResult::default()
                    .with_name(orders())
                    .with_partitions(vec![
                        WritableTxnMarkerPartitionResult::default().with_partition_index(0)
                    ])]),
        ]);
        let corr = i as i32 + 1;
        c = c
            .client(&common::frames::req(
                ApiKey::WriteTxnMarkers,
                1,
                corr,
                "m",
                &q,
            ))
            .server(&common::frames::resp(ApiKey::WriteTxnMarkers, 1, corr, &a));
    }
    pcap_of(&c, usec)
}

/// A capture whose clock goes back between a marker request and its response: the
/// transaction's `marker_latency_us` is absent, as the response record's `latency_us` is null
/// (with `clock_went_back`), not negative.
#[test]
fn a_clock_that_goes_back_gives_no_marker_latency() {
    // Every packet 100 us before the one before it.
    let data = markers_only_at(1, |i| 900_000 - 100 * i as u32);
    let mut sink = VecSink::default();
    run_slice(&data, &config(), &mut sink).unwrap();
    assert_eq!(sink.1.len(), 1);
    let p = &sink.1[0].transaction.partitions[0];
    assert!(p.marker_written);
    assert_eq!(p.marker_latency_us, None);
    let response = sink
        .0
        .iter()
        .find_map(|r| match &r.event {
            kafka_pcap::kafka::event::Event::Kafka(k)
                if k.message == kafka_pcap::kafka::event::MessageKind::Response =>
            {
                Some(k)
            }
            _ => None,
        })
        .unwrap();
    assert!(response.clock_went_back && response.latency_us.is_none());
}

/// A producer between transactions holds no room for one: 5,000 producers of one
/// transaction each (markers only) fit a 4M budget (the view's 2M share) with nothing given
/// up; each producer kept an empty list's room for a transaction (2.8 KiB), 14 MB in all,
/// and the view gave transactions up.
#[test]
fn producers_between_transactions_hold_no_room_for_one() {
    let memory = kafka_pcap::memory::Memory::new(4 << 20);
    let config = Config { memory, ..config() };
    let mut sink = VecSink::default();
    let stats = run_slice(&markers_only(5_000), &config, &mut sink).unwrap();
    assert_eq!(sink.1.len(), 5_000);
    assert!(sink
        .1
        .iter()
        .all(|t| t.transaction.outcome.as_str() == "committed"
            && t.transaction.partitions[0].marker_written));
    assert!(
        stats.memory_given_up.is_empty(),
        "{:?}",
        stats.memory_given_up
    );
}

/// What the view holds is charged to the memory budget (the view keeps to half of it): under
/// a small budget, a thousand open transactions are written early, as they stand (a `memory_limit` anomaly says so),
/// and none is lost; under the default budget all wait for the end.
#[test]
fn open_transactions_stay_under_the_memory_budget() {
    let data = many_open(1_000);
    let run_with = |limit: usize, report: usize| {
        let memory = kafka_pcap::memory::Memory::new(limit);
        // What a --report page's data would hold.
        let mut page = memory.charge(kafka_pcap::memory::Holding::Report);
        page.force(report);
        let config = Config { memory, ..config() };
        let mut sink = VecSink::default();
        let stats = run_slice(&data, &config, &mut sink).unwrap();
        (sink, stats)
    };
    let run = |limit: usize| run_with(limit, 0);
    let (all, stats) = run(40 << 20);
    assert_eq!(all.1.len(), 1_000);
    let anomaly = |r: &&kafka_pcap::kafka::event::Record| {
        matches!(r.event, kafka_pcap::kafka::event::Event::Anomaly(_))
    };
    let noted: Vec<String> = all
        .0
        .iter()
        .filter(anomaly)
        .map(|r| format!("{:?}", r.event))
        .collect();
    assert!(noted.is_empty(), "{noted:?}");
    assert!(!stats.memory_given_up.contains_key("transactions"));
    let (small, stats) = run(1 << 20);
    assert_eq!(small.1.len(), 1_000, "every transaction is still written");
    let early: Vec<_> = small
        .0
        .iter()
        .filter_map(|r| match &r.event {
            kafka_pcap::kafka::event::Event::Anomaly(a) if a.kind.as_str() == "memory_limit" => {
                Some(a.message.clone())
            }
            _ => None,
        })
        .collect();
    assert!(
        early
            .iter()
            .any(|m| m.contains("the transaction view reached its share")),
        "{early:?}"
    );
    assert!(stats.memory_given_up["transactions"] > 0);
    assert!(stats.memory_peak <= 1 << 20, "peak {}", stats.memory_peak);
    assert!(early[0].contains("(half of 1M)"), "{early:?}");
    // Beside --report, the view keeps to half less what the page's data holds (so that the
    // stages reading the capture keep their half): it writes more early.
    let (beside, report_stats) = run_with(1 << 20, 1 << 18);
    assert_eq!(beside.1.len(), 1_000);
    let said = beside.0.iter().find_map(|r| match &r.event {
        kafka_pcap::kafka::event::Event::Anomaly(a) if a.kind.as_str() == "memory_limit" => {
            Some(a.message.clone())
        }
        _ => None,
    });
    assert!(
        said.as_deref()
            .is_some_and(|m| m.contains("(half of 1M, less the 256K of the --report page)")),
        "{said:?}"
    );
    assert!(
        report_stats.memory_given_up["transactions"] > stats.memory_given_up["transactions"],
        "{:?} {:?}",
        report_stats.memory_given_up,
        stats.memory_given_up
    );
    // Those written early are the oldest, in order, and still say what they were.
    let t = &small.1[0].transaction;
    assert_eq!((t.producer_id, t.partitions.len()), (100_000, 20));
    assert_eq!(
        t.outcome.as_str(),
        "unknown",
        "no InitProducerId: its beginning is not known"
    );
}

/// The captures of a hostile review (`tests/data/txn-hostile/`, written by hand-encoding
/// Python, not by this project's encoders), each the reproduction of a wrong answer that the
/// view once gave, now right.
#[test]
fn hostile_review_captures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    let run = |name: &str| -> (Vec<Value>, Vec<Value>) {
        let out = cli(
            &["--transactions", "--port", "9093", "--port", "9094"],
            &dir.join(name),
        );
        out.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .partition(|r| r["event_type"] == "transaction")
    };
    let kinds = |others: &[Value]| -> Vec<String> {
        others
            .iter()
            .map(|r| r["anomaly"]["kind"].as_str().unwrap().to_string())
            .collect()
    };
    // Consume-transform-produce with the data and the offsets partition on two brokers: one
    // transaction, not a second one made of the later marker.
    let (t, _) = run("offsets_split.pcap");
    assert_eq!(t.len(), 1);
    let parts = t[0]["transaction"]["partitions"].as_array().unwrap();
    // Its Metadata lists __consumer_offsets 7 only: no partition count to compute with.
    assert_eq!(parts.len(), 2, "{parts:?}");
    assert_eq!(
        parts.iter().filter(|p| p["marker_written"] == true).count(),
        2
    );
    // An EndTxn answered COORDINATOR_LOAD_IN_PROGRESS, asked again: one transaction.
    let (t, _) = run("endtxn_retry.pcap");
    assert_eq!(t.len(), 1);
    assert_eq!(t[0]["transaction"]["outcome"], "committed");
    assert_eq!(
        t[0]["transaction"]["errors"][0]["error"],
        "COORDINATOR_LOAD_IN_PROGRESS"
    );
    // Two producers' coordinators with different epochs: not stale (Kafka compares per
    // producer id).
    let (t, others) = run("stale_false.pcap");
    assert_eq!(t.len(), 2);
    assert!(kinds(&others).is_empty(), "{others:?}");
    // The capture ends 900 us after an accepted EndTxn: not hanging yet.
    let (t, others) = run("hanging_cut.pcap");
    assert_eq!(t.len(), 1);
    assert!(kinds(&others).is_empty(), "{others:?}");
    // COMMIT markers 70 s in, no EndTxn captured: only a client commits.
    let (t, _) = run("cbc_t.pcap");
    assert_eq!(t[0]["transaction"]["ended_by"], "client");
    assert_eq!(t[0]["transaction"]["reason"], Value::Null);
    // A producer's own epoch bump (InitProducerId naming itself, KIP-360) fences nothing.
    let (t, others) = run("self_bump.pcap");
    assert!(kinds(&others).is_empty(), "{others:?}");
    assert_eq!(t[0]["transaction"]["reason"], Value::Null);
    assert!(t[0]["transaction"].get("fenced_by_frame").is_none());
    // A batch sent again after NOT_LEADER_OR_FOLLOWER counts once; a late Produce refused
    // INVALID_TXN_STATE begins no transaction: a `refused_request` verdict says so.
    let (t, others) = run("produce_retry.pcap");
    assert_eq!(t.len(), 1);
    assert_eq!(kinds(&others), ["refused_request"]);
    let a = &others[0]["anomaly"];
    assert_eq!(
        (&a["request_frame"], &a["api_key"], &others[0]["frame"]),
        (&json!(27), &json!(0), &json!(28))
    );
    assert_eq!(
        a["message"],
        "producer 4000 epoch 0 (tx): its Produce to orders 1 (frame 27) was refused \
         INVALID_TXN_STATE: no transaction of that producer epoch was open (sent after its \
         end); it begins no transaction of its own; the transaction of that epoch was written \
         at frame 26"
    );
    let p = &t[0]["transaction"]["partitions"][0];
    assert_eq!((&p["batches"], &p["records"]), (&json!(1), &json!(3)));
    // One Produce with a partition refused INVALID_TXN_STATE and one accepted, in either
    // order in its response: the accepted batch is kept, no verdict (from a hostile review).
    for name in [
        "produce_mixed_refused_first.pcap",
        "produce_mixed_accepted_first.pcap",
    ] {
        let (t, others) = run(name);
        let got: Vec<(&Value, usize)> = t
            .iter()
            .map(|r| {
                let t = &r["transaction"];
                (&t["outcome"], t["partitions"].as_array().unwrap().len())
            })
            .collect();
        assert_eq!(
            got,
            [(&json!("committed"), 1), (&json!("open"), 2)],
            "{name}"
        );
        assert!(kinds(&others).is_empty(), "{name}: {others:?}");
    }
    // A stalled client's Produce of the epoch its coordinator's timeout abort bumped: the
    // verdict follows the record of that transaction (written at the capture's end), and
    // names no newer instance as the cause (from a hostile review).
    let (t, others) = run("timeout_then_late_produce.pcap");
    assert_eq!(t.len(), 1);
    assert_eq!(t[0]["transaction"]["reason"], "timeout");
    assert_eq!(kinds(&others), ["refused_request"]);
    let m = others[0]["anomaly"]["message"].as_str().unwrap();
    assert!(
        m.contains("by the coordinator's abort of a transaction past its timeout"),
        "{m}"
    );
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/txn-hostile/timeout_then_late_produce.pcap");
    assert_eq!(
        record_kinds(&["--outcome", "aborted"], &path),
        ["transaction", "refused_request"]
    );
    // A fenced zombie's refused AddPartitionsToTxn and EndTxn begin no transaction: each is
    // a `refused_request` verdict naming the fenced producer id and epoch.
    let (t, others) = run("two_pids.pcap");
    let refused: Vec<(&Value, &Value, &Value)> = others
        .iter()
        .filter(|r| r["anomaly"]["kind"] == "refused_request")
        .map(|r| {
            let a = &r["anomaly"];
            (&a["api_key"], &a["request_frame"], &a["transaction"])
        })
        .collect();
    let zombie = json!({"transactional_id": "tx", "producer_id": 4000, "producer_epoch": 3});
    assert_eq!(
        refused,
        [
            (&json!(24), &json!(15), &zombie),
            (&json!(26), &json!(19), &zombie)
        ]
    );
    assert!(others
        .iter()
        .any(|r| r["anomaly"]["message"].as_str().unwrap().contains(
            "its EndTxn asking to commit (frame 19) was refused INVALID_PRODUCER_ID_MAPPING"
        )));
    let ids: Vec<(&Value, &Value)> = t
        .iter()
        .map(|r| {
            (
                &r["transaction"]["producer_id"],
                &r["transaction"]["outcome"],
            )
        })
        .collect();
    assert_eq!(
        ids,
        [
            (&json!(4000), &json!("aborted")),
            (&json!(5000), &json!("committed"))
        ]
    );
    // A commit accepted, then the next transaction on its epoch aborted on its timeout at the
    // bumped epoch: the commit stays committed, the abort is the next one's, no verdict.
    let (t, others) = run("commit_then_timeout_abort.pcap");
    let got: Vec<(&Value, &Value, &Value)> = t
        .iter()
        .map(|r| {
            let t = &r["transaction"];
            (&t["outcome"], &t["ended_by"], &t["reason"])
        })
        .collect();
    assert_eq!(
        got,
        [
            (&json!("committed"), &json!("client"), &json!(null)),
            (&json!("aborted"), &json!("coordinator"), &json!("timeout"))
        ]
    );
    assert!(t.iter().all(|r| r["transaction"].get("hanging").is_none()));
    assert!(kinds(&others).is_empty(), "{others:?}");
    // The commit's markers are proved written by the next transaction's accepted messages:
    // said so, and not counted among the partitions not judged (once 1).
    assert_eq!(t[0]["transaction"]["markers_written_later"], true);
    let stats = cli(
        &["--transactions", "--stats=json"],
        &dir.join("commit_then_timeout_abort.pcap"),
    );
    let stats: Value = serde_json::from_str(stats.lines().last().unwrap()).unwrap();
    assert_eq!(stats["stats"]["transactions"]["unjudged_partitions"], 0);
    // A commit whose marker for one partition never came, then an admin's ABORT marker for
    // that partition at the producer's own epoch: one transaction, a partial commit, its
    // verdict (once a phantom second transaction of the ABORT, and no verdict).
    let (t, others) = run("partial_commit_admin_abort.pcap");
    assert_eq!(t.len(), 1, "{t:?}");
    let x = &t[0]["transaction"];
    assert_eq!(
        (&x["outcome"], &x["ended_by"]),
        (&json!("committed"), &json!("client"))
    );
    let markers: Vec<(&Value, &Value)> = x["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (&p["partition"], &p["marker"]))
        .collect();
    assert_eq!(
        markers,
        [(&json!(0), &json!("COMMIT")), (&json!(1), &json!("ABORT"))]
    );
    assert!(x.get("hanging").is_none());
    assert_eq!(x["partial_commit"], json!(true));
    assert!(x["partitions"][0].get("replaced_marker").is_none());
    // The COMMIT for orders 1 the admin's ABORT replaced: sent, never answered.
    assert_eq!(
        x["partitions"][1]["replaced_marker"],
        json!({"marker": "COMMIT", "marker_attempts": 1, "marker_frame": 20, "marker_error": null})
    );
    let verdict = others
        .iter()
        .find(|r| r["anomaly"]["kind"] == "accepted_commit_aborted")
        .expect("a partial commit's verdict");
    assert_eq!(
        verdict["anomaly"]["message"],
        "the transaction of producer 4000 epoch 0 (tx): committed on 1 partition, but ABORT \
         markers (sent by adminclient-1) came for orders 1 in frame 24: a \
         partial commit, those partitions' records were aborted while the rest were committed \
         (the coordinator accepted its EndTxn asking to commit in frame 11: its client was told \
         it committed)"
    );
    // Under transaction version 1, a client's abort accepted, then the next transaction on
    // that epoch aborted on its timeout with ABORT markers at the bumped epoch: the markers
    // are the second's (they were given to the first, and the second called hanging).
    let (t, _) = run("abort_then_timeout_abort.pcap");
    let got: Vec<(&Value, &Value, &Value, bool)> = t
        .iter()
        .map(|r| {
            let t = &r["transaction"];
            (
                &t["outcome"],
                &t["ended_by"],
                &t["reason"],
                t.get("hanging").is_some(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (&json!("aborted"), &json!("client"), &json!(null), false),
            (
                &json!("aborted"),
                &json!("coordinator"),
                &json!("timeout"),
                false
            )
        ]
    );
    // Markers only: COMMIT for orders 0 and 1 (one unanswered), then the coordinator's own
    // ABORT at the same epoch for orders 1. The coordinator never aborts a commit it decided:
    // the ABORT is the next transaction's, no partial commit (it was called one).
    let (t, others) = run("coordinator_abort_after_commit.pcap");
    assert_eq!(t.len(), 2, "{t:?}");
    assert!(
        !kinds(&others).contains(&"accepted_commit_aborted".to_string()),
        "{others:?}"
    );
    assert!(t.iter().all(|r| {
        let m = r["transaction"]["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["marker"].clone())
            .collect::<Vec<_>>();
        m.iter().all(|x| x == &m[0])
    }));
    // Open past its timeout and the sweep, its one partition led by its coordinator (whose
    // timeout abort writes that marker without a message): not hanging (it was).
    let (t, others) = run("open_local_overdue.pcap");
    assert_eq!(t.len(), 1);
    assert_eq!(t[0]["transaction"]["timed_out"], json!(true));
    assert!(t[0]["transaction"].get("hanging").is_none());
    assert!(kinds(&others).is_empty(), "{others:?}");
    // The same partial commit with other traffic before the admin's abort (its COMMIT for
    // orders 1 unanswered, or answered TRANSACTION_COORDINATOR_FENCED): still one
    // transaction, the verdict given (the commit was written before the abort came, which
    // became a transaction of its own).
    for name in [
        "partial_commit_late_admin.pcap",
        "partial_commit_terminal_admin.pcap",
    ] {
        let (t, others) = run(name);
        assert_eq!(t.len(), 1, "{name}: {t:?}");
        assert_eq!(t[0]["transaction"]["outcome"], json!("committed"), "{name}");
        assert_eq!(t[0]["transaction"]["partial_commit"], json!(true), "{name}");
        let replaced = &t[0]["transaction"]["partitions"][1]["replaced_marker"];
        let error = if name == "partial_commit_late_admin.pcap" {
            json!(null)
        } else {
            json!("TRANSACTION_COORDINATOR_FENCED")
        };
        assert_eq!(
            (
                &replaced["marker"],
                &replaced["marker_frame"],
                &replaced["marker_error"]
            ),
            (&json!("COMMIT"), &json!(24), &error),
            "{name}"
        );
        assert!(
            kinds(&others).contains(&"accepted_commit_aborted".to_string()),
            "{name}: {others:?}"
        );
    }
    // A COMMIT marker refused for good (TRANSACTION_COORDINATOR_FENCED) on a partition
    // holding the data, led by node 2, and 60 s more of capture: hanging, with its verdict
    // (it was written at the refusal, and never judged).
    let (t, others) = run("terminal_marker_hangs.pcap");
    assert_eq!(t.len(), 1);
    assert_eq!(t[0]["transaction"]["hanging"], json!(true));
    let k = kinds(&others);
    assert!(k.contains(&"hanging_transaction".to_string()), "{k:?}");
    assert!(k.contains(&"marker_failed".to_string()), "{k:?}");
    // One Metadata exchange dated a year ahead, then 150 transactions over 15 s: the first
    // is written when the next one's AddPartitionsToTxn is accepted (frame 15: that proves
    // its markers written), not at the capture's end (frame 907: the future second stopped
    // every sweep after it; `future_packet_mid.pcap` below checks the sweeps themselves).
    let (t, others) = run("future_packet.pcap");
    assert_eq!(t.len(), 150);
    // The exchange a year ahead is reported, at its first packet (from a hostile review:
    // one packet a day ahead made a 0.7 ms transaction last a day, and nothing said why).
    let bad: Vec<(&Value, &Value)> = others
        .iter()
        .filter(|r| r["anomaly"]["kind"] == "bad_timestamp")
        .map(|r| (&r["frame"], &r["anomaly"]["message"]))
        .collect();
    assert_eq!(
        bad,
        [(
            &json!(6),
            &json!(
                "frame 4 (and the packet after it) is dated 2027-01-01T00:00:00.000000Z: they \
                 are 365.0 days ahead of the packets before and after it, a clock that jumped \
                 or a damaged time; latencies and transaction durations measured to or from it \
                 are off by as much (idle connections are not timed by it)"
            )
        )]
    );
    assert_eq!(
        (&t[0]["frame"], &t[0]["ts"]),
        (&json!(15), &json!("2026-01-01T00:00:00.110100Z"))
    );
    // Open past its 2 s timeout, data on another leader, the capture ending 8 s in: within
    // the coordinator's 10 s sweep for timed-out transactions, so timed out but not hanging
    // (it was called hanging; txn-lso-stuck, 13.2 s with the same timeout, is).
    let (t, others) = run("open_within_sweep.pcap");
    assert_eq!(t.len(), 1);
    let x = &t[0]["transaction"];
    assert_eq!(
        (&x["outcome"], &x["timed_out"]),
        (&json!("open"), &json!(true))
    );
    assert!(x.get("hanging").is_none(), "{x}");
    assert!(kinds(&others).is_empty(), "{others:?}");
    // Epoch exhaustion: EndTxn v5 hands out producer id 5000, whose transaction begins in
    // the capture.
    let (t, _) = run("tv2_rotate.pcap");
    let last = &t.last().unwrap()["transaction"];
    assert_eq!(
        (&last["producer_id"], &last["begun_in_capture"]),
        (&json!(5000), &json!(true))
    );
    // Metadata naming a topic of 32,000 bytes with 20,000 partitions: the view keeps the name
    // once (cut to 249 bytes), under a budget of 1 MiB.
    let data = std::fs::read(dir.join("mem_leaders_small.pcap")).unwrap();
    let config = Config {
        memory: kafka_pcap::memory::Memory::new(1 << 20),
        ..config()
    };
    let stats = run_slice(&data, &config, &mut VecSink::default()).unwrap();
    assert!(stats.memory_peak <= 1 << 20, "peak {}", stats.memory_peak);
    // `marker_local`: a partition led by the coordinator (node 0 at 10.0.0.1) of a committed
    // transaction, and only there; not while the transaction is open (past its timeout or
    // not), not when its EndTxn was refused, not for another cluster's node 0 (10.0.9.1).
    let local = |name: &str| -> Vec<(Value, Value, Value, bool)> {
        let (t, _) = run(name);
        t.iter()
            .flat_map(|r| {
                let outcome = r["transaction"]["outcome"].clone();
                r["transaction"]["partitions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(move |p| {
                        (
                            outcome.clone(),
                            p["partition"].clone(),
                            p["marker"].clone(),
                            p["marker_local"] == true,
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    assert_eq!(
        local("local_marker_basic.pcap"),
        [
            (json!("committed"), json!(0), Value::Null, true),
            (json!("committed"), json!(1), json!("COMMIT"), false)
        ]
    );
    for (name, outcome) in [
        ("local_marker_open.pcap", "open"),
        ("local_marker_timeout_open.pcap", "open"),
        ("local_marker_end_refused.pcap", "unknown"),
        ("local_marker_two_clusters.pcap", "committed"),
    ] {
        let parts = local(name);
        assert!(!parts.is_empty(), "{name}");
        assert!(
            parts.iter().all(|p| p.0 == outcome && !p.3),
            "{name}: {parts:?}"
        );
    }
}

/// The second hostile review's captures (`tests/data/txn-hostile/`, README there): each gave
/// a wrong answer a user would act on.
#[test]
fn hostile_review_captures_second_round() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    let run = |name: &str| -> (Vec<Value>, Vec<String>) {
        let out = cli(&["--transactions"], &dir.join(name));
        let (t, others): (Vec<Value>, Vec<Value>) = out
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .partition(|r| r["event_type"] == "transaction");
        let kinds = others
            .iter()
            .map(|r| r["anomaly"]["kind"].as_str().unwrap().to_string())
            .collect();
        (t, kinds)
    };
    let verdicts = |k: &[String]| -> Vec<String> {
        k.iter().filter(|k| *k != "no_response").cloned().collect()
    };
    // A capture of the producer's host (no inter-broker traffic): three commits 20 s apart.
    // Each next AddPartitionsToTxn accepted proves the one before complete (the coordinator
    // answers CONCURRENT_TRANSACTIONS till its markers are written): only the last, whose
    // markers nothing proves, is left, and with no marker traffic in the capture at all its
    // hanging is not judged (once HANGING, from the absence alone, on every client's host).
    let (t, k) = run("client_side_only.pcap");
    assert_eq!(t.len(), 3);
    let flags = |key: &str| -> Vec<bool> {
        t.iter()
            .map(|r| r["transaction"][key] == json!(true))
            .collect()
    };
    assert_eq!(flags("hanging"), [false, false, false]);
    assert_eq!(flags("markers_not_captured"), [false, false, true]);
    // Looking for hanging ones finds none, and is told one partition went unjudged (from a
    // hostile review: an empty answer read as nothing hanging).
    let only = dir.join("client_side_only.pcap");
    assert!(cli(&["--transactions", "--outcome", "hanging"], &only).is_empty());
    let err = stderr_of(&["--transactions", "--outcome", "hanging"], &only);
    assert!(
        err.contains(
            "no transaction matched the filters (3 transactions read); whether 1 partition \
             hangs was not judged (no Metadata named the leader, or no WriteTxnMarkers from the \
             coordinator in the capture: --stats says which)"
        ),
        "{err}"
    );
    // The first two are known written by the next one's accepted AddPartitionsToTxn, and
    // say so (from a README-only trial: they read "no markers seen" alone).
    assert_eq!(flags("markers_written_later"), [true, true, false]);
    assert!(k.is_empty(), "{k:?}");
    let text = cli(
        &["--transactions", "--format", "text"],
        &dir.join("client_side_only.pcap"),
    );
    assert!(
        text.contains(
            "20  00:00:20.010100  txn tx pid 4000 epoch 0 COMMITTED by client (as EndTxn \
             accepted; no marker seen) in 2.1 ms, 1 partition, no markers seen (written: its \
             producer's next message, accepted in frame 20, proves it)\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            ", whether it hangs not judged: the capture holds no WriteTxnMarkers from its \
             coordinator (as on a client's host: markers go broker to broker); its state: \
             kafka-transactions.sh --bootstrap-server 127.0.0.1:9092 describe --transactional-id \
             tx (it shows the id's latest transaction only)"
        ),
        "{text}"
    );
    // Captured where the coordinator's markers show (txn-hanging: another producer's marker
    // is in the capture), its one partition hangs: an admin's abort would not commit it in
    // part but lose it all.
    let out = cli(&["--transactions"], &scenario("txn-hanging"));
    assert!(out.contains("an admin abort would lose what its client was told was committed"));
    // The broker to restart, by node id and address (from a README-only trial: it was not
    // named).
    assert!(
        out.contains("commit decided: move its coordinator (node 0 at 127.0.0.1:9092: restart it)"),
        "{out}"
    );
    assert!(!out.contains("in part"));
    // Where another partition got its COMMIT, the abort would commit it in part.
    let other = cli(&["--transactions"], &dir.join("marker_left_out.pcap"));
    assert!(
        other.contains("an admin abort would commit it in part"),
        "{other}"
    );
    // From a hostile review: orders 0's COMMIT request lost, its NONE answer captured: written,
    // not hanging (it once was), and the commit of orders 5 alone hangs, in part.
    let (t, k) = run("hanging_sibling_request_lost.pcap");
    let last = &t[t.len() - 1]["transaction"];
    assert_eq!(last["partitions"][0]["marker_request_lost"], true);
    assert_eq!(last["partitions"][0]["marker_written"], true);
    // (The `gap` where the request was.)
    assert_eq!(verdicts(&k), ["gap", "hanging_transaction"]);
    let out = cli(
        &["--transactions", "--format", "text"],
        &dir.join("hanging_sibling_request_lost.pcap"),
    );
    assert!(
        out.contains("orders 5 (led by node 2)") && !out.contains("orders 0 (led"),
        "{out}"
    );
    assert!(
        out.contains("an admin abort would commit it in part"),
        "{out}"
    );
    // Its other partition got its COMMIT but held none of its records: nothing committed.
    let out = cli(&["--transactions"], &dir.join("hanging_sibling_empty.pcap"));
    assert!(
        out.contains("an admin abort would lose what its client was told was committed"),
        "{out}"
    );
    // An open transaction's text line says how long it stayed open, to the capture's end.
    let line = cli(
        &["--transactions", "--format", "text"],
        &scenario("txn-lso-stuck"),
    );
    assert!(
        line.contains("OPEN for 13.19 s till the capture's end, 11.19 s past its timeout of 2.00 s, 1 partition"),
        "{line}"
    );
    // A late Produce after the abort, checked by its leader (AddPartitionsToTxn verify_only)
    // and refused INVALID_TXN_STATE: no transaction of its own (no phantom open one, nothing
    // hanging), only the verdict that says it was refused.
    let (t, k) = run("late_produce_verified.pcap");
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!(t[0]["transaction"]["outcome"], "aborted");
    assert_eq!(verdicts(&k), ["refused_request"], "{k:?}");
    // --host naming its coordinator keeps the transaction and, with it, the verdict of the
    // Produce its leader (another host) refused (from a hostile review: dropped by its own
    // connection's host).
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/txn-hostile/late_produce_verified.pcap");
    assert_eq!(
        record_kinds(&["--host", "127.0.0.1"], &path),
        ["transaction", "refused_request"]
    );
    // kafka-transactions.sh abort carries coordinator_epoch 0; the partition it aborts never
    // had a marker written (its COMMIT went unanswered): not stale.
    let (t, k) = run("admin_abort_epoch0.pcap");
    assert_eq!(t.len(), 1);
    assert!(!k.contains(&"stale_coordinator_epoch".to_string()), "{k:?}");
    // An InitProducerId 5 s after the coordinator's ABORT markers: it fenced nothing.
    let (t, k) = run("restart_after_timeout_abort.pcap");
    let x = &t[0]["transaction"];
    assert_eq!(
        (&x["outcome"], &x["ended_by"], &x["reason"]),
        (&json!("aborted"), &json!("coordinator"), &json!(null))
    );
    assert!(x.get("fenced_by_frame").is_none());
    assert!(!k.contains(&"fenced_producer".to_string()), "{k:?}");
    // The holder of a stalled last stable offset has an unknown timeout (its InitProducerId
    // not captured); another producer's 10 s one says nothing of it: no lso_stuck within
    // Kafka's default 60 s, and the holder commits at 30 s.
    let (t, k) = run("lso_short_timeout_elsewhere.pcap");
    assert!(!k.contains(&"lso_stuck".to_string()), "{k:?}");
    assert!(t
        .iter()
        .any(|r| r["transaction"]["transactional_id"] == "tx-a"
            && r["transaction"]["outcome"] == "committed"));
    // An EndTxn unanswered, then sent again (30 s and 2 s later) and answered: one
    // transaction, answered by the retry.
    for name in [
        "endtxn_timeout_retry.pcap",
        "endtxn_timeout_retry_fast.pcap",
    ] {
        let (t, _) = run(name);
        assert_eq!(t.len(), 1, "{name}: {t:?}");
        let x = &t[0]["transaction"];
        assert_eq!(x["outcome"], "committed", "{name}");
        assert_eq!(x["end_response"]["frame"], 25, "{name}");
        assert_eq!(x["end_requested"]["frame"], 15, "{name}");
    }
    // One exchange dated a year ahead between an EndTxn and its markers: one transaction.
    let (t, _) = run("future_packet_mid.pcap");
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!(t[0]["transaction"]["partitions"][0]["marker_written"], true);
    // orders 0 was led by the coordinator when the commit was written (its marker needs no
    // message); a Metadata response 20 s later moves it: it is not hanging. orders 1, whose
    // marker was refused for good, is; one whose marker went unanswered is not judged.
    let (t, k) = run("leader_moved_after_local_marker.pcap");
    assert_eq!(t.len(), 1);
    assert_eq!(
        k.iter().filter(|k| *k == "hanging_transaction").count(),
        1,
        "{k:?}"
    );
    let out = cli(
        &["--transactions"],
        &dir.join("leader_moved_after_local_marker.pcap"),
    );
    assert!(out.contains("orders 1 (led by node 1) holds 2 transactional records"));
    assert!(!out.contains("orders 0 (led by"));
    let (_, k) = run("leader_moved_noresp.pcap");
    assert!(!k.contains(&"hanging_transaction".to_string()), "{k:?}");
    // AddPartitionsToTxn v5 results in another order than the request's transactions: each
    // goes to the transaction it names.
    let (t, _) = run("add_parts_v5_result_order.pcap");
    let errors: Vec<(&Value, usize)> = t
        .iter()
        .map(|r| {
            let x = &r["transaction"];
            (
                &x["transactional_id"],
                x["errors"].as_array().map_or(0, |e| {
                    e.iter()
                        .filter(|e| e["api_name"] == "AddPartitionsToTxn")
                        .count()
                }),
            )
        })
        .collect();
    assert_eq!(errors, [(&json!("tx-a"), 0), (&json!("tx-b"), 1)]);
    // Two batches in flight, both answered NOT_LEADER_OR_FOLLOWER and sent again: 5 records
    // in 2 batches, not 10 in 4.
    let (t, _) = run("produce_inflight_retry.pcap");
    let p = &t[0]["transaction"]["partitions"][0];
    assert_eq!((&p["batches"], &p["records"]), (&json!(2), &json!(5)));
}

/// From a hostile review: WriteTxnMarkers requests of 60 KB, each naming 15 producers of 1,000
/// partitions (4 bytes a partition on the wire, some 200 bytes held), all within one capture
/// second. The view counts what such a message adds before it holds it, not every 64 records:
/// at a 1 MiB budget it writes transactions early at every message (it held 1.2 GB at 20M,
/// with 5 rounds of writing early in 700 messages).
#[test]
fn a_message_naming_many_partitions_is_counted_before_it_is_held() {
    use kafka_protocol::messages::write_txn_markers_request::{
        WritableTxnMarker, WritableTxnMarkerTopic,
    };
    use kafka_protocol::messages::{
        ApiKey, ProducerId, TopicName, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
    };
    use kafka_protocol::protocol::StrBytes;
    let mut c = common::Conversation::new(false, 9092);
    let mut pid = 1_000i64;
    let messages = 20;
    for corr in 0..messages {
        let markers = (0..15)
            .map(|_| {
                pid += 1;
                WritableTxnMarker::default()
                    .with_producer_id(ProducerId(pid))
                    .with_producer_epoch(0)
                    .with_transaction_result(true)
                    .with_coordinator_epoch(5)
                    .with_topics(vec![WritableTxnMarkerTopic::default()
                        .with_name(TopicName(StrBytes::from_static_str("t")))
                        .with_partition_indexes((0..1000).collect())])
            })
            .collect();
        let q = WriteTxnMarkersRequest::default().with_markers(markers);
        c = c
            .client(&common::frames::req(
                ApiKey::WriteTxnMarkers,
                1,
                corr,
                "broker-0-txn-marker-sender",
                &q,
            ))
            .server(&common::frames::resp(
                ApiKey::WriteTxnMarkers,
                1,
                corr,
                &WriteTxnMarkersResponse::default(),
            ));
    }
    let data = pcap_of(&c, |i| i as u32 % 1_000_000);
    let memory = kafka_pcap::memory::Memory::new(1 << 20);
    let config = Config { memory, ..config() };
    let mut sink = VecSink::default();
    let stats = run_slice(&data, &config, &mut sink).unwrap();
    assert_eq!(
        sink.1.len(),
        15 * messages as usize,
        "every transaction is written"
    );
    // Rounds of writing early: at least one per message (the records of the 20 messages,
    // 40, never reached the 64 between counts).
    let rounds = stats.memory_given_up["transactions"];
    assert!(rounds >= messages as u64, "{rounds} rounds");
}

/// From a hostile review: a topic named with more than Kafka's 249 characters (kept as its
/// first 249 bytes and its length) is still one partition for its marker and its response:
/// the response's marker written, its error kept (they were unanswered, the error lost).
#[test]
fn a_long_topic_name_keeps_its_marker_and_error() {
    use kafka_protocol::messages::write_txn_markers_request::{
        WritableTxnMarker, WritableTxnMarkerTopic,
    };
    use kafka_protocol::messages::write_txn_markers_response::{
        WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
    };
    use kafka_protocol::messages::{
        ApiKey, ProducerId, TopicName, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
    };
    use kafka_protocol::protocol::StrBytes;
    let long = "t".repeat(300);
    let q = WriteTxnMarkersRequest::default().with_markers(vec![WritableTxnMarker::default()
        .with_producer_id(ProducerId(7000))
        .with_producer_epoch(1)
        .with_transaction_result(true)
        .with_coordinator_epoch(3)
        .with_topics(vec![WritableTxnMarkerTopic::default()
            .with_name(TopicName(StrBytes::from_string(long.clone())))
            .with_partition_indexes(vec![0, 1])])]);
    let r =
        WriteTxnMarkersResponse::default().with_markers(vec![WritableTxnMarkerResult::default()
            .with_producer_id(ProducerId(7000))
            .with_topics(vec![WritableTxnMarkerTopicResult::default()
                .with_name(TopicName(StrBytes::from_string(long)))
                .with_partitions(vec![
                    WritableTxnMarkerPartitionResult::default()
                        .with_partition_index(0)
                        .with_error_code(0),
                    WritableTxnMarkerPartitionResult::default()
                        .with_partition_index(1)
                        .with_error_code(6),
                ])])]);
    let c = common::Conversation::new(false, 9092)
        .client(&common::frames::req(
            ApiKey::WriteTxnMarkers,
            1,
            1,
            "broker-0-txn-marker-sender",
            &q,
        ))
        .server(&common::frames::resp(ApiKey::WriteTxnMarkers, 1, 1, &r));
    let mut sink = VecSink::default();
    run_slice(&pcap_of(&c, |i| i as u32), &config(), &mut sink).unwrap();
    assert_eq!(sink.1.len(), 1);
    let parts = &sink.1[0].transaction.partitions;
    assert_eq!(parts.len(), 2, "{parts:?}");
    assert!(parts[0]
        .topic
        .as_deref()
        .unwrap()
        .ends_with("...(300 bytes)"));
    assert!(parts[0].marker_written);
    assert_eq!(
        parts[1].marker_error.as_deref(),
        Some("NOT_LEADER_OR_FOLLOWER")
    );
}

/// The transactions of `pcap` (bytes) under `--transactions`, as JSON.
fn transactions_of(pcap: &[u8]) -> Vec<Value> {
    let mut sink = VecSink::default();
    run_slice(pcap, &config(), &mut sink).unwrap();
    sink.1
        .iter()
        .map(|t| {
            let mut v = serde_json::to_value(t).unwrap();
            v["frame"] = json!(t.loc.frame);
            v
        })
        .collect()
}

#[test]
fn a_marker_whose_request_was_lost_is_answered_by_its_inferred_response() {
    // txn-v1-flow.pcap without frame 39, the WriteTxnMarkers ABORT request of its second
    // transaction: its response (frame 42 of the damaged file) is inferred, and says the
    // marker of orders 1 was written. The transaction says so (before: "no markers seen",
    // and it waited for the capture's end), with the result left unknown: the response does
    // not carry it.
    let data = std::fs::read(scenario("txn-v1-flow")).unwrap();
    let txns = transactions_of(&common::drop_frames(&data, &[39]));
    assert_eq!(txns.len(), 2, "{txns:#?}");
    let t = &txns[1]["transaction"];
    assert_eq!(t["outcome"], "aborted");
    assert_eq!(t["outcome_from"], "end_txn");
    let p = &t["partitions"][0];
    assert_eq!(
        (p["topic"].as_str(), p["partition"].as_i64()),
        (Some("orders"), Some(1))
    );
    assert_eq!(p["marker_request_lost"], true, "{p}");
    assert_eq!(p["marker_written"], true);
    assert_eq!(p["marker"], Value::Null);
    assert_eq!(p["marker_response_frame"], 42);
    assert_eq!(txns[1]["frame"], 42, "given out when the response came");
    assert!(t.get("hanging").is_none_or(|h| h == false), "{t}");
    let first = &txns[0]["transaction"]["partitions"];
    assert!(
        first
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p.get("marker_request_lost").is_none() && p["marker"] == "COMMIT"),
        "{first}"
    );
    // The text line: the marker counted, its request said not captured.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("lost.pcap");
    std::fs::write(&f, common::drop_frames(&data, &[39])).unwrap();
    let text = cli(&["--transactions", "--format", "text"], &f);
    let line = text
        .lines()
        .find(|l| l.contains("ABORTED"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("(as EndTxn accepted; the marker requests not captured)")
            && line.ends_with("1 partition, 1 marker written"),
        "{line}"
    );
    // An admin's ABORT of a commit's partition, its request lost: the inferred response
    // says written, not which result: the marker stays unknown (it is not the COMMIT the
    // client asked for), and the partition does not hang.
    let data = std::fs::read(scenario("txn-admin-abort")).unwrap();
    let txns = transactions_of(&common::drop_frames(&data, &[30]));
    assert_eq!(txns.len(), 1, "{txns:#?}");
    let p = &txns[0]["transaction"]["partitions"][0];
    assert_eq!(p["marker_request_lost"], true, "{p}");
    assert_eq!(p["marker"], Value::Null);
    assert_eq!(p["marker_written"], true);
    assert!(txns[0]["transaction"]
        .get("hanging")
        .is_none_or(|h| h == false));
}

#[test]
fn an_inferred_marker_response_does_not_answer_a_captured_request() {
    // captures/loss-replay-after-gap.pcap: an inferred response for producer 4000 (its
    // request lost in a gap) comes while a captured request's marker for the same partition
    // awaits its own response: it is not taken as that one's answer.
    let data = std::fs::read(scenario("loss-replay-after-gap")).unwrap();
    let txns = transactions_of(&data);
    for t in &txns {
        for p in t["transaction"]["partitions"].as_array().unwrap() {
            assert!(p.get("marker_request_lost").is_none(), "{t}");
        }
    }
    let second = txns
        .iter()
        .find(|t| t["transaction"]["partitions"][0]["marker_frame"] == 6)
        .unwrap();
    assert_eq!(
        second["transaction"]["partitions"][0]["marker_response_frame"],
        9
    );
}

#[test]
fn an_end_lost_before_an_init_producer_id_is_not_fencing() {
    // txn-stale-epoch.pcap without the first transaction's EndTxn (frames 17-18) and its
    // markers (22-23): the producer's next InitProducerId (frame 27) came after bytes of its
    // client's connection to the coordinator were lost, where its EndTxn may have been: the
    // transaction's outcome is unknown, with `end_not_captured`; it is not "fenced" (which
    // the view said before, and which it still says with nothing lost: tests above).
    let data = std::fs::read(scenario("txn-stale-epoch")).unwrap();
    let damaged = common::drop_frames(&data, &[17, 18, 22, 23]);
    let txns = transactions_of(&damaged);
    let first = txns
        .iter()
        .map(|t| &t["transaction"])
        .find(|t| t["producer_epoch"] == 0)
        .unwrap_or_else(|| panic!("{txns:#?}"));
    assert_eq!(first["outcome"], "unknown", "{first}");
    assert_eq!(first["end_not_captured"], true);
    assert!(first.get("fenced_by_frame").is_none(), "{first}");
    assert!(first["reason"].is_null(), "{first}");
    let mut sink = VecSink::default();
    run_slice(&damaged, &config(), &mut sink).unwrap();
    assert!(
        !sink.0.iter().any(|r| matches!(&r.event,
            kafka_pcap::kafka::event::Event::Anomaly(a)
                if a.kind == kafka_pcap::vocab::AnomalyKind::FencedProducer)),
        "no fenced_producer verdict"
    );
}

/// Producers initialised and no transaction begun (the first 9 packets of txn-v1-flow.pcap end
/// after its InitProducerId exchange): the note names the InitProducerId requests read.
#[test]
fn no_transaction_found_names_producers_that_began_none() {
    let out = Command::cargo_bin("kafka-pcap")
        .unwrap()
        .args(["--transactions", "-c", "9"])
        .arg(scenario("txn-v1-flow"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(
            "no transaction found: 1 InitProducerId request (of transactional or idempotent \
             producers) but no transaction begun (no AddPartitionsToTxn, transactional Produce \
             batch, EndTxn or marker); Kafka requests read: Metadata:1 FindCoordinator:1 \
             InitProducerId:1"
        ),
        "{err}"
    );
}

#[test]
fn no_transaction_found_says_the_snapshot_length_cut_them() {
    // txn-v1-flow.pcap cut to 80 bytes a packet: the transaction messages are read, but cut
    // before their producer ids; the note said "no transactional message of the capture"
    // (from a README-only trial), contradicting the requests it listed.
    let data = std::fs::read(scenario("txn-v1-flow")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("cut.pcap");
    std::fs::write(&f, common::snaplen_cut(&data, 80)).unwrap();
    let out = Command::cargo_bin("kafka-pcap")
        .unwrap()
        .arg("--transactions")
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(
            "no transaction found: the snapshot length (80 bytes) cut the transaction \
             messages before their producer ids (capture with `tcpdump -s 0`; --all-apis \
             shows what each kept); Kafka requests read: "
        ) && err.contains("EndTxn:2"),
        "{err}"
    );
    // A capture of WriteTxnMarkers alone (snaplen-96-v1-9092.pcap: a broker's markers cut
    // after 96 bytes a packet) said the same contradiction (from a README-only trial).
    let out = Command::cargo_bin("kafka-pcap")
        .unwrap()
        .arg("--transactions")
        .arg(scenario("snaplen-96-v1-9092"))
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no transaction found: the snapshot length (96 bytes) cut the transaction")
            && err.contains("WriteTxnMarkers:2"),
        "{err}"
    );
}

#[test]
fn a_marker_answer_cut_before_its_error_code_is_not_unanswered() {
    // txn-v1-flow.pcap with the packet of the second transaction's WriteTxnMarkers response
    // (frame 43) cut after the producer id: the marker was answered, whether written is
    // not known (from a README-only trial: it said "NOT WRITTEN (1 unanswered)").
    let data = std::fs::read(scenario("txn-v1-flow")).unwrap();
    // 66 bytes of headers, then size, correlation id, tagged fields, markers count and the
    // producer id: 19 bytes of the response.
    let damaged = common::cut_frame(&data, 43, 66 + 19);
    let txns = transactions_of(&damaged);
    let t = &txns[1]["transaction"];
    let p = &t["partitions"][0];
    assert_eq!(p["marker"], "ABORT", "{t}");
    assert_eq!(p["marker_answer_cut"], true, "{p}");
    assert_eq!(p["marker_written"], false);
    assert_eq!(p["marker_response_frame"], 43);
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("cut.pcap");
    std::fs::write(&f, &damaged).unwrap();
    let text = cli(&["--transactions", "--format", "text"], &f);
    let line = text.lines().find(|l| l.contains("ABORTED")).unwrap();
    assert!(
        line.ends_with("1 partition, 1 marker answered, cut off before its error code"),
        "{line}"
    );
}

#[test]
fn a_marker_request_cut_before_its_producer_id_is_answered_by_its_response() {
    // From a hostile review: txn-admin-abort.pcap with the admin's WriteTxnMarkers request
    // (frame 30) cut by a snapshot length before its producer id; its whole response says
    // orders 9 was written. The view said the commit HANGING (no marker seen); the response
    // answers the partition as for a request not captured, its result unknown.
    let data = std::fs::read(scenario("txn-admin-abort")).unwrap();
    let damaged = common::cut_frame(&data, 30, 87);
    let mut sink = VecSink::default();
    run_slice(&damaged, &config(), &mut sink).unwrap();
    assert!(
        !sink.0.iter().any(|r| matches!(&r.event,
            kafka_pcap::kafka::event::Event::Anomaly(a)
                if a.kind == kafka_pcap::vocab::AnomalyKind::HangingTransaction)),
        "no hanging verdict"
    );
    let txns = transactions_of(&damaged);
    assert_eq!(txns.len(), 1, "{txns:#?}");
    let p = &txns[0]["transaction"]["partitions"][0];
    assert_eq!(p["marker_request_lost"], true, "{p}");
    assert_eq!(p["marker_written"], true);
    assert!(txns[0]["transaction"]
        .get("hanging")
        .is_none_or(|h| h == false));
}

/// One damaged byte, an EndTxn v3 request's transactional_id length 9 ("app-hang") made 1,
/// leaves bytes over after the schema's last field: the request is still shown (its record
/// holds what v3 reads there, `trailing_bytes`), but the transaction view leaves it out, as it
/// left out the undecoded frame: the fields after the damaged length, read from the wrong
/// bytes, made up producer 7021235159397658215 ("app-hang" as an INT64) and an aborted
/// transaction of it (a hostile review). The transactions are those of the capture with the
/// request not decoded at all.
#[test]
fn a_body_read_with_trailing_bytes_makes_no_transaction() {
    let mut data = std::fs::read(scenario("txn-hanging")).unwrap();
    let end_txn = data
        .windows(4)
        .position(|w| w == [0, 26, 0, 3])
        .expect("the EndTxn v3 request header");
    let len_at = end_txn
        + data[end_txn..]
            .windows(9)
            .position(|w| w == b"\x09app-hang")
            .expect("its transactional_id");
    data[len_at] = 1;
    let mut damaged = VecSink::default();
    run_slice(&data, &config(), &mut damaged).unwrap();
    let request = damaged
        .0
        .iter()
        .find_map(|r| match &r.event {
            Event::Kafka(k) if k.api_key == 26 && k.trailing_bytes.is_some() => Some(k),
            _ => None,
        })
        .expect("the EndTxn request, decoded with bytes left over");
    let Body::EndTxnRequest(b) = &request.body else {
        panic!("{:?}", request.body);
    };
    assert_eq!(b.producer_id, 7_021_235_159_397_658_215);
    assert!(
        damaged
            .1
            .iter()
            .all(|t| t.transaction.producer_id != b.producer_id),
        "{:#?}",
        damaged.1
    );
    // The same transactions as when that frame is not decoded at all (its API left out).
    let mut undecoded = VecSink::default();
    let unknown_version = {
        let mut d = data.clone();
        d[end_txn + 3] = 99; // EndTxn v99: framed, not decoded
        d
    };
    run_slice(&unknown_version, &config(), &mut undecoded).unwrap();
    let outcome = |s: &VecSink| -> Vec<String> {
        s.1.iter()
            .map(|t| serde_json::to_string(&t.transaction).unwrap())
            .collect()
    };
    assert_eq!(outcome(&damaged), outcome(&undecoded));
    assert!(!damaged.1.is_empty());
}

/// Two clusters that give one producer id to two transactional ids (from a hostile review):
/// the view joins by producer id and epoch and mixes them (a known limit), and says so once,
/// with a `producer_id_conflict` naming both ids; a capture of one cluster has none.
#[test]
fn a_producer_id_given_to_two_transactional_ids_is_a_conflict() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    let out = cli(&["--transactions"], &dir.join("two_clusters.pcap"));
    let conflicts: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["anomaly"]["kind"] == "producer_id_conflict")
        .collect();
    assert_eq!(conflicts.len(), 1, "{out}");
    let a = &conflicts[0]["anomaly"];
    assert_eq!(a["layer"], "transaction");
    let m = a["message"].as_str().unwrap();
    assert!(
        m.starts_with("producer id 1000 was given to transactional id \"app-B\" here (coordinator 10.1.0.1:9092), and before to \"app-A\""),
        "{m}"
    );
    assert_eq!(conflicts[0]["frame"], 22);
    for name in [
        "txn-v1-flow.pcap",
        "txn-fenced.pcap",
        "txn-inter-broker.pcap",
    ] {
        let out = cli(
            &["--transactions"],
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("captures")
                .join(name),
        );
        assert!(!out.contains("producer_id_conflict"), "{name}");
    }
}

/// COMMIT markers for a transaction whose EndTxn asking to abort was accepted (from a hostile
/// review, once written "COMMITTED, though the client asked to abort" with no verdict): an
/// `accepted_abort_committed` naming the EndTxn response's and the marker's frames; no
/// capture of a lawful coordinator has one.
#[test]
fn commit_markers_after_an_accepted_abort_are_a_verdict() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    let out = cli(
        &["--transactions"],
        &dir.join("abort_then_commit_markers.pcap"),
    );
    let recs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 2, "{out}");
    let t = &recs[0]["transaction"];
    assert_eq!(t["outcome"], "committed");
    assert_eq!(t["requested"], "abort");
    assert_eq!(t["end_error"], "NONE");
    let a = &recs[1]["anomaly"];
    assert_eq!(a["kind"], "accepted_abort_committed");
    assert_eq!(a["layer"], "transaction");
    assert_eq!(a["transaction"]["producer_id"], 4000);
    assert_eq!(a["transaction"]["transactional_id"], "tx");
    let m = a["message"].as_str().unwrap();
    assert!(
        m.starts_with(
            "the transaction of producer 4000 epoch 0 (tx): the coordinator accepted its EndTxn \
             asking to abort (frame 17), and COMMIT markers (sent by \
             broker-0-txn-marker-sender) were written (frame 18): its client gave it up, and \
             its records were committed"
        ),
        "{m}"
    );
    let captures = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    for entry in std::fs::read_dir(&captures).unwrap() {
        let path = entry.unwrap().path();
        if path
            .extension()
            .is_some_and(|e| e == "pcap" || e == "pcapng")
        {
            let out = cli(&["--transactions"], &path);
            assert!(
                !out.contains("accepted_abort_committed"),
                "{}",
                path.display()
            );
        }
    }
}

/// A deposed coordinator's stale re-send of a committed transaction's COMMIT marker, after the
/// producer's next transaction at the same epoch was accepted to abort (from a hostile
/// review: the stale marker, which its leader refuses, once decided the aborted transaction's
/// outcome, with a false `accepted_abort_committed`, and its real ABORT marker made a second
/// transaction): the abort keeps its outcome and its ABORT marker, and the stale marker is
/// said alone (under transaction version 2 too, where it once made a third transaction).
#[test]
fn a_stale_commit_marker_does_not_decide_an_accepted_abort() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    for (name, marker) in [
        ("stale_commit_after_abort.pcap", Some("ABORT")),
        ("stale_commit_after_abort_local.pcap", None),
    ] {
        let out = cli(&["--transactions", "--port", "9093"], &dir.join(name));
        let (txns, others): (Vec<Value>, Vec<Value>) = out
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .partition(|r| r["event_type"] == "transaction");
        let outcomes: Vec<(&str, &str)> = txns
            .iter()
            .map(|r| {
                let t = &r["transaction"];
                (
                    t["outcome"].as_str().unwrap(),
                    t["requested"].as_str().unwrap_or("-"),
                )
            })
            .collect();
        assert_eq!(
            outcomes,
            [("committed", "commit"), ("aborted", "abort")],
            "{name}: {out}"
        );
        let parts = txns[1]["transaction"]["partitions"].as_array().unwrap();
        assert_eq!(parts.len(), 1, "{name}: {out}");
        assert_eq!(parts[0]["marker"].as_str(), marker, "{name}: {out}");
        let kinds: Vec<&str> = others
            .iter()
            .map(|r| r["anomaly"]["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["stale_coordinator_epoch"], "{name}: {out}");
        assert_eq!(others[0]["frame"], 32, "{name}");
        assert_eq!(others[0]["anomaly"]["transaction"]["producer_id"], 4000);
        assert_eq!(
            others[0]["anomaly"]["transaction"]["transactional_id"],
            "tx"
        );
    }
    // Transaction version 2, the aborted transaction empty: the stale COMMIT (at the epoch the
    // commit's markers carried) once made a third, invented transaction; it is said alone, no
    // transaction's. (The empty abort, accepted with no partition known, waits for markers of
    // its own till the producer's next message: written after the stale one's verdict.)
    let out = cli(
        &["--transactions", "--port", "9093"],
        &dir.join("stale_commit_after_abort_tv2.pcap"),
    );
    let recs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    let seen: Vec<(String, String)> = recs
        .iter()
        .map(|r| match r["event_type"].as_str().unwrap() {
            "transaction" => (
                r["transaction"]["outcome"].as_str().unwrap().to_string(),
                r["transaction"]["producer_epoch"].to_string(),
            ),
            _ => (
                r["anomaly"]["kind"].as_str().unwrap().to_string(),
                r["anomaly"]["transaction"]["producer_epoch"].to_string(),
            ),
        })
        .collect();
    let want = [
        ("committed", "3"),
        ("stale_coordinator_epoch", "4"),
        ("aborted", "4"),
    ];
    assert_eq!(
        seen,
        want.map(|(a, b)| (a.to_string(), b.to_string())),
        "{out}"
    );
    let m = recs[1]["anomaly"]["message"].as_str().unwrap();
    assert!(
        m.starts_with("the COMMIT marker for orders 0 of producer 4000 epoch 4 (tx) carries")
            && m.ends_with("; it decides no transaction's outcome"),
        "{m}"
    );
}

/// An EndTxn asked again after the coordinator accepted it (a client whose request timed out
/// retries it; Kafka answers a retry of a completed end NONE), before the markers or after
/// them (from a hostile review: once an empty second transaction, and before the markers the
/// real one written at once, its markers a third): one transaction, its first answer
/// standing, the retry's frames its own when it was still followed.
#[test]
fn an_end_asked_again_after_it_was_accepted_is_the_same_transaction() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    for (name, frames) in [
        (
            "endtxn_accepted_retry.pcap",
            &[15, 16, 17, 18, 19, 20, 21, 22, 23, 24][..],
        ),
        (
            "endtxn_accepted_retry_late.pcap",
            &[15, 16, 17, 18, 19, 20, 21, 22][..],
        ),
    ] {
        let out = cli(&["--transactions", "--port", "9093"], &dir.join(name));
        let recs: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect();
        assert_eq!(recs.len(), 1, "{name}: {out}");
        let t = &recs[0]["transaction"];
        assert_eq!(t["outcome"], "committed", "{name}");
        assert_eq!(t["requested"], "commit", "{name}");
        assert_eq!(t["end_error"], "NONE", "{name}");
        assert_eq!(t["end_response"]["frame"], 20, "{name}");
        assert_eq!(t["end_latency_us"], 100, "{name}");
        assert_eq!(t["partitions"][0]["marker_written"], true, "{name}");
        let got: Vec<u64> = t["frames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_u64().unwrap())
            .collect();
        assert_eq!(got, frames, "{name}");
    }
}

/// A second hostile review of the retry and stale-marker rules: the next transaction's EndTxn
/// on the connection that got the first answer (its AddPartitionsToTxn lost to a gap) is that
/// transaction's, not a retry; a retry answered CONCURRENT_TRANSACTIONS, then NONE, is one
/// transaction; a deposed coordinator's refused marker takes no open transaction, nor one whose
/// partitions it does not name (it once made an open transaction "COMMITTED", and gave a
/// committed one a partition it never wrote).
#[test]
fn retries_and_deposed_markers_keep_to_their_transactions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    let run = |name: &str| -> Vec<String> {
        cli(&["--transactions", "--port", "9093"], &dir.join(name))
            .lines()
            .map(|l| {
                let r: Value = serde_json::from_str(l).unwrap();
                if r["event_type"] == "transaction" {
                    let t = &r["transaction"];
                    let parts: Vec<String> = t["partitions"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|p| format!("{} {} {}", p["topic"], p["partition"], p["marker"]))
                        .collect();
                    format!(
                        "{} {} [{}]",
                        t["outcome"].as_str().unwrap(),
                        t["requested"],
                        parts.join(", ")
                    )
                } else {
                    r["anomaly"]["kind"].as_str().unwrap().to_string()
                }
            })
            .collect()
    };
    assert_eq!(
        run("next_txn_after_gap.pcap"),
        [
            r#"committed "commit" ["orders" 0 "COMMIT"]"#,
            "gap",
            "gap",
            r#"committed "commit" ["orders" 1 "COMMIT"]"#,
        ]
    );
    assert_eq!(
        run("next_txn_after_gap_local.pcap"),
        [
            "gap",
            "gap",
            r#"committed "commit" ["orders" 0 null]"#,
            r#"committed "commit" []"#,
        ]
    );
    assert_eq!(
        run("endtxn_retry_concurrent.pcap"),
        [r#"committed "commit" ["orders" 0 "COMMIT"]"#]
    );
    let out = cli(
        &["--transactions", "--port", "9093"],
        &dir.join("endtxn_retry_concurrent.pcap"),
    );
    assert!(
        out.contains(r#""error":"CONCURRENT_TRANSACTIONS""#),
        "{out}"
    );
    assert_eq!(
        run("deposed_marker_retry_after.pcap"),
        [
            r#"committed "commit" ["orders" 0 "COMMIT", "orders" 1 "COMMIT"]"#,
            "stale_coordinator_epoch",
            r#"open null ["orders" 5 null]"#,
        ]
    );
    // The new coordinator's re-send of the first transaction's COMMIT at a higher coordinator
    // epoch, after it was complete, is that transaction's (it once made a second,
    // markers-only record), and its leader keeps the new coordinator epoch: the deposed
    // coordinator's marker after it is stale.
    assert_eq!(
        run("deposed_coordinator_open.pcap"),
        [
            r#"committed "commit" ["orders" 0 "COMMIT"]"#,
            "stale_coordinator_epoch",
            r#"aborted "abort" ["orders" 0 "ABORT"]"#,
        ]
    );
    assert_eq!(
        run("deposed_coordinator_same.pcap"),
        [
            r#"committed "commit" ["orders" 0 "COMMIT"]"#,
            "stale_coordinator_epoch",
            r#"committed "commit" ["orders" 1 "COMMIT"]"#,
        ]
    );
    // Under transaction version 2 (the markers' epoch bumped), the re-send comes after the
    // producer's next message.
    assert_eq!(
        run("deposed_coordinator_resend2.pcap"),
        [
            r#"committed "commit" ["orders" 0 "COMMIT"]"#,
            r#"committed "commit" ["orders" 1 "COMMIT"]"#,
        ]
    );
    // Markers at the new coordinator epoch for a partition the first transaction never had
    // are not a re-send: the next transaction's, at the same epoch under version 1 (orders 32
    // once shared orders 0's bit of the first one's partition set); nor are markers for a
    // partition whose marker at that coordinator epoch was written already (a coordinator
    // re-sends a marker until it is written, never after), nor an admin client's abort.
    for (capture, partition) in [
        ("deposed_coordinator_other1.pcap", 1),
        ("deposed_coordinator_other32.pcap", 32),
        ("deposed_coordinator_again1.pcap", 0),
    ] {
        assert_eq!(
            run(capture),
            [
                r#"committed "commit" ["orders" 0 "COMMIT"]"#.to_string(),
                format!(r#"committed null ["orders" {partition} "COMMIT"]"#),
            ],
            "{capture}"
        );
    }
    // The re-send while the producer's next transaction is refused (AddPartitionsToTxn
    // CONCURRENT_TRANSACTIONS; under version 2 a Produce NOT_ENOUGH_REPLICAS): the first
    // transaction's, not the refused next one's (once "committed" with the refusal's error).
    for capture in ["resend_concurrent_tv1.pcap", "resend_concurrent_tv2.pcap"] {
        assert_eq!(
            run(capture),
            [
                r#"committed "commit" ["orders" 0 "COMMIT"]"#,
                r#"aborted "abort" ["orders" 0 "ABORT"]"#,
            ],
            "{capture}"
        );
    }
    assert_eq!(
        run("deposed_coordinator_admin1.pcap"),
        [
            r#"aborted "abort" ["orders" 0 "ABORT"]"#,
            r#"aborted null ["orders" 0 "ABORT"]"#,
        ]
    );
}

/// A WriteTxnMarkers response that leaves out a partition of its request (from a README-only
/// trial: once "1 unanswered", no verdict, and an `lso_stuck` naming no transaction): the
/// partition's marker is `marker_left_out`, the transaction hanging at the capture's end 90 s
/// later, and the read_committed consumer's stuck last stable offset names it.
#[test]
fn a_partition_left_out_of_its_marker_response_hangs_its_transaction() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    let out = cli(
        &["--transactions", "--port", "9093"],
        &dir.join("marker_left_out.pcap"),
    );
    let recs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    let kinds: Vec<&str> = recs
        .iter()
        .map(|r| {
            r["anomaly"]["kind"]
                .as_str()
                .or(r["transaction"]["outcome"].as_str())
                .unwrap()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "response_mismatch",
            "lso_stuck",
            "committed",
            "hanging_transaction"
        ],
        "{out}"
    );
    assert_eq!(recs[0]["anomaly"]["request_frame"], 22);
    let lso = recs[1]["anomaly"]["message"].as_str().unwrap();
    assert!(
        lso.ends_with(": the transaction of producer 4000 epoch 0 (tx) holds it"),
        "{lso}"
    );
    let t = &recs[2]["transaction"];
    assert_eq!(t["hanging"], true);
    let parts = t["partitions"].as_array().unwrap();
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0]["partition"], 0);
    assert_eq!(parts[0]["marker_written"], true);
    assert!(parts[0].get("marker_left_out").is_none());
    assert_eq!(parts[1]["partition"], 1);
    assert_eq!(parts[1]["marker_written"], false);
    assert_eq!(parts[1]["marker_left_out"], true);
    let text = cli(
        &["--transactions", "--port", "9093", "--format", "text"],
        &dir.join("marker_left_out.pcap"),
    );
    assert!(
        text.contains(
            "COMMITTED by client in 3.1 ms, 2 partitions, 2 markers, 1 NOT WRITTEN (1 left out \
             of its response), HANGING at the capture's end"
        ),
        "{text}"
    );
}

/// A transaction whose producer's InitProducerId is not in the capture (the capture began
/// during it; here txn-v1-flow.pcap without frames 8 and 9): its JSON says
/// `begun_in_capture: false`, and its text line says so too (a README-only trial read a
/// cut capture's line as the whole transaction).
#[test]
fn a_transaction_begun_before_the_capture_says_so_in_its_text_line() {
    let data = std::fs::read(scenario("txn-v1-flow")).unwrap();
    let cut = common::drop_frames(&data, &[8, 9]);
    let txns = transactions_of(&cut);
    let t = &txns[0]["transaction"];
    assert_eq!(t["begun_in_capture"], false, "{t}");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("cut.pcap");
    std::fs::write(&f, &cut).unwrap();
    let out = Command::cargo_bin("kafka-pcap")
        .unwrap()
        .args(["--transactions", "--format", "text"])
        .arg(&f)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().find(|l| l.contains(" txn ")).unwrap();
    assert!(
        first.contains(" (begun before the capture: counted from its first message captured), "),
        "{text}"
    );
    // The whole capture's line does not.
    let out = Command::cargo_bin("kafka-pcap")
        .unwrap()
        .args(["--transactions", "--format", "text"])
        .arg(scenario("txn-v1-flow"))
        .output()
        .unwrap();
    assert!(!String::from_utf8(out.stdout)
        .unwrap()
        .contains("begun before"));
}

/// From a hostile review: a producer id and epoch serve two transactions in turn (transaction
/// version 1): an abort, then a commit whose marker fails for good. A filter that leaves out
/// the first keeps the second with its `marker_failed` (written before its record; once taken
/// for the first one's and left out with it), and each verdict names its transaction's first
/// frame.
#[test]
fn a_verdict_goes_with_its_own_transaction_of_a_shared_epoch() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/txn-hostile/verdict_same_epoch.pcap");
    let all = [
        "transaction",
        "marker_failed",
        "transaction",
        "hanging_transaction",
    ];
    assert_eq!(record_kinds(&[], &path), all);
    let second = ["transaction", "marker_failed", "hanging_transaction"];
    for args in [
        &["--errors"][..],
        &["--outcome", "committed"],
        &["--result", "commit"],
        &["--since", "+5s"],
    ] {
        assert_eq!(record_kinds(args, &path), second, "{args:?}");
    }
    assert_eq!(
        record_kinds(&["--outcome", "aborted"], &path),
        ["transaction"]
    );
    let out = cli(&["--transactions"], &path);
    let records: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let begins: Vec<u64> = records
        .iter()
        .map(|r| {
            r["transaction"]["begin"]["frame"]
                .as_u64()
                .or(r["anomaly"]["transaction"]["begin_frame"].as_u64())
                .unwrap()
        })
        .collect();
    // The abort's first message is its AddPartitionsToTxn in frame 14, the commit's in 22.
    assert_eq!(begins, [14, 22, 22, 22]);
}

/// From a hostile review: on a client's host no marker crosses the capture's wire, but a
/// read_committed consumer's Fetch responses whose last stable offset passed a committed
/// transaction's first batches prove its markers written: not hanging (once judged so, with a
/// broker move advised, exactly as when the offsets stay).
#[test]
fn a_last_stable_offset_past_a_transaction_proves_its_markers_written() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    let records = |args: &[&str], path: &Path| -> Vec<Value> {
        cli(args, path)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    // Each partition's `stable_past_frame`.
    let past = |t: &Value| -> Vec<Value> {
        t["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["stable_past_frame"].clone())
            .collect()
    };
    let passed = dir.join("lso_passed.pcap");
    assert_eq!(record_kinds(&[], &passed), ["transaction"]);
    let recs = records(&["--transactions", "--stats=json"], &passed);
    let t = &recs[0]["transaction"];
    assert_eq!(t["hanging"], Value::Null);
    assert_eq!(past(t), [json!(21), json!(21)]);
    let stats = &recs[1]["stats"]["transactions"];
    assert_eq!(stats["hanging"], 0);
    assert_eq!(stats["unjudged_partitions"], 0);
    assert!(
        cli(&["--transactions", "--format", "text"], &passed).contains(
            "no markers seen (2 written unseen: a read_committed consumer's last stable offset \
         passed them)"
        )
    );
    // No end seen, the offsets past the first batches all the same: ended unseen (aborted by
    // its coordinator past its timeout, or its EndTxn lost), not open and hanging (as it was).
    let no_end = dir.join("lso_passed_no_end.pcap");
    assert_eq!(record_kinds(&[], &no_end), ["transaction"]);
    let t = &records(&["--transactions"], &no_end)[0]["transaction"];
    assert_eq!(t["outcome"], "unknown");
    assert_eq!(t["hanging"], Value::Null);
    assert_eq!(past(t), [json!(19), json!(19)]);
    assert!(
        cli(&["--transactions", "--format", "text"], &no_end).contains(
            "UNKNOWN (ended unseen before its timeout: its EndTxn not captured, or a new \
             instance of its producer fenced it)"
        )
    );
    // From a hostile review: one partition's offset passing (ended unseen) while the other's
    // stays at its first batch past the timeout: that one hangs (once not judged at all).
    let one = dir.join("lso_unseen_one_of_two.pcap");
    assert_eq!(
        record_kinds(&[], &one),
        ["lso_stuck", "transaction", "hanging_transaction"]
    );
    let recs = records(&["--transactions"], &one);
    let t = &recs[1]["transaction"];
    assert_eq!(t["outcome"], "unknown");
    assert_eq!(t["hanging"], true);
    assert_eq!(past(t), [json!(19), Value::Null]);
    let verdict = recs[2]["anomaly"]["message"].as_str().unwrap();
    assert!(
        verdict.contains(": orders 1 (led by node 1) holds 2 transactional records")
            && verdict.contains("it ended unseen (a read_committed Fetch response in frame 19 ")
            // Its result unknown: both fixes, and the consumer's evidence that no marker came
            // (from a README-only trial: an abort was advised, and "may have come unseen").
            && verdict.contains("its end was decided unseen, commit or abort: kafka-transactions.sh describe tells which")
            && verdict.contains("kept the last_stable_offset at 200, on its batches, from frame 19 to frame 197: no marker came"),
        "{verdict}"
    );
    // Brokers named by host name in Metadata (Kubernetes): the leader's address cannot be told
    // from the Fetch's, and the offsets count (once never: open, not even hanging).
    let t = &records(&["--transactions"], &dir.join("lso_unseen_hostname.pcap"))[0];
    assert_eq!(t["transaction"]["outcome"], "unknown");
    assert_eq!(past(&t["transaction"]), [json!(19), json!(19)]);
    // A last stable offset past the first batch only (the producer's next transaction, joined
    // to it when its end was lost, wrote the second): not ended; open and hanging (once
    // "ended unseen").
    let merged = dir.join("lso_unseen_next_txn.pcap");
    assert_eq!(
        record_kinds(&[], &merged),
        ["lso_stuck", "transaction", "hanging_transaction"]
    );
    let t = &records(&["--transactions"], &merged)[1]["transaction"];
    assert_eq!(t["outcome"], "open");
    assert_eq!(past(t), [Value::Null]);
    // The consumer's offset given from before the batch on, passing it 3 s or 25 s after the
    // transaction began (timeout 10 s), then moving on each second: the first response to pass
    // it (frames 25 and 69; once 97, the last change before the capture's end); passed before
    // the timeout, the coordinator did not abort it on its timeout.
    for (name, frame, text) in [
        (
            "lso_unseen_watched_early.pcap",
            25,
            "UNKNOWN (ended unseen before its timeout: its EndTxn not captured, or a new \
             instance of its producer fenced it)",
        ),
        (
            "lso_unseen_watched_late.pcap",
            69,
            "UNKNOWN (ended unseen: aborted by its coordinator past its timeout, or its EndTxn \
             not captured)",
        ),
    ] {
        let path = dir.join(name);
        let recs = records(&["--transactions"], &path);
        let t = &recs.last().unwrap()["transaction"];
        assert_eq!(t["outcome"], "unknown", "{name}");
        assert_eq!(past(t), [json!(frame)], "{name}");
        let line = cli(&["--transactions", "--format", "text"], &path);
        assert!(line.contains(text), "{name}: {line}");
        // Its result unknown, nothing hangs: where to learn it.
        assert!(
            line.ends_with(
                "; its result: kafka-transactions.sh --bootstrap-server 127.0.0.1:9092 describe \
                 --transactional-id tx-a (it shows the id's latest transaction only)\n"
            ),
            "{name}: {line}"
        );
    }
    // The offsets staying at the first batches: hanging, as before.
    assert_eq!(
        record_kinds(&[], &dir.join("lso_stays.pcap")),
        [
            "lso_stuck",
            "lso_stuck",
            "transaction",
            "hanging_transaction",
            "hanging_transaction"
        ]
    );
}

/// From a hostile review: partitions an AddPartitionsToTxn response refused were never in the
/// transaction (Kafka adds none of a request's partitions when one fails): orders 1, refused
/// UNKNOWN_TOPIC_OR_PARTITION, is not listed (once it was, and the record waited to the
/// capture's end for its marker), and orders 0 joined by the request accepted later, not by
/// the refused one. The errors stay.
#[test]
fn partitions_an_add_partitions_to_txn_refused_did_not_join() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile/add_parts_refused.pcap");
    let out = cli(&["--transactions"], &path);
    let recs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 1, "{out}");
    // Written at its marker's response, not held to the capture's end.
    assert_eq!(recs[0]["frame"], 23);
    let t = &recs[0]["transaction"];
    let parts: Vec<Value> = t["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            json!([
                p["topic"],
                p["partition"],
                p["joined_frame"],
                p["marker_written"]
            ])
        })
        .collect();
    assert_eq!(parts, [json!(["orders", 0, 16, true])]);
    let errors: Vec<&Value> = t["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["error"])
        .collect();
    assert_eq!(
        errors,
        [
            &json!("OPERATION_NOT_ATTEMPTED"),
            &json!("UNKNOWN_TOPIC_OR_PARTITION")
        ]
    );
}

/// From a hostile review: an EndTxn accepted with no partition known (the capture begun in
/// its transaction, or its adds lost) waits for its markers: one transaction, committed by
/// its client, with the markers' partition (once two: the end's, "0 partitions", and a
/// "markers only" one).
#[test]
fn an_end_with_no_partition_known_takes_its_markers() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    for (file, begun_in_capture) in [
        ("end_then_markers_mid.pcap", false),
        ("end_then_markers_init.pcap", true),
    ] {
        let out = cli(&["--transactions"], &dir.join(file));
        let recs: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(recs.len(), 1, "{file}: {out}");
        let t = &recs[0]["transaction"];
        assert_eq!(t["outcome"], "committed", "{file}");
        assert_eq!(t["ended_by"], "client", "{file}");
        assert_eq!(t["requested"], "commit", "{file}");
        assert_eq!(t["begun_in_capture"], begun_in_capture, "{file}");
        let parts = t["partitions"].as_array().unwrap();
        assert_eq!(parts.len(), 1, "{file}");
        assert_eq!(parts[0]["marker"], "COMMIT", "{file}");
        assert_eq!(parts[0]["marker_written"], true, "{file}");
    }
}

/// From a hostile review: a commit whose EndTxn request (or only its `committed` flag) the
/// capture lost, then the producer's next transaction at the same epoch (under transaction
/// version 1) adding orders 0 again on the connection that lost the bytes: a client adds a
/// partition once per transaction, so two transactions, the first's end not captured (once
/// one, with a false `hanging_transaction` on orders 1 and both transactions' records on
/// orders 0).
#[test]
fn a_partition_added_again_after_a_loss_begins_the_next_transaction() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    for (file, second) in [
        ("end_request_lost_client.pcap", ("committed", 1, 3)),
        ("end_request_lost_local.pcap", ("committed", 1, 3)),
        ("end_flag_lost_client.pcap", ("committed", 1, 1)),
    ] {
        let out = cli(&["--transactions"], &dir.join(file));
        let txns: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r["event_type"] == "transaction")
            .collect();
        let seen: Vec<(String, usize, u64)> = txns
            .iter()
            .map(|r| {
                let t = &r["transaction"];
                let parts = t["partitions"].as_array().unwrap();
                (
                    t["outcome"].as_str().unwrap().to_string(),
                    parts.len(),
                    parts[0]["records"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("unknown".to_string(), 2, 3),
                (second.0.to_string(), second.1, second.2)
            ],
            "{file}: {out}"
        );
        assert_eq!(txns[0]["transaction"]["end_not_captured"], true, "{file}");
        // Only orders 0 of the second would hang, but on a client's host (no marker seen)
        // that is not judged: the second is `markers_not_captured` (where its coordinator
        // leads its partitions, nothing awaits a marker).
        let hanging: Vec<&str> = out
            .lines()
            .filter(|l| l.contains("\"kind\":\"hanging_transaction\""))
            .map(|l| {
                if l.contains("orders 1 ") {
                    "orders 1"
                } else {
                    "orders 0"
                }
            })
            .collect();
        assert_eq!(hanging, Vec::<&str>::new(), "{file}");
        assert_eq!(
            txns[1]["transaction"]["markers_not_captured"] == true,
            !file.contains("local"),
            "{file}"
        );
    }
}

/// From a README-only trial: `--errors`, what a person looking for what went wrong runs
/// first, keeps a transaction hanging at the capture's end with no error in its messages
/// (once it said no transaction matched), with its verdict.
#[test]
fn errors_keeps_a_hanging_transaction() {
    assert_eq!(
        record_kinds(&["--errors"], &scenario("txn-hanging")),
        ["transaction", "hanging_transaction"]
    );
    assert_eq!(
        record_kinds(&["--errors"], &scenario("txn-v1-flow")),
        Vec::<String>::new()
    );
    // An accepted commit whose records an admin's ABORT markers aborted: no message of it
    // has an error, but its client was told the opposite (from a README-only trial: `--errors`
    // once matched nothing here).
    assert_eq!(
        record_kinds(&["--errors"], &scenario("txn-admin-abort")),
        ["transaction", "accepted_commit_aborted"]
    );
}

/// On a client's host (no WriteTxnMarkers in the capture) a missing marker is not judged from
/// its absence: a read_committed consumer's last stable offset still short of the batches 10 s
/// after the end was asked for is what says no marker came (client_side_lso_held: the offset
/// at 100 from frame 21 to frame 97, the capture's end); one seen short only within those
/// 10 s (client_side_lso_early: the consumer then reads another topic) says nothing, and the
/// transaction is `markers_not_captured`, counted as not judged; nor does one held by another
/// broker than the leader (client_side_lso_other), and an admin client's own markers are no
/// broker's (client_side_lso_admin).
#[test]
fn on_a_clients_host_only_a_held_last_stable_offset_says_no_marker_came() {
    let held = hostile("client_side_lso_held.pcap");
    assert_eq!(
        record_kinds(&[], &held),
        ["transaction", "hanging_transaction"]
    );
    let recs = records_of(&[], &held);
    assert_eq!(recs[0]["transaction"]["hanging"], true);
    assert_eq!(recs[0]["transaction"]["markers_not_captured"], Value::Null);
    let m = recs[1]["anomaly"]["message"].as_str().unwrap();
    assert!(
        m.contains(
            "(the capture holds no WriteTxnMarkers from its coordinator, as on a client's host, \
             but read_committed Fetch responses kept the last_stable_offset at 100, on its \
             batches, from frame 21 to frame 97: no marker came)"
        ),
        "{m}"
    );
    let early = hostile("client_side_lso_early.pcap");
    assert_eq!(
        record_kinds(&[], &early),
        ["transaction (markers_not_captured)"]
    );
    // An operator's own `kafka-transactions.sh abort` of another producer, run on the host
    // while capturing, puts an admin client's WriteTxnMarkers in the capture: not its
    // coordinator's
    // (from a README-only trial: once that made the capture's missing markers count, and
    // tx-a HANGING with advice to restart its coordinator).
    assert_eq!(
        record_kinds(&[], &hostile("client_side_lso_admin.pcap")),
        ["transaction", "transaction (markers_not_captured)"]
    );
    // From a hostile review: an admin client with a client id of its own (`ops-tool`) is no
    // more its coordinator than one named `adminclient-N` (its address is no broker's).
    assert_eq!(
        record_kinds(&[], &hostile("client_side_admin_other_id.pcap")),
        [
            "transaction",
            "transaction",
            "transaction",
            "transaction (markers_not_captured)"
        ]
    );
    // From a hostile review: an offset held below tx-a's first batch is another transaction's
    // (a long one open at 90: `slow`; one begun before the capture, at 50: `before`), whatever
    // tx-a's marker did (once tx-a HANGING, with advice to restart its coordinator).
    for name in [
        "client_side_lso_other_holder_slow.pcap",
        "client_side_lso_other_holder_before.pcap",
    ] {
        let kinds = record_kinds(&[], &hostile(name));
        assert_eq!(
            kinds.last().map(String::as_str),
            Some("transaction (markers_not_captured)"),
            "{name}: {kinds:?}"
        );
        assert!(!kinds.iter().any(|k| k == "hanging_transaction"), "{name}");
    }
    // From a hostile review: a host running a producer and broker 0: tx-a's coordinator is
    // node 0, whose markers show; tx-b's is node 2, whose markers to node 1 go between two
    // other hosts: its missing marker is not judged (once HANGING: one coordinator's markers
    // made the whole capture count as showing them all).
    let colocated = records_of(&[], &hostile("colocated_coordinators.pcap"));
    let judged: Vec<(&str, bool)> = colocated
        .iter()
        .filter(|r| r["event_type"] == "transaction")
        .map(|r| {
            (
                r["transaction"]["transactional_id"].as_str().unwrap(),
                r["transaction"]["markers_not_captured"] == true,
            )
        })
        .collect();
    assert_eq!(judged, [("tx-a", false), ("tx-b", true)]);
    assert!(colocated.iter().all(|r| r["event_type"] == "transaction"));
    // From a hostile review: a commit over orders 0 (held: hanging) and orders 1 (no
    // evidence): HANGING, its verdict naming orders 0, and no "not judged" beside it (once
    // both, and `--stats` counted 2 partitions not judged).
    let two = hostile("client_side_two_parts.pcap");
    assert_eq!(
        record_kinds(&[], &two),
        ["transaction", "hanging_transaction"]
    );
    let recs = records_of(&[], &two);
    assert!(recs[1]["anomaly"]["message"]
        .as_str()
        .unwrap()
        .contains(": orders 0 (led by node 1) holds 3 transactional records"));
    let text = cli(&["--transactions", "--format", "text"], &two);
    assert!(!text.contains("not judged"), "{text}");
    // Held as long, but by another broker than the leader Metadata named by its address.
    assert_eq!(
        record_kinds(&[], &hostile("client_side_lso_other.pcap")),
        ["transaction (markers_not_captured)"]
    );
    let stats = cli(&["--transactions", "--stats=json"], &early);
    let stats: Value = serde_json::from_str(stats.lines().last().unwrap()).unwrap();
    assert_eq!(stats["stats"]["transactions"]["hanging"], 0);
    assert_eq!(stats["stats"]["transactions"]["unjudged_partitions"], 1);
    assert_eq!(
        stats["stats"]["transactions"]["unjudged_markers_not_captured"],
        1
    );
    let err = stderr_of(&["-q", "--transactions", "--stats=text"], &early);
    assert!(
        err.contains(
            "hanging 0 (0 partitions with no marker; 1 partition not judged: transactional \
             data, no marker seen written, and the capture holds no WriteTxnMarkers from their \
             coordinator (a client's host))"
        ),
        "{err}"
    );
}

/// From a second hostile review of the rules above: another cluster's offsets for a topic of
/// the same name, or the leader's seen before the Produce, prove nothing (the commit is not
/// settled: on this client's host, with no marker traffic, its hanging is left unjudged, where
/// such offsets once cleared it); an AddPartitionsToTxn asked again after its answer was lost, before any batch, is
/// the same transaction's; an end with no partition known that got no marker is written at
/// its EndTxn response, and `--since` judges it there.
#[test]
fn the_rules_on_unseen_markers_and_lost_ends_keep_to_their_evidence() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    for file in ["lso_other_cluster.pcap", "lso_before_produce.pcap"] {
        let kinds = record_kinds(&[], &dir.join(file));
        assert_eq!(kinds, ["transaction (markers_not_captured)"], "{file}");
    }
    let out = cli(&["--transactions"], &dir.join("add_retry_loss.pcap"));
    let txns: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["event_type"] == "transaction")
        .collect();
    assert_eq!(txns.len(), 1, "{out}");
    assert_eq!(txns[0]["transaction"]["outcome"], "committed");
    let end_only = dir.join("end_only.pcap");
    let out = cli(&["--transactions"], &end_only);
    let r: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(r["frame"], r["transaction"]["end_response"]["frame"]);
    assert_eq!(r["frame"], 11);
    assert!(record_kinds(&["--since", "+30s"], &end_only).is_empty());
    assert_eq!(
        record_kinds(&["--until", "+1s"], &end_only),
        ["transaction"]
    );
}

/// From a hostile review: a group's `__consumer_offsets` partition is Kafka's
/// `Utils.abs(groupId.hashCode()) % partitions` ("my-group", hash -1906497762: 12 of 50; once
/// 36, the hash with its sign bit cleared), and a group's offsets committed there by an accepted
/// TxnOffsetCommit are data its marker must settle: with no marker for 40 s it hangs (once no
/// verdict: no batch there), and the `--stats` count says so.
#[test]
fn a_groups_offsets_partition_is_kafkas_and_hangs_without_its_marker() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    let transaction =
        |name: &str| -> Value { records_of(&[], &dir.join(name))[0]["transaction"].clone() };
    // (topic, partition, leader, offsets_committed, marker_written, marker_local) of each.
    let parts = |t: &Value| -> Vec<(String, i64, i64, bool, bool, bool)> {
        partitions(t)
            .iter()
            .map(|p| {
                (
                    p["topic"].as_str().unwrap().to_string(),
                    p["partition"].as_i64().unwrap(),
                    p["leader"].as_i64().unwrap(),
                    p["offsets_committed"] == true,
                    p["marker_written"] == true,
                    p["marker_local"] == true,
                )
            })
            .collect()
    };
    let orders = ("orders".to_string(), 0, 1, false, true, false);
    let offsets = |partition, leader, written, local| {
        let t = "__consumer_offsets".to_string();
        (t, partition, leader, true, written, local)
    };
    let t = transaction("offsets_written_neg.pcap");
    assert_eq!(parts(&t), [orders.clone(), offsets(12, 2, true, false)]);
    assert_eq!(t["hanging"], Value::Null);
    let t = transaction("offsets_local_neg.pcap");
    assert_eq!(parts(&t), [orders.clone(), offsets(12, 0, false, true)]);
    assert_eq!(t["hanging"], Value::Null);
    // (Also where no AddOffsetsToTxn joined the partition: transaction version 2 sends none,
    // or the partition count came after it: the accepted TxnOffsetCommit joins it.)
    for (name, group, partition, frame) in [
        ("offsets_missing_neg.pcap", "my-group", 12, 22),
        ("offsets_missing_pos.pcap", "etl", 15, 22),
        ("offsets_tv2.pcap", "my-group", 12, 18),
        ("offsets_tv1late.pcap", "my-group", 12, 24),
    ] {
        let path = dir.join(name);
        assert_eq!(
            record_kinds(&[], &path),
            ["transaction", "hanging_transaction"],
            "{name}"
        );
        let t = transaction(name);
        assert_eq!(
            parts(&t),
            [orders.clone(), offsets(partition, 2, false, false)],
            "{name}"
        );
        assert_eq!(t["hanging"], true, "{name}");
        let text = cli(&["--transactions", "--format", "text"], &path);
        assert!(
            text.contains("1 marker written, 1 with data and no marker seen, HANGING")
                && text.contains(&format!(
                    "__consumer_offsets {partition} (led by node 2) holds the offsets of group \
                     {group} its TxnOffsetCommit committed in frame {frame} and got no marker"
                ))
                && text.contains("get UNSTABLE_OFFSET_COMMIT"),
            "{name}: {text}"
        );
        let stats = cli(&["--transactions", "--stats=json"], &path);
        let stats: Value = serde_json::from_str(stats.lines().last().unwrap()).unwrap();
        assert_eq!(stats["stats"]["transactions"]["hanging"], 1, "{name}");
    }
}

/// From a hostile review: brokers named by host name in Metadata and FindCoordinator
/// (Kubernetes, managed clusters) are known by the requests they accepted (the coordinator by
/// its marker sender, `broker-0-txn-marker-sender`, or by an EndTxn it accepted after a
/// FindCoordinator for the transactional id), and an IPv6 address in another form than the packets'
/// (`fd00:0:0:0:0:0:0:1`, `FD00::1`) is the same address: the partition whose marker never
/// came hangs, exactly as where Metadata gives IP addresses (once no verdict: the coordinator's
/// node unknown, and `--stats` said none hung).
#[test]
fn brokers_named_by_host_name_are_known_by_what_they_accepted() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    let out = |name: &str| cli(&["--transactions"], &dir.join(name));
    let text = |name: &str| cli(&["--transactions", "--format", "text"], &dir.join(name));
    // (The JSON differs in a marker broker's node id: a leader's address is not learned from
    // the partitions it accepted, as the capture's Metadata may be older.)
    assert_eq!(text("broker_names_host.pcap"), text("broker_names_ip.pcap"));
    assert_eq!(
        out("broker_names_v6_long.pcap"),
        out("broker_names_v6_upper.pcap")
    );
    for (name, kinds, hanging) in [
        (
            "broker_names_host.pcap",
            &["transaction", "hanging_transaction"][..],
            &["orders 2"][..],
        ),
        // A client's host: no WriteTxnMarkers, so whether they hang is not judged (the
        // coordinator, known by the EndTxn it accepted, leads neither).
        (
            "broker_names_host_client.pcap",
            &["transaction (markers_not_captured)"],
            &[],
        ),
        (
            "broker_names_v6_long.pcap",
            &["transaction", "hanging_transaction"],
            &["orders 2"],
        ),
    ] {
        let path = dir.join(name);
        assert_eq!(record_kinds(&[], &path), kinds, "{name}");
        let recs = records_of(&[], &path);
        let t = &recs[0]["transaction"];
        assert_eq!(t["coordinator"]["node_id"], 0, "{name}");
        let judged = if hanging.is_empty() {
            "markers_not_captured"
        } else {
            "hanging"
        };
        assert_eq!(t[judged], true, "{name}");
        for (r, part) in recs[1..].iter().zip(hanging) {
            let m = r["anomaly"]["message"].as_str().unwrap();
            assert!(
                m.contains(&format!(": {part} (led by node ")),
                "{name}: {m}"
            );
        }
    }
    // The IPv6 coordinator's own partition (orders 1) is marked locally, not awaited.
    let t: Value =
        serde_json::from_str(out("broker_names_v6_long.pcap").lines().next().unwrap()).unwrap();
    let local: Vec<bool> = t["transaction"]["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["marker_local"] == true)
        .collect();
    assert_eq!(local, [false, true, false]);
}

/// From a hostile review: a stream processor's long transaction (its InitProducerId, with its
/// timeout, before the capture) holds a read_committed consumer for 200 s before it commits:
/// the `lso_stuck` said at 60 s (Kafka's default timeout) says that the holder's own timeout
/// was not captured and may be longer (it claimed "the largest transaction timeout seen",
/// none being seen).
#[test]
fn a_stall_behind_a_transaction_of_unknown_timeout_says_so() {
    let path = hostile("long_txn_commit.pcap");
    assert_eq!(record_kinds(&[], &path), ["lso_stuck", "transaction"]);
    let out = cli(&["--transactions"], &path);
    let v: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let m = v["anomaly"]["message"].as_str().unwrap();
    assert!(
        m.contains("longer than Kafka's default transaction.timeout.ms, 60 s (60000 ms;")
            && m.contains("the transaction of producer 4000 epoch 3 (sink-0) holds it")
            && m.ends_with(
                "; its holder's own timeout was not captured (its producer's InitProducerId \
                 came before the capture) and may be longer, up to the broker's \
                 transaction.max.timeout.ms, 15 min by default: a long transaction, as a \
                 stream processor's, may still end"
            ),
        "{m}"
    );
    let v: Value = serde_json::from_str(out.lines().nth(1).unwrap()).unwrap();
    assert_eq!(v["transaction"]["outcome"], "committed");
}

/// Transaction version 2 bumps the producer epoch at every end: a transaction at the epoch
/// after an end the capture saw asked for (EndTxn v5, its response lost) or marked (its
/// markers carry the new epoch) began in the capture: open, not "begun before the capture".
#[test]
fn a_tv2_transaction_after_an_end_seen_began_in_the_capture() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    for name in ["tv2_end_lost.pcap", "tv2_end_markers_only.pcap"] {
        let txns: Vec<Value> = records_of(&[], &dir.join(name))
            .into_iter()
            .filter(|v| v["event_type"] == "transaction")
            .map(|v| v["transaction"].clone())
            .collect();
        let summary: Vec<(i64, &str, bool)> = txns
            .iter()
            .map(|t| {
                (
                    t["producer_epoch"].as_i64().unwrap(),
                    t["outcome"].as_str().unwrap(),
                    t["begun_in_capture"] == true,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [(5, "committed", true), (6, "open", true)],
            "{name}"
        );
    }
}

/// Produce v13 writes topic ids; with no Metadata in the capture (the client fetched it
/// before), a marker naming the one topic the transaction lacks names its one unnamed topic id:
/// one partition, marked (once two: the id's, "with data and no marker seen", and the
/// marker's). Two ids and two names cannot be told apart: they stay apart, and the line says
/// the markers seen may be theirs.
#[test]
fn a_topic_id_no_metadata_named_is_named_by_its_marker() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    let parts = |name: &str| -> Vec<(Value, Value, bool)> {
        let out = cli(&["--transactions"], &dir.join(name));
        let v: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        partitions(&v["transaction"])
            .iter()
            .map(|p| {
                (
                    p["topic"].clone(),
                    p["topic_id"].clone(),
                    p["marker_written"] == true,
                )
            })
            .collect()
    };
    let id = json!("AAAAAAAAAAAAAAAAAAAATQ");
    assert_eq!(
        parts("topic_id_meta.pcap"),
        [(json!("orders"), id.clone(), true)]
    );
    assert_eq!(
        parts("topic_id_nometa.pcap"),
        [(json!("orders"), id.clone(), true)]
    );
    let two = parts("topic_id_two_ids.pcap");
    assert_eq!(two.len(), 4);
    assert_eq!(two[0], (Value::Null, id, false));
    let text = cli(
        &["--transactions", "--format", "text"],
        &dir.join("topic_id_two_ids.pcap"),
    );
    assert!(
        text.contains(
            "2 markers written, 2 with data known by topic id only (no Metadata in the capture \
             names them: their markers may be among those seen)"
        ),
        "{text}"
    );
}

/// From a hostile review: every broker behind one load balancer's address (Metadata naming
/// kafka-N.example.com, every connection to 10.9.9.9:9092): the address is no one node's, so
/// tx-b's coordinator is the node its own FindCoordinator named (2), which marks its orders 2
/// locally (once node 0, learned at that address from tx-a's EndTxn, and orders 0 was "local").
#[test]
fn brokers_behind_one_address_are_not_one_node() {
    let path = hostile("broker_names_lb.pcap");
    let out = cli(&["--transactions"], &path);
    let t: Value = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["transaction"]["transactional_id"] == "tx-b")
        .unwrap();
    let t = &t["transaction"];
    assert_eq!(t["coordinator"]["node_id"], 2);
    let local: Vec<(i64, bool)> = partitions(t)
        .iter()
        .map(|p| (p["partition"].as_i64().unwrap(), p["marker_local"] == true))
        .collect();
    assert_eq!(local, [(0, false), (2, true)]);
}

/// From a hostile review: a deposed coordinator's stale re-send of a transaction version 2
/// transaction's markers (an older epoch) does not move back the epoch the producer's next
/// transaction begins at: the transaction at epoch 7, open 100 s past its 10 s timeout, hangs
/// (once "begun before the capture", unknown, no verdict).
#[test]
fn a_stale_tv2_marker_resend_does_not_move_the_next_epoch_back() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    for name in [
        "tv2_stale_resend_refused.pcap",
        "tv2_stale_resend_noanswer.pcap",
    ] {
        let out = cli(&["--transactions"], &dir.join(name));
        let last: Value = out
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .rfind(|v| v["event_type"] == "transaction")
            .unwrap();
        let t = &last["transaction"];
        assert_eq!(t["producer_epoch"], 7, "{name}");
        assert_eq!(t["outcome"], "open", "{name}");
        assert_eq!(t["begun_in_capture"], true, "{name}");
        assert_eq!(t["hanging"], true, "{name}");
    }
}
