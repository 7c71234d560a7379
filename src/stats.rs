//! The one statistics structure of a run ([`Stats`]), fed by the pipeline as it goes: per
//! packet (packets, captured bytes, snaplen cuts), per frame (the Kafka stage's
//! [`FrameCounts`]: frames of every API, pairing, latencies), per record (every record the run
//! writes, before any filter: WriteTxnMarkers per version, COMMIT/ABORT markers, markers per
//! producer id, partition results by error name, anomalies by kind), and at the end (TCP
//! streams, the ports where Kafka was recognised).
//!
//! Input: the pipeline's calls (`crate::Pipeline`) and [`Record`]s ([`Stats::record`]).
//! Output: the counts, which `run` returns and `--stats` renders (`crate::output::stats`).

use crate::kafka::apis::write_txn_markers::{self as wtm, TransactionResult};
use crate::kafka::apis::Body;
use crate::kafka::event::{Event, MessageKind, Record};
pub use crate::kafka::session::{FrameCounts, LatencySample};
use std::collections::{BTreeMap, HashMap};

/// Counts from one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Whether the run decodes WriteTxnMarkers bodies (the default, or `--api`/`--all-apis`
    /// naming it): without, its frames are counted, not its versions or markers.
    pub write_txn_markers_decoded: bool,
    /// Packets read.
    pub packets: u64,
    /// Captured packet bytes read.
    pub bytes: u64,
    /// Packets captured shorter than they were on the wire (a snapshot length cut them).
    pub cut_packets: u64,
    /// The most bytes captured of such a packet: the capture's snapshot length (as the
    /// captured length of a cut packet, link-layer header included), 0 when none was cut.
    pub snapshot_length: u32,
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
    /// WriteTxnMarkers requests and responses cut short and decoded in part (`"truncated":
    /// true`); they are counted in the other WriteTxnMarkers counts too, by what they hold.
    pub wtm_truncated: u64,
    /// Of `commit_markers` and `abort_markers`, those read from requests decoded in part.
    pub partial_markers: u64,
    /// Markers of WriteTxnMarkers requests, by producer id: the producer ids with the most
    /// markers, in bounded memory.
    pub markers_by_producer: TopCounts,
    /// Partition results of WriteTxnMarkers responses, by error name (the code for a code
    /// Kafka's table lacks).
    pub partition_errors: BTreeMap<String, u64>,
    /// Whether the run followed transactions (`--transactions`): without, no transaction
    /// record is made, nor the view's anomalies (`hanging_transaction`,
    /// `stale_coordinator_epoch`, ...).
    pub transactions_followed: bool,
    /// Transaction records (`--transactions`).
    pub transactions: u64,
    /// Transaction records by outcome (`"committed"`, ...).
    pub transactions_by_outcome: BTreeMap<&'static str, u64>,
    /// Transaction records ended by the coordinator, by reason (`"timeout"`, `"fenced"`,
    /// `"unknown"` when none is known).
    pub transactions_by_reason: BTreeMap<&'static str, u64>,
    /// Transaction records an admin client aborted (`ended_by` `admin`).
    pub transactions_aborted_by_admin: u64,
    /// Transaction records committed in part (`"partial_commit": true`: an admin client
    /// aborted the partitions whose COMMIT marker was not written).
    pub transactions_partial_commits: u64,
    /// Transaction records hanging at the capture's end (`"hanging": true`).
    pub transactions_hanging: u64,
    /// Partitions of transaction records that hold transactional data, whose marker no
    /// response said written (nor left out) and whose leader no Metadata response named, or,
    /// in a transaction with `markers_not_captured` (a capture with no WriteTxnMarkers from its
    /// coordinator, as on a client's host), led by another broker than its coordinator, and
    /// none of a transaction a later accepted message proved written: whether they hang is not
    /// judged (the view calls a partition hanging only when it knows another broker than the
    /// coordinator leads it, and that the capture would show its marker).
    pub transactions_unjudged_partitions: u64,
    /// Of `transactions_unjudged_partitions`, those whose leader a Metadata response named,
    /// not judged for the capture's want of any WriteTxnMarkers from their coordinator
    /// (`markers_not_captured`: a client's host).
    pub transactions_unjudged_markers_not_captured: u64,
    /// Fetch requests decoded asking for `READ_COMMITTED` (isolation_level 1): the consumers
    /// whose last stable offset a stuck transaction holds back (`lso_stuck`, judged from their
    /// responses); 0 means no such judgement could be made.
    pub read_committed_fetches: u64,
    /// Transaction records by transactional id (`"-"` when unknown), for the first
    /// [`Stats::MAX_TRANSACTIONAL_IDS`] ids of at most [`Stats::MAX_TRANSACTIONAL_ID_BYTES`]
    /// in all; those of later ids are in `transactions_of_other_ids`.
    pub transactions_by_id: BTreeMap<String, u64>,
    /// Bytes of the ids in `transactions_by_id`.
    transactions_by_id_bytes: usize,
    /// Transaction records of ids past [`Stats::MAX_TRANSACTIONAL_IDS`].
    pub transactions_of_other_ids: u64,
    /// Transaction durations (`duration_us`), in microseconds.
    pub transaction_durations: crate::kafka::session::LatencySample,
    /// The longest transaction (the first of the longest, by `duration_us`), so that the
    /// summary's max names one to look at.
    pub transaction_longest: Option<Longest>,
    /// Anomaly records, by kind.
    pub anomalies_by_kind: BTreeMap<&'static str, u64>,
    /// The memory budget's limit, in bytes (`--memory-limit`).
    pub memory_limit: usize,
    /// The most bytes charged to the budget at once (shared by the captures of one `-j` run).
    pub memory_peak: usize,
    /// Holdings given up for the budget, by kind (`crate::memory::Holding::as_str`); only
    /// kinds with some.
    pub memory_given_up: BTreeMap<&'static str, u64>,
    /// Capture times of the first and the last packet read (`None` before any).
    pub first_ts: Option<crate::vocab::Timestamp>,
    /// See `first_ts`.
    pub last_ts: Option<crate::vocab::Timestamp>,
}

