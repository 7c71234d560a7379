//! One TCP connection seen as Kafka: which side is the broker, framing of both directions,
//! request/response correlation, and decoding of WriteTxnMarkers frames into records.
//!
//! Input: per direction, in-order bytes and gaps from TCP reassembly, each with the
//! [`Location`] of the packet that delivered them.
//! Output: [`Record`]s pushed to a `Vec`: WriteTxnMarkers requests and responses (responses
//! paired with their request by correlation id, with the latency), and anomalies.
//!
//! Kafka is recognised by port (9092 and `--port`), by a port where Kafka was already found,
//! or by the first bytes of a direction looking like a request (see
//! [`super::header::probe_request`]). A response names no API: its `(api_key, api_version)` come
//! from the pending request with the same correlation id on this connection (Kafka answers in
//! order on a connection, so pending requests are a queue; earlier entries that a response
//! passes over never got an answer).

use super::api;
use super::apis::Body;
use super::apis::{self, Decoder};
use super::event::{Event, KafkaMessage, MessageKind, Record, RecordOut};
use super::framing::{
    Decision, FrameHandler, Framer, GapEffect, ProbeAt, Role, RESYNC_BUFFER_LIMIT,
};
use super::header::{
    decode_request_header, decode_response_header, detect_request, probe_request, Probe,
};
use super::primitives::{Budget, DecodeError};
use crate::flow::Syn;
use crate::vocab::{Anomaly, AnomalyKind, Direction, Location, Timestamp};
use std::collections::{HashSet, VecDeque};

/// Most requests remembered per connection while they wait for a response; the oldest is
/// forgotten beyond this (a WriteTxnMarkers request so forgotten is reported as `no_response`).
pub const MAX_PENDING_PER_CONNECTION: usize = 4096;

/// Responses without a captured request reported one by one per connection; past them, the
/// rest are counted and reported together when the connection ends (a capture of the response
/// direction only would otherwise report every Produce and Fetch response, with its bytes).
pub const MAX_UNPAIRED_REPORTS_PER_CONNECTION: u32 = 8;

/// Largest response (bytes after the size prefix) whose request was not seen that is held to
/// try decoding it as WriteTxnMarkers (64 KiB; WriteTxnMarkers responses are far smaller).
pub const INFER_LIMIT: u32 = 64 * 1024;

/// How far a request's correlation id may lie from the latest one known to be real on the same
/// connection for a resynchronisation candidate to be believed: clients count up by one, a gap
/// may hide some requests (up to 10,000 ahead), and a response may be seen before its request
/// is framed (up to 256 behind).
pub const CORRELATION_WINDOW: std::ops::RangeInclusive<i32> = -256..=10_000;

/// Most bytes of a direction held while deciding whether a connection on an unknown port is
/// Kafka.
pub const PROBE_BUFFER_LIMIT: usize = 4096;

/// Settings and knowledge shared by all connections of a run.
#[derive(Debug, Clone)]
pub struct Shared {
    /// Ports always taken as Kafka broker ports (9092 and `--port`).
    pub kafka_ports: HashSet<u16>,
    /// Broker ports where Kafka was recognised by content during this run.
    pub detected_ports: HashSet<u16>,
    /// Largest plausible frame size in bytes (`--max-frame-size`).
    pub max_frame_size: u32,
    /// Frames framed so far, by kind.
    pub counts: FrameCounts,
    /// `--all-apis`: a record for every Kafka message of every API, not only WriteTxnMarkers.
    pub all_apis: bool,
    /// WriteTxnMarkers records keep their frame's bytes (`--format tree`).
    pub keep_frames: bool,
}

/// Kafka frames framed during a run, of every API (not only WriteTxnMarkers).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrameCounts {
    /// Complete request frames, by API key.
    pub requests: std::collections::BTreeMap<i16, u64>,
    /// Complete response frames paired with a request, by the request's API key.
    pub responses: std::collections::BTreeMap<i16, u64>,
    /// Complete response frames whose request was not seen.
    pub unpaired_responses: u64,
    /// Latencies of paired exchanges (microseconds), by API key.
    pub latencies: std::collections::BTreeMap<i16, LatencySample>,
}

/// Latencies of one API's exchanges, in microseconds: the count and maximum exactly, and a
/// uniform sample of at most [`LatencySample::CAPACITY`] values for percentiles (reservoir
/// sampling with a fixed seed, so runs repeat).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LatencySample {
    /// Exchanges seen.
    pub count: u64,
    /// The largest latency seen.
    pub max: i64,
    /// The sample.
    pub values: Vec<i64>,
    rng: u64,
}

impl LatencySample {
    /// Most values kept for percentiles.
    pub const CAPACITY: usize = 10_000;

    /// Adds one latency.
    pub fn add(&mut self, us: i64) {
        if self.count == 0 || us > self.max {
            self.max = us;
        }
        self.count += 1;
        if self.values.len() < Self::CAPACITY {
            self.values.push(us);
            return;
        }
        // xorshift64: deterministic, good enough to pick a slot.
        self.rng = if self.rng == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            self.rng
        };
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let slot = self.rng % self.count;
        if (slot as usize) < Self::CAPACITY {
            self.values[slot as usize] = us;
        }
    }

    /// The `p`-th percentile (0 to 100) of the sample, nearest rank; `None` when empty.
    pub fn percentile(&self, p: f64) -> Option<i64> {
        if self.values.is_empty() {
            return None;
        }
        let mut v = self.values.clone();
        v.sort_unstable();
        let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
        Some(v[rank.clamp(1, v.len()) - 1])
    }
}

impl Shared {
    /// Whether `port` is known as a Kafka broker port.
    pub fn is_kafka_port(&self, port: u16) -> bool {
        self.kafka_ports.contains(&port) || self.detected_ports.contains(&port)
    }
}

/// A request waiting for its response.
#[derive(Debug, Clone, Copy)]
struct Pending {
    correlation_id: i32,
    api_key: i16,
    api_version: i16,
    frame: u64,
    ts: Timestamp,
    /// A WriteTxnMarkers request that was not decoded (bytes lost, or malformed): its frame
    /// holds an anomaly, not a request record.
    not_decoded: bool,
    /// [`PendingQueue::response_lost`] when the request was queued: more since means bytes of
    /// the response direction were lost while it waited.
    response_lost: u64,
}

