//! IPv4 (RFC 791) and IPv6 (RFC 8200, section 4.5) fragment reassembly, bounded.
//!
//! Input: the fragments the packet decoder finds ([`Fragment`]), each with the connection
//! space of the tunnels around it, and the capture time and frame of its packet.
//! Output: the whole datagram's payload once every fragment is there ([`Added::Complete`]),
//! and anomalies: `fragment_overlap` (a fragment whose bytes disagree with those already held
//! for the same offsets; the later copy is kept, as etherparse's buffer keeps it),
//! `bad_fragment` (a fragment no datagram can have: unaligned, past 65,535 bytes, past the
//! last fragment's end), and `fragment_missing` (a datagram given up with fragments missing:
//! after [`FRAGMENT_TIMEOUT_SECS`] of capture time, at the end of the capture, or to make room).
//!
//! Each datagram is rebuilt in etherparse's `IpDefragBuf`. Bounds: at most
//! [`MAX_DATAGRAMS`] datagrams in reassembly, each at most 65,535 bytes in at most
//! [`MAX_PIECES`] pieces, all charged to the run's memory budget (`Holding::Fragments`); past
//! them the oldest is given up. A copy of a fragment of a datagram just made whole (two copies
//! of every packet in a `tcpdump -i any` capture) is recognised by its bytes and passed over;
//! an id used again for other bytes starts a new datagram.

use crate::memory::{alloc_cost, Charge, Holding, Memory};
use crate::vocab::AnomalyKind;
use etherparse::defrag::{IpDefragBuf, IpDefragError};
use etherparse::{IpFragOffset, IpNumber};
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;

/// Capture-time seconds a datagram waits for its missing fragments (30 s, Linux's
/// `ipfrag_time` default).
pub const FRAGMENT_TIMEOUT_SECS: i64 = 30;

/// Most datagrams in reassembly at once (1,024).
pub const MAX_DATAGRAMS: usize = 1024;

/// Most separate pieces one datagram is held in (256): fragments that leave more holes than
/// that (a hostile pattern; real fragments come in order or reversed) give the datagram up,
/// so that adding a fragment stays cheap.
pub const MAX_PIECES: usize = 256;

/// Datagrams remembered once whole (256), with a fingerprint of each of their fragments: a
/// later fragment of the same id with the same offset and bytes is a copy (two copies of
/// every packet in a `tcpdump -i any` capture), not the start of a datagram that would never
/// be whole; a fragment with other bytes starts a new datagram (ids are reused).
const RECENTLY_COMPLETED: usize = 256;

/// A fragment's offset, length and a hash of its bytes.
type Fingerprint = (u16, u16, u64);

fn fingerprint(f: &Fragment<'_>) -> Fingerprint {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    f.data.hash(&mut h);
    (f.offset.value(), f.data.len() as u16, h.finish())
}

/// One fragment, as the packet decoder found it.
#[derive(Debug, Clone, Copy)]
pub struct Fragment<'a> {
    /// The connection space of the tunnels around it (0 outside tunnels).
    pub space: u32,
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// The IPv4 identification (16 bits) or IPv6 fragment header's identification.
    pub id: u32,
    /// The protocol of the whole datagram's payload.
    pub protocol: IpNumber,
    /// Offset of this fragment's data in the datagram's payload.
    pub offset: IpFragOffset,
    /// More fragments follow.
    pub more: bool,
    /// This fragment's data.
    pub data: &'a [u8],
}

/// A datagram made whole: its addresses, its payload's protocol and the payload (without the
/// IP header; give it back with [`Defrag::recycle`]).
#[derive(Debug)]
pub struct Whole {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// The payload's protocol.
    pub protocol: IpNumber,
    /// The payload.
    pub payload: Vec<u8>,
    /// Frame numbers of the packets of its fragments (the first [`MAX_PIECES`]), in arrival
    /// order.
    pub frames: Vec<u64>,
}