/// The longest transaction of a run ([`Stats::transaction_longest`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Longest {
    /// Its `duration_us`: microseconds from its first message to its last (to the capture's
    /// end for one still open).
    pub duration_us: i64,
    /// Its transactional id (at most 256 bytes of it), when known.
    pub transactional_id: Option<String>,
    /// Its producer id.
    pub producer_id: i64,
    /// Its producer epoch.
    pub producer_epoch: i16,
    /// The frame of its first message captured (`begin.frame`).
    pub begin_frame: u64,
    /// The frame of its record (the message that ended it, or the capture's last).
    pub frame: u64,
    /// Its `outcome` (`committed`, `aborted`, `open`, `unknown`).
    pub outcome: &'static str,
}

impl Stats {
    /// Empty counts of a run that decodes WriteTxnMarkers bodies or not
    /// ([`Stats::write_txn_markers_decoded`]).
    pub fn decoding(write_txn_markers: bool) -> Self {
        Stats {
            write_txn_markers_decoded: write_txn_markers,
            ..Stats::default()
        }
    }

    /// Most transactional ids counted one by one in `transactions_by_id`.
    pub const MAX_TRANSACTIONAL_IDS: usize = 10_000;

    /// Most bytes of transactional ids kept in `transactions_by_id` (1 MiB: a transactional
    /// id may be 32,767 bytes long, and ten thousand such would hold 320 MB).
    pub const MAX_TRANSACTIONAL_ID_BYTES: usize = 1 << 20;

