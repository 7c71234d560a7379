//! The framer's callbacks for one direction: what each frame head means (keep and decode, or
//! skip), pairing responses with pending requests, decoding kept frames with the decoder table
//! into records, response inference, and the wording of every anomaly framing reports.

use super::correlation::MAX_ASKED;
use super::*;
use crate::flow::reassembly::MAX_OUT_OF_ORDER_BYTES;
use crate::kafka::apis::{Answers, AnswersText};
use crate::kafka::primitives::DecodeErrorKind;

/// `lost`: what of the response direction was lost in gaps reported while the request
/// waited, from [`PendingQueue::lost_since`]; given in the anomaly's `response_bytes_missing`,
/// `response_gaps` and `last_gap_frame` too.
pub(super) fn no_response(
    loc: &Location,
    p: &Pending,
    why: &str,
    lost: Option<correlation::LostWhileWaiting>,
) -> Record {
    let maybe = match lost {
        Some(l) => format!(
            "; {} bytes of the response direction were missing in {} gap{} reported while it \
             waited (the last at frame {}): the response may have been among them",
            l.bytes,
            l.gaps,
            if l.gaps == 1 { "" } else { "s" },
            l.last_frame
        ),
        None => String::new(),
    };
    let mut a = Anomaly::new(
        AnomalyKind::NoResponse,
        format!(
            "{} request in frame {} (correlation_id {}) got no response before {why}{maybe}",
            name_of(p.api_key),
            p.frame,
            p.correlation_id
        ),
    );
    a.api_key = Some(p.api_key);
    a.api_version = Some(p.api_version);
    a.correlation_id = Some(p.correlation_id);
    a.request_frame = Some(p.frame);
    if let Some(l) = lost {
        a.response_bytes_missing = Some(l.bytes);
        a.response_gaps = Some(l.gaps);
        a.last_gap_frame = Some(l.last_frame);
    }
    Record {
        loc: *loc,
        event: Event::Anomaly(Box::new(a)),
    }
}

