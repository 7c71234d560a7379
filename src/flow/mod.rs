//! TCP connections: the connection table, stream indexes, and per-direction reassembly.
//!
//! Input: decoded TCP segments ([`crate::packet::TcpSegment`]) in capture order.
//! Output: for each segment, the connection it belongs to ([`Conn`], carrying the
//! application's per-connection state `T`), which of its two directions the segment travels,
//! and through [`reassembly::HalfStream`] the direction's bytes in order.
//!
//! Connections are keyed by their 4-tuple, without regard to direction. Each gets a stream
//! index, 0-based in order of first packet, as Wireshark's `tcp.stream`. A SYN (with or
//! without ACK) on a 4-tuple whose connection has ended (FIN both ways, or RST), or a SYN
//! without ACK that carries another initial sequence number, starts a new stream. Ended connections leave the table (a small
//! record stays for [`ENDED_MEMORY_SECS`] of capture time, for at most
//! [`MAX_ENDED_CONNECTIONS`] of them), and so do connections idle for
//! [`IDLE_TIMEOUT_SECS`], so memory follows the connections open, not all ever seen.
//! Source: RFC 9293.

pub mod assembler;
pub mod reassembly;
pub mod seq;

use crate::memory::{map_cost, vec_cost, Charge, Holding, Memory};
use crate::vocab::{Direction, Endpoint, Timestamp};
use reassembly::HalfStream;
use seq::SeqNum;
use std::collections::HashMap;
use std::hash::BuildHasher;

/// A direction-free connection key: the two endpoints, lower first, and the connection space
/// (0 outside tunnels; one per tunnel, see [`crate::packet::TcpSegment::space`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key(Endpoint, Endpoint, u32);

impl Key {
    fn new(a: Endpoint, b: Endpoint, space: u32) -> Self {
        if a <= b {
            Key(a, b, space)
        } else {
            Key(b, a, space)
        }
    }
}

/// Capture-time seconds after which a connection that saw no packet is finished and its
/// memory released (10 minutes; Kafka's request timeouts are far shorter).
pub const IDLE_TIMEOUT_SECS: i64 = 600;

/// Capture-time seconds an ended connection (FIN both ways, or RST) is remembered, so that its
/// late packets (the last ACK, a retransmitted FIN) stay in its stream instead of opening one.
pub const ENDED_MEMORY_SECS: i64 = 120;

/// Most ended connections remembered at once (100,000, about 11 MB). Past it, the half that
/// ended first are forgotten, even within [`ENDED_MEMORY_SECS`]: a capture of many short
/// connections in little capture time would otherwise grow with every connection ever seen.
/// A late packet of a forgotten connection opens a stream of its own.
pub const MAX_ENDED_CONNECTIONS: usize = 100_000;

/// Most connections released while open whose stream indexes are remembered (262,144, 4 to
/// 9 MB): past them the oldest are forgotten, and a later packet of theirs starts a new stream.
pub const MAX_RELEASED_CONNECTIONS: usize = 262_144;

/// Most connections held open at once (100,000, about 25 MB). Past it, the half of them seen
/// least recently are finished and released.
pub const MAX_OPEN_CONNECTIONS: usize = 100_000;

/// One TCP connection.
#[derive(Debug)]
pub struct Conn<T> {
    /// Stream index, 0-based in order of first packet.
    pub stream: u64,
    /// `[sender of the first packet, its receiver]`; [`Direction::Forward`] runs from the
    /// first to the second.
    pub endpoints: [Endpoint; 2],
    /// The connection space its packets came in (0 outside tunnels).
    pub space: u32,
    /// Reassembly state per direction (indexed by [`Direction::index`]).
    pub halves: [HalfStream; 2],
    /// FIN seen per direction.
    pub fin: [bool; 2],
    /// The direction whose RST ended the connection, once one did.
    pub reset_by: Option<Direction>,
    /// Capture time (seconds) of the connection's latest packet.
    pub last_seen: i64,
    /// The application's state for this connection.
    pub app: T,
    /// A segment whose acknowledgment covers bytes of the other direction not captured yet,
    /// held back for one packet of the connection ([`Parked`]).
    pub parked: Option<Box<Parked>>,
    /// The close put off while a direction's FIN is ahead of bytes not captured yet, or the
    /// reset put off while packets in flight come ([`Closing`]).
    pub closing: Option<Box<Closing>>,
}

/// A close (a FIN seen in both directions) put off because a direction's FIN came ahead of
/// bytes of that direction the capture has not given yet: `tcpdump -i any` takes a sender's
/// FIN before its last data segment when another core queued that one. The connection ends
/// once those bytes come, or at the capture's packet [`Closing::WAIT_PACKETS`] after the
/// FIN's, or when it would end otherwise (the capture's end); in every case as it would have
/// at the FIN's packet, whose location this keeps.
///
/// A reset is put off too, for [`Closing::WAIT_PACKETS`] packets: its peer's segments in
/// flight when it was sent (a broker's response to a client that reset), and its sender's own
/// sent before it and captured after it, are still decoded; when its sender goes on with the
/// next bytes of its own direction from the RST's sequence number on, the RST was not the
/// connection's end (a stack that answered it with a challenge ACK, RFC 5961 3.2) and the
/// connection goes on ([`Closing::end`], [`Closing::seq`]).
#[derive(Debug)]
pub struct Closing {
    /// Where the FIN that completed the close, or the RST, was captured.
    pub at: crate::vocab::Location,
    /// The frame number from which the close is no longer put off.
    pub until: u64,
    /// How the connection ends when the wait is over: [`End::Closed`] or [`End::Reset`].
    pub end: End,
    /// For a reset, its sequence number: bytes of its sender that end at or before it were
    /// sent before it (captured after it), those from it on after it.
    pub seq: u32,
}

