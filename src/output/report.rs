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
//! the error table count everything; [`MAX_ABORTED`] aborted transactions are listed and
//! [`MAX_BROKERS`] brokers named. Within those caps, what is kept is charged to the run's
//! memory budget ([`ReportData::charged_to`], [`crate::memory::Holding::Report`]): at most a
//! quarter of it, and what does not fit is counted ([`ReportData::not_kept`]) and said on
//! the page.
//!
//! The page ([`write_html`]) stays readable at any number of transactions by aggregating: a
//! chart of transactions over time, stacked by class, counts every bar kept; below it the lane
//! timeline draws at most [`MAX_LANES_DRAWN`] lanes, those with a transaction that did not
//! commit first, and says how many it leaves to the chart.

use crate::memory::{alloc_cost, map_cost, vec_cost, Charge, Holding, Memory};
use crate::txn::{EndedBy, MarkerErrorHandling, Outcome, TransactionRecord};
use crate::vocab::Timestamp;
use std::collections::BTreeMap;
use std::mem::size_of;

/// Most bars kept for the page (40,000); past it, transactions are counted, not drawn. Those
/// that committed cleanly take at most half ([`MAX_CLEAN_BARS`]), so that the transactions
/// that did not, often written last (at the capture's end), keep their place.
pub const MAX_BARS: usize = 40_000;

/// Most bars kept of transactions that committed with no verdict and no failed marker
/// (20,000).
pub const MAX_CLEAN_BARS: usize = MAX_BARS / 2;

/// Of [`MAX_BARS`], the last 1,000 are kept for hanging transactions, written at the
/// capture's end after every other: earlier aborts and failures stop short of them. (Under
/// the memory budget they share the room of the other bars that did not commit cleanly: the
/// verdicts, hanging ones' included, keep theirs.)
pub const HANGING_RESERVE: usize = 1_000;

/// Most rows of the marker error table (1,000 partition and error pairs); past it, markers
/// are counted by error only.
pub const MAX_ERROR_ROWS: usize = 1_000;

/// Most coordinator and broker names the round trips are told apart by (200); the round
/// trips of others are counted under `other`.
pub const MAX_PAIR_NAMES: usize = 200;

/// Most verdicts listed (10,000); past it they are counted.
pub const MAX_VERDICTS: usize = 10_000;

/// Most marker round trips kept for the latency-over-time chart (100,000).
pub const MAX_LATENCIES: usize = 100_000;

/// Most aborted transactions listed in the page's table (1,000); past it they are counted.
pub const MAX_ABORTED: usize = 1_000;

/// Most partitions counted for the leaders of the broker table (100,000).
pub const MAX_LEADER_PARTITIONS: usize = 100_000;

/// Most brokers named in the page's header (1,000).
pub const MAX_BROKERS: usize = 1_000;

/// Most lanes the timeline draws (1,000): lanes with a transaction that did not commit come
/// first; the chart over time counts the bars of every lane.
pub const MAX_LANES_DRAWN: usize = 1_000;

/// Most round trips the latency-over-time chart draws as points (5,000, taken evenly from
/// those kept).
pub const MAX_POINTS: usize = 5_000;

/// Upper bounds of the latency histogram's buckets, in microseconds (the last bucket takes
/// everything above the last bound): 100 us to 10 s, three per decade.
pub const LATENCY_BUCKETS_US: [i64; 16] = [
    100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000,
    1_000_000, 2_000_000, 5_000_000, 10_000_000,
];

/// What the page's data holds, charged to the run's budget ([`Holding::Report`]) as each
/// thing is kept, at its heap cost (see [`push_cost`], [`insert_cost`], [`entry_cost`]): at
/// most a quarter of the budget, and never into its last quarter. The quarter comes out of
/// the transaction view's half (the view keeps to half less what this holds,
/// [`Memory::held`]), so that the stages reading the capture keep their half and decode as
/// they would without `--report`. What does not fit is counted, not kept
/// ([`ReportData::not_kept`]), and the page says so.
#[derive(Debug, Default)]
struct Budget {
    /// `None` for data charged to no budget ([`ReportData::default`]).
    charge: Option<Charge>,
}

impl Budget {
    /// Whether `bytes` more may be kept under `share`; they are then charged. What comes by
    /// the thousand takes at most three quarters of the page's quarter of the budget, so that
    /// the verdicts and the tables, which the page shows first, keep room; of that, the bars
    /// of clean commits and the round trips take two thirds, so that the bars of the
    /// transactions that did not commit cleanly, often written last (hanging ones at the
    /// capture's end), keep the last third.
    fn take(&mut self, bytes: usize, share: Share) -> bool {
        let Some(c) = &mut self.charge else {
            return true;
        };
        if bytes == 0 {
            // Room already charged (a vector's spare capacity).
            return true;
        }
        let limit = c.memory().limit();
        let share = match share {
            Share::Bulk => limit / 16 * 2,
            Share::Troubled => limit / 16 * 3,
            Share::Other => limit / 4,
        };
        let mine = c.bytes().saturating_add(bytes) > share;
        let others = c.memory().used().saturating_add(bytes) > limit - limit / 4;
        !(mine || others || !c.add(bytes))
    }

    /// Counts one thing given up for the budget (in `--stats`' `memory_given_up`, as the page
    /// counts it in [`ReportData::not_kept`]: a thing asked for again is counted once).
    fn given_up(&self) {
        if let Some(c) = &self.charge {
            c.note_given_up();
        }
    }
}

/// Which part of the page's share of the budget a thing kept may take ([`Budget::take`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Share {
    /// Things that come by the thousand: round trips, exchanges, clean commits' bars.
    Bulk,
    /// The bars of transactions that did not commit cleanly.
    Troubled,
    /// Verdicts, table rows, names.
    Other,
}

/// Heap bytes that pushing one element onto `v` adds: nothing while it has room, else its
/// growth as `Vec` grows (to twice its capacity, at least 4).
fn push_cost<T>(v: &Vec<T>) -> usize {
    let cap = v.capacity();
    if v.len() < cap {
        0
    } else {
        vec_cost::<T>((cap * 2).max(4)).saturating_sub(vec_cost::<T>(cap))
    }
}

/// Heap bytes that pushing one element onto `v` adds, as [`push_cost`] for a `VecDeque`.
fn push_cost_deque<T>(v: &std::collections::VecDeque<T>) -> usize {
    let cap = v.capacity();
    if v.len() < cap {
        0
    } else {
        vec_cost::<T>((cap * 2).max(4)).saturating_sub(vec_cost::<T>(cap))
    }
}

/// Heap bytes that inserting one entry of `E` into a hash set or map of `len` entries and
/// `capacity` adds: nothing while it has room, else its growth (see [`map_cost`]).
fn insert_cost<E>(len: usize, capacity: usize) -> usize {
    if len < capacity {
        0
    } else {
        map_cost::<E, ()>(capacity + 1).saturating_sub(map_cost::<E, ()>(capacity))
    }
}

/// Heap bytes one entry of a `BTreeMap<K, V>` takes, at most: its share of a node at least
/// half full, with the node's edges.
fn entry_cost<K, V>() -> usize {
    2 * size_of::<(K, V)>() + 16
}

/// Heap bytes of a string of `capacity` bytes.
fn text_cost(capacity: usize) -> usize {
    if capacity == 0 {
        0
    } else {
        alloc_cost(capacity)
    }
}

/// Why a transaction's outcome is `unknown`, where its record says: `end not captured`
/// (bytes lost after its last message), `ended unseen` (no end seen, but a last stable
/// offset passed its batches: `stable_past_frame`).
fn unknown_why(t: &crate::txn::Transaction) -> Option<&'static str> {
    if t.outcome != crate::txn::Outcome::Unknown {
        None
    } else if t.end_not_captured {
        Some("end not captured")
    } else if t.ended_unseen() {
        Some("ended unseen")
    } else {
        None
    }
}

/// How a bar is coloured: the transaction's outcome, and who aborted it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BarClass {
    /// COMMIT markers, or an accepted EndTxn asking to commit.
    Committed,
    /// Committed, but an admin client's ABORT markers came for some of its partitions
    /// (`"partial_commit": true`).
    CommittedInPart,
    /// Aborted with the client's EndTxn.
    AbortedByClient,
    /// Aborted by the coordinator (a timeout, a fenced producer, or an abort with no EndTxn
    /// while the client's messages were seen).
    AbortedByCoordinator,
    /// Aborted by an admin client (`kafka-transactions.sh abort`).
    AbortedByAdmin,
    /// Aborted, by whom not seen (ABORT markers, and none of its client's messages).
    Aborted,
    /// Begun in the capture, no end seen.
    Open,
    /// Hanging (`"hanging": true` in its record): open past the timeout its InitProducerId
    /// asked for, or with `hanging_transaction` verdicts (its end accepted, and a partition's
    /// marker never came).
    Hanging,
    /// Neither its beginning nor its end seen.
    Unknown,
}

impl BarClass {
    /// The class of transaction record `t`.
    pub fn of(t: &TransactionRecord) -> Self {
        if t.transaction.hanging {
            BarClass::Hanging
        } else {
            BarClass::of_outcome(t)
        }
    }

    /// The class of transaction record `t` by its outcome and who ended it, hanging or not
    /// (the aborted table's "aborted by" of a hanging transaction whose abort was accepted).
    pub fn of_outcome(t: &TransactionRecord) -> Self {
        let t = &t.transaction;
        match (t.outcome, t.ended_by) {
            (Outcome::Committed, _) if t.partial_commit => BarClass::CommittedInPart,
            (Outcome::Committed, _) => BarClass::Committed,
            (Outcome::Aborted, Some(EndedBy::Client)) => BarClass::AbortedByClient,
            (Outcome::Aborted, Some(EndedBy::Admin)) => BarClass::AbortedByAdmin,
            (Outcome::Aborted, Some(EndedBy::Coordinator)) => BarClass::AbortedByCoordinator,
            (Outcome::Aborted, None) => BarClass::Aborted,
            (Outcome::Open, _) => BarClass::Open,
            (Outcome::Unknown, _) => BarClass::Unknown,
        }
    }

    /// What the page's legend and counts call it.
    pub fn label(self) -> &'static str {
        match self {
            BarClass::Committed => "committed",
            BarClass::CommittedInPart => {
                "committed in part (an admin client aborted some of its partitions)"
            }
            BarClass::AbortedByClient => "aborted by the client",
            BarClass::AbortedByCoordinator => "aborted by the coordinator",
            BarClass::AbortedByAdmin => "aborted by an admin client",
            BarClass::Aborted => "aborted (by whom not seen)",
            BarClass::Open => "open",
            BarClass::Hanging => "hanging (open past its timeout, or its markers never came)",
            BarClass::Unknown => "unknown",
        }
    }

    /// Every class, in legend order.
    pub const ALL: [BarClass; 9] = [
        BarClass::Committed,
        BarClass::CommittedInPart,
        BarClass::AbortedByClient,
        BarClass::AbortedByCoordinator,
        BarClass::AbortedByAdmin,
        BarClass::Aborted,
        BarClass::Open,
        BarClass::Hanging,
        BarClass::Unknown,
    ];

    /// The CSS class name the page gives it (`committed`, `committed-part`, `aborted-client`,
    /// `aborted-coordinator`, `aborted-admin`, `aborted`, `open`, `hanging`, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            BarClass::Committed => "committed",
            BarClass::CommittedInPart => "committed-part",
            BarClass::AbortedByClient => "aborted-client",
            BarClass::AbortedByCoordinator => "aborted-coordinator",
            BarClass::AbortedByAdmin => "aborted-admin",
            BarClass::Aborted => "aborted",
            BarClass::Open => "open",
            BarClass::Hanging => "hanging",
            BarClass::Unknown => "unknown",
        }
    }
}

/// What a lane is of: a transactional id, or a producer id whose transactional id was never
/// seen (ordered: the ids first).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum LaneKey {
    /// A transactional id.
    Id(String),
    /// A producer id, its transactional id unknown.
    Producer(i64),
}

