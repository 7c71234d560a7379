//! The `--stats` summary of a run: the rendering of [`Stats`].
//!
//! Input: the run's [`Stats`].
//! Output: the summary as text (for standard error) or as a final `"event_type": "stats"`
//! JSON record: packets and bytes read, TCP streams, Kafka frames per API, WriteTxnMarkers per
//! version, COMMIT/ABORT counts, markers per producer id (top 20), error codes by name,
//! latency percentiles per API (microseconds), anomalies by kind.

use crate::kafka::api::api_name;
use crate::stats::Stats;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Counts as an array of objects, `[{"<key>": name, "count": n}, ...]`, in the map's order
/// (for engines that type columns: names as values, never as keys).
fn named_counts<K: serde::Serialize>(key: &str, m: &BTreeMap<K, u64>) -> Value {
    Value::Array(
        m.iter()
            .map(|(k, n)| {
                let mut o = Map::new();
                o.insert(key.into(), json!(k));
                o.insert("count".into(), json!(n));
                Value::Object(o)
            })
            .collect(),
    )
}

fn percentiles(l: &crate::kafka::session::LatencySample) -> Value {
    json!({
        "count": l.count,
        "p50": l.percentile(50.0),
        "p90": l.percentile(90.0),
        "p99": l.percentile(99.0),
        "max": l.max,
    })
}

/// The final `--stats=json` record: `ts` and `ts_end` (the first and last packet's times,
/// absent without packets), `"event_type": "stats"` and the `stats` object.
pub fn record(s: &Stats) -> Map<String, Value> {
    let mut r = Map::new();
    if let (Some(a), Some(b)) = (s.first_ts, s.last_ts) {
        r.insert("ts".into(), json!(a));
        r.insert("ts_end".into(), json!(b));
    }
    r.insert("event_type".into(), "stats".into());
    r.insert("stats".into(), to_json(s));
    r
}

/// The summary as a JSON object (the `stats` object of the final record). Every set of
/// counts is an array of objects naming what is counted (`api_key` and `api_name`,
/// `api_version`, `error`, `kind`, ...), so that DuckDB, ClickHouse or Elasticsearch give it
/// one type whatever the capture held.
pub fn to_json(s: &Stats) -> Value {
    let producers = s.top_producers();
    let keys: std::collections::BTreeSet<i16> = s
        .frames
        .requests
        .keys()
        .chain(s.frames.responses.keys())
        .chain(s.frames.latencies.keys())
        .copied()
        .collect();
    let apis: Vec<Value> = keys
        .iter()
        .map(|k| {
            json!({
                "api_key": k,
                "api_name": api_name(*k).unwrap_or("unknown"),
                "requests": s.frames.requests.get(k).copied().unwrap_or(0),
                "responses": s.frames.responses.get(k).copied().unwrap_or(0),
                "latency_us": s.frames.latencies.get(k).map(percentiles),
            })
        })
        .collect();
    let versions: std::collections::BTreeSet<i16> = s
        .wtm_requests_by_version
        .keys()
        .chain(s.wtm_responses_by_version.keys())
        .copied()
        .collect();
    let by_version: Vec<Value> = versions
        .iter()
        .map(|v| {
            json!({
                "api_version": v,
                "requests": s.wtm_requests_by_version.get(v).copied().unwrap_or(0),
                "responses": s.wtm_responses_by_version.get(v).copied().unwrap_or(0),
            })
        })
        .collect();
    let anomalies: Vec<Value> = s
        .anomalies_by_kind
        .iter()
        .map(|(k, n)| {
            let layer = crate::vocab::AnomalyKind::ALL
                .iter()
                .find(|a| a.as_str() == *k)
                .map(|a| a.layer());
            json!({"kind": k, "layer": layer, "count": n})
        })
        .collect();
    json!({
        "packets": s.packets,
        "cut_packets": s.cut_packets,
        "snapshot_length": s.snapshot_length,
        "bytes": s.bytes,
        "tcp_streams": s.streams,
        "detected_kafka_ports": s.detected_ports,
        "apis": apis,
        "unpaired_responses": s.frames.unpaired_responses,
        "write_txn_markers": {
            "decoded": s.write_txn_markers_decoded,
            "by_version": by_version,
            "commit_markers": s.commit_markers,
            "abort_markers": s.abort_markers,
            "truncated_messages": s.wtm_truncated,
            "partial_markers": s.partial_markers,
            "top_producers": producers.iter().map(|(p, n)| json!({"producer_id": p, "markers": n})).collect::<Vec<_>>(),
            "top_producers_max_error": s.markers_by_producer.error(),
            "partition_errors": named_counts("error", &s.partition_errors),
        },
        "transactions": transactions_json(s),
        "anomalies": anomalies,
        "memory": {
            "limit_bytes": s.memory_limit,
            "peak_bytes": s.memory_peak,
            "given_up": named_counts("holding", &s.memory_given_up),
        },
    })
}