/// Requests waiting for a response, in order, with an index of their correlation ids so that
/// probing a candidate response start costs one lookup.
#[derive(Debug, Default)]
struct PendingQueue {
    queue: VecDeque<Pending>,
    ids: std::collections::HashMap<i32, u32>,
    /// Bytes lost in the response direction where whole responses could have been (gaps
    /// over a frame boundary, responses lost with their header), in all.
    response_lost: u64,
    /// Frame number where the latest such loss was reported.
    last_response_gap: u64,
}

impl PendingQueue {
    fn push_back(&mut self, p: Pending) {
        *self.ids.entry(p.correlation_id).or_default() += 1;
        self.queue.push_back(p);
    }

    fn forget(&mut self, p: &Pending) {
        if let Some(n) = self.ids.get_mut(&p.correlation_id) {
            *n -= 1;
            if *n == 0 {
                self.ids.remove(&p.correlation_id);
            }
        }
    }

    fn pop_front(&mut self) -> Option<Pending> {
        let p = self.queue.pop_front()?;
        self.forget(&p);
        Some(p)
    }

    fn contains(&self, correlation_id: i32) -> bool {
        self.ids.contains_key(&correlation_id)
    }

    fn position(&self, correlation_id: i32) -> Option<usize> {
        if !self.contains(correlation_id) {
            return None;
        }
        self.queue
            .iter()
            .position(|p| p.correlation_id == correlation_id)
    }

    fn len(&self) -> usize {
        self.queue.len()
    }

    /// Notes a loss in the response direction (reported at `frame`, `bytes` long) that may
    /// have taken the responses of the requests waiting now.
    fn response_gap(&mut self, frame: u64, bytes: u64) {
        self.response_lost += bytes;
        self.last_response_gap = frame;
    }

    /// Why `p` may have had a response the capture did not hold, for its `no_response`: the
    /// bytes lost in gaps reported while it waited, and the frame of the last of them.
    fn lost_since(&self, p: &Pending) -> Option<(u64, u64)> {
        let bytes = self.response_lost - p.response_lost;
        (bytes > 0).then_some((bytes, self.last_response_gap))
    }
}

/// A frame in progress, as learned from its head.
#[derive(Debug, Clone, Copy)]
struct Current {
    api_key: i16,
    api_version: i16,
    correlation_id: i32,
    /// For a response: its request, if one was pending.
    request: Option<Pending>,
    /// Whether `api_key` and `api_version` are known: always for a request, for a response
    /// only when its request was pending (otherwise they are -1 placeholders).
    api_known: bool,
}

/// Kafka state of a connection whose broker side is known.
#[derive(Debug)]
struct Session {
    /// Framing of each direction, from its first byte.
    framers: [Option<Framer>; 2],
    /// What the framers' handlers share.
    corr: Correlation,
}

/// A connection's request/response correlation and what framing learns of it: the state the
/// frame handlers of both directions share.
#[derive(Debug)]
struct Correlation {
    /// The direction that carries requests.
    requests_dir: Direction,
    /// The frame in progress in each direction, as learned from its head.
    current: [Option<Current>; 2],
    /// Requests waiting for their response.
    pending: PendingQueue,
    /// Versions of the decoded APIs' requests seen on this connection: bit `v` of an API's
    /// entry for version `v` (response inference names the version by them).
    versions_seen: VersionsSeen,
    /// Correlation id of the latest request known to be real on this connection: one that got
    /// its response, or a WriteTxnMarkers request that decoded. (A frame found by
    /// resynchronisation could be a false one; its correlation id must not vouch for others.)
    last_request: Option<i32>,
    /// Responses without a captured request: reported so far, and counted past the cap.
    unpaired: Unpaired,
}

/// Versions of each decoded API's requests seen on a connection, as bit sets (bit `v` for
/// version `v`; decoders know versions below 32).
#[derive(Debug, Default)]
struct VersionsSeen(Vec<(i16, u32)>);

impl VersionsSeen {
    fn add(&mut self, api_key: i16, version: i16) {
        let bit = 1u32.checked_shl(version as u32).unwrap_or(0);
        match self.0.iter_mut().find(|(k, _)| *k == api_key) {
            Some((_, bits)) => *bits |= bit,
            None => self.0.push((api_key, bit)),
        }
    }

    fn of(&self, api_key: i16) -> u32 {
        self.0
            .iter()
            .find(|(k, _)| *k == api_key)
            .map_or(0, |(_, bits)| *bits)
    }
}

/// Whether lost frames and unanswered requests of `api_key` are worth an anomaly: those of
/// the APIs written by default (see [`apis::Decoder::shown_by_default`]).
fn watched(api_key: i16) -> bool {
    apis::decoder(api_key).is_some_and(|d| d.shown_by_default)
}

/// The APIs whose responses may be inferred without their request, e.g. `"WriteTxnMarkers"`.
fn inferable() -> String {
    let names: Vec<&str> = apis::all()
        .filter(|d| d.infer.is_some())
        .map(|d| name_of(d.api_key))
        .collect();
    names.join(" or ")
}

/// The API's name as Kafka spells it, or `"unknown API"`.
fn name_of(api_key: i16) -> &'static str {
    api::api_name(api_key).unwrap_or("unknown API")
}

/// Responses without a captured request on one connection.
#[derive(Debug, Default)]
struct Unpaired {
    /// Reported one by one so far.
    reported: u32,
    /// Counted, not reported, past [`MAX_UNPAIRED_REPORTS_PER_CONNECTION`].
    more: u64,
    /// Their bytes.
    more_bytes: u64,
}

#[derive(Debug)]
enum State {
    /// Not yet known to be Kafka: the first bytes of each direction are held for probing.
    Probing(Box<Probing>),
    /// Kafka, with requests in this direction, and no byte seen yet (a half-open connection
    /// costs no session).
    Ready(Direction),
    Kafka(Box<Session>),
    NotKafka,
}

/// Detection state of a connection on a port not known as Kafka.
#[derive(Debug)]
struct Probing {
    ports: [u16; 2],
    /// The direction that carries requests if this is Kafka, when the handshake told.
    client_dir: Option<Direction>,
    bufs: [Vec<u8>; 2],
    /// What arrived, in capture order, to replay once decided: direction, delivering packet,
    /// and bytes held in `bufs` or (for a gap, or bytes beyond the probe limit) lost.
    arrivals: Vec<(Direction, Location, Held)>,
    /// Verdict of [`detect_request`] on each direction's first bytes, once decided.
    verdict: [Option<bool>; 2],
    /// Whether each direction was seen from its SYN.
    syn: [bool; 2],
}