impl LaneKey {
    /// The lane's label: the id (`(empty)` for an empty one), or `pid N`.
    pub fn label(&self) -> String {
        match self {
            LaneKey::Id(id) if id.is_empty() => "(empty)".to_string(),
            LaneKey::Id(id) => id.clone(),
            LaneKey::Producer(p) => format!("pid {p}"),
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
    /// The coordinator's reason when it ended the transaction itself (`timeout`, `fenced`),
    /// or why its outcome is unknown where its record says (`end not captured`, `ended
    /// unseen`).
    pub reason: Option<&'static str>,
    /// Producer id and epoch.
    pub producer_id: i64,
    /// The epoch the producer used.
    pub producer_epoch: i16,
    /// Frame number of the record's message that finished it (for Go To Packet).
    pub frame: u64,
    /// Its partitions' marker responses (each WriteTxnMarkers exchange that answered one, at
    /// most [`MAX_TICKS`], in order), in microseconds since the Unix epoch.
    pub ticks: Vec<i64>,
    /// A failed marker, when one was answered with an error Kafka's coordinator treats as
    /// terminal and never written (`topic-partition ERROR`); the page outlines its bar.
    pub marker_failed: Option<String>,
    /// Its number among the bars kept (0-based): its element's id is `b<seq>`.
    pub seq: usize,
    /// What hovering it says beyond its class: its partitions and their markers, its errors
    /// and its first frame (at most [`DETAIL_LIMIT`] bytes).
    pub detail: String,
}

/// Most ticks a bar draws (16).
pub const MAX_TICKS: usize = 16;

/// Most bytes of a bar's hover text beyond its class.
pub const DETAIL_LIMIT: usize = 240;

/// The hover text of transaction `t`: its first frame, its time and its duration, the bumped
/// epoch its markers carry (when it differs), whether its hanging went unjudged for want of
/// marker traffic (`markers_not_captured`), its EndTxn and its answer, partitions with their
/// markers and marker errors, its errors; cut at [`DETAIL_LIMIT`] bytes.
fn detail(t: &crate::txn::Transaction) -> String {
    // Each partition's marker after a colon; when some have one, those without say so (a
    // list "a-0, a-1 COMMIT" would read as both committed).
    let any_marker = t
        .partitions
        .iter()
        .any(|p| p.marker.is_some() || p.marker_request_lost || p.stable_past_frame.is_some());
    // Partitions whose marker went on the wire (or was answered) first: the text is cut at
    // [`DETAIL_LIMIT`], and those say most (the others are marked by their leader, the
    // coordinator, or got none).
    let mut ordered: Vec<&crate::txn::TxnPartition> = t.partitions.iter().collect();
    ordered.sort_by_key(|p| p.marker.is_none() && !p.marker_request_lost);
    let parts: Vec<String> = ordered
        .into_iter()
        .map(|p| {
            let name = p.topic.as_deref().or(p.topic_id.as_deref()).unwrap_or("?");
            let marker = match (&p.marker, p.marker_error.as_deref()) {
                (Some(m), Some(e)) if e != "NONE" && p.marker_written => {
                    format!(" {m} (written after {e})")
                }
                (Some(m), Some(e))
                    if e != "NONE"
                        && p.marker_error_handling != Some(MarkerErrorHandling::Terminal) =>
                {
                    format!(" {m} not written: {e}")
                }
                (Some(m), Some(e)) if e != "NONE" => format!(" {m} marker failed: {e}"),
                (Some(m), _) if p.marker_written_later => {
                    format!(" {m} (unanswered, written: a later message was accepted)")
                }
                (Some(m), _) if p.marker_answer_cut && !p.marker_written => {
                    format!(" {m} (answered, cut off before its error code)")
                }
                (Some(m), _) if p.marker_left_out && !p.marker_written => {
                    format!(" {m} (left out of its response: never sent again)")
                }
                (Some(m), _) if !p.marker_written => format!(" {m} (unanswered)"),
                (Some(m), _) => format!(" {m}"),
                // Its request lost: the inferred response said written or not, not the result.
                (None, Some(e)) if p.marker_request_lost => {
                    format!(" marker not written: {e} (its request not captured)")
                }
                (None, _) if p.marker_request_lost => {
                    " marker written (its request not captured: result unknown)".to_string()
                }
                // The coordinator writes the markers of partitions it leads itself: none on
                // the wire.
                (None, _) if p.marker_local => {
                    " no marker message (led by the coordinator)".to_string()
                }
                // No marker seen, but a consumer's offset passed its batches.
                (None, _) if p.stable_past_frame.is_some() => {
                    " written unseen (a consumer's last stable offset passed it)".to_string()
                }
                (None, _) if any_marker => " no marker on the wire".to_string(),
                (None, _) => String::new(),
            };
            // A retried marker: how many attempts, and how long from its first request to
            // its last response (the coordinator's back-off included).
            let marker = match (p.marker_attempts, p.marker_latency_us) {
                (n, Some(us)) if n > 1 && !marker.is_empty() => {
                    format!("{marker} ({n} attempts in {})", duration(us))
                }
                (n, None) if n > 1 && !marker.is_empty() => format!("{marker} ({n} attempts)"),
                _ => marker,
            };
            // A marker of the other result sent before (a COMMIT never written, then an
            // admin's ABORT).
            let marker = match &p.replaced_marker {
                Some(old) if !marker.is_empty() => format!(
                    "{marker} after a {} {} (frame {})",
                    old.marker,
                    match old.marker_error.as_deref() {
                        Some(e) if e != "NONE" => format!("answered {e}"),
                        _ if old.marker_response_frame.is_some() => "answered".to_string(),
                        _ => "unanswered".to_string(),
                    },
                    old.marker_frame.unwrap_or(0)
                ),
                _ => marker,
            };
            let marker = match marker.strip_prefix(' ') {
                Some(m) => format!(": {m}"),
                None => marker,
            };
            format!("{name}-{}{marker}", p.partition)
        })
        .collect();
    // Where and when it began first: the rest may be cut.
    let mut d = format!(
        "first frame {} at {}, {} to {}; ",
        t.begin.frame,
        t.begin.ts.to_rfc3339(),
        duration(t.duration_us),
        if t.outcome == crate::txn::Outcome::Open {
            "the capture's end (still open)"
        } else {
            "its last message"
        }
    );
    if let Some(e) = t.marker_producer_epoch {
        // Transaction version 2 bumps the epoch at every end (and the coordinator does when it
        // aborts on its own): the markers, and the producer's next transaction, carry this one.
        d.push_str(&format!("markers carry epoch {e}; "));
    }
    if t.markers_not_captured {
        // A capture with no marker traffic (a client's host): no marker seen says nothing.
        d.push_str("no WriteTxnMarkers from its coordinator in the capture: hanging not judged; ");
    }
    if let Some(asked) = t.requested {
        // What the client was told: an accepted commit whose records were aborted, or never
        // marked, is the heart of many incidents.
        let answer = match (&t.end_response, t.end_error.as_deref()) {
            (Some(m), Some(e)) => format!(
                "answered {e} in frame {}{}",
                m.frame,
                t.end_latency_us
                    .map_or(String::new(), |us| format!(" after {}", duration(us)))
            ),
            _ => "not answered in the capture".to_string(),
        };
        let frame = t.end_requested.map_or(0, |m| m.frame);
        d.push_str(&format!("EndTxn {asked} (frame {frame}) {answer}; "));
    }
    d.push_str(&format!(
        "partitions: {}",
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    ));
    if !t.errors.is_empty() {
        let errs: Vec<String> = t
            .errors
            .iter()
            .map(|e| format!("{} {} (frame {})", e.api_name, e.error, e.frame))
            .collect();
        d.push_str(&format!("; errors: {}", errs.join(", ")));
    }
    let mut d = cut_text(&d, DETAIL_LIMIT);
    // Kept for the page: not the capacity of the whole text (a transaction of 1,000
    // partitions would keep 40 KB per bar).
    d.shrink_to_fit();
    d
}

/// A lane: the transactions of one transactional id (or of one producer id, the id unknown).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Lane {
    /// Its bars, in the order their records were written.
    pub bars: Vec<Bar>,
    /// Transactions past [`MAX_BARS`], by class, not drawn.
    pub not_drawn: BTreeMap<BarClass, u64>,
}

/// One marker round trip (one WriteTxnMarkers exchange): when its response came, between
/// which brokers, how long it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Latency {
    /// When the response came, in microseconds since the Unix epoch.
    pub at_us: i64,
    /// The coordinator that sent the marker: `ip:port` when the transaction's client messages
    /// named it, else the address its markers came from and their client id
    /// (`10.0.0.1 (broker-0-txn-marker-sender)`), else `coordinator not seen`.
    pub from: std::sync::Arc<str>,
    /// The broker the marker went to (`ip:port`).
    pub broker: std::sync::Arc<str>,
    /// The frame of the marker's response.
    pub frame: u64,
    /// The round trip in microseconds.
    pub us: i64,
    /// The producer id and epoch of a transaction it carried a marker of (the first one whose
    /// record came, when it carried several).
    pub transaction: (i64, i16),
    /// That transaction's bar ([`Bar::seq`]), when kept.
    pub bar: Option<usize>,
}

/// The marker error table's name for a marker sent and never answered in the capture.
pub const NO_RESPONSE: &str = "no response";

/// One row of the marker error table: an error of one partition's marker, or
/// [`NO_RESPONSE`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorRow {
    /// How many markers got it.
    pub count: u64,
    /// What the coordinator does with it (`retried`, `terminal`, `dropped`, `unexpected`;
    /// `unanswered` for [`NO_RESPONSE`]).
    pub handling: &'static str,
    /// The longest a marker that got it took, from its first request to its last response
    /// (retries and the coordinator's back-off included: the JSON's `marker_latency_us`), in
    /// microseconds; `None` when none was timed.
    pub longest_us: Option<i64>,
    /// The first and last frame of a marker response carrying it.
    pub first_frame: u64,
    /// See `first_frame`.
    pub last_frame: u64,
    /// The producer id and epoch of the first transaction whose marker got it.
    pub transaction: (i64, i16),
    /// That transaction's bar ([`Bar::seq`]), when kept.
    pub bar: Option<usize>,
}

/// One row of the page's table of aborted transactions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbortedRow {
    /// Its lane's label (transactional id, or `pid N`).
    pub lane: String,
    /// Producer id and epoch.
    pub producer_id: i64,
    /// See `producer_id`.
    pub producer_epoch: i16,
    /// Who aborted it (`aborted by the client`, `aborted by the coordinator`), hanging or
    /// not ([`BarClass::of_outcome`]).
    pub class: BarClass,
    /// Its place in the order transactions came (the page lists each group in it).
    pub seq: u64,
    /// Still hanging at the capture's end (`"hanging": true`: its abort accepted and a
    /// partition's marker never came, or open past its timeout).
    pub hanging: bool,
    /// For an admin's abort after the client asked to end it: microseconds from that EndTxn
    /// request to the ABORT markers (how long it hung before the admin stepped in).
    pub admin_after_us: Option<i64>,
    /// The coordinator's reason, when it aborted on its own (`timeout`, `fenced`).
    pub reason: Option<&'static str>,
    /// What its client asked with EndTxn (`commit`, `abort`), if it did.
    pub requested: Option<&'static str>,
    /// Its errors, as `ApiName ERROR (frame N)`: the first five.
    pub errors: Vec<String>,
    /// Errors past those five.
    pub more_errors: usize,
    /// Its bar's number ([`Bar::seq`]), when it was kept.
    pub bar: Option<usize>,
    /// Frames of its first message and of the one that finished it.
    pub first_frame: u64,
    /// See `first_frame`.
    pub last_frame: u64,
}

/// Everything the page shows of the transactions. See the module documentation.
#[derive(Debug, Default)]
pub struct ReportData {
    /// What it holds, charged to the run's budget ([`ReportData::charged_to`]).
    budget: Budget,
    /// What the budget had no room for, counted and not kept, by what it is (`bars`,
    /// `round trips`, `verdicts`, ...).
    pub not_kept: BTreeMap<&'static str, u64>,
    /// Lanes by key.
    pub lanes: BTreeMap<LaneKey, Lane>,
    /// Transactions by class, drawn or not.
    pub classes: BTreeMap<BarClass, u64>,
    /// The hanging ones by their record's `outcome` (`committed`, `aborted`, `open`), drawn
    /// or not: the header gives them, so that its counts add up to `--stats`' by outcome.
    pub hanging_outcomes: BTreeMap<&'static str, u64>,
    /// Of the committed ones, those with a marker that failed for good (a terminal error,
    /// never written: those partitions' records are not committed), drawn or not.
    pub committed_marker_failed: u64,
    /// Transactions past [`MAX_BARS`] whose lane was not drawn at all.
    pub not_drawn: u64,
    /// Marker round trips counted in the histogram (all of them, kept or not).
    pub round_trips: u64,
    /// Marker attempts whose round trip no record kept (a marker keeps the round trips of
    /// its first 7 attempts and its last: [`crate::txn::MAX_ROUND_TRIPS`]), counted, not
    /// timed.
    pub untimed_round_trips: u64,
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
    /// The transaction view's verdicts (its anomalies: hanging transactions, failed markers,
    /// stale coordinator epochs, fenced producers, stuck last stable offsets), the first
    /// [`MAX_VERDICTS`].
    pub verdicts: Vec<Verdict>,
    /// Verdicts past [`MAX_VERDICTS`], counted.
    pub verdicts_not_listed: u64,
    /// Aborted transactions: at most [`MAX_ABORTED`], the first ones, except that past the
    /// bound one not aborted by its client (the coordinator's, an admin's, a hanging one)
    /// takes the place of the latest one a client aborted.
    pub aborted: Vec<AbortedRow>,
    /// Aborted transactions past [`MAX_ABORTED`], counted.
    pub aborted_not_listed: u64,
    /// The brokers the transactions' messages went to (coordinators and partition leaders that
    /// got markers) by `ip:port`: the first [`MAX_BROKERS`].
    pub brokers: BTreeMap<String, BrokerRow>,
    /// Marker attempts to brokers past [`MAX_BROKERS`] rows (or the budget), not listed.
    pub markers_to_unlisted: u64,
    /// Partitions the transaction records counted without listing them
    /// (`partitions_not_listed`: past [`crate::txn::MAX_PARTITIONS`] in one transaction, or
    /// of topics the budget did not name), whose marker attempts the broker table cannot
    /// count.
    pub partitions_not_listed: u64,
    /// Partition leaders by node id (Metadata responses), with how many distinct partitions
    /// of the transactions each led: the first [`MAX_BROKERS`] nodes.
    pub leaders: BTreeMap<i32, u64>,
    /// The response frames of the latest marker exchanges counted as round trips (at most
    /// [`MAX_LATENCIES`], the oldest forgotten first: the transactions an exchange carried
    /// markers of are finished by it and written soon after), so that an exchange carrying
    /// markers of several transactions is one round trip.
    pub exchanges: std::collections::HashSet<u64>,
    /// [`ReportData::exchanges`] in the order they were counted, oldest first.
    pub exchange_order: std::collections::VecDeque<u64>,
    /// The filter options the run was given, with their values (`--outcome aborted`, ...;
    /// [`super::filter::Filter::described`]): the page then shows only the transactions and
    /// verdicts they kept, and says so.
    pub filtered_by: Vec<String>,
    /// Which anomalies the run writes (`--anomalies`; `Relevant` by default), for the
    /// header's account of those it counted but did not write.
    pub anomaly_level: Option<super::AnomalyLevel>,
    /// The run wrote no records (`-q` with `--report`): the header says what its records
    /// would have held.
    pub quiet: bool,
    /// The earliest first message of a bar kept: its time and frame (the timeline's 0 s).
    pub first_begin: Option<(Timestamp, u64)>,
    /// Verdicts by kind, all of them (listed or not).
    pub verdict_counts: BTreeMap<&'static str, u64>,
    /// Marker errors past [`MAX_ERROR_ROWS`] rows, by error name.
    pub errors_not_listed: BTreeMap<String, u64>,
    /// Round trips not drawn because the capture's clock went back between request and
    /// response.
    pub clock_went_back: u64,
    /// The coordinator and broker names of the round trips, each kept once (at most
    /// [`MAX_PAIR_NAMES`]).
    pub names: std::collections::HashSet<std::sync::Arc<str>>,
    /// Bars kept of transactions that committed cleanly (see [`MAX_CLEAN_BARS`]).
    pub clean_bars: usize,
    /// The record taken last, for the verdicts the transaction view writes right after their
    /// transaction's record.
    last_added: Option<LastAdded>,
    /// Anomaly records the run wrote (past `--anomalies` and the filters), by kind: the page
    /// says how many of those it found the records hold.
    pub anomalies_written: BTreeMap<&'static str, u64>,
    /// Verdicts written before their transaction's record (by their index in `verdicts`),
    /// by producer id and epoch, until that record comes.
    pending: std::collections::HashMap<(i64, i16), Vec<usize>>,
    /// Transactions not drawn because of the page's own bounds ([`MAX_BARS`] bars, of them
    /// [`MAX_CLEAN_BARS`] clean commits), not the budget: (all, of them clean commits).
    pub capped: (u64, u64),
    /// The (node id, topic, partition) counted in `leaders`, at most
    /// [`MAX_LEADER_PARTITIONS`] (past it, partitions are no longer counted).
    pub leader_partitions: std::collections::HashSet<(i32, String, i32)>,
    /// By what [`ReportData::keep`] was asked to keep: things kept and the bytes charged for
    /// them; with the things not kept (`not_kept`), about what keeping them all would take
    /// ([`ReportData::budget_note`] asks for a limit from it).
    kept: BTreeMap<&'static str, (u64, usize)>,
    /// The named things refused so far (a broker, a marker error's name), by a hash of their
    /// name, [`REFUSED_BITS`] bits made at the first refusal: a thing asked for again (the
    /// broker of every marker attempt) is counted once in `not_kept` (about: two names that
    /// share a bit count as one).
    refused: Vec<u64>,
}

