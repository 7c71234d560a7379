//! The data `--report` (issue 18) draws its page from, built from the transaction records as
//! they pass: one lane per transactional id (or producer id when the id is unknown), one bar
//! per transaction with its markers as ticks, the markers' round trips for the latency chart
//! and its histogram, and the per-partition marker errors.
//!
//! Input: [`TransactionRecord`]s (`--transactions`), in the order they are written. Output:
//! [`ReportData`], times in microseconds since the Unix epoch (the page draws them from the
//! earliest, [`ReportData::origin`]). Bounded: at most
//! [`MAX_BARS`] bars are kept (the rest are counted per lane and outcome, so the page can
//! say how many it aggregates) and at most [`MAX_LATENCIES`] round trips; the histogram and
//! the error table count everything. This step has no page yet: the HTML writer builds on
//! it.

use crate::txn::{EndedBy, MarkerErrorHandling, Outcome, TransactionRecord};
use crate::vocab::Timestamp;
use std::collections::BTreeMap;

/// Most bars kept for the page (100,000); past it, transactions are counted, not drawn.
pub const MAX_BARS: usize = 100_000;

/// Most marker round trips kept for the latency-over-time chart (100,000).
pub const MAX_LATENCIES: usize = 100_000;

/// Upper bounds of the latency histogram's buckets, in microseconds (the last bucket takes
/// everything above the last bound): 100 us to 10 s, three per decade.
pub const LATENCY_BUCKETS_US: [i64; 16] = [
    100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000,
    1_000_000, 2_000_000, 5_000_000, 10_000_000,
];

/// How a bar is coloured: the transaction's outcome, and who aborted it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BarClass {
    /// COMMIT markers, or an accepted EndTxn asking to commit.
    Committed,
    /// Aborted with the client's EndTxn.
    AbortedByClient,
    /// Aborted by the coordinator (a timeout, a fenced producer, or markers with no EndTxn).
    AbortedByCoordinator,
    /// Begun in the capture, no end seen.
    Open,
    /// Neither its beginning nor its end seen.
    Unknown,
}

impl BarClass {
    /// The class of transaction record `t`.
    pub fn of(t: &TransactionRecord) -> Self {
        let t = &t.transaction;
        match (t.outcome, t.ended_by) {
            (Outcome::Committed, _) => BarClass::Committed,
            (Outcome::Aborted, Some(EndedBy::Client)) => BarClass::AbortedByClient,
            (Outcome::Aborted, _) => BarClass::AbortedByCoordinator,
            (Outcome::Open, _) => BarClass::Open,
            (Outcome::Unknown, _) => BarClass::Unknown,
        }
    }

    /// The CSS class name the page gives it (`committed`, `aborted-client`,
    /// `aborted-coordinator`, `open`, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            BarClass::Committed => "committed",
            BarClass::AbortedByClient => "aborted-client",
            BarClass::AbortedByCoordinator => "aborted-coordinator",
            BarClass::Open => "open",
            BarClass::Unknown => "unknown",
        }
    }
}

/// One transaction on its lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bar {
    /// From its first message, in microseconds since the Unix epoch.
    pub start_us: i64,
    /// To its last marker response (without one, the message that finished it), likewise; at
    /// least `start_us`.
    pub end_us: i64,
    /// Its colour.
    pub class: BarClass,
    /// The coordinator's reason when it ended the transaction itself (`timeout`, `fenced`).
    pub reason: Option<&'static str>,
    /// Producer id and epoch.
    pub producer_id: i64,
    /// The epoch the producer used.
    pub producer_epoch: i16,
    /// Frame number of the record's message that finished it (for Go To Packet).
    pub frame: u64,
    /// Its partitions' marker responses, in microseconds since the Unix epoch.
    pub ticks: Vec<i64>,
}

/// A lane: the transactions of one transactional id (or of one producer id, the id unknown).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lane {
    /// Its bars, in the order their records were written.
    pub bars: Vec<Bar>,
    /// Transactions past [`MAX_BARS`], by class, not drawn.
    pub not_drawn: BTreeMap<BarClass, u64>,
}

/// One marker round trip: when its response came, between which brokers, how long it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Latency {
    /// When the response came, in microseconds since the Unix epoch.
    pub at_us: i64,
    /// The broker the marker went to (`ip:port`).
    pub broker: String,
    /// The round trip in microseconds.
    pub us: i64,
}

/// One row of the marker error table: an error of one partition's marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorRow {
    /// How many markers got it.
    pub count: u64,
    /// What the coordinator does with it (`retried`, `terminal`, `dropped`, `unexpected`).
    pub handling: &'static str,
    /// The first and last frame of a marker response carrying it.
    pub first_frame: u64,
    /// See `first_frame`.
    pub last_frame: u64,
}

