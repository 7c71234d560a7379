//! TCP connections: the connection table, stream indexes, and per-direction reassembly.
//!
//! Input: decoded TCP segments ([`crate::packet::TcpSegment`]) in capture order.
//! Output: for each segment, the connection it belongs to ([`Conn`], carrying the
//! application's per-connection state `T`), which of its two directions the segment travels,
//! and through [`reassembly::HalfStream`] the direction's bytes in order.
//!
//! Connections are keyed by their 4-tuple, without regard to direction. Each gets a stream
//! index, 0-based in order of first packet, as Wireshark's `tcp.stream`. A SYN (without ACK)
//! on a 4-tuple whose connection has ended (FIN both ways, or RST), or whose SYN carried another
//! initial sequence number, starts a new stream. Ended connections leave the table (a small
//! record stays for [`ENDED_MEMORY_SECS`] of capture time), and so do connections idle for
//! [`IDLE_TIMEOUT_SECS`], so memory follows the connections open, not all ever seen.
//! Source: RFC 9293.

pub mod assembler;
pub mod reassembly;
pub mod seq;

use crate::output::Endpoint;
use reassembly::HalfStream;
use seq::SeqNum;
use std::collections::hash_map::Entry;
use std::collections::HashMap;

/// A direction-free connection key: the two endpoints, lower first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key(Endpoint, Endpoint);

impl Key {
    fn new(a: Endpoint, b: Endpoint) -> Self {
        if a <= b {
            Key(a, b)
        } else {
            Key(b, a)
        }
    }
}

/// Capture-time seconds after which a connection that saw no packet is finished and its
/// memory released (10 minutes; Kafka's request timeouts are far shorter).
pub const IDLE_TIMEOUT_SECS: i64 = 600;

/// Capture-time seconds an ended connection (FIN both ways, or RST) is remembered, so that its
/// late packets (the last ACK, a retransmitted FIN) stay in its stream instead of opening one.
pub const ENDED_MEMORY_SECS: i64 = 120;

/// Most connections held open at once (100,000, about 60 MB). Past it, the half of them seen
/// least recently are finished and released.
pub const MAX_OPEN_CONNECTIONS: usize = 100_000;

/// One TCP connection.
#[derive(Debug)]
pub struct Conn<T> {
    /// Stream index, 0-based in order of first packet.
    pub stream: u64,
    /// `[sender of the first packet, its receiver]`; direction 0 runs from the first to the
    /// second, direction 1 back.
    pub endpoints: [Endpoint; 2],
    /// Reassembly state per direction.
    pub halves: [HalfStream; 2],
    /// FIN seen per direction.
    pub fin: [bool; 2],
    /// Capture time (seconds) of the connection's latest packet.
    pub last_seen: i64,
    /// The application's state for this connection.
    pub app: T,
}

impl<T> Conn<T> {
    /// The direction of a segment from `src`.
    pub fn dir_of(&self, src: &Endpoint) -> usize {
        usize::from(*src != self.endpoints[0])
    }
}

/// What the table found for a segment.
pub enum Found<'a, T> {
    /// The connection the segment belongs to. When the segment (a SYN) started a new connection
    /// on a 4-tuple still in use, the previous connection is handed back to be finished.
    Conn(&'a mut Conn<T>, Option<Conn<T>>),
    /// The segment belongs to a connection that has ended: nothing more to do with it.
    Ended,
}

/// All connections of a capture.
#[derive(Debug)]
pub struct FlowTable<T> {
    conns: HashMap<Key, Conn<T>>,
    /// Connections that ended: stream index and capture time of the end.
    ended: HashMap<Key, (u64, i64)>,
    next_stream: u64,
    next_sweep: i64,
}

impl<T> Default for FlowTable<T> {
    fn default() -> Self {
        FlowTable {
            conns: HashMap::new(),
            ended: HashMap::new(),
            next_stream: 0,
            next_sweep: i64::MIN,
        }
    }
}

