//! Reassembly of one direction of a TCP connection into its byte stream.
//!
//! Input: the direction's segments in capture order: sequence number, SYN and FIN flags, the
//! captured payload and the number of payload bytes a snaplen cut off its end.
//! Output: [`Delivery`] calls in stream order: bytes, each delivered once, gaps of known length
//! for bytes that were never captured, and overlaps whose bytes differ from the copy held.
//!
//! Source: RFC 9293 (sequence space; SYN and FIN each take one sequence number).
//!
//! Positions are kept as 64-bit stream offsets (0 = the first byte after the SYN, or the first
//! byte seen when the capture began mid-stream); a sequence number is turned into an offset
//! once, relative to the next expected byte, with [`SeqNum::diff`], so wraparound is handled in
//! exactly one place. In-order payload is delivered straight from the packet, without a copy;
//! only bytes that arrive ahead of a hole are copied. Which ranges are held is kept by an
//! [`Assembler`], apart from the bytes. The first copy of a byte wins (as most receivers do);
//! a later copy that differs is reported. At most [`MAX_OUT_OF_ORDER_BYTES`] are held per
//! direction, and what is held is charged at its real cost to the run's [`Memory`]; when a bound
//! is reached, the hole is declared given up ([`Delivery::GivenUp`]) and the stream moves on.

use super::assembler::Assembler;
use super::seq::SeqNum;
use crate::memory::{alloc_cost, Charge, Holding, Memory};
use std::collections::BTreeMap;

/// Most bytes held out of order per direction (4 MiB). A hole still open when this much has
/// arrived after it is declared a gap.
pub const MAX_OUT_OF_ORDER_BYTES: usize = 4 * 1024 * 1024;

/// The packet that carried held bytes: its frame number and time, so that bytes delivered
/// later (when a hole is filled or declared lost) are still attributed to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Origin {
    /// Frame number of the packet.
    pub frame: u64,
    /// Its timestamp.
    pub ts: crate::vocab::Timestamp,
}

