//! Output records and their NDJSON form (with `json`, the only users of serde_json).
//!
//! Input: [`Record`]s from the pipeline, in the order frames complete in the capture.
//! Output: one JSON object per line on a [`std::io::Write`], the schema in the README's
//! "Output" section: common fields `ts`, `frame`, `stream`, `src_ip`, `src_port`, `dest_ip`,
//! `dest_port`, `event_type`, then a `kafka` or an `anomaly` object.

pub mod community_id;
pub mod filter;
mod json;
pub mod offload;
pub mod pcap;
pub mod report;
pub mod stats;
pub mod text;

use crate::kafka::apis::Body;
use crate::kafka::event::{Event, KafkaMessage, MessageKind, Record, RecordOut};
use crate::stats::Stats;
use crate::txn::{TransactionRecord, TxnOut, TxnView};
use crate::vocab::{Anomaly, Location, Timestamp, Tunnel};
use serde::Serialize;
use std::io::{self, Write};
use std::net::IpAddr;

#[derive(Serialize)]
struct JsonRecord<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    capture: Option<&'a str>,
    ts: Timestamp,
    frame: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    src_ip: Option<IpAddr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    src_port: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dest_ip: Option<IpAddr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dest_port: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tunnel: Option<Tunnel>,
    #[serde(skip_serializing_if = "Option::is_none")]
    community_id: Option<&'a str>,
    event_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    kafka: Option<&'a KafkaMessage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    anomaly: Option<&'a Anomaly>,
}

/// Writes records to a [`Sink`] as they come, counting each in the run's [`Stats`] first;
/// after the first write error it keeps the error and drops the records that follow (the run
/// then stops).
pub struct Emitter<'a> {
    sink: &'a mut dyn Sink,
    stats: &'a mut Stats,
    txn: Option<&'a mut TxnView>,
    error: Option<io::Error>,
}

impl<'a> Emitter<'a> {
    /// An emitter writing to `sink`, counting in `stats`; with `txn` (`--transactions`), each
    /// record also goes to the transaction view, and the transactions it finishes go to
    /// [`Sink::transaction`] after it.
    pub fn new(sink: &'a mut dyn Sink, stats: &'a mut Stats, txn: Option<&'a mut TxnView>) -> Self {
        Emitter {
            sink,
            stats,
            txn,
            error: None,
        }
    }

    /// Ends the transaction view, if any: the transactions it still follows go out, `at`
    /// being the capture's last packet.
    pub fn finish_transactions(&mut self, at: Location) {
        self.with_view(|v, out| v.finish(at, out));
    }

    /// Runs `f` on the transaction view, if any, with a callback that counts and writes what
    /// the view gives out.
    fn with_view(&mut self, f: impl FnOnce(&mut TxnView, &mut dyn FnMut(TxnOut))) {
        let Emitter {
            sink,
            stats,
            txn,
            error,
        } = self;
        if let Some(v) = txn {
            f(v, &mut |o| hand_on(o, &mut **sink, stats, error));
        }
    }

    /// The first write error, if any.
    pub fn result(self) -> io::Result<()> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl RecordOut for Emitter<'_> {
    fn push(&mut self, rec: Record) {
        if self.error.is_some() {
            return;
        }
        self.stats.record(&rec);
        // The view reads the record first, and what it gives out follows the record: the
        // record itself then goes on by value (no copy for a sink that keeps it).
        let mut given = Vec::new();
        if let Some(v) = self.txn.as_deref_mut() {
            v.observe(&rec, &mut |o| given.push(o));
        }
        if let Err(e) = self.sink.record_owned(rec) {
            self.error = Some(e);
        }
        for o in given {
            hand_on(o, &mut *self.sink, self.stats, &mut self.error);
        }
    }
}

/// Counts and writes what the transaction view gives out.
fn hand_on(o: TxnOut, sink: &mut dyn Sink, stats: &mut Stats, error: &mut Option<io::Error>) {
    if error.is_some() {
        return;
    }
    match o {
        TxnOut::Transaction(t) => {
            stats.transaction(&t);
            if let Err(e) = sink.transaction(&t) {
                *error = Some(e);
            }
        }
        TxnOut::Anomaly(rec) => {
            stats.record(&rec);
            if let Err(e) = sink.record(&rec) {
                *error = Some(e);
            }
        }
    }
}