impl Closing {
    /// Packets of the capture (of any connection) a put-off close waits through.
    pub const WAIT_PACKETS: u64 = 32;
}

/// A segment held back because its acknowledgment covers bytes of the other direction that
/// the capture has not given yet: packets captured out of order (`tcpdump -i any` on several
/// cores, a merge), a response before the request it answers (its next segments in the same
/// direction join it). It is taken once packets of the other direction have given the bytes
/// it acknowledged, or after [`Parked::MAX_WAIT`] of them; before a packet of its own
/// direction that does not continue it; and before the connection ends. One per connection,
/// its bytes charged.
#[derive(Debug)]
pub struct Parked {
    /// The direction it was sent in.
    pub dir: Direction,
    /// Its sequence number.
    pub seq: u32,
    /// Its acknowledgment number: the other direction's bytes it waits for.
    pub ack_number: u32,
    /// Packets of the other direction it has waited through (at most
    /// [`Parked::MAX_WAIT`]).
    pub waited: u8,
    /// Its payload (copied), and its next segments' joined to it.
    pub payload: Vec<u8>,
    /// Where in `payload` each next segment joined to it begins, with its packet's frame
    /// number and time (their bytes are taken as those packets').
    pub joined: Vec<(usize, u64, crate::vocab::Timestamp)>,
    /// Its packet's frame number and time.
    pub frame: u64,
    /// See `frame`.
    pub ts: crate::vocab::Timestamp,
    /// The tunnel its packet came in (`crate::vocab::Location::tunnel`).
    pub tunnel: Option<crate::vocab::Tunnel>,
    /// What its payload holds of the memory budget.
    pub charge: crate::memory::Charge,
}

impl Parked {
    /// Most packets of the other direction a held segment waits through for the bytes it
    /// acknowledged (those of a lost packet never come).
    pub const MAX_WAIT: u8 = 8;
}

impl<T> Conn<T> {
    /// The connection's key in the table.
    fn key(&self) -> Key {
        Key::new(self.endpoints[0], self.endpoints[1], self.space)
    }

    /// The direction of a segment from `src`.
    #[inline]
    pub fn dir_of(&self, src: &Endpoint) -> Direction {
        if *src == self.endpoints[0] {
            Direction::Forward
        } else {
            Direction::Back
        }
    }

    /// Notes a segment from `src` with sequence number `seq` and these FIN and RST flags;
    /// returns how the connection ended when it now has (an RST, or a FIN seen in both
    /// directions). An RST whose sequence number is more than [`RST_WINDOW`] from its
    /// direction's next byte is out of any window: a TCP stack drops it (RFC 9293 3.10.7.4,
    /// RFC 5961 3.2), and so does this.
    #[inline]
    pub fn flags(&mut self, src: &Endpoint, seq: SeqNum, fin: bool, rst: bool) -> Option<End> {
        if fin {
            let dir = self.dir_of(src);
            self.fin[dir.index()] = true;
        }
        let rst = rst && {
            let half = &self.halves[self.dir_of(src).index()];
            half.next_seq()
                .is_none_or(|next| seq.diff(next).unsigned_abs() <= RST_WINDOW)
        };
        if rst {
            // The first RST names who reset (one answering it while its end is put off does
            // not).
            if self.reset_by.is_none() {
                self.reset_by = Some(self.dir_of(src));
            }
            Some(End::Reset)
        } else if self.fin[0] && self.fin[1] {
            Some(End::Closed)
        } else {
            None
        }
    }

    /// How the connection ended, as a sentence fragment: [`End::reason`], except that a reset
    /// names who sent it, and whether that side had closed its own first ("the connection was
    /// reset by 127.0.0.1:51468, which had closed its side before": a client gone while its
    /// broker still answered).
    pub fn end_reason(&self, end: End) -> std::borrow::Cow<'static, str> {
        match (end, self.reset_by) {
            (End::Reset, Some(d)) => {
                let by = self.endpoints[d.index()];
                format!(
                    "the connection was reset by {}{}",
                    std::net::SocketAddr::new(by.ip, by.port),
                    if self.fin[d.index()] {
                        ", which had closed its side before"
                    } else {
                        ""
                    }
                )
                .into()
            }
            _ => end.reason().into(),
        }
    }

    /// The endpoints of `dir`, sender first.
    pub fn endpoints_of(&self, dir: Direction) -> (Endpoint, Endpoint) {
        let [a, b] = self.endpoints;
        match dir {
            Direction::Forward => (a, b),
            Direction::Back => (b, a),
        }
    }
}

/// How far (bytes, either way) from its direction's next byte an RST's sequence number may be
/// and still end the connection: 16 MiB, more than any receive window in practice.
pub const RST_WINDOW: u64 = 16 << 20;

/// Packets in a row, each more than [`IDLE_TIMEOUT_SECS`] ahead of the capture clock, that it
/// takes to move the clock there (a single packet with a wrong timestamp, a flipped bit, must
/// not make every open connection idle).
pub const CLOCK_JUMP_PACKETS: u32 = 16;

/// The capture time that sweeps for idle connections ([`FlowTable::expire`]) go by, in
/// seconds: the packets' time, except that it never goes back, and that it jumps ahead by more
/// than [`IDLE_TIMEOUT_SECS`] only when [`CLOCK_JUMP_PACKETS`] packets in a row say so.
/// (Connections note their own packets' times; only the sweep waits for the clock.) A run of
/// fewer packets ahead that the next packet contradicts is kept as a [`ClockJump`], for a
/// `bad_timestamp` anomaly: the times and durations computed from those packets are wrong; so
/// is a run of fewer packets dated more than [`IDLE_TIMEOUT_SECS`] behind the clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct CaptureClock {
    now: Option<i64>,
    ahead: u32,
    /// The first packet of the run ahead: its location and time.
    ahead_first: Option<(u64, Timestamp)>,
    /// Packets in a row dated more than [`IDLE_TIMEOUT_SECS`] behind the clock (the clock
    /// never goes back; a run of [`CLOCK_JUMP_PACKETS`] or more, however long, is left
    /// unreported).
    behind: u32,
    /// The first packet of the run behind: its location and time.
    behind_first: Option<(u64, Timestamp)>,
    /// The last run ahead that was not believed, until taken.
    refused: Option<ClockJump>,
}