/// Whether what [`ReportData::keep`] is asked to keep comes by the thousand (see
/// [`Budget::take`]).
fn bulk(what: &str) -> bool {
    matches!(
        what,
        "bars" | "round trips" | "marker exchanges" | "partitions of the broker table"
    )
}

/// Bits of [`ReportData`]'s set of names refused (65,536: 8 KiB).
const REFUSED_BITS: usize = 65_536;

/// The record [`ReportData::add`] took last.
#[derive(Debug, Clone)]
struct LastAdded {
    /// Producer id and epoch.
    transaction: (i64, i16),
    /// Its record's frame (where the view writes the verdicts that follow it).
    frame: u64,
    /// Its bar's lane and place, when kept.
    bar: Option<(LaneKey, usize)>,
}

/// What the page's broker table says of one broker.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BrokerRow {
    /// Its node id, when a Metadata or FindCoordinator response gave one for its address.
    pub node_id: Option<i32>,
    /// Transactions it coordinated.
    pub coordinated: u64,
    /// Partition markers it was sent.
    pub markers: u64,
}

/// One verdict of the transaction view, for the page's first section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Its anomaly kind (`hanging_transaction`, ...).
    pub kind: &'static str,
    /// Its sentence.
    pub message: String,
    /// The frame it was reported at.
    pub frame: u64,
    /// The transaction it is about (producer id, epoch), when it names one.
    pub transaction: Option<(i64, i16)>,
    /// The bar of that transaction ([`Bar::seq`]), when it was kept and told apart (under
    /// transaction version 1 one producer id and epoch has many transactions: the verdict's
    /// frame is one of its transaction's frames).
    pub bar: Option<usize>,
}

/// The frame of a transaction's last message (its record's own frame may be a later,
/// unrelated message's, or the capture's last packet's).
fn last_frame(r: &TransactionRecord) -> u64 {
    r.transaction.frames.last().copied().unwrap_or(r.loc.frame)
}

/// A broker's `ip:port` (`[ip]:port` for IPv6).
fn address(b: &crate::txn::Broker) -> String {
    match b.ip {
        std::net::IpAddr::V6(ip) => format!("[{ip}]:{}", b.port),
        ip => format!("{ip}:{}", b.port),
    }
}