/// Receives the records of a run. `Send`: a run may move its sinks to a second thread
/// ([`offload`]), so a writer on standard output takes `std::io::stdout()`, not its lock.
pub trait Sink: Send {
    /// Takes one record. An error (for example a closed pipe) stops the run.
    fn record(&mut self, rec: &Record) -> io::Result<()>;

    /// Takes one record by value, where its giver needs it no more (the [`Emitter`]); by
    /// default [`Sink::record`]. A sink that keeps records (the
    /// writing thread's [`offload::Offload`]) takes it without a copy.
    fn record_owned(&mut self, rec: Record) -> io::Result<()> {
        self.record(&rec)
    }

    /// Takes one transaction record (`--transactions`).
    fn transaction(&mut self, t: &TransactionRecord) -> io::Result<()>;

    /// Learns the time of the capture's first packet, before its first record (for
    /// `--since`/`--until` offsets). By default nothing; sinks that wrap another pass it on.
    fn capture_start(&mut self, _ts: Timestamp) {}

    /// A verdict of the transaction view that `--anomalies` keeps out of the output: the
    /// `--report` page still takes it (what the page concludes does not depend on what is
    /// written). By default nothing; sinks between the gate and the page pass it on, a filter
    /// only when it would have passed the record.
    fn unwritten(&mut self, _rec: &Record) -> io::Result<()> {
        Ok(())
    }

    /// `--pair`: a response whose request has no record (not captured, lost in a gap, or not
    /// decoded). By default its record.
    fn response_alone(&mut self, response: &Record) -> io::Result<()> {
        self.record(response)
    }

    /// Takes one request/response exchange (`--pair`); `response` is `None` for a request
    /// never answered. By default the two records, one after the other.
    fn exchange(&mut self, request: &Record, response: Option<&Record>) -> io::Result<()> {
        self.record(request)?;
        match response {
            Some(r) => self.record(r),
            None => Ok(()),
        }
    }
}

/// Writes records as NDJSON: one JSON object and a `\n` per record.
pub struct NdjsonWriter<W: Write> {
    out: W,
    /// The Community IDs of the latest connections written.
    community_ids: community_id::CommunityIds,
    capture: Option<String>,
    line_buffered: bool,
    /// `--format json`: one pretty array instead of lines; `Some(n)` once `n` records of the
    /// current array were written.
    array: Option<Option<u64>>,
    /// One record's line, serialised before it is written in one piece; given back when a
    /// record's line took more than [`SCRATCH_KEPT`] bytes.
    scratch: Vec<u8>,
}

/// The most bytes of line buffer an [`NdjsonWriter`] keeps between records.
const SCRATCH_KEPT: usize = 1 << 20;

impl<W: Write> NdjsonWriter<W> {
    /// A writer on `out`. When `capture` is set (several inputs), each record starts with a
    /// `capture` field naming its input.
    pub fn new(out: W, capture: Option<String>) -> Self {
        NdjsonWriter {
            out,
            community_ids: Default::default(),
            capture,
            line_buffered: false,
            array: None,
            scratch: Vec::new(),
        }
    }

    /// A writer of one pretty JSON array per input (`--format json`) on `out`; call
    /// [`NdjsonWriter::end_array`] after each input.
    pub fn pretty_array(out: W) -> Self {
        let mut w = NdjsonWriter::new(out, None);
        w.array = Some(None);
        w
    }

    /// Closes the current array (`--format json`), writing `[]` when it had no record.
    pub fn end_array(&mut self) -> io::Result<()> {
        if let Some(n) = self.array {
            match n {
                None => self.out.write_all(b"[]\n")?,
                Some(_) => self.out.write_all(b"\n]\n")?,
            }
            self.array = Some(None);
        }
        self.out.flush()
    }

    /// Serialises one record's JSON value: a line, or an element of the array.
    fn put<T: Serialize>(&mut self, v: &T) -> io::Result<()> {
        match self.array {
            None => {
                self.scratch.clear();
                json::write_compact(&mut self.scratch, v).map_err(io::Error::from)?;
                self.scratch.push(b'\n');
                let written = self.out.write_all(&self.scratch);
                if self.scratch.capacity() > SCRATCH_KEPT {
                    self.scratch = Vec::new();
                }
                written?;
            }
            Some(n) => {
                self.out
                    .write_all(if n.is_none() { b"[\n" } else { b",\n" })?;
                serde_json::to_writer_pretty(&mut self.out, v).map_err(io::Error::from)?;
                self.array = Some(Some(n.unwrap_or(0) + 1));
            }
        }
        if self.line_buffered {
            self.out.flush()?;
        }
        Ok(())
    }