/// Packets dated far ahead of the capture clock that the packets after them contradicted
/// ([`CaptureClock::take_refused`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockJump {
    /// The frame (1-based) and time of the first of them.
    pub frame: u64,
    /// See `frame`.
    pub ts: Timestamp,
    /// How many packets in a row were so dated (below [`CLOCK_JUMP_PACKETS`]).
    pub packets: u32,
    /// Seconds they were ahead of the capture clock (the first one's); below zero, behind it.
    pub ahead_secs: i64,
}

impl CaptureClock {
    /// The bookkeeping time for packet `frame` stamped `ts`.
    #[inline]
    pub fn observe(&mut self, frame: u64, ts: &Timestamp) -> i64 {
        let secs = ts.secs;
        let Some(now) = self.now else {
            self.now = Some(secs);
            return secs;
        };
        // (The common case first: a packet of the clock's second or before it.)
        if secs <= now {
            if secs < now.saturating_sub(IDLE_TIMEOUT_SECS) {
                self.behind(frame, ts, now);
            } else if self.ahead > 0 || self.behind > 0 {
                self.refuse(now);
            }
            return now;
        }
        if self.behind > 0 {
            self.refuse(now);
        }
        if secs.saturating_sub(now) <= IDLE_TIMEOUT_SECS {
            if self.ahead > 0 {
                self.refuse(now);
            }
            self.now = Some(secs);
            return secs;
        }
        if self.ahead == 0 {
            self.ahead_first = Some((frame, *ts));
        }
        self.ahead += 1;
        if self.ahead >= CLOCK_JUMP_PACKETS {
            self.ahead = 0;
            self.ahead_first = None;
            self.now = Some(secs);
            return secs;
        }
        now
    }

    /// Notes packet `frame`, stamped `ts`, far behind the clock at `now`: it ends a run ahead,
    /// and begins or continues a run behind.
    #[cold]
    fn behind(&mut self, frame: u64, ts: &Timestamp, now: i64) {
        if self.ahead > 0 {
            self.refuse(now);
        }
        if self.behind == 0 {
            self.behind_first = Some((frame, *ts));
        }
        // (A run of [`CLOCK_JUMP_PACKETS`] or more stays one run, unreported, till a packet
        // back at the clock ends it.)
        self.behind = self.behind.saturating_add(1);
        if self.behind >= CLOCK_JUMP_PACKETS {
            self.behind_first = None;
        }
    }

    /// Notes the run ahead or behind, contradicted: the clock stayed at `now`.
    #[cold]
    fn refuse(&mut self, now: i64) {
        let (first, packets) = match self.ahead_first.take() {
            Some(f) => (Some(f), self.ahead),
            None => (self.behind_first.take(), self.behind),
        };
        if let Some((frame, ts)) = first {
            self.refused = Some(ClockJump {
                frame,
                ts,
                packets,
                ahead_secs: ts.secs.saturating_sub(now),
            });
        }
        self.ahead = 0;
        self.behind = 0;
        self.behind_first = None;
    }

    /// The last run of packets dated far ahead that the packets after them contradicted, once.
    /// (A run the capture ends in is not: the capture may have been quiet that long.)
    #[inline]
    pub fn take_refused(&mut self) -> Option<ClockJump> {
        // (Read before it is written: nearly always there is none.)
        self.refused.as_ref()?;
        self.refused.take()
    }
}

/// Why a connection ends, as the records about what it left unfinished say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// No packet for [`IDLE_TIMEOUT_SECS`] of capture time.
    Idle,
    /// [`MAX_OPEN_CONNECTIONS`] were open: the least recently seen half was released.
    Evicted,
    /// The run's memory budget was exceeded: the least recently seen half was released.
    MemoryLimit,
    /// A SYN on the same 4-tuple started a new connection.
    Replaced,
    /// An RST.
    Reset,
    /// A FIN in both directions.
    Closed,
    /// The capture ended with the connection open.
    CaptureEnded,
}

impl End {
    /// The reason as a sentence fragment: "the connection was reset".
    pub fn reason(self) -> &'static str {
        match self {
            End::Idle => "the connection was idle for 10 minutes of capture time",
            End::Evicted => "too many connections were open; the least recently seen were released",
            End::MemoryLimit => {
                "the memory limit was reached; the least recently seen connections were \
                 released (raise it with --memory-limit)"
            }
            End::Replaced => "the connection was replaced by a new one",
            End::Reset => "the connection was reset",
            End::Closed => "the connection was closed",
            End::CaptureEnded => "the capture ended",
        }
    }
}

/// What the table found for a segment.
pub enum Found<'a, T> {
    /// The connection the segment belongs to. When the segment (a SYN) started a new connection
    /// on a 4-tuple still in use, the previous connection is handed back to be finished.
    Conn(&'a mut Conn<T>, Option<Conn<T>>),
    /// The segment belongs to a connection that has ended: its bytes are not read, and
    /// [`FlowTable::late_bytes`] tells of them.
    Ended,
}

/// A connection that ended (FIN both ways, or RST), remembered for its late packets
/// ([`ENDED_MEMORY_SECS`]).
#[derive(Debug, Clone, Copy)]
struct Ended {
    stream: u64,
    /// Capture time of the end, seconds.
    at: i64,
    /// The next sequence number expected from the key's first endpoint, and from its
    /// second, at the end: known where [`Ended::KNOWN`] is set for it in `flags`.
    next: [u32; 2],
    /// `KNOWN << i` for each direction `i` of `next` whose start was known, [`Ended::RESET`]
    /// when it was reset (else closed), [`Ended::TOLD`] once bytes past its end were
    /// reported. (Packed: 100,000 of these are held, charged to the budget.)
    flags: u8,
}