/// `ts` in microseconds since the Unix epoch.
fn micros(ts: Timestamp) -> i64 {
    (ts.as_nanos() / 1000).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

impl ReportData {
    /// Data charged to `memory` ([`Holding::Report`]) as it is kept: at most a quarter of its
    /// limit, and not past three quarters of it in all (see `Budget`); past either, what comes is counted in [`ReportData::not_kept`], not kept.
    /// ([`ReportData::default`] is charged to nothing, bounded only by the `MAX_` caps.)
    pub fn charged_to(memory: &Memory) -> Self {
        ReportData {
            budget: Budget {
                charge: Some(memory.charge(Holding::Report)),
            },
            ..ReportData::default()
        }
    }

    /// Whether `bytes` more of `what` may be kept (charged to the budget); counts it in
    /// [`ReportData::not_kept`] when not.
    fn keep(&mut self, what: &'static str, bytes: usize) -> bool {
        let share = if bulk(what) {
            Share::Bulk
        } else {
            Share::Other
        };
        self.keep_in(what, bytes, share)
    }

    /// As [`ReportData::keep`], under `share`.
    fn keep_in(&mut self, what: &'static str, bytes: usize, share: Share) -> bool {
        let kept = self.budget.take(bytes, share);
        if kept {
            self.note_kept(what, bytes);
        } else {
            *self.not_kept.entry(what).or_default() += 1;
            self.budget.given_up();
        }
        kept
    }

    /// As [`ReportData::keep`] for a thing that may be asked for again by `name` (a broker,
    /// a name): refused, it is counted in `not_kept` the first time only.
    fn keep_named(
        &mut self,
        what: &'static str,
        name: &impl std::hash::Hash,
        bytes: usize,
    ) -> bool {
        use std::hash::{Hash, Hasher};
        let share = if bulk(what) {
            Share::Bulk
        } else {
            Share::Other
        };
        if self.budget.take(bytes, share) {
            self.note_kept(what, bytes);
            return true;
        }
        if self.refused.is_empty() {
            // Bounded (8 KiB) and charged even past the budget: it is what keeps the counts
            // true.
            self.refused = vec![0; REFUSED_BITS / 64];
            if let Some(c) = &mut self.budget.charge {
                c.force(c.bytes() + vec_cost::<u64>(REFUSED_BITS / 64));
            }
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (what, name).hash(&mut hasher);
        let bit = (hasher.finish() % REFUSED_BITS as u64) as usize;
        let (word, mask) = (bit / 64, 1u64 << (bit % 64));
        if self.refused[word] & mask == 0 {
            self.refused[word] |= mask;
            *self.not_kept.entry(what).or_default() += 1;
            self.budget.given_up();
        }
        false
    }

    /// Bytes charged to the budget for what is kept.
    pub fn charged(&self) -> usize {
        self.budget.charge.as_ref().map_or(0, Charge::bytes)
    }

    /// What the budget had no room for, as one sentence with the way to raise it (`None`
    /// when everything fitted).
    pub fn budget_note(&self) -> Option<String> {
        if self.not_kept.is_empty() {
            return None;
        }
        let what: Vec<String> = self
            .not_kept
            .iter()
            .map(|(k, n)| match n {
                1 => format!("1 {}", singular(k)),
                n => format!("{n} {k}"),
            })
            .collect();
        let advice = self
            .budget
            .charge
            .as_ref()
            .map(|c| c.memory().advice_for(self.suggested(c.memory())))
            .unwrap_or_default();
        Some(format!(
            "the page's data reached its share of the memory budget (a quarter of it); not \
             kept for the page, only counted in its totals: {} ({advice})",
            what.join(", ")
        ))
    }

    /// The transactions the page's own bounds left undrawn ([`MAX_BARS`] bars, of them
    /// [`MAX_CLEAN_BARS`] clean commits), as one sentence: no memory limit lifts them, a
    /// filter narrows the page to the rest. `None` when every transaction within the budget
    /// was drawn.
    pub fn bound_note(&self) -> Option<String> {
        let (all, clean) = self.capped;
        if all == 0 {
            return None;
        }
        let what = if clean == all {
            format!(
                "{all} transaction{} that committed cleanly (no verdict, no failed marker)",
                if all == 1 { "" } else { "s" }
            )
        } else if clean > 0 {
            format!("{all} transactions ({clean} of them committed cleanly)")
        } else {
            format!("{all} transaction{}", if all == 1 { "" } else { "s" })
        };
        Some(format!(
            "{what} not drawn, only counted in the page's totals: the page draws at most \
             {MAX_BARS} transactions, at most {MAX_CLEAN_BARS} of them clean commits, \
             whatever --memory-limit (--transactional-id or --outcome choose what it draws)"
        ))
    }

    /// The budget, in bytes, the page's two budget notes ask for (one limit, not two): when
    /// the page's data did not fit, about what keeping everything takes (see `needed`; the
    /// page's data takes at most two sixteenths of the budget in bulk, clean commits' bars and
    /// round trips, a quarter in all: 8 times that), at least twice this budget; when the
    /// stages reading the capture gave something up too, at least four times it (what their
    /// own `memory_limit` anomalies ask for).
    fn suggested(&self, memory: &crate::memory::Memory) -> usize {
        let limit = memory.limit();
        let decoding = Holding::ALL
            .iter()
            .any(|&h| h != Holding::Report && memory.given_up(h) > 0);
        let floor = limit.saturating_mul(if decoding { 4 } else { 2 });
        if self.not_kept.is_empty() {
            floor
        } else {
            self.needed().saturating_mul(8).max(floor)
        }
    }

    /// Counts a thing kept for `bytes`.
    fn note_kept(&mut self, what: &'static str, bytes: usize) {
        let k = self.kept.entry(what).or_default();
        k.0 += 1;
        k.1 = k.1.saturating_add(bytes);
    }

    /// About what keeping everything asked for would take: what is charged, and for each kind
    /// of thing not kept, as many more times its average cost so far (4 KiB a thing for a
    /// kind never kept), no more of a kind than the page's own bound on it lets it keep (a
    /// larger limit would not draw them).
    fn needed(&self) -> usize {
        let more: u128 = self
            .not_kept
            .iter()
            .map(|(what, &n)| {
                let room = match *what {
                    "bars" => MAX_BARS.saturating_sub(self.bars),
                    "round trips" => MAX_LATENCIES.saturating_sub(self.latencies.len()),
                    "verdicts" => MAX_VERDICTS.saturating_sub(self.verdicts.len()),
                    "aborted transactions" => MAX_ABORTED.saturating_sub(self.aborted.len()),
                    "rows of the marker error table" => {
                        MAX_ERROR_ROWS.saturating_sub(self.errors.len())
                    }
                    _ => usize::MAX,
                };
                let n = n.min(room as u64);
                let each = match self.kept.get(what) {
                    Some(&(k, b)) if k > 0 => (b as u128).div_ceil(k as u128),
                    _ => 4096,
                };
                each * n as u128
            })
            .sum();
        (self.charged() as u128 + more).min(usize::MAX as u128) as usize
    }

    /// What the stages reading the capture gave up for the memory budget (from `stats`; the
    /// page's own data aside), as one sentence with the way to raise it: the counts of the
    /// page (responses without their request, transactions of unknown beginning) may then be
    /// the budget's doing, not the capture's. `None` when nothing was given up.
    pub fn decoding_note(&self, stats: &crate::stats::Stats) -> Option<String> {
        let given: BTreeMap<&str, u64> = stats
            .memory_given_up
            .iter()
            .filter(|(k, _)| **k != Holding::Report.as_str())
            .map(|(k, v)| (*k, *v))
            .collect();
        if given.is_empty() {
            return None;
        }
        let advice = self
            .budget
            .charge
            .as_ref()
            .map(|c| format!(" ({})", c.memory().advice_for(self.suggested(c.memory()))))
            .unwrap_or_default();
        // Transactions the view wrote early, as they stood, were never judged at the
        // capture's end: a hanging one shows as what it stood as (committed, open).
        let early = if given.contains_key(Holding::Transactions.as_str()) {
            "; transactions the view wrote early, as they stood, were not judged at the \
             capture's end, so hanging ones among them show as committed or open, without \
             their verdict"
        } else {
            ""
        };
        Some(format!(
            "this run gave up holdings for the memory budget ({}): what they held was not decoded, so some of what this page counts (responses without their request, transactions whose beginning is unknown, markers unanswered) may be the budget's doing, not the capture's{early}{advice}",
            counted(&given)
        ))
    }

    /// Heap bytes keeping `bar` on the lane of `key` adds (the lane made when missing).
    fn bar_cost(&self, key: &LaneKey, bar: &Bar) -> usize {
        let own = vec_cost::<i64>(bar.ticks.capacity())
            + text_cost(bar.detail.capacity())
            + bar
                .marker_failed
                .as_ref()
                .map_or(0, |m| text_cost(m.capacity()));
        let place = match self.lanes.get(key) {
            Some(lane) => push_cost(&lane.bars),
            None => {
                let name = match key {
                    LaneKey::Id(id) => text_cost(id.capacity()),
                    LaneKey::Producer(_) => 0,
                };
                // Its entry, its name, its first bars and its count of bars not drawn.
                entry_cost::<LaneKey, Lane>()
                    + name
                    + vec_cost::<Bar>(4)
                    + entry_cost::<BarClass, u64>()
            }
        };
        own + place
    }

    /// The earliest start of a bar drawn, the page's time origin (`None` with no bar).
    pub fn origin(&self) -> Option<i64> {
        self.lanes
            .values()
            .flat_map(|l| l.bars.iter().map(|b| b.start_us))
            .min()
    }

    /// The page's time axis: from the first bar kept to the last bar or round trip kept,
    /// leaving out the times on the far side of a clock jump. A jump is a gap between two
    /// consecutive times (bar starts and ends, round trips) of more than [`CLOCK_JUMP_US`]
    /// and more than ten times all the other times span together (one packet dated a year
    /// ahead squeezed every bar into the first pixel); the side with fewer times is left out,
    /// and what lies there is drawn at the axis's edge.
    pub fn time_axis(&self) -> TimeAxis {
        let mut times: Vec<i64> = self
            .lanes
            .values()
            .flat_map(|l| l.bars.iter().flat_map(|b| [b.start_us, b.end_us]))
            .chain(self.latencies.iter().map(|l| l.at_us))
            .collect();
        times.sort_unstable();
        let origin = self.origin().unwrap_or(0);
        let (Some(&first), Some(&last)) = (times.first(), times.last()) else {
            return TimeAxis {
                origin,
                end: origin,
                outside: 0,
                jump_us: 0,
            };
        };
        let whole = last.saturating_sub(first);
        let widest = times
            .windows(2)
            .enumerate()
            .map(|(i, w)| (w[1].saturating_sub(w[0]), i + 1))
            .max();
        if let Some((gap, at)) = widest {
            let rest = whole.saturating_sub(gap);
            if gap > CLOCK_JUMP_US && gap / 10 > rest {
                let (inside, outside) = times.split_at(at);
                return if inside.len() >= outside.len() {
                    TimeAxis {
                        origin: origin.min(inside[inside.len() - 1]),
                        end: inside[inside.len() - 1],
                        outside: outside.len() as u64,
                        jump_us: gap,
                    }
                } else {
                    TimeAxis {
                        origin: outside[0],
                        end: last,
                        outside: inside.len() as u64,
                        jump_us: -gap,
                    }
                };
            }
        }
        TimeAxis {
            origin,
            end: last.max(origin),
            outside: 0,
            jump_us: 0,
        }
    }

    /// Takes one record: an anomaly of the transaction layer becomes a verdict.
    pub fn record(&mut self, rec: &crate::kafka::event::Record) {
        let crate::kafka::event::Event::Anomaly(a) = &rec.event else {
            return;
        };
        if a.kind.layer() != crate::vocab::Layer::Transaction {
            return;
        }
        let about = a
            .transaction
            .as_ref()
            .map(|t| (t.producer_id, t.producer_epoch));
        *self.verdict_counts.entry(a.kind.as_str()).or_default() += 1;
        // Written right after its transaction's record (at that record's frame): that one.
        let follows = self
            .last_added
            .as_ref()
            .is_some_and(|l| Some(l.transaction) == about && l.frame == rec.loc.frame);
        let bar = if follows {
            self.last_added
                .as_ref()
                .and_then(|l| l.bar.as_ref())
                .and_then(|(key, i)| self.lanes.get(key).and_then(|l| l.bars.get(*i)))
                .map(|b| b.seq)
        } else {
            None
        };
        if self.verdicts.len() >= MAX_VERDICTS {
            self.verdicts_not_listed += 1;
            return;
        }
        let waits = match (follows, about) {
            (false, Some(t)) => match self.pending.get(&t) {
                Some(v) => push_cost(v),
                None => {
                    insert_cost::<((i64, i16), Vec<usize>)>(
                        self.pending.len(),
                        self.pending.capacity(),
                    ) + vec_cost::<usize>(4)
                }
            },
            _ => 0,
        };
        let message = cut_text(&a.message, VERDICT_MESSAGE_LIMIT);
        let cost = push_cost(&self.verdicts) + text_cost(message.len()) + waits;
        if !self.keep("verdicts", cost) {
            self.verdicts_not_listed += 1;
            return;
        }
        if let (false, Some(t)) = (follows, about) {
            // Before its transaction's record (a failed marker, a stale epoch): matched when
            // that record comes, by frame.
            self.pending.entry(t).or_default().push(self.verdicts.len());
        }
        self.verdicts.push(Verdict {
            kind: a.kind.as_str(),
            message,
            frame: rec.loc.frame,
            transaction: about,
            bar,
        });
    }

    /// Takes one transaction record.
    pub fn add(&mut self, r: &TransactionRecord) {
        self.transactions += 1;
        let t = &r.transaction;
        let key = match &t.transactional_id {
            Some(id) => LaneKey::Id(id.clone()),
            None => LaneKey::Producer(t.producer_id),
        };
        let class = BarClass::of(r);
        *self.classes.entry(class).or_default() += 1;
        if class == BarClass::Hanging {
            *self.hanging_outcomes.entry(t.outcome.as_str()).or_default() += 1;
        }
        self.partitions_not_listed += t.partitions_not_listed;
        // Its row in the table of aborted transactions, to link to its bar once kept.
        let mut aborted_row = None;
        if let Some(c) = &t.coordinator {
            if let Some(row) = self.broker_row(&address(c), c.node_id) {
                row.coordinated += 1;
            }
        }
        for p in &t.partitions {
            let (Some(node), Some(topic)) = (p.leader, p.topic.as_deref()) else {
                continue;
            };
            if let Some(a) = &p.leader_address {
                // Metadata named the leader's address: its row.
                let _ = self.broker_row(a, Some(node));
            }
            let known = self.leaders.contains_key(&node);
            let room = self.leaders.len() < MAX_BROKERS || known;
            if !room
                || self.leader_partitions.len() >= MAX_LEADER_PARTITIONS
                || self
                    .leader_partitions
                    .contains(&(node, topic.to_string(), p.partition))
            {
                continue;
            }
            let cost = insert_cost::<(i32, String, i32)>(
                self.leader_partitions.len(),
                self.leader_partitions.capacity(),
            ) + text_cost(topic.len())
                + if known { 0 } else { entry_cost::<i32, u64>() };
            if self.keep_named(
                "partitions of the broker table",
                &(node, topic, p.partition),
                cost,
            ) {
                self.leader_partitions
                    .insert((node, topic.to_string(), p.partition));
                *self.leaders.entry(node).or_default() += 1;
            }
        }
        let by = BarClass::of_outcome(r);
        if t.outcome == Outcome::Aborted || t.partial_commit {
            // Past the bound, one a client did not abort takes the place of the latest one a
            // client aborted (a coordinator's or an admin's abort is what people look for).
            let client = by == BarClass::AbortedByClient && !t.hanging;
            let place = if self.aborted.len() < MAX_ABORTED {
                None
            } else if client {
                Some(None)
            } else {
                self.aborted
                    .iter()
                    .rposition(|a| a.class == BarClass::AbortedByClient && !a.hanging)
                    .map(Some)
                    .or(Some(None))
            };
            let errors: Vec<String> = if !matches!(place, Some(None)) {
                t.errors
                    .iter()
                    .take(5)
                    .map(|e| format!("{} {} (frame {})", e.api_name, e.error, e.frame))
                    .collect()
            } else {
                Vec::new()
            };
            // The transactional id column: none seen (markers only) says so, not `pid N`
            // (the producer column gives that).
            let label = match &key {
                LaneKey::Id(_) => shorten(&key.label(), ID_SHOWN_CHARS).into_owned(),
                LaneKey::Producer(_) => "(not seen)".to_string(),
            };
            let own = text_cost(label.capacity())
                + vec_cost::<String>(errors.capacity())
                + errors
                    .iter()
                    .map(|e| text_cost(e.capacity()))
                    .sum::<usize>();
            let cost = push_cost(&self.aborted) + own;
            let seq = self.transactions;
            let row_of = |errors: Vec<String>| AbortedRow {
                lane: label,
                producer_id: t.producer_id,
                producer_epoch: t.producer_epoch,
                class: by,
                seq,
                hanging: t.hanging,
                admin_after_us: match (by, &t.end_requested, &t.markers_sent) {
                    (BarClass::AbortedByAdmin, Some(e), Some(m)) => Some(e.micros_to(m)),
                    _ => None,
                },
                reason: t.reason.map(|x| x.as_str()).or_else(|| unknown_why(t)),
                requested: t.requested,
                more_errors: t.errors.len().saturating_sub(errors.len()),
                errors,
                // Its bar's, once kept.
                bar: None,
                first_frame: t.begin.frame,
                last_frame: last_frame(r),
            };
            match place {
                Some(Some(i)) => {
                    // In place of a client's abort: charged what it takes past the row it
                    // replaces (that row's text stays charged, as the budget never gives
                    // back).
                    let freed = self.aborted.get(i).map_or(0, |a| {
                        text_cost(a.lane.capacity())
                            + vec_cost::<String>(a.errors.capacity())
                            + a.errors
                                .iter()
                                .map(|e| text_cost(e.capacity()))
                                .sum::<usize>()
                    });
                    if self.keep("aborted transactions", own.saturating_sub(freed)) {
                        if let Some(row) = self.aborted.get_mut(i) {
                            *row = row_of(errors);
                            aborted_row = Some(i);
                        }
                    }
                    self.aborted_not_listed += 1;
                }
                Some(None) => self.aborted_not_listed += 1,
                None if self.keep("aborted transactions", cost) => {
                    aborted_row = Some(self.aborted.len());
                    self.aborted.push(row_of(errors));
                }
                None => self.aborted_not_listed += 1,
            }
        }
        let start_us = micros(t.begin.ts);
        // To its last message (a client's late EndTxn after the coordinator's markers
        // included; to the capture's end for one still open there), and at least to its last
        // marker response.
        let mut end_us = start_us.saturating_add(t.duration_us.max(0));
        if t.hanging {
            // Still hanging when it was given out (the capture's end, where its verdicts are
            // given): the bar runs to that, as an open one's does.
            end_us = end_us.max(micros(r.loc.ts));
        }
        let mut ticks = Vec::new();
        let mut marker_failed = None;
        // The exchanges counted for this transaction (one carries markers of several
        // partitions, and of several transactions: each is one round trip).
        let mut counted = std::collections::HashSet::new();
        // Attempts no round trip was kept of (the most of any one partition: the others'
        // rode in the same exchanges, mostly).
        let mut untimed = 0u64;
        // What this record adds that names its bar, once the bar is kept.
        let first_latency = self.latencies.len();
        let mut new_rows = Vec::new();
        for p in &t.partitions {
            for rt in &p.marker_round_trips {
                let at = micros(rt.answered.ts);
                ticks.push(start_us.max(at));
                // Each exchange's own broker (a retry may go to a new leader).
                let to = rt.broker.clone().or_else(|| p.marker_broker.clone());
                if let Some(b) = to {
                    self.marker_to(&b);
                    if self.first_time(&mut counted, rt.answered.frame) {
                        let admin = rt.admin.as_ref().map(|(e, id)| (e, &**id));
                        self.latency(r, at, rt.us, &b, rt.answered.frame, admin);
                    }
                }
            }
            if p.marker_round_trips.len() >= crate::txn::MAX_ROUND_TRIPS {
                untimed = untimed.max(
                    u64::from(p.marker_attempts).saturating_sub(p.marker_round_trips.len() as u64),
                );
            }
            if p.marker_round_trips.is_empty() {
                if let Some(b) = &p.marker_broker {
                    self.marker_to(b);
                    if let Some(us) = p.marker_latency_us {
                        // A record made without them: its one span, at its last response.
                        let at = micros(t.markers_answered.map_or(r.loc.ts, |m| m.ts));
                        let frame = p.marker_response_frame.unwrap_or(r.loc.frame);
                        if self.first_time(&mut counted, frame) {
                            self.latency(r, at, us, b, frame, None);
                        }
                    }
                }
            }
            // Its marker's error, and a marker sent and never answered (the replaced one too:
            // a COMMIT unanswered before an admin's ABORT), as rows of the table.
            let mut rows: Vec<(u64, String)> = Vec::new();
            match (p.marker_response_frame, &p.marker_error, p.marker_frame) {
                (Some(frame), Some(error), _) => rows.push((frame, error.clone())),
                (None, None, Some(sent)) if p.marker.is_some() && !p.marker_written => {
                    rows.push((sent, NO_RESPONSE.to_string()))
                }
                _ => {}
            }
            if let Some(old) = p.replaced_marker.as_deref() {
                if let (None, None, Some(sent)) = (
                    old.marker_response_frame,
                    &old.marker_error,
                    old.marker_frame,
                ) {
                    rows.push((sent, NO_RESPONSE.to_string()));
                }
            }
            for (frame, error) in rows {
                let error = &error;
                let name = format!(
                    "{}-{}",
                    p.topic.as_deref().or(p.topic_id.as_deref()).unwrap_or("?"),
                    p.partition
                );
                if error != "NONE" {
                    let handling = p
                        .marker_error_handling
                        .unwrap_or_else(|| MarkerErrorHandling::of(error));
                    if handling == MarkerErrorHandling::Terminal && !p.marker_written {
                        marker_failed.get_or_insert_with(|| format!("{name} {error}"));
                    }
                    let handling = if *error == NO_RESPONSE {
                        "unanswered"
                    } else {
                        handling.as_str()
                    };
                    // The response that carried the error (a retried marker's last response may
                    // have said NONE).
                    // Every response that carried it (a marker retried on the same error), first
                    // and last.
                    let (first, last) = t
                        .errors
                        .iter()
                        .filter(|e| {
                            e.api_name == "WriteTxnMarkers"
                                && e.error == *error
                                && e.partition == Some(p.partition)
                                && e.topic.as_deref() == p.topic.as_deref()
                        })
                        .fold(None, |acc: Option<(u64, u64)>, e| match acc {
                            Some((a, b)) => Some((a.min(e.frame), b.max(e.frame))),
                            None => Some((e.frame, e.frame)),
                        })
                        .unwrap_or((frame, frame));
                    let key = (name, error.clone());
                    let key_of_row = key.clone();
                    let new = !self.errors.contains_key(&key);
                    let cost = entry_cost::<(String, String), ErrorRow>()
                        + text_cost(key.0.capacity())
                        + text_cost(key.1.capacity());
                    if new
                        && (self.errors.len() >= MAX_ERROR_ROWS
                            || !self.keep_named("rows of the marker error table", &key, cost))
                    {
                        self.not_listed(error);
                        continue;
                    }
                    let row = self.errors.entry(key).or_insert(ErrorRow {
                        count: 0,
                        handling,
                        first_frame: first,
                        last_frame: last,
                        transaction: (t.producer_id, t.producer_epoch),
                        bar: None,
                        longest_us: None,
                    });
                    if row.count == 0 {
                        new_rows.push(key_of_row);
                    }
                    row.count += 1;
                    if *error != NO_RESPONSE {
                        row.longest_us = row.longest_us.max(p.marker_latency_us);
                    }
                    row.first_frame = row.first_frame.min(first);
                    row.last_frame = row.last_frame.max(last);
                }
            }
        }
        self.untimed_round_trips += untimed;
        if let Some(m) = t.markers_answered {
            // A clock that went back puts it before the start: on the start, then.
            let at = start_us.max(micros(m.ts));
            ticks.push(at);
            end_us = end_us.max(at);
        }
        ticks.sort_unstable();
        ticks.dedup();
        if ticks.len() > MAX_TICKS {
            // Evenly chosen, the last (the markers' end) kept.
            let last = ticks[ticks.len() - 1];
            let step = ticks.len().div_ceil(MAX_TICKS - 1);
            ticks = ticks.iter().copied().step_by(step).collect();
            ticks.push(last);
            ticks.dedup();
        }
        let clean = class == BarClass::Committed && marker_failed.is_none();
        if class == BarClass::Committed && marker_failed.is_some() {
            self.committed_marker_failed += 1;
        }
        let mut last = LastAdded {
            transaction: (t.producer_id, t.producer_epoch),
            frame: r.loc.frame,
            bar: None,
        };
        let bar = Bar {
            start_us,
            end_us,
            class,
            reason: t.reason.map(|x| x.as_str()).or_else(|| unknown_why(t)),
            producer_id: t.producer_id,
            producer_epoch: t.producer_epoch,
            frame: last_frame(r),
            ticks,
            marker_failed,
            detail: detail(t),
            seq: self.bars,
        };
        let mut bar = bar;
        bar.ticks.shrink_to_fit();
        let hanging = class == BarClass::Hanging;
        let bound = if hanging {
            MAX_BARS
        } else {
            MAX_BARS - HANGING_RESERVE
        };
        let capped = self.bars >= bound || (clean && self.clean_bars >= MAX_CLEAN_BARS);
        let share = if clean { Share::Bulk } else { Share::Troubled };
        if capped || !self.keep_in("bars", self.bar_cost(&key, &bar), share) {
            if capped {
                self.capped.0 += 1;
                self.capped.1 += u64::from(clean);
            }
            // Counted on its lane when it has one; no lane is made past the bound.
            match self.lanes.get_mut(&key) {
                Some(lane) => *lane.not_drawn.entry(class).or_default() += 1,
                None => self.not_drawn += 1,
            }
            self.last_added = Some(last);
            return;
        }
        self.clean_bars += usize::from(clean);
        let seq = bar.seq;
        for l in self.latencies.iter_mut().skip(first_latency) {
            l.bar = Some(seq);
        }
        for k in &new_rows {
            if let Some(row) = self.errors.get_mut(k) {
                row.bar = Some(seq);
            }
        }
        if let Some(row) = aborted_row.and_then(|i| self.aborted.get_mut(i)) {
            row.bar = Some(seq);
        }
        let lane = self.lanes.entry(key.clone()).or_default();
        lane.bars.push(bar);
        last.bar = Some((key, lane.bars.len() - 1));
        self.last_added = Some(last);
        self.bars += 1;
        if self.first_begin.is_none_or(|(ts, _)| micros(ts) > start_us) {
            self.first_begin = Some((t.begin.ts, t.begin.frame));
        }
        // Verdicts written before this record that are about it: one of its frames.
        if let Some(waiting) = self.pending.remove(&(t.producer_id, t.producer_epoch)) {
            let mut left = Vec::new();
            for i in waiting {
                match self.verdicts.get_mut(i) {
                    Some(v) if t.frames.binary_search(&v.frame).is_ok() => v.bar = Some(seq),
                    Some(_) => left.push(i),
                    None => {}
                }
            }
            if !left.is_empty() {
                self.pending.insert((t.producer_id, t.producer_epoch), left);
            }
        }
    }

    /// Counts a marker error past the table's rows by its name (under `other errors` when the
    /// budget has no room for a new name).
    fn not_listed(&mut self, error: &str) {
        if let Some(n) = self.errors_not_listed.get_mut(error) {
            *n += 1;
            return;
        }
        let cost = entry_cost::<String, u64>() + text_cost(error.len());
        let name = if self.keep_named("marker error names", &error, cost) {
            error.to_string()
        } else {
            "other errors".to_string()
        };
        *self.errors_not_listed.entry(name).or_default() += 1;
    }

    /// `name`, kept once; `other` past [`MAX_PAIR_NAMES`] names.
    fn name(&mut self, name: String) -> std::sync::Arc<str> {
        if let Some(n) = self.names.get(name.as_str()) {
            return n.clone();
        }
        // An `Arc<str>`: its counts and its bytes.
        let cost = insert_cost::<std::sync::Arc<str>>(self.names.len(), self.names.capacity())
            + alloc_cost(16 + name.len());
        let n: std::sync::Arc<str> = if self.names.len() < MAX_PAIR_NAMES
            && self.keep_named("broker names", &name.as_str(), cost)
        {
            name.into()
        } else {
            "other".into()
        };
        self.names.insert(n.clone());
        n
    }

    /// The broker table's row of `addr` (its node id noted), made when missing; `None` past
    /// [`MAX_BROKERS`] rows.
    fn broker_row(&mut self, addr: &str, node_id: Option<i32>) -> Option<&mut BrokerRow> {
        if !self.brokers.contains_key(addr)
            && (self.brokers.len() >= MAX_BROKERS
                || !self.keep_named(
                    "brokers",
                    &addr,
                    entry_cost::<String, BrokerRow>() + text_cost(addr.len()),
                ))
        {
            return None;
        }
        let row = self.brokers.entry(addr.to_string()).or_default();
        row.node_id = row.node_id.or(node_id);
        Some(row)
    }

    /// Counts a partition marker sent to broker `b` (once per attempt).
    fn marker_to(&mut self, b: &crate::txn::Broker) {
        match self.broker_row(&address(b), b.node_id) {
            Some(row) => row.markers += 1,
            None => self.markers_to_unlisted += 1,
        }
    }

    /// Whether the exchange answered in `frame` is counted for the first time: not yet for
    /// this transaction (`counted`), and not among the latest exchanges counted for another
    /// ([`ReportData::exchanges`]; when they are at their bound or the budget refuses more,
    /// the oldest is forgotten for this one, so that only an exchange whose transactions were
    /// written far apart can be counted twice).
    fn first_time(&mut self, counted: &mut std::collections::HashSet<u64>, frame: u64) -> bool {
        if !counted.insert(frame) {
            return false;
        }
        if self.exchanges.contains(&frame) {
            return false;
        }
        let grow = self.exchanges.len() < MAX_LATENCIES && {
            let cost = insert_cost::<u64>(self.exchanges.len(), self.exchanges.capacity())
                + push_cost_deque(&self.exchange_order);
            self.keep("marker exchanges", cost)
        };
        if !grow {
            match self.exchange_order.pop_front() {
                Some(oldest) => {
                    self.exchanges.remove(&oldest);
                }
                None => return true,
            }
        }
        self.exchanges.insert(frame);
        self.exchange_order.push_back(frame);
        true
    }

    /// Counts one marker round trip of `us` microseconds to broker `b`, answered at `at_us`
    /// (microseconds since the Unix epoch) in frame `frame`; `rt_admin` is its request's
    /// sender (address, client id) when an admin client sent it rather than the coordinator.
    fn latency(
        &mut self,
        r: &TransactionRecord,
        at_us: i64,
        us: i64,
        b: &crate::txn::Broker,
        frame: u64,
        rt_admin: Option<(&crate::vocab::Endpoint, &str)>,
    ) {
        if us < 0 {
            // The capture's clock went back: no round trip to show.
            self.clock_went_back += 1;
            return;
        }
        self.round_trips += 1;
        let bucket = LATENCY_BUCKETS_US
            .iter()
            .position(|&hi| us <= hi)
            .unwrap_or(LATENCY_BUCKETS_US.len());
        self.histogram[bucket] += 1;
        if self.latencies.len() < MAX_LATENCIES
            && self.keep("round trips", push_cost(&self.latencies))
        {
            let t = &r.transaction;
            let admin = t.ended_by == Some(EndedBy::Admin)
                || t.markers_client_id
                    .as_deref()
                    .is_some_and(crate::txn::is_admin_client);
            // Who sent the markers: the coordinator, by its listener's address when the
            // client's messages gave it, else by the address they came from and their client
            // id (an admin client's abort is its own).
            let sender = |e: &crate::vocab::Endpoint| {
                format!(
                    "{} ({})",
                    e.ip,
                    t.markers_client_id.as_deref().unwrap_or("marker sender")
                )
            };
            let from = match (&t.coordinator, &t.markers_from) {
                // This exchange's own sender, an admin client (a commit's other markers
                // stay the coordinator's).
                _ if let Some((e, id)) = rt_admin => format!("{} ({id})", e.ip),
                (_, Some(e)) if admin => sender(e),
                (Some(c), _) => address(c),
                (None, Some(e)) => sender(e),
                (None, None) => "coordinator not seen".to_string(),
            };
            let from = self.name(from);
            let broker = self.name(address(b));
            self.latencies.push(Latency {
                at_us,
                from,
                broker,
                frame,
                us,
                transaction: (t.producer_id, t.producer_epoch),
                bar: None,
            });
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

/// A [`super::Sink`] that adds every transaction record it hands on to `inner` to a
/// [`ReportData`] (put it right before the writer, so that only records written count).
pub struct ReportCollector<'a> {
    inner: &'a mut dyn super::Sink,
    data: &'a mut ReportData,
}

impl<'a> ReportCollector<'a> {
    /// A collector in front of `inner`, adding to `data`.
    pub fn new(inner: &'a mut dyn super::Sink, data: &'a mut ReportData) -> Self {
        ReportCollector { inner, data }
    }
}

impl super::Sink for ReportCollector<'_> {
    fn record(&mut self, rec: &crate::kafka::event::Record) -> std::io::Result<()> {
        if let crate::kafka::event::Event::Anomaly(a) = &rec.event {
            *self
                .data
                .anomalies_written
                .entry(a.kind.as_str())
                .or_default() += 1;
        }
        self.data.record(rec);
        self.inner.record(rec)
    }

    fn unwritten(&mut self, rec: &crate::kafka::event::Record) -> std::io::Result<()> {
        self.data.record(rec);
        Ok(())
    }

    fn transaction(&mut self, t: &TransactionRecord) -> std::io::Result<()> {
        self.data.add(t);
        self.inner.transaction(t)
    }

    fn capture_start(&mut self, ts: Timestamp) {
        self.inner.capture_start(ts)
    }

    fn response_alone(&mut self, r: &crate::kafka::event::Record) -> std::io::Result<()> {
        self.inner.response_alone(r)
    }

    fn exchange(
        &mut self,
        request: &crate::kafka::event::Record,
        response: Option<&crate::kafka::event::Record>,
    ) -> std::io::Result<()> {
        self.inner.exchange(request, response)
    }
}

/// Text made safe inside HTML and SVG elements and attributes.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            // Controls, and the bidirectional overrides that would show a name reversed.
            c if c.is_control()
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
            {
                o.push('\u{fffd}')
            }
            c => o.push(c),
        }
    }
    o
}