/// Most arrivals remembered while probing; reaching it forces a decision on the evidence at
/// hand.
const MAX_ARRIVALS: usize = 1024;

impl Probing {
    /// Notes `len` bytes of `dir` that were not held (a gap, or past the probe buffer), merged
    /// with a loss just before it in the same direction.
    fn lost(&mut self, dir: Direction, loc: &Location, len: u64) {
        if let Some((d, _, Held::Lost(n))) = self.arrivals.last_mut() {
            if *d == dir {
                *n += len;
                return;
            }
        }
        self.arrivals.push((dir, *loc, Held::Lost(len)));
    }
}

#[derive(Debug, Clone, Copy)]
enum Held {
    /// This many bytes, the next ones of the direction's buffer.
    Data(usize),
    /// This many bytes were never captured.
    Lost(u64),
    /// This many bytes were captured past the probing buffer, and not kept.
    NotKept(u64),
}

/// Why bytes of a direction are missing from what framing sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Never captured: a hole in the stream.
    Gap,
    /// Cut from the packet at hand by the capture's snapshot length (that packet carried them
    /// on the wire).
    Cut,
    /// Captured, but past the first [`PROBE_BUFFER_LIMIT`] bytes held while the connection was
    /// being recognised as Kafka, and not kept.
    NotKept,
}

/// The Kafka view of one TCP connection. Directions are numbered from the connection's first
/// packet: 0 from its sender to its receiver, 1 back.
#[derive(Debug)]
pub struct KafkaConn {
    state: State,
}

impl KafkaConn {
    /// A connection between `ports[0]` (the first packet's sender) and `ports[1]`, whose first
    /// packet carried the SYN flags `opening`: a SYN names its sender the client, a SYN-ACK its
    /// receiver; without a SYN the capture began after the handshake.
    pub fn new(ports: [u16; 2], opening: Syn, shared: &Shared) -> Self {
        let client_dir = match opening {
            Syn::Syn => Some(Direction::Forward),
            Syn::SynAck => Some(Direction::Back),
            Syn::No => None,
        };
        let k0 = shared.is_kafka_port(ports[0]);
        let k1 = shared.is_kafka_port(ports[1]);
        let requests_dir = match (k0, k1) {
            (false, true) => Some(Direction::Forward),
            (true, false) => Some(Direction::Back),
            (true, true) => client_dir.or(Some(if ports[1] <= ports[0] {
                Direction::Forward
            } else {
                Direction::Back
            })),
            (false, false) => None,
        };
        let state = match requests_dir {
            Some(d) => State::Ready(d),
            None => State::Probing(Box::new(Probing {
                ports,
                client_dir,
                bufs: [Vec::new(), Vec::new()],
                arrivals: Vec::new(),
                verdict: [None, None],
                syn: [false, false],
            })),
        };
        KafkaConn { state }
    }

    /// Whether this connection was found not to be Kafka (its bytes need no reassembly).
    pub fn is_ignored(&self) -> bool {
        matches!(self.state, State::NotKafka)
    }

    /// In-order bytes of direction `dir`. `syn_seen` says the direction was seen from its SYN
    /// (so its first byte starts a frame). `loc` is the delivering packet, with the stream and
    /// the endpoints of this direction (sender first).
    pub fn data(
        &mut self,
        dir: Direction,
        syn_seen: bool,
        data: &[u8],
        loc: &Location,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
    ) {
        if let State::Ready(r) = self.state {
            self.state = State::Kafka(Box::new(Session::new(r)));
        }
        match &mut self.state {
            State::NotKafka | State::Ready(_) => {}
            State::Kafka(s) => s.data(dir, syn_seen, data, loc, shared, out),
            State::Probing(p) => {
                p.syn[dir.index()] |= syn_seen;
                let room = PROBE_BUFFER_LIMIT.saturating_sub(p.bufs[dir.index()].len());
                let take = data.len().min(room);
                p.bufs[dir.index()].extend_from_slice(&data[..take]);
                if take > 0 {
                    p.arrivals.push((dir, *loc, Held::Data(take)));
                }
                if take < data.len() {
                    p.arrivals
                        .push((dir, *loc, Held::NotKept((data.len() - take) as u64)));
                }
                if p.verdict[dir.index()].is_none() {
                    p.verdict[dir.index()] =
                        match detect_request(&p.bufs[dir.index()], shared.max_frame_size) {
                            Probe::Yes => Some(true),
                            Probe::No => Some(false),
                            Probe::NeedMore if p.bufs[dir.index()].len() >= PROBE_BUFFER_LIMIT => {
                                Some(false)
                            }
                            Probe::NeedMore => None,
                        };
                }
                self.decide(loc, dir, false, shared, out);
            }
        }
    }

    /// Consumes `len` bytes of direction `dir` that fall inside a frame being skipped, as
    /// [`KafkaConn::data`] would, and says whether it did; `false` (nothing changed) in every
    /// other case, for the caller to hand the bytes to [`KafkaConn::data`].
    #[inline]
    pub fn skip_inside(&mut self, dir: Direction, len: usize) -> bool {
        match &mut self.state {
            State::Kafka(s) => s.framers[dir.index()]
                .as_mut()
                .is_some_and(|f| f.skip_inside(len)),
            _ => false,
        }
    }