    /// Flushes after every record (for live input such as `tcpdump -U -w - | kafka-pcap -`).
    pub fn set_line_buffered(&mut self, on: bool) {
        self.line_buffered = on;
    }

    /// Flushes the inner writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Names the input of the records that follow (several inputs).
    pub fn set_capture(&mut self, capture: Option<String>) {
        self.capture = capture;
    }

    /// Flushes and returns the inner writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write + Send> Sink for NdjsonWriter<W> {
    fn record(&mut self, rec: &Record) -> io::Result<()> {
        let (stream, src, dst) = match rec.loc.stream {
            Some((s, a, b)) => (Some(s), Some(a), Some(b)),
            None => (None, None, None),
        };
        let (event_type, kafka, anomaly) = match &rec.event {
            Event::Kafka(k) => ("kafka", Some(&**k), None),
            Event::Anomaly(a) => ("anomaly", None, Some(&**a)),
            // Not a record of its own (see `PairSink`).
            Event::Unanswered(..) => return Ok(()),
        };
        let capture = self.capture.take();
        let community_id = rec
            .loc
            .stream
            .map(|(s, a, b)| self.community_ids.of(s, &a, &b));
        let j = JsonRecord {
            capture: capture.as_deref(),
            ts: rec.loc.ts,
            frame: rec.loc.frame,
            stream,
            src_ip: src.map(|e| e.ip),
            src_port: src.map(|e| e.port),
            dest_ip: dst.map(|e| e.ip),
            dest_port: dst.map(|e| e.port),
            tunnel: rec.loc.tunnel,
            community_id: community_id.as_deref(),
            event_type,
            kafka,
            anomaly,
        };
        let r = self.put(&j);
        self.capture = capture;
        r
    }

    fn exchange(&mut self, request: &Record, response: Option<&Record>) -> io::Result<()> {
        self.write_exchange(request, response)
    }

    fn response_alone(&mut self, response: &Record) -> io::Result<()> {
        self.write_response_alone(response)
    }

    fn transaction(&mut self, t: &TransactionRecord) -> io::Result<()> {
        let capture = self.capture.take();
        let j = TransactionJson {
            capture: capture.as_deref(),
            ts: t.loc.ts,
            frame: t.loc.frame,
            event_type: "transaction",
            transaction: &t.transaction,
        };
        let r = self.put(&j);
        self.capture = capture;
        r
    }
}

/// One `--transactions` record, `"event_type":"transaction"` (the schema's
/// `transaction_record`): the time and frame of the message that finished it.
#[derive(Serialize)]
struct TransactionJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    capture: Option<&'a str>,
    ts: Timestamp,
    frame: u64,
    event_type: &'static str,
    transaction: &'a crate::txn::Transaction,
}

/// One `--pair` record, `"event_type":"exchange"`, serialised from borrowed parts of the two
/// messages (the schema's `exchange_record`).
#[derive(Serialize)]
struct ExchangeRecord<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    capture: Option<&'a str>,
    ts: Timestamp,
    frame: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    src_ip: Option<IpAddr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    src_port: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dest_ip: Option<IpAddr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dest_port: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tunnel: Option<Tunnel>,
    #[serde(skip_serializing_if = "Option::is_none")]
    community_id: Option<&'a str>,
    event_type: &'static str,
    exchange: ExchangeBody<'a>,
}

