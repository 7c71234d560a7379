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

/// Most verdicts listed (10,000); past it they are counted.
pub const MAX_VERDICTS: usize = 10_000;

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

    /// What the page's legend and counts call it.
    pub fn label(self) -> &'static str {
        match self {
            BarClass::Committed => "committed",
            BarClass::AbortedByClient => "aborted by the client",
            BarClass::AbortedByCoordinator => "aborted by the coordinator",
            BarClass::Open => "open",
            BarClass::Unknown => "unknown",
        }
    }

    /// Every class, in legend order.
    pub const ALL: [BarClass; 5] = [
        BarClass::Committed,
        BarClass::AbortedByClient,
        BarClass::AbortedByCoordinator,
        BarClass::Open,
        BarClass::Unknown,
    ];

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
    /// Lanes by key.
    pub lanes: BTreeMap<LaneKey, Lane>,
    /// Transactions by class, drawn or not.
    pub classes: BTreeMap<BarClass, u64>,
    /// Transactions past [`MAX_BARS`] whose lane was not drawn at all.
    pub not_drawn: u64,
    /// Marker round trips counted in the histogram (all of them, kept or not).
    pub round_trips: u64,
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

    /// Takes one record: an anomaly of the transaction layer becomes a verdict.
    pub fn record(&mut self, rec: &crate::kafka::event::Record) {
        let crate::kafka::event::Event::Anomaly(a) = &rec.event else {
            return;
        };
        if a.kind.layer() != crate::vocab::Layer::Transaction {
            return;
        }
        if self.verdicts.len() >= MAX_VERDICTS {
            self.verdicts_not_listed += 1;
            return;
        }
        self.verdicts.push(Verdict {
            kind: a.kind.as_str(),
            message: a.message.clone(),
            frame: rec.loc.frame,
            transaction: a
                .transaction
                .as_ref()
                .map(|t| (t.producer_id, t.producer_epoch)),
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
            // A clock that went back puts it before the start: on the start, then.
            let at = start_us.max(micros(m.ts));
            ticks.push(at);
            end_us = at;
        }
        if self.bars >= MAX_BARS {
            // Counted on its lane when it has one; no lane is made past the bound.
            match self.lanes.get_mut(&key) {
                Some(lane) => *lane.not_drawn.entry(class).or_default() += 1,
                None => self.not_drawn += 1,
            }
            return;
        }
        let lane = self.lanes.entry(key).or_default();
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
        if us < 0 {
            // The capture's clock went back: no round trip to show.
            return;
        }
        self.round_trips += 1;
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
        self.data.record(rec);
        self.inner.record(rec)
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

/// Width of the timeline's drawing area, in SVG units.
const TIMELINE_WIDTH: f64 = 1100.0;

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
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    let origin = data.origin().unwrap_or(0);
    let end = data
        .lanes
        .values()
        .flat_map(|l| l.bars.iter().map(|b| b.end_us))
        .max()
        .unwrap_or(origin);
    let span = (end - origin).max(1) as f64;
    let x = |us: i64| 200.0 + (us - origin) as f64 / span * TIMELINE_WIDTH;
    let mut h = String::new();
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
         td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}\
         .committed{fill:#2e7d32}.aborted-client{fill:#ef6c00}.aborted-coordinator{fill:#c62828}\
         .open{fill:#1565c0}.unknown{fill:#9e9e9e}.tick{stroke:#000;stroke-width:1}\
         text{font:11px sans-serif}</style></head>\n",
    );
    h.push_str(&format!("<body data-bars=\"{}\">\n", data.bars));
    h.push_str(&format!("<h1>Transactions in {}</h1>\n<p>", esc(capture)));
    if let (Some(a), Some(b)) = (stats.first_ts, stats.last_ts) {
        h.push_str(&format!(
            "From {} to {}. ",
            esc(&a.to_rfc3339()),
            esc(&b.to_rfc3339())
        ));
    }
    h.push_str(&format!(
        "{} packets, {} TCP streams, {} Kafka messages, {} transactions",
        stats.packets, stats.streams, stats.messages, data.transactions
    ));
    let outcomes: Vec<String> = data
        .classes
        .iter()
        .map(|(k, v)| format!("{v} {}", k.label()))
        .collect();
    if !outcomes.is_empty() {
        h.push_str(&format!(" ({})", esc(&outcomes.join(", "))));
    }
    h.push_str(".</p>\n");
    if !stats.anomalies_by_kind.is_empty() {
        h.push_str("<p>Anomalies in the capture, of every API, as --stats counts them: ");
        let kinds: Vec<String> = stats
            .anomalies_by_kind
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        h.push_str(&esc(&kinds.join(", ")));
        h.push_str(".</p>\n");
    }
    // The verdicts first, each linking to its transaction's bar.
    h.push_str("<h2>Verdicts</h2>\n");
    if data.verdicts.is_empty() {
        h.push_str("<p>None.</p>\n");
    } else {
        h.push_str("<ul>\n");
        for v in &data.verdicts {
            let link = match v.transaction {
                Some((pid, epoch)) => {
                    format!(" <a href=\"#t-{pid}-{epoch}\">pid {pid} epoch {epoch}</a>")
                }
                None => String::new(),
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
        if data.verdicts_not_listed > 0 {
            h.push_str(&format!(
                "<p>{} more verdicts are not listed.</p>\n",
                data.verdicts_not_listed
            ));
        }
    }
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
        "| ticks: marker responses. Time runs from the first transaction's start to the last \
         one's end; hover a bar for its transaction.</p>\n",
    );
    let height = data.lanes.len() * LANE_HEIGHT + 24;
    h.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\">\n",
        TIMELINE_WIDTH as usize + 210
    ));
    let mut named = std::collections::HashSet::new();
    let axis_y = data.lanes.len() * LANE_HEIGHT + 16;
    let seconds = span / 1e6;
    h.push_str(&format!(
        "<text x=\"200\" y=\"{axis_y}\">0 s</text><text x=\"{}\" y=\"{axis_y}\" \
         text-anchor=\"end\">{seconds:.3} s</text>\n",
        200 + TIMELINE_WIDTH as usize
    ));
    for (i, (key, lane)) in data.lanes.iter().enumerate() {
        let y = i * LANE_HEIGHT + 4;
        let full = key.label();
        let key = &full;
        // Long ids are cut on their lane (the bars' tooltips give them whole).
        let shown: String = if full.chars().count() > 28 {
            full.chars().take(27).chain(['…']).collect()
        } else {
            full.clone()
        };
        h.push_str(&format!(
            "<text x=\"2\" y=\"{}\">{}<title>{}</title></text>\n",
            y + 11,
            esc(&shown),
            esc(key)
        ));
        for b in &lane.bars {
            let (x0, x1) = (x(b.start_us), x(b.end_us));
            let reason = b.reason.map_or(String::new(), |r| format!(" ({r})"));
            // The first bar of a producer id and epoch is what verdicts link to (ids are unique).
            let id = if named.insert((b.producer_id, b.producer_epoch)) {
                format!(" id=\"t-{}-{}\"", b.producer_id, b.producer_epoch)
            } else {
                String::new()
            };
            h.push_str(&format!(
                "<rect data-bar=\"1\"{id} class=\"{}\" x=\"{x0:.1}\" y=\"{y}\" \
                 width=\"{:.1}\" height=\"{}\"><title>{} pid {} epoch {}: {}{} ending at frame \
                 {}</title></rect>\n",
                b.class.as_str(),
                (x1 - x0).max(1.0),
                LANE_HEIGHT - 4,
                esc(key),
                b.producer_id,
                b.producer_epoch,
                b.class.as_str(),
                reason,
                b.frame
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
            h.push_str(&format!(
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">+{hidden} not drawn</text>\n",
                TIMELINE_WIDTH as usize + 200,
                y + 11
            ));
        }
    }
    h.push_str("</svg>\n");
    let hidden: u64 = data
        .lanes
        .values()
        .flat_map(|l| l.not_drawn.values())
        .sum::<u64>()
        + data.not_drawn;
    if hidden > 0 {
        h.push_str(&format!(
            "<p>The first {} transactions are drawn; {hidden} more are counted above, not \
             drawn (the time axis covers those drawn).</p>\n",
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
            "<p>p50 {p50} us, p90 {p90} us, p99 {p99} us ({} round trips{of}).</p>\n",
            data.round_trips
        ));
    }
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
            "<rect data-bucket=\"{i}\" class=\"open\" x=\"{}\" y=\"{:.1}\" width=\"38\" \
             height=\"{bh:.1}\"><title>{}: {n}</title></rect>\n",
            i * 42,
            110.0 - bh,
            esc(&label)
        ));
        h.push_str(&format!(
            "<text x=\"{}\" y=\"124\">{}</text><text x=\"{}\" y=\"138\">{n}</text>\n",
            i * 42,
            esc(&label),
            i * 42
        ));
    }
    h.push_str("</svg>\n");
    // Marker errors by partition.
    h.push_str("<h2>Marker errors</h2>\n");
    if data.errors.is_empty() {
        h.push_str("<p>None.</p>\n");
    } else {
        h.push_str(
            "<table><tr><th>partition</th><th>error</th><th>count</th><th>coordinator</th>\
             <th>first frame</th><th>last frame</th></tr>\n",
        );
        for ((partition, error), row) in &data.errors {
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                esc(partition),
                esc(error),
                row.count,
                row.handling,
                row.first_frame,
                row.last_frame
            ));
        }
        h.push_str("</table>\n");
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
    out.write_all(h.as_bytes())
}
