//! Which packets carried each frame's bytes, for `--write-pcap`: per direction, the frame
//! number of the packet that delivered each run of stream bytes, the fragments of segments
//! that came in IP fragments, and the frames of the connection's handshake.
//!
//! A connection keeps a [`Trail`] only when `crate::Config::write_pcap` is set. The session
//! notes, before the framer takes them, where each delivery's bytes begin in the direction's
//! stream (the framer's offsets) and which packet carried them (held bytes name the packet that
//! brought them, not the one that released them); a message record then lists every packet
//! whose bytes fall in its frame, the size prefix included, every fragment of those that came
//! in fragments, and the handshake, in `KafkaMessage::packets`. Entries before the frame in
//! progress are dropped as frames complete, so a trail holds only the packets of frames not
//! yet finished: at most [`MAX_TRAIL_ENTRIES`] per direction and [`MAX_FRAGMENTED`] fragmented
//! segments, charged to the run's budget. Packets forgotten past those bounds or for the
//! budget are counted, for the session to report.

use crate::memory::{vec_cost, Charge, Holding, Memory};
use crate::vocab::Direction;
use std::collections::VecDeque;

/// Most packets remembered per direction for the frames in progress (1,048,576: a 1 GiB frame
/// in 1,024-byte segments, 16 MiB); past it the oldest are forgotten, and `--write-pcap`
/// leaves them out.
pub const MAX_TRAIL_ENTRIES: usize = 1 << 20;

/// Most segments made whole from IP fragments remembered per connection, with their
/// fragments' frames (4,096).
pub const MAX_FRAGMENTED: usize = 4096;

/// The packets of one connection that frames' bytes came in. See the module documentation.
#[derive(Debug)]
pub struct Trail {
    /// Frame numbers of the SYN, the SYN-ACK and the SYN sender's next packet (0: not seen).
    handshake: [u64; 3],
    /// The direction that sent the SYN (or received the SYN-ACK), once known.
    client: Option<Direction>,
    /// Per direction: (stream offset of the first byte delivered, frame number of its packet),
    /// in stream order; an entry covers the bytes up to the next one's offset.
    dirs: [VecDeque<(u64, u64)>; 2],
    /// Segments that came in fragments: the frame of the last fragment (the segment's packet),
    /// and the frames of all of them.
    fragmented: VecDeque<(u64, Box<[u64]>)>,
    /// What `dirs` and `fragmented` cost.
    charge: Charge,
    /// Per direction: the packet that carried the next bytes to be noted, when not the one
    /// delivering them (0: that one).
    carried: [u64; 2],
    /// Packets forgotten (past the bounds, or for the budget) since last asked.
    forgotten: u64,
    /// Whether forgotten packets were reported (once per connection).
    reported: bool,
}

impl Trail {
    /// An empty trail charged to `memory`.
    pub fn new(memory: &Memory) -> Self {
        Trail {
            handshake: [0; 3],
            client: None,
            dirs: [VecDeque::new(), VecDeque::new()],
            fragmented: VecDeque::new(),
            charge: memory.charge(Holding::Frames),
            carried: [0; 2],
            forgotten: 0,
            reported: false,
        }
    }

    /// Notes a packet of direction `dir` with TCP flags `syn` and `ack`, in `frame`, for the
    /// handshake: the first SYN, the first SYN-ACK, and the packet after them from the SYN's
    /// sender (its ACK).
    #[inline]
    pub fn packet(&mut self, dir: Direction, syn: bool, ack: bool, frame: u64) {
        if self.handshake[2] != 0 {
            return;
        }
        match (syn, ack) {
            (true, false) if self.handshake[0] == 0 => {
                self.handshake[0] = frame;
                self.client = Some(dir);
            }
            (true, true) if self.handshake[1] == 0 => {
                self.handshake[1] = frame;
                self.client = self.client.or(Some(dir.other()));
            }
            (false, _) if self.handshake[1] != 0 && self.client == Some(dir) => {
                self.handshake[2] = frame;
            }
            _ => {}
        }
    }