/// What adding a fragment came to.
#[derive(Debug)]
pub enum Added {
    /// The datagram waits for more fragments.
    Waiting,
    /// A copy of a fragment of a datagram already whole: nothing to do.
    Duplicate,
    /// The datagram is whole.
    Complete(Whole),
    /// The fragment cannot be placed: `kind` and a sentence (the datagram is given up).
    Bad(AnomalyKind, String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    space: u32,
    src: IpAddr,
    dst: IpAddr,
    id: u32,
    protocol: u8,
}

#[derive(Debug)]
struct Datagram {
    buf: IpDefragBuf,
    /// Capture time (seconds) and frame of its first fragment seen.
    first_seen: i64,
    first_frame: u64,
    fragments: u32,
    /// Bytes charged for it.
    cost: usize,
    /// Its fragments' fingerprints (at most [`MAX_PIECES`] kept).
    prints: Vec<Fingerprint>,
    /// The frames of those fragments.
    frames: Vec<u64>,
}

/// A datagram given up with fragments missing: reported as `fragment_missing`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenUp {
    /// One sentence: the addresses, id, what had arrived and why it was given up.
    pub message: String,
}

/// The datagrams in reassembly.
#[derive(Debug)]
pub struct Defrag {
    active: HashMap<Key, Datagram>,
    /// Keys in order of their first fragment (some may be gone already; compacted when it
    /// holds more than twice the datagrams).
    order: VecDeque<Key>,
    charge: Charge,
    /// The latest datagrams made whole, with their fragments' fingerprints.
    completed: VecDeque<(Key, Vec<Fingerprint>)>,
    /// Datagrams given up for the memory budget (reported at the 1st, 2nd, 4th, ...).
    refused: u64,
    /// Buffers of completed datagrams, for reuse.
    spare: Vec<Vec<u8>>,
    given_up: Vec<GivenUp>,
}

fn datagram_cost(capacity: usize) -> usize {
    alloc_cost(capacity.max(1)) + 128
}

impl Defrag {
    /// An empty pool charging `memory`.
    pub fn new(memory: &Memory) -> Self {
        Defrag {
            active: HashMap::new(),
            order: VecDeque::new(),
            charge: memory.charge(Holding::Fragments),
            completed: VecDeque::new(),
            refused: 0,
            spare: Vec::new(),
            given_up: Vec::new(),
        }
    }

    /// Datagrams in reassembly now.
    pub fn len(&self) -> usize {
        self.active.len()
    }

    /// Whether no datagram is in reassembly.
    pub fn is_empty(&self) -> bool {
        self.active.is_empty()
    }

