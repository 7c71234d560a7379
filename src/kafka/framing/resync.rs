//! Resynchronisation: after a gap over a frame boundary, a size prefix that is implausible,
//! or from the start of a capture that began inside a frame, where the next frame starts.
//! Candidates are probed in place as bytes arrive, asking the handler
//! ([`FrameHandler::probe`]) with the evidence at hand ([`ProbeAt`]); an undecided tail of
//! at most [`RESYNC_BUFFER_LIMIT`] bytes is kept and probed again, and replayed once a frame
//! start is found in it.

use super::*;

impl Framer {
    /// Frames bytes of the resynchronisation tail again (captured in earlier packets), with
    /// the handler told so ([`FrameHandler::replaying`]).
    pub(super) fn replay<H: FrameHandler>(&mut self, tail: &[u8], h: &mut H) {
        h.replaying(true);
        self.feed(tail, h);
        h.replaying(false);
    }

    /// Remembers that a segment starts at `pos` in the resync tail (the last 64 such).
    pub(super) fn note_segment_start(&mut self, pos: usize) {
        if self.tail_starts.len() >= 64 {
            self.tail_starts.remove(0);
        }
        self.tail_starts.push(pos);
    }

    pub(super) fn clear_tail(&mut self) {
        self.buf.clear();
        self.tail_starts.clear();
    }

    /// Probes position `i` of the resync tail.
    pub(super) fn probe_tail<H: FrameHandler>(&mut self, h: &mut H, i: usize) -> Probe {
        let bytes = std::mem::take(&mut self.buf);
        let segment_start = self.tail_starts.contains(&i);
        let seg_len = if segment_start {
            match self.tail_starts.iter().find(|&&j| j > i) {
                Some(&next) => Some(next - i),
                None if self.tail_complete => Some(bytes.len() - i),
                None => None,
            }
        } else {
            None
        };
        let verdict = self.probe(h, &bytes[i..], i, segment_start, seg_len);
        self.buf = bytes;
        verdict
    }

    /// Probes `bytes` (at index `i` of the bytes being scanned) as a frame start. A candidate
    /// that would need [`RESYNC_BUFFER_LIMIT`] bytes or more to decide is not plausible.
    pub(super) fn probe<H: FrameHandler>(
        &mut self,
        h: &mut H,
        bytes: &[u8],
        i: usize,
        segment_start: bool,
        segment_len: Option<usize>,
    ) -> Probe {
        let at = ProbeAt {
            stream_start: self.at_stream_start && i == 0 && self.resync_skipped == 0,
            segment_start,
            segment_len,
            max_segment: self.max_segment,
            stream_end: self.ending,
            next_is_segment_start: self.ending_next_start,
        };
        let verdict = match h.probe(self.role, bytes, at) {
            Probe::NeedMore if bytes.len() >= RESYNC_BUFFER_LIMIT => Probe::No,
            v => v,
        };
        if verdict != Probe::NeedMore {
            self.at_stream_start = false;
        }
        self.accepted_at_stream_start = at.stream_start && verdict == Probe::Yes;
        verdict
    }

    /// Framing is back in step, `i` bytes after the first undecided offset.
    pub(super) fn resynced<H: FrameHandler>(&mut self, h: &mut H, i: u64) {
        let skipped = self.resync_skipped + i;
        let at = self.frame_start + i;
        if skipped > 0 {
            h.on_resync(self.role, at, skipped);
        }
        self.state = State::Size;
        self.prefix_len = 0;
        self.resync_skipped = 0;
        self.at_stream_start = false;
        // A frame taken at the very start of a stream picked up mid-way was taken on lenient
        // evidence already; others are checked for two more frames.
        self.probation = if self.accepted_at_stream_start { 0 } else { 2 };
    }

    /// Enters resynchronisation; `buf` will hold bytes starting at stream offset `from`.
    pub(super) fn start_resync(&mut self, from: u64) {
        self.state = State::Resync;
        self.clear_tail();
        self.frame_start = from;
        self.resync_skipped = 0;
    }

    /// A gap of `len` bytes comes while framing looks for a frame start: when a frame starts
    /// at the last segment start of the tail and fills that segment exactly, the gap being its
    /// snapshot-length cut ([`FrameHandler::cut_frame_starts`]), framing takes it there, so
    /// that the gap is then inside that frame (every packet of a capture cut by `tcpdump -s`
    /// is cut, and no whole frame would ever be seen to resynchronise on).
    pub(super) fn cut_look<H: FrameHandler>(&mut self, len: u64, h: &mut H) {
        if self.state != State::Resync || self.buf.is_empty() {
            return;
        }
        let Some(&i) = self
            .tail_starts
            .iter()
            .filter(|&&i| i < self.buf.len())
            .max()
        else {
            return;
        };
        let held = (self.buf.len() - i) as u64;
        let Some(size) = self
            .buf
            .get(i..i + 4)
            .map(|b| u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]])))
        else {
            return;
        };
        if size + 4 != held + len {
            return;
        }
        let bytes = std::mem::take(&mut self.buf);
        let yes = h.cut_frame_starts(self.role, &bytes[i..], held + len);
        if !yes {
            self.buf = bytes;
            return;
        }
        self.tail_starts.clear();
        self.resynced(h, i as u64);
        self.offset -= held;
        self.replay(&bytes[i..], h);
    }

    /// Nothing more will follow the resync tail (the stream ended, or a gap comes): a candidate
    /// whose frame ends within the tail, exactly at its end or before the start of what may be
    /// another frame, is taken.
    pub(super) fn last_look<H: FrameHandler>(&mut self, h: &mut H) {
        if self.state != State::Resync || self.buf.is_empty() {
            return;
        }
        let tail = std::mem::take(&mut self.buf);
        let starts = std::mem::take(&mut self.tail_starts);
        self.ending = true;
        // Segment starts first, then the other offsets, each in order.
        let order = starts
            .iter()
            .copied()
            .filter(|&i| i < tail.len())
            .chain((0..tail.len()).filter(|i| !starts.contains(i)));
        let order: Vec<usize> = order.collect();
        let mut at_end = None;
        // First a frame followed by nothing or by another plausible frame; failing that, one
        // followed by the start of a segment too short to tell.
        'passes: for weak in [false, true] {
            for &i in &order {
                let b = &tail[i..];
                if b.len() < 4 {
                    continue;
                }
                let end = i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])) + 4 + i as i64;
                if end > tail.len() as i64 {
                    continue;
                }
                self.ending_next_start = weak && starts.contains(&(end as usize));
                if self.probe(h, b, i, starts.contains(&i), Some(b.len())) == Probe::Yes {
                    at_end = Some(i);
                    break 'passes;
                }
            }
        }
        self.ending_next_start = false;
        self.ending = false;
        match at_end {
            Some(i) => {
                self.resynced(h, i as u64);
                self.offset -= (tail.len() - i) as u64;
                self.replay(&tail[i..], h);
            }
            None => {
                self.buf = tail;
                self.tail_starts = starts;
            }
        }
    }
}