/// Most characters of a transactional id a bar's hover text and the aborted table show
/// (100); the lane's own hover text shows [`LANE_TITLE_CHARS`].
pub const ID_SHOWN_CHARS: usize = 100;

/// Most characters of a transactional id its lane's hover text shows (1,000).
pub const LANE_TITLE_CHARS: usize = 1_000;

/// Most bytes of a verdict's message kept for the page (2,000): the record has it whole.
pub const VERDICT_MESSAGE_LIMIT: usize = 2_000;

/// `s` cut to at most `limit` bytes on a character boundary, with `…` when cut.
fn cut_text(s: &str, limit: usize) -> String {
    if s.len() <= limit {
        return s.to_string();
    }
    let mut end = limit;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// `s` when it has at most `max` characters, else its first `max` and `… (N bytes)`: a long
/// id (Kafka allows 32,767 bytes) would otherwise be repeated whole in every bar of its lane.
pub fn shorten(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => s.into(),
        Some((end, _)) => format!("{}… ({} bytes)", &s[..end], s.len()).into(),
    }
}

/// Width of the timeline's drawing area, in SVG units.
const TIMELINE_WIDTH: f64 = 1100.0;

/// Narrowest bar drawn, in SVG units (a transaction of a millisecond in an hour-long capture
/// stays visible and can be hovered).
const MIN_BAR_WIDTH: f64 = 3.0;

/// Height of one lane.
const LANE_HEIGHT: usize = 16;