    /// Notes that the segment in `frame` was made whole from the IP fragments in `frames`.
    pub fn fragmented(&mut self, frame: u64, frames: &[u64]) {
        if frames.len() < 2 {
            return;
        }
        if self.fragmented.len() >= MAX_FRAGMENTED {
            self.fragmented.pop_front();
            self.forgotten += 1;
        }
        self.fragmented.push_back((frame, frames.into()));
        self.recharge();
    }

    /// Says that the next bytes of direction `dir` to be noted were carried by the packet in
    /// `frame` rather than the one delivering them: held until a later packet filled the hole
    /// before them.
    #[inline]
    pub fn carried_by(&mut self, dir: Direction, frame: u64) {
        self.carried[dir.index()] = frame;
    }

    /// What [`Trail::carried_by`] said of direction `dir`, once (0: nothing).
    #[inline]
    pub fn take_carried(&mut self, dir: Direction) -> u64 {
        std::mem::take(&mut self.carried[dir.index()])
    }

    /// Packets forgotten so far (past the bounds or for the budget), the first time there are
    /// any, for one report per connection; 0 otherwise.
    pub fn take_forgotten(&mut self) -> u64 {
        if self.reported || self.forgotten == 0 {
            return 0;
        }
        self.reported = true;
        self.forgotten
    }

    /// Notes that the bytes of direction `dir` from stream offset `offset` on came in `frame`
    /// (or in the packet [`Trail::carried_by`] named).
    #[inline]
    pub fn note(&mut self, dir: Direction, offset: u64, frame: u64) {
        let frame = match self.take_carried(dir) {
            0 => frame,
            f => f,
        };
        let d = &mut self.dirs[dir.index()];
        if d.back().is_some_and(|last| last.1 == frame) {
            return;
        }
        if d.len() >= MAX_TRAIL_ENTRIES {
            d.pop_front();
            self.forgotten += 1;
        }
        let capacity = d.capacity();
        d.push_back((offset, frame));
        if d.capacity() != capacity {
            self.recharge();
        }
    }

    /// Charges what the trail holds; when refused, gives it all up.
    fn recharge(&mut self) {
        let cost = vec_cost::<(u64, u64)>(self.dirs[0].capacity())
            + vec_cost::<(u64, u64)>(self.dirs[1].capacity())
            + vec_cost::<(u64, Box<[u64]>)>(self.fragmented.capacity())
            + self
                .fragmented
                .iter()
                .map(|(_, f)| vec_cost::<u64>(f.len()))
                .sum::<usize>();
        if cost > self.charge.bytes() && !self.charge.set(cost) {
            // Refused: what is remembered is given up, and those packets are left out.
            self.charge.note_given_up();
            self.forgotten += (self.dirs[0].len() + self.dirs[1].len()) as u64;
            self.forgotten += self.fragmented.len() as u64;
            self.dirs = [VecDeque::new(), VecDeque::new()];
            self.fragmented = VecDeque::new();
            self.charge.set(0);
        }
    }

    /// Forgets the entries of direction `dir` that lie wholly before stream offset `before`
    /// (the start of the frame in progress): those followed by an entry of a greater offset
    /// at or before it.
    #[inline]
    pub fn prune(&mut self, dir: Direction, before: u64) {
        let d = &mut self.dirs[dir.index()];
        while d.len() > 1 && d[1].0 <= before {
            d.pop_front();
        }
    }

