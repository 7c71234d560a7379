//! The `--stats` summary of a run.
//!
//! Input: every record a run writes ([`Stats::record`]) and the run's [`Summary`].
//! Output: the summary as text (for standard error) or as a final `"event_type": "stats"`
//! JSON record: packets and bytes read, TCP streams, Kafka frames per API, WriteTxnMarkers per
//! version, COMMIT/ABORT counts, markers per producer id (top 20), error codes by name,
//! latency percentiles per API (microseconds), anomalies by kind.

use crate::kafka::api::api_name;
use crate::kafka::apis::write_txn_markers::TransactionResult;
use crate::kafka::apis::Body;
use crate::kafka::event::{Event, Record};
use crate::Summary;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};

/// What `--stats` counts beside the run's [`Summary`].
#[derive(Debug, Default, Clone)]
pub struct Stats {
    wtm_requests_by_version: BTreeMap<i16, u64>,
    wtm_responses_by_version: BTreeMap<i16, u64>,
    commit: u64,
    abort: u64,
    markers_by_producer: HashMap<i64, u64>,
    errors: BTreeMap<String, u64>,
    anomalies: BTreeMap<&'static str, u64>,
}

impl Stats {
    /// WriteTxnMarkers requests and responses seen (responses inferred without their request
    /// included).
    pub fn write_txn_markers_messages(&self) -> u64 {
        self.wtm_requests_by_version.values().sum::<u64>()
            + self.wtm_responses_by_version.values().sum::<u64>()
    }

    /// Counts one record.
    pub fn record(&mut self, rec: &Record) {
        match &rec.event {
            Event::Anomaly(a) => *self.anomalies.entry(a.kind.as_str()).or_default() += 1,
            Event::Kafka(k) => match &k.body {
                Body::WriteTxnMarkersRequest(b) => {
                    *self
                        .wtm_requests_by_version
                        .entry(k.api_version)
                        .or_default() += 1;
                    for m in &b.markers {
                        match m.transaction_result {
                            TransactionResult::Commit => self.commit += 1,
                            TransactionResult::Abort => self.abort += 1,
                        }
                        *self.markers_by_producer.entry(m.producer_id).or_default() += 1;
                    }
                }
                Body::WriteTxnMarkersResponse(b) => {
                    *self
                        .wtm_responses_by_version
                        .entry(k.api_version)
                        .or_default() += 1;
                    for p in b
                        .markers
                        .iter()
                        .flat_map(|m| &m.topics)
                        .flat_map(|t| &t.partitions)
                    {
                        let name = p
                            .error
                            .map_or_else(|| p.error_code.to_string(), str::to_string);
                        *self.errors.entry(name).or_default() += 1;
                    }
                }
                _ => {}
            },
        }
    }

    /// The 20 producer ids with the most markers, as `(producer_id, markers)`, most first
    /// (ties by lower producer id).
    fn top_producers(&self) -> Vec<(i64, u64)> {
        let mut producers: Vec<(i64, u64)> = self
            .markers_by_producer
            .iter()
            .map(|(p, n)| (*p, *n))
            .collect();
        producers.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        producers.truncate(20);
        producers
    }

    /// The summary as a JSON object (the `stats` object of the final record).
    pub fn to_json(&self, s: &Summary) -> Value {
        let by_api = |m: &BTreeMap<i16, u64>| -> Value {
            Value::Object(
                m.iter()
                    .map(|(k, n)| (api_label(*k), json!(n)))
                    .collect::<Map<String, Value>>(),
            )
        };
        let producers = self.top_producers();
        let latency: Map<String, Value> = s
            .frames
            .latencies
            .iter()
            .map(|(k, l)| {
                (
                    api_label(*k),
                    json!({
                        "count": l.count,
                        "p50": l.percentile(50.0),
                        "p90": l.percentile(90.0),
                        "p99": l.percentile(99.0),
                        "max": l.max,
                    }),
                )
            })
            .collect();
        json!({
            "packets": s.packets,
            "cut_packets": s.cut_packets,
            "bytes": s.bytes,
            "tcp_streams": s.streams,
            "detected_kafka_ports": s.detected_ports,
            "requests_by_api": by_api(&s.frames.requests),
            "responses_by_api": by_api(&s.frames.responses),
            "unpaired_responses": s.frames.unpaired_responses,
            "write_txn_markers": {
                "requests_by_version": self.wtm_requests_by_version,
                "responses_by_version": self.wtm_responses_by_version,
                "commit_markers": self.commit,
                "abort_markers": self.abort,
                "top_producers": producers.iter().map(|(p, n)| json!({"producer_id": p, "markers": n})).collect::<Vec<_>>(),
                "partition_errors": self.errors,
            },
            "latency_us": latency,
            "anomalies": self.anomalies,
        })
    }