/// Writes the page: one self-contained HTML file (inline style, SVG drawn here, a small inline
/// script for the self-check and nothing else; no request to any network). `capture` names
/// the input, `stats` gives its counts. The body's `data-bars` is the number of bars drawn,
/// which the script checks against the `data-bar` elements.
pub fn write_html(
    data: &ReportData,
    capture: &str,
    stats: &crate::stats::Stats,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    // The time axis runs from the first bar kept to the last bar or round trip kept (a round
    // trip kept after the last bar kept, the budget having refused later bars, is not pinned
    // to the axis's end), short of a clock jump; what lies past one is drawn at the edge.
    let axis = data.time_axis();
    let origin = axis.origin;
    let span = (axis.end - origin).max(1) as f64;
    let x = |us: i64| 200.0 + ((us - origin) as f64 / span).clamp(0.0, 1.0) * TIMELINE_WIDTH;
    // Each verdict's bar: the one it was matched to, else the only bar of its producer id and
    // epoch (with several, none: it is not guessed).
    let mut only: std::collections::HashMap<(i64, i16), Option<usize>> =
        std::collections::HashMap::new();
    for b in data.lanes.values().flat_map(|l| &l.bars) {
        only.entry((b.producer_id, b.producer_epoch))
            .and_modify(|s| *s = None)
            .or_insert(Some(b.seq));
    }
    let bar_of = |v: &Verdict| {
        v.bar
            .or_else(|| v.transaction.and_then(|t| only.get(&t).copied().flatten()))
    };
    // The verdicts of each bar, for its outline and hover.
    let mut verdicts_of: std::collections::HashMap<usize, Vec<&str>> =
        std::collections::HashMap::new();
    for v in &data.verdicts {
        if let Some(seq) = bar_of(v) {
            let kinds = verdicts_of.entry(seq).or_default();
            if !kinds.contains(&v.kind) {
                kinds.push(v.kind);
            }
        }
    }
    let drawn = lanes_drawn(data, &verdicts_of);
    let drawn_bars: usize = drawn.iter().map(|(_, l)| l.bars.len()).sum();
    // What verdicts and the aborted table may link to: the first bar of each producer id and
    // epoch drawn.
    let mut linkable = std::collections::HashSet::new();
    // Each bar's element id: `t-PID-EPOCH` for the first bar of a producer id and epoch (what
    // verdicts link to), `b<seq>` for the others (ids stay unique).
    let mut bar_ids = std::collections::HashMap::new();
    for (_, lane) in &drawn {
        for b in &lane.bars {
            let id = if linkable.insert((b.producer_id, b.producer_epoch)) {
                format!("t-{}-{}", b.producer_id, b.producer_epoch)
            } else {
                format!("b{}", b.seq)
            };
            bar_ids.insert(b.seq, id);
        }
    }
    let mut h = Page { out, failed: None };
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    // Nothing may be fetched: the policy blocks it, and the self-check below hears of any try.
    h.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'\">",
    );
    h.push_str(&format!(
        "<title>kafka-pcap report: {}</title>",
        esc(capture)
    ));
    h.push_str(
        "<style>body{font:13px sans-serif;margin:1em}table{border-collapse:collapse}\
         td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;max-width:40em;\
         overflow-wrap:anywhere}\
         .committed{fill:#2e7d32}.committed-part{fill:#9e9d24}.aborted-client{fill:#ef6c00}.aborted-coordinator{fill:#c62828}.aborted-admin{fill:#8d6e63}.aborted{fill:#f9a825}\
         .open{fill:#1565c0}.hanging{fill:#6a1b9a}.unknown{fill:#9e9e9e}.tick{stroke:#fff;stroke-width:1}\
         .flagged{stroke:#000;stroke-width:2}.bucket{fill:#546e7a}\
         text{font:11px sans-serif}text.small{font:9px sans-serif}</style></head>\n",
    );
    h.push_str(&format!("<body data-bars=\"{drawn_bars}\">\n"));
    h.push_str(&format!("<h1>Transactions in {}</h1>\n<p>", esc(capture)));
    if let (Some(a), Some(b)) = (stats.first_ts, stats.last_ts) {
        let back = if b < a {
            " (the capture's clock went back: its last packet is older than its first)"
        } else {
            ""
        };
        h.push_str(&format!(
            "From {} to {}{back}. ",
            esc(&a.to_rfc3339()),
            esc(&b.to_rfc3339())
        ));
    }
    h.push_str(&format!(
        "{}, {}, {} of the APIs the transaction view reads decoded, {}",
        plural(stats.packets, "packet"),
        plural(stats.streams, "TCP stream"),
        plural(stats.messages, "Kafka message"),
        plural(data.transactions, "transaction")
    ));
    let outcomes: Vec<String> = data
        .classes
        .iter()
        .filter(|(_, v)| **v > 0)
        .map(|(k, v)| match k {
            // What their records say of their outcome, as --stats counts them.
            BarClass::Hanging if !data.hanging_outcomes.is_empty() => format!(
                "{v} {}; by their outcome: {})",
                k.label().trim_end_matches(')'),
                data.hanging_outcomes
                    .iter()
                    .map(|(o, n)| format!("{n} {o}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            BarClass::Committed if data.committed_marker_failed > 0 => format!(
                "{v} {} ({} with a marker that failed for good: no marker the capture \
                 holds committed the records of those partitions)",
                k.label(),
                data.committed_marker_failed
            ),
            _ => format!("{v} {}", k.label()),
        })
        .collect();
    if !outcomes.is_empty() {
        h.push_str(&format!(": {}", esc(&outcomes.join(", "))));
    }
    h.push_str(".</p>\n");
    // Kafka frames by API: requests, and responses paired with one.
    let by_api: Vec<String> = stats
        .frames
        .requests
        .iter()
        .map(|(&key, &n)| {
            let answered = stats.frames.responses.get(&key).copied().unwrap_or(0);
            let name = crate::kafka::api::api_name(key)
                .map_or_else(|| format!("API {key}"), str::to_string);
            format!("{name} {n} / {answered}")
        })
        .collect();
    if !by_api.is_empty() {
        h.push_str(&format!(
            "<p data-apis=\"1\">Kafka frames of every API, decoded or not (requests / responses \
             paired with them): {}{}.</p>\n",
            esc(&by_api.join(", ")),
            if stats.frames.unpaired_responses > 0 {
                format!(
                    "; {} without their request",
                    plural(stats.frames.unpaired_responses, "response")
                )
            } else {
                String::new()
            }
        ));
    }
    if !data.filtered_by.is_empty() {
        let kept = if stats.transactions > 0 || data.transactions > 0 {
            format!(
                "the <span data-kept=\"{0}\">{0}</span> of the capture's {1} they kept, with \
                 their verdicts",
                data.transactions,
                plural(stats.transactions.max(data.transactions), "transaction")
            )
        } else {
            "the transactions and verdicts they kept (the capture held none)".to_string()
        };
        h.push_str(&format!(
            "<p data-filtered=\"1\"><b>Filtered:</b> the run was given {}; this page shows \
             only {kept}.</p>\n",
            esc(&data.filtered_by.join("; "))
        ));
    }
    if !stats.anomalies_by_kind.is_empty() {
        h.push_str("<p>Anomalies found by this run (which decodes what the transaction view reads; --stats with the same options counts the same): ");
        h.push_str(&esc(&counted(&stats.anomalies_by_kind)));
        let found: u64 = stats.anomalies_by_kind.values().sum();
        let written: u64 = data.anomalies_written.values().sum();
        if written < found {
            // Why the records hold fewer: what --anomalies and the filters left out.
            let mut why = Vec::new();
            match data.anomaly_level.unwrap_or(super::AnomalyLevel::Relevant) {
                super::AnomalyLevel::Relevant => why.push(
                    "--anomalies relevant, the default, leaves out the harmless ones and those \
                     about messages the records are not about (all writes every one)"
                        .to_string(),
                ),
                super::AnomalyLevel::None => why.push("--anomalies none writes none".to_string()),
                super::AnomalyLevel::All => {}
            }
            if !data.filtered_by.is_empty() {
                why.push(format!(
                    "{} {} those not about what {} kept",
                    data.filtered_by.join("; "),
                    if data.filtered_by.len() == 1 {
                        "leaves out"
                    } else {
                        "leave out"
                    },
                    if data.filtered_by.len() == 1 {
                        "it"
                    } else {
                        "they"
                    }
                ));
            }
            let held = if data.quiet {
                "-q wrote no records; written, they would have held"
            } else {
                "The run's records hold"
            };
            h.push_str(&format!(
                ". {held} <span data-anomalies-written=\"{0}\">{0}</span> of these anomalies{1}{2}",
                written,
                if written == 0 {
                    String::new()
                } else {
                    format!(": {}", esc(&counted(&data.anomalies_written)))
                },
                if why.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", esc(&why.join("; ")))
                }
            ));
        } else if data.quiet {
            h.push_str(". -q wrote no records; written, they would have held every one of these");
        }
        h.push_str(".</p>\n");
    }
    brokers_table(data, &mut h);
    if let Some(note) = data.bound_note() {
        h.push_str(&format!(
            "<p data-bound=\"{}\"><b>Page bound:</b> {}.</p>\n",
            data.capped.0,
            esc(&note)
        ));
    }
    if let Some(note) = data.budget_note() {
        h.push_str(&format!(
            "<p data-budget=\"1\"><b>Memory budget:</b> {}.</p>\n",
            esc(&note)
        ));
    }
    if let Some(note) = data.decoding_note(stats) {
        h.push_str(&format!(
            "<p data-given-up=\"1\"><b>Given up for the memory budget:</b> {}.</p>\n",
            esc(&note)
        ));
    }
    let unseen = unseen(stats);
    if !unseen.is_empty() {
        h.push_str(&format!(
            "<p data-unseen=\"1\"><b>What the capture could not show:</b> {}.</p>\n",
            esc(&unseen.join("; "))
        ));
    }
    // The verdicts first, each linking to its transaction's bar.
    h.push_str("<h2>Verdicts</h2>\n");
    if data.verdicts.is_empty() && data.verdict_counts.is_empty() {
        h.push_str("<p>None.</p>\n");
    } else if data.verdicts.is_empty() {
        h.push_str(&format!(
            "<p data-verdict-counts=\"1\">{}; none listed (the memory budget above).</p>\n",
            counted(&data.verdict_counts)
        ));
    } else {
        // By kind, in the order each first came: a count line, then each kind's first few
        // open and the rest folded.
        let mut kinds: Vec<(&str, Vec<&Verdict>)> = Vec::new();
        for v in &data.verdicts {
            match kinds.iter_mut().find(|(k, _)| *k == v.kind) {
                Some((_, list)) => list.push(v),
                None => kinds.push((v.kind, vec![v])),
            }
        }
        let all = |k: &str| data.verdict_counts.get(k).copied().unwrap_or(0);
        // In the order of the sections below, then the kinds none of which was kept.
        let mut line: Vec<String> = kinds
            .iter()
            .map(|(k, _)| format!("{k} {}", all(k)))
            .collect();
        line.extend(
            data.verdict_counts
                .iter()
                .filter(|(k, _)| !kinds.iter().any(|(x, _)| x == *k))
                .map(|(k, n)| format!("{k} {n}")),
        );
        h.push_str(&format!(
            "<p data-verdict-counts=\"1\">{}.</p>\n",
            line.join(", ")
        ));
        for (kind, list) in &kinds {
            let listed = if all(kind) > list.len() as u64 {
                format!(", {} listed", list.len())
            } else {
                String::new()
            };
            h.push_str(&format!("<h3>{kind} ({}{listed})</h3>\n<ul>\n", all(kind)));
            for (i, v) in list.iter().enumerate() {
                if i == VERDICTS_SHOWN {
                    h.push_str(&format!(
                        "</ul>\n<details><summary>{} more {kind}</summary><ul>\n",
                        list.len() - VERDICTS_SHOWN
                    ));
                }
                let link = match (bar_of(v).and_then(|s| bar_ids.get(&s)), v.transaction) {
                    (Some(id), Some((pid, epoch))) => {
                        format!(" <a href=\"#{id}\">pid {pid} epoch {epoch}</a>")
                    }
                    (None, Some((pid, epoch))) => format!(" pid {pid} epoch {epoch}"),
                    _ => String::new(),
                };
                h.push_str(&format!(
                    "<li data-verdict=\"{}\"><b>{}</b> (frame {}){link}: {}</li>\n",
                    v.kind,
                    v.kind,
                    v.frame,
                    esc(&v.message)
                ));
            }
            h.push_str("</ul>\n");
            if list.len() > VERDICTS_SHOWN {
                h.push_str("</details>\n");
            }
        }
        if data.verdicts_not_listed > 0 {
            h.push_str(&format!(
                "<p>{} more verdicts are not listed.</p>\n",
                data.verdicts_not_listed
            ));
        }
    }
    aborted_table(data, &bar_ids, &mut h);
    over_time(data, origin, span, &mut h);
    // The timeline: one lane per key, one bar per transaction, ticks at marker responses.
    h.push_str("<h2>Timeline</h2>\n<p>");
    for c in BarClass::ALL {
        h.push_str(&format!(
            "<svg width=\"12\" height=\"10\"><rect class=\"{}\" width=\"12\" height=\"10\"/>\
             </svg> {} &nbsp; ",
            c.as_str(),
            c.label()
        ));
    }
    h.push_str(
        "<svg width=\"12\" height=\"10\"><rect class=\"committed flagged\" x=\"1\" y=\"1\" \
         width=\"10\" height=\"8\"/></svg> black outline: a verdict or a failed marker \
         | white ticks: marker responses | +N right of a lane: its transactions not drawn. Time runs from the first transaction's start to the last \
         one's end; hover a bar for its transaction.</p>\n",
    );
    match data.first_begin {
        Some(at) if micros(at.0) == origin => h.push_str(&format!(
            "<p>0 s is {} (frame {}), the first transaction's first message; the round trips \
             below share this axis.</p>\n",
            esc(&at.0.to_rfc3339()),
            at.1
        )),
        _ if data.bars > 0 => h.push_str(&format!(
            "<p>0 s is {}, the first transaction's first message after the clock jump; the \
             round trips below share this axis.</p>\n",
            esc(&Timestamp {
                secs: origin.div_euclid(1_000_000),
                nanos: (origin.rem_euclid(1_000_000) * 1_000) as u32,
                digits: 6,
            }
            .to_rfc3339())
        )),
        _ => {}
    }
    if axis.outside > 0 {
        h.push_str(&format!(
            "<p data-clock-jump=\"{}\"><b>A gap of {} in the page's times</b> (a clock that \
             jumped, or a long quiet spell with no transaction): the {} {} it (starts, ends \
             and round trips) are drawn at the axis's {} edge, so that the rest stays \
             readable (frame times in the records are as captured).</p>\n",
            axis.outside,
            duration(axis.jump_us.abs()),
            plural(axis.outside, "time"),
            if axis.jump_us > 0 { "after" } else { "before" },
            if axis.jump_us > 0 { "right" } else { "left" },
        ));
    }
    let height = drawn.len() * LANE_HEIGHT + 24;
    h.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {height}\" \
         width=\"100%\" style=\"max-width:{}px\">\n",
        TIMELINE_WIDTH as usize + 240,
        TIMELINE_WIDTH as usize + 240
    ));
    let axis_y = drawn.len() * LANE_HEIGHT + 16;
    let seconds = span / 1e6;
    h.push_str(&format!(
        "<text x=\"200\" y=\"{axis_y}\">0 s</text><text x=\"{}\" y=\"{axis_y}\" \
         text-anchor=\"end\">{seconds:.3} s</text>\n",
        200 + TIMELINE_WIDTH as usize
    ));
    for (i, (key, lane)) in drawn.iter().enumerate() {
        let y = i * LANE_HEIGHT + 4;
        let full = key.label();
        let key = &full;
        // Long ids are cut on their lane (its tooltip gives the first [`LANE_TITLE_CHARS`]).
        let shown: String = if full.chars().count() > 28 {
            full.chars().take(27).chain(['…']).collect()
        } else {
            full.clone()
        };
        h.push_str(&format!(
            "<text x=\"2\" y=\"{}\">{}<title>{}</title></text>\n",
            y + 11,
            esc(&shown),
            esc(&shorten(key, LANE_TITLE_CHARS))
        ));
        let in_bar = esc(&shorten(key, ID_SHOWN_CHARS));
        for b in &lane.bars {
            let (x0, x1) = (x(b.start_us), x(b.end_us));
            let reason = b.reason.map_or(String::new(), |r| format!(" ({r})"));
            let id = bar_ids
                .get(&b.seq)
                .map_or(String::new(), |id| format!(" id=\"{id}\""));
            let mut flags = Vec::new();
            if let Some(kinds) = verdicts_of.get(&b.seq) {
                flags.push(format!("verdicts: {}", kinds.join(", ")));
            }
            if let Some(m) = &b.marker_failed {
                flags.push(format!("marker failed: {m}"));
            }
            let (flagged, flag_text) = if flags.is_empty() {
                ("", String::new())
            } else {
                (" flagged", format!(" [{}]", flags.join("; ")))
            };
            h.push_str(&format!(
                "<rect data-bar=\"1\"{id} class=\"{}{flagged}\" x=\"{x0:.1}\" y=\"{y}\" \
                 width=\"{:.1}\" height=\"{}\"><title>{}pid {} epoch {}: {}{}{} last message \
                 at frame {}; {}</title></rect>\n",
                b.class.as_str(),
                (x1 - x0).max(MIN_BAR_WIDTH),
                LANE_HEIGHT - 4,
                if key.starts_with("pid ") {
                    String::new()
                } else {
                    format!("{in_bar} ")
                },
                b.producer_id,
                b.producer_epoch,
                b.class.label(),
                reason,
                esc(&flag_text),
                b.frame,
                esc(&b.detail)
            ));
            for &t in &b.ticks {
                let tx = x(t);
                h.push_str(&format!(
                    "<line class=\"tick\" x1=\"{tx:.1}\" x2=\"{tx:.1}\" y1=\"{y}\" y2=\"{}\"/>\n",
                    y + LANE_HEIGHT - 4
                ));
            }
        }
        let hidden: u64 = lane.not_drawn.values().sum();
        if hidden > 0 {
            // In the margin right of the time axis, clear of the bars.
            h.push_str(&format!(
                "<text data-not-drawn=\"{hidden}\" class=\"small\" x=\"{}\" y=\"{}\">+{hidden}\
                 <title>{} of this lane not drawn (the page bound or the memory budget: see \
                 the header)</title></text>\n",
                TIMELINE_WIDTH as usize + 204,
                y + 10,
                plural(hidden, "more transaction")
            ));
        }
    }
    h.push_str("</svg>\n");
    if drawn.len() < data.lanes.len() {
        let left = data.lanes.len() - drawn.len();
        // Of those left out, how many have a transaction that did not commit cleanly.
        let shown: std::collections::BTreeSet<&LaneKey> = drawn.iter().map(|(k, _)| *k).collect();
        let troubled_left = data
            .lanes
            .iter()
            .filter(|(k, _)| !shown.contains(k))
            .filter(|(_, l)| {
                l.bars.iter().any(|b| {
                    b.class != BarClass::Committed
                        || b.marker_failed.is_some()
                        || verdicts_of.contains_key(&b.seq)
                })
            })
            .count();
        let troubled_note = if troubled_left > 0 {
            format!(
                " <b>{troubled_left} of the lanes left out have a transaction that did not \
                 commit, a verdict or a failed marker</b> (the verdicts and the aborted table \
                 still list them);"
            )
        } else {
            String::new()
        };
        h.push_str(&format!(
            "<p data-lanes-left=\"{left}\">{} of {} lanes are drawn (those with a transaction \
             that did not commit, a verdict or a failed marker first); the other {left} lanes, \
             {} transactions, are counted in the chart over time above.{troubled_note}</p>\n",
            drawn.len(),
            data.lanes.len(),
            data.bars - drawn_bars
        ));
    }
    let hidden: u64 = data
        .lanes
        .values()
        .flat_map(|l| l.not_drawn.values())
        .sum::<u64>()
        + data.not_drawn;
    if hidden > 0 {
        h.push_str(&format!(
            "<p>{} transactions are kept for the page (once its bounds or the memory budget \
             were reached, clean commits first gave way, then the others); {hidden} more are \
             counted in the header, not drawn (the time axis covers those kept).</p>\n",
            data.bars
        ));
    }
    // Marker round trips: the histogram, with the percentiles.
    h.push_str("<h2>Marker round trips</h2>\n");
    if let (Some(p50), Some(p90), Some(p99)) = (
        data.percentile(0.5),
        data.percentile(0.9),
        data.percentile(0.99),
    ) {
        let of = if data.round_trips > data.latencies.len() as u64 {
            format!(", percentiles of the first {}", data.latencies.len())
        } else {
            String::new()
        };
        h.push_str(&format!(
            "<p>p50 {}, p90 {}, p99 {} ({}, one per exchange that answered a partition's \
             marker{of}).</p>\n",
            duration(p50),
            duration(p90),
            duration(p99),
            plural(data.round_trips, "round trip")
        ));
    }
    if data.round_trips == 0 && data.untimed_round_trips == 0 && data.clock_went_back == 0 {
        if data.filtered_by.is_empty() {
            h.push_str("<p>No marker round trip was seen.</p>\n");
        } else {
            // The filter chose the transactions, and with them their round trips.
            h.push_str(&format!(
                "<p>No marker round trip among the transactions the filter kept ({}): the \
                 page counts only theirs; without the filter it would show the capture's.</p>\n",
                esc(&data.filtered_by.join("; "))
            ));
        }
    }
    if data.untimed_round_trips > 0 {
        h.push_str(&format!(
            "<p data-untimed=\"{0}\">Also {0} more {1} of markers retried more than {2} \
             times, counted but not timed (each marker keeps the round trips of its first {3} \
             attempts and its last; the JSON's marker_attempts counts them all).</p>\n",
            data.untimed_round_trips,
            if data.untimed_round_trips == 1 {
                "marker attempt"
            } else {
                "marker attempts"
            },
            crate::txn::MAX_ROUND_TRIPS,
            crate::txn::MAX_ROUND_TRIPS - 1
        ));
    }
    if data.clock_went_back > 0 {
        h.push_str(&format!(
            "<p>{} not shown: the capture's clock went back between request and response.</p>\n",
            plural(data.clock_went_back, "marker round trip")
        ));
    }
    // The histogram, when there is a round trip to count.
    if data.round_trips > 0 {
        let top = data.histogram.iter().copied().max().unwrap_or(0).max(1);
        h.push_str("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"150\">\n");
        for (i, &n) in data.histogram.iter().enumerate() {
            let bh = n as f64 / top as f64 * 100.0;
            let label = LATENCY_BUCKETS_US
                .get(i)
                .map_or("more".to_string(), |&us| match us {
                    us if us >= 1_000_000 => format!("≤{}s", us / 1_000_000),
                    us if us >= 1_000 => format!("≤{}ms", us / 1_000),
                    us => format!("≤{us}us"),
                });
            h.push_str(&format!(
                "<rect data-bucket=\"{i}\" class=\"bucket\" x=\"{}\" y=\"{:.1}\" width=\"38\" \
                 height=\"{bh:.1}\"><title>{}: {n}</title></rect>\n",
                i * 42,
                110.0 - bh,
                esc(&label)
            ));
            h.push_str(&format!(
                "<text class=\"small\" x=\"{}\" y=\"124\">{}</text><text x=\"{}\" y=\"138\">{n}</text>\n",
                i * 42,
                esc(&label),
                i * 42
            ));
        }
        h.push_str("</svg>\n");
    }
    latency_over_time(data, origin, span, &bar_ids, &mut h);
    // Marker errors by partition.
    h.push_str("<h2>Marker errors</h2>\n");
    if data.errors.is_empty() {
        h.push_str("<p>None.</p>\n");
    } else {
        h.push_str(
            "<p>A marker's time runs from its first request to its last response: each \
             attempt's round trip (timed above, one per attempt) and the coordinator's wait \
             between attempts (its retry back-off).</p>\n",
        );
        h.push_str(
            "<table><tr><th>partition</th><th>error</th><th>count</th>\
             <th>the coordinator then</th><th>longest marker (first request to last \
             response)</th><th>first frame</th><th>last frame</th><th>first transaction</th>\
             </tr>\n",
        );
        for (i, ((partition, error), row)) in data.errors.iter().enumerate() {
            if i == ERRORS_SHOWN {
                h.push_str(&format!(
                    "</table>\n<details><summary>{} more rows</summary><table>\n",
                    data.errors.len() - ERRORS_SHOWN
                ));
            }
            let then = match row.handling {
                "retried" => "retries the marker",
                "terminal" => "cancels the remaining markers (terminal)",
                "dropped" => "drops the partition from the marker",
                "unanswered" => {
                    "resends it when its request times out (no response is in the capture: lost \
                     on the way, or never sent; the frames are of its requests)"
                }
                _ => "does not expect it",
            };
            h.push_str(&format!(
                "<tr data-error=\"1\"><td>{}</td><td>{}</td><td>{}</td><td>{then}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td></tr>\n",
                esc(partition),
                esc(error),
                row.count,
                row.longest_us.map_or("-".to_string(), duration),
                row.first_frame,
                row.last_frame,
                bar_link(row.bar, row.transaction, &bar_ids)
            ));
        }
        h.push_str("</table>\n");
        if data.errors.len() > ERRORS_SHOWN {
            h.push_str("</details>\n");
        }
        if !data.errors_not_listed.is_empty() {
            h.push_str(&format!(
                "<p>Past {MAX_ERROR_ROWS} rows, markers of other partitions are counted by error \
                 only: {}.</p>\n",
                esc(&counted(&data.errors_not_listed))
            ));
        }
    }
    // The page's own check: as many bars drawn as it says.
    h.push_str(
        "<script>(function(){var b=document.body;\
         document.addEventListener('securitypolicyviolation',function(){\
         b.setAttribute('data-selfcheck','network');});\
         var n=document.querySelectorAll('[data-bar]').length;\
         if(b.getAttribute('data-selfcheck')!=='network'){\
         b.setAttribute('data-selfcheck',n==Number(b.dataset.bars)?'ok':'bad');}})();</script>\n",
    );
    h.push_str("</body></html>\n");
    h.failed.map_or(Ok(()), Err)
}

