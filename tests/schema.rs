//! `schema/records.schema.json` (JSON Schema 2020-12) describes every record kafka-pcap writes.
//!
//! Checked against every golden in `captures/`, against the binary's output on every project
//! capture in each mode (default, `--pair`, `--all-apis`, `--stats=json`, several captures at
//! once), against the public captures in ../shared where present (skipped with a message
//! otherwise), and against hand-broken records that it must reject (so the schema is not
//! vacuous).

use assert_cmd::Command;
use jsonschema::Validator;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn validator() -> Validator {
    let text = std::fs::read_to_string(root().join("schema/records.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the schema is a valid JSON Schema")
}

/// Panics with every violation of every line of `ndjson` (named `what`); returns the lines.
fn check_lines(v: &Validator, what: &str, ndjson: &str) -> usize {
    let mut n = 0;
    for (i, line) in ndjson.lines().enumerate() {
        let rec: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{what} line {}: not JSON: {e}", i + 1));
        let errors: Vec<String> = v
            .iter_errors(&rec)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{what} line {}: {line}\n{}",
            i + 1,
            errors.join("\n")
        );
        n += 1;
    }
    n
}

fn captures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("captures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pcap" || x == "pcapng"))
        .collect();
    v.sort();
    assert!(
        v.len() >= 20,
        "expected the project's captures, found {v:?}"
    );
    v
}

fn run(args: &[&str], files: &[&Path]) -> String {
    let out = Command::cargo_bin("kafka-pcap")
        .unwrap()
        .args(args)
        .args(files)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "{args:?} {files:?}: {:?}",
        out.status
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_golden_matches_the_schema() {
    let v = validator();
    let mut lines = 0;
    let mut files = 0;
    for e in std::fs::read_dir(root().join("captures")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "ndjson") {
            lines += check_lines(
                &v,
                &p.display().to_string(),
                &std::fs::read_to_string(&p).unwrap(),
            );
            files += 1;
        }
    }
    assert!(
        files >= 20 && lines >= 100,
        "{files} goldens, {lines} lines"
    );
}

#[test]
fn every_mode_matches_the_schema() {
    let v = validator();
    let caps = captures();
    let mut kinds = std::collections::BTreeSet::new();
    for c in &caps {
        for args in [
            &[][..],
            &["--pair"],
            &["--all-apis"],
            &["--stats=json"],
            &["--pair", "--all-apis"],
            &["--transactions"],
            &["--transactions", "--all-apis", "--pair"],
        ] {
            let out = run(args, &[c]);
            check_lines(&v, &format!("{args:?} {}", c.display()), &out);
            for l in out.lines() {
                let r: Value = serde_json::from_str(l).unwrap();
                kinds.insert(r["event_type"].as_str().unwrap().to_string());
            }
        }
    }
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        ["anomaly", "exchange", "kafka", "stats", "transaction"]
    );
    // The transaction view's hostile cases (partial commits, replaced markers, hanging).
    let mut hostile: Vec<PathBuf> = std::fs::read_dir(root().join("tests/data/txn-hostile"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
        .collect();
    hostile.sort();
    assert!(hostile.len() >= 20, "{hostile:?}");
    let mut lines = 0;
    for c in &hostile {
        let out = run(&["--transactions"], &[c]);
        lines += check_lines(&v, &c.display().to_string(), &out);
    }
    // mem_leaders_small has a Metadata response only: no record.
    assert!(lines > 150, "{lines}");
    // Several captures at once: every record names its capture.
    let all: Vec<&Path> = caps.iter().map(PathBuf::as_path).collect();
    let out = run(&["--stats=json"], &all);
    assert!(check_lines(&v, "all captures", &out) > 100);
    assert!(out
        .lines()
        .all(|l| serde_json::from_str::<Value>(l).unwrap()["capture"].is_string()));
}

#[test]
fn public_captures_match_the_schema() {
    let d = root().join("../shared/captures/public");
    if !d.is_dir() {
        eprintln!(
            "SKIPPED: {} is absent (fresh clone without ../shared)",
            d.display()
        );
        return;
    }
    let v = validator();
    let mut stack = vec![d];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .is_some_and(|x| x == "pcap" || x == "pcapng" || x == "cap")
            {
                check_lines(&v, &p.display().to_string(), &run(&["--all-apis"], &[&p]));
                let txns = run(&["--transactions"], &[&p]);
                check_lines(&v, &format!("--transactions {}", p.display()), &txns);
                files += 1;
            }
        }
    }
    assert!(files > 0);
}