impl<T> FlowTable<T> {
    /// Finds the connection of a segment from `src` to `dst` seen at capture time `now`
    /// (seconds), creating it (with `make`'s state) when there is none, or when a SYN without
    /// ACK starts a new connection on the 4-tuple (after the previous one ended, or with another
    /// initial sequence number, or after data was seen without a SYN).
    pub fn lookup(
        &mut self,
        src: Endpoint,
        dst: Endpoint,
        pure_syn: bool,
        seq: SeqNum,
        now: i64,
        make: impl FnOnce(u64) -> T,
    ) -> Found<'_, T> {
        let key = Key::new(src, dst);
        let ended = &mut self.ended;
        let next_stream = &mut self.next_stream;
        let mut new_conn = |make: Box<dyn FnOnce(u64) -> T + '_>| {
            let stream = *next_stream;
            *next_stream += 1;
            Conn {
                stream,
                endpoints: [src, dst],
                halves: [HalfStream::default(), HalfStream::default()],
                fin: [false; 2],
                last_seen: now,
                app: make(stream),
            }
        };
        // One hash lookup per packet: the ended-connection records are consulted only when
        // the 4-tuple has no open connection.
        match self.conns.entry(key) {
            Entry::Vacant(v) => {
                if !ended.is_empty() {
                    if !pure_syn && ended.contains_key(&key) {
                        return Found::Ended;
                    }
                    ended.remove(&key);
                }
                Found::Conn(v.insert(new_conn(Box::new(make))), None)
            }
            Entry::Occupied(e) => {
                let c = e.into_mut();
                c.last_seen = c.last_seen.max(now);
                let restart = pure_syn && {
                    let h = &c.halves[c.dir_of(&src)];
                    let other_isn = h.isn().is_some_and(|isn| isn != seq);
                    let data_before = h.delivered() > 0 && !h.syn_seen();
                    other_isn || data_before
                };
                if restart {
                    let old = std::mem::replace(c, new_conn(Box::new(make)));
                    Found::Conn(c, Some(old))
                } else {
                    Found::Conn(c, None)
                }
            }
        }
    }

    /// Removes a connection that ended (its caller finished it) at capture time `now`,
    /// remembering it for [`ENDED_MEMORY_SECS`] so that its late packets are recognised.
    pub fn end(&mut self, a: Endpoint, b: Endpoint, now: i64) {
        let key = Key::new(a, b);
        if let Some(c) = self.conns.remove(&key) {
            self.ended.insert(key, (c.stream, now));
        }
    }

    /// At most once a minute of capture time: removes and returns the connections idle for
    /// more than [`IDLE_TIMEOUT_SECS`] (in stream order, to be finished by the caller), and
    /// forgets ended connections older than [`ENDED_MEMORY_SECS`].
    pub fn sweep(&mut self, now: i64) -> Vec<Conn<T>> {
        if now < self.next_sweep {
            return Vec::new();
        }
        self.next_sweep = now.saturating_add(60);
        self.ended
            .retain(|_, (_, at)| now.saturating_sub(*at) <= ENDED_MEMORY_SECS);
        let idle: Vec<Key> = self
            .conns
            .iter()
            .filter(|(_, c)| now.saturating_sub(c.last_seen) > IDLE_TIMEOUT_SECS)
            .map(|(k, _)| *k)
            .collect();
        let mut out: Vec<Conn<T>> = idle.iter().filter_map(|k| self.conns.remove(k)).collect();
        out.sort_by_key(|c| c.stream);
        out
    }

    /// When [`MAX_OPEN_CONNECTIONS`] are held, removes and returns the half of them seen least
    /// recently (in stream order, to be finished by the caller). Amortised O(1) per connection.
    pub fn evict_if_full(&mut self) -> Vec<Conn<T>> {
        if self.conns.len() < MAX_OPEN_CONNECTIONS {
            return Vec::new();
        }
        let mut seen: Vec<(i64, u64, Key)> = self
            .conns
            .iter()
            .map(|(k, c)| (c.last_seen, c.stream, *k))
            .collect();
        let half = seen.len() / 2;
        seen.select_nth_unstable_by_key(half, |s| (s.0, s.1));
        let mut out: Vec<Conn<T>> = seen[..half]
            .iter()
            .filter_map(|(_, _, k)| self.conns.remove(k))
            .collect();
        out.sort_by_key(|c| c.stream);
        out
    }

    /// Removes and returns every connection, in stream order (for the end of the capture).
    pub fn drain_in_order(&mut self) -> Vec<Conn<T>> {
        let mut all: Vec<Conn<T>> = self.conns.drain().map(|(_, c)| c).collect();
        all.sort_by_key(|c| c.stream);
        self.ended.clear();
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