    /// Settles a probing connection when the evidence allows: the requests direction is the
    /// client's when the handshake was seen; otherwise the one whose first bytes look like a
    /// request, and when both do (a response can look like a request), the one towards the
    /// lower port (brokers listen on low ports, clients use ephemeral ones).
    ///
    /// `last` says no more bytes will come (the connection ended): a direction that looks like
    /// requests is then taken whatever its port.
    fn decide(
        &mut self,
        loc: &Location,
        dir: Direction,
        last: bool,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
    ) {
        let State::Probing(p) = &mut self.state else {
            return;
        };
        let dest_port = |d: Direction| p.ports[d.other().index()];
        let forced = last || p.arrivals.len() >= MAX_ARRIVALS;
        let full = |d: Direction| p.bufs[d.index()].len() >= PROBE_BUFFER_LIMIT;
        let requests_dir = match (p.client_dir, p.verdict) {
            (Some(c), v) => match v[c.index()] {
                Some(true) => Some(c),
                Some(false) => {
                    self.state = State::NotKafka;
                    return;
                }
                None if forced => {
                    self.state = State::NotKafka;
                    return;
                }
                None => None,
            },
            (None, [Some(true), Some(true)]) => Some(
                if dest_port(Direction::Forward) <= dest_port(Direction::Back) {
                    Direction::Forward
                } else {
                    Direction::Back
                },
            ),
            (None, [Some(true), Some(false)]) => Some(Direction::Forward),
            (None, [Some(false), Some(true)]) => Some(Direction::Back),
            (None, [Some(false), Some(false)]) => {
                self.state = State::NotKafka;
                return;
            }
            (None, v) => {
                // One direction looks like requests, the other has not told yet: decide now
                // only when this one runs towards the lower port, or holds all it may.
                match Direction::BOTH
                    .into_iter()
                    .find(|d| v[d.index()] == Some(true))
                {
                    Some(d) if forced || dest_port(d) < p.ports[d.index()] || full(d) => Some(d),
                    None if forced => {
                        self.state = State::NotKafka;
                        return;
                    }
                    _ => None,
                }
            }
        };
        let Some(r) = requests_dir else { return };
        let State::Probing(p) = std::mem::replace(&mut self.state, State::NotKafka) else {
            return;
        };
        let mut s = Box::new(Session::new(r));
        // The broker receives the requests: remember its port.
        if let Some((_, sender, receiver)) = loc.stream {
            let broker = if dir == r { receiver } else { sender };
            shared.detected_ports.insert(broker.port);
        }
        // Replay in capture order. The request direction starts where the probe accepted it;
        // the response direction is trusted only when it was seen from its SYN.
        let mut at = [0usize; 2];
        for &(d, ref l, held) in &p.arrivals {
            let (trusted, i) = (d == r || p.syn[d.index()], d.index());
            match held {
                Held::Data(n) => {
                    let bytes = &p.bufs[i][at[i]..at[i] + n];
                    at[i] += n;
                    s.data(d, trusted, bytes, l, shared, out);
                }
                Held::Lost(n) => s.gap(d, trusted, n, Missing::Gap, l, shared, out),
                Held::NotKept(n) => s.gap(d, trusted, n, Missing::NotKept, l, shared, out),
            }
        }
        self.state = State::Kafka(s);
    }

    /// A retransmission in the direction of `loc` carried `len` bytes at stream offset `at`
    /// that differ from the copy captured first (which was kept).
    pub fn overlap_mismatch(&mut self, at: u64, len: u64, loc: &Location, out: &mut dyn RecordOut) {
        if matches!(self.state, State::NotKafka) {
            return;
        }
        let mut a = Anomaly::new(
            AnomalyKind::OverlapMismatch,
            format!(
                "a retransmitted segment differs from the copy captured first in {len} bytes, the first at stream offset {at}; the first copy was kept"
            ),
        );
        a.stream_offset = Some(at);
        a.bytes = Some(len);
        out.push(Record {
            loc: *loc,
            event: Event::Anomaly(Box::new(a)),
        });
    }

    /// `len` bytes of direction `dir` are missing, for the reason `why` (never captured, or cut
    /// from the packet at `loc` by the snapshot length).
    #[allow(clippy::too_many_arguments)]
    pub fn gap(
        &mut self,
        dir: Direction,
        syn_seen: bool,
        len: u64,
        why: Missing,
        loc: &Location,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
    ) {
        if let State::Ready(r) = self.state {
            self.state = State::Kafka(Box::new(Session::new(r)));
        }
        match &mut self.state {
            State::Kafka(s) => s.gap(dir, syn_seen, len, why, loc, shared, out),
            State::Probing(p) => {
                if p.verdict[dir.index()].is_none() && p.bufs[dir.index()].is_empty() {
                    // Nothing seen yet this way: probing starts after the hole.
                    return;
                }
                if p.verdict[dir.index()].is_none() {
                    p.verdict[dir.index()] = Some(false);
                }
                p.lost(dir, loc, len);
                self.decide(loc, dir, false, shared, out);
            }
            State::NotKafka | State::Ready(_) => {}
        }
    }

    /// The connection ended (FIN or RST in both directions, or the end of the capture, as
    /// `why` says). `locs` gives, per direction, the location to report from; `seen`, whether
    /// any packet of that direction was captured.
    pub fn finish(
        &mut self,
        locs: [&Location; 2],
        seen: [bool; 2],
        why: &str,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
    ) {
        if let State::Probing(p) = &self.state {
            if let Some(d) = Direction::BOTH
                .into_iter()
                .find(|d| p.verdict[d.index()] == Some(true))
            {
                self.decide(locs[d.index()], d, true, shared, out);
            }
        }
        if let State::Kafka(s) = &mut self.state {
            s.finish(locs, seen, why, shared, out);
        }
    }
}

impl Session {
    fn new(requests_dir: Direction) -> Self {
        Session {
            framers: [None, None],
            corr: Correlation {
                requests_dir,
                current: [None, None],
                pending: PendingQueue::default(),
                versions_seen: VersionsSeen::default(),
                last_request: None,
                unpaired: Unpaired::default(),
            },
        }
    }

    fn role(&self, dir: Direction) -> Role {
        if dir == self.corr.requests_dir {
            Role::Requests
        } else {
            Role::Responses
        }
    }