/// A valid request record, then the same with one thing wrong: each must be rejected.
#[test]
fn the_schema_rejects_broken_records() {
    let v = validator();
    let good = json!({"ts":"2026-01-01T00:00:00.003000Z","frame":4,"stream":0,
        "src_ip":"127.0.0.1","src_port":40000,"dest_ip":"127.0.0.1","dest_port":9092,
        "community_id":"1:coc1A4PdMYhIcvGhao5+xNBWRuI=",
        "event_type":"kafka","kafka":{"message":"request","api_key":27,"api_name":"WriteTxnMarkers",
        "api_version":1,"header_version":2,"correlation_id":1,"client_id":"","size":37,
        "body":{"markers":[{"producer_id":0,"producer_epoch":0,"transaction_result":"ABORT",
        "topics":[{"name":"","partition_indexes":[0]}],"coordinator_epoch":0}]}}});
    assert!(v.is_valid(&good), "{:?}", v.validate(&good).err());
    let breaks: [(&str, Value); 10] = [
        ("/community_id", json!("2:coc1A4PdMYhIcvGhao5+xNBWRuI=")),
        ("/kafka/body/markers/0/transaction_result", json!("MAYBE")),
        ("/kafka/body/markers/0/producer_epoch", json!(40000)),
        ("/kafka/api_version", json!(3)),
        ("/kafka/api_name", json!("WriteTxnMarker")),
        ("/kafka/header_version", json!(0)),
        ("/ts", json!("2026-01-01 00:00:00Z")),
        ("/frame", json!(0)),
        ("/src_ip", json!("localhost")),
        ("/kafka/latency_us", json!(5)),
    ];
    for (ptr, val) in breaks {
        let mut bad = good.clone();
        let (parent, key) = ptr.rsplit_once('/').unwrap();
        bad.pointer_mut(parent).unwrap()[key] = val.clone();
        assert!(!v.is_valid(&bad), "{ptr} = {val} was accepted");
    }
    let mut bad = good.clone();
    bad["kafka"]["body"]["markers"][0]
        .as_object_mut()
        .unwrap()
        .remove("coordinator_epoch");
    assert!(
        !v.is_valid(&bad),
        "a marker without coordinator_epoch was accepted"
    );
    let mut bad = good.clone();
    bad["event_type"] = json!("anomaly");
    assert!(
        !v.is_valid(&bad),
        "a kafka body under event_type anomaly was accepted"
    );
    let anomaly = json!({"ts":"2026-01-01T00:00:00.003000Z","frame":4,"event_type":"anomaly",
        "anomaly":{"kind":"not_a_kind","layer":"kafka","message":"x"}});
    assert!(
        !v.is_valid(&anomaly),
        "an unknown anomaly kind was accepted"
    );
    // An exchange's bodies are those of its API: an EndTxn exchange passes, the same bodies
    // under WriteTxnMarkers' key, or a body for an API that is not decoded, do not.
    let exchange = json!({"ts":"2026-01-01T00:00:00.001000Z","frame":5,"stream":0,
        "src_ip":"127.0.0.1","src_port":40000,"dest_ip":"127.0.0.1","dest_port":9092,
        "community_id":"1:coc1A4PdMYhIcvGhao5+xNBWRuI=",
        "event_type":"exchange","exchange":{"api_key":26,"api_name":"EndTxn","api_version":0,
        "correlation_id":1,"client_id":"p","request_frame":4,
        "request_ts":"2026-01-01T00:00:00.000750Z",
        "request":{"transactional_id":"t","producer_id":1,"producer_epoch":0,"committed":true},
        "response_frame":5,"response_ts":"2026-01-01T00:00:00.001000Z","latency_us":250,
        "response":{"throttle_time_ms":0,"error_code":0,"error":"NONE"}}});
    assert!(v.is_valid(&exchange), "{:?}", v.validate(&exchange).err());
    for (key, name) in [(27, "WriteTxnMarkers"), (0, "Produce")] {
        let mut bad = exchange.clone();
        bad["exchange"]["api_key"] = json!(key);
        bad["exchange"]["api_name"] = json!(name);
        assert!(
            !v.is_valid(&bad),
            "EndTxn bodies under {name} were accepted"
        );
    }
}

/// The closed list of anomaly kinds in the code (`vocab::AnomalyKind`) is the one the README's
/// table and the schema's `kind` enum give, with the same layers, in the same order.
#[test]
fn anomaly_kinds_match_readme_and_schema() {
    use kafka_pcap::vocab::AnomalyKind;
    let code: Vec<(String, String)> = AnomalyKind::ALL
        .iter()
        .map(|k| {
            let layer = serde_json::to_value(k.layer()).unwrap();
            (k.as_str().to_string(), layer.as_str().unwrap().to_string())
        })
        .collect();

    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let table = readme
        .split("Anomaly kinds:")
        .nth(1)
        .expect("README has an 'Anomaly kinds:' table");
    let mut documented = Vec::new();
    for line in table.lines().skip_while(|l| !l.starts_with('|')).skip(2) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        for kind in cells[1].split(',') {
            let kind = kind.trim().trim_matches('`');
            documented.push((kind.to_string(), cells[2].to_string()));
        }
    }
    assert_eq!(
        documented, code,
        "README's anomaly table against AnomalyKind::ALL"
    );

    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("schema/records.schema.json")).unwrap(),
    )
    .unwrap();
    let kinds: Vec<String> = schema["$defs"]["anomaly"]["properties"]["kind"]["enum"]
        .as_array()
        .expect("the schema's anomaly kind enum")
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let names: Vec<String> = code.into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        kinds, names,
        "schema's anomaly kind enum against AnomalyKind::ALL"
    );
}