/// The `exchange` object: the request's header fields and body, and the response's.
#[derive(Serialize)]
struct ExchangeBody<'a> {
    api_key: Option<i16>,
    api_name: Option<&'a str>,
    api_version: Option<i16>,
    correlation_id: Option<i32>,
    client_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_frame: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_ts: Option<Timestamp>,
    /// For a response alone: why its request is missing (`not_captured`, `lost`,
    /// `not_decoded`, `not_held`).
    #[serde(skip_serializing_if = "Option::is_none")]
    request_missing: Option<&'static str>,
    /// For a response alone whose request a gap took: that gap.
    #[serde(skip_serializing_if = "Option::is_none")]
    request_lost: Option<crate::kafka::event::RequestLost>,
    /// The request was cut short and decoded in part (its record's `truncated`): the
    /// field path decoding stopped in.
    #[serde(skip_serializing_if = "Option::is_none")]
    request_truncated_field: Option<&'a str>,
    /// The request's body had bytes after its schema's last field (its record's
    /// `trailing_bytes`): how many.
    #[serde(skip_serializing_if = "Option::is_none")]
    request_trailing_bytes: Option<u32>,
    request: Option<&'a Body>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_frame: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_ts: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_us: Option<Option<i64>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    clock_went_back: bool,
    /// For a request without a response record: why (`no_response`, `lost`, `not_decoded`,
    /// `not_held`).
    #[serde(skip_serializing_if = "Option::is_none")]
    response_missing: Option<&'static str>,
    /// The same for the response.
    #[serde(skip_serializing_if = "Option::is_none")]
    response_truncated_field: Option<&'a str>,
    /// The same for the response.
    #[serde(skip_serializing_if = "Option::is_none")]
    response_trailing_bytes: Option<u32>,
    response: Option<&'a Body>,
}

/// The field path a truncated message's decoding stopped in.
fn truncated_field(k: &KafkaMessage) -> Option<&str> {
    k.truncated_field.as_deref().filter(|_| k.truncated)
}

/// Why the exchange of request `k` has no response: `lost` or `not_decoded` when its response
/// was seen, `not_held` when the request's record was written at once for the memory budget
/// (its response comes alone), `no_response` otherwise.
pub fn response_missing(k: &KafkaMessage) -> &'static str {
    match k.response_missing {
        Some(why) => why.as_str(),
        None if !k.held => "not_held",
        None => "no_response",
    }
}

/// `--pair`: hands each response whose record carries its request (the run holds requests,
/// `crate::Config::hold_requests`) on as one exchange, at the response; a request never
/// answered (`Event::Unanswered`) goes out as an exchange without response as soon as the
/// correlator gives it up (its connection ended, or a later response passed it over), so that
/// live input shows it. Request records wait for one or the other; anomalies and responses
/// without a request pass at once. It holds nothing itself.
pub struct PairSink<'a> {
    inner: &'a mut dyn Sink,
    enabled: bool,
}

impl<'a> PairSink<'a> {
    /// A pairing sink in front of `inner`; when not `enabled`, records pass straight through.
    pub fn new(inner: &'a mut dyn Sink, enabled: bool) -> Self {
        PairSink { inner, enabled }
    }

    /// Nothing is left to hand on at the end: unanswered requests went out as they were
    /// given up. Kept for callers that end a run with it.
    pub fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Sink for PairSink<'_> {
    fn transaction(&mut self, t: &TransactionRecord) -> io::Result<()> {
        self.inner.transaction(t)
    }

    fn unwritten(&mut self, rec: &Record) -> io::Result<()> {
        self.inner.unwritten(rec)
    }

    fn record(&mut self, rec: &Record) -> io::Result<()> {
        if !self.enabled {
            return self.inner.record(rec);
        }
        match &rec.event {
            // The correlator gave it up (its connection ended, or a later response passed
            // it over): out now, so that live input shows it.
            Event::Unanswered(_, req) => self.inner.exchange(req, None),
            Event::Kafka(k) => match (k.message, &k.request) {
                // Its response, or its Unanswered, brings it back.
                (MessageKind::Request, _) if k.held => Ok(()),
                // Not held (past the correlator's bound): out now, as never answered.
                (MessageKind::Request, _) => self.inner.exchange(rec, None),
                (MessageKind::Response, Some(req)) => self.inner.exchange(req, Some(rec)),
                (MessageKind::Response, None) => self.inner.response_alone(rec),
            },
            Event::Anomaly(_) => self.inner.record(rec),
        }
    }
}