    /// Adds a fragment seen at capture time `now` (seconds) in frame `frame`. Datagrams past
    /// their timeout are given up first (see [`Defrag::take_given_up`]).
    pub fn add(&mut self, f: &Fragment<'_>, now: i64, frame: u64) -> Added {
        self.expire(now);
        let key = Key {
            space: f.space,
            src: f.src,
            dst: f.dst,
            id: f.id,
            protocol: f.protocol.0,
        };
        let print = fingerprint(f);
        if !self.active.contains_key(&key)
            && self
                .completed
                .iter()
                .any(|(k, prints)| *k == key && prints.contains(&print))
        {
            return Added::Duplicate;
        }
        if !self.active.contains_key(&key) {
            if self.order.len() > 2 * self.active.len() + 64 {
                let active = &self.active;
                self.order.retain(|k| active.contains_key(k));
            }
            while self.active.len() >= MAX_DATAGRAMS {
                self.give_up_oldest(&format!(
                    "given up to make room: more than {MAX_DATAGRAMS} datagrams in reassembly"
                ));
            }
            let data = self.spare.pop().unwrap_or_default();
            self.active.insert(
                key,
                Datagram {
                    buf: IpDefragBuf::new(f.protocol, data, Vec::new()),
                    first_seen: now,
                    first_frame: frame,
                    fragments: 0,
                    cost: 0,
                    prints: Vec::new(),
                    frames: Vec::new(),
                },
            );
            self.order.push_back(key);
        }
        let Some(d) = self.active.get_mut(&key) else {
            return Added::Waiting;
        };
        // Bytes already held for offsets this fragment covers, and whether they differ.
        let start = usize::from(f.offset.byte_offset());
        let mut overlap = 0usize;
        let mut differ = false;
        for s in d.buf.sections() {
            let (a, b) = (usize::from(s.start), usize::from(s.end));
            let (lo, hi) = (a.max(start), b.min(start + f.data.len()));
            if lo < hi {
                overlap += hi - lo;
                let held = d.buf.data().get(lo..hi);
                differ |= held != f.data.get(lo - start..hi - start);
            }
        }
        if let Err(e) = d.buf.add(f.offset, f.more, f.data) {
            let message = match e {
                IpDefragError::UnalignedFragmentPayloadLen { payload_len, .. } => format!(
                    "a fragment of {payload_len} bytes that is not the last is not a multiple of \
                     8 bytes long"
                ),
                IpDefragError::SegmentTooBig { payload_len, .. } => format!(
                    "a fragment of {payload_len} bytes at offset {start} reaches past the \
                     65,535 bytes a datagram can hold"
                ),
                IpDefragError::ConflictingEnd {
                    previous_end,
                    conflicting_end,
                } => format!(
                    "a fragment ends at byte {conflicting_end}, past the end the last fragment \
                     gave ({previous_end})"
                ),
                IpDefragError::AllocationFailure { len } => {
                    format!("{len} bytes could not be allocated for the datagram")
                }
            };
            let message = format!(
                "{message} ({} to {}, id {}); the datagram is given up",
                f.src, f.dst, f.id
            );
            self.remove(&key);
            return Added::Bad(AnomalyKind::BadFragment, message);
        }
        d.fragments += 1;
        if d.prints.len() < MAX_PIECES {
            d.prints.push(print);
            d.frames.push(frame);
        }
        if d.buf.sections().len() > MAX_PIECES {
            let message = format!(
                "a datagram from {} to {} (id {}) came in more than {MAX_PIECES} separate \
                 pieces; it is given up",
                f.src, f.dst, f.id
            );
            self.remove(&key);
            return Added::Bad(AnomalyKind::BadFragment, message);
        }
        let cost = datagram_cost(d.buf.data().capacity())
            + d.buf.sections().capacity() * std::mem::size_of::<etherparse::defrag::IpFragRange>();
        if cost != d.cost {
            if !self.charge.add(cost.saturating_sub(d.cost)) {
                self.charge.note_given_up();
                self.refused += 1;
                if !self.refused.is_power_of_two() {
                    self.remove(&key);
                    return Added::Waiting;
                }
                let message = format!(
                    "a datagram from {} to {} (id {}) was given up for the memory budget ({}; \
                     {} so far, reported at the 1st, 2nd, 4th, ...); {}",
                    f.src,
                    f.dst,
                    f.id,
                    crate::memory::human(self.charge.memory().limit()),
                    self.refused,
                    self.charge.memory().advice()
                );
                self.remove(&key);
                return Added::Bad(AnomalyKind::MemoryLimit, message);
            }
            d.cost = cost;
        }
        if d.buf.is_complete() {
            let Some(d) = self.remove(&key) else {
                return Added::Waiting;
            };
            if self.completed.len() >= RECENTLY_COMPLETED {
                self.completed.pop_front();
            }
            self.completed.push_back((key, d.prints));
            let (payload, _) = d.buf.take_bufs();
            return Added::Complete(Whole {
                src: f.src,
                dst: f.dst,
                protocol: f.protocol,
                payload,
                frames: d.frames,
            });
        }
        if differ {
            return Added::Bad(
                AnomalyKind::FragmentOverlap,
                format!(
                    "a fragment from {} to {} (id {}) overlaps {overlap} bytes already held at \
                     offset {start}, with other bytes; the later copy is kept",
                    f.src, f.dst, f.id
                ),
            );
        }
        Added::Waiting
    }