/// The `transactions` object (`--transactions`): counts by outcome, by reason (of those the
/// coordinator ended), by transactional id, durations, hanging ones; `null` without
/// transactions.
fn transactions_json(s: &Stats) -> Value {
    if s.transactions == 0 {
        return Value::Null;
    }
    json!({
        "count": s.transactions,
        "by_outcome": named_counts("outcome", &s.transactions_by_outcome),
        "by_reason": named_counts("reason", &s.transactions_by_reason),
        "aborted_by_admin": s.transactions_aborted_by_admin,
        "partial_commits": s.transactions_partial_commits,
        "by_transactional_id": named_counts("transactional_id", &s.transactions_by_id),
        "of_other_transactional_ids": s.transactions_of_other_ids,
        "duration_us": percentiles(&s.transaction_durations),
        "longest": s.transaction_longest.as_ref().map(|l| json!({
            "duration_us": l.duration_us,
            "transactional_id": l.transactional_id,
            "producer_id": l.producer_id,
            "producer_epoch": l.producer_epoch,
            "begin_frame": l.begin_frame,
            "frame": l.frame,
            "outcome": l.outcome,
        })),
        "hanging": s.transactions_hanging,
        "hanging_partitions": s.anomalies_by_kind.get("hanging_transaction").copied().unwrap_or(0),
        "unjudged_partitions": s.transactions_unjudged_partitions,
        "unjudged_markers_not_captured": s.transactions_unjudged_markers_not_captured,
        "read_committed_fetches": s.read_committed_fetches,
    })
}