/// Decodes a kept body with `decode` (a decoder table line's). A body whose schema's fields
/// all read with bytes left after them (`trailing_bytes`) is decoded again without those
/// bytes, as everything decodable is: that body, and the error for the anomaly that still
/// reports them. Other errors as `decode` returns them.
fn decode_kept(
    decode: fn(&[u8], i16, &Budget) -> Result<Body, DecodeError>,
    body: &[u8],
    version: i16,
    budget: &Budget,
) -> Result<(Body, Option<DecodeError>), DecodeError> {
    match decode(body, version, budget) {
        Ok(b) => Ok((b, None)),
        Err(e) if e.kind == DecodeErrorKind::TrailingBytes && e.remaining <= body.len() => {
            let fields = &body[..body.len() - e.remaining];
            match decode(fields, version, &Budget::default()) {
                Ok(b) => Ok((b, Some(e))),
                Err(_) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

/// What a `trailing_bytes` anomaly says of a frame of `size` bytes whose schema's last field
/// ended at frame offset `offset`: how many bytes were left, where, and the two ways that
/// happens.
fn trailing_text(size: u64, offset: u64) -> String {
    let left = size.saturating_sub(offset);
    format!(
        "{left} byte{} left after the last field of its version's schema (frame offset \
         {offset}): written for another layout, or a length before them was damaged",
        if left == 1 { "" } else { "s" }
    )
}

/// `"request"` or `"response"`: what a direction of `role` carries.
pub(super) fn side(role: Role) -> &'static str {
    match role {
        Role::Requests => "request",
        Role::Responses => "response",
    }
}

/// The framer's callbacks for one direction and one delivering packet.
pub(super) struct Handler<'a> {
    /// Whether any byte (or gap) of this connection's request direction was captured.
    pub(super) requests_seen: bool,
    /// The connection's correlation state.
    pub(super) corr: &'a mut Correlation,
    /// The direction being framed.
    pub(super) dir: Direction,
    /// The run's settings and counts.
    pub(super) shared: &'a mut Shared,
    /// The packet at hand.
    pub(super) loc: &'a Location,
    pub(super) out: &'a mut dyn RecordOut,
    /// Stream offset where the latest gap reported through this handler ended: a frame that
    /// ends there is completed by the gap, at a packet that did not carry its end, so its
    /// latency is unknown.
    pub(super) gap_end: Option<u64>,
    /// Why the bytes of the gap being reported are missing: for [`Missing::Cut`] the packet at
    /// hand carried them, so a frame the gap completes did end at this packet.
    pub(super) missing: Missing,
    /// The framer is replaying bytes of earlier packets (its resynchronisation tail): frames
    /// completed meanwhile did not end at the packet at hand.
    pub(super) replaying: bool,
    /// When the connection is finished while still open (idle, or for the memory budget):
    /// why, for the anomalies about what it left unfinished (it did not end).
    pub(super) released: Option<&'a str>,
    /// When the connection ended: how (`flow::End::reason`: "the connection was reset", "the
    /// capture ended", ...), for the anomalies about what it left unfinished.
    pub(super) end: Option<&'a str>,
    /// `--write-pcap`: the packets this connection's bytes came in.
    pub(super) trail: Option<&'a Trail>,
    /// Bytes left after the schema's last field of the response just decoded, for the framer
    /// ([`FrameHandler::overran`]).
    pub(super) overran: usize,
}

impl Handler<'_> {
    /// Counts the frame in progress; `end_seen` says its last byte was captured, so that the
    /// packet at hand is when it ended (a response's latency is taken only then).
    pub(super) fn count(&mut self, role: Role, end_seen: bool) {
        let Some(c) = self.corr.current[self.dir.index()] else {
            return;
        };
        self.count_frame(role, c.api_key, c.request, end_seen);
    }

    /// Counts a frame of `role` (of API `api_key` for a request; a response's `request`, if
    /// one was pending, gives its API and latency).
    fn count_frame(&mut self, role: Role, api_key: i16, request: Option<Pending>, end_seen: bool) {
        match (role, request) {
            (Role::Requests, _) => *self.shared.counts.requests.entry(api_key).or_default() += 1,
            (Role::Responses, Some(p)) => {
                *self.shared.counts.responses.entry(p.api_key).or_default() += 1;
                if let Some(us) = self.latency(&p, end_seen) {
                    self.shared
                        .counts
                        .latencies
                        .entry(p.api_key)
                        .or_default()
                        .add(us);
                }
            }
            (Role::Responses, None) => self.shared.counts.unpaired_responses += 1,
        }
    }

    pub(super) fn emit(&mut self, event: Event) {
        self.out.push(Record {
            loc: *self.loc,
            event,
        });
    }

    /// Writes the record of a Kafka message. With `Shared::hold_requests`, a request's record
    /// is also held for its response (the request just queued is its own), and a response's
    /// record carries the held record of the request it answers.
    pub(super) fn emit_message(&mut self, mut m: KafkaMessage) {
        if let Some(t) = self.trail {
            let start = self.corr.frame_offset[self.dir.index()];
            t.frames(
                self.dir,
                start,
                start + 4 + u64::from(m.size),
                &mut m.packets,
            );
        }
        if !self.shared.hold_requests {
            return self.emit(Event::Kafka(std::sync::Arc::new(m)));
        }
        match m.message {
            MessageKind::Request => {
                let queued = self.corr.pending.queue.back();
                let seq = queued
                    .filter(|p| p.correlation_id == m.correlation_id)
                    .map(|p| p.seq)
                    .filter(|_| self.shared.held_now < MAX_HELD_REQUESTS);
                m.held = seq.is_some();
                let mut rec = Record {
                    loc: *self.loc,
                    event: Event::Kafka(std::sync::Arc::new(m)),
                };
                if let Some(seq) = seq {
                    if self.corr.held_charge.add(rec.held_cost()) {
                        self.shared.held_now += 1;
                        self.corr.held.insert(seq, Box::new(rec.clone()));
                    } else {
                        if let Event::Kafka(m) = &mut rec.event {
                            // Not shared yet: nothing is cloned.
                            std::sync::Arc::make_mut(m).held = false;
                        }
                        self.shared.memory.note_given_up(Holding::HeldRecords);
                        let what = format!(
                            "the record of the request in frame {} was written at once instead \
                             of being held for its response (--pair writes it as never \
                             answered, and its response alone)",
                            self.loc.frame
                        );
                        self.memory_limit(Holding::HeldRecords, what);
                    }
                }
                self.out.push(rec);
            }
            MessageKind::Response => {
                if !m.inferred {
                    m.request = self.corr.answering[self.dir.index()].take().map(|(_, r)| r);
                    if let Some(r) = &m.request {
                        self.corr.held_charge.sub(r.held_cost());
                    }
                    self.shared.held_now = self
                        .shared
                        .held_now
                        .saturating_sub(usize::from(m.request.is_some()));
                }
                self.emit(Event::Kafka(std::sync::Arc::new(m)));
            }
        }
    }

    /// In the response direction: the response being framed was captured and will make no
    /// record (it did not decode, or was not kept), so its request's exchange says
    /// `not_decoded`, not `lost`.
    fn response_not_decoded(&mut self) {
        if self.dir != self.corr.requests_dir {
            self.corr.answering_fate[self.dir.index()] = ResponseMissing::NotDecoded;
        }
    }

    /// Gives up the held record of request `p`, which will get no response record.
    pub(super) fn give_up(&mut self, p: &Pending) {
        if self.corr.held.is_empty() {
            return; // nothing is held (the common case: no --pair, no filter)
        }
        if let Some(mut r) = self.corr.held.remove(&p.seq) {
            self.corr.held_charge.sub(r.held_cost());
            self.shared.held_now = self.shared.held_now.saturating_sub(1);
            r.set_response_missing(ResponseMissing::NoResponse);
            self.emit(Event::Unanswered(p.seq, r));
        }
    }

    /// Gives up the held request whose response was being framed in this direction and made
    /// no record (lost, or not decoded).
    pub(super) fn flush_answering(&mut self) {
        let fate = std::mem::replace(
            &mut self.corr.answering_fate[self.dir.index()],
            ResponseMissing::Lost,
        );
        if let Some((seq, mut r)) = self.corr.answering[self.dir.index()].take() {
            self.corr.held_charge.sub(r.held_cost());
            self.shared.held_now = self.shared.held_now.saturating_sub(1);
            r.set_response_missing(fate);
            self.emit(Event::Unanswered(seq, r));
        }
    }

    /// Reports a holding of kind `h` given up for the memory budget (`what` says which and
    /// what it cost), once per connection and kind; every one is counted by the budget.
    pub(super) fn memory_limit(&mut self, h: Holding, what: String) {
        let bit = 1u8 << h.index();
        if self.corr.memory_reported & bit != 0 {
            return;
        }
        self.corr.memory_reported |= bit;
        // Across the capture, the 1st to 8th connection of each kind are reported, then the
        // 16th, 32nd, ...: connections finished and resumed under pressure would otherwise
        // report again and again.
        let n = &mut self.shared.memory_reports[h.index()];
        *n += 1;
        let n = *n;
        if n > 8 && !n.is_power_of_two() {
            return;
        }
        let a = Anomaly::new(
            AnomalyKind::MemoryLimit,
            format!(
                "{what}: {}; later releases of this kind on this connection are counted in \
                 --stats only (connection {n} with such a release in the capture; reported \
                 for the first 8, then the 16th, 32nd, ...)",
                self.shared.memory.advice()
            ),
        );
        self.anomaly(a);
    }

    /// How the connection stopped, for anomalies written as it is finished: how it ended
    /// ("the connection was reset", "the connection was closed", "the capture ended", ...), or,
    /// for a connection finished while open, that and why.
    fn ended(&self) -> String {
        match (self.released, self.end) {
            (Some(why), _) => format!(
                "the connection was finished while still open ({why}; a later packet resumes \
                 its stream, from stream offset 0)"
            ),
            (None, Some(how)) => how.to_string(),
            (None, None) => "the connection ended".to_string(),
        }
    }

    pub(super) fn anomaly(&mut self, a: Anomaly) {
        self.emit(Event::Anomaly(Box::new(a)));
    }

    /// The versions of `api_key`'s requests seen on this connection, or in the run when
    /// none was here (bit `v` for version `v`).
    pub(super) fn versions_seen(&self, api_key: i16) -> u32 {
        match self.corr.versions_seen.of(api_key) {
            0 => self.shared.versions_seen.of(api_key),
            seen => seen,
        }
    }

    /// Whether a response of `api_key` whose request was not captured may be inferred on this
    /// connection: WriteTxnMarkers goes over a transaction coordinator's own connections to
    /// the leaders (Kafka's `TransactionMarkerChannelManager`) or an admin client's, never over
    /// a consumer's or a follower's, so not on one that carried a Fetch request (whose
    /// responses' record data can hold response-shaped bytes).
    pub(super) fn inferable_here(&self, api_key: i16) -> bool {
        !(self.corr.fetch_requests && api_key == apis::write_txn_markers::API_KEY)
    }

    /// The layouts that decode `frame` (a response's bytes after its size prefix, correlation
    /// id `corr`, its request not captured) whole, as (API key, layout), among the APIs
    /// selected that can be inferred on this connection ([`Handler::inferable_here`]), after a
    /// loss of the request direction only those whose request fits in what it left
    /// ([`RequestGap::fits`]); and the names of the APIs tried.
    pub(super) fn layouts(
        &self,
        frame: &[u8],
        corr: i32,
    ) -> (Vec<(i16, apis::Inferred<Body>)>, Vec<&'static str>) {
        let (mut fits, mut names) = (Vec::new(), Vec::new());
        let room = self.gap_that_may_hold(corr);
        for d in apis::all().filter(|d| self.shared.apis.selected(d.api_key)) {
            if let Some(infer) = d.infer.filter(|_| self.inferable_here(d.api_key)) {
                names.push(name_of(d.api_key));
                fits.extend(
                    infer(frame, self.versions_seen(d.api_key))
                        .into_iter()
                        .filter(|i| room.is_none_or(|g| g.fits(i.min_request_len)))
                        .map(|i| (d.api_key, i)),
                );
            }
        }
        (fits, names)
    }

    /// Whether responses are framed blind: nothing of the request direction was captured and
    /// no request waits, so no correlation id can be expected.
    pub(super) fn blind(&self) -> bool {
        !self.requests_seen && self.corr.pending.len() == 0
    }

    /// Whether a response of `bytes` bytes without a captured request is to be reported on its
    /// own (the first [`MAX_UNPAIRED_REPORTS_PER_CONNECTION`] of the connection); past them it
    /// is counted for the report at the end of the connection.
    pub(super) fn report_unpaired(&mut self, bytes: u64) -> bool {
        if self.corr.unpaired.reported < MAX_UNPAIRED_REPORTS_PER_CONNECTION {
            self.corr.unpaired.reported += 1;
            true
        } else {
            self.corr.unpaired.more += 1;
            self.corr.unpaired.more_bytes += bytes;
            false
        }
    }

    /// Microseconds from request `p`'s packet to the packet at hand, when the response ended
    /// there (`end_seen`); otherwise unknown.
    /// Microseconds from request `p`'s packet to this one, when the response's end was seen
    /// and the clock did not go back.
    pub(super) fn latency(&self, p: &Pending, end_seen: bool) -> Option<i64> {
        (end_seen && p.time_known)
            .then(|| self.loc.ts.micros_since(&p.ts))
            .filter(|us| *us >= 0)
    }

    /// Whether this packet is timestamped before request `p`'s.
    pub(super) fn clock_went_back(&self, p: &Pending) -> bool {
        self.loc.ts.micros_since(&p.ts) < 0
    }

    pub(super) fn with_current(&self, mut a: Anomaly) -> Anomaly {
        if let Some(c) = self.corr.current[self.dir.index()] {
            if c.api_known {
                a.api_key = Some(c.api_key);
                a.api_version = Some(c.api_version);
            }
            a.correlation_id = Some(c.correlation_id);
        }
        a
    }

    /// Takes the pending request with `correlation_id`, reporting WriteTxnMarkers requests that
    /// the response passes over as never answered.
    pub(super) fn take_pending(&mut self, correlation_id: i32) -> Option<Pending> {
        self.flush_answering();
        let i = self.corr.pending.position(correlation_id)?;
        for _ in 0..i {
            let Some(p) = self.corr.pending.pop_front() else {
                break;
            };
            if watched(p.api_key, p.api_version, &self.shared.apis) {
                let why = format!("a later response (correlation_id {correlation_id})");
                let rec = no_response(self.loc, &p, &why, self.corr.pending.lost_since(&p));
                self.out.push(rec);
            }
            self.give_up(&p);
        }
        let found = self.corr.pending.pop_front();
        if let Some(p) = &found {
            self.confirm(p.correlation_id);
            if !self.corr.request_gaps.is_empty() {
                // Responses come in order: those of requests a gap took came before this one
                // of a request seen after it.
                let c = p.correlation_id;
                self.corr
                    .request_gaps
                    .retain(|g| g.next_request.is_none_or(|n| c.wrapping_sub(n) < 0));
            }
            if !self.corr.held.is_empty() {
                let held = self.corr.held.remove(&p.seq).map(|r| (p.seq, r));
                self.corr.answering[self.dir.index()] = held;
            }
        }
        found
    }

    /// `--all-apis`: a record of another API's message, with its header fields and no body.
    pub(super) fn header_only(&mut self, role: Role, c: &Current, size: u32, end_seen: bool) {
        let (message, header_version, request) = match role {
            Role::Requests => (
                MessageKind::Request,
                api::request_header_version(c.api_key, c.api_version),
                None,
            ),
            Role::Responses => match c.request {
                Some(p) => (
                    MessageKind::Response,
                    api::response_header_version(p.api_key, p.api_version),
                    Some(p),
                ),
                // Its API cannot be known: `response_without_request` says so.
                None => return,
            },
        };
        let m = KafkaMessage {
            message,
            api_key: c.api_key,
            api_name: api::api_name(c.api_key).unwrap_or("unknown"),
            api_version: c.api_version,
            header_version,
            correlation_id: c.correlation_id,
            client_id: None,
            size,
            request_frame: request.map(|p| p.frame),
            latency_us: request.and_then(|p| self.latency(&p, end_seen)),
            clock_went_back: request.is_some_and(|p| self.clock_went_back(&p)),
            request_not_decoded: false,
            inferred: false,
            request_lost: None,
            truncated: false,
            captured_bytes: None,
            truncated_field: None,
            trailing_bytes: None,
            unknown_tagged_fields: Vec::new(),
            body: Body::NotDecoded,
            frame_bytes: None,
            packets: Vec::new(),
            response_missing: None,
            request: None,
            held: false,
        };
        self.emit_message(m);
    }

    /// Notes that the request with `correlation_id` was real.
    pub(super) fn confirm(&mut self, correlation_id: i32) {
        let later = self
            .corr
            .last_request
            .is_none_or(|last| correlation_id.wrapping_sub(last) > 0);
        if later {
            self.corr.last_request = Some(correlation_id);
        }
    }

    pub(super) fn push_pending(&mut self, c: &Current, not_decoded: bool) {
        self.push_pending_as(c.correlation_id, c.api_key, c.api_version, not_decoded);
    }

    /// Records a request of this frame as waiting for its response.
    pub(super) fn push_pending_as(
        &mut self,
        correlation_id: i32,
        api_key: i16,
        api_version: i16,
        not_decoded: bool,
    ) {
        // Fetch (1): a consumer's or a follower's connection.
        self.corr.fetch_requests |= api_key == 1;
        let full = self.corr.pending.len() >= MAX_PENDING_PER_CONNECTION;
        let refused = !full && !self.corr.pending.make_room();
        if full || refused {
            if refused {
                self.shared.memory.note_given_up(Holding::Pending);
            }
            let why = if refused {
                "the memory limit was reached while it waited (it was forgotten to make room)"
            } else {
                "too many requests were pending"
            };
            let Some(p) = self.corr.pending.pop_front() else {
                let what = format!(
                    "the {} v{api_version} request with correlation_id {correlation_id} was not \
                     remembered: its response will come without a request",
                    name_of(api_key)
                );
                return self.memory_limit(Holding::Pending, what);
            };
            if watched(p.api_key, p.api_version, &self.shared.apis) {
                let rec = no_response(self.loc, &p, why, self.corr.pending.lost_since(&p));
                self.out.push(rec);
            }
            self.give_up(&p);
            if refused {
                let what = format!(
                    "the oldest request waiting on this connection (frame {}, correlation_id \
                     {}) was forgotten to make room for a new one: its response will come \
                     without a request",
                    p.frame, p.correlation_id
                );
                self.memory_limit(Holding::Pending, what);
            }
        }
        let seq = self.shared.held_seq;
        self.shared.held_seq += 1;
        self.corr.pending.push_back(Pending {
            correlation_id,
            api_key,
            api_version,
            frame: self.loc.frame,
            ts: self.loc.ts,
            not_decoded,
            response_lost: self.corr.pending.response_lost,
            response_gaps: self.corr.pending.response_gaps,
            seq,
            time_known: true,
        });
    }

    /// Marks the request just pushed as not decoded.
    pub(super) fn last_not_decoded(&mut self) {
        if let Some(p) = self.corr.pending.queue.back_mut() {
            p.not_decoded = true;
        }
    }

    pub(super) fn decode_failed(
        &mut self,
        what: &str,
        e: &DecodeError,
        frame: &[u8],
        body_start: usize,
    ) {
        let c = self.corr.current[self.dir.index()];
        self.not_decoded(c, what, e, frame.len(), body_start, Some(frame));
    }

    /// The anomaly of a frame of `size` bytes (after the prefix) of message `c` that did not
    /// decode: `e` is relative to its body, which starts at `body_start`; `data` is the frame,
    /// when it was held.
    pub(super) fn not_decoded(
        &mut self,
        c: Option<Current>,
        what: &str,
        e: &DecodeError,
        size: usize,
        body_start: usize,
        data: Option<&[u8]>,
    ) {
        self.response_not_decoded();
        self.body_problem(c, e, size, body_start, data, |offset| {
            if e.kind == DecodeErrorKind::TrailingBytes {
                // The schema's fields all read, with bytes after them, and still not decoded
                // (its decode without them failed, or a walk went round without reading:
                // neither is expected).
                format!(
                    "{what} could not be decoded: {}",
                    trailing_text(size as u64, offset)
                )
            } else {
                format!("{what} could not be decoded: {e} (frame offset {offset})")
            }
        });
    }

    /// The `trailing_bytes` anomaly of a frame of `size` bytes of message `c` (its body from
    /// `body_start`; `data`, the frame when it was held) whose body decoded with bytes left
    /// after its schema's last field (`e`): its record, written, holds the fields.
    pub(super) fn trailing(
        &mut self,
        c: Option<Current>,
        what: &str,
        e: &DecodeError,
        size: usize,
        body_start: usize,
        data: Option<&[u8]>,
    ) {
        self.body_problem(c, e, size, body_start, data, |offset| {
            format!(
                "{what}: {}, so its fields may be misread; the frame's record holds them as the \
                 version reads them (the transaction view and --stats' marker counts leave it \
                 out)",
                trailing_text(size as u64, offset)
            )
        });
    }

    /// Reports an anomaly of kind `e` (relative to the body, which starts at `body_start`)
    /// about a frame of `size` bytes of message `c`, saying `message` of the frame offset `e`
    /// is at, with the frame's bytes when held.
    pub(super) fn body_problem(
        &mut self,
        c: Option<Current>,
        e: &DecodeError,
        size: usize,
        body_start: usize,
        data: Option<&[u8]>,
        message: impl FnOnce(u64) -> String,
    ) {
        let offset = (body_start + e.offset_in(size.saturating_sub(body_start))) as u64;
        let mut a = Anomaly::new(AnomalyKind::from(e.kind), message(offset));
        if let Some(c) = c {
            if c.api_known {
                a.api_key = Some(c.api_key);
                a.api_version = Some(c.api_version);
            }
            a.correlation_id = Some(c.correlation_id);
            a.request_frame = c.request.map(|p| p.frame);
        }
        let path = e.path();
        if !path.is_empty() {
            a.field = Some(path);
        }
        a.offset = Some(offset);
        a.bytes = Some(size as u64);
        if let Some(d) = data {
            a = a.with_data(d);
        }
        self.anomaly(a);
    }

    /// For a response in progress whose request was pending, that request's frame number: an
    /// anomaly about a response that was captured but not decoded names what it answers.
    fn request_frame_of_current(&self) -> Option<u64> {
        self.corr.current[self.dir.index()].and_then(|c| c.request.map(|p| p.frame))
    }

    /// The decoder that keeps and decodes frames of `api_key` in this run, if any.
    pub(super) fn kept(&self, api_key: i16, version: i16) -> Option<&'static Decoder> {
        apis::decoder(api_key).filter(|d| d.keeps(&self.shared.apis, version))
    }

    /// A record of a decoded message of the frame in progress.
    pub(super) fn message(
        &self,
        c: &Current,
        message: MessageKind,
        header_version: u8,
        frame: &[u8],
    ) -> KafkaMessage {
        KafkaMessage {
            message,
            api_key: c.api_key,
            api_name: name_of(c.api_key),
            api_version: c.api_version,
            header_version,
            correlation_id: c.correlation_id,
            client_id: None,
            size: frame.len() as u32,
            request_frame: None,
            latency_us: None,
            clock_went_back: false,
            request_not_decoded: false,
            inferred: false,
            request_lost: None,
            truncated: false,
            captured_bytes: None,
            truncated_field: None,
            trailing_bytes: None,
            unknown_tagged_fields: Vec::new(),
            body: Body::NotDecoded,
            frame_bytes: self.shared.keep_frames.then(|| frame.to_vec()),
            packets: Vec::new(),
            response_missing: None,
            request: None,
            held: false,
        }
    }

    pub(super) fn request_frame(&mut self, frame: &[u8]) {
        let Some(c) = self.corr.current[self.dir.index()] else {
            return;
        };
        let Some(d) = self.kept(c.api_key, c.api_version) else {
            return;
        };
        let name = name_of(c.api_key);
        let hv = api::request_header_version(c.api_key, c.api_version);
        let budget = Budget::default();
        let header = match decode_request_header(frame, hv, &budget) {
            Ok(h) => h,
            Err(e) => {
                // Still a request: its response pairs with it, marked as answering a request
                // that was not decoded.
                self.push_pending(&c, true);
                return self.decode_failed(&format!("{name} request header"), &e, frame, 0);
            }
        };
        self.push_pending(&c, false);
        if !d.versions.contains(&c.api_version) {
            self.last_not_decoded();
            return self.unsupported(d, frame, MessageKind::Request);
        }
        self.corr.versions_seen.add(c.api_key, c.api_version);
        self.shared.versions_seen.add(c.api_key, c.api_version);
        let body = &frame[header.len..];
        match decode_kept(d.decode_request, body, c.api_version, &budget) {
            Ok((b, trailing)) => {
                self.confirm(c.correlation_id);
                if let Some(a) = d.answers.and_then(|check| (check.of)(&b)) {
                    self.note_asked(c.correlation_id, a);
                }
                let m = KafkaMessage {
                    client_id: Some(header.client_id),
                    trailing_bytes: trailing.as_ref().map(|e| e.remaining as u32),
                    unknown_tagged_fields: header.unknown_tagged_fields,
                    body: b,
                    ..self.message(&c, MessageKind::Request, hv, frame)
                };
                if let Some(e) = trailing {
                    let c = Some(c);
                    let what = format!("{name} request body");
                    self.trailing(c, &what, &e, frame.len(), header.len, Some(frame));
                }
                self.emit_message(m);
            }
            Err(e) => {
                self.last_not_decoded();
                self.decode_failed(&format!("{name} request body"), &e, frame, header.len)
            }
        }
    }

    pub(super) fn response_frame(&mut self, frame: &[u8]) {
        let Some(c) = self.corr.current[self.dir.index()] else {
            return;
        };
        let Some(req) = c.request else {
            return self.infer_response(frame, c.correlation_id);
        };
        let Some(d) = self.kept(c.api_key, c.api_version) else {
            return;
        };
        let name = name_of(c.api_key);
        let hv = api::response_header_version(c.api_key, c.api_version);
        let budget = Budget::default();
        let header = match decode_response_header(frame, hv, &budget) {
            Ok(h) => h,
            Err(e) => return self.decode_failed(&format!("{name} response header"), &e, frame, 0),
        };
        if !d.versions.contains(&c.api_version) {
            return self.unsupported(d, frame, MessageKind::Response);
        }
        let body = &frame[header.len..];
        match decode_kept(d.decode_response, body, c.api_version, &budget) {
            Ok((b, trailing)) => {
                let mismatch = d.answers.and_then(|check| {
                    let i = self.corr.asked.iter().position(|&(s, _)| s == req.seq)?;
                    let (_, asked) = self.corr.asked.swap_remove(i);
                    let got = (check.of)(&b)?;
                    (got != asked).then_some((check.text, asked, got))
                });
                let m = KafkaMessage {
                    request_frame: Some(req.frame),
                    latency_us: self.latency(&req, !self.replaying),
                    clock_went_back: self.clock_went_back(&req),
                    request_not_decoded: req.not_decoded,
                    trailing_bytes: trailing.as_ref().map(|e| e.remaining as u32),
                    unknown_tagged_fields: header.unknown_tagged_fields,
                    body: b,
                    ..self.message(&c, MessageKind::Response, hv, frame)
                };
                if let Some(e) = trailing {
                    self.overran = e.remaining;
                    let c = Some(c);
                    let what = format!("{name} response body");
                    self.trailing(c, &what, &e, frame.len(), header.len, Some(frame));
                }
                self.emit_message(m);
                if let Some((text, asked, got)) = mismatch {
                    self.response_mismatch(&c, req.frame, text, asked, got);
                }
            }
            Err(e) => self.decode_failed(&format!("{name} response body"), &e, frame, header.len),
        }
    }

    /// Remembers what the request just made pending (with `correlation_id`) asked its
    /// response to answer ([`Correlation::asked`]).
    fn note_asked(&mut self, correlation_id: i32, a: Answers) {
        let Some(seq) = self
            .corr
            .pending
            .queue
            .back()
            .filter(|p| p.correlation_id == correlation_id)
            .map(|p| p.seq)
        else {
            return;
        };
        let asked = &mut self.corr.asked;
        if asked.len() >= MAX_ASKED {
            // Those of requests no longer waiting (answered by a response not decoded, or
            // given up) go; when all still wait, this one is not checked (the oldest are
            // answered first).
            let oldest = self.corr.pending.queue.front().map_or(u64::MAX, |p| p.seq);
            asked.retain(|&(s, _)| s >= oldest);
            if asked.len() >= MAX_ASKED {
                return;
            }
        }
        if asked.len() == asked.capacity() {
            // Its room charged to the run's budget as it grows (it lives as long as the
            // connection); not remembered when the budget has none.
            let more = asked.capacity().max(4).min(MAX_ASKED - asked.len());
            let bytes = more * std::mem::size_of::<(u64, Answers)>();
            if !self.corr.held_charge.add(bytes) {
                return;
            }
            asked.reserve_exact(more);
        }
        asked.push((seq, a));
    }

    /// The `response_mismatch` anomaly of the response of message `c` that answers `got`
    /// where its request, in frame `request_frame`, asked `asked`.
    fn response_mismatch(
        &mut self,
        c: &Current,
        request_frame: u64,
        text: &AnswersText,
        asked: Answers,
        got: Answers,
    ) {
        let count = |n: u32, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        let how = if got.items == asked.items && got.groups == asked.groups {
            format!(
                "names as many {}s of as many {}s as its request (frame {request_frame}) asked, \
                 {} of {}, but not the same ones",
                text.item,
                text.group,
                count(asked.items, text.item),
                count(asked.groups, text.group)
            )
        } else {
            format!(
                "answers {} of {}; its request (frame {request_frame}) asked {} of {}",
                count(got.items, text.item),
                count(got.groups, text.group),
                count(asked.items, text.item),
                count(asked.groups, text.group)
            )
        };
        let mut a = Anomaly::new(
            AnomalyKind::ResponseMismatch,
            format!(
                "the {} response {how}: {}",
                name_of(c.api_key),
                text.consequence
            ),
        );
        a.api_key = Some(c.api_key);
        a.api_version = Some(c.api_version);
        a.correlation_id = Some(c.correlation_id);
        a.request_frame = Some(request_frame);
        self.anomaly(a);
    }

    /// A kept frame of `size` bytes cut short, of which `have` (after the prefix) were
    /// captured: when its header decodes and its body stops at the cut, a record of the fields
    /// wholly captured, marked `truncated` ([`partial::decode`]). A request so recorded is
    /// pending from now, so that its response pairs with it. A response whose request was not
    /// captured is not decoded in part (its API and version are unknown).
    fn partial(&mut self, role: Role, size: u32, have: &[u8], at: PartialAt) -> bool {
        let Some(c) = self.corr.current[self.dir.index()] else {
            return false;
        };
        let Some(d) = self.kept(c.api_key, c.api_version) else {
            return false;
        };
        if !c.api_known || c.partial.is_some() || !d.versions.contains(&c.api_version) {
            return false;
        }
        let missing = (size as usize).saturating_sub(have.len());
        let budget = Budget::default();
        let request = role == Role::Requests;
        if !request && c.request.is_none() {
            return false;
        }
        let header = if request {
            let hv = api::request_header_version(c.api_key, c.api_version);
            decode_request_header(have, hv, &budget)
                .map(|h| (hv, h.len, Some(h.client_id), h.unknown_tagged_fields))
        } else {
            let hv = api::response_header_version(c.api_key, c.api_version);
            decode_response_header(have, hv, &budget)
                .map(|h| (hv, h.len, None, h.unknown_tagged_fields))
        };
        let (hv, client_id, tags, body, path) = match header {
            Ok((hv, header_len, client_id, tags)) => {
                let Some((body, path)) =
                    partial::decode(d, request, &have[header_len..], c.api_version, missing)
                else {
                    return false;
                };
                (hv, client_id, tags, body, path)
            }
            // Cut inside the header: the head gave the API, version and correlation id.
            Err(e) if partial::stopped_at_cut(&e) => {
                let hv = if request {
                    api::request_header_version(c.api_key, c.api_version)
                } else {
                    api::response_header_version(c.api_key, c.api_version)
                };
                (
                    hv,
                    None,
                    Vec::new(),
                    partial::PartialBody::default(),
                    e.path_or_kind(),
                )
            }
            Err(_) => return false,
        };
        let parts = PartialParts {
            header_version: hv,
            client_id,
            tags,
            body: Body::Partial(body),
            path,
            captured: have.len() as u32,
        };
        self.partial_record(role, c, size, have, parts, at)
    }

    /// Writes (or holds, see [`PartialAt`]) the record of a frame of `size` bytes decoded in
    /// part: `parts`, of which `have` are the bytes captured when the frame was kept (empty for
    /// a walked one). Returns `true` (the bytes were decoded).
    pub(super) fn partial_record(
        &mut self,
        role: Role,
        c: Current,
        size: u32,
        have: &[u8],
        parts: PartialParts,
        at: PartialAt,
    ) -> bool {
        let request = role == Role::Requests;
        let PartialParts {
            header_version: hv,
            client_id,
            tags,
            body,
            path,
            captured,
        } = parts;
        if let Some(cur) = &mut self.corr.current[self.dir.index()] {
            cur.partial = Some(captured);
        }
        let mut m = KafkaMessage {
            client_id,
            unknown_tagged_fields: tags,
            body,
            size,
            truncated: true,
            captured_bytes: Some(captured),
            truncated_field: Some(path),
            trailing_bytes: None,
            ..self.message(&c, MessageKind::Request, hv, have)
        };
        if let Some(req) = c.request.filter(|_| !request) {
            m.message = MessageKind::Response;
            m.request_frame = Some(req.frame);
            m.request_not_decoded = req.not_decoded;
        }
        let held = PartialHeld {
            message: Box::new(m),
            request: c.request,
            cut: matches!(self.missing, Missing::Cut | Missing::FileEnd),
        };
        let cost = held.message.held_cost();
        if at == PartialAt::Skipped && self.corr.held_charge.add(cost) {
            // Written at the frame's end, with its loss's anomaly.
            self.corr.partial[self.dir.index()] = Some(held);
            return true;
        }
        // Its end is here when the snapshot length cut it at this packet, or the stream ended.
        let end_seen = !self.replaying && (held.cut || at == PartialAt::StreamEnd);
        if at != PartialAt::Skipped {
            // No frame end follows to count it (a skipped one is counted at its end).
            self.count_frame(role, c.api_key, c.request, end_seen && held.cut);
        }
        let lost = (at == PartialAt::GapEnd).then(|| partial_lost(&held.message));
        self.emit_partial(held, end_seen, true);
        if let Some(a) = lost {
            self.anomaly(a);
        }
        true
    }

    /// Writes the record of a frame decoded in part ([`Handler::partial`]) at the packet at
    /// hand, which carried the frame's last captured byte when `end_seen`. A request becomes
    /// pending first, when `push` (else its frame's end did it), so that its response pairs
    /// with it and `--pair` holds its record; a response gets its latency when its end was
    /// here and its bytes were cut by the snapshot length (a gap's bytes were never here).
    pub(super) fn emit_partial(&mut self, held: PartialHeld, end_seen: bool, push: bool) {
        let PartialHeld {
            mut message,
            request,
            cut,
        } = held;
        match (message.message, request) {
            (MessageKind::Response, Some(req)) => {
                if cut {
                    message.latency_us = self.latency(&req, end_seen);
                    message.clock_went_back = self.clock_went_back(&req);
                }
            }
            _ => {
                if push {
                    let (id, key, version) =
                        (message.correlation_id, message.api_key, message.api_version);
                    self.push_pending_as(id, key, version, false);
                }
                self.confirm(message.correlation_id);
                if !end_seen {
                    if let Some(p) = self.corr.pending.queue.back_mut() {
                        if p.correlation_id == message.correlation_id {
                            p.time_known = false;
                        }
                    }
                }
            }
        }
        self.emit_message(*message);
    }

    /// Writes the record held for a frame cut short whose end never passed (the connection
    /// ended first).
    pub(super) fn flush_partial(&mut self) {
        if let Some(held) = self.corr.partial[self.dir.index()].take() {
            self.corr.held_charge.sub(held.message.held_cost());
            // Its frame's end never passed to count it.
            let role = match held.message.message {
                MessageKind::Request => Role::Requests,
                _ => Role::Responses,
            };
            self.count_frame(role, held.message.api_key, held.request, false);
            let lost = partial_lost(&held.message);
            self.emit_partial(held, false, true);
            self.anomaly(lost);
        }
    }

    /// A response whose request was not captured: decoded when exactly one layout of one API
    /// that supports inference (see [`apis::InferFn`]) decodes the whole frame; otherwise
    /// reported as `response_without_request`.
    pub(super) fn infer_response(&mut self, frame: &[u8], correlation_id: i32) {
        // Responses come in request order: after one inferred for a loss, a response with an
        // id no greater answers no request that loss took (a spliced or repeated one; or
        // the one inferred before was the tail of another message).
        if let Some((earlier, at)) = self
            .gap_that_may_hold(correlation_id)
            .and_then(|g| g.inferred)
            .filter(|(c, _)| correlation_id.wrapping_sub(*c) <= 0)
        {
            if self.report_unpaired(frame.len() as u64) {
                let mut a = Anomaly::new(
                    AnomalyKind::ResponseWithoutRequest,
                    format!(
                        "response with correlation_id {correlation_id} ({} bytes) has no \
                         captured request, and is not taken as answering a lost one: the \
                         response with correlation_id {earlier} in frame {at} was, and \
                         responses come in request order (one of the two is not what it \
                         seems: the earlier may be the tail of another message)",
                        frame.len()
                    ),
                );
                a.correlation_id = Some(correlation_id);
                a.bytes = Some(frame.len() as u64);
                self.anomaly(a.with_data(frame));
            }
            return;
        }
        let (mut fits, names) = self.layouts(frame, correlation_id);
        if fits.len() == 1 {
            if let Some((api_key, i)) = fits.pop() {
                let c = Current {
                    api_key,
                    api_version: i.version,
                    correlation_id,
                    request: None,
                    api_known: true,
                    partial: None,
                };
                let lost = self.gap_that_may_hold(correlation_id);
                if lost.is_some() {
                    let frame_no = self.loc.frame;
                    if let Some(g) = self
                        .corr
                        .request_gaps
                        .iter_mut()
                        .rev()
                        .find(|g| g.may_hold(correlation_id))
                    {
                        g.inferred = Some((correlation_id, frame_no));
                        g.claimed = g.claimed.saturating_add(i.min_request_len);
                    }
                }
                let m = KafkaMessage {
                    inferred: true,
                    request_lost: lost.map(|g| g.lost),
                    unknown_tagged_fields: i.header.unknown_tagged_fields,
                    body: i.body,
                    ..self.message(&c, MessageKind::Response, i.header.header_version, frame)
                };
                return self.emit_message(m);
            }
        }
        let apis = names.join(" or ");
        let why = if names.is_empty() && self.corr.fetch_requests {
            "a connection that carried Fetch requests carries no WriteTxnMarkers (and none of \
             the other APIs selected can be recognised without its request)"
                .to_string()
        } else if names.is_empty() {
            "none of the APIs selected can be recognised without its request".to_string()
        } else if fits.is_empty() {
            format!("it does not decode as a {apis} response")
        } else if fits.iter().all(|(k, _)| *k == fits[0].0) {
            format!("it decodes as more than one {} version", name_of(fits[0].0))
        } else {
            format!("it decodes as more than one of {apis}")
        };
        if !self.report_unpaired(frame.len() as u64) {
            return;
        }
        let mut a = Anomaly::new(
            AnomalyKind::ResponseWithoutRequest,
            format!("response with correlation_id {correlation_id} ({} bytes) has no captured request, and {why}", frame.len()),
        );
        a.correlation_id = Some(correlation_id);
        a.bytes = Some(frame.len() as u64);
        // A response that is none of the APIs the output is about put none of them in doubt.
        a.harmless = !names.is_empty() && fits.is_empty();
        let a = a.with_data(frame);
        self.anomaly(a);
    }

    pub(super) fn unsupported(&mut self, d: &Decoder, frame: &[u8], kind: MessageKind) {
        let v = self.corr.current[self.dir.index()]
            .map(|c| c.api_version)
            .unwrap_or(-1);
        let what = match kind {
            MessageKind::Request => "request",
            MessageKind::Response => "response",
        };
        let a = self.with_current(Anomaly::new(
            AnomalyKind::UnsupportedApiVersion,
            format!(
                "{} {what} of version {v}: this decoder knows versions {} to {}",
                name_of(d.api_key),
                d.versions.start(),
                d.versions.end()
            ),
        ));
        let mut a = a.with_data(frame);
        a.bytes = Some(frame.len() as u64);
        a.request_frame = self.request_frame_of_current();
        self.anomaly(a);
    }
}

