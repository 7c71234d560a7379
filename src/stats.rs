//! The one statistics structure of a run ([`Stats`]), fed by the pipeline as it goes: per
//! packet (packets, captured bytes, snaplen cuts), per frame (the Kafka stage's
//! [`FrameCounts`]: frames of every API, pairing, latencies), per record (every record the run
//! writes, before any filter: WriteTxnMarkers per version, COMMIT/ABORT markers, markers per
//! producer id, partition results by error name, anomalies by kind), and at the end (TCP
//! streams, the ports where Kafka was recognised).
//!
//! Input: the pipeline's calls (`crate::Pipeline`) and [`Record`]s ([`Stats::record`]).
//! Output: the counts, which `run` returns and `--stats` renders (`crate::output::stats`).

use crate::kafka::apis::write_txn_markers::TransactionResult;
use crate::kafka::apis::Body;
use crate::kafka::event::{Event, Record};
pub use crate::kafka::session::{FrameCounts, LatencySample};
use std::collections::{BTreeMap, HashMap};

/// Counts from one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Packets read.
    pub packets: u64,
    /// Captured packet bytes read.
    pub bytes: u64,
    /// Packets captured shorter than they were on the wire (a snapshot length cut them).
    pub cut_packets: u64,
    /// TCP streams seen.
    pub streams: u64,
    /// `kafka` records written.
    pub messages: u64,
    /// `anomaly` records written.
    pub anomalies: u64,
    /// Kafka frames of every API that were framed.
    pub frames: FrameCounts,
    /// Broker ports where Kafka was recognised from the bytes (beside 9092 and `--port`).
    pub detected_ports: Vec<u16>,
    /// WriteTxnMarkers requests decoded, by API version.
    pub wtm_requests_by_version: BTreeMap<i16, u64>,
    /// WriteTxnMarkers responses decoded (inferred ones included), by API version.
    pub wtm_responses_by_version: BTreeMap<i16, u64>,
    /// COMMIT markers in WriteTxnMarkers requests.
    pub commit_markers: u64,
    /// ABORT markers in WriteTxnMarkers requests.
    pub abort_markers: u64,
    /// Markers of WriteTxnMarkers requests, by producer id.
    pub markers_by_producer: HashMap<i64, u64>,
    /// Partition results of WriteTxnMarkers responses, by error name (the code for a code
    /// Kafka's table lacks).
    pub partition_errors: BTreeMap<String, u64>,
    /// Anomaly records, by kind.
    pub anomalies_by_kind: BTreeMap<&'static str, u64>,
}

impl Stats {
    /// Counts one record the run writes.
    pub fn record(&mut self, rec: &Record) {
        match &rec.event {
            Event::Unanswered(..) => {}
            Event::Anomaly(a) => {
                self.anomalies += 1;
                *self.anomalies_by_kind.entry(a.kind.as_str()).or_default() += 1;
            }
            Event::Kafka(k) => {
                self.messages += 1;
                match &k.body {
                    Body::WriteTxnMarkersRequest(b) => {
                        *self
                            .wtm_requests_by_version
                            .entry(k.api_version)
                            .or_default() += 1;
                        for m in &b.markers {
                            match m.transaction_result {
                                TransactionResult::Commit => self.commit_markers += 1,
                                TransactionResult::Abort => self.abort_markers += 1,
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
                            *self.partition_errors.entry(name).or_default() += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// WriteTxnMarkers requests and responses seen (responses inferred without their request
    /// included).
    pub fn write_txn_markers_messages(&self) -> u64 {
        self.wtm_requests_by_version.values().sum::<u64>()
            + self.wtm_responses_by_version.values().sum::<u64>()
    }

    /// The 20 producer ids with the most markers, as `(producer_id, markers)`, most first
    /// (ties by lower producer id).
    pub fn top_producers(&self) -> Vec<(i64, u64)> {
        let mut producers: Vec<(i64, u64)> = self
            .markers_by_producer
            .iter()
            .map(|(p, n)| (*p, *n))
            .collect();
        producers.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        producers.truncate(20);
        producers
    }
}