/// The summary as lines of text (for standard error).
pub fn to_text(s: &Stats) -> String {
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
            "  packets cut by the capture's snapshot length ({} bytes): {} (capture with \
                 `tcpdump -s 0` to keep whole packets; in a kafka-pcap --write-pcap extract, \
                 the acknowledgments it cut after their TCP header)",
            s.snapshot_length, s.cut_packets
        ));
    }
    if !s.detected_ports.is_empty() {
        let ports: Vec<String> = s.detected_ports.iter().map(u16::to_string).collect();
        line(format!(
            "Kafka recognised from the bytes on port{} {}",
            if ports.len() == 1 { "" } else { "s" },
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
    let wtm_framed = s.frames.requests.get(&27).copied().unwrap_or(0);
    if wtm_framed > 0 && !s.write_txn_markers_decoded {
        // `--api` without WriteTxnMarkers: its frames were counted, not decoded.
        line(format!(
            "WriteTxnMarkers not decoded ({wtm_framed} request{} framed; --api without \
             WriteTxnMarkers: add --api WriteTxnMarkers for its versions and markers)",
            if wtm_framed == 1 { "" } else { "s" }
        ));
    } else {
        line(format!(
            "WriteTxnMarkers decoded: requests by version {}, responses by version {}, COMMIT markers {}, ABORT markers {}",
            versions(&s.wtm_requests_by_version),
            versions(&s.wtm_responses_by_version),
            s.commit_markers,
            s.abort_markers
        ));
    }
    if s.wtm_truncated > 0 {
        line(format!(
            "  of them cut short and decoded in part (\"truncated\": true): {} message{}, {} marker{}",
            s.wtm_truncated,
            if s.wtm_truncated == 1 { "" } else { "s" },
            s.partial_markers,
            if s.partial_markers == 1 { "" } else { "s" },
        ));
    }
    if !s.partition_errors.is_empty() {
        line(format!(
            "  partition results: {}",
            counts(&s.partition_errors)
        ));
    }
    let producers = s.top_producers();
    if !producers.is_empty() {
        let top: Vec<String> = producers.iter().map(|(p, n)| format!("{p}:{n}")).collect();
        let error = s.markers_by_producer.error();
        let approx = if error > 0 {
            format!(" (counts may be short by up to {error}: too many producer ids to count all)")
        } else {
            String::new()
        };
        line(format!(
            "  markers per producer id (top 20): {}{approx}",
            top.join(" ")
        ));
    }
    if s.transactions > 0 {
        let d = &s.transaction_durations;
        let p = |q| {
            d.percentile(q)
                .map_or("-".to_string(), |v: i64| v.to_string())
        };
        let admin = if s.transactions_aborted_by_admin > 0 {
            format!(
                "; aborted by an admin client: {}",
                s.transactions_aborted_by_admin
            )
        } else {
            String::new()
        };
        let admin = if s.transactions_partial_commits > 0 {
            format!(
                "{admin}; committed in part (partitions aborted by an admin client): {}",
                s.transactions_partial_commits
            )
        } else {
            admin
        };
        let no_markers = s.transactions_unjudged_markers_not_captured;
        let no_leader = s
            .transactions_unjudged_partitions
            .saturating_sub(no_markers);
        let why = match (no_leader > 0, no_markers > 0) {
            (true, false) => "no Metadata response named the leader".to_string(),
            (false, true) => {
                "the capture holds no WriteTxnMarkers from their coordinator (a client's host)"
                    .to_string()
            }
            _ => format!(
                "no Metadata response named the leader ({no_leader}) or the capture holds no \
                 WriteTxnMarkers from their coordinator (a client's host: {no_markers})"
            ),
        };
        let unjudged = if s.transactions_unjudged_partitions > 0 {
            format!(
                "; {} not judged: transactional data, no marker seen written, and {why}",
                plural_partitions(s.transactions_unjudged_partitions)
            )
        } else {
            String::new()
        };
        line(format!(
            "transactions {}: {}; ended by the coordinator: {}{admin}; hanging {} ({} with no \
             marker{unjudged})",
            s.transactions,
            counts(&s.transactions_by_outcome),
            counts(&s.transactions_by_reason),
            s.transactions_hanging,
            plural_partitions(
                s.anomalies_by_kind
                    .get("hanging_transaction")
                    .copied()
                    .unwrap_or(0)
            )
        ));
        line(if s.read_committed_fetches == 0 {
            "  last stable offsets not judged: no read_committed Fetch request captured (a \
             consumer stuck behind an open transaction shows only in one's responses)"
                .to_string()
        } else {
            format!(
                "  last stable offsets judged from {} read_committed Fetch request{} (lso_stuck)",
                s.read_committed_fetches,
                if s.read_committed_fetches == 1 {
                    ""
                } else {
                    "s"
                }
            )
        });
        line(format!(
            "  duration p50 p90 p99 max in us: {} {} {} {}",
            p(50.0),
            p(90.0),
            p(99.0),
            d.max
        ));
        if let Some(l) = &s.transaction_longest {
            line(format!(
                "  longest: {} producer {} epoch {}, {}, {} us, frames {}-{}",
                one_line(l.transactional_id.as_deref().unwrap_or("-")),
                l.producer_id,
                l.producer_epoch,
                l.outcome,
                l.duration_us,
                l.begin_frame,
                l.frame,
            ));
        }
        let mut ids: Vec<(&String, &u64)> = s.transactions_by_id.iter().collect();
        ids.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let top: Vec<String> = ids
            .iter()
            .take(20)
            .map(|(i, n)| format!("{}:{n}", one_line(i)))
            .collect();
        line(format!("  by transactional id (top 20): {}", top.join(" ")));
    }
    // Without the view, markers were decoded but no transaction judged: say so beside the
    // anomalies, which then hold none of the view's.
    let unfollowed = if !s.transactions_followed && s.commit_markers + s.abort_markers > 0 {
        " (transactions not followed: --transactions also decodes the transaction APIs, \
         Produce and Fetch, with their own anomalies, and adds each transaction's outcome and \
         the view's anomalies, such as hanging_transaction and stale_coordinator_epoch)"
    } else {
        ""
    };
    if s.anomalies_by_kind.is_empty() {
        line(format!("anomalies: none{unfollowed}"));
    } else {
        line(format!(
            "anomalies: {}{unfollowed}",
            counts(&s.anomalies_by_kind)
        ));
    }
    let given_up = if s.memory_given_up.is_empty() {
        "nothing given up".to_string()
    } else {
        format!(
            "given up: {} (raise the limit with --memory-limit)",
            counts(&s.memory_given_up)
        )
    };
    line(format!(
        "memory budget: limit {}, peak charged {}; {given_up}",
        crate::memory::human(s.memory_limit),
        crate::memory::human(s.memory_peak),
    ));
    out
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

/// `n partition(s)`.
fn plural_partitions(n: u64) -> String {
    format!("{n} partition{}", if n == 1 { "" } else { "s" })
}

/// `text` on one line: control characters (a line break in a transactional id) written as
/// `\u{a}`, so that a name cannot forge a line of the summary.
fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return text.into();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                format!("\\u{{{:x}}}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}