    /// Appends to `out` the handshake's frames and those of the packets that carried bytes of
    /// direction `dir` in stream offsets `start..end` (with the fragments of those that came
    /// in fragments), in ascending order, each once.
    pub fn frames(&self, dir: Direction, start: u64, end: u64, out: &mut Vec<u64>) {
        let from = out.len();
        out.extend(self.handshake.iter().copied().filter(|&f| f != 0));
        let d = &self.dirs[dir.index()];
        // Entries are in stream order: the first that can hold `start` is the last at or
        // before it.
        let first = d.partition_point(|e| e.0 <= start).saturating_sub(1);
        for (i, &(offset, frame)) in d.iter().enumerate().skip(first) {
            if offset >= end {
                break;
            }
            let until = d.get(i + 1).map_or(u64::MAX, |next| next.0);
            if until > start {
                out.push(frame);
            }
        }
        if !self.fragmented.is_empty() {
            for i in from..out.len() {
                let f = out[i];
                // In capture order: found by halving.
                let at = self.fragmented.partition_point(|(last, _)| *last < f);
                if let Some((_, all)) = self.fragmented.get(at).filter(|(last, _)| *last == f) {
                    out.extend_from_slice(all);
                }
            }
        }
        out[from..].sort_unstable();
        let mut kept = from;
        for i in from..out.len() {
            if i == from || out[i] != out[kept - 1] {
                out[kept] = out[i];
                kept += 1;
            }
        }
        out.truncate(kept);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_of_a_range_include_the_packets_that_straddle_it_and_the_handshake() {
        let mem = Memory::new(1 << 20);
        let mut t = Trail::new(&mem);
        t.packet(Direction::Forward, true, false, 1);
        t.packet(Direction::Back, true, true, 2);
        t.packet(Direction::Forward, false, true, 3);
        t.packet(Direction::Forward, false, true, 9);
        // Packets 4, 6 and 8 carry stream bytes 0..100, 100..150, 150..300.
        t.note(Direction::Forward, 0, 4);
        t.note(Direction::Forward, 100, 6);
        t.note(Direction::Forward, 150, 8);
        let mut out = Vec::new();
        t.frames(Direction::Forward, 120, 160, &mut out);
        assert_eq!(out, vec![1, 2, 3, 6, 8]);
        out.clear();
        t.frames(Direction::Forward, 0, 100, &mut out);
        assert_eq!(out, vec![1, 2, 3, 4]);
        t.prune(Direction::Forward, 150);
        out.clear();
        // Bytes of one segment that came in two fragments (frames 11 and 12), then bytes held
        // from frame 10 released by frame 13.
        t.fragmented(12, &[11, 12]);
        t.note(Direction::Back, 0, 12);
        t.carried_by(Direction::Back, 10);
        t.note(Direction::Back, 40, 13);
        t.frames(Direction::Back, 0, 10, &mut out);
        assert_eq!(out, vec![1, 2, 3, 11, 12]);
        out.clear();
        t.frames(Direction::Back, 40, 41, &mut out);
        assert_eq!(out, vec![1, 2, 3, 10]);
        t.prune(Direction::Back, 39);
        out.clear();
        t.frames(Direction::Back, 39, 41, &mut out);
        assert_eq!(out, vec![1, 2, 3, 10, 11, 12]);
        t.prune(Direction::Back, 40);
        out.clear();
        t.frames(Direction::Back, 0, 41, &mut out);
        assert_eq!(out, vec![1, 2, 3, 10]);
        out.clear();
        t.frames(Direction::Forward, 0, 1000, &mut out);
        assert_eq!(out, vec![1, 2, 3, 8]);
    }

    #[test]
    fn a_capture_begun_after_the_handshake_has_none_and_the_trail_is_bounded() {
        let mem = Memory::new(64 << 20);
        let mut t = Trail::new(&mem);
        t.packet(Direction::Back, true, true, 5);
        t.packet(Direction::Back, false, true, 6);
        t.packet(Direction::Forward, false, true, 7);
        for i in 0..(MAX_TRAIL_ENTRIES as u64 + 10) {
            t.note(Direction::Back, i * 10, 100 + i);
        }
        let mut out = Vec::new();
        t.frames(Direction::Back, 0, 105, &mut out);
        // The SYN-ACK names the other side the client; the first ten packets were forgotten.
        assert_eq!(out, vec![5, 7, 110]);
        assert_eq!(t.take_forgotten(), 10);
        assert_eq!(t.take_forgotten(), 0);
        assert!(mem.used() > 0);
        drop(t);
        assert_eq!(mem.used(), 0);
    }
}