impl<W: Write + Send> NdjsonWriter<W> {
    /// Writes one `--pair` record: `"event_type":"exchange"` with the request's location
    /// (client to broker) and an `exchange` object holding both messages.
    fn write_exchange(&mut self, request: &Record, response: Option<&Record>) -> io::Result<()> {
        fn kafka(r: &Record) -> Option<&KafkaMessage> {
            match &r.event {
                Event::Kafka(k) => Some(k),
                Event::Anomaly(_) | Event::Unanswered(..) => None,
            }
        }
        let req = kafka(request);
        let resp = response.and_then(kafka);
        let exchange = ExchangeBody {
            api_key: req.map(|k| k.api_key),
            api_name: req.map(|k| k.api_name),
            api_version: req.map(|k| k.api_version),
            correlation_id: req.map(|k| k.correlation_id),
            client_id: req
                .and_then(|k| k.client_id.as_ref())
                .and_then(|c| c.as_deref()),
            request_frame: Some(request.loc.frame),
            request_ts: Some(request.loc.ts),
            request_missing: None,
            request_lost: None,
            request_truncated_field: req.and_then(truncated_field),
            request_trailing_bytes: req.and_then(|k| k.trailing_bytes),
            request: req.map(|k| &k.body),
            response_frame: response.map(|r| r.loc.frame),
            response_ts: response.map(|r| r.loc.ts),
            latency_us: response.map(|_| resp.and_then(|k| k.latency_us)),
            clock_went_back: resp.is_some_and(|k| k.clock_went_back),
            response_missing: match (response, req) {
                (None, Some(k)) => Some(response_missing(k)),
                _ => None,
            },
            response_truncated_field: resp.and_then(truncated_field),
            response_trailing_bytes: resp.and_then(|k| k.trailing_bytes),
            response: resp.map(|k| &k.body),
        };
        let at = response.unwrap_or(request);
        self.put_exchange(
            at.loc.ts,
            at.loc.frame,
            request.loc.stream,
            request.loc.tunnel,
            exchange,
        )
    }

    /// Writes an `exchange` record at `ts` and `frame`, with the connection's stream and
    /// endpoints `client` (client first) and `tunnel`.
    fn put_exchange(
        &mut self,
        ts: Timestamp,
        frame: u64,
        client: Option<(u64, crate::vocab::Endpoint, crate::vocab::Endpoint)>,
        tunnel: Option<Tunnel>,
        exchange: ExchangeBody<'_>,
    ) -> io::Result<()> {
        let capture = self.capture.take();
        let community_id = client.map(|(s, a, b)| self.community_ids.of(s, &a, &b));
        let rec = ExchangeRecord {
            capture: capture.as_deref(),
            ts,
            frame,
            stream: client.map(|c| c.0),
            src_ip: client.map(|c| c.1.ip),
            src_port: client.map(|c| c.1.port),
            dest_ip: client.map(|c| c.2.ip),
            dest_port: client.map(|c| c.2.port),
            tunnel,
            community_id: community_id.as_deref(),
            event_type: "exchange",
            exchange,
        };
        let r = self.put(&rec);
        self.capture = capture;
        r
    }

    /// Writes a `--pair` exchange of a response alone: `"request": null` and why
    /// (`request_missing`), the client's endpoints first as in every exchange.
    fn write_response_alone(&mut self, response: &Record) -> io::Result<()> {
        let Event::Kafka(k) = &response.event else {
            return self.record(response);
        };
        let missing = if k.request_not_decoded {
            "not_decoded"
        } else if k.request_frame.is_some() {
            // Paired, but its request's record was not held (the memory budget).
            "not_held"
        } else if k.request_lost.is_some() {
            "lost"
        } else {
            "not_captured"
        };
        let exchange = ExchangeBody {
            api_key: Some(k.api_key),
            api_name: Some(k.api_name),
            api_version: Some(k.api_version),
            correlation_id: Some(k.correlation_id),
            client_id: None,
            request_frame: k.request_frame,
            request_ts: None,
            request_missing: Some(missing),
            request_lost: k.request_lost,
            request_truncated_field: None,
            request_trailing_bytes: None,
            request: None,
            response_frame: Some(response.loc.frame),
            response_ts: Some(response.loc.ts),
            latency_us: Some(k.latency_us),
            clock_went_back: k.clock_went_back,
            response_missing: None,
            response_truncated_field: truncated_field(k),
            response_trailing_bytes: k.trailing_bytes,
            response: Some(&k.body),
        };
        // The request's direction: from the response's receiver to its sender.
        let client = response.loc.stream.map(|(s, a, b)| (s, b, a));
        self.put_exchange(
            response.loc.ts,
            response.loc.frame,
            client,
            response.loc.tunnel,
            exchange,
        )
    }