    /// Counts one transaction record (`--transactions`).
    pub fn transaction(&mut self, r: &crate::txn::TransactionRecord) {
        let t = &r.transaction;
        self.transactions += 1;
        *self
            .transactions_by_outcome
            .entry(t.outcome.as_str())
            .or_default() += 1;
        if t.ended_by == Some(crate::txn::EndedBy::Coordinator) {
            let reason = t.reason.map_or("unknown", |r| r.as_str());
            *self.transactions_by_reason.entry(reason).or_default() += 1;
        } else if t.ended_by == Some(crate::txn::EndedBy::Admin) {
            self.transactions_aborted_by_admin += 1;
        }
        self.transactions_hanging += u64::from(t.hanging);
        let coordinator = t.coordinator.as_ref().and_then(|c| c.node_id);
        // (None where a later accepted message proved its markers written.)
        let unjudged = t.partitions.iter().filter(|p| {
            !t.markers_written_later
                && p.holds_data()
                && (p.leader.is_none() || (t.markers_not_captured && p.leader != coordinator))
                && !p.marker_written
                && !p.marker_written_later
                && p.stable_past_frame.is_none()
                && !p.marker_local
                && !p.marker_left_out
        });
        let (mut no_leader, mut no_markers) = (0, 0);
        for p in unjudged {
            if p.leader.is_none() {
                no_leader += 1;
            } else {
                no_markers += 1;
            }
        }
        self.transactions_unjudged_partitions += no_leader + no_markers;
        self.transactions_unjudged_markers_not_captured += no_markers;
        self.transactions_partial_commits += u64::from(t.partial_commit);
        let id = t.transactional_id.as_deref().unwrap_or("-");
        let room = self.transactions_by_id.len() < Self::MAX_TRANSACTIONAL_IDS
            && self.transactions_by_id_bytes + id.len() <= Self::MAX_TRANSACTIONAL_ID_BYTES;
        match self.transactions_by_id.get_mut(id) {
            Some(n) => *n += 1,
            None if room => {
                self.transactions_by_id_bytes += id.len();
                self.transactions_by_id.insert(id.to_string(), 1);
            }
            None => self.transactions_of_other_ids += 1,
        }
        self.transaction_durations.add(t.duration_us);
        if self
            .transaction_longest
            .as_ref()
            .is_none_or(|l| t.duration_us > l.duration_us)
        {
            self.transaction_longest = Some(Longest {
                duration_us: t.duration_us,
                // At most 256 bytes of the id (it may be 32,767).
                transactional_id: t
                    .transactional_id
                    .as_deref()
                    .map(|i| crate::txn::truncate(i, 256).to_string()),
                producer_id: t.producer_id,
                producer_epoch: t.producer_epoch,
                begin_frame: t.begin.frame,
                frame: r.loc.frame,
                outcome: t.outcome.as_str(),
            });
        }
    }

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
                    // Read with bytes left over, its fields may be misread (as the transaction
                    // view, the counts leave it out).
                    _ if !k.body_trusted() => {}
                    Body::WriteTxnMarkersRequest(b) => self.request_markers(k.api_version, b),
                    Body::WriteTxnMarkersResponse(b) => self.partition_results(k.api_version, b),
                    Body::FetchRequest(b) if b.isolation_level == 1 => {
                        self.read_committed_fetches += 1
                    }
                    // Decoded in part: counted by the markers it holds, and apart.
                    Body::Partial(b) if k.api_key == wtm::API_KEY => {
                        self.wtm_truncated += 1;
                        match k.message {
                            MessageKind::Request => {
                                let r = wtm::request_from_partial(b);
                                self.partial_markers += r.markers.len() as u64;
                                self.request_markers(k.api_version, &r);
                            }
                            MessageKind::Response => {
                                let r = wtm::response_from_partial(b);
                                self.partition_results(k.api_version, &r);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// Counts a WriteTxnMarkers request of `version`: its COMMIT and ABORT markers, by
    /// producer id.
    fn request_markers(&mut self, version: i16, b: &wtm::WriteTxnMarkersRequest) {
        *self.wtm_requests_by_version.entry(version).or_default() += 1;
        for m in &b.markers {
            match m.transaction_result {
                TransactionResult::Commit => self.commit_markers += 1,
                TransactionResult::Abort => self.abort_markers += 1,
            }
            self.markers_by_producer.add(m.producer_id);
        }
    }

    /// Counts a WriteTxnMarkers response of `version`: its partition results by error name.
    fn partition_results(&mut self, version: i16, b: &wtm::WriteTxnMarkersResponse) {
        *self.wtm_responses_by_version.entry(version).or_default() += 1;
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

    /// WriteTxnMarkers requests and responses seen (responses inferred without their request
    /// included).
    pub fn write_txn_markers_messages(&self) -> u64 {
        self.wtm_requests_by_version.values().sum::<u64>()
            + self.wtm_responses_by_version.values().sum::<u64>()
    }

    /// The 20 producer ids with the most markers, as `(producer_id, markers)`, most first
    /// (ties by lower producer id). Exact unless [`TopCounts::approximate`].
    pub fn top_producers(&self) -> Vec<(i64, u64)> {
        self.markers_by_producer.top(20)
    }
}

/// Counts by key of the keys seen most, in bounded memory: exact while at most
/// [`TopCounts::CAPACITY`] keys were seen; past that, the map is pruned to the
/// [`TopCounts::CAPACITY`] largest counts whenever it holds twice as many, and a count may be
/// short by at most [`TopCounts::error`] (a key pruned and seen again). The heavy-hitter
/// scheme of Metwally, Agrawal and El Abbadi ("Efficient computation of frequent and top-k
/// elements in data streams", 2005), pruned in batches for amortised O(1) per key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopCounts {
    /// Count and error bound of each key held.
    counts: HashMap<i64, (u64, u64)>,
    /// The most a key not held may have been seen before.
    floor: u64,
}

impl TopCounts {
    /// Keys kept after a pruning (10,000); the map holds at most twice as many.
    pub const CAPACITY: usize = 10_000;

    /// Counts one occurrence of `key`.
    pub fn add(&mut self, key: i64) {
        let floor = self.floor;
        self.counts.entry(key).or_insert((0, floor)).0 += 1;
        if self.counts.len() >= 2 * Self::CAPACITY {
            self.prune();
        }
    }

    #[cold]
    fn prune(&mut self) {
        let mut all: Vec<(u64, u64)> = self.counts.values().copied().collect();
        let k = Self::CAPACITY;
        all.select_nth_unstable_by(k - 1, |a, b| b.0.cmp(&a.0));
        let cut = all[k - 1].0;
        let mut dropped_max = self.floor;
        let mut kept = 0;
        self.counts.retain(|_, &mut (n, e)| {
            let keep = n > cut || (n == cut && kept < k);
            kept += usize::from(keep);
            if !keep {
                dropped_max = dropped_max.max(n + e);
            }
            keep
        });
        self.floor = dropped_max;
    }

    /// Whether some counts may be short (more than [`TopCounts::CAPACITY`] keys were seen).
    pub fn approximate(&self) -> bool {
        self.floor > 0
    }

    /// The most any count may be short by.
    pub fn error(&self) -> u64 {
        self.floor
    }

    /// The `n` keys with the largest counts, most first (ties by lower key).
    pub fn top(&self, n: usize) -> Vec<(i64, u64)> {
        let mut all: Vec<(i64, u64)> = self.counts.iter().map(|(k, (c, _))| (*k, *c)).collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(n);
        all
    }

    /// Keys held now.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether no key was counted.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_counts_are_exact_under_capacity() {
        let mut t = TopCounts::default();
        for k in 0..5_000i64 {
            for _ in 0..(k % 7) {
                t.add(k);
            }
        }
        assert!(!t.approximate());
        let top = t.top(3);
        assert_eq!(top, vec![(6, 6), (13, 6), (20, 6)]);
    }

    #[test]
    fn top_counts_stay_bounded_and_keep_heavy_hitters() {
        let mut t = TopCounts::default();
        // 1,000,000 keys seen once, and three heavy ones interleaved.
        for k in 0..1_000_000i64 {
            t.add(k + 10);
            if k % 100 == 0 {
                t.add(1);
                t.add(2);
            }
            if k % 1_000 == 0 {
                t.add(3);
            }
        }
        assert!(t.len() < 2 * TopCounts::CAPACITY);
        assert!(t.approximate());
        let top = t.top(3);
        assert_eq!(top.iter().map(|x| x.0).collect::<Vec<_>>(), vec![1, 2, 3]);
        // Counts are never over the truth, and short by at most the error.
        assert!(top[0].1 <= 10_001 && top[0].1 + t.error() >= 10_001);
        assert!(top[2].1 <= 1_001 && top[2].1 + t.error() >= 1_001);
    }
}