    /// The framer of `dir`, if created, and a handler for the packet at `loc`.
    fn split<'a>(
        &'a mut self,
        dir: Direction,
        loc: &'a Location,
        shared: &'a mut Shared,
        out: &'a mut dyn RecordOut,
    ) -> (Option<&'a mut Framer>, Handler<'a>) {
        let Session { framers, corr } = self;
        let requests_seen = framers[corr.requests_dir.index()].is_some();
        let h = Handler {
            requests_seen,
            corr,
            dir,
            shared,
            loc,
            out,
            gap_end: None,
            missing: Missing::Gap,
            replaying: false,
        };
        (framers[dir.index()].as_mut(), h)
    }

    fn framer(&mut self, dir: Direction, syn_seen: bool, shared: &Shared) -> &mut Framer {
        let role = self.role(dir);
        self.framers[dir.index()].get_or_insert_with(|| {
            if syn_seen {
                Framer::new(role, shared.max_frame_size)
            } else {
                Framer::new_mid_stream(role, shared.max_frame_size)
            }
        })
    }

    /// Runs `f` with direction `dir`'s framer (created on first use) and a handler for the
    /// packet at `loc`.
    #[allow(clippy::too_many_arguments)]
    fn with_framer(
        &mut self,
        dir: Direction,
        syn_seen: bool,
        loc: &Location,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
        f: impl FnOnce(&mut Framer, &mut Handler<'_>),
    ) {
        self.framer(dir, syn_seen, shared);
        if let (Some(framer), mut h) = self.split(dir, loc, shared, out) {
            f(framer, &mut h);
        }
    }

    fn data(
        &mut self,
        dir: Direction,
        syn_seen: bool,
        data: &[u8],
        loc: &Location,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
    ) {
        self.with_framer(dir, syn_seen, loc, shared, out, |f, h| f.push(data, h));
    }

    #[allow(clippy::too_many_arguments)]
    fn gap(
        &mut self,
        dir: Direction,
        syn_seen: bool,
        len: u64,
        why: Missing,
        loc: &Location,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
    ) {
        self.with_framer(dir, syn_seen, loc, shared, out, |f, h| {
            h.missing = why;
            f.gap(len, h)
        });
    }

    fn finish(
        &mut self,
        locs: [&Location; 2],
        seen: [bool; 2],
        why: &str,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
    ) {
        for dir in Direction::BOTH {
            if let (Some(f), mut h) = self.split(dir, locs[dir.index()], shared, out) {
                f.finish(&mut h);
            }
        }
        let Session { framers, corr } = self;
        let Correlation {
            pending,
            requests_dir,
            unpaired,
            ..
        } = corr;
        if unpaired.more > 0 {
            let mut a =
                Anomaly::new(
                    AnomalyKind::ResponseWithoutRequest,
                    format!(
                    "{} more responses ({} bytes) on this connection had no captured request and \
                     did not decode as {}; after the first {MAX_UNPAIRED_REPORTS_PER_CONNECTION} \
                     they are counted here, not reported one by one",
                    unpaired.more, unpaired.more_bytes, inferable()
                ),
                );
            a.bytes = Some(unpaired.more_bytes);
            out.push(Record {
                loc: *locs[requests_dir.other().index()],
                event: Event::Anomaly(Box::new(a)),
            });
        }
        let loc = locs[requests_dir.index()];
        // Nothing of the other direction at all: most often a capture filter that kept one
        // direction (`dst port 9092`), which the reader should hear of before blaming the
        // broker. Packets without data: the broker did answer the connection, with nothing.
        let responses = requests_dir.other();
        let why = if !seen[responses.index()] {
            format!(
                "{why}; no packet of the response direction was captured on this connection (a \
                 capture of one direction only, e.g. `dst port 9092`, holds no responses)"
            )
        } else if framers[responses.index()].is_none() {
            format!("{why}; the broker sent no data on this connection (only acknowledgments)")
        } else {
            why.to_string()
        };
        while let Some(p) = pending.pop_front() {
            if watched(p.api_key) {
                out.push(no_response(loc, &p, &why, pending.lost_since(&p)));
            }
        }
    }
}