    /// Writes the final `--stats=json` record (`stats::record`), with the `capture` field
    /// first when several inputs are given.
    pub fn write_stats(
        &mut self,
        record: &serde_json::Map<String, serde_json::Value>,
    ) -> io::Result<()> {
        let mut rec = serde_json::Map::new();
        if let Some(c) = &self.capture {
            rec.insert("capture".into(), serde_json::Value::String(c.clone()));
        }
        for (k, v) in record {
            rec.insert(k.clone(), v.clone());
        }
        self.put(&rec)?;
        self.out.flush()
    }
}

/// Which anomalies are written (`--anomalies`); `--stats` counts them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnomalyLevel {
    /// Those that lost, damaged or put in doubt a message the output is about, and every
    /// capture-level problem (the default).
    Relevant,
    /// Every one.
    All,
    /// None.
    None,
}

/// Passes transaction records; Kafka message records only of the APIs in `shown` (all of
/// them when `None`: under `--transactions` without `--all-apis`, the messages the view
/// decodes for itself do not flood the output); and anomalies by `level`: with
/// [`AnomalyLevel::Relevant`], those about a message of the APIs in `about` (all when
/// `None`) and those of no API (capture, packet and TCP problems, the transaction view's
/// verdicts, a gap over a frame boundary, which may have taken frames of any API), never the
/// harmless ones (a gap inside a frame that is skipped).
pub struct MessageGate<'a> {
    inner: &'a mut dyn Sink,
    shown: Option<Vec<i16>>,
    level: AnomalyLevel,
    about: Option<Vec<i16>>,
}

impl<'a> MessageGate<'a> {
    /// A gate in front of `inner` letting through the messages of `shown` (every API when
    /// `None`) and every anomaly.
    pub fn new(inner: &'a mut dyn Sink, shown: Option<Vec<i16>>) -> Self {
        MessageGate {
            inner,
            shown,
            level: AnomalyLevel::All,
            about: None,
        }
    }

    /// The same, writing the anomalies of `level`, the output being about the APIs of
    /// `about` (all when `None`).
    pub fn with_anomalies(mut self, level: AnomalyLevel, about: Option<Vec<i16>>) -> Self {
        self.level = level;
        self.about = about;
        self
    }

    fn passes(&self, rec: &Record) -> bool {
        match &rec.event {
            Event::Kafka(k) => self.shown.as_ref().is_none_or(|s| s.contains(&k.api_key)),
            Event::Unanswered(_, r) => self.passes(r),
            Event::Anomaly(a) => match self.level {
                AnomalyLevel::All => true,
                AnomalyLevel::None => false,
                AnomalyLevel::Relevant => {
                    !a.harmless
                        && (a.layer == crate::vocab::Layer::Transaction
                            || a.beyond_frame
                            || a.api_key.is_none_or(|k| {
                                self.about.as_ref().is_none_or(|about| about.contains(&k))
                            }))
                }
            },
        }
    }
}

impl Sink for MessageGate<'_> {
    fn transaction(&mut self, t: &TransactionRecord) -> io::Result<()> {
        self.inner.transaction(t)
    }

    fn capture_start(&mut self, ts: Timestamp) {
        self.inner.capture_start(ts)
    }

    fn record(&mut self, rec: &Record) -> io::Result<()> {
        if self.passes(rec) {
            self.inner.record(rec)
        } else if matches!(&rec.event, Event::Anomaly(a) if a.layer == crate::vocab::Layer::Transaction)
        {
            self.inner.unwritten(rec)
        } else {
            Ok(())
        }
    }
}

/// Collects records in memory (for tests and library users): the records, then the
/// transaction records (`--transactions`).
#[derive(Debug, Default)]
pub struct VecSink(pub Vec<Record>, pub Vec<TransactionRecord>);

impl Sink for VecSink {
    fn transaction(&mut self, t: &TransactionRecord) -> io::Result<()> {
        self.1.push(t.clone());
        Ok(())
    }

    fn record(&mut self, rec: &Record) -> io::Result<()> {
        self.0.push(rec.clone());
        Ok(())
    }
}
