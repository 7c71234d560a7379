//! Which packets carried each frame's bytes, for `--write-pcap`: per direction, the frame
//! number of the packet that delivered each run of stream bytes, and the frames of the
//! connection's handshake.
//!
//! A connection keeps a [`Trail`] only when `crate::Config::write_pcap` is set. The session
//! notes, before the framer takes them, where each delivery's bytes begin in the direction's
//! stream (the framer's offsets) and which packet carried them (held bytes name the packet that
//! brought them, not the one that released them); a message record then lists every packet
//! whose bytes fall in its frame, the size prefix included, and the handshake, in
//! `KafkaMessage::packets`. Entries before the frame in progress are dropped as frames
//! complete, so a trail holds only the packets of frames not yet finished, at most
//! [`MAX_TRAIL_ENTRIES`] per direction, charged to the run's budget.

use crate::memory::{vec_cost, Charge, Holding, Memory};
use crate::vocab::Direction;
use std::collections::VecDeque;

/// Most packets remembered per direction for the frame in progress (65,536: a 64 MiB frame in
/// 1,024-byte segments); past it the oldest are forgotten, and `--write-pcap` leaves them out.
pub const MAX_TRAIL_ENTRIES: usize = 65_536;

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
    /// What `dirs` costs.
    charge: Charge,
    /// Per direction: the packets that carried the next bytes to be noted, when not the one
    /// delivering them alone.
    carried: [Vec<u64>; 2],
}

impl Trail {
    /// An empty trail charged to `memory`.
    pub fn new(memory: &Memory) -> Self {
        Trail {
            handshake: [0; 3],
            client: None,
            dirs: [VecDeque::new(), VecDeque::new()],
            charge: memory.charge(Holding::Frames),
            carried: [Vec::new(), Vec::new()],
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

    /// Says that the next bytes of direction `dir` to be noted were carried by the packets in
    /// `frames` rather than the one delivering them: held until a later packet filled the
    /// hole before them, or reassembled from IP fragments.
    #[inline]
    pub fn carried_by(&mut self, dir: Direction, frames: &[u64]) {
        self.carried[dir.index()].clear();
        self.carried[dir.index()].extend_from_slice(frames);
    }

    /// Forgets what [`Trail::carried_by`] said of direction `dir` (its bytes went elsewhere).
    #[inline]
    pub fn forget_carried(&mut self, dir: Direction) {
        self.carried[dir.index()].clear();
    }

    /// Notes that the bytes of direction `dir` from stream offset `offset` on came in `frame`
    /// (or in the packets [`Trail::carried_by`] named, once).
    #[inline]
    pub fn note(&mut self, dir: Direction, offset: u64, frame: u64) {
        let carried = std::mem::take(&mut self.carried[dir.index()]);
        if carried.is_empty() {
            self.push(dir, offset, frame);
        } else {
            for &f in &carried {
                self.push(dir, offset, f);
            }
        }
        self.carried[dir.index()] = carried;
        self.carried[dir.index()].clear();
    }

    fn push(&mut self, dir: Direction, offset: u64, frame: u64) {
        let d = &mut self.dirs[dir.index()];
        if d.back().is_some_and(|last| last.1 == frame) {
            return;
        }
        if d.len() >= MAX_TRAIL_ENTRIES {
            d.pop_front();
        }
        d.push_back((offset, frame));
        let cost = vec_cost::<(u64, u64)>(self.dirs[0].capacity())
            + vec_cost::<(u64, u64)>(self.dirs[1].capacity());
        if cost > self.charge.bytes() && !self.charge.set(cost) {
            // Refused: what is remembered is given up, and those packets are left out.
            self.charge.note_given_up();
            self.dirs = [VecDeque::new(), VecDeque::new()];
            self.charge.set(0);
        }
    }

    /// Forgets the entries of direction `dir` that lie wholly before stream offset `before`
    /// (the start of the frame in progress): those followed by an entry of a greater offset
    /// at or before it.
    #[inline]
    pub fn prune(&mut self, dir: Direction, before: u64) {
        let d = &mut self.dirs[dir.index()];
        while let Some(&(first, _)) = d.front() {
            let next = d.iter().map(|e| e.0).find(|&o| o > first);
            if next.is_some_and(|o| o <= before) {
                d.pop_front();
            } else {
                break;
            }
        }
    }

    /// Appends to `out` the handshake's frames and those of the packets that carried bytes of
    /// direction `dir` in stream offsets `start..end`, each once, in the order noted. An entry
    /// covers the bytes from its offset to the next greater offset noted.
    pub fn frames(&self, dir: Direction, start: u64, end: u64, out: &mut Vec<u64>) {
        out.extend(self.handshake.iter().copied().filter(|&f| f != 0));
        let d = &self.dirs[dir.index()];
        let mut until = u64::MAX;
        let mut j = 0;
        for (i, &(offset, frame)) in d.iter().enumerate() {
            if j <= i {
                j = i + 1;
                while d.get(j).is_some_and(|e| e.0 <= offset) {
                    j += 1;
                }
                until = d.get(j).map_or(u64::MAX, |e| e.0);
            }
            if offset < end && until > start && !out.contains(&frame) {
                out.push(frame);
            }
        }
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
        // Bytes of one segment that came in two fragments (frames 11 and 12).
        t.carried_by(Direction::Back, &[11, 12]);
        t.note(Direction::Back, 0, 12);
        t.note(Direction::Back, 40, 13);
        t.frames(Direction::Back, 0, 10, &mut out);
        assert_eq!(out, vec![1, 2, 3, 11, 12]);
        out.clear();
        t.frames(Direction::Back, 40, 41, &mut out);
        assert_eq!(out, vec![1, 2, 3, 13]);
        t.prune(Direction::Back, 39);
        out.clear();
        t.frames(Direction::Back, 39, 41, &mut out);
        assert_eq!(out, vec![1, 2, 3, 11, 12, 13]);
        t.prune(Direction::Back, 40);
        out.clear();
        t.frames(Direction::Back, 0, 41, &mut out);
        assert_eq!(out, vec![1, 2, 3, 13]);
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
        assert!(mem.used() > 0);
        drop(t);
        assert_eq!(mem.used(), 0);
    }
}
