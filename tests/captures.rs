//! The project's own captures (`captures/*.pcap`, made on loopback by `captures/make.sh`):
//! 1. the output equals the golden NDJSON file beside each capture (regenerate on purpose with
//!    `KAFKA_PCAP_BLESS=1 cargo test --test captures`), the synthetic TCP-loss captures
//!    `tcp-*.pcap` included;
//! 2. the decoded bodies (WriteTxnMarkers, and with `--all-apis` every decoded API) equal
//!    `<name>.expected.json`, which the capture generator wrote from the values it encoded with
//!    another implementation (the `kafka-protocol` crate for WriteTxnMarkers v1 and the
//!    `api-*.pcap` captures of `examples/make_api_captures.rs`, a hand encoder for v0 and v2);
//! 3. the `--all-apis` output of the `api-*.pcap` captures equals `<name>.all-apis.ndjson`.

mod common;

use common::check_golden;
use kafka_pcap::output::NdjsonWriter;
use kafka_pcap::{run, Config};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn captures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    v.sort();
    assert!(v.len() >= 3, "captures/ holds too few captures: {v:?}");
    v
}

fn output(path: &Path) -> String {
    output_with(path, &Config::default())
}

fn output_with(path: &Path, config: &Config) -> String {
    let f = std::fs::File::open(path).unwrap();
    let mut w = NdjsonWriter::new(Vec::new(), None);
    run(f, config, &mut w).unwrap();
    String::from_utf8(w.into_inner().unwrap()).unwrap()
}

fn all_apis() -> Config {
    Config {
        all_apis: true,
        ..Config::default()
    }
}

#[test]
fn golden_outputs() {
    for cap in captures() {
        check_golden(&cap.with_extension("ndjson"), &output(&cap));
    }
}

/// The captures of decoded APIs other than WriteTxnMarkers: their records under `--all-apis`,
/// and nothing of them in the default output (only the WriteTxnMarkers exchange each carries).
#[test]
fn all_apis_golden_outputs() {
    let mut n = 0;
    for cap in captures() {
        let name = cap.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("api-") {
            continue;
        }
        n += 1;
        let got = output_with(&cap, &all_apis());
        check_golden(&cap.with_extension("all-apis.ndjson"), &got);
        for line in output(&cap).lines() {
            let r: Value = serde_json::from_str(line).unwrap();
            assert_eq!(r["kafka"]["api_name"], "WriteTxnMarkers", "{name}: {line}");
        }
    }
    assert!(n >= 1, "no api-*.pcap capture");
}

#[test]
fn bodies_equal_what_the_generator_encoded() {
    for cap in captures() {
        let expected = cap.with_extension("expected.json");
        let Ok(text) = std::fs::read_to_string(&expected) else {
            continue;
        };
        let want: Vec<Value> = serde_json::from_str(&text).unwrap();
        let got: Vec<Value> = output_with(&cap, &all_apis())
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r["event_type"] == "kafka" && !r["kafka"]["body"].is_null())
            // The WriteTxnMarkers captures' other frames (Produce, Fetch, Metadata) carry
            // filler, not what a generator wrote down; the api-* captures' expected bodies cover
            // every decoded message in them.
            .filter(|r| {
                let name = cap.file_name().unwrap().to_string_lossy();
                name.starts_with("api-") || r["kafka"]["api_key"] == 27
            })
            .map(|r| serde_json::json!({"message": r["kafka"]["message"], "body": r["kafka"]["body"]}))
            .collect();
        // Generator order is request, response, request, ...; pipelined requests complete
        // before their responses, so compare requests and responses each in order.
        for kind in ["request", "response"] {
            let pick = |v: &[Value]| -> Vec<Value> {
                v.iter().filter(|r| r["message"] == kind).cloned().collect()
            };
            assert_eq!(pick(&got), pick(&want), "{}: {kind}s", cap.display());
        }
        assert!(!want.is_empty());
    }
}

/// The captures made on loopback (those with an `.expected.json`; not the synthetic loss and
/// malformed cases) are clean: every record is a WriteTxnMarkers message, every response paired.
#[test]
fn every_response_is_paired_and_nothing_is_anomalous() {
    for cap in captures() {
        if !cap.with_extension("expected.json").exists() {
            continue;
        }
        let out = output(&cap);
        for line in out.lines() {
            let r: Value = serde_json::from_str(line).unwrap();
            assert_eq!(r["event_type"], "kafka", "{}: {line}", cap.display());
            let k = &r["kafka"];
            if k["message"] == "response" {
                assert!(k["request_frame"].as_u64().unwrap() < r["frame"].as_u64().unwrap());
                assert!(k["latency_us"].as_i64().unwrap() >= 0);
            }
        }
    }
}

#[test]
fn nanosecond_capture_keeps_nine_digits() {
    let cap = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/v0-v2-19092-nanosec.pcap");
    for line in output(&cap).lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let ts = r["ts"].as_str().unwrap();
        // 2026-11-29T21:22:03.404994690Z
        assert_eq!(ts.len(), 30, "{ts}");
        assert!(r["src_port"] == 19092 || r["dest_port"] == 19092, "{line}");
    }
}

/// The in-memory reader (`run_slice`, for fuzzing and library users) and the streaming reader
/// give the same records, also on every truncation of a capture.
#[test]
fn slice_reader_equals_stream_reader() {
    for cap in captures() {
        let bytes = std::fs::read(&cap).unwrap();
        for cut in [bytes.len(), bytes.len() - 1, bytes.len() / 2, 100, 40, 24] {
            let data = &bytes[..cut.min(bytes.len())];
            let mut a = NdjsonWriter::new(Vec::new(), None);
            let ra = run(data, &Config::default(), &mut a).map(|s| s.packets);
            let mut b = NdjsonWriter::new(Vec::new(), None);
            let rb = kafka_pcap::run_slice(data, &Config::default(), &mut b).map(|s| s.packets);
            assert_eq!(ra.ok(), rb.ok(), "{} cut at {cut}", cap.display());
            assert_eq!(
                a.into_inner().unwrap(),
                b.into_inner().unwrap(),
                "{} cut at {cut}",
                cap.display()
            );
        }
    }
}