    /// Gives back the buffer of a completed datagram for reuse.
    pub fn recycle(&mut self, mut buf: Vec<u8>) {
        if self.spare.len() < 4 && buf.capacity() <= 1 << 16 {
            buf.clear();
            self.spare.push(buf);
        }
    }

    fn remove(&mut self, key: &Key) -> Option<Datagram> {
        let d = self.active.remove(key)?;
        self.charge.sub(d.cost);
        Some(d)
    }

    fn give_up_oldest(&mut self, why: &str) {
        while let Some(key) = self.order.pop_front() {
            if let Some(d) = self.remove(&key) {
                self.note(&key, &d, why);
                return;
            }
        }
    }

    fn note(&mut self, key: &Key, d: &Datagram, why: &str) {
        let held: usize = d
            .buf
            .sections()
            .iter()
            .map(|s| usize::from(s.end - s.start))
            .sum();
        let end = match d.buf.end() {
            Some(e) => format!("of {e}"),
            None => "(its last fragment not seen)".to_string(),
        };
        self.given_up.push(GivenUp {
            message: format!(
                "an IP datagram from {} to {} (id {}, first fragment in frame {}) was never \
                 whole: {} fragments gave {held} bytes {end}; {why}",
                key.src, key.dst, key.id, d.first_frame, d.fragments
            ),
        });
    }

    /// Gives up the datagrams whose first fragment is more than [`FRAGMENT_TIMEOUT_SECS`]
    /// before `now`.
    pub fn expire(&mut self, now: i64) {
        while let Some(key) = self.order.front().copied() {
            match self.active.get(&key) {
                None => {
                    self.order.pop_front();
                }
                Some(d) if now.saturating_sub(d.first_seen) > FRAGMENT_TIMEOUT_SECS => {
                    self.order.pop_front();
                    if let Some(d) = self.remove(&key) {
                        self.note(
                            &key,
                            &d,
                            &format!("given up after {FRAGMENT_TIMEOUT_SECS} s of capture time"),
                        );
                    }
                }
                Some(_) => break,
            }
        }
    }

    /// Gives up every datagram still in reassembly (the capture ended).
    pub fn finish(&mut self) {
        while !self.active.is_empty() {
            self.give_up_oldest("the capture ended first");
        }
        self.order.clear();
    }

    /// The datagrams given up since the last call, oldest first.
    pub fn take_given_up(&mut self) -> Vec<GivenUp> {
        std::mem::take(&mut self.given_up)
    }

    /// Whether datagrams were given up since the last [`Defrag::take_given_up`].
    pub fn has_given_up(&self) -> bool {
        !self.given_up.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(offset_units: u16, more: bool, data: &[u8]) -> Fragment<'_> {
        Fragment {
            space: 0,
            src: "10.0.0.1".parse().unwrap(),
            dst: "10.0.0.2".parse().unwrap(),
            id: 7,
            protocol: IpNumber::TCP,
            offset: IpFragOffset::try_new(offset_units).unwrap(),
            more,
            data,
        }
    }