    /// The summary as lines of text (for standard error).
    pub fn to_text(&self, s: &Summary) -> String {
        let mut out = String::new();
        let mut line = |l: String| {
            out.push_str(&l);
            out.push('\n');
        };
        line(format!(
            "packets {} ({} bytes captured), TCP streams {}",
            s.packets, s.bytes, s.streams
        ));
        if s.cut_packets > 0 {
            line(format!(
                "  packets cut by the capture's snapshot length: {} (capture with `tcpdump -s 0` \
                 to keep whole packets)",
                s.cut_packets
            ));
        }
        if !s.detected_ports.is_empty() {
            let ports: Vec<String> = s.detected_ports.iter().map(u16::to_string).collect();
            line(format!(
                "Kafka recognised from the bytes on ports {}",
                ports.join(" ")
            ));
        }
        line("Kafka frames (requests / paired responses, latency p50 p90 p99 max in us):".into());
        for (k, n) in &s.frames.requests {
            let resp = s.frames.responses.get(k).copied().unwrap_or(0);
            let lat = s.frames.latencies.get(k).map_or(String::new(), |l| {
                let p = |q| {
                    l.percentile(q)
                        .map_or("-".to_string(), |v: i64| v.to_string())
                };
                format!("  {} {} {} {}", p(50.0), p(90.0), p(99.0), l.max)
            });
            line(format!("  {:<32} {n:>8} / {resp:<8}{lat}", api_label(*k)));
        }
        if s.frames.unpaired_responses > 0 {
            line(format!(
                "  responses without a captured request: {}",
                s.frames.unpaired_responses
            ));
        }
        let versions = |m: &BTreeMap<i16, u64>| counts(m.iter().map(|(v, n)| (format!("v{v}"), n)));
        line(format!(
            "WriteTxnMarkers decoded: requests by version {}, responses by version {}, COMMIT markers {}, ABORT markers {}",
            versions(&self.wtm_requests_by_version),
            versions(&self.wtm_responses_by_version),
            self.commit,
            self.abort
        ));
        if !self.errors.is_empty() {
            line(format!("  partition results: {}", counts(&self.errors)));
        }
        let producers = self.top_producers();
        if !producers.is_empty() {
            let top: Vec<String> = producers.iter().map(|(p, n)| format!("{p}:{n}")).collect();
            line(format!(
                "  markers per producer id (top 20): {}",
                top.join(" ")
            ));
        }
        if self.anomalies.is_empty() {
            line("anomalies: none".into());
        } else {
            line(format!("anomalies: {}", counts(&self.anomalies)));
        }
        out
    }
}

/// `name:count` pairs for the text summary, e.g. `NONE:12 NOT_LEADER_OR_FOLLOWER:1` (as the
/// producer ids are shown); `none` when empty.
fn counts<K: std::fmt::Display, N: std::fmt::Display>(
    m: impl IntoIterator<Item = (K, N)>,
) -> String {
    let parts: Vec<String> = m.into_iter().map(|(k, n)| format!("{k}:{n}")).collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(" ")
    }
}

fn api_label(key: i16) -> String {
    match api_name(key) {
        Some(n) => format!("{n} ({key})"),
        None => format!("unknown ({key})"),
    }
}
