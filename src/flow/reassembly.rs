//! Reassembly of one direction of a TCP connection into its byte stream.
//!
//! Input: the direction's segments in capture order: sequence number, SYN and FIN flags, the
//! captured payload and the number of payload bytes a snaplen cut off its end.
//! Output: [`Delivery`] calls in stream order: bytes, each delivered once, and gaps of known
//! length for bytes that were never captured.
//!
//! Source: RFC 9293 (sequence space, SYN and FIN each take one sequence number).
//!
//! Positions are kept as 64-bit stream offsets (0 = the first byte after the SYN, or the first
//! byte seen when the capture began mid-stream); a sequence number is turned into an offset
//! once, relative to the next expected byte, with [`SeqNum::diff`], so wraparound is handled in
//! exactly one place. In-order payload is delivered straight from the packet, without a copy;
//! only segments that arrive ahead of a hole are copied, at most
//! [`MAX_OUT_OF_ORDER_BYTES`] per direction. When that bound is reached, the hole is declared a
//! gap and the stream moves on.

use super::seq::SeqNum;
use std::collections::BTreeMap;

/// Most bytes held out of order per direction (4 MiB). A hole still open when this much has
/// arrived after it is declared a gap.
pub const MAX_OUT_OF_ORDER_BYTES: usize = 4 * 1024 * 1024;

/// What reassembly hands on, in stream order.
#[derive(Debug, PartialEq, Eq)]
pub enum Delivery<'a> {
    /// The next bytes of the stream.
    Data(&'a [u8]),
    /// This many bytes of the stream were never captured.
    Gap(u64),
}

/// A segment held ahead of a hole: its bytes, then bytes known to exist but cut by snaplen.
#[derive(Debug)]
struct Held {
    data: Vec<u8>,
    missing: u64,
}

impl Held {
    fn len(&self) -> u64 {
        self.data.len() as u64 + self.missing
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
    /// Segments ahead of `next`, by offset.
    held: BTreeMap<u64, Held>,
    held_bytes: usize,
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

    /// Bytes delivered or declared lost so far (the offset of the next byte).
    pub fn delivered(&self) -> u64 {
        self.next
    }

    /// Whether the FIN has been reached: every byte before it was delivered.
    pub fn is_finished(&self) -> bool {
        matches!(self.fin_at, Some(f) if self.next >= f)
    }

    /// Takes one segment. `payload` holds the captured bytes; `cut` more bytes followed them on
    /// the wire but were cut off by the snaplen.
    pub fn segment(
        &mut self,
        seq: SeqNum,
        syn: bool,
        fin: bool,
        payload: &[u8],
        cut: u64,
        deliver: &mut impl FnMut(Delivery<'_>),
    ) {
        if syn && (self.base.is_none() || (self.next == 0 && self.held.is_empty())) {
            self.base = Some(seq.plus(1));
            self.syn_seen = true;
        }
        let data_seq = if syn { seq.plus(1) } else { seq };
        let base = *self.base.get_or_insert(data_seq);
        // Where the segment starts, relative to the next byte we expect.
        let next_seq = base.plus(self.next);
        let rel = data_seq.diff(next_seq);
        let len = payload.len() as u64 + cut;
        if fin {
            let fin_rel = rel + len as i64;
            if fin_rel >= 0 {
                self.fin_at = Some(self.next + fin_rel as u64);
            }
        }
        if len == 0 {
            return;
        }
        if rel + len as i64 <= 0 {
            // Stale: every byte was already delivered (a retransmission).
            return;
        }
        if rel <= 0 {
            // In order, or overlapping what was delivered: hand on the new part, unbuffered.
            let skip = (-rel) as u64;
            self.deliver_part(payload, cut, skip, deliver);
            self.drain(deliver);
        } else {
            // Ahead of a hole: hold a copy.
            let at = self.next + rel as u64;
            let entry = Held {
                data: payload.to_vec(),
                missing: cut,
            };
            match self.held.get(&at) {
                Some(old) if old.len() >= entry.len() => {}
                _ => {
                    self.held_bytes += entry.data.len();
                    if let Some(old) = self.held.insert(at, entry) {
                        self.held_bytes -= old.data.len();
                    }
                }
            }
            if self.held_bytes > MAX_OUT_OF_ORDER_BYTES {
                self.skip_to_held(deliver);
            }
        }
    }

    /// Delivers `payload` then `cut` missing bytes, less the first `skip` bytes.
    fn deliver_part(
        &mut self,
        payload: &[u8],
        cut: u64,
        skip: u64,
        deliver: &mut impl FnMut(Delivery<'_>),
    ) {
        let plen = payload.len() as u64;
        if skip < plen {
            let bytes = &payload[skip as usize..];
            self.next += bytes.len() as u64;
            deliver(Delivery::Data(bytes));
        }
        let missing = (plen + cut).saturating_sub(skip.max(plen));
        if missing > 0 {
            self.next += missing;
            deliver(Delivery::Gap(missing));
        }
    }

    /// Delivers held segments that the stream has reached.
    fn drain(&mut self, deliver: &mut impl FnMut(Delivery<'_>)) {
        while let Some(entry) = self.held.first_entry() {
            let at = *entry.key();
            if at > self.next {
                break;
            }
            let h = entry.remove();
            self.held_bytes -= h.data.len();
            let skip = self.next - at;
            self.deliver_part(&h.data, h.missing, skip, deliver);
        }
    }

    /// Declares the hole before the first held segment a gap and delivers from there on.
    fn skip_to_held(&mut self, deliver: &mut impl FnMut(Delivery<'_>)) {
        if let Some((&at, _)) = self.held.first_key_value() {
            if at > self.next {
                let len = at - self.next;
                self.next = at;
                deliver(Delivery::Gap(len));
            }
            self.drain(deliver);
        }
    }

    /// The direction ended (FIN and RST, or the end of the capture): every held segment is
    /// delivered, with the holes before them as gaps, and bytes before a FIN that never
    /// arrived are a last gap.
    pub fn flush(&mut self, deliver: &mut impl FnMut(Delivery<'_>)) {
        while !self.held.is_empty() {
            self.skip_to_held(deliver);
        }
        self.held_bytes = 0;
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
        let mut out = String::new();
        let mut d = |x: Delivery<'_>| match x {
            Delivery::Data(b) => out.push_str(std::str::from_utf8(b).unwrap()),
            Delivery::Gap(n) => out.push_str(&format!("<{n}>")),
        };
        for &(seq, syn, fin, p, cut) in segs {
            h.segment(SeqNum(seq), syn, fin, p.as_bytes(), cut, &mut d);
        }
        h.flush(&mut d);
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
        let mut gaps = Vec::new();
        let mut bytes = 0usize;
        let mut d = |x: Delivery<'_>| match x {
            Delivery::Data(b) => bytes += b.len(),
            Delivery::Gap(n) => gaps.push(n),
        };
        h.segment(SeqNum(0), true, false, &[], 0, &mut d);
        let chunk = vec![7u8; 64 * 1024];
        // Byte 1 onwards, with byte 0 (offset 0) never arriving.
        let mut seq = 2u32;
        for _ in 0..(MAX_OUT_OF_ORDER_BYTES / chunk.len() + 1) {
            h.segment(SeqNum(seq), false, false, &chunk, 0, &mut d);
            seq += chunk.len() as u32;
        }
        assert_eq!(gaps, vec![1]);
        assert_eq!(
            bytes,
            (MAX_OUT_OF_ORDER_BYTES / chunk.len() + 1) * chunk.len()
        );
    }
}