    #[test]
    fn in_order_reversed_and_duplicated() {
        let m = Memory::default();
        let whole: Vec<u8> = (0..24).collect();
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
            let mut d = Defrag::new(&m);
            let parts = [
                frag(0, true, &whole[0..8]),
                frag(1, true, &whole[8..16]),
                frag(2, false, &whole[16..24]),
            ];
            let mut got = None;
            for (n, i) in order.iter().enumerate() {
                match d.add(&parts[*i], 0, n as u64 + 1) {
                    Added::Complete(w) => got = Some(w.payload),
                    Added::Waiting => {}
                    other => panic!("{other:?}"),
                }
            }
            assert_eq!(got.as_deref(), Some(&whole[..]), "{order:?}");
            assert!(d.is_empty());
            assert_eq!(m.used(), 0);
            // A copy of one of its fragments is nothing; a later datagram with the same id
            // and other bytes (ids are reused) is a datagram again.
            assert!(matches!(d.add(&parts[0], 0, 9), Added::Duplicate));
            let other: Vec<u8> = (100..124).collect();
            let again = [
                frag(0, true, &other[0..8]),
                frag(1, true, &other[8..16]),
                frag(2, false, &other[16..24]),
            ];
            for (n, p) in again.iter().enumerate() {
                let r = d.add(p, 100, 10 + n as u64);
                assert_eq!(matches!(r, Added::Complete(_)), n == 2, "{order:?}");
            }
        }
    }

    #[test]
    fn overlaps_that_differ_are_reported_and_missing_ones_time_out() {
        let m = Memory::default();
        let mut d = Defrag::new(&m);
        assert!(matches!(
            d.add(&frag(0, true, &[1; 16]), 0, 1),
            Added::Waiting
        ));
        // The same bytes again: nothing to say.
        assert!(matches!(
            d.add(&frag(1, true, &[1; 8]), 0, 2),
            Added::Waiting
        ));
        match d.add(&frag(1, true, &[2; 8]), 0, 3) {
            Added::Bad(kind, message) => {
                assert_eq!(kind, AnomalyKind::FragmentOverlap);
                assert_eq!(
                    message,
                    "a fragment from 10.0.0.1 to 10.0.0.2 (id 7) overlaps 8 bytes already held \
                     at offset 8, with other bytes; the later copy is kept"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(m.used() > 0);
        d.expire(31);
        assert_eq!(
            d.take_given_up(),
            vec![GivenUp {
                message: "an IP datagram from 10.0.0.1 to 10.0.0.2 (id 7, first fragment in \
                          frame 1) was never whole: 3 fragments gave 16 bytes (its last \
                          fragment not seen); given up after 30 s of capture time"
                    .into()
            }]
        );
        assert_eq!(m.used(), 0);
    }

    #[test]
    fn impossible_fragments_and_the_bounds() {
        let m = Memory::default();
        let mut d = Defrag::new(&m);
        assert!(matches!(
            d.add(&frag(0, true, &[0; 7]), 0, 1),
            Added::Bad(AnomalyKind::BadFragment, _)
        ));
        assert!(d.is_empty());
        assert!(matches!(
            d.add(&frag(0, false, &[0; 8]), 0, 2),
            Added::Complete { .. }
        ));
        // MAX_DATAGRAMS + 1 datagrams: the oldest is given up.
        for id in 0..=MAX_DATAGRAMS as u32 {
            let f = Fragment {
                id: 1000 + id,
                ..frag(0, true, &[0; 8])
            };
            assert!(matches!(d.add(&f, 0, 3), Added::Waiting));
        }
        assert_eq!(d.len(), MAX_DATAGRAMS);
        let gone = d.take_given_up();
        assert_eq!(gone.len(), 1);
        assert!(gone[0].message.contains("id 1000,"), "{gone:?}");
        d.finish();
        assert_eq!(d.take_given_up().len(), MAX_DATAGRAMS);
        assert_eq!(m.used(), 0);
        // A small budget refuses the datagram.
        let small = Memory::new(crate::memory::MIN_MEMORY_LIMIT);
        let mut d = Defrag::new(&small);
        let big = vec![0u8; 65_000];
        let mut refused = false;
        for i in 0..8u16 {
            let f = Fragment {
                id: u32::from(i),
                ..frag(0, true, &big[..64_992])
            };
            refused |= matches!(d.add(&f, 0, 1), Added::Bad(AnomalyKind::MemoryLimit, _));
        }
        assert!(refused);
        assert!(small.used() <= small.limit());
    }
}