impl Handler<'_> {
    /// A `truncated_frame` anomaly: the stream ended `missing` bytes short of the end of the
    /// frame of `size` bytes at stream offset `offset`; `what` is appended to the message.
    fn truncated(&self, offset: u64, size: u32, missing: u32, what: &str) -> Anomaly {
        let mut a = self.with_current(Anomaly::new(
            AnomalyKind::TruncatedFrame,
            format!(
                "the last {missing} bytes of a {size}-byte frame never came: {}{what}",
                self.ended()
            ),
        ));
        a.stream_offset = Some(offset);
        a.bytes = Some(u64::from(size));
        // A response's anomaly names its request, as `frame_lost` does.
        a.request_frame = self.corr.current[self.dir.index()]
            .and_then(|c| c.request)
            .map(|p| p.frame);
        a
    }
}

impl FrameHandler for Handler<'_> {
    fn replaying(&mut self, on: bool) {
        self.replaying = on;
    }

    fn on_head(&mut self, role: Role, offset: u64, size: u32, head: &[u8]) -> Decision {
        self.corr.frame_offset[self.dir.index()] = offset;
        match role {
            Role::Requests => {
                // The framer guarantees 8 head bytes for requests (minimum frame size 8).
                let Some(RequestHead {
                    api_key,
                    api_version,
                    correlation_id,
                }) = RequestHead::peek(head)
                else {
                    return Decision::Skip;
                };
                self.corr.current[self.dir.index()] = Some(Current {
                    api_key,
                    api_version,
                    correlation_id,
                    request: None,
                    api_known: true,
                    partial: None,
                });
                self.corr.last_request_head = Some(correlation_id);
                if let Some(g) = self.corr.request_gaps.back_mut() {
                    g.next_request.get_or_insert(correlation_id);
                }
                if self.kept(api_key, api_version).is_none() {
                    Decision::Skip
                } else if self.start_walk(role, size, head) {
                    Decision::Walk
                } else {
                    Decision::Keep
                }
            }
            Role::Responses => {
                // And 4 for responses (minimum frame size 4).
                let Some(correlation_id) = int32_at(head, 0) else {
                    return Decision::Skip;
                };
                let request = self.take_pending(correlation_id);
                if request.is_none() && correlation_id >= 0 {
                    // The broker answered it: a request with this id was real.
                    self.confirm(correlation_id);
                }
                self.corr.current[self.dir.index()] = Some(Current {
                    api_key: request.map(|p| p.api_key).unwrap_or(-1),
                    api_version: request.map(|p| p.api_version).unwrap_or(-1),
                    correlation_id,
                    request,
                    api_known: request.is_some(),
                    partial: None,
                });
                match request {
                    Some(p) if self.kept(p.api_key, p.api_version).is_some() => {
                        if self.start_walk(role, size, head) {
                            Decision::Walk
                        } else {
                            Decision::Keep
                        }
                    }
                    Some(_) => Decision::Skip,
                    // Small enough to be inferred: try (see `infer_response`).
                    None if size <= INFER_LIMIT => Decision::Keep,
                    None => Decision::Skip,
                }
            }
        }
    }

    fn on_frame(&mut self, role: Role, _offset: u64, frame: &[u8]) {
        // A kept frame completes only on captured bytes (a gap turns it into a skipped one),
        // at the packet at hand unless they are replayed.
        self.count(role, !self.replaying);
        match role {
            Role::Requests => self.request_frame(frame),
            Role::Responses => self.response_frame(frame),
        }
        self.corr.current[self.dir.index()] = None;
    }

    fn on_partial(
        &mut self,
        role: Role,
        _offset: u64,
        size: u32,
        have: &[u8],
        skipped: bool,
    ) -> bool {
        let at = if skipped {
            PartialAt::Skipped
        } else {
            PartialAt::GapEnd
        };
        if self.corr.walks[self.dir.index()].is_some() {
            return self.walk_partial(role, size, at);
        }
        self.partial(role, size, have, at)
    }

    fn on_skipped(&mut self, role: Role, offset: u64, size: u32, _head: &[u8], damaged: bool) {
        let end_seen = !self.replaying && self.gap_end != Some(offset + 4 + u64::from(size));
        self.count(role, end_seen);
        if self.corr.walks[self.dir.index()].is_some() {
            if let Some(w) = self.corr.walks[self.dir.index()].take() {
                if !damaged {
                    return self.walked(role, *w, end_seen);
                }
            }
        }
        let Some(c) = self.corr.current[self.dir.index()].take() else {
            return;
        };
        let held = self.corr.partial[self.dir.index()].take();
        if let Some(h) = &held {
            self.corr.held_charge.sub(h.message.held_cost());
        }
        if role == Role::Requests && (c.partial.is_none() || held.is_some()) {
            let refused = self.corr.refused[self.dir.index()];
            let not_decoded = (damaged || refused)
                && held.is_none()
                && self.kept(c.api_key, c.api_version).is_some();
            self.push_pending(&c, not_decoded);
        }
        if let Some(h) = held {
            self.emit_partial(h, end_seen, false);
        }
        if self.shared.apis.selected(c.api_key)
            && !damaged
            && self.kept(c.api_key, c.api_version).is_none()
        {
            self.header_only(role, &c, size, end_seen);
        }
        if role == Role::Responses
            && c.request.is_none()
            && !damaged
            && self.report_unpaired(u64::from(size))
        {
            let mut a = Anomaly::new(
                AnomalyKind::ResponseWithoutRequest,
                format!(
                    "response with correlation_id {} ({size} bytes) has no captured request; too large to be {}, skipped",
                    c.correlation_id,
                    inferable()
                ),
            );
            a.correlation_id = Some(c.correlation_id);
            a.bytes = Some(u64::from(size));
            self.anomaly(a);
        }
        let unpaired_response = role == Role::Responses && c.request.is_none();
        let refused = std::mem::take(&mut self.corr.refused[self.dir.index()]);
        if damaged
            && !refused
            && (watched(c.api_key, c.api_version, &self.shared.apis) || unpaired_response)
        {
            let what = match role {
                Role::Requests => format!("{} request", name_of(c.api_key)),
                Role::Responses if unpaired_response => format!(
                    "Response whose request was not captured (it may have been {})",
                    inferable()
                ),
                Role::Responses => format!("{} response", name_of(c.api_key)),
            };
            let text = match c.partial {
                Some(have) => format!(
                    "{what} (correlation_id {}, {size} bytes) was decoded only in part: {have} \
                     bytes of it were captured (its record says \"truncated\": true)",
                    c.correlation_id
                ),
                None => format!(
                    "{what} (correlation_id {}, {size} bytes) was not decoded: part of it was \
                     never captured",
                    c.correlation_id
                ),
            };
            let mut a = Anomaly::new(AnomalyKind::FrameLost, text);
            if !unpaired_response {
                a.api_key = Some(c.api_key);
                a.api_version = Some(c.api_version);
            }
            a.correlation_id = Some(c.correlation_id);
            a.bytes = Some(u64::from(size));
            a.request_frame = c.request.map(|p| p.frame);
            self.anomaly(a);
        }
    }

    fn on_refused(&mut self, role: Role, offset: u64, size: u32) {
        self.corr.refused[self.dir.index()] = true;
        // Captured, but not kept for the memory budget.
        self.response_not_decoded();
        let what = match self.corr.current[self.dir.index()] {
            Some(c) if c.api_known => format!(
                "{} {} v{} (correlation_id {})",
                name_of(c.api_key),
                side(role),
                c.api_version,
                c.correlation_id
            ),
            Some(c) => format!(
                "response with correlation_id {} whose request was not captured (it may have \
                 been {})",
                c.correlation_id,
                inferable()
            ),
            None => "frame".to_string(),
        };
        let mut a = self.with_current(Anomaly::new(
            AnomalyKind::MemoryLimit,
            format!(
                "the {what} of {size} bytes at stream offset {offset} was not decoded: holding \
                 it would pass the memory budget ({} of {} in use); its bytes are passed over: {}",
                crate::memory::human(self.shared.memory.used()),
                crate::memory::human(self.shared.memory.limit()),
                self.shared.memory.advice()
            ),
        ));
        a.bytes = Some(u64::from(size));
        a.stream_offset = Some(offset);
        a.request_frame = self.corr.current[self.dir.index()]
            .and_then(|c| c.request)
            .map(|p| p.frame);
        self.anomaly(a);
    }

    fn on_tail_dropped(&mut self, _role: Role, at: u64, len: u64) {
        let what = format!(
            "{len} bytes held while looking for a frame start (up to stream offset {at}) were \
             passed over unexamined"
        );
        self.memory_limit(Holding::Frames, what);
    }

    fn plausible_head(&mut self, role: Role, _size: u32, head: &[u8]) -> bool {
        match role {
            Role::Requests => {
                let Some(h) = RequestHead::peek(head) else {
                    return false;
                };
                let follows = self.corr.last_request.is_none_or(|last| {
                    CORRELATION_WINDOW.contains(&h.correlation_id.wrapping_sub(last))
                });
                api::api_info(h.api_key).is_some_and(|a| a.has_version(h.api_version)) && follows
            }
            Role::Responses => int32_at(head, 0).is_some_and(|corr| {
                self.corr.pending.contains(corr)
                    || (self.blind() && corr >= 0)
                    || self.after_request_loss(corr)
            }),
        }
    }

    fn on_head_lost(&mut self, role: Role, size: u32, head: &[u8]) {
        let be16 = |i: usize| int16_at(head, i);
        let be32 = |i: usize| int32_at(head, i);
        let mut a = Anomaly::new(AnomalyKind::FrameLost, String::new());
        a.bytes = Some(u64::from(size));
        let what = match role {
            Role::Requests => {
                a.api_key = be16(0);
                a.api_version = be16(2);
                let version = a.api_version.unwrap_or(-1);
                if a.api_key
                    .is_some_and(|k| !watched(k, version, &self.shared.apis))
                {
                    return; // another API: nothing of interest lost
                }
                "request"
            }
            Role::Responses => {
                a.correlation_id = be32(0);
                let request = match a.correlation_id {
                    Some(corr) => self.take_pending(corr),
                    None => {
                        // A response lost without its correlation id: any waiting request's.
                        self.corr
                            .pending
                            .response_gap(self.loc.frame, u64::from(size));
                        None
                    }
                };
                match request {
                    Some(p) if !watched(p.api_key, p.api_version, &self.shared.apis) => return,
                    Some(p) => {
                        a.api_key = Some(p.api_key);
                        a.api_version = Some(p.api_version);
                        a.request_frame = Some(p.frame);
                    }
                    None => {}
                }
                "response"
            }
        };
        let version = a.api_version.unwrap_or(-1);
        let api = match a.api_key {
            Some(k) if watched(k, version, &self.shared.apis) => format!("{} ", name_of(k)),
            _ => String::new(),
        };
        a.message =
            format!("a {api}{what} of {size} bytes was not decoded: its header was never captured");
        self.anomaly(a);
    }

    fn on_bad_size(&mut self, role: Role, offset: u64, size: i32, after: &[u8]) {
        let too_large = size as i64 > i64::from(self.shared.max_frame_size);
        let (kind, sentence) = if too_large {
            (
                AnomalyKind::FrameTooLarge,
                format!("above --max-frame-size {}", self.shared.max_frame_size),
            )
        } else {
            (
                AnomalyKind::FrameTooSmall,
                format!("below the minimum of {}", role.min_frame_size()),
            )
        };
        let mut a = Anomaly::new(kind, String::new());
        a.stream_offset = Some(offset);
        // A real frame above the limit still has its header behind the prefix: name its API
        // and correlation id when they are plausible (a known API and version for a request,
        // a waiting request's correlation id for a response), so that the reader knows what
        // was not decoded. A garbage prefix rarely passes these checks.
        let mut what = String::new();
        if too_large {
            match role {
                Role::Requests => {
                    let head = RequestHead::peek(after);
                    let (key, version, corr) = head.map_or((-1, -1, 0), |h| {
                        (h.api_key, h.api_version, h.correlation_id)
                    });
                    if let Some(info) = api::api_info(key).filter(|i| i.has_version(version)) {
                        a.api_key = Some(key);
                        a.api_version = Some(version);
                        a.correlation_id = Some(corr);
                        what = format!(
                            " (a {} v{version} request, correlation_id {corr})",
                            info.name
                        );
                        // Its response is then known for what it answers.
                        let not_decoded = self.kept(key, version).is_some();
                        self.push_pending_as(corr, key, version, not_decoded);
                    }
                }
                Role::Responses => {
                    // The request got this (undecoded) response: it is no longer waiting.
                    let request = int32_at(after, 0).and_then(|c| Some((c, self.take_pending(c)?)));
                    if let Some((corr, p)) = request {
                        a.api_key = Some(p.api_key);
                        a.api_version = Some(p.api_version);
                        a.correlation_id = Some(corr);
                        a.request_frame = Some(p.frame);
                        let name = api::api_name(p.api_key).unwrap_or("unknown API");
                        what = format!(
                            " (the response to the {name} v{} request in frame {}, correlation_id {corr})",
                            p.api_version, p.frame
                        );
                    }
                }
            }
        }
        a.message = format!(
            "size prefix {size} at stream offset {offset}{what} is {sentence}; looking for the next frame"
        );
        self.anomaly(a);
        // The response it named (if any) was captured.
        self.response_not_decoded();
    }

    fn on_gap(&mut self, role: Role, at: u64, len: u64, effect: GapEffect) {
        if !matches!(
            effect,
            GapEffect::InsideSkippedFrame | GapEffect::KeptFrameLost | GapEffect::Resync
        ) {
            // A frame being walked loses its bytes (after a loss inside it or of its end, the
            // framer's `on_partial` ends its walk with what it read).
            self.corr.walks[self.dir.index()] = None;
        }
        self.gap_end =
            (!matches!(self.missing, Missing::Cut | Missing::FileEnd)).then_some(at + len);
        if effect == GapEffect::Resync {
            // The frame in progress, if one was decoded in part, ends here.
            self.flush_partial();
        }
        if role == Role::Responses && effect == GapEffect::Resync {
            // Whole responses may have been in it.
            self.corr.pending.response_gap(self.loc.frame, len);
        }
        if role == Role::Requests
            && matches!(effect, GapEffect::Resync | GapEffect::HeadLost)
            && self.missing != Missing::NotKept
        {
            // Whole requests may have been in it: responses that answer none pending may be
            // theirs.
            // It replaces the loss an acknowledgment already showed there (the responses
            // inferred since keep their order).
            let (mut inferred, mut claimed) = (None, 0);
            self.corr.request_gaps.retain(|g| {
                let same = g.unseen_from == Some(at);
                if same {
                    (inferred, claimed) = (g.inferred, g.claimed);
                }
                !same
            });
            if self.corr.request_gaps.len() >= MAX_REQUEST_GAPS {
                self.corr.request_gaps.pop_front();
            }
            self.corr.request_gaps.push_back(RequestGap {
                lost: RequestLost {
                    frame: self.loc.frame,
                    bytes: len,
                },
                last_request: self.corr.last_request_head,
                next_request: None,
                max_ids: i32::try_from(len / 12 + 1).unwrap_or(i32::MAX),
                inferred,
                claimed,
                // Unbounded: a request it took the start of may end in bytes after it.
                room: u64::MAX,
                unseen_from: None,
            });
        }
        let what = match effect {
            GapEffect::InsideSkippedFrame => {
                "inside a frame that is not decoded; nothing of interest lost"
            }
            GapEffect::KeptFrameLost => {
                "inside a frame being decoded, which is lost; framing continues after it"
            }
            GapEffect::HeadLost => {
                "inside the header of a frame, which is lost; framing continues after it"
            }
            GapEffect::Resync => "over a frame boundary; looking for the next frame",
            GapEffect::AnsweredFrameTail => {
                "the tail of a frame answered before it came; framing continues after it"
            }
        };
        let mut a = self.with_current(Anomaly::new(
            AnomalyKind::Gap,
            match self.missing {
                Missing::NotKept => format!(
                    "{len} bytes at stream offset {at} were captured but not kept while the \
                     connection was being recognised as Kafka (the first {PROBE_BUFFER_LIMIT} \
                     bytes of each direction are held for that), {what}"
                ),
                Missing::Gap => {
                    format!("{len} bytes at stream offset {at} were not captured, {what}")
                }
                Missing::Cut | Missing::HeldCut => format!(
                    "{len} bytes at stream offset {at} were cut off by the capture's snapshot \
                     length (capture with `tcpdump -s 0` to keep whole packets), {what}"
                ),
                Missing::FileEnd => format!(
                    "{len} bytes at stream offset {at} are missing: the file ends inside the \
                     packet that carried them (the capture was cut while being written), {what}"
                ),
                Missing::GivenUp { memory } => format!(
                    "{len} bytes at stream offset {at} had not arrived when the bytes held out \
                     of order after them reached {}, and are taken as lost, {what}",
                    if memory {
                        "the memory limit".to_string()
                    } else {
                        format!("{} MiB", MAX_OUT_OF_ORDER_BYTES >> 20)
                    }
                ),
            },
        ));
        a.bytes = Some(len);
        a.stream_offset = Some(at);
        a.harmless = effect == GapEffect::InsideSkippedFrame;
        a.beyond_frame = effect == GapEffect::Resync;
        self.anomaly(a);
        if self.missing == (Missing::GivenUp { memory: true }) {
            self.memory_limit(
                Holding::OutOfOrder,
                format!(
                    "out-of-order bytes held on this connection were released at stream offset \
                     {at}: the {len} bytes missing before them are taken as lost"
                ),
            );
        }
    }

    fn overran(&mut self) -> usize {
        std::mem::take(&mut self.overran)
    }

    fn on_realign(&mut self, _role: Role, offset: u64, back: u32) {
        let (bytes, begin) = if back == 1 {
            (
                "a byte".to_string(),
                "its last byte, read as its trailing_bytes, begins",
            )
        } else {
            (
                format!("{back} bytes"),
                "its last ones, read as its trailing_bytes, begin",
            )
        };
        let mut a = Anomaly::new(
            AnomalyKind::Resync,
            format!(
                "the response that ended at stream offset {} was {bytes} shorter than its \
                 size prefix said: {begin} the next response, which answers a request \
                 waiting; framing went back to stream offset {offset} (a damaged size prefix)",
                offset + u64::from(back)
            ),
        );
        a.bytes = Some(u64::from(back));
        a.stream_offset = Some(offset);
        self.anomaly(a);
    }

    fn on_resync(&mut self, _role: Role, offset: u64, skipped: u64) {
        let mut a = Anomaly::new(
            AnomalyKind::Resync,
            format!("framing resumed at stream offset {offset} after passing over {skipped} bytes that start no plausible frame"),
        );
        a.bytes = Some(skipped);
        a.stream_offset = Some(offset);
        self.anomaly(a);
    }

    fn on_unresolved(&mut self, role: Role, end: u64, skipped: u64) {
        let why = if role == Role::Responses && self.requests_seen && self.corr.pending.len() == 0 {
            " (with no request of this connection waiting, a response start cannot be told from \
             other bytes)"
        } else {
            ""
        };
        let mut a = Anomaly::new(
            AnomalyKind::NoFrameFound,
            format!(
                "{} at stream offset {end} while framing looked for the next \
                 frame: {skipped} captured bytes passed over start no plausible frame{why}; \
                 messages in them were not decoded",
                self.ended()
            ),
        );
        a.bytes = Some(skipped);
        a.stream_offset = Some(end);
        self.anomaly(a);
    }

    fn on_walk(&mut self, role: Role, bytes: &[u8]) {
        self.walk_bytes(role, bytes);
    }

    fn on_skip_truncated(&mut self, role: Role, _offset: u64, _size: u32) {
        // Counted as a walked or kept frame cut by the stream's end is (a frame cut short and
        // held for its end is counted when written, by `flush_partial`).
        if self.corr.partial[self.dir.index()].is_none() {
            self.count(role, false);
        }
    }

    fn on_walk_truncated(&mut self, role: Role, offset: u64, size: u32, seen: u32) {
        if self.corr.walks[self.dir.index()].is_none() {
            return;
        }
        // The fields its bytes held, written before the anomaly (as a kept frame's).
        let _ = self.walk_partial(role, size, PartialAt::StreamEnd);
        self.corr.walks[self.dir.index()] = None;
        let mut a = self.truncated(offset, size, size - seen, "");
        a.request_frame = self.request_frame_of_current();
        self.anomaly(a);
    }

    fn on_truncated(&mut self, role: Role, offset: u64, size: u32, have: &[u8]) {
        let unknown = self.corr.current[self.dir.index()].is_some_and(|c| !c.api_known);
        let what = if unknown {
            &format!(
                " (a response whose request was not captured, kept in case it was {})",
                inferable()
            )
        } else {
            ""
        };
        self.partial(role, size, have, PartialAt::StreamEnd);
        let missing = size - have.len() as u32;
        let a = self.truncated(offset, size, missing, what).with_data(have);
        self.anomaly(a);
    }

    fn probe(&mut self, role: Role, bytes: &[u8], at: ProbeAt) -> Probe {
        self.candidate(role, bytes, at)
    }

    fn cut_frame_starts(&mut self, role: Role, bytes: &[u8], _segment_len: u64) -> bool {
        // Only a snapshot-length cut (of the packet at hand, or of one held out of order): a
        // loss's hole that happens to end where a size prefix says proves nothing (a property
        // test found a response decoded from shifted bytes so). The frame's head must be
        // plausible as at any frame start (a request's API, version, client id and correlation
        // id; a response's pending correlation id).
        if !matches!(
            self.missing,
            Missing::Cut | Missing::HeldCut | Missing::FileEnd
        ) {
            return false;
        }
        match self.plausible(role, bytes, self.corr.last_request, false) {
            Probe::Yes => true,
            // A request cut inside its client id: what was captured of it must be plausible,
            // and its correlation id follow the last request's (the size prefix ending where
            // the cut ends is the rest of the evidence).
            // At least 8 bytes of the client id: a cut right after its length proves nothing.
            Probe::NeedMore if role == Role::Requests && bytes.len() >= 14 + 8 => {
                let corr = i32::from_be_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
                crate::kafka::header::probe_request_cut(bytes, self.shared.max_frame_size)
                    == Probe::Yes
                    && self
                        .corr
                        .last_request
                        .is_none_or(|last| CORRELATION_WINDOW.contains(&corr.wrapping_sub(last)))
            }
            _ => false,
        }
    }
}

