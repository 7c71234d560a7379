//! One TCP connection seen as Kafka: which side is the broker, framing of both directions,
//! request/response correlation, and decoding of the frames of the decoded APIs into records.
//!
//! Input: per direction, in-order bytes and gaps from TCP reassembly, each with the
//! [`Location`] of the packet that delivered them.
//! Output: [`Record`]s pushed to a [`RecordOut`]: messages of the decoded APIs (responses
//! paired with their request by correlation id, with the latency) and anomalies.
//!
//! Kafka is recognised by port (9092 and `--port`), by a port where Kafka was already found,
//! or by the first bytes of a direction looking like a request (`probing`, with
//! [`super::header::probe_request`]). A response names no API: its `(api_key, api_version)` come
//! from the pending request with the same correlation id on this connection (Kafka answers in
//! order on a connection, so pending requests are a queue; earlier entries that a response
//! passes over never got an answer: `correlation`). Each direction's framer calls a
//! `handler`, which asks the decoder table ([`super::apis`]) what to keep and decode, and
//! judges candidate frame starts after a loss (`resync`).

use super::api;
use super::apis::Body;
use super::apis::{self, Decoder};
use super::event::{
    Event, KafkaMessage, MessageKind, Record, RecordOut, RequestLost, ResponseMissing,
};
use super::framing::{
    Decision, FrameHandler, Framer, GapEffect, ProbeAt, Role, RESYNC_BUFFER_LIMIT,
};
use super::header::{
    decode_request_header, decode_response_header, detect_request, int16_at, int32_at,
    probe_request, Probe, RequestHead,
};
use super::partial;
use super::primitives::{Budget, DecodeError};
use crate::flow::Syn;
use crate::memory::{Charge, Holding, Memory};
use crate::vocab::{Anomaly, AnomalyKind, Direction, Location, Timestamp};
use std::collections::{HashSet, VecDeque};

mod correlation;
mod counts;
mod handler;
mod probing;
mod resync;
mod trail;
mod walking;

use correlation::*;
pub use counts::{FrameCounts, LatencySample};
use handler::*;
use probing::*;
pub use trail::{Trail, MAX_TRAIL_ENTRIES};

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
    /// The APIs whose messages become records (`--api`, `--all-apis`; by default
    /// WriteTxnMarkers).
    pub apis: apis::ApiSelection,
    /// Records keep their frame's bytes (`--format tree`).
    pub keep_frames: bool,
    /// Message records list the packets they came in (`crate::Config::write_pcap`).
    pub write_pcap: bool,
    /// Request records are held until their response (`crate::Config::hold_requests`).
    pub hold_requests: bool,
    /// Requests held so far in the run: the order `Event::Unanswered` keeps.
    pub held_seq: u64,
    /// Request records held now, on all connections (at most [`MAX_HELD_REQUESTS`]).
    pub held_now: usize,
    /// The run's memory budget.
    pub memory: Memory,
    /// `memory_limit` anomalies of each holding ([`Holding::index`]) due so far, reported or
    /// not.
    pub memory_reports: [u64; crate::memory::Holding::ALL.len()],
    /// Whether the packet at hand is the file's last, cut short by the file's end
    /// (`capture::CapturePacket::cut_by_file_end`): its cut bytes are [`Missing::FileEnd`].
    pub file_end: bool,
    /// Versions of each decoded API's requests seen in the run: what a response inferred on a
    /// connection with none of its own tells its version by (a cluster that speaks only
    /// WriteTxnMarkers v2 answers in v2, whose layout is v1's).
    pub versions_seen: correlation::VersionsSeen,
}

/// Most request records held at once for their responses (`Config::hold_requests`), on all
/// connections; past it a request is written but not held, so its response is written alone.
pub const MAX_HELD_REQUESTS: usize = 100_000;

impl Shared {
    /// Whether `port` is known as a Kafka broker port.
    pub fn is_kafka_port(&self, port: u16) -> bool {
        self.kafka_ports.contains(&port) || self.detected_ports.contains(&port)
    }
}

/// Kafka state of a connection whose broker side is known.
#[derive(Debug)]
struct Session {
    /// Framing of each direction, from its first byte.
    framers: [Option<Framer>; 2],
    /// What the framers' handlers share.
    corr: Correlation,
    /// Time and frame number of the latest packet that gave request bytes: where a request
    /// frame ended early by its response (`Session::answered_early`) ends.
    last_request_packet: (Timestamp, u64),
    /// This state's own size, charged as part of the connection.
    _charge: Charge,
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

/// Bytes of a direction missing from what framing sees: how many, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lost {
    /// How many bytes.
    pub len: u64,
    /// Why they are missing.
    pub why: Missing,
}

impl Lost {
    /// `len` bytes missing because of `why`.
    pub fn new(len: u64, why: Missing) -> Self {
        Lost { len, why }
    }
}