/// Everything the page shows of the transactions. See the module documentation.
#[derive(Debug, Clone, Default)]
pub struct ReportData {
    /// Lanes by key: the transactional id, or `pid N`.
    pub lanes: BTreeMap<String, Lane>,
    /// Bars kept so far.
    pub bars: usize,
    /// Transactions seen.
    pub transactions: u64,
    /// Marker round trips kept (the first [`MAX_LATENCIES`]).
    pub latencies: Vec<Latency>,
    /// Every marker round trip, counted per bucket of [`LATENCY_BUCKETS_US`] (one more for
    /// those above the last bound).
    pub histogram: [u64; LATENCY_BUCKETS_US.len() + 1],
    /// Marker errors by (partition `topic-partition`, error name).
    pub errors: BTreeMap<(String, String), ErrorRow>,
}

/// `ts` in microseconds since the Unix epoch.
fn micros(ts: Timestamp) -> i64 {
    (ts.as_nanos() / 1000).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

impl ReportData {
    /// The earliest start of a bar drawn, the page's time origin (`None` with no bar).
    pub fn origin(&self) -> Option<i64> {
        self.lanes
            .values()
            .flat_map(|l| l.bars.iter().map(|b| b.start_us))
            .min()
    }

    /// Takes one transaction record.
    pub fn add(&mut self, r: &TransactionRecord) {
        self.transactions += 1;
        let t = &r.transaction;
        let key = match &t.transactional_id {
            Some(id) => id.clone(),
            None => format!("pid {}", t.producer_id),
        };
        let class = BarClass::of(r);
        let start_us = micros(t.begin.ts);
        // To its last marker response; without one, to the message that finished it.
        let mut end_us = start_us.max(micros(r.loc.ts));
        let mut ticks = Vec::new();
        for p in &t.partitions {
            let (Some(frame), Some(error)) = (p.marker_response_frame, &p.marker_error) else {
                if let (Some(us), Some(b)) = (p.marker_latency_us, &p.marker_broker) {
                    self.latency(r, us, b);
                }
                continue;
            };
            let name = format!(
                "{}-{}",
                p.topic.as_deref().or(p.topic_id.as_deref()).unwrap_or("?"),
                p.partition
            );
            if error != "NONE" {
                let handling = p
                    .marker_error_handling
                    .unwrap_or_else(|| MarkerErrorHandling::of(error))
                    .as_str();
                let row = self
                    .errors
                    .entry((name, error.clone()))
                    .or_insert(ErrorRow {
                        count: 0,
                        handling,
                        first_frame: frame,
                        last_frame: frame,
                    });
                row.count += 1;
                row.first_frame = row.first_frame.min(frame);
                row.last_frame = row.last_frame.max(frame);
            }
            if let (Some(us), Some(b)) = (p.marker_latency_us, &p.marker_broker) {
                self.latency(r, us, b);
            }
        }
        if let Some(m) = t.markers_answered {
            let at = micros(m.ts);
            ticks.push(at);
            end_us = start_us.max(at);
        }
        let lane = self.lanes.entry(key).or_default();
        if self.bars >= MAX_BARS {
            *lane.not_drawn.entry(class).or_default() += 1;
            return;
        }
        self.bars += 1;
        lane.bars.push(Bar {
            start_us,
            end_us,
            class,
            reason: t.reason.map(|x| x.as_str()),
            producer_id: t.producer_id,
            producer_epoch: t.producer_epoch,
            frame: r.loc.frame,
            ticks,
        });
    }

    /// Counts one marker round trip of `us` microseconds to broker `b`, answered at the
    /// record's moment.
    fn latency(&mut self, r: &TransactionRecord, us: i64, b: &crate::txn::Broker) {
        let bucket = LATENCY_BUCKETS_US
            .iter()
            .position(|&hi| us <= hi)
            .unwrap_or(LATENCY_BUCKETS_US.len());
        self.histogram[bucket] += 1;
        if self.latencies.len() < MAX_LATENCIES {
            let at_us = micros(r.loc.ts);
            let broker = match b.ip {
                std::net::IpAddr::V6(ip) => format!("[{ip}]:{}", b.port),
                ip => format!("{ip}:{}", b.port),
            };
            self.latencies.push(Latency { at_us, broker, us });
        }
    }

    /// The `q`-quantile (0.0 to 1.0) of the round trips kept, in microseconds, by the nearest
    /// rank; `None` when there are none.
    pub fn percentile(&self, q: f64) -> Option<i64> {
        let mut v: Vec<i64> = self.latencies.iter().map(|l| l.us).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_unstable();
        let rank = ((q.clamp(0.0, 1.0) * v.len() as f64).ceil() as usize).max(1);
        v.get(rank - 1).copied()
    }
}