/// What a frame decoded in part holds, for [`Handler::partial_record`].
pub(super) struct PartialParts {
    pub(super) header_version: u8,
    /// A request's client id (`Some(None)`: null), `None` for a response.
    pub(super) client_id: Option<Option<crate::kafka::names::Name>>,
    pub(super) tags: Vec<crate::kafka::primitives::TaggedField>,
    /// The fields decoded.
    pub(super) body: Body,
    /// The field path decoding stopped in.
    pub(super) path: String,
    /// Bytes of the frame captured (after its size prefix).
    pub(super) captured: u32,
}

/// The `frame_lost` anomaly of a frame decoded in part whose end a gap took, or that the
/// connection's end cut (no skipped frame's end reports it).
fn partial_lost(m: &KafkaMessage) -> Anomaly {
    let side = match m.message {
        MessageKind::Request => "request",
        MessageKind::Response => "response",
    };
    let mut a = Anomaly::new(
        AnomalyKind::FrameLost,
        format!(
            "{} {side} (correlation_id {}, {} bytes) was decoded only in part: {} bytes of \
             it were captured (its record says \"truncated\": true)",
            m.api_name,
            m.correlation_id,
            m.size,
            m.captured_bytes.unwrap_or(0)
        ),
    );
    a.api_key = Some(m.api_key);
    a.api_version = Some(m.api_version);
    a.correlation_id = Some(m.correlation_id);
    a.bytes = Some(u64::from(m.size));
    a.request_frame = m.request_frame;
    a
}