/// The page as it is written: each piece goes to the output at once (the page is never held
/// whole; with long ids escaped it may be many times the data it is drawn from), and the
/// first write error is kept for [`write_html`] to return (what follows it is not written).
struct Page<'a> {
    out: &'a mut dyn std::io::Write,
    failed: Option<std::io::Error>,
}

impl Page<'_> {
    /// Writes `s`, unless an earlier write failed.
    fn push_str(&mut self, s: &str) {
        if self.failed.is_none() {
            if let Err(e) = self.out.write_all(s.as_bytes()) {
                self.failed = Some(e);
            }
        }
    }
}

/// The brokers the transactions' messages went to, one row each: address, node id, the
/// transactions it coordinated, the markers it was sent, the partitions it led (Metadata's
/// node ids; a leader whose address no message showed gets a row of its own).
fn brokers_table(data: &ReportData, h: &mut Page<'_>) {
    if data.brokers.is_empty() && data.leaders.is_empty() {
        return;
    }
    h.push_str(
        "<table data-brokers=\"1\"><tr><th>broker</th><th>node</th><th>coordinator of</th>\
         <th>partition markers received (one per partition per attempt)</th>\
         <th>leader of (Metadata)</th></tr>\n",
    );
    let led = |n: Option<i32>| {
        n.and_then(|n| data.leaders.get(&n))
            .map_or("-".to_string(), |&k| plural(k, "partition"))
    };
    // In address order (10.0.0.9 before 10.0.0.10), names that are not addresses last.
    let mut rows: Vec<(&String, &BrokerRow)> = data.brokers.iter().collect();
    rows.sort_by_key(|(addr, _)| address_order(addr));
    for (addr, row) in rows {
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(addr),
            row.node_id.map_or("-".to_string(), |n| n.to_string()),
            if row.coordinated == 0 {
                "-".to_string()
            } else {
                plural(row.coordinated, "transaction")
            },
            row.markers,
            led(row.node_id)
        ));
    }
    for (&node, &k) in &data.leaders {
        if data.brokers.values().any(|r| r.node_id == Some(node)) {
            continue;
        }
        h.push_str(&format!(
            "<tr><td>address not seen</td><td>{node}</td><td>-</td><td>0</td><td>{}</td></tr>\n",
            plural(k, "partition")
        ));
    }
    h.push_str("</table>\n");
    if data.markers_to_unlisted > 0 {
        h.push_str(&format!(
            "<p data-brokers-unlisted=\"{0}\">{0} marker attempts went to brokers not listed \
             (at most {MAX_BROKERS} rows, or what the memory budget kept).</p>\n",
            data.markers_to_unlisted
        ));
    }
    if data.partitions_not_listed > 0 {
        h.push_str(&format!(
            "<p data-partitions-not-listed=\"{0}\">The marker attempts counted are those of \
             the partitions the transaction records list: {1} the records count without \
             listing them (past {2} in one transaction, or of topics whose names the memory \
             budget did not keep) are not in this table.</p>\n",
            data.partitions_not_listed,
            plural(data.partitions_not_listed, "partition"),
            crate::txn::MAX_PARTITIONS
        ));
    }
}

/// The order of a broker's name on the page: addresses in address order (10.0.0.9 before
/// 10.0.0.10), other names (`other`) after them, by text.
fn address_order(name: &str) -> (bool, Option<std::net::SocketAddr>, &str) {
    let a = name.parse::<std::net::SocketAddr>().ok();
    (a.is_none(), a, name)
}

/// The lanes the timeline draws, in order: those with a transaction that did not commit, or
/// with a verdict (`flagged`: the transactions the verdicts name) or a failed marker, first,
/// then the others, each group in the order of its first transaction's start (then key
/// order); at most [`MAX_LANES_DRAWN`].
fn lanes_drawn<'a, T>(
    data: &'a ReportData,
    flagged: &std::collections::HashMap<usize, T>,
) -> Vec<(&'a LaneKey, &'a Lane)> {
    let troubled = |l: &Lane| {
        l.bars.iter().any(|b| {
            b.class != BarClass::Committed
                || b.marker_failed.is_some()
                || flagged.contains_key(&b.seq)
        })
    };
    let (mut first, mut rest): (Vec<_>, Vec<_>) = data.lanes.iter().partition(|(_, l)| troubled(l));
    let start = |l: &Lane| l.bars.first().map_or(i64::MAX, |b| b.start_us);
    first.sort_by(|a, b| start(a.1).cmp(&start(b.1)).then(a.0.cmp(b.0)));
    rest.sort_by(|a, b| start(a.1).cmp(&start(b.1)).then(a.0.cmp(b.0)));
    first.extend(rest);
    first.truncate(MAX_LANES_DRAWN);
    first
}

/// A link to bar `bar` (of transaction `(pid, epoch)`) when the page draws it, else the
/// transaction's name.
fn bar_link(
    bar: Option<usize>,
    (pid, epoch): (i64, i16),
    bar_ids: &std::collections::HashMap<usize, String>,
) -> String {
    match bar.and_then(|b| bar_ids.get(&b)) {
        Some(id) => format!(" <a href=\"#{id}\">pid {pid} epoch {epoch}</a>"),
        None => format!(" pid {pid} epoch {epoch}"),
    }
}

/// What the capture could not show, from the run's counts: packets cut by the snapshot
/// length, bytes never captured, messages decoded in part or not at all, responses whose
/// request was not captured.
fn unseen(stats: &crate::stats::Stats) -> Vec<String> {
    let mut out = Vec::new();
    let kind = |k: &str| stats.anomalies_by_kind.get(k).copied().unwrap_or(0);
    if stats.cut_packets > 0 {
        out.push(format!(
            "{} packets were cut by the snapshot length (capture with tcpdump -s 0 to keep \
             whole packets)",
            stats.cut_packets
        ));
    }
    if kind("gap") > 0 {
        out.push(format!(
            "{} gaps: stream bytes never captured (packet loss, or a capture that missed \
             segments)",
            kind("gap")
        ));
    }
    if stats.wtm_truncated > 0 {
        out.push(format!(
            "{} decoded only in part: a marker whose producer id was cut has no transaction \
             here, one cut before its partitions has only those its response named, and an \
             exchange whose request and response were both cut before their markers is not \
             here at all (transactions may be missing)",
            plural(stats.wtm_truncated, "WriteTxnMarkers message")
        ));
    }
    let lost = kind("frame_lost") + kind("truncated_frame");
    if lost > 0 {
        out.push(format!(
            "{} incomplete (bytes lost in a gap, or the connection ended inside them, as a \
             Fetch response cut when its consumer closed: the records of --anomalies all list \
             each as frame_lost or truncated_frame; harmless unless a message the view reads \
             was in one)",
            plural(lost, "Kafka frame")
        ));
    }
    let passed = kind("resync") + kind("no_frame_found");
    if passed > 0 {
        out.push(format!(
            "framing passed over bytes that start no frame ({})",
            plural(passed, "time")
        ));
    }
    if stats.frames.unpaired_responses > 0 {
        out.push(format!(
            "{} responses came without a captured request",
            stats.frames.unpaired_responses
        ));
    }
    if kind("unsupported_link_type") > 0 {
        out.push(format!(
            "packets of {} this tool does not decode were passed over",
            plural(kind("unsupported_link_type"), "link type")
        ));
    }
    if kind("tunnel_limit") > 0 {
        out.push(
            "packets nested in too many tunnels, or past the count of tunnels told apart, were \
             passed over or mixed (tunnel_limit)"
                .to_string(),
        );
    }
    if kind("fragment_missing") > 0 {
        out.push(format!(
            "{} IP datagrams missed fragments",
            kind("fragment_missing")
        ));
    }
    out
}