/// What reassembly hands on, in stream order.
#[derive(Debug, PartialEq, Eq)]
pub enum Delivery<'a> {
    /// The next bytes of the stream, from the segment being taken.
    Data(&'a [u8]),
    /// The next bytes of the stream, held since the packet `Origin` carried them (a hole
    /// before them was declared lost: they are attributed to that packet).
    Held(&'a [u8], Origin),
    /// The next bytes of the stream, held since the packet `Origin` carried them, released by
    /// the segment being taken, which filled the hole before them: they complete with it.
    Released(&'a [u8], Origin),
    /// This many bytes of the stream were never captured.
    Gap(u64),
    /// This many bytes of the stream had not arrived when the bytes held after them passed a
    /// bound, and are taken as lost; `memory` says the bound was the run's memory budget
    /// (otherwise [`MAX_OUT_OF_ORDER_BYTES`]).
    GivenUp {
        /// Bytes given up.
        len: u64,
        /// Whether the memory budget was the bound.
        memory: bool,
    },
    /// This many bytes of the segment being taken, after its captured ones, were cut by the
    /// capture's snapshot length: never captured either, but the packet at hand carried them
    /// on the wire (it is when they arrived).
    Cut(u64),
    /// This many bytes of a segment held out of order, after its captured ones, were cut by
    /// the capture's snapshot length: never captured, and carried on the wire by that earlier
    /// packet, not by the packet at hand.
    HeldCut(u64),
    /// A segment repeated held bytes with other contents; the held copy was kept.
    OverlapMismatch {
        /// Stream offset of the first byte that differs.
        at: u64,
        /// How many bytes differ.
        len: u64,
    },
}

/// A held chunk: captured bytes, or bytes known to exist but cut by the snaplen.
#[derive(Debug)]
enum Chunk {
    Data(Vec<u8>, Origin),
    Cut(u64),
}

/// What a store of held bytes costs before its first chunk: itself, and the first node of
/// each of its two B-trees (a leaf holds 11 entries, allocated whole).
const HELD_BASE_COST: usize = alloc_cost(std::mem::size_of::<Held>())
    + alloc_cost(16 + 11 * (8 + std::mem::size_of::<Chunk>()))
    + alloc_cost(16 + 11 * 16);

/// Bytes a held chunk costs beside its contents: its entry in the chunk map and in the range
/// map, B-tree nodes being half full when filled in order (measured with `tools/memory.sh`).
const CHUNK_OVERHEAD: usize = 2 * (8 + std::mem::size_of::<Chunk>()) + 2 * 16;

impl Chunk {
    /// Bytes this chunk really costs while held (see [`CHUNK_OVERHEAD`]).
    fn cost(&self) -> usize {
        CHUNK_OVERHEAD
            + match self {
                Chunk::Data(d, _) => alloc_cost(d.capacity()),
                Chunk::Cut(_) => 0,
            }
    }

    fn len(&self) -> u64 {
        match self {
            Chunk::Data(d, _) => d.len() as u64,
            Chunk::Cut(n) => *n,
        }
    }
}

/// The reassembly state of one direction.
#[derive(Debug, Default)]
pub struct HalfStream {
    /// Sequence number of stream offset 0, once known.
    base: Option<SeqNum>,
    /// Whether the direction was seen from its SYN.
    syn_seen: bool,
    /// Offset of the next byte to deliver.
    next: u64,
    /// Offset of the FIN, once seen.
    fin_at: Option<u64>,
    /// What is held ahead of a hole; allocated only while something is.
    held: Option<Box<Held>>,
    /// Bytes the peer acknowledged that the capture has not given (yet): where they end, and
    /// the packet whose acknowledgment showed them ([`HalfStream::note_unseen`]).
    unseen: Option<Box<(u64, Origin)>>,
}

/// Bytes held ahead of a hole.
#[derive(Debug)]
struct Held {
    /// Which ranges ahead of `next` are held.
    ranges: Assembler,
    /// The held chunks, by offset; they do not overlap.
    chunks: BTreeMap<u64, Chunk>,
    /// What `chunks` and this store cost, charged to the run's budget.
    charge: Charge,
}

impl Held {
    fn new(mem: &Memory) -> Box<Held> {
        let mut charge = mem.charge(Holding::OutOfOrder);
        charge.force(HELD_BASE_COST);
        Box::new(Held {
            ranges: Assembler::default(),
            chunks: BTreeMap::new(),
            charge,
        })
    }

    /// Where `bytes` (which belong at offset `at`) differ from the held copy: the offset of the
    /// first differing byte and how many bytes differ, if any do.
    fn differences(&self, at: u64, bytes: &[u8]) -> Option<(u64, u64)> {
        let end = at + bytes.len() as u64;
        let mut first = None;
        let mut count = 0u64;
        for (&cs, chunk) in self.chunks.range(..end).rev() {
            let ce = cs + chunk.len();
            if ce <= at {
                break;
            }
            if let Chunk::Data(d, _) = chunk {
                let (os, oe) = (cs.max(at), ce.min(end));
                let held = &d[(os - cs) as usize..(oe - cs) as usize];
                let new = &bytes[(os - at) as usize..(oe - at) as usize];
                for (i, _) in held
                    .iter()
                    .zip(new)
                    .enumerate()
                    .filter(|(_, (a, b))| a != b)
                {
                    let o = os + i as u64;
                    first = Some(first.map_or(o, |f: u64| f.min(o)));
                    count += 1;
                }
            }
        }
        first.map(|f| (f, count))
    }
}

impl HalfStream {
    /// Whether the direction was seen from its SYN (so its first byte starts the application's
    /// first message).
    pub fn syn_seen(&self) -> bool {
        self.syn_seen
    }

    /// The SYN's sequence number, if a SYN was seen.
    pub fn isn(&self) -> Option<SeqNum> {
        if self.syn_seen {
            self.base.map(|b| b.plus(u64::from(u32::MAX)))
        } else {
            None
        }
    }

    /// Whether a SYN with sequence number `seq` opens this very direction, seen before it from
    /// its first data byte (a capture that got the first data segment ahead of the SYN):
    /// the SYN's ISN+1 is the sequence number the direction's stream offset 0 was given.
    pub fn late_syn(&self, seq: SeqNum) -> bool {
        !self.syn_seen && self.base == Some(seq.plus(1))
    }

    /// Bytes delivered or declared lost so far (the offset of the next byte).
    pub fn delivered(&self) -> u64 {
        self.next
    }

    /// Bytes charged for what is held out of order (see `Chunk::cost`).
    pub fn held_bytes(&self) -> usize {
        self.held.as_ref().map_or(0, |h| h.charge.bytes())
    }

    /// Takes one segment. `payload` holds the captured bytes; `cut` more bytes followed them on
    /// the wire but were cut off by the snaplen. What is held is charged to `mem`.
    #[allow(clippy::too_many_arguments)]
    pub fn segment(
        &mut self,
        seq: SeqNum,
        syn: bool,
        fin: bool,
        payload: &[u8],
        cut: u64,
        origin: Origin,
        mem: &Memory,
        deliver: &mut impl FnMut(Delivery<'_>),
    ) {
        if syn && (self.base.is_none() || (self.next == 0 && self.held.is_none())) {
            self.base = Some(seq.plus(1));
            self.syn_seen = true;
        } else if syn && self.late_syn(seq) {
            self.syn_seen = true;
        }
        let data_seq = if syn { seq.plus(1) } else { seq };
        let base = *self.base.get_or_insert(data_seq);
        // Where the segment starts, relative to the next byte we expect (within +-2 GiB).
        let rel = data_seq.diff(base.plus(self.next));
        let len = payload.len() as u64 + cut;
        if fin {
            let fin_rel = rel + len as i64;
            if fin_rel >= 0 {
                self.fin_at = Some(self.next + fin_rel as u64);
            }
        }
        if len == 0 {
            // A pure ACK, a keep-alive, or a segment carrying only SYN or FIN.
            return;
        }
        if rel + len as i64 <= 0 {
            // Stale: every byte was delivered already (a retransmission). The copy delivered
            // was not kept, so it cannot be compared.
            return;
        }
        if rel > 0 {
            // Ahead of a hole: hold a copy of what is new.
            self.hold(self.next + rel as u64, payload, cut, origin, mem, deliver);
            self.bound(mem, deliver);
            return;
        }
        // In order, or overlapping what was delivered: hand on the new part, unbuffered, up to
        // the first held byte (the held copy came first and wins); hold the rest.
        let skip = (-rel) as u64;
        // Bytes of the segment (from its first byte) before the first held byte.
        let limit = match self.held.as_ref().and_then(|h| h.ranges.first()) {
            Some((held_start, _)) => held_start - self.next + skip,
            None => u64::MAX,
        };
        let plen = payload.len() as u64;
        if limit >= plen + cut {
            self.deliver_part(payload, cut, skip, None, true, deliver);
        } else {
            let held_start = self.next + (limit - skip);
            let direct = limit.min(plen) as usize;
            let direct_cut = limit.saturating_sub(plen);
            self.deliver_part(&payload[..direct], direct_cut, skip, None, true, deliver);
            let rest_cut = cut - direct_cut.min(cut);
            self.hold(
                held_start,
                &payload[direct..],
                rest_cut,
                origin,
                mem,
                deliver,
            );
        }
        self.drain(false, deliver);
        self.bound(mem, deliver);
    }

    /// While more is held than [`MAX_OUT_OF_ORDER_BYTES`], or the run's budget is exceeded,
    /// gives up the hole before the first held chunk.
    fn bound(&mut self, mem: &Memory, deliver: &mut impl FnMut(Delivery<'_>)) {
        while self.held.is_some() {
            let memory = mem.over();
            if !memory && self.held_bytes() <= MAX_OUT_OF_ORDER_BYTES {
                break;
            }
            if memory {
                mem.note_given_up(Holding::OutOfOrder);
            }
            self.skip_to_held(Some(memory), deliver);
        }
    }

    /// Whether any segment of this direction was captured, a pure acknowledgment included.
    pub fn seen(&self) -> bool {
        self.base.is_some()
    }

    /// The sequence number of the next byte expected, once the stream's start is known.
    pub fn next_seq(&self) -> Option<SeqNum> {
        self.base.map(|b| b.plus(self.next))
    }

    /// Whether the direction's FIN was seen ahead of bytes not delivered yet (a hole before
    /// it: bytes not captured, or captured after it).
    pub fn before_fin(&self) -> bool {
        self.fin_at.is_some_and(|f| f > self.next)
    }

    /// Whether a data segment starting at `seq` is exactly the next byte expected, with
    /// nothing held and the stream's start known: [`HalfStream::segment`] would then hand all
    /// of it on at once and do nothing else (for a segment without SYN, FIN or cut bytes).
    /// Lets the caller consume such a segment itself ([`HalfStream::consumed_in_order`]).
    #[inline]
    pub fn is_next(&self, seq: SeqNum) -> bool {
        self.held.is_none() && self.base.is_some_and(|b| seq == b.plus(self.next))
    }

    /// Records that `len` bytes at the next expected position were consumed by the caller
    /// after [`HalfStream::is_next`] said so; the same as [`HalfStream::segment`] delivering
    /// them.
    #[inline]
    pub fn consumed_in_order(&mut self, len: u64) {
        self.next += len;
    }

    /// Holds the new parts of a segment at `start` (bytes, then `cut` bytes without content),
    /// reporting held bytes it contradicts.
    fn hold(
        &mut self,
        start: u64,
        payload: &[u8],
        cut: u64,
        origin: Origin,
        mem: &Memory,
        deliver: &mut impl FnMut(Delivery<'_>),
    ) {
        let plen = payload.len() as u64;
        let h = self.held.get_or_insert_with(|| Held::new(mem));
        let ins = h.ranges.insert(start, start + plen);
        for (s, e) in ins.overlap {
            let theirs = &payload[(s - start) as usize..(e - start) as usize];
            if let Some((at, len)) = h.differences(s, theirs) {
                deliver(Delivery::OverlapMismatch { at, len });
            }
        }
        let mut new_chunks = Vec::new();
        for (s, e) in ins.new {
            let bytes = payload[(s - start) as usize..(e - start) as usize].to_vec();
            new_chunks.push((s, Chunk::Data(bytes, origin)));
        }
        if cut > 0 {
            for (s, e) in h.ranges.insert(start + plen, start + plen + cut).new {
                new_chunks.push((s, Chunk::Cut(e - s)));
            }
        }
        for (s, chunk) in new_chunks {
            let cost = h.charge.bytes() + chunk.cost();
            h.charge.force(cost);
            h.chunks.insert(s, chunk);
        }
    }

    /// Delivers `payload` then `cut` missing bytes, less the first `skip` bytes; `live` says
    /// they are of the segment being taken (its cut bytes are then [`Delivery::Cut`]).
    fn deliver_part(
        &mut self,
        payload: &[u8],
        cut: u64,
        skip: u64,
        held: Option<(Origin, bool)>,
        live: bool,
        deliver: &mut impl FnMut(Delivery<'_>),
    ) {
        let plen = payload.len() as u64;
        if skip < plen {
            let bytes = &payload[skip as usize..];
            self.next += bytes.len() as u64;
            deliver(match held {
                Some((origin, true)) => Delivery::Held(bytes, origin),
                Some((origin, false)) => Delivery::Released(bytes, origin),
                None => Delivery::Data(bytes),
            });
        }
        let missing = (plen + cut).saturating_sub(skip.max(plen));
        if missing > 0 {
            self.next += missing;
            // Only a held chunk's cut bytes are missing without `live` (a held data chunk has
            // none).
            deliver(if live {
                Delivery::Cut(missing)
            } else {
                Delivery::HeldCut(missing)
            });
        }
    }

    /// Delivers held chunks that the stream has reached; frees the store once empty.
    ///
    /// `declared` says a hole before them was declared lost (rather than filled by the segment
    /// being taken): the bytes are then attributed to the packets that carried them
    /// ([`Delivery::Held`]); otherwise they complete with the segment being taken.
    fn drain(&mut self, declared: bool, deliver: &mut impl FnMut(Delivery<'_>)) {
        loop {
            let Some(h) = self.held.as_mut() else { return };
            let Some(entry) = h.chunks.first_entry() else {
                break;
            };
            let at = *entry.key();
            if at > self.next {
                break;
            }
            let chunk = entry.remove();
            h.charge.sub(chunk.cost());
            let skip = self.next - at;
            match chunk {
                Chunk::Data(d, origin) => {
                    self.deliver_part(&d, 0, skip, Some((origin, declared)), false, deliver)
                }
                Chunk::Cut(n) => self.deliver_part(&[], n, skip, None, false, deliver),
            }
        }
        if let Some(h) = self.held.as_mut() {
            h.ranges.forget_before(self.next);
            if h.chunks.is_empty() {
                self.held = None;
            }
        }
    }

    /// Declares the hole before the first held chunk lost and delivers from there on: a gap,
    /// or with `given_up` ([`Delivery::GivenUp`]) a hole given up for a bound (`Some(true)`:
    /// the memory budget).
    fn skip_to_held(&mut self, given_up: Option<bool>, deliver: &mut impl FnMut(Delivery<'_>)) {
        let first = self
            .held
            .as_ref()
            .and_then(|h| h.chunks.first_key_value().map(|(&at, _)| at));
        if let Some(at) = first {
            if at > self.next {
                let len = at - self.next;
                self.next = at;
                deliver(match given_up {
                    Some(memory) => Delivery::GivenUp { len, memory },
                    None => Delivery::Gap(len),
                });
            }
        }
        self.drain(true, deliver);
    }

    /// The peer acknowledged bytes up to sequence number `ack`. When bytes are held beyond a
    /// hole that the acknowledgment covers, the peer received what the capture missed: the
    /// hole is a gap, and the held bytes up to `ack` are delivered now rather than at the end.
    /// (Without held bytes beyond it, an acknowledgment ahead of the data is left alone: it may
    /// only have been captured before the data.)
    ///
    /// Returns how many bytes past the next expected one the acknowledgment covers when none
    /// is held (at most 16 MiB; 0 otherwise): bytes not captured yet, which may simply come in
    /// a later packet.
    pub fn acked(&mut self, ack: SeqNum, deliver: &mut impl FnMut(Delivery<'_>)) -> u64 {
        let Some(base) = self.base else { return 0 };
        let rel = ack.diff(base.plus(self.next));
        if rel <= 0 {
            return 0;
        }
        if self.held.is_none() {
            return if rel <= 16 << 20 { rel as u64 } else { 0 };
        }
        let acked_to = self.next + rel as u64;
        while let Some(first) = self
            .held
            .as_ref()
            .and_then(|h| h.chunks.first_key_value().map(|(&at, _)| at))
        {
            if first >= acked_to {
                break;
            }
            self.skip_to_held(None, deliver);
        }
        0
    }

    /// Notes that the acknowledgment in the packet `origin` covered `len` bytes past the next
    /// expected one (what [`HalfStream::acked`] returned): they may come later, or be lost.
    pub fn note_unseen(&mut self, len: u64, origin: Origin) {
        let to = self.next.saturating_add(len);
        if self.unseen.as_ref().is_none_or(|u| u.0 < to) {
            self.unseen = Some(Box::new((to, origin)));
        }
    }

    /// Whether bytes the peer acknowledged wait ([`HalfStream::note_unseen`]).
    #[inline]
    pub fn has_unseen(&self) -> bool {
        self.unseen.is_some()
    }

    /// A segment of this direction at sequence number `seq` came: when it starts past the
    /// bytes the peer acknowledged and the capture still lacks, the sender moved on without
    /// them: they are missing (lost, or later than this). Returns how many, from the next
    /// expected byte, and the packet whose acknowledgment showed them; forgets them once they
    /// came.
    #[cold]
    pub fn passed_unseen(&mut self, seq: SeqNum) -> Option<(u64, Origin)> {
        let (end, origin) = *self.unseen.as_deref()?;
        let base = self.base?;
        if self.next >= end {
            self.unseen = None;
            return None;
        }
        let at = self.next as i64 + seq.diff(base.plus(self.next));
        if at >= end as i64 {
            self.unseen = None;
            return Some((end - self.next, origin));
        }
        None
    }

    /// The connection ends: the bytes the peer acknowledged and the capture never gave, from
    /// the next expected byte (how many, and the packet whose acknowledgment showed them), as
    /// [`HalfStream::passed_unseen`] gives them when the sender moves past them; forgotten.
    #[cold]
    pub fn take_unseen(&mut self) -> Option<(u64, Origin)> {
        let (end, origin) = *self.unseen.take()?;
        // Bytes before a FIN seen, or held after a hole, are the flush's to report. A FIN not
        // seen may be what the acknowledgment's last sequence number covers (a sender's last
        // packets lost are often its FIN): that one is not counted as a byte.
        let end = end.saturating_sub(1);
        (end > self.next && self.held.is_none() && self.fin_at.is_none())
            .then(|| (end - self.next, origin))
    }

    /// How many bytes of this direction, from the next expected one, are known to have been
    /// sent although the capture has not delivered them: up to the end of bytes the peer
    /// acknowledged and the capture lacks ([`HalfStream::has_unseen`]), of bytes held after a
    /// hole, or `reached`: a sequence number this direction is known to have reached (the
    /// peer's acknowledgment in the packet at hand, RFC 9293 3.4, or the sequence number of
    /// this direction's packet at hand). 0 when nothing shows that more of this direction was
    /// sent than was delivered.
    pub fn lacking(&self, reached: Option<SeqNum>) -> u64 {
        let unseen = self.unseen.as_deref().map_or(0, |u| u.0);
        let held = self
            .held
            .as_ref()
            .and_then(|h| h.chunks.last_key_value().map(|(&at, c)| at + c.len()))
            .unwrap_or(0);
        let reached = match (reached, self.base) {
            (Some(r), Some(b)) => match r.diff(b.plus(self.next)) {
                d if d > 0 => self.next + d as u64,
                _ => 0,
            },
            _ => 0,
        };
        unseen.max(held).max(reached).saturating_sub(self.next)
    }

    /// Whether acknowledgment `ack` covers bytes of this direction not captured yet, with
    /// nothing held (what [`HalfStream::acked`] returns, without acting on it).
    pub fn acked_ahead(&self, ack: SeqNum) -> bool {
        self.held.is_none()
            && self
                .base
                .is_some_and(|b| (1..=16 << 20).contains(&ack.diff(b.plus(self.next))))
    }

    /// The direction ended (FIN and RST, or the end of the capture): every held chunk is
    /// delivered, with the holes before them as gaps, and bytes before a FIN that never
    /// arrived are a last gap.
    pub fn flush(&mut self, deliver: &mut impl FnMut(Delivery<'_>)) {
        while self.held.is_some() {
            self.skip_to_held(None, deliver);
        }
        if let Some(fin) = self.fin_at {
            if fin > self.next {
                let len = fin - self.next;
                self.next = fin;
                deliver(Delivery::Gap(len));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs segments `(seq, syn, fin, payload, cut)` and renders deliveries as a string:
    /// bytes as text, gaps as `<n>`.
    fn run(segs: &[(u32, bool, bool, &str, u64)]) -> String {
        let mut h = HalfStream::default();
        let budget = Memory::new(usize::MAX / 2);
        let mut out = String::new();
        let mut d = |x: Delivery<'_>| match x {
            Delivery::Data(b) | Delivery::Held(b, _) | Delivery::Released(b, _) => {
                out.push_str(std::str::from_utf8(b).unwrap())
            }
            Delivery::Gap(n)
            | Delivery::Cut(n)
            | Delivery::HeldCut(n)
            | Delivery::GivenUp { len: n, .. } => out.push_str(&format!("<{n}>")),
            Delivery::OverlapMismatch { at, len } => out.push_str(&format!("!{at}+{len}!")),
        };
        for &(seq, syn, fin, p, cut) in segs {
            h.segment(
                SeqNum(seq),
                syn,
                fin,
                p.as_bytes(),
                cut,
                Origin::default(),
                &budget,
                &mut d,
            );
        }
        h.flush(&mut d);
        assert_eq!(budget.used(), 0);
        out
    }

    #[test]
    fn in_order() {
        assert_eq!(
            run(&[
                (99, true, false, "", 0),
                (100, false, false, "abc", 0),
                (103, false, true, "de", 0)
            ]),
            "abcde"
        );
    }

    #[test]
    fn out_of_order_and_retransmitted() {
        assert_eq!(
            run(&[
                (99, true, false, "", 0),
                (103, false, false, "de", 0),
                (100, false, false, "abc", 0),
                (100, false, false, "abc", 0),
                (102, false, false, "cdef", 0),
            ]),
            "abcdef"
        );
    }

    #[test]
    fn overlapping_held_segments() {
        assert_eq!(
            run(&[
                (99, true, false, "", 0),
                (104, false, false, "efg", 0),
                (102, false, false, "cdef", 0),
                (100, false, false, "ab", 0),
            ]),
            "abcdefg"
        );
    }

    #[test]
    fn wraparound() {
        let s = u32::MAX - 1;
        assert_eq!(
            run(&[
                (s, true, false, "", 0),
                (s.wrapping_add(3), false, false, "cd", 0),
                (s.wrapping_add(1), false, false, "ab", 0),
            ]),
            "abcd"
        );
    }

    #[test]
    fn hole_at_end_is_a_gap() {
        assert_eq!(
            run(&[
                (99, true, false, "", 0),
                (100, false, false, "ab", 0),
                (105, false, false, "fg", 0)
            ]),
            "ab<3>fg"
        );
    }

    #[test]
    fn first_copy_wins_and_differences_are_reported() {
        // "cdXf" arrives after "cdef" was held: the held copy is delivered, the X reported.
        assert_eq!(
            run(&[
                (99, true, false, "", 0),
                (102, false, false, "cdef", 0),
                (102, false, false, "cdXf", 0),
                (100, false, false, "ab", 0),
            ]),
            "!4+1!abcdef"
        );
        // An in-order segment running into held bytes: the held copy wins there too.
        assert_eq!(
            run(&[
                (99, true, false, "", 0),
                (103, false, false, "de", 0),
                (100, false, false, "abcXYf", 0),
            ]),
            "abc!3+2!def"
        );
    }

    #[test]
    fn acknowledged_hole_is_a_gap_at_once() {
        let mut h = HalfStream::default();
        let budget = Memory::new(usize::MAX / 2);
        let mut out = String::new();
        let mut d = |x: Delivery<'_>| match x {
            Delivery::Data(b) | Delivery::Held(b, _) | Delivery::Released(b, _) => {
                out.push_str(std::str::from_utf8(b).unwrap())
            }
            Delivery::Gap(n)
            | Delivery::Cut(n)
            | Delivery::HeldCut(n)
            | Delivery::GivenUp { len: n, .. } => out.push_str(&format!("<{n}>")),
            Delivery::OverlapMismatch { .. } => unreachable!(),
        };
        h.segment(
            SeqNum(99),
            true,
            false,
            b"",
            0,
            Origin::default(),
            &budget,
            &mut d,
        );
        h.segment(
            SeqNum(100),
            false,
            false,
            b"ab",
            0,
            Origin::default(),
            &budget,
            &mut d,
        );
        // An acknowledgment ahead of the data, with nothing held: left alone.
        h.acked(SeqNum(104), &mut d);
        h.segment(
            SeqNum(105),
            false,
            false,
            b"fg",
            0,
            Origin::default(),
            &budget,
            &mut d,
        );
        h.segment(
            SeqNum(109),
            false,
            false,
            b"jk",
            0,
            Origin::default(),
            &budget,
            &mut d,
        );
        // The peer got everything up to 108: "cde" is a gap, "fg" delivered; "jk" stays held.
        h.acked(SeqNum(108), &mut d);
        h.segment(
            SeqNum(100),
            false,
            false,
            b"X",
            0,
            Origin::default(),
            &budget,
            &mut d,
        );
        h.flush(&mut d);
        // "X" came after its bytes were declared lost: it is stale, not delivered.
        assert_eq!(out, "ab<3>fg<2>jk");
    }

    #[test]
    fn bytes_missing_before_fin_are_a_gap() {
        assert_eq!(
            run(&[
                (99, true, false, "", 0),
                (100, false, false, "ab", 0),
                (105, false, true, "", 0)
            ]),
            "ab<3>"
        );
    }

    #[test]
    fn mid_stream_start_and_snaplen_cut() {
        assert_eq!(
            run(&[(5000, false, false, "ab", 3), (5005, false, false, "fg", 0)]),
            "ab<3>fg"
        );
        // A retransmission with the whole payload does not deliver the cut bytes twice.
        assert_eq!(
            run(&[
                (5000, false, false, "ab", 3),
                (5000, false, false, "abcde", 0),
                (5005, false, false, "f", 0)
            ]),
            "ab<3>f"
        );
    }

    #[test]
    fn held_bound_declares_gap() {
        let mut h = HalfStream::default();
        let budget = Memory::new(usize::MAX / 2);
        let mut gaps = Vec::new();
        let mut bytes = 0usize;
        let mut d = |x: Delivery<'_>| match x {
            Delivery::Data(b) | Delivery::Held(b, _) | Delivery::Released(b, _) => bytes += b.len(),
            Delivery::Gap(n)
            | Delivery::Cut(n)
            | Delivery::HeldCut(n)
            | Delivery::GivenUp { len: n, .. } => gaps.push(n),
            Delivery::OverlapMismatch { .. } => panic!("no overlap here"),
        };
        h.segment(
            SeqNum(0),
            true,
            false,
            &[],
            0,
            Origin::default(),
            &budget,
            &mut d,
        );
        let chunk = vec![7u8; 64 * 1024];
        // Byte 1 onwards, with byte 0 (offset 0) never arriving.
        let mut seq = 2u32;
        for _ in 0..(MAX_OUT_OF_ORDER_BYTES / chunk.len() + 1) {
            h.segment(
                SeqNum(seq),
                false,
                false,
                &chunk,
                0,
                Origin::default(),
                &budget,
                &mut d,
            );
            seq += chunk.len() as u32;
        }
        assert_eq!(gaps, vec![1]);
        assert_eq!(
            bytes,
            (MAX_OUT_OF_ORDER_BYTES / chunk.len() + 1) * chunk.len()
        );
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        /// Segments of `data` (ISN 999), cut at `cuts`, as (seq, bytes) pairs.
        fn segments(data: &[u8], cuts: &[usize]) -> Vec<(u32, Vec<u8>)> {
            let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (data.len() + 1)).collect();
            cuts.push(0);
            cuts.push(data.len());
            cuts.sort();
            cuts.dedup();
            cuts.windows(2)
                .map(|w| (1000u32.wrapping_add(w[0] as u32), data[w[0]..w[1]].to_vec()))
                .collect()
        }

        /// Runs a SYN, the segments in the given order, and a FIN at the end of `len` bytes;
        /// returns the delivered bytes with gaps as `None`.
        fn deliver(order: &[(u32, Vec<u8>)], len: usize) -> Vec<Option<u8>> {
            let mut h = HalfStream::default();
            let budget = Memory::new(usize::MAX / 2);
            let mut out = Vec::new();
            let mut d = |x: Delivery<'_>| match x {
                Delivery::Data(b) | Delivery::Held(b, _) | Delivery::Released(b, _) => {
                    out.extend(b.iter().map(|&b| Some(b)))
                }
                Delivery::Gap(n)
                | Delivery::Cut(n)
                | Delivery::HeldCut(n)
                | Delivery::GivenUp { len: n, .. } => {
                    out.extend(std::iter::repeat_n(None, n as usize))
                }
                Delivery::OverlapMismatch { .. } => panic!("copies are identical"),
            };
            h.segment(
                SeqNum(999),
                true,
                false,
                &[],
                0,
                Origin::default(),
                &budget,
                &mut d,
            );
            for (seq, bytes) in order {
                h.segment(
                    SeqNum(*seq),
                    false,
                    false,
                    bytes,
                    0,
                    Origin::default(),
                    &budget,
                    &mut d,
                );
            }
            h.segment(
                SeqNum(1000u32.wrapping_add(len as u32)),
                false,
                true,
                &[],
                0,
                Origin::default(),
                &budget,
                &mut d,
            );
            h.flush(&mut d);
            assert_eq!(budget.used(), 0);
            out
        }

        proptest! {
            /// Any reordering, duplication and re-segmentation delivers the same bytes, once.
            #[test]
            fn reordered_duplicated_resegmented(
                data in prop::collection::vec(any::<u8>(), 1..3000),
                cuts in prop::collection::vec(any::<usize>(), 0..20),
                recuts in prop::collection::vec(any::<usize>(), 0..20),
                swaps in prop::collection::vec((any::<usize>(), any::<usize>()), 0..20),
                dups in prop::collection::vec(any::<usize>(), 0..6),
            ) {
                let mut order = segments(&data, &cuts);
                // Retransmissions with other boundaries.
                order.extend(segments(&data, &recuts).into_iter().filter(|s| s.0 % 3 == 0));
                for d in dups {
                    let s = order[d % order.len()].clone();
                    order.push(s);
                }
                let n = order.len();
                for (a, b) in swaps {
                    order.swap(a % n, b % n);
                }
                let got = deliver(&order, data.len());
                let want: Vec<Option<u8>> = data.iter().map(|&b| Some(b)).collect();
                prop_assert_eq!(got, want);
            }

            /// Dropping segments delivers exactly the bytes captured, the rest as gaps, in place.
            #[test]
            fn dropped_segments_become_gaps(
                data in prop::collection::vec(any::<u8>(), 1..3000),
                cuts in prop::collection::vec(any::<usize>(), 1..20),
                keep in prop::collection::vec(any::<bool>(), 20),
            ) {
                let segs = segments(&data, &cuts);
                let mut want: Vec<Option<u8>> = vec![None; data.len()];
                let mut order = Vec::new();
                for (i, s) in segs.iter().enumerate() {
                    if keep[i % keep.len()] {
                        let at = s.0.wrapping_sub(1000) as usize;
                        for (j, b) in s.1.iter().enumerate() {
                            want[at + j] = Some(*b);
                        }
                        order.push(s.clone());
                    }
                }
                order.reverse();
                prop_assert_eq!(deliver(&order, data.len()), want);
            }
        }
    }
}