/// `lost`: bytes of the response direction lost in gaps reported while the request waited,
/// and the frame of the last of them, from [`PendingQueue::lost_since`].
fn no_response(loc: &Location, p: &Pending, why: &str, lost: Option<(u64, u64)>) -> Record {
    let maybe = match lost {
        Some((bytes, frame)) => format!(
            "; {bytes} bytes of the response direction were missing in gaps reported while it \
             waited (the last at frame {frame}): the response may have been among them"
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
    Record {
        loc: *loc,
        event: Event::Anomaly(Box::new(a)),
    }
}

/// The framer's callbacks for one direction and one delivering packet.
struct Handler<'a> {
    /// Whether any byte (or gap) of this connection's request direction was captured.
    requests_seen: bool,
    /// The connection's correlation state.
    corr: &'a mut Correlation,
    /// The direction being framed.
    dir: Direction,
    /// The run's settings and counts.
    shared: &'a mut Shared,
    /// The packet at hand.
    loc: &'a Location,
    out: &'a mut dyn RecordOut,
    /// Stream offset where the latest gap reported through this handler ended: a frame that
    /// ends there is completed by the gap, at a packet that did not carry its end, so its
    /// latency is unknown.
    gap_end: Option<u64>,
    /// Why the bytes of the gap being reported are missing: for [`Missing::Cut`] the packet at
    /// hand carried them, so a frame the gap completes did end at this packet.
    missing: Missing,
    /// The framer is replaying bytes of earlier packets (its resynchronisation tail): frames
    /// completed meanwhile did not end at the packet at hand.
    replaying: bool,
}

impl Handler<'_> {
    /// Counts the frame in progress; `end_seen` says its last byte was captured, so that the
    /// packet at hand is when it ended (a response's latency is taken only then).
    fn count(&mut self, role: Role, end_seen: bool) {
        let Some(c) = self.corr.current[self.dir.index()] else {
            return;
        };
        match (role, c.request) {
            (Role::Requests, _) => *self.shared.counts.requests.entry(c.api_key).or_default() += 1,
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

    fn emit(&mut self, event: Event) {
        self.out.push(Record {
            loc: *self.loc,
            event,
        });
    }

    fn anomaly(&mut self, a: Anomaly) {
        self.emit(Event::Anomaly(Box::new(a)));
    }

    /// Whether a response of `bytes` bytes without a captured request is to be reported on its
    /// own (the first [`MAX_UNPAIRED_REPORTS_PER_CONNECTION`] of the connection); past them it
    /// is counted for the report at the end of the connection.
    /// Whether responses are framed blind: nothing of the request direction was captured and
    /// no request waits, so no correlation id can be expected.
    fn blind(&self) -> bool {
        !self.requests_seen && self.corr.pending.len() == 0
    }

    fn report_unpaired(&mut self, bytes: u64) -> bool {
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
    fn latency(&self, p: &Pending, end_seen: bool) -> Option<i64> {
        end_seen.then(|| self.loc.ts.micros_since(&p.ts))
    }

    fn with_current(&self, mut a: Anomaly) -> Anomaly {
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
    fn take_pending(&mut self, correlation_id: i32) -> Option<Pending> {
        let i = self.corr.pending.position(correlation_id)?;
        for _ in 0..i {
            let Some(p) = self.corr.pending.pop_front() else {
                break;
            };
            if watched(p.api_key) {
                let why = format!("a later response (correlation_id {correlation_id})");
                let rec = no_response(self.loc, &p, &why, self.corr.pending.lost_since(&p));
                self.out.push(rec);
            }
        }
        let found = self.corr.pending.pop_front();
        if let Some(p) = &found {
            self.confirm(p.correlation_id);
        }
        found
    }

    /// `--all-apis`: a record of another API's message, with its header fields and no body.
    fn header_only(&mut self, role: Role, c: &Current, size: u32, end_seen: bool) {
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
            request_not_decoded: false,
            inferred: false,
            unknown_tagged_fields: Vec::new(),
            body: Body::NotDecoded,
            frame: None,
        };
        self.emit(Event::Kafka(Box::new(m)));
    }

    /// Notes that the request with `correlation_id` was real.
    fn confirm(&mut self, correlation_id: i32) {
        let later = self
            .corr
            .last_request
            .is_none_or(|last| correlation_id.wrapping_sub(last) > 0);
        if later {
            self.corr.last_request = Some(correlation_id);
        }
    }

    fn push_pending(&mut self, c: &Current, not_decoded: bool) {
        self.push_pending_as(c.correlation_id, c.api_key, c.api_version, not_decoded);
    }

    /// Records a request of this frame as waiting for its response.
    fn push_pending_as(
        &mut self,
        correlation_id: i32,
        api_key: i16,
        api_version: i16,
        not_decoded: bool,
    ) {
        if self.corr.pending.len() >= MAX_PENDING_PER_CONNECTION {
            if let Some(p) = self.corr.pending.pop_front() {
                if watched(p.api_key) {
                    let why = "too many requests were pending";
                    let rec = no_response(self.loc, &p, why, self.corr.pending.lost_since(&p));
                    self.out.push(rec);
                }
            }
        }
        self.corr.pending.push_back(Pending {
            correlation_id,
            api_key,
            api_version,
            frame: self.loc.frame,
            ts: self.loc.ts,
            not_decoded,
            response_lost: self.corr.pending.response_lost,
        });
    }

    /// Marks the request just pushed as not decoded.
    fn last_not_decoded(&mut self) {
        if let Some(p) = self.corr.pending.queue.back_mut() {
            p.not_decoded = true;
        }
    }

    fn decode_failed(&mut self, what: &str, e: &DecodeError, frame: &[u8], body_start: usize) {
        let offset = (body_start + e.offset_in(frame.len() - body_start)) as u64;
        let mut a = self.with_current(Anomaly::new(
            AnomalyKind::from(e.kind),
            format!("{what} could not be decoded: {e} (frame offset {offset})"),
        ));
        let path = e.path();
        if !path.is_empty() {
            a.field = Some(path);
        }
        a.offset = Some(offset);
        a.bytes = Some(frame.len() as u64);
        let a = a.with_data(frame);
        self.anomaly(a);
    }

    /// The decoder that keeps and decodes frames of `api_key` in this run, if any.
    fn kept(&self, api_key: i16) -> Option<&'static Decoder> {
        apis::decoder(api_key).filter(|d| d.keeps(self.shared.all_apis))
    }

    /// A record of a decoded message of the frame in progress.
    fn message(
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
            request_not_decoded: false,
            inferred: false,
            unknown_tagged_fields: Vec::new(),
            body: Body::NotDecoded,
            frame: self.shared.keep_frames.then(|| frame.to_vec()),
        }
    }

    fn request_frame(&mut self, frame: &[u8]) {
        let Some(c) = self.corr.current[self.dir.index()] else {
            return;
        };
        let Some(d) = self.kept(c.api_key) else {
            return;
        };
        let name = name_of(c.api_key);
        let hv = api::request_header_version(c.api_key, c.api_version);
        let budget = Budget::default();
        let header = match decode_request_header(frame, hv, &budget) {
            Ok(h) => h,
            Err(e) => return self.decode_failed(&format!("{name} request header"), &e, frame, 0),
        };
        self.push_pending(&c, false);
        if !d.versions.contains(&c.api_version) {
            self.last_not_decoded();
            return self.unsupported(d, frame, MessageKind::Request);
        }
        self.corr.versions_seen.add(c.api_key, c.api_version);
        let body = &frame[header.len..];
        match (d.decode_request)(body, c.api_version, &budget) {
            Ok(b) => {
                self.confirm(c.correlation_id);
                let m = KafkaMessage {
                    client_id: Some(header.client_id),
                    unknown_tagged_fields: header.unknown_tagged_fields,
                    body: b,
                    ..self.message(&c, MessageKind::Request, hv, frame)
                };
                self.emit(Event::Kafka(Box::new(m)));
            }
            Err(e) => {
                self.last_not_decoded();
                self.decode_failed(&format!("{name} request body"), &e, frame, header.len)
            }
        }
    }

    fn response_frame(&mut self, frame: &[u8]) {
        let Some(c) = self.corr.current[self.dir.index()] else {
            return;
        };
        let Some(req) = c.request else {
            return self.infer_response(frame, c.correlation_id);
        };
        let Some(d) = self.kept(c.api_key) else {
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
        match (d.decode_response)(body, c.api_version, &budget) {
            Ok(b) => {
                let m = KafkaMessage {
                    request_frame: Some(req.frame),
                    latency_us: self.latency(&req, !self.replaying),
                    request_not_decoded: req.not_decoded,
                    unknown_tagged_fields: header.unknown_tagged_fields,
                    body: b,
                    ..self.message(&c, MessageKind::Response, hv, frame)
                };
                self.emit(Event::Kafka(Box::new(m)));
            }
            Err(e) => self.decode_failed(&format!("{name} response body"), &e, frame, header.len),
        }
    }

    /// A response whose request was not captured: decoded when exactly one layout of one API
    /// that supports inference (see [`apis::InferFn`]) decodes the whole frame; otherwise
    /// reported as `response_without_request`.
    fn infer_response(&mut self, frame: &[u8], correlation_id: i32) {
        let mut fits = Vec::new();
        let mut names = Vec::new();
        for d in apis::all() {
            if let Some(infer) = d.infer {
                names.push(name_of(d.api_key));
                let seen = self.corr.versions_seen.of(d.api_key);
                fits.extend(infer(frame, seen).into_iter().map(|i| (d.api_key, i)));
            }
        }
        if fits.len() == 1 {
            if let Some((api_key, i)) = fits.pop() {
                let c = Current {
                    api_key,
                    api_version: i.version,
                    correlation_id,
                    request: None,
                    api_known: true,
                };
                let m = KafkaMessage {
                    inferred: true,
                    unknown_tagged_fields: i.header.unknown_tagged_fields,
                    body: i.body,
                    ..self.message(&c, MessageKind::Response, i.header.header_version, frame)
                };
                return self.emit(Event::Kafka(Box::new(m)));
            }
        }
        let apis = names.join(" or ");
        let why = if fits.is_empty() {
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
        let a = a.with_data(frame);
        self.anomaly(a);
    }

    fn unsupported(&mut self, d: &Decoder, frame: &[u8], kind: MessageKind) {
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
        self.anomaly(a);
    }
}

impl FrameHandler for Handler<'_> {
    fn replaying(&mut self, on: bool) {
        self.replaying = on;
    }

    fn on_head(&mut self, role: Role, size: u32, head: &[u8]) -> Decision {
        match role {
            Role::Requests => {
                // The framer guarantees 8 head bytes for requests (minimum frame size 8).
                let api_key = i16::from_be_bytes([head[0], head[1]]);
                let api_version = i16::from_be_bytes([head[2], head[3]]);
                let correlation_id = i32::from_be_bytes([head[4], head[5], head[6], head[7]]);
                self.corr.current[self.dir.index()] = Some(Current {
                    api_key,
                    api_version,
                    correlation_id,
                    request: None,
                    api_known: true,
                });
                if self.kept(api_key).is_some() {
                    Decision::Keep
                } else {
                    Decision::Skip
                }
            }
            Role::Responses => {
                let correlation_id = i32::from_be_bytes([head[0], head[1], head[2], head[3]]);
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
                });
                match request {
                    Some(p) if self.kept(p.api_key).is_some() => Decision::Keep,
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

    fn on_skipped(&mut self, role: Role, offset: u64, size: u32, _head: &[u8], damaged: bool) {
        let end_seen = !self.replaying && self.gap_end != Some(offset + 4 + u64::from(size));
        self.count(role, end_seen);
        let Some(c) = self.corr.current[self.dir.index()].take() else {
            return;
        };
        if role == Role::Requests {
            let not_decoded = damaged && self.kept(c.api_key).is_some();
            self.push_pending(&c, not_decoded);
        }
        if self.shared.all_apis && !damaged && self.kept(c.api_key).is_none() {
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
        if damaged && (watched(c.api_key) || unpaired_response) {
            let what = match role {
                Role::Requests => format!("{} request", name_of(c.api_key)),
                Role::Responses if unpaired_response => format!(
                    "Response whose request was not captured (it may have been {})",
                    inferable()
                ),
                Role::Responses => format!("{} response", name_of(c.api_key)),
            };
            let mut a = Anomaly::new(
                AnomalyKind::FrameLost,
                format!(
                    "{what} (correlation_id {}, {size} bytes) was not decoded: part of it was \
                     never captured",
                    c.correlation_id
                ),
            );
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

    fn plausible_head(&mut self, role: Role, _size: u32, head: &[u8]) -> bool {
        match role {
            Role::Requests => {
                let key = i16::from_be_bytes([head[0], head[1]]);
                let version = i16::from_be_bytes([head[2], head[3]]);
                let corr = i32::from_be_bytes([head[4], head[5], head[6], head[7]]);
                let follows = self
                    .corr
                    .last_request
                    .is_none_or(|last| CORRELATION_WINDOW.contains(&corr.wrapping_sub(last)));
                api::api_info(key).is_some_and(|a| a.has_version(version)) && follows
            }
            Role::Responses => {
                let corr = i32::from_be_bytes([head[0], head[1], head[2], head[3]]);
                self.corr.pending.contains(corr) || (self.blind() && corr >= 0)
            }
        }
    }

    fn on_head_lost(&mut self, role: Role, size: u32, head: &[u8]) {
        let be16 =
            |i: usize| (head.len() >= i + 2).then(|| i16::from_be_bytes([head[i], head[i + 1]]));
        let be32 = |i: usize| {
            (head.len() >= i + 4)
                .then(|| i32::from_be_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]))
        };
        let mut a = Anomaly::new(AnomalyKind::FrameLost, String::new());
        a.bytes = Some(u64::from(size));
        let what = match role {
            Role::Requests => {
                a.api_key = be16(0);
                a.api_version = be16(2);
                if a.api_key.is_some_and(|k| !watched(k)) {
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
                    Some(p) if !watched(p.api_key) => return,
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
        let api = match a.api_key {
            Some(k) if watched(k) => format!("{} ", name_of(k)),
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
                Role::Requests if after.len() >= 8 => {
                    let key = i16::from_be_bytes([after[0], after[1]]);
                    let version = i16::from_be_bytes([after[2], after[3]]);
                    let corr = i32::from_be_bytes([after[4], after[5], after[6], after[7]]);
                    if let Some(info) = api::api_info(key).filter(|i| i.has_version(version)) {
                        a.api_key = Some(key);
                        a.api_version = Some(version);
                        a.correlation_id = Some(corr);
                        what = format!(
                            " (a {} v{version} request, correlation_id {corr})",
                            info.name
                        );
                        // Its response is then known for what it answers.
                        let not_decoded = self.kept(key).is_some();
                        self.push_pending_as(corr, key, version, not_decoded);
                    }
                }
                Role::Responses if after.len() >= 4 => {
                    let corr = i32::from_be_bytes([after[0], after[1], after[2], after[3]]);
                    // The request got this (undecoded) response: it is no longer waiting.
                    if let Some(p) = self.take_pending(corr) {
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
                _ => {}
            }
        }
        a.message = format!(
            "size prefix {size} at stream offset {offset}{what} is {sentence}; looking for the next frame"
        );
        self.anomaly(a);
    }

    fn on_gap(&mut self, role: Role, at: u64, len: u64, effect: GapEffect) {
        self.gap_end = (self.missing != Missing::Cut).then_some(at + len);
        if role == Role::Responses && effect == GapEffect::Resync {
            // Whole responses may have been in it.
            self.corr.pending.response_gap(self.loc.frame, len);
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
        };
        let mut a = self.with_current(Anomaly::new(
            AnomalyKind::Gap,
            match self.missing {
                Missing::NotKept => format!(
                    "{len} bytes at stream offset {at} were captured but not kept while the \
                     connection was being recognised as Kafka (the first {PROBE_BUFFER_LIMIT} \
                     bytes of each direction are held for that), {what}"
                ),
                Missing::Gap | Missing::Cut => {
                    format!("{len} bytes at stream offset {at} were not captured, {what}")
                }
            },
        ));
        a.bytes = Some(len);
        a.stream_offset = Some(at);
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
                "the connection ended at stream offset {end} while framing looked for the next \
                 frame: {skipped} captured bytes passed over start no plausible frame{why}; \
                 messages in them were not decoded"
            ),
        );
        a.bytes = Some(skipped);
        a.stream_offset = Some(end);
        self.anomaly(a);
    }

    fn on_truncated(&mut self, _role: Role, offset: u64, size: u32, have: &[u8]) {
        let unknown = self.corr.current[self.dir.index()].is_some_and(|c| !c.api_known);
        let what = if unknown {
            &format!(
                " (a response whose request was not captured, kept in case it was {})",
                inferable()
            )
        } else {
            ""
        };
        let mut a = self.with_current(Anomaly::new(
            AnomalyKind::TruncatedFrame,
            format!(
                "the connection ended {} bytes short of the end of a {size}-byte frame{what}",
                size as usize - have.len()
            ),
        ));
        a.stream_offset = Some(offset);
        a.bytes = Some(u64::from(size));
        let a = a.with_data(have);
        self.anomaly(a);
    }

    fn probe(&mut self, role: Role, bytes: &[u8], at: ProbeAt) -> Probe {
        let verdict = self.plausible(role, bytes, self.corr.last_request, at.stream_start);
        if verdict != Probe::Yes || bytes.len() < 4 {
            return verdict;
        }
        let size = i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        if at.stream_start {
            return Probe::Yes;
        }
        // A response taken blind (no request of the connection captured, so its correlation id
        // proves nothing) needs the stronger evidence: its end in sight, and another plausible
        // frame (or the end of the stream) right after it. The segment-start shortcuts below
        // would let a stretch of record data pass for a huge frame and swallow what follows.
        let blind = role == Role::Responses && self.blind();
        if at.segment_start && !blind {
            // At a segment start, a correlation id that is expected is evidence enough: a
            // response to a pending request, or the request right after one known to be real.
            let expected = match role {
                Role::Requests => self.corr.last_request.is_some_and(|last| {
                    let corr = i32::from_be_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
                    (1..=16).contains(&corr.wrapping_sub(last))
                }),
                Role::Responses => {
                    let corr = i32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
                    self.corr.pending.contains(corr)
                }
            };
            if expected {
                return Probe::Yes;
            }
            // A frame that would run past the end of a segment shorter than the longest seen:
            // a sender fills its segments while a frame continues.
            if let Some(len) = at.segment_len {
                if size + 4 > len && len < at.max_segment {
                    return Probe::No;
                }
                // A frame that fills its segment exactly is what a sender writes.
                if size + 4 == len {
                    return Probe::Yes;
                }
            }
            // A frame too long to see its end within the resync buffer is taken on the
            // evidence of its segment start.
            if size + 16 > RESYNC_BUFFER_LIMIT {
                return Probe::Yes;
            }
        }
        // Otherwise the frame must be followed by another plausible one (a frame header's
        // bytes often pass for a size prefix); at the end of the stream, by nothing.
        if at.stream_end && size + 4 <= bytes.len() {
            let rest = &bytes[size + 4..];
            let after = (role == Role::Requests)
                .then(|| i32::from_be_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]));
            // Nothing after it, another frame after it, or (at a segment start) the beginning
            // of what may be one.
            let next = if rest.is_empty() {
                Probe::Yes
            } else {
                self.plausible(role, rest, after, false)
            };
            if next == Probe::Yes || (next == Probe::NeedMore && at.next_is_segment_start) {
                return Probe::Yes;
            }
        }
        // Inside a segment, a frame's header bytes often pass for a size prefix: ask there
        // that the frame be followed by another plausible one.
        self.followed(role, bytes, size)
    }
}

impl Handler<'_> {
    /// Whether `bytes` start a plausible frame of `role`: for a request a known API key and
    /// version, a well-formed client id, and a correlation id that follows `after` (the
    /// previous request's, when known); for a response a plausible size and a pending
    /// correlation id (or, at the very start of a stream picked up mid-way, or when nothing of
    /// the request direction was captured, any non-negative one).
    fn plausible(&self, role: Role, bytes: &[u8], after: Option<i32>, stream_start: bool) -> Probe {
        match role {
            // The correlation id is read below: a header v0 request can pass the probe
            // with fewer bytes than that.
            Role::Requests if bytes.len() < 12 => Probe::NeedMore,
            Role::Requests => match probe_request(bytes, self.shared.max_frame_size) {
                // Produce v0 with correlation id 0 and an empty client id: ten zero bytes,
                // which is what zero-filled payload looks like, not a request.
                Probe::Yes if bytes.len() >= 14 && bytes[4..14].iter().all(|&b| b == 0) => {
                    Probe::No
                }
                // Clients number their requests upwards: the next frame's correlation id
                // follows the previous one closely.
                Probe::Yes => {
                    let corr = i32::from_be_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
                    match after {
                        Some(last) if !CORRELATION_WINDOW.contains(&corr.wrapping_sub(last)) => {
                            Probe::No
                        }
                        _ => Probe::Yes,
                    }
                }
                other => other,
            },
            Role::Responses => {
                if bytes.len() < 8 {
                    return Probe::NeedMore;
                }
                let size = i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                if size < 4 || size as u32 > self.shared.max_frame_size {
                    return Probe::No;
                }
                let corr = i32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
                // With nothing of the request direction captured, no correlation id can be
                // expected: any non-negative one is taken, as at the start of a stream picked
                // up mid-way (the probe still asks for the usual evidence around it).
                if self.corr.pending.contains(corr) || ((stream_start || self.blind()) && corr >= 0)
                {
                    Probe::Yes
                } else {
                    Probe::No
                }
            }
        }
    }

    /// Whether the frame of `size` bytes that `bytes` start is followed by another plausible
    /// frame (for requests, one whose correlation id follows this one's).
    fn followed(&self, role: Role, bytes: &[u8], size: usize) -> Probe {
        let end = 4 + size;
        let Some(next) = bytes.get(end..) else {
            return Probe::NeedMore;
        };
        let after = match role {
            Role::Requests => Some(i32::from_be_bytes([
                bytes[8], bytes[9], bytes[10], bytes[11],
            ])),
            Role::Responses => None,
        };
        self.plausible(role, next, after, false)
    }
}