/// The table of aborted transactions: who aborted each and why, its errors, its frames.
fn aborted_table(
    data: &ReportData,
    bar_ids: &std::collections::HashMap<usize, String>,
    h: &mut Page<'_>,
) {
    h.push_str("<h2>Aborted transactions</h2>\n");
    if data.aborted.is_empty() {
        h.push_str("<p>None.</p>\n");
        return;
    }
    h.push_str(
        "<table><tr><th>transactional id</th><th>producer</th><th>aborted by</th>\
         <th>reason</th><th>client asked</th><th>errors</th><th>frames</th></tr>\n",
    );
    // Those a client did not abort first (the coordinator's, an admin's, hanging ones), each
    // group in the order they came.
    let mut rows: Vec<&AbortedRow> = data.aborted.iter().collect();
    rows.sort_by_key(|a| (a.class == BarClass::AbortedByClient && !a.hanging, a.seq));
    for (i, a) in rows.into_iter().enumerate() {
        if i == ABORTED_SHOWN {
            h.push_str(&format!(
                "</table>\n<details><summary>{} more aborted transactions</summary><table>\n",
                data.aborted.len() - ABORTED_SHOWN
            ));
        }
        let mut errors = a.errors.join(", ");
        if a.more_errors > 0 {
            errors.push_str(&format!(" and {} more", a.more_errors));
        }
        let by = match a.class {
            BarClass::AbortedByClient => "the client (EndTxn)",
            BarClass::AbortedByCoordinator => "the coordinator",
            BarClass::AbortedByAdmin => "an admin client (WriteTxnMarkers of its own)",
            BarClass::CommittedInPart => {
                "an admin client, some of its partitions (WriteTxnMarkers of its own): \
                 <b>committed in part</b>, the partitions with ABORT markers aborted"
            }
            _ => "not seen (ABORT markers only)",
        };
        let by = if a.hanging {
            format!("{by}; <b>hanging</b> at the capture's end")
        } else {
            by.to_string()
        };
        h.push_str(&format!(
            "<tr data-aborted=\"1\"><td>{}</td><td>{}</td><td>{by}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{} to {}</td></tr>\n",
            esc(&a.lane),
            match a.bar.and_then(|b| bar_ids.get(&b)) {
                Some(id) => format!(
                    "<a href=\"#{id}\">pid {} epoch {}</a>",
                    a.producer_id, a.producer_epoch
                ),
                None => format!("pid {} epoch {}", a.producer_id, a.producer_epoch),
            },
            match (a.reason, a.admin_after_us) {
                (Some(r), _) => r.to_string(),
                (None, Some(us)) if us >= 0 => format!(
                    "the admin's markers came {} after its EndTxn (it hung till then)",
                    duration(us)
                ),
                _ => "-".to_string(),
            },
            a.requested.unwrap_or("-"),
            esc(if errors.is_empty() { "-" } else { &errors }),
            a.first_frame,
            a.last_frame
        ));
    }
    h.push_str("</table>\n");
    if data.aborted.len() > ABORTED_SHOWN {
        h.push_str("</details>\n");
    }
    if data.aborted_not_listed > 0 {
        h.push_str(&format!(
            "<p>{} more aborted transactions are not listed.</p>\n",
            data.aborted_not_listed
        ));
    }
}

/// Columns of the chart of transactions over time.
const COLUMNS: usize = 100;

/// The aggregate view: transactions kept, by the time they began (100 columns over the
/// timeline's span), stacked by class. Readable at any count.
fn over_time(data: &ReportData, origin: i64, span: f64, h: &mut Page<'_>) {
    if data.bars == 0 {
        return;
    }
    let mut counts = vec![[0u64; BarClass::ALL.len()]; COLUMNS];
    for b in data.lanes.values().flat_map(|l| &l.bars) {
        let col = (((b.start_us - origin) as f64 / span) * COLUMNS as f64) as usize;
        let class = BarClass::ALL
            .iter()
            .position(|c| *c == b.class)
            .unwrap_or(0);
        counts[col.min(COLUMNS - 1)][class] += 1;
    }
    let top = counts
        .iter()
        .map(|c| c.iter().sum::<u64>())
        .max()
        .unwrap_or(1)
        .max(1);
    h.push_str(&format!(
        "<h2>Transactions over time</h2>\n<p>Every transaction kept, by when it began \
         ({COLUMNS} columns of {} each), stacked by class; the tallest column holds {top}.</p>\n",
        duration((span / COLUMNS as f64) as i64)
    ));
    // Bars not kept are not in it: once the budget or the bound refused them, its columns
    // undercount, and a class that stops is the page's doing, not the capture's.
    let missing = data.transactions.saturating_sub(data.bars as u64);
    if missing > 0 {
        h.push_str(&format!(
            "<p data-over-time-missing=\"{missing}\"><b>Not every transaction is in this \
             chart:</b> {} of {} were not kept for the page (see the page bound and the memory \
             budget above); the columns from when the first was refused on undercount, so a class \
             that stops or thins out there may be the page's doing, not the capture's \
             (--stats counts them all; --memory-limit or a filter draws them).</p>\n",
            missing, data.transactions
        ));
    }
    let w = TIMELINE_WIDTH / COLUMNS as f64;
    h.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} 130\" width=\"100%\" \
         style=\"max-width:{}px\">\n",
        TIMELINE_WIDTH as usize + 240,
        TIMELINE_WIDTH as usize + 240
    ));
    for (i, col) in counts.iter().enumerate() {
        let mut y = 110.0;
        for (c, &n) in col.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let bh = n as f64 / top as f64 * 100.0;
            y -= bh;
            h.push_str(&format!(
                "<rect data-column=\"{i}\" class=\"{}\" x=\"{:.1}\" y=\"{y:.1}\" \
                 width=\"{:.1}\" height=\"{bh:.1}\"><title>{n} {}</title></rect>\n",
                BarClass::ALL[c].as_str(),
                200.0 + i as f64 * w,
                (w - 1.0).max(0.5),
                BarClass::ALL[c].label()
            ));
        }
    }
    h.push_str(&format!(
        "<text x=\"200\" y=\"124\">0 s</text><text x=\"{}\" y=\"124\" \
         text-anchor=\"end\">{:.3} s</text>\n</svg>\n",
        200 + TIMELINE_WIDTH as usize,
        span / 1e6
    ));
}

/// Rows of the marker error table open on the page (50); the rest behind a fold.
const ERRORS_SHOWN: usize = 50;

/// Rows of the table of coordinator and broker pairs (20, those with the most round trips).
const PAIRS_SHOWN: usize = 20;

/// Colours of the broker pairs in the latency chart (the eight with the most round trips;
/// the rest grey).
const PAIR_COLOURS: [&str; 8] = [
    "#1565c0", "#c62828", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f", "#ad1457", "#4e342e",
];

/// Marker round trips over time, one colour per coordinator-to-broker pair, on a log scale,
/// then per pair its count, p50, p99 and slowest (with its frame), and the ten slowest.
fn latency_over_time(
    data: &ReportData,
    origin: i64,
    span: f64,
    bar_ids: &std::collections::HashMap<usize, String>,
    h: &mut Page<'_>,
) {
    if data.latencies.is_empty() {
        return;
    }
    let mut pairs: BTreeMap<(&str, &str), Vec<&Latency>> = BTreeMap::new();
    for l in &data.latencies {
        pairs.entry((&*l.from, &*l.broker)).or_default().push(l);
    }
    let mut ranked: Vec<_> = pairs.iter().collect();
    // Most round trips first; ties in address order of the coordinator, then the broker.
    ranked.sort_by(|a, b| {
        b.1.len().cmp(&a.1.len()).then_with(|| {
            (address_order(a.0 .0), address_order(a.0 .1))
                .cmp(&(address_order(b.0 .0), address_order(b.0 .1)))
        })
    });
    let colour = |pair: &(&str, &str)| {
        ranked
            .iter()
            .position(|(p, _)| *p == pair)
            .and_then(|i| PAIR_COLOURS.get(i))
            .copied()
            .unwrap_or("#9e9e9e")
    };
    // The timeline's time axis, so that a slow round trip lines up with its transactions.
    let (t0, tspan) = (origin, span);
    // The fastest and slowest round trip as they were (0 us is drawn where 1 us would be, on
    // a log scale, but labelled 0 us).
    let min_us = data.latencies.iter().map(|l| l.us).min().unwrap_or(0);
    let max_us = data.latencies.iter().map(|l| l.us).max().unwrap_or(0);
    let (lo, hi) = (
        (min_us.max(1) as f64).log10(),
        (max_us.max(1) as f64).log10(),
    );
    // At least half a decade high, the points in the middle when they span less; the axis is
    // labelled at the fastest and slowest round trip (one label when they are one value),
    // the two labels at least a line apart.
    let pad = (0.5 - (hi - lo)).max(0.0) / 2.0;
    let (lo, lspan) = (lo - pad, (hi - lo).max(0.5));
    let y_of = |us: i64| 160.0 - ((us.max(1) as f64).log10() - lo) / lspan * 150.0;
    h.push_str(
        "<h3>Round trips over time, by coordinator and broker</h3>\n<p>Each point a marker \
         round trip (log scale); hover for its frame.</p>\n",
    );
    h.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} 190\" width=\"100%\" \
         style=\"max-width:{}px\">\n",
        TIMELINE_WIDTH as usize + 240,
        TIMELINE_WIDTH as usize + 240
    ));
    let step = data.latencies.len().div_ceil(MAX_POINTS).max(1);
    let mut points = 0;
    for l in data.latencies.iter().step_by(step) {
        points += 1;
        let px = 200.0 + ((l.at_us - t0) as f64 / tspan).clamp(0.0, 1.0) * TIMELINE_WIDTH;
        let py = y_of(l.us);
        h.push_str(&format!(
            "<circle data-point=\"1\" cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"2\" fill=\"{}\">\
             <title>frame {}: {} us, {} to {}</title></circle>\n",
            colour(&(&*l.from, &*l.broker)),
            l.frame,
            l.us,
            esc(&l.from),
            esc(&l.broker)
        ));
    }
    let (mut y_fast, mut y_slow) = (y_of(min_us) + 4.0, y_of(max_us) + 4.0);
    if y_fast - y_slow < LABEL_GAP {
        let mid = (y_fast + y_slow) / 2.0;
        (y_fast, y_slow) = (mid + LABEL_GAP / 2.0, mid - LABEL_GAP / 2.0);
    }
    if duration(max_us) != duration(min_us) {
        h.push_str(&format!(
            "<text data-axis=\"slowest\" x=\"195\" y=\"{y_slow:.1}\" text-anchor=\"end\">{}</text>",
            duration(max_us)
        ));
    } else {
        y_fast = y_of(min_us) + 4.0;
    }
    h.push_str(&format!(
        "<text data-axis=\"fastest\" x=\"195\" y=\"{y_fast:.1}\" text-anchor=\"end\">{}</text>\
         <text x=\"200\" y=\"182\">0 s</text><text x=\"{}\" y=\"182\" \
         text-anchor=\"end\">{:.3} s</text>\n</svg>\n",
        duration(min_us),
        200 + TIMELINE_WIDTH as usize,
        tspan / 1e6
    ));
    if points < data.latencies.len() {
        h.push_str(&format!(
            "<p>{points} of {} round trips drawn (one in every {step}).</p>\n",
            data.latencies.len()
        ));
    }
    let of = if data.round_trips > data.latencies.len() as u64 {
        format!(
            " (of the first {} round trips, which the page keeps; all {} are in the histogram)",
            data.latencies.len(),
            data.round_trips
        )
    } else {
        String::new()
    };
    h.push_str(&format!(
        "<p>By sender and broker{of} (the sender is the coordinator, or an admin client that \
         sent markers itself):</p>\n<table><tr><th></th><th>sender</th>\
         <th>broker</th><th>round trips</th><th>p50 us</th><th>p99 us</th><th>slowest us</th>\
         <th>slowest (response frame)</th></tr>\n"
    ));
    for (i, (pair, ls)) in ranked.iter().enumerate() {
        if i == PAIRS_SHOWN {
            let rest: usize = ranked[i..].iter().map(|(_, ls)| ls.len()).sum();
            h.push_str(&format!(
                "<tr><td></td><td colspan=\"7\">{} more pairs, {}</td></tr>\n",
                ranked.len() - i,
                plural(rest as u64, "round trip")
            ));
            break;
        }
        let mut us: Vec<i64> = ls.iter().map(|l| l.us).collect();
        us.sort_unstable();
        let q = |f: f64| us[((f * us.len() as f64).ceil() as usize).clamp(1, us.len()) - 1];
        let slowest = ls.iter().max_by_key(|l| l.us).map_or(0, |l| l.frame);
        h.push_str(&format!(
            "<tr data-pair=\"1\"><td><svg width=\"10\" height=\"10\"><circle cx=\"5\" \
             cy=\"5\" r=\"4\" fill=\"{}\"/></svg></td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{slowest}</td></tr>\n",
            colour(pair),
            esc(pair.0),
            esc(pair.1),
            ls.len(),
            q(0.5),
            q(0.99),
            us[us.len() - 1]
        ));
    }
    h.push_str("</table>\n");
    let mut slow: Vec<&Latency> = data.latencies.iter().collect();
    slow.sort_by(|a, b| b.us.cmp(&a.us).then(a.frame.cmp(&b.frame)));
    if data.round_trips > data.latencies.len() as u64 {
        h.push_str(&format!(
            "<p>Slowest round trips of the first {} the page keeps (of {}; the JSON records \
             time every one):</p>\n<ol>\n",
            data.latencies.len(),
            data.round_trips
        ));
    } else {
        h.push_str("<p>Slowest round trips:</p>\n<ol>\n");
    }
    for l in slow.iter().take(10) {
        h.push_str(&format!(
            "<li data-slow=\"1\">{} answered in frame {} ({} to {}),{}</li>\n",
            duration(l.us),
            l.frame,
            esc(&l.from),
            esc(&l.broker),
            bar_link(l.bar, l.transaction, bar_ids)
        ));
    }
    h.push_str("</ol>\n");
}

/// A gap between two consecutive times of the page that may be a clock jump (one hour, in
/// microseconds); see [`ReportData::time_axis`].
pub const CLOCK_JUMP_US: i64 = 3_600_000_000;

/// The page's time axis ([`ReportData::time_axis`]), in microseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeAxis {
    /// Its 0 s.
    pub origin: i64,
    /// Its end (at least `origin`).
    pub end: i64,
    /// How many times (bar starts and ends, round trips) lie past a clock jump, outside it,
    /// drawn at its edge.
    pub outside: u64,
    /// The jump, in microseconds: positive when the times left out are later than the axis,
    /// negative when earlier, 0 with none.
    pub jump_us: i64,
}

/// Least vertical distance between two axis labels of the round-trip chart (12, in the
/// SVG's user units: one line of its 12 px text).
const LABEL_GAP: f64 = 12.0;

/// Verdicts of each kind listed open on the page (10); the rest are behind a `<details>`.
const VERDICTS_SHOWN: usize = 10;

/// Aborted transactions listed open on the page (20); the rest are behind a `<details>`.
const ABORTED_SHOWN: usize = 20;

/// Counts by name as the page lists them: `a 3, b 1`.
fn counted<K: std::fmt::Display>(counts: &BTreeMap<K, u64>) -> String {
    let items: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    items.join(", ")
}

/// One of what [`ReportData::not_kept`] counts: `bars` -> `bar`, `rows of the marker error
/// table` -> `row of the marker error table`.
fn singular(what: &str) -> String {
    match what.split_once(" of ") {
        Some((head, tail)) => format!("{} of {tail}", head.strip_suffix('s').unwrap_or(head)),
        None => what.strip_suffix('s').unwrap_or(what).to_string(),
    }
}

/// `n` and `what`, plural when `n` is not 1 (`1 transaction`, `4 transactions`).
fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// A duration of `us` microseconds for people: `695 us`, `1.08 ms`, `2.50 s`; the unit is
/// chosen after rounding to two decimals, so 999,999 us is `1.00 s`, not `1000.00 ms`.
fn duration(us: i64) -> String {
    match us.unsigned_abs() {
        0..=999 => format!("{us} us"),
        1_000..=999_994 => format!("{:.2} ms", us as f64 / 1e3),
        _ => format!("{:.2} s", us as f64 / 1e6),
    }
}