/// Why bytes of a direction are missing from what framing sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Never captured: a hole in the stream.
    Gap,
    /// Cut from the packet at hand by the capture's snapshot length (that packet carried them
    /// on the wire).
    Cut,
    /// Cut by the capture's snapshot length from a packet held out of order: as `Cut`, but
    /// that earlier packet carried them, not the packet at hand.
    HeldCut,
    /// Cut from the packet at hand by the end of the file, which ends inside its record
    /// (the capture was cut while being written): as `Cut`, but no snapshot length is to blame.
    FileEnd,
    /// Not arrived when the bytes held out of order after them passed a bound (`memory`: the
    /// run's memory budget; otherwise the bytes held per direction), and taken as lost.
    GivenUp {
        /// Whether the memory budget was the bound.
        memory: bool,
    },
    /// Captured, but past the first [`PROBE_BUFFER_LIMIT`] bytes held while the connection was
    /// being recognised as Kafka, and not kept.
    NotKept,
}

/// The Kafka view of one TCP connection. Directions are numbered from the connection's first
/// packet: 0 from its sender to its receiver, 1 back.
#[derive(Debug)]
pub struct KafkaConn {
    state: State,
    /// `--write-pcap`: the packets its frames came in.
    trail: Option<Box<Trail>>,
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
                charge: Some(shared.memory.charge(Holding::Probing)),
            })),
        };
        KafkaConn {
            state,
            trail: shared
                .write_pcap
                .then(|| Box::new(Trail::new(&shared.memory))),
        }
    }

    /// `--write-pcap`: the next bytes of direction `dir` handed to [`KafkaConn::data`] were
    /// carried by the packet in `frame`, not by the one delivering them (they were held).
    #[inline]
    pub fn carried_by(&mut self, dir: Direction, frame: u64) {
        if let Some(t) = &mut self.trail {
            t.carried_by(dir, frame);
        }
    }

    /// `--write-pcap`: the segment in `frame` was made whole from the IP fragments in
    /// `frames`.
    pub fn fragmented(&mut self, frame: u64, frames: &[u64]) {
        if let Some(t) = &mut self.trail {
            t.fragmented(frame, frames);
        }
    }

    /// `--write-pcap`: notes a packet of direction `dir` in `frame` with TCP flags `syn` and
    /// `ack`, for the connection's handshake.
    #[inline]
    pub fn packet(&mut self, dir: Direction, syn: bool, ack: bool, frame: u64) {
        if let Some(t) = &mut self.trail {
            t.packet(dir, syn, ack, frame);
        }
    }

    /// Whether this connection was found not to be Kafka (its bytes need no reassembly).
    pub fn is_ignored(&self) -> bool {
        matches!(self.state, State::NotKafka)
    }

    /// Whether the connection is known to be Kafka (its port named or found, or its bytes
    /// recognised), not still being probed nor found to be something else.
    pub fn is_kafka(&self) -> bool {
        matches!(self.state, State::Ready(_) | State::Kafka(_))
    }

    /// A connection known to be Kafka gets its session with its first byte or gap (a
    /// half-open connection costs none).
    #[inline]
    fn start(&mut self, shared: &Shared) {
        if let State::Ready(r) = self.state {
            self.state = State::Kafka(Box::new(Session::new(r, shared)));
        }
    }

    /// In-order bytes of direction `dir`. `syn_seen` says the direction was seen from its SYN
    /// (so its first byte starts a frame). `loc` is the delivering packet, with the stream and
    /// the endpoints of this direction (sender first). `peer_lacks` tells, when asked, how
    /// many bytes of the other direction, from its next one, the capture lacks although they
    /// were sent (`flow::HalfStream::lacking`: acknowledged and not captured, a hole and the
    /// bytes held after it, or the delivering packet's acknowledgment past them); it is asked
    /// only when a response starts while its request's frame is still in progress.
    #[allow(clippy::too_many_arguments)]
    pub fn data(
        &mut self,
        dir: Direction,
        syn_seen: bool,
        data: &[u8],
        loc: &Location,
        peer_lacks: &dyn Fn() -> u64,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
    ) {
        self.start(shared);
        match &mut self.state {
            State::NotKafka | State::Ready(_) => {
                if let Some(t) = &mut self.trail {
                    t.take_carried(dir);
                }
            }
            State::Kafka(s) => s.data(
                dir,
                syn_seen,
                data,
                loc,
                peer_lacks,
                shared,
                out,
                &mut self.trail,
            ),
            State::Probing(p) => {
                // Held bytes replayed later name the packet that carried them.
                let origin = self.trail.as_mut().map_or(0, |t| t.take_carried(dir));
                p.syn[dir.index()] |= syn_seen;
                let room = PROBE_BUFFER_LIMIT.saturating_sub(p.bufs[dir.index()].len());
                let mut take = data.len().min(room);
                let cost = 2 * take + std::mem::size_of::<(Direction, Location, Arrived)>();
                let refused = p.charge.as_mut().map(|c| !c.add(cost));
                match refused {
                    Some(true) => {
                        shared.memory.note_given_up(Holding::Probing);
                        p.charge = None;
                        take = 0;
                        let a = Anomaly::new(
                            AnomalyKind::MemoryLimit,
                            format!(
                                "bytes of this connection (on a port not named as Kafka) were \
                                 not held to recognise Kafka in them; they are captured but not \
                                 kept: {}",
                                shared.memory.advice()
                            ),
                        );
                        out.push(Record {
                            loc: *loc,
                            event: Event::Anomaly(Box::new(a)),
                        });
                    }
                    Some(false) => {}
                    None => take = 0,
                }
                p.bufs[dir.index()].extend_from_slice(&data[..take]);
                if take > 0 {
                    p.arrivals.push((dir, *loc, Arrived::Data(take, origin)));
                }
                if take < data.len() {
                    p.arrivals
                        .push((dir, *loc, Arrived::NotKept((data.len() - take) as u64)));
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
    #[inline(always)]
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
        let mut s = Box::new(Session::new(r, shared));
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
                Arrived::Data(n, origin) => {
                    let bytes = &p.bufs[i][at[i]..at[i] + n];
                    at[i] += n;
                    if let (Some(t), true) = (&mut self.trail, origin != 0) {
                        t.carried_by(d, origin);
                    }
                    // What the other direction lacked then is not known now.
                    s.data(
                        d,
                        trusted,
                        bytes,
                        l,
                        &|| u64::MAX,
                        shared,
                        out,
                        &mut self.trail,
                    );
                }
                Arrived::Lost(len) => {
                    let lost = Lost::new(len, Missing::Gap);
                    s.gap(d, trusted, lost, l, shared, out, self.trail.as_deref())
                }
                Arrived::NotKept(len) => {
                    let lost = Lost::new(len, Missing::NotKept);
                    s.gap(d, trusted, lost, l, shared, out, self.trail.as_deref())
                }
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

    /// Bytes of direction `dir` are missing (`lost`: never captured, cut from the packet at
    /// `loc` by the snapshot length, or not kept while probing).
    pub fn gap(
        &mut self,
        dir: Direction,
        syn_seen: bool,
        lost: Lost,
        loc: &Location,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
    ) {
        self.start(shared);
        match &mut self.state {
            State::Kafka(s) => s.gap(dir, syn_seen, lost, loc, shared, out, self.trail.as_deref()),
            State::Probing(p) => {
                if p.verdict[dir.index()].is_none() && p.bufs[dir.index()].is_empty() {
                    // Nothing seen yet this way: probing starts after the hole.
                    return;
                }
                if p.verdict[dir.index()].is_none() {
                    p.verdict[dir.index()] = Some(false);
                }
                p.lost(dir, loc, lost.len);
                self.decide(loc, dir, false, shared, out);
            }
            State::NotKafka | State::Ready(_) => {}
        }
    }

    /// A packet of the other direction acknowledged `len` bytes of direction `dir` that the
    /// capture has not given (yet) at its next offset, at `loc` (see `Session::unseen`);
    /// `at_end`: the connection ends, so nothing after those bytes was sent.
    #[cold]
    pub fn unseen_acked(&mut self, dir: Direction, len: u64, loc: &Location) {
        if let State::Kafka(s) = &mut self.state {
            s.unseen(dir, len, loc, false);
        }
    }

    /// The connection ends with `len` bytes of direction `dir` acknowledged by the other and
    /// never captured (the sender's last packets were lost with them): a `gap` anomaly at
    /// `loc` (the packet whose acknowledgment showed them) says so, and responses may be
    /// inferred for requests they held (`Session::unseen`).
    #[cold]
    pub fn lost_at_end(
        &mut self,
        dir: Direction,
        len: u64,
        loc: &Location,
        out: &mut dyn RecordOut,
    ) {
        if let State::Kafka(s) = &mut self.state {
            let at = s.framers[dir.index()].as_ref().map(|f| f.offset());
            let mut a = Anomaly::new(
                AnomalyKind::Gap,
                format!(
                    "{len} bytes{} were not captured: the peer acknowledged them, and nothing \
                     of this direction came after them before the connection ended",
                    at.map_or(String::new(), |o| format!(" at stream offset {o}"))
                ),
            );
            a.bytes = Some(len);
            a.stream_offset = at;
            out.push(Record {
                loc: *loc,
                event: Event::Anomaly(Box::new(a)),
            });
            s.unseen(dir, len, loc, true);
        }
    }

    /// The connection ended (FIN or RST in both directions, or the end of the capture, as
    /// `why` says). `locs` gives, per direction, the location to report from; `seen`, whether
    /// any packet of that direction was captured, or `None` when the connection was released
    /// while open (idle, evicted), so that what was seen so far says nothing of the rest.
    pub fn finish(
        &mut self,
        locs: [&Location; 2],
        seen: Option<[bool; 2]>,
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
            s.finish(locs, seen, why, shared, out, self.trail.as_deref());
        }
    }
}

impl Session {
    fn new(requests_dir: Direction, shared: &Shared) -> Self {
        let mut charge = shared.memory.charge(Holding::Connections);
        charge.force(crate::memory::alloc_cost(std::mem::size_of::<Session>()));
        Session {
            framers: [None, None],
            last_request_packet: (Default::default(), 0),
            corr: Correlation {
                requests_dir,
                current: [None, None],
                frame_offset: [0, 0],
                request_gaps: VecDeque::new(),
                last_request_head: None,
                answering_fate: [ResponseMissing::Lost; 2],
                pending: PendingQueue::new(&shared.memory),
                versions_seen: VersionsSeen::default(),
                fetch_requests: false,
                last_request: None,
                unpaired: Unpaired::default(),
                held: Default::default(),
                answering: [None, None],
                held_charge: shared.memory.charge(Holding::HeldRecords),
                partial: [None, None],
                memory_reported: 0,
                refused: [false; 2],
                walks: [None, None],
                asked: Vec::new(),
            },
            _charge: charge,
        }
    }

    /// Bytes of the request direction acknowledged before the capture gave them, which could
    /// hold a request's start: remembered as a loss not yet declared ([`RequestGap`] with
    /// `unseen_from`), so that a response answering no pending request may be taken as the
    /// answer to a request they held, as after a declared loss (both directions lose packets
    /// at once: the responses come before the request direction's loss can be declared).
    /// Forgotten when bytes come at that offset, replaced when a gap is declared there.
    /// `at_end`: the connection ends there, so whole requests in them fit in their `len` bytes
    /// ([`RequestGap::room`]); elsewhere a request they began may end in the bytes after.
    fn unseen(&mut self, dir: Direction, len: u64, loc: &Location, at_end: bool) {
        if dir != self.corr.requests_dir {
            return;
        }
        let Some(f) = &self.framers[dir.index()] else {
            return;
        };
        let at = f.offset();
        if !f.could_hold_frame_start(len) {
            return;
        }
        let gaps = &mut self.corr.request_gaps;
        if let Some(g) = gaps.iter_mut().find(|g| g.unseen_from == Some(at)) {
            g.lost.bytes = g.lost.bytes.max(len);
            if at_end {
                g.room = g.lost.bytes;
            }
            g.max_ids = i32::try_from(g.lost.bytes / 12 + 1).unwrap_or(i32::MAX);
            return;
        }
        if gaps.len() >= correlation::MAX_REQUEST_GAPS {
            gaps.pop_front();
        }
        gaps.push_back(RequestGap {
            lost: RequestLost {
                frame: loc.frame,
                bytes: len,
            },
            last_request: self.corr.last_request_head,
            next_request: None,
            max_ids: i32::try_from(len / 12 + 1).unwrap_or(i32::MAX),
            inferred: None,
            claimed: 0,
            room: if at_end { len } else { u64::MAX },
            unseen_from: Some(at),
        });
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
        trail: Option<&'a Trail>,
    ) -> (Option<&'a mut Framer>, Handler<'a>) {
        let Session { framers, corr, .. } = self;
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
            released: None,
            end: None,
            trail,
            overran: 0,
        };
        (framers[dir.index()].as_mut(), h)
    }

    fn framer(&mut self, dir: Direction, syn_seen: bool, shared: &Shared) -> &mut Framer {
        let role = self.role(dir);
        self.framers[dir.index()].get_or_insert_with(|| {
            if syn_seen {
                Framer::new(role, shared.max_frame_size, &shared.memory)
            } else {
                Framer::new_mid_stream(role, shared.max_frame_size, &shared.memory)
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
        trail: Option<&Trail>,
        f: impl FnOnce(&mut Framer, &mut Handler<'_>),
    ) {
        self.framer(dir, syn_seen, shared);
        if let (Some(framer), mut h) = self.split(dir, loc, shared, out, trail) {
            f(framer, &mut h);
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn data(
        &mut self,
        dir: Direction,
        syn_seen: bool,
        data: &[u8],
        loc: &Location,
        peer_lacks: &dyn Fn() -> u64,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
        trail: &mut Option<Box<Trail>>,
    ) {
        let requests = self.corr.requests_dir;
        if dir == requests {
            self.last_request_packet = (loc.ts, loc.frame);
        }
        if dir != requests
            && self.corr.current[requests.index()].is_some()
            && self.answers_in(dir, syn_seen, data, loc, peer_lacks, shared, out, trail)
        {
            // A response in these bytes answered the request whose frame is still in
            // progress; they were fed around it.
            return;
        }
        self.feed(dir, syn_seen, data, loc, shared, out, trail);
        // A response kept to be decoded still in progress while the next is awaited.
        if dir != requests
            && !self.corr.pending.queue.is_empty()
            && self.corr.current[dir.index()].is_some_and(|c| c.request.is_some())
        {
            self.response_overstated(dir, data.len(), loc, shared, out, trail.as_deref());
        }
        if !self.corr.request_gaps.is_empty() && dir == requests {
            self.seen_after_all(dir);
        }
    }

    /// Hands `data` of direction `dir` to its framer.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn feed(
        &mut self,
        dir: Direction,
        syn_seen: bool,
        data: &[u8],
        loc: &Location,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
        trail: &mut Option<Box<Trail>>,
    ) {
        match trail {
            None => self.with_framer(dir, syn_seen, loc, shared, out, None, |f, h| {
                f.push(data, h)
            }),
            Some(t) => self.data_noted(dir, syn_seen, data, loc, shared, out, t),
        }
    }

    /// How many bytes from the next one of direction `dir` its next frame starts
    /// (`Framer::to_next_frame`); before its framer exists, 0 when the direction was seen from
    /// its SYN (`syn_seen`: its first byte starts a frame), `None` otherwise.
    fn to_next_frame(&self, dir: Direction, syn_seen: bool) -> Option<u64> {
        match &self.framers[dir.index()] {
            Some(f) => f.to_next_frame(),
            None => syn_seen.then_some(0),
        }
    }

    /// Bytes `data` of the response direction `dir` come while a request's frame is in
    /// progress: looks for a response frame among them (at the frames' starts the response
    /// framer and the size prefixes in `data` give) with that request's correlation id. When
    /// one starts at the first byte, the request is ended ([`Session::answered_early`]) and
    /// `false` returned (the bytes are fed as usual); when one starts further on, the bytes
    /// before it are fed, the request ended, the rest fed, and `true` returned. `false` when
    /// there is none.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn answers_in(
        &mut self,
        dir: Direction,
        syn_seen: bool,
        data: &[u8],
        loc: &Location,
        peer_lacks: &dyn Fn() -> u64,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
        trail: &mut Option<Box<Trail>>,
    ) -> bool {
        let Some(c) = self.corr.current[dir.other().index()] else {
            return false;
        };
        if self.corr.pending.contains(c.correlation_id) {
            // A request sent before with the same id waits: a response with it answers that
            // one first (responses come in request order).
            return false;
        }
        let first = self.to_next_frame(dir, syn_seen);
        let Some(mut at) = first.and_then(|n| usize::try_from(n).ok()) else {
            return false;
        };
        let id = c.correlation_id.to_be_bytes();
        // Each frame start in `data`, by the size prefixes (a response is at least 4 bytes).
        while at + 8 <= data.len() {
            if data[at + 4..at + 8] == id {
                break;
            }
            let size = i32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
            let Some(next) = usize::try_from(size)
                .ok()
                .filter(|&n| n >= 4 && n <= shared.max_frame_size as usize)
                .and_then(|n| (at + 4).checked_add(n))
            else {
                return false;
            };
            at = next;
        }
        if at + 8 > data.len() {
            return false;
        }
        if at == 0 {
            self.answered_early(
                (dir, syn_seen),
                peer_lacks,
                loc,
                shared,
                out,
                trail.as_deref(),
            );
            return false;
        }
        self.feed(dir, syn_seen, &data[..at], loc, shared, out, trail);
        self.answered_early(
            (dir, syn_seen),
            peer_lacks,
            loc,
            shared,
            out,
            trail.as_deref(),
        );
        self.feed(dir, syn_seen, &data[at..], loc, shared, out, trail);
        true
    }

    /// A response kept to be decoded is still in progress (its size prefix says more is to
    /// come) while a response to the next pending request has begun: looks in its bytes, from
    /// the last `fed` bytes fed (and the 7 before them), for that response's head (a
    /// plausible size prefix, then its correlation id)
    /// such that the bytes before it decode whole as the API's response. Then the response
    /// ended there and its size prefix said more (a damaged byte: a broker writes its
    /// responses one after the other, in request order): it ends there
    /// (`Framer::end_kept_at`) and the bytes after it are framed again, from the next
    /// response's first byte, with a `resync` anomaly that says so. Responses walked or
    /// skipped (Produce, Fetch: record bytes may look like anything) are never so ended.
    #[cold]
    #[inline(never)]
    fn response_overstated(
        &mut self,
        dir: Direction,
        fed: usize,
        loc: &Location,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
        trail: Option<&Trail>,
    ) {
        let (Some(c), Some(next)) = (
            self.corr.current[dir.index()].filter(|c| c.request.is_some()),
            self.corr.pending.queue.front().map(|p| p.correlation_id),
        ) else {
            return;
        };
        let Some(kept) = self.framers[dir.index()]
            .as_ref()
            .and_then(|f| f.kept_bytes())
        else {
            return;
        };
        let fed = fed.min(kept.len());
        let Some(d) = apis::decoder(c.api_key).filter(|d| d.versions.contains(&c.api_version))
        else {
            return;
        };
        let id = next.to_be_bytes();
        let budget = Budget::default();
        let hv = api::response_header_version(c.api_key, c.api_version);
        let now = kept.len() - fed;
        let from = now.saturating_sub(7);
        let found = (from..kept.len().saturating_sub(7)).find(|&at| {
            let size = i32::from_be_bytes([kept[at], kept[at + 1], kept[at + 2], kept[at + 3]]);
            kept[at + 4..at + 8] == id
                && size >= 4
                && size as u32 <= shared.max_frame_size
                && decode_response_header(&kept[..at], hv, &budget).is_ok_and(|h| {
                    (d.decode_response)(&kept[h.len..at], c.api_version, &budget).is_ok()
                })
        });
        let Some(at) = found else {
            return;
        };
        let (Some(f), mut h) = self.split(dir, loc, shared, out, trail) else {
            return;
        };
        let start = f.frame_start();
        // It ended in an earlier packet when its bytes all came before the ones just fed:
        // its time there is not known.
        h.replaying(at <= now);
        let ended = f.end_kept_at(at, &mut h);
        h.replaying(false);
        if let Some((said, rest)) = ended {
            let (corr, taken) = (c.correlation_id, at);
            let mut a = Anomaly::new(
                AnomalyKind::Resync,
                format!(
                    "the response with correlation_id {corr} at stream offset {start} ended \
                     where the next response begins: its size prefix said {said} bytes, the \
                     first {taken} decode whole; it is taken as {taken} bytes long (a damaged \
                     size prefix), and framing goes on after them"
                ),
            );
            a.stream_offset = Some(start);
            a.correlation_id = Some(corr);
            h.anomaly(a);
            // Bytes of earlier packets among them complete no frame at the packet at hand.
            h.replaying(at < now);
            f.push_again(&rest, &mut h);
            h.replaying(false);
        }
    }

    /// Bytes of the response direction (`at`: the direction, and whether it was seen from its
    /// SYN) that start with the correlation id of the request whose frame is still in
    /// progress. When they start a response frame, that response answers the request (a
    /// broker answers a request once it has all of it), so that the response pairs with it:
    /// - when the capture lacks request bytes that were sent (`peer_lacks`: how many, from
    ///   the next one: acknowledged and missing, a hole and the bytes held after it, or an
    ///   acknowledgment past them) and the rest of the request lies within them, its tail is
    ///   missing (lost, or later than the response): it is decoded in part now, with its
    ///   `frame_lost`, and its tail passed over when it comes or a gap takes it
    ///   (`Framer::end_tail_missing`); when its rest reaches past them, nothing is changed;
    /// - otherwise the broker had no more of it than was captured: it ended where its bytes
    ///   stop, and its size prefix said more (a damaged byte). Its frame ends there
    ///   (`Framer::end_early`) and the next request is framed from its own first byte, with a
    ///   `resync` anomaly that says so.
    ///
    /// Records are at the request's last packet; the packet carrying the response is `loc`.
    #[cold]
    #[inline(never)]
    fn answered_early(
        &mut self,
        (dir, syn_seen): (Direction, bool),
        peer_lacks: &dyn Fn() -> u64,
        loc: &Location,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
        trail: Option<&Trail>,
    ) {
        if self.to_next_frame(dir, syn_seen) != Some(0) {
            return;
        }
        let requests = dir.other();
        if self.corr.current[requests.index()].is_none() {
            // The bytes before the response ended it (a request does not end on response
            // bytes; kept for safety).
            return;
        }
        let lacks = peer_lacks();
        let left = self.to_next_frame(requests, true);
        // The request's record and the anomaly belong to the request's last packet, sent the
        // other way.
        let (ts, frame) = self.last_request_packet;
        let at = Location {
            ts,
            frame,
            stream: loc.stream.map(|(i, a, b)| (i, b, a)),
            tunnel: loc.tunnel,
        };
        let (Some(f), mut h) = self.split(requests, &at, shared, out, trail) else {
            return;
        };
        let start = f.frame_start();
        let corr = h.corr.current[requests.index()].map(|c| c.correlation_id);
        if lacks > 0 {
            // Only when the rest of the request, as its size prefix says, lies within what
            // was sent: otherwise the broker answered it without that many bytes (a damaged
            // size prefix, with bytes lost besides): which bytes were the request's is not
            // known, and nothing is changed.
            if left.is_some_and(|left| left <= lacks) {
                h.replaying(true);
                f.end_tail_missing(&mut h);
                h.replaying(false);
            }
            return;
        }
        h.replaying(true);
        let ended = f.end_early(&mut h);
        h.replaying(false);
        if let (Some((said, taken)), Some(corr)) = (ended, corr) {
            let mut a = Anomaly::new(
                AnomalyKind::Resync,
                format!(
                    "the request with correlation_id {corr} at stream offset {start} was \
                     answered before its end: its size prefix said {said} bytes, {taken} had \
                     come; it is taken as {taken} bytes long (a damaged size prefix), and \
                     framing goes on after them"
                ),
            );
            a.stream_offset = Some(start);
            a.correlation_id = Some(corr);
            h.anomaly(a);
        }
    }

    /// Forgets the losses an acknowledgment showed in direction `dir` whose bytes came after
    /// all (they were only late: packets captured out of order).
    #[cold]
    fn seen_after_all(&mut self, dir: Direction) {
        let Some(now) = self.framers[dir.index()].as_ref().map(|f| f.offset()) else {
            return;
        };
        self.corr
            .request_gaps
            .retain(|g| g.unseen_from.is_none_or(|from| from >= now));
    }

    /// [`Session::data`] for `--write-pcap`: notes which packet the bytes came in, and forgets
    /// the packets of frames completed.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn data_noted(
        &mut self,
        dir: Direction,
        syn_seen: bool,
        data: &[u8],
        loc: &Location,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
        t: &mut Trail,
    ) {
        let offset = self.framer(dir, syn_seen, shared).offset();
        t.note(dir, offset, loc.frame);
        let forgotten = t.take_forgotten();
        if forgotten > 0 {
            let a = Anomaly::new(
                AnomalyKind::MemoryLimit,
                format!(
                    "--write-pcap: {forgotten} packets of frames in progress on this connection \
                     were forgotten (past {MAX_TRAIL_ENTRIES} packets a direction, \
                     {} fragmented segments, or for the memory budget): the file will lack \
                     them, and perhaps later ones (reported once); {}",
                    trail::MAX_FRAGMENTED,
                    shared.memory.advice()
                ),
            );
            out.push(Record {
                loc: *loc,
                event: Event::Anomaly(Box::new(a)),
            });
        }
        let mut start = None;
        self.with_framer(dir, syn_seen, loc, shared, out, Some(t), |f, h| {
            f.push(data, h);
            start = Some(f.frame_start());
        });
        if let Some(start) = start {
            t.prune(dir, start);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn gap(
        &mut self,
        dir: Direction,
        syn_seen: bool,
        lost: Lost,
        loc: &Location,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
        trail: Option<&Trail>,
    ) {
        self.with_framer(dir, syn_seen, loc, shared, out, trail, |f, h| {
            h.missing = lost.why;
            f.gap(lost.len, h)
        });
    }

    fn finish(
        &mut self,
        locs: [&Location; 2],
        seen: Option<[bool; 2]>,
        why: &str,
        shared: &mut Shared,
        out: &mut dyn RecordOut,
        trail: Option<&Trail>,
    ) {
        for dir in Direction::BOTH {
            if let (Some(f), mut h) = self.split(dir, locs[dir.index()], shared, out, trail) {
                h.released = seen.is_none().then_some(why);
                h.end = Some(why);
                f.finish(&mut h);
                h.flush_partial();
            }
        }
        let Session { framers, corr, .. } = self;
        let Correlation {
            pending,
            requests_dir,
            unpaired,
            held,
            answering,
            held_charge,
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
        let why = if seen.is_some_and(|s| !s[responses.index()]) {
            format!(
                "{why}; no packet of the response direction was captured on this connection (a \
                 capture of one direction only, e.g. `dst port 9092`, holds no responses)"
            )
        } else if seen.is_some() && framers[responses.index()].is_none() {
            format!("{why}; no data of the broker was captured on this connection (only its acknowledgments)")
        } else {
            why.to_string()
        };
        while let Some(p) = pending.pop_front() {
            if watched(p.api_key, p.api_version, &shared.apis) {
                out.push(no_response(loc, &p, &why, pending.lost_since(&p)));
            }
        }
        // Held requests left: none will get a response record now. Written in the order they
        // were held (their numbers), as `--pair` writes them as they come: the map's order
        // changes from run to run.
        let released = held.len() + answering.iter().flatten().count();
        shared.held_now = shared.held_now.saturating_sub(released);
        // A response being framed when the connection ended was cut short, unless it was
        // done and did not decode.
        let fates = corr.answering_fate;
        let left = answering
            .iter_mut()
            .zip(fates)
            .filter_map(|(a, fate)| a.take().map(|(seq, r)| (seq, r, fate)));
        let never = held
            .drain()
            .map(|(seq, r)| (seq, r, ResponseMissing::NoResponse));
        let mut left: Vec<_> = left.chain(never).collect();
        left.sort_unstable_by_key(|l| l.0);
        for (seq, mut r, why) in left {
            r.set_response_missing(why);
            out.push(Record {
                loc: *loc,
                event: Event::Unanswered(seq, r),
            });
        }
        held_charge.set(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::event::Event;
    use crate::vocab::Endpoint;
    use std::net::{IpAddr, Ipv4Addr};

    fn shared() -> Shared {
        Shared {
            kafka_ports: [9092].into_iter().collect(),
            detected_ports: HashSet::new(),
            max_frame_size: 1 << 20,
            counts: FrameCounts::default(),
            apis: apis::ApiSelection::default(),
            keep_frames: false,
            write_pcap: false,
            hold_requests: false,
            held_seq: 0,
            held_now: 0,
            memory: Memory::new(usize::MAX / 2),
            memory_reports: [0; crate::memory::Holding::ALL.len()],
            file_end: false,
            versions_seen: Default::default(),
        }
    }

    fn loc(from: u16, to: u16) -> Location {
        let ep = |port| Endpoint {
            ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port,
        };
        Location {
            ts: Timestamp::default(),
            frame: 1,
            stream: Some((0, ep(from), ep(to))),
            tunnel: None,
        }
    }

    /// The seed's WriteTxnMarkers v1 request and response (`../shared/seeds`), with their
    /// size prefixes: correlation id 0, one ABORT marker for producer 0 on topic "" partition 0.
    const SEED_REQUEST: &str = concat!(
        "00000025",
        "001b0001",
        "00000000",
        "0000",
        "00",
        "02",
        "0000000000000000",
        "0000",
        "00",
        "02",
        "01",
        "02",
        "00000000",
        "00",
        "00000000",
        "00",
        "00"
    );
    const SEED_RESPONSE: &str = concat!(
        "0000001b",
        "00000000",
        "00",
        "02",
        "0000000000000000",
        "02",
        "01",
        "02",
        "00000000",
        "0000",
        "00",
        "00",
        "00",
        "00"
    );

    /// Records pushed, in order.
    #[derive(Default, Debug)]
    struct Out(Vec<Record>);

    impl RecordOut for Out {
        fn push(&mut self, rec: Record) {
            self.0.push(rec);
        }
    }

    fn bytes(hex_text: &str) -> Vec<u8> {
        hex::decode(hex_text).unwrap()
    }

    #[test]
    fn kafka_is_recognised_on_an_unnamed_port_from_a_request() {
        let mut s = shared();
        let mut c = KafkaConn::new([40000, 19093], Syn::Syn, &s);
        assert!(!c.is_ignored());
        let mut out = Out::default();
        let req = bytes(SEED_REQUEST);
        c.data(
            Direction::Forward,
            true,
            &req,
            &loc(40000, 19093),
            &|| 0,
            &mut s,
            &mut out,
        );
        assert!(s.detected_ports.contains(&19093));
        c.data(
            Direction::Back,
            true,
            &bytes(SEED_RESPONSE),
            &loc(19093, 40000),
            &|| 0,
            &mut s,
            &mut out,
        );
        let kinds: Vec<&str> = out
            .0
            .iter()
            .map(|r| match &r.event {
                Event::Kafka(k) => k.api_name,
                Event::Anomaly(a) => a.kind.as_str(),
                Event::Unanswered(..) => "unanswered",
            })
            .collect();
        assert_eq!(kinds, ["WriteTxnMarkers", "WriteTxnMarkers"]);
        assert_eq!(s.counts.requests.get(&27), Some(&1));
    }

    #[test]
    fn a_connection_whose_first_bytes_are_no_request_is_ignored() {
        let mut s = shared();
        let mut c = KafkaConn::new([40000, 8080], Syn::Syn, &s);
        let mut out = Out::default();
        let http = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        c.data(
            Direction::Forward,
            true,
            http,
            &loc(40000, 8080),
            &|| 0,
            &mut s,
            &mut out,
        );
        assert!(c.is_ignored());
        assert!(out.0.is_empty() && s.detected_ports.is_empty());
    }

    #[test]
    fn an_unanswered_request_is_reported_when_the_connection_ends() {
        let mut s = shared();
        let mut c = KafkaConn::new([40000, 9092], Syn::Syn, &s);
        let mut out = Out::default();
        let (f, b) = (loc(40000, 9092), loc(9092, 40000));
        c.data(
            Direction::Forward,
            true,
            &bytes(SEED_REQUEST),
            &f,
            &|| 0,
            &mut s,
            &mut out,
        );
        c.finish(
            [&f, &b],
            Some([true, true]),
            "the capture ended",
            &mut s,
            &mut out,
        );
        let Event::Anomaly(a) = &out.0[1].event else {
            panic!("{out:?}")
        };
        assert_eq!(a.kind, "no_response");
        assert_eq!((a.request_frame, a.correlation_id), (Some(1), Some(0)));
        assert!(
            a.message.contains("no data of the broker was captured"),
            "{}",
            a.message
        );
    }
}