impl Ended {
    const KNOWN: u8 = 1;
    const RESET: u8 = 4;
    const TOLD: u8 = 8;
}

/// All connections of a capture.
///
/// The connections live in a dense vector, found through a map from their key to their
/// position; the latest packet's connection is remembered, so that a run of packets of one
/// connection (a large frame's segments) is served without hashing at all.
#[derive(Debug)]
pub struct FlowTable<T> {
    conns: Vec<Conn<T>>,
    /// Position in `conns` of each open connection's key. Keyed with foldhash: SipHash (std's
    /// default) cost a tenth of a whole run on the benchmark capture; foldhash is seeded per
    /// process, so a capture cannot choose colliding keys.
    index: HashMap<Key, usize, foldhash::fast::RandomState>,
    /// The position of the connection the latest packet belonged to.
    last: Option<usize>,
    /// Connections that ended, for their late packets.
    ended: HashMap<Key, Ended, foldhash::fast::RandomState>,
    /// Stream indexes of connections the table released while still open (idle, or evicted),
    /// by a 64-bit hash of their key (16 bytes an entry): a later packet of the same 4-tuple
    /// without SYN resumes the stream under its index, as Wireshark's `tcp.stream` would
    /// number it. At most [`MAX_RELEASED_CONNECTIONS`].
    released: HashMap<u64, u64, foldhash::fast::RandomState>,
    /// Whether released connections were forgotten for [`MAX_RELEASED_CONNECTIONS`] since
    /// [`FlowTable::take_forgotten`] last said so.
    forgotten: bool,
    next_stream: u64,
    next_sweep: i64,
    /// What the table's vectors and maps cost, charged to the run's budget (always: past the
    /// budget the least recently seen half of the connections is finished instead).
    charge: Charge,
}

impl<T> Default for FlowTable<T> {
    fn default() -> Self {
        FlowTable::new(&Memory::default())
    }
}

/// The SYN and ACK flags of a segment, as far as they open connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syn {
    /// No SYN.
    No,
    /// SYN without ACK: the client's opening.
    Syn,
    /// SYN with ACK: the server's answer.
    SynAck,
}

impl Syn {
    /// The value for a segment's SYN and ACK flags (RFC 9293, section 3.1).
    pub fn of(syn: bool, ack: bool) -> Self {
        match (syn, ack) {
            (false, _) => Syn::No,
            (true, false) => Syn::Syn,
            (true, true) => Syn::SynAck,
        }
    }
}

impl<T> FlowTable<T> {
    /// An empty table whose memory is charged to `memory`.
    pub fn new(memory: &Memory) -> Self {
        FlowTable {
            conns: Vec::new(),
            index: HashMap::default(),
            last: None,
            ended: HashMap::default(),
            released: HashMap::default(),
            forgotten: false,
            next_stream: 0,
            next_sweep: i64::MIN,
            charge: memory.charge(Holding::Connections),
        }
    }

