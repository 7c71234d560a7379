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
//! initial sequence number, starts a new stream. Source: RFC 9293.

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
    /// Whether the connection has ended (FIN both ways and all delivered, or RST) and was
    /// flushed; later packets on it are ignored until a new SYN.
    pub ended: bool,
    /// The application's state for this connection.
    pub app: T,
}

impl<T> Conn<T> {
    /// The direction of a segment from `src`.
    pub fn dir_of(&self, src: &Endpoint) -> usize {
        usize::from(*src != self.endpoints[0])
    }
}

/// What the table did with a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// The segment belongs to an existing connection.
    Existing,
    /// The segment opened a new connection.
    New,
    /// The segment opened a new stream on a 4-tuple whose previous connection is handed back
    /// for finishing.
    Reused,
}

/// All connections of a capture.
#[derive(Debug)]
pub struct FlowTable<T> {
    conns: HashMap<Key, Conn<T>>,
    next_stream: u64,
}

impl<T> Default for FlowTable<T> {
    fn default() -> Self {
        FlowTable {
            conns: HashMap::new(),
            next_stream: 0,
        }
    }
}

impl<T> FlowTable<T> {
    /// Finds the connection of a segment from `src` to `dst`, creating it (with `make`'s state)
    /// when there is none, or when a SYN without ACK starts a new connection on the 4-tuple.
    /// For [`Lookup::Reused`], the previous connection is returned beside the new one so that
    /// the caller can finish it first.
    pub fn lookup(
        &mut self,
        src: Endpoint,
        dst: Endpoint,
        pure_syn: bool,
        seq: SeqNum,
        make: impl FnOnce(u64) -> T,
    ) -> (&mut Conn<T>, Lookup, Option<Conn<T>>) {
        let key = Key::new(src, dst);
        let next_stream = &mut self.next_stream;
        let mut new_conn = |make: Box<dyn FnOnce(u64) -> T + '_>| {
            let stream = *next_stream;
            *next_stream += 1;
            Conn {
                stream,
                endpoints: [src, dst],
                halves: [HalfStream::default(), HalfStream::default()],
                fin: [false; 2],
                ended: false,
                app: make(stream),
            }
        };
        match self.conns.entry(key) {
            Entry::Vacant(v) => (v.insert(new_conn(Box::new(make))), Lookup::New, None),
            Entry::Occupied(e) => {
                let c = e.into_mut();
                let restart = pure_syn && {
                    let h = &c.halves[c.dir_of(&src)];
                    let other_isn = h.isn().is_some_and(|isn| isn != seq);
                    let data_before = h.delivered() > 0 && !h.syn_seen();
                    c.ended || other_isn || data_before
                };
                if restart {
                    let old = std::mem::replace(c, new_conn(Box::new(make)));
                    (c, Lookup::Reused, Some(old))
                } else {
                    (c, Lookup::Existing, None)
                }
            }
        }
    }

    /// Removes and returns every connection, in stream order (for the end of the capture).
    pub fn drain_in_order(&mut self) -> Vec<Conn<T>> {
        let mut all: Vec<Conn<T>> = self.conns.drain().map(|(_, c)| c).collect();
        all.sort_by_key(|c| c.stream);
        all
    }

    /// Number of connections held.
    pub fn len(&self) -> usize {
        self.conns.len()
    }

    /// Whether no connection is held.
    pub fn is_empty(&self) -> bool {
        self.conns.is_empty()
    }

    /// Number of streams seen so far.
    pub fn streams(&self) -> u64 {
        self.next_stream
    }
}