    /// Charges what the table's vectors and maps take now: the maps by their entries (the
    /// index one per connection room), not their capacity, which after removals depends on
    /// where their keys hashed (with a seed drawn per run), so that the budget, and what it
    /// gives up, is the same in every run.
    fn recharge(&mut self) {
        let cost = vec_cost::<Conn<T>>(self.conns.capacity())
            + map_cost::<Key, usize>(self.conns.capacity())
            + map_cost::<Key, Ended>(self.ended.len())
            + map_cost::<u64, u64>(self.released.len());
        self.charge.force(cost);
    }
    /// Finds the connection of a segment from `src` to `dst` seen at capture time `now`
    /// (seconds), creating it (with `make`'s state) when there is none, or when a SYN starts a
    /// new connection on the 4-tuple: any SYN after the previous connection ended (a capture
    /// may miss the client's SYN and see the server's SYN-ACK first), and a SYN without ACK
    /// with another initial sequence number, or after data was seen without a SYN. `space`
    /// keeps connections of different tunnels apart ([`crate::packet::TcpSegment::space`]).
    // The hot path's one lookup: each value in a register, no struct built per packet.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn lookup(
        &mut self,
        src: Endpoint,
        dst: Endpoint,
        space: u32,
        syn: Syn,
        seq: SeqNum,
        now: i64,
        make: impl FnOnce(u64) -> T,
    ) -> Found<'_, T> {
        let ended = &mut self.ended;
        let next_stream = &mut self.next_stream;
        let mut new_conn = |make: Box<dyn FnOnce(u64) -> T + '_>, resumed: Option<u64>| {
            let stream = resumed.unwrap_or_else(|| {
                *next_stream += 1;
                *next_stream - 1
            });
            Conn {
                stream,
                endpoints: [src, dst],
                space,
                halves: [HalfStream::default(), HalfStream::default()],
                fin: [false; 2],
                reset_by: None,
                last_seen: now,
                app: make(stream),
                parked: None,
                closing: None,
            }
        };
        // At most one hash lookup per packet, none when the packet belongs to the previous
        // packet's connection: the ended-connection records are consulted only when the
        // 4-tuple has no open connection.
        let mut key = None;
        let same = |i: usize| {
            // Equality is cheaper than the ordering a key needs.
            let c = &self.conns[i];
            let [a, b] = &c.endpoints;
            c.space == space && ((*a == src && *b == dst) || (*a == dst && *b == src))
        };
        let at = match self.last {
            Some(i) if same(i) => Some(i),
            _ => {
                let k = Key::new(src, dst, space);
                key = Some(k);
                self.index.get(&k).copied()
            }
        };
        let Some(i) = at else {
            let key = key.unwrap_or_else(|| Key::new(src, dst, space));
            if !ended.is_empty() {
                if syn == Syn::No && ended.contains_key(&key) {
                    return Found::Ended;
                }
                ended.remove(&key);
            }
            let resumed = if self.released.is_empty() {
                None
            } else {
                let h = self.index.hasher().hash_one(key);
                self.released.remove(&h).filter(|_| syn != Syn::Syn)
            };
            let i = self.conns.len();
            let grows = i == self.conns.capacity();
            self.conns.push(new_conn(Box::new(make), resumed));
            self.index.insert(key, i);
            self.last = Some(i);
            if grows {
                self.recharge();
            }
            return Found::Conn(&mut self.conns[i], None);
        };
        self.last = Some(i);
        let c = &mut self.conns[i];
        c.last_seen = c.last_seen.max(now);
        // A SYN while the connection's end is put off ([`Closing`]) starts the next one, as it
        // would have after the end.
        let restart = (syn != Syn::No && c.closing.is_some())
            || syn == Syn::Syn && {
                let h = &c.halves[c.dir_of(&src).index()];
                let other_isn = h.isn().is_some_and(|isn| isn != seq);
                // Data before the SYN, unless the SYN is that data's own (captured late).
                let data_before = h.delivered() > 0 && !h.syn_seen() && !h.late_syn(seq);
                other_isn || data_before
            };
        if restart {
            let old = std::mem::replace(c, new_conn(Box::new(make), None));
            Found::Conn(c, Some(old))
        } else {
            Found::Conn(c, None)
        }
    }

    /// After [`FlowTable::lookup`] found a segment from `src` to `dst` (in connection space
    /// `space`) with `len` payload bytes at `seq` ended ([`Found::Ended`]): how many of its bytes
    /// lie past what their direction had delivered by the connection's end (sent or captured
    /// after it), the first time a late packet of the connection has any, with its stream index
    /// and whether it was reset (else closed by FINs); `None` for a retransmission of bytes read
    /// before the end, after the first such report, and for a connection not followed.
    #[cold]
    #[inline(never)]
    pub fn late_bytes(
        &mut self,
        (src, dst, space): (Endpoint, Endpoint, u32),
        seq: SeqNum,
        len: usize,
    ) -> Option<(u64, u64, bool)> {
        let key = Key::new(src, dst, space);
        let from = usize::from(key.0 != src);
        let ended = self.ended.get_mut(&key)?;
        if ended.flags & Ended::TOLD != 0 || len == 0 {
            return None;
        }
        let len = len as u64;
        let past = if ended.flags & (Ended::KNOWN << from) == 0 {
            len
        } else {
            let end = seq.plus(len);
            u64::try_from(end.diff(SeqNum(ended.next[from])))
                .unwrap_or(0)
                .min(len)
        };
        (past > 0).then(|| {
            ended.flags |= Ended::TOLD;
            (ended.stream, past, ended.flags & Ended::RESET != 0)
        })
    }

    /// The open connection between `a` and `b` in connection space `space`, if any.
    pub fn get_mut(&mut self, a: Endpoint, b: Endpoint, space: u32) -> Option<&mut Conn<T>> {
        let i = *self.index.get(&Key::new(a, b, space))?;
        self.conns.get_mut(i)
    }

    /// Removes and returns the connection of `key`, if open, keeping `conns` dense.
    fn remove(&mut self, key: &Key) -> Option<Conn<T>> {
        let i = self.index.remove(key)?;
        self.last = None;
        let c = self.conns.swap_remove(i);
        if let Some(moved) = self.conns.get(i) {
            let k = moved.key();
            self.index.insert(k, i);
        }
        Some(c)
    }

    /// Removes a connection that ended (its caller finished it) at capture time `now` (in
    /// seconds), in connection space `space`, remembering it for [`ENDED_MEMORY_SECS`] so
    /// that its late packets are recognised; with `watched` false (a connection not known
    /// to be Kafka: not followed, or still being probed), its late bytes are never reported
    /// ([`FlowTable::late_bytes`]).
    #[inline(never)]
    pub fn end(&mut self, a: Endpoint, b: Endpoint, space: u32, now: i64, watched: bool) {
        let key = Key::new(a, b, space);
        if let Some(c) = self.remove(&key) {
            if self.ended.len() >= MAX_ENDED_CONNECTIONS {
                self.forget_oldest_ended();
            }
            let next_of = |e: Endpoint| c.halves[c.dir_of(&e).index()].next_seq();
            let next = [next_of(key.0), next_of(key.1)];
            let mut flags = 0;
            for (i, n) in next.iter().enumerate() {
                if n.is_some() {
                    flags |= Ended::KNOWN << i;
                }
            }
            if c.reset_by.is_some() {
                flags |= Ended::RESET;
            }
            if !watched {
                flags |= Ended::TOLD;
            }
            let ended = Ended {
                stream: c.stream,
                at: now,
                next: next.map(|n| n.map_or(0, |n| n.0)),
                flags,
            };
            self.ended.insert(key, ended);
            if self.ended.len().is_power_of_two() {
                self.recharge();
            }
        }
    }

    /// Remembers the stream indexes of connections released while open, forgetting the
    /// older half (lower stream indexes) when [`MAX_ENDED_CONNECTIONS`] are remembered.
    fn remember_released(&mut self, gone: &[Conn<T>]) {
        if gone.is_empty() {
            return;
        }
        if self.released.len() + gone.len() > MAX_RELEASED_CONNECTIONS {
            self.forgotten = true;
            let mut streams: Vec<u64> = self.released.values().copied().collect();
            let half = streams.len() / 2;
            if half > 0 {
                streams.select_nth_unstable(half);
                let cut = streams[half];
                self.released.retain(|_, s| *s >= cut);
            }
        }
        for c in gone.iter().take(MAX_RELEASED_CONNECTIONS) {
            let h = self.index.hasher().hash_one(c.key());
            self.released.insert(h, c.stream);
        }
        self.released.shrink_to_fit();
        self.recharge();
    }

    /// Whether connections released while open were forgotten (so that a later packet of
    /// theirs would start a new stream index) since the last call.
    pub fn take_forgotten(&mut self) -> bool {
        std::mem::take(&mut self.forgotten)
    }

    /// Forgets the half of the ended connections that ended first (amortised O(1) per end).
    fn forget_oldest_ended(&mut self) {
        let mut ends: Vec<(i64, u64)> = self.ended.values().map(|e| (e.at, e.stream)).collect();
        let half = ends.len() / 2;
        ends.select_nth_unstable(half);
        let cut = ends[half];
        self.ended.retain(|_, e| (e.at, e.stream) >= cut);
    }

    /// At most once a minute of capture time: removes and returns the connections idle for
    /// more than [`IDLE_TIMEOUT_SECS`] (in stream order, to be finished by the caller), and
    /// forgets ended connections older than [`ENDED_MEMORY_SECS`].
    pub fn sweep(&mut self, now: i64) -> Vec<Conn<T>> {
        if !self.sweep_due(now) {
            return Vec::new();
        }
        self.next_sweep = now.saturating_add(60);
        self.ended
            .retain(|_, e| now.saturating_sub(e.at) <= ENDED_MEMORY_SECS);
        let idle: Vec<Key> = self
            .conns
            .iter()
            .filter(|c| now.saturating_sub(c.last_seen) > IDLE_TIMEOUT_SECS)
            .map(|c| c.key())
            .collect();
        let mut out: Vec<Conn<T>> = idle.iter().filter_map(|k| self.remove(k)).collect();
        out.sort_by_key(|c| c.stream);
        self.remember_released(&out);
        out
    }

    /// The connections the table gives up before a segment at capture time `now`, each with
    /// why: idle ones (at most once a minute, [`FlowTable::sweep`]), then, when
    /// [`MAX_OPEN_CONNECTIONS`] are open, the least recently seen half
    /// ([`FlowTable::evict_if_full`]); in stream order within each. Check
    /// [`FlowTable::expiry_due`] first: it is cheap enough for every packet, this is not.
    #[cold]
    #[inline(never)]
    pub fn expire(&mut self, now: i64) -> Vec<(Conn<T>, End)> {
        let mut out: Vec<(Conn<T>, End)> = self
            .sweep(now)
            .into_iter()
            .map(|c| (c, End::Idle))
            .collect();
        let end = if self.full_of_memory() {
            End::MemoryLimit
        } else {
            End::Evicted
        };
        out.extend(self.evict_if_full().into_iter().map(|c| (c, end)));
        out
    }

    /// Whether [`FlowTable::expire`] at capture time `now` would give anything up.
    #[inline]
    pub fn expiry_due(&self, now: i64) -> bool {
        self.sweep_due(now) || self.is_full()
    }

    /// Whether [`FlowTable::sweep`] at capture time `now` would do anything: a check cheap
    /// enough for every packet.
    #[inline]
    pub fn sweep_due(&self, now: i64) -> bool {
        now >= self.next_sweep
    }

    /// Whether [`MAX_OPEN_CONNECTIONS`] are held, or the run's memory budget is nearly full, so
    /// that [`FlowTable::evict_if_full`] would release some.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.conns.len() >= MAX_OPEN_CONNECTIONS
            || (self.charge.memory().pressed() && !self.conns.is_empty())
    }

    /// Why [`FlowTable::is_full`] says so: the memory budget (true) or the count.
    pub fn full_of_memory(&self) -> bool {
        self.conns.len() < MAX_OPEN_CONNECTIONS
    }

    /// When [`FlowTable::is_full`], removes and returns the half of the connections seen least
    /// recently (at least one; in stream order, to be finished by the caller). Amortised O(1)
    /// per connection.
    pub fn evict_if_full(&mut self) -> Vec<Conn<T>> {
        if !self.is_full() {
            return Vec::new();
        }
        let mut seen: Vec<(i64, u64, Key)> = self
            .conns
            .iter()
            .map(|c| (c.last_seen, c.stream, c.key()))
            .collect();
        let half = (seen.len() / 2).max(1);
        seen.select_nth_unstable_by_key(half - 1, |s| (s.0, s.1));
        let mut out: Vec<Conn<T>> = seen[..half]
            .iter()
            .filter_map(|(_, _, k)| self.remove(k))
            .collect();
        out.sort_by_key(|c| c.stream);
        self.remember_released(&out);
        self.conns.shrink_to_fit();
        self.index.shrink_to_fit();
        self.recharge();
        out
    }

    /// Removes and returns every connection, in stream order (for the end of the capture).
    pub fn drain_in_order(&mut self) -> Vec<Conn<T>> {
        let mut all: Vec<Conn<T>> = std::mem::take(&mut self.conns);
        all.sort_by_key(|c| c.stream);
        self.index.clear();
        self.last = None;
        self.ended.clear();
        self.released.clear();
        all
    }

    /// Number of open connections held.
    pub fn len(&self) -> usize {
        self.conns.len()
    }

    /// Whether no open connection is held.
    pub fn is_empty(&self) -> bool {
        self.conns.is_empty()
    }

    /// Number of streams seen so far.
    pub fn streams(&self) -> u64 {
        self.next_stream
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The clock's time for the next packet (frames counted in `frame`), stamped `secs`.
    fn clock_at(c: &mut CaptureClock, frame: &mut u64, secs: i64) -> i64 {
        *frame += 1;
        c.observe(
            *frame,
            &Timestamp {
                secs,
                nanos: 0,
                digits: 6,
            },
        )
    }

    #[test]
    fn the_capture_clock_needs_many_packets_to_jump_and_never_goes_back() {
        let mut c = CaptureClock::default();
        let mut frame = 0;
        let mut at = |c: &mut CaptureClock, secs: i64| clock_at(c, &mut frame, secs);
        assert_eq!(at(&mut c, 1000), 1000);
        assert_eq!(at(&mut c, 990), 1000); // back: stays
        assert_eq!(at(&mut c, 1500), 1500); // within the idle timeout: follows
        assert_eq!(c.take_refused(), None);
        assert_eq!(at(&mut c, 50_000), 1500); // one packet far ahead: not believed
        assert_eq!(c.take_refused(), None); // (not yet contradicted)
        assert_eq!(at(&mut c, 1501), 1501);
        let jump = c.take_refused().unwrap();
        assert_eq!(
            (jump.frame, jump.ts.secs, jump.packets, jump.ahead_secs),
            (4, 50_000, 1, 48_500)
        );
        assert_eq!(c.take_refused(), None); // once
        for _ in 1..CLOCK_JUMP_PACKETS {
            assert_eq!(at(&mut c, 90_000), 1501);
        }
        assert_eq!(at(&mut c, 90_000), 90_000); // a real jump, confirmed
        assert_eq!(c.take_refused(), None);
        assert_eq!(at(&mut c, i64::MIN), 90_000);
        assert_eq!(at(&mut c, i64::MAX), 90_000);
        // The one far behind, contradicted (its time out of range: the pipeline says nothing
        // of it); the packet ahead the capture ends with: contradicted by none.
        assert_eq!(c.take_refused().map(|j| j.ts.secs), Some(i64::MIN));
        assert_eq!(c.take_refused(), None);
    }

    /// From a hostile review: a packet dated an hour behind the clock (its latency an hour
    /// long, unsaid) that the next contradicts is kept, as one ahead is; one within the idle
    /// timeout behind is not, nor a long run behind.
    #[test]
    fn the_capture_clock_keeps_a_packet_far_behind_it() {
        let mut c = CaptureClock::default();
        let mut frame = 0;
        let mut at = |c: &mut CaptureClock, secs: i64| clock_at(c, &mut frame, secs);
        assert_eq!(at(&mut c, 10_000), 10_000);
        assert_eq!(at(&mut c, 10_000 - IDLE_TIMEOUT_SECS), 10_000);
        assert_eq!(at(&mut c, 10_000), 10_000);
        assert_eq!(c.take_refused(), None);
        assert_eq!(at(&mut c, 6_400), 10_000); // an hour behind
        assert_eq!(at(&mut c, 6_401), 10_000);
        assert_eq!(c.take_refused(), None); // (not yet contradicted)
        assert_eq!(at(&mut c, 10_001), 10_001);
        let jump = c.take_refused().unwrap();
        assert_eq!(
            (jump.frame, jump.ts.secs, jump.packets, jump.ahead_secs),
            (4, 6_400, 2, -3_600)
        );
        // Ahead, then behind: the one behind contradicts the one ahead, and is kept next.
        assert_eq!(at(&mut c, 90_000), 10_001);
        assert_eq!(at(&mut c, 1_000), 10_001);
        assert_eq!(
            c.take_refused().map(|j| (j.frame, j.ahead_secs)),
            Some((7, 79_999))
        );
        assert_eq!(at(&mut c, 10_002), 10_002);
        assert_eq!(
            c.take_refused().map(|j| (j.frame, j.ahead_secs)),
            Some((8, -9_001))
        );
        // A long run behind (a merge, a clock set back): not said, whatever its length (once
        // what was left past 16 was, from a hostile review).
        for n in [
            CLOCK_JUMP_PACKETS,
            CLOCK_JUMP_PACKETS + 1,
            2 * CLOCK_JUMP_PACKETS + 1,
        ] {
            for _ in 0..n {
                assert_eq!(at(&mut c, 2_000), 10_002);
            }
            assert_eq!(at(&mut c, 10_002), 10_002);
            assert_eq!(c.take_refused(), None, "{n}");
        }
    }
    use std::net::{IpAddr, Ipv4Addr};

    fn ep(last: u8, port: u16) -> Endpoint {
        Endpoint {
            ip: IpAddr::V4(Ipv4Addr::new(10, 0, 0, last)),
            port,
        }
    }

    /// The stream index of the connection a segment from `a` to `b` finds (creating it).
    fn stream(t: &mut FlowTable<()>, a: Endpoint, b: Endpoint, now: i64) -> u64 {
        stream_syn(t, a, b, Syn::No, now)
    }

    /// The same for a segment with SYN flags `syn`.
    fn stream_syn(t: &mut FlowTable<()>, a: Endpoint, b: Endpoint, syn: Syn, now: i64) -> u64 {
        match t.lookup(a, b, 0, syn, SeqNum(1), now, |_| ()) {
            Found::Conn(c, _) => c.stream,
            Found::Ended => u64::MAX,
        }
    }

    #[test]
    fn connections_keep_their_stream_when_others_leave_the_table() {
        let mut t = FlowTable::default();
        let server = ep(1, 9092);
        let clients: Vec<Endpoint> = (0..5).map(|n| ep(2, 40_000 + n)).collect();
        for (n, c) in clients.iter().enumerate() {
            assert_eq!(stream(&mut t, *c, server, 0), n as u64);
        }
        // The first connection ends: the last one moves into its place in the table.
        t.end(server, clients[0], 0, 1, true);
        assert_eq!(t.len(), 4);
        for (n, c) in clients.iter().enumerate().skip(1).rev() {
            assert_eq!(stream(&mut t, server, *c, 2), n as u64, "client {n}");
            assert_eq!(stream(&mut t, *c, server, 2), n as u64, "client {n}, again");
        }
        // Its late packets are recognised as belonging to an ended connection.
        assert_eq!(stream(&mut t, clients[0], server, 3), u64::MAX);
        // The connection just used ends while it is the remembered one.
        t.end(clients[2], server, 0, 4, true);
        assert_eq!(stream(&mut t, clients[2], server, 5), u64::MAX);
        assert_eq!(stream(&mut t, clients[4], server, 5), 4);
        // Clients 1 and 3 fall idle; client 4 stays busy.
        let late = 5 + IDLE_TIMEOUT_SECS + 1;
        assert_eq!(stream(&mut t, clients[4], server, late), 4);
        let idle: Vec<u64> = t.sweep(late).iter().map(|c| c.stream).collect();
        assert_eq!(idle, vec![1, 3]);
        assert_eq!(t.len(), 1);
        assert_eq!(stream(&mut t, server, clients[4], late), 4);
        // A new connection takes the next stream index.
        assert_eq!(stream(&mut t, ep(3, 50_000), server, late), 5);
        let all: Vec<u64> = t.drain_in_order().iter().map(|c| c.stream).collect();
        assert_eq!(all, vec![4, 5]);
        assert!(t.is_empty());
    }

    #[test]
    fn a_full_table_releases_the_half_seen_least_recently() {
        let mut t = FlowTable::default();
        let server = ep(1, 9092);
        let client = |n: usize| Endpoint {
            ip: IpAddr::V4(Ipv4Addr::from(0x0a01_0000 + (n / 60_000) as u32)),
            port: (n % 60_000) as u16,
        };
        for n in 0..MAX_OPEN_CONNECTIONS {
            // Even streams are seen later than odd ones.
            let now = if n % 2 == 0 {
                1_000 + n as i64
            } else {
                n as i64 / 1_000
            };
            assert_eq!(stream(&mut t, client(n), server, now), n as u64);
        }
        let out: Vec<u64> = t.evict_if_full().iter().map(|c| c.stream).collect();
        assert_eq!(out.len(), MAX_OPEN_CONNECTIONS / 2);
        assert!(
            out.windows(2).all(|w| w[0] < w[1]),
            "released in stream order"
        );
        assert!(
            out.iter().all(|s| s % 2 == 1),
            "the odd streams were seen least recently"
        );
        assert!(t.evict_if_full().is_empty());
        for n in (0..MAX_OPEN_CONNECTIONS).step_by(2_002) {
            assert_eq!(stream(&mut t, server, client(n), 200_000), n as u64);
        }
        assert_eq!(t.len(), MAX_OPEN_CONNECTIONS / 2);
    }

    #[test]
    fn ended_connections_are_bounded_when_capture_time_stands_still() {
        let mut t = FlowTable::default();
        let server = ep(1, 9092);
        let n = MAX_ENDED_CONNECTIONS + MAX_ENDED_CONNECTIONS / 2;
        for i in 0..n {
            let c = Endpoint {
                ip: IpAddr::V4(Ipv4Addr::from(0x0a01_0000 + (i / 60_000) as u32)),
                port: (i % 60_000) as u16,
            };
            assert_eq!(stream(&mut t, c, server, 0), i as u64);
            t.end(c, server, 0, 0, true);
            assert!(t.ended.len() <= MAX_ENDED_CONNECTIONS);
        }
        assert!(t.is_empty());
        // The latest ended are still known; the first were forgotten.
        let last = Endpoint {
            ip: IpAddr::V4(Ipv4Addr::from(0x0a01_0000 + ((n - 1) / 60_000) as u32)),
            port: ((n - 1) % 60_000) as u16,
        };
        assert_eq!(stream(&mut t, last, server, 1), u64::MAX);
        let first = Endpoint {
            ip: IpAddr::V4(Ipv4Addr::from(0x0a01_0000)),
            port: 0,
        };
        assert_eq!(stream(&mut t, first, server, 1), n as u64);
    }

    /// Late bytes of an ended connection: a direction never seen has all its bytes late; said
    /// once per connection; never for a connection not followed.
    #[test]
    fn late_bytes_are_told_once_per_followed_connection() {
        let mut t: FlowTable<()> = FlowTable::default();
        let (client, server) = (ep(2, 40_000), ep(1, 9092));
        assert_eq!(stream(&mut t, client, server, 0), 0);
        t.end(client, server, 0, 0, true);
        let from_server = (server, client, 0);
        assert_eq!(t.late_bytes(from_server, SeqNum(7), 0), None);
        assert_eq!(
            t.late_bytes(from_server, SeqNum(7), 10),
            Some((0, 10, false))
        );
        assert_eq!(t.late_bytes(from_server, SeqNum(17), 10), None);
        // Not followed: never said.
        let other = ep(3, 40_001);
        assert_eq!(stream(&mut t, other, server, 0), 1);
        t.end(other, server, 0, 0, false);
        assert_eq!(t.late_bytes((other, server, 0), SeqNum(7), 10), None);
        // No connection ended there.
        assert_eq!(t.late_bytes((ep(4, 1), server, 0), SeqNum(7), 10), None);
    }

    #[test]
    fn any_syn_opens_a_new_connection_on_an_ended_tuple() {
        let mut t: FlowTable<()> = FlowTable::default();
        let (client, server) = (ep(2, 40_000), ep(1, 9092));
        assert_eq!(stream_syn(&mut t, client, server, Syn::Syn, 0), 0);
        t.end(client, server, 0, 0, true);
        // A late ACK of the ended connection stays with it.
        assert_eq!(stream_syn(&mut t, server, client, Syn::No, 0), u64::MAX);
        // The server's SYN-ACK (the client's SYN not captured) opens the next connection.
        assert_eq!(stream_syn(&mut t, server, client, Syn::SynAck, 0), 1);
        assert_eq!(stream_syn(&mut t, client, server, Syn::No, 0), 1);
    }
}
