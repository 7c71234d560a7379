//! Kafka framing: splits one direction of a TCP stream into frames on their int32 size prefix.
//!
//! Input: the direction's bytes in sequence order, in chunks of any size ([`Framer::push`]),
//! and gaps of known length where bytes were never captured ([`Framer::gap`]).
//! Output: calls on a [`FrameHandler`]: the first bytes of each frame (the handler decides
//! whether to keep the frame), each kept frame whole, each skipped frame's completion, and the
//! anomalies of framing (bad sizes, gaps, resynchronisation).
//!
//! Source: the Kafka protocol guide, "Common Request and Response Structure": every message is
//! an INT32 size (the number of bytes that follow) and that many bytes.
//!
//! A frame the handler skips is never buffered: its body is counted down as it passes, so a
//! 1 MiB Produce costs no copy. A kept frame is buffered as its bytes arrive, never allocated
//! from its declared size. After a gap whose length is known and that ends inside a frame whose
//! size was read, framing stays in step by arithmetic. Only when the size prefix itself is lost,
//! or is implausible, does the framer resynchronise: it scans for the next offset where the
//! handler's [`FrameHandler::probe`] accepts a frame start, holding at most
//! [`RESYNC_BUFFER_LIMIT`] bytes while it looks.

use super::header::Probe;
use crate::memory::{Charge, Holding, Memory};

mod resync;

/// Which messages a direction carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Client to broker: requests.
    Requests,
    /// Broker to client: responses.
    Responses,
}

impl Role {
    /// Bytes of a frame (after the prefix) shown to [`FrameHandler::on_head`]: enough for a
    /// request's api_key, api_version and correlation_id (8), or a response's correlation_id (4).
    pub fn head_len(self) -> usize {
        match self {
            Role::Requests => 8,
            Role::Responses => 4,
        }
    }

    /// Smallest plausible frame size: a request header v0 is 8 bytes, a response header v0 4.
    pub fn min_frame_size(self) -> u32 {
        self.head_len() as u32
    }
}

/// Whether a frame's bytes are wanted whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Buffer the frame and hand it to [`FrameHandler::on_frame`].
    Keep,
    /// Count the frame's bytes down without buffering; [`FrameHandler::on_skipped`] at the end.
    Skip,
    /// Like `Skip`, but hand every byte after the head to [`FrameHandler::on_walk`] as it
    /// passes (for a streaming decode); [`FrameHandler::on_skipped`] at the end, with `damaged`
    /// set when a gap took some of it.
    Walk,
}

/// What a gap did to framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GapEffect {
    /// The missing bytes fell inside the body of a frame that was being skipped: nothing lost.
    InsideSkippedFrame,
    /// The missing bytes fell inside a frame that was being kept: that frame is lost, framing
    /// continues after it.
    KeptFrameLost,
    /// The missing bytes fell inside the first bytes of a frame whose size was read: that frame
    /// is lost (see [`FrameHandler::on_head_lost`]), framing continues after it.
    HeadLost,
    /// The missing bytes covered a size prefix: framing resynchronises.
    Resync,
    /// The missing bytes fell inside the tail of a frame that already ended (decoded in part,
    /// or lost) when its answer came before its tail ([`Framer::end_tail_missing`]): framing continues
    /// after it.
    AnsweredFrameTail,
}

/// Receives what the [`Framer`] finds. Sizes and offsets are in bytes; `offset` is the stream
/// offset (bytes since the first byte the framer saw, gaps included) of a frame's size prefix.
pub trait FrameHandler {
    /// A frame of `size` bytes starts; `head` holds its first `min(size, role.head_len())` bytes.
    fn on_head(&mut self, role: Role, offset: u64, size: u32, head: &[u8]) -> Decision;
    /// `true` while the framer replays bytes of its resynchronisation tail, captured in
    /// earlier packets than the one at hand, `false` after: a frame completed meanwhile did not
    /// end at the packet at hand. Defaults to doing nothing.
    fn replaying(&mut self, _on: bool) {}
    /// Right after a resynchronisation, whether the next frame's head looks right (for a
    /// request a known API and version; for a response a pending correlation id). A `false`
    /// means the resynchronisation was wrong: the framer looks again. Defaults to `true`.
    fn plausible_head(&mut self, _role: Role, _size: u32, _head: &[u8]) -> bool {
        true
    }
    /// A kept frame is complete: `frame` is its `size` bytes after the prefix.
    fn on_frame(&mut self, role: Role, offset: u64, frame: &[u8]);
    /// The next bytes of a frame being walked ([`Decision::Walk`]), after its head, in order.
    /// A gap inside the frame ends the walk: the framer reports it as
    /// [`GapEffect::KeptFrameLost`] (or [`GapEffect::Resync`] when it took the frame's end),
    /// then calls [`FrameHandler::on_partial`] with no bytes, and hands no more. Defaults to
    /// doing nothing.
    fn on_walk(&mut self, _role: Role, _bytes: &[u8]) {}
    /// The stream ended `size - seen` bytes short of the end of a frame being walked (`seen`
    /// bytes of it, after the prefix, were captured). Defaults to doing nothing.
    fn on_walk_truncated(&mut self, _role: Role, _offset: u64, _size: u32, _seen: u32) {}
    /// The stream ended inside a skipped frame of `size` bytes at `offset` (its head was read:
    /// it is counted as the frames that end are). Defaults to doing nothing.
    fn on_skip_truncated(&mut self, _role: Role, _offset: u64, _size: u32) {}
    /// A gap took bytes of a kept frame of `size` bytes: `have` holds the bytes of it that
    /// were captured before the gap (after the prefix, fewer than `size`); for a frame being
    /// walked ([`Decision::Walk`]) it is empty, the handler having had the bytes. With `skipped`, the
    /// frame goes on as a damaged skipped one: [`FrameHandler::on_skipped`] follows at its end,
    /// unless a later gap takes that end ([`GapEffect::Resync`]) or the direction ends first.
    /// Without, this gap took its end too and framing resynchronises. Called after
    /// [`FrameHandler::on_gap`]. Defaults to doing nothing.
    /// Returns whether it made a record of those bytes (then they are not counted as passed
    /// over by a resynchronisation that follows).
    fn on_partial(
        &mut self,
        _role: Role,
        _offset: u64,
        _size: u32,
        _have: &[u8],
        _skipped: bool,
    ) -> bool {
        false
    }
    /// A skipped frame is complete. `damaged` says a gap took some of its bytes (the frame was
    /// kept until then).
    fn on_skipped(&mut self, role: Role, offset: u64, size: u32, head: &[u8], damaged: bool);
    /// A size prefix outside `role.min_frame_size()..=max_frame_size` was read. `after` holds
    /// the bytes that followed it in the same delivery, at most `role.head_len()` of them
    /// (possibly none): the header of the frame, if the prefix was a real one.
    fn on_bad_size(&mut self, role: Role, offset: u64, size: i32, after: &[u8]);
    /// `len` bytes at stream offset `at` were never captured.
    fn on_gap(&mut self, role: Role, at: u64, len: u64, effect: GapEffect);
    /// A gap took part of the first bytes of a frame of `size` bytes before the handler saw
    /// them; `head` holds the bytes that did arrive (fewer than `role.head_len()`).
    fn on_head_lost(&mut self, role: Role, size: u32, head: &[u8]);
    /// Framing is back in step at `offset` after passing over `skipped` bytes.
    fn on_resync(&mut self, role: Role, offset: u64, skipped: u64);
    /// The direction ended at stream offset `end` while framing was still looking for a frame
    /// start: `skipped` captured bytes were passed over and none was found.
    fn on_unresolved(&mut self, _role: Role, _end: u64, _skipped: u64) {}
    /// A frame of `size` bytes that [`FrameHandler::on_head`] chose to keep was not kept:
    /// holding it would pass the run's memory budget. It is skipped instead, and
    /// [`FrameHandler::on_skipped`] follows at its end with `damaged` set.
    fn on_refused(&mut self, _role: Role, _offset: u64, _size: u32) {}
    /// The bytes held while looking for a frame start (`len` of them, up to stream offset
    /// `at`) were dropped: holding them would pass the run's memory budget. They count as
    /// passed over.
    fn on_tail_dropped(&mut self, _role: Role, _at: u64, _len: u64) {}
    /// The stream ended `missing` bytes short of the end of a kept frame.
    fn on_truncated(&mut self, role: Role, offset: u64, size: u32, have: &[u8]);
    /// Whether `bytes` (starting at a size prefix) look like a frame start of this role, at a
    /// place described by `at`.
    fn probe(&mut self, role: Role, bytes: &[u8], at: ProbeAt) -> Probe;
    /// While framing looks for a frame start, a gap comes right after `bytes`, which begin at
    /// the start of the last segment held, and the frame whose size prefix starts them would
    /// end exactly where the gap ends (`segment_len` bytes: those held and the gap's): whether
    /// a frame starts there, the gap being that segment's snapshot-length cut. Then the frame
    /// is decoded in part as any cut frame is ([`FrameHandler::on_partial`]). Defaults to no.
    fn cut_frame_starts(&mut self, _role: Role, _bytes: &[u8], _segment_len: u64) -> bool {
        false
    }
    /// Right after [`FrameHandler::on_frame`] of a response: how many bytes at the frame's
    /// end were left after its schema's last field (its `trailing_bytes`), 0 when none or
    /// not known. Defaults to 0.
    fn overran(&mut self) -> usize {
        0
    }
    /// The last `back` bytes of the response before, left after its schema's last field
    /// ([`FrameHandler::overran`]), begin the next response, at stream offset `offset`: its
    /// size prefix said `back` bytes too many (a damaged byte), and framing goes back to
    /// `offset`. Defaults to doing nothing.
    fn on_realign(&mut self, _role: Role, _offset: u64, _back: u32) {}
}

/// Where a candidate frame start lies, for [`FrameHandler::probe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeAt {
    /// The very first byte of a stream picked up mid-way.
    pub stream_start: bool,
    /// The first byte of a TCP segment, where frames usually begin. Elsewhere a candidate
    /// deserves more suspicion: the bytes of a frame's header often look like a size prefix.
    pub segment_start: bool,
    /// At a segment start: the segment's length in bytes, when known.
    pub segment_len: Option<usize>,
    /// The longest segment seen in this direction so far (bytes). A sender fills segments to
    /// this size while a frame continues, so a frame that would run past a shorter segment is
    /// suspect.
    pub max_segment: usize,
    /// The stream has ended right after `bytes`: nothing follows them.
    pub stream_end: bool,
    /// With `stream_end`: a segment starts right where the candidate frame ends.
    pub next_is_segment_start: bool,
}

/// Most bytes held while searching for a frame start after a gap or a bad size (64 KiB).
pub const RESYNC_BUFFER_LIMIT: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading the 4-byte size prefix (`prefix_len` bytes so far).
    Size,
    /// Reading the first bytes of a frame of `size` bytes.
    Head { size: u32 },
    /// Buffering a kept frame of `size` bytes.
    Keep { size: u32 },
    /// Counting down a skipped frame.
    Skip {
        size: u32,
        remaining: u32,
        damaged: bool,
    },
    /// Handing a walked frame's bytes to the handler (`remaining` of `size` to come).
    Walk { size: u32, remaining: u32 },
    /// Searching for the next frame start.
    Resync,
    /// Passing over the `remaining` bytes of a frame that already ended
    /// ([`Framer::end_tail_missing`]), late or lost, before the next frame's size prefix.
    Tail { remaining: u32 },
}

/// Splits one direction into frames. See the module documentation.
#[derive(Debug)]
pub struct Framer {
    role: Role,
    max_frame_size: u32,
    state: State,
    prefix: [u8; 4],
    prefix_len: usize,
    head: [u8; 8],
    head_len: usize,
    /// Kept frame bytes (after the prefix), or resynchronisation candidates.
    buf: Vec<u8>,
    /// What `buf` costs, charged to the run's budget.
    charge: Charge,
    /// Stream offset of the next byte to arrive.
    offset: u64,
    /// Stream offset of the current frame's size prefix.
    frame_start: u64,
    /// Bytes passed over since resynchronisation began.
    resync_skipped: u64,
    /// Whether the next probe is at the first byte of a stream picked up mid-way.
    at_stream_start: bool,
    /// Where segments start in the undecided tail in `buf` (at most 64, in order).
    tail_starts: Vec<usize>,
    /// Whether the last segment in the tail is complete (all of it was appended).
    tail_complete: bool,
    /// The longest chunk (segment) pushed so far.
    max_segment: usize,
    /// Frames still to be checked with [`FrameHandler::plausible_head`] after a
    /// resynchronisation.
    probation: u8,
    /// Set while [`Framer::finish`] takes its last look: no byte follows the tail.
    ending: bool,
    /// During the last look: a segment starts where the candidate's frame ends.
    ending_next_start: bool,
    /// Whether the latest probe accepted a frame at the start of a stream picked up mid-way.
    accepted_at_stream_start: bool,
    /// The last kept response, when its schema's fields ended before its size prefix said
    /// ([`FrameHandler::overran`], 1 to [`MAX_OVERRUN`] bytes): the stream offset where it
    /// ended, how many bytes were left, and those bytes. When the next frame's head answers
    /// no request and those bytes, then its own, do, the next response began there
    /// ([`FrameHandler::on_realign`]).
    overran: Option<(u64, u8, [u8; MAX_OVERRUN])>,
}

/// Most bytes a response's size prefix may overstate it by for framing to go back to the
/// next response's start on its own ([`Framer`]'s `overran`): 7, so that the next size
/// prefix and its correlation id (8 bytes) still hold one byte read as the next frame's.
pub const MAX_OVERRUN: usize = 7;

impl Framer {
    /// A framer for `role` that trusts the first byte to be a size prefix (the stream was seen
    /// from its SYN).
    pub fn new(role: Role, max_frame_size: u32, memory: &Memory) -> Self {
        Framer {
            role,
            max_frame_size,
            state: State::Size,
            prefix: [0; 4],
            prefix_len: 0,
            head: [0; 8],
            head_len: 0,
            buf: Vec::new(),
            charge: memory.charge(Holding::Frames),
            offset: 0,
            frame_start: 0,
            resync_skipped: 0,
            at_stream_start: false,
            tail_starts: Vec::new(),
            tail_complete: true,
            max_segment: 0,
            probation: 0,
            ending: false,
            ending_next_start: false,
            accepted_at_stream_start: false,
            overran: None,
        }
    }

    /// A framer for a stream picked up in the middle: it looks for a plausible frame start
    /// before it trusts a size.
    pub fn new_mid_stream(role: Role, max_frame_size: u32, memory: &Memory) -> Self {
        let mut f = Framer::new(role, max_frame_size, memory);
        f.state = State::Resync;
        f.at_stream_start = true;
        f
    }

    /// Feeds the next bytes of the direction.
    ///
    /// Time is linear in the bytes fed: while resynchronising, candidates are probed in place
    /// in `data`; only an undecided tail (too short to tell, at most [`RESYNC_BUFFER_LIMIT`]
    /// bytes) is copied, and it is probed again once more bytes arrive.
    pub fn push<H: FrameHandler>(&mut self, data: &[u8], h: &mut H) {
        self.max_segment = self.max_segment.max(data.len());
        self.feed(data, h);
        // The charge covers `buf`'s capacity, in bytes.
        if self.buf.capacity() > self.charge.bytes() {
            self.charge_tail(h);
        }
    }

    /// Charges a resynchronisation tail that grew; drops it when the budget refuses.
    #[cold]
    fn charge_tail<H: FrameHandler>(&mut self, h: &mut H) {
        if self.charge.set(self.buf.capacity()) {
            return;
        }
        if self.state != State::Resync {
            // Kept frames reserve their size before they grow; anything else is charged as is.
            return self.charge.force(self.buf.capacity());
        }
        self.charge.note_given_up();
        let len = self.buf.len() as u64;
        self.resync_skipped += len;
        self.frame_start += len;
        self.clear_tail();
        self.buf = Vec::new();
        self.charge.set(0);
        h.on_tail_dropped(self.role, self.offset, len);
    }

    /// Gives back a large buffer once its frame is done.
    fn release_buf(&mut self) {
        self.buf.clear();
        if self.buf.capacity() > 64 * 1024 {
            self.buf = Vec::new();
            self.charge.set(0);
        }
    }

    /// Stream offset of the next byte to arrive, counted from the first byte (or gap) this
    /// framer was given.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Stream offset of the size prefix of the frame in progress (or of the last one begun).
    pub fn frame_start(&self) -> u64 {
        self.frame_start
    }

    /// Whether `len` bytes missing at the next offset could hold the start of a frame: they
    /// reach past the end of the frame in progress, or none is (a size prefix is awaited, or
    /// the next frame start is being searched for).
    pub fn could_hold_frame_start(&self, len: u64) -> bool {
        let left = match self.state {
            State::Size | State::Resync => return true,
            State::Head { size } | State::Keep { size } => {
                u64::from(size).saturating_sub(self.offset.saturating_sub(self.frame_start + 4))
            }
            State::Skip { remaining, .. }
            | State::Walk { remaining, .. }
            | State::Tail { remaining } => u64::from(remaining),
        };
        len > left
    }

    /// Consumes `len` bytes that fall inside the frame being skipped without ending it, as
    /// [`Framer::push`] would, and says whether it did; `false` (nothing changed) when the
    /// framer is not skipping or the frame ends within them.
    #[inline]
    pub fn skip_inside(&mut self, len: usize) -> bool {
        match &mut self.state {
            State::Skip { remaining, .. } if (*remaining as usize) > len => {
                *remaining -= len as u32;
                self.offset += len as u64;
                self.max_segment = self.max_segment.max(len);
                true
            }
            _ => false,
        }
    }

    /// [`Framer::push`] without counting `data` as a segment (for bytes replayed from the
    /// resync tail).
    fn feed<H: FrameHandler>(&mut self, mut data: &[u8], h: &mut H) {
        while !data.is_empty() {
            match self.state {
                State::Size => {
                    if self.prefix_len == 0 {
                        self.frame_start = self.offset;
                    }
                    let n = (4 - self.prefix_len).min(data.len());
                    self.prefix[self.prefix_len..self.prefix_len + n].copy_from_slice(&data[..n]);
                    self.prefix_len += n;
                    self.advance(&mut data, n);
                    if self.prefix_len == 4 {
                        self.prefix_len = 0;
                        let size = i32::from_be_bytes(self.prefix);
                        if size < self.role.min_frame_size() as i32
                            || size as u32 > self.max_frame_size
                        {
                            if self.overran.is_some() && self.realign(data, false, h) {
                                continue;
                            }
                            let after = &data[..data.len().min(self.role.head_len())];
                            h.on_bad_size(self.role, self.frame_start, size, after);
                            // Look again from the byte after this prefix's first byte: the
                            // other three are an undecided tail.
                            self.start_resync(self.frame_start + 1);
                            self.resync_skipped = 1;
                            let rest = self.prefix;
                            self.buf.extend_from_slice(&rest[1..]);
                            continue;
                        }
                        self.head_len = 0;
                        self.state = State::Head { size: size as u32 };
                    }
                }
                State::Head { size } => {
                    let want = self.role.head_len().min(size as usize);
                    let n = (want - self.head_len).min(data.len());
                    self.head[self.head_len..self.head_len + n].copy_from_slice(&data[..n]);
                    self.head_len += n;
                    self.advance(&mut data, n);
                    if self.head_len == want {
                        // (Before the check after a resynchronisation: the response before
                        // may have overrun into this one.)
                        if self.overran.is_some() && self.realign_at_head(size, h) {
                            continue;
                        }
                        if self.probation > 0 {
                            self.probation -= 1;
                            let head = &self.head[..self.head_len];
                            if !h.plausible_head(self.role, size, head) {
                                // The resynchronisation was wrong: look again from the byte
                                // after this frame's first.
                                let mut tail = self.prefix[1..].to_vec();
                                tail.extend_from_slice(&self.head[..self.head_len]);
                                self.start_resync(self.frame_start + 1);
                                self.resync_skipped = 1;
                                self.buf = tail;
                                self.probation = 0;
                                continue;
                            }
                        }
                        let head = &self.head[..self.head_len];
                        match h.on_head(self.role, self.frame_start, size, head) {
                            Decision::Keep if !self.reserve(size as usize) => {
                                h.on_refused(self.role, self.frame_start, size);
                                self.state = State::Skip {
                                    size,
                                    remaining: size - want as u32,
                                    damaged: true,
                                };
                                self.try_complete_skipped(h);
                            }
                            Decision::Keep => {
                                self.buf.clear();
                                let head = &self.head[..self.head_len];
                                self.buf.extend_from_slice(head);
                                self.state = State::Keep { size };
                                self.try_complete_kept(size, h);
                            }
                            Decision::Skip => {
                                self.state = State::Skip {
                                    size,
                                    remaining: size - want as u32,
                                    damaged: false,
                                };
                                self.try_complete_skipped(h);
                            }
                            Decision::Walk => {
                                self.state = State::Walk {
                                    size,
                                    remaining: size - want as u32,
                                };
                                self.try_complete_walked(h);
                            }
                        }
                    }
                }
                State::Keep { size } => {
                    let n = (size as usize - self.buf.len()).min(data.len());
                    self.buf.extend_from_slice(&data[..n]);
                    self.advance(&mut data, n);
                    self.try_complete_kept(size, h);
                }
                State::Skip {
                    size,
                    remaining,
                    damaged,
                } => {
                    let n = (remaining as usize).min(data.len());
                    self.advance(&mut data, n);
                    self.state = State::Skip {
                        size,
                        remaining: remaining - n as u32,
                        damaged,
                    };
                    self.try_complete_skipped(h);
                }
                State::Tail { remaining } => {
                    let n = (remaining as usize).min(data.len());
                    self.advance(&mut data, n);
                    self.state = match remaining - n as u32 {
                        0 => State::Size,
                        remaining => State::Tail { remaining },
                    };
                }
                State::Walk { size, remaining } => {
                    let n = (remaining as usize).min(data.len());
                    h.on_walk(self.role, &data[..n]);
                    self.advance(&mut data, n);
                    self.state = State::Walk {
                        size,
                        remaining: remaining - n as u32,
                    };
                    self.try_complete_walked(h);
                }
                State::Resync if self.buf.is_empty() => {
                    // Probe each offset of `data` in place.
                    self.frame_start = self.offset;
                    let mut i = 0;
                    let mut found = false;
                    while i < data.len() {
                        let seg_len = (i == 0).then_some(data.len());
                        match self.probe(h, &data[i..], i, i == 0, seg_len) {
                            Probe::Yes => {
                                found = true;
                                break;
                            }
                            Probe::No => i += 1,
                            Probe::NeedMore => break,
                        }
                    }
                    if found {
                        self.resynced(h, i as u64);
                        self.advance(&mut data, i);
                    } else {
                        // Offsets before `i` were rejected; the rest is an undecided tail.
                        self.resync_skipped += i as u64;
                        self.frame_start += i as u64;
                        self.tail_starts.clear();
                        self.tail_complete = true;
                        if i == 0 {
                            self.tail_starts.push(0);
                        }
                        self.buf.extend_from_slice(&data[i..]);
                        let n = data.len();
                        self.advance(&mut data, n);
                    }
                }
                State::Resync => {
                    // An undecided tail is held: complete it with the first bytes of `data`
                    // and probe the tail's own offsets again.
                    let old = self.buf.len();
                    let take = data.len().min(RESYNC_BUFFER_LIMIT);
                    let all_taken = take == data.len();
                    self.buf.extend_from_slice(&data[..take]);
                    self.note_segment_start(old);
                    self.tail_complete = all_taken;
                    let mut i = 0;
                    let mut verdict = Probe::No;
                    while i < old {
                        verdict = self.probe_tail(h, i);
                        match verdict {
                            Probe::Yes => break,
                            Probe::NeedMore if all_taken => break,
                            _ => i += 1,
                        }
                    }
                    if verdict == Probe::NeedMore && i < old {
                        // A candidate inside a segment waits for more bytes; a later segment
                        // start that is plausible already is the better evidence.
                        let starts: Vec<usize> = self
                            .tail_starts
                            .iter()
                            .copied()
                            .filter(|&j| j > i && j <= old)
                            .collect();
                        // Only a candidate whose frame ends within sight can be verified, and
                        // only a verified one outweighs the candidate that waits.
                        let verifiable = |buf: &[u8], j: usize| {
                            buf.get(j..j + 4).is_some_and(|b| {
                                let size = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                                size >= 0 && (size as usize) + 16 <= RESYNC_BUFFER_LIMIT
                            })
                        };
                        if let Some(j) = starts.into_iter().find(|&j| {
                            verifiable(&self.buf, j) && self.probe_tail(h, j) == Probe::Yes
                        }) {
                            (i, verdict) = if j < old {
                                (j, Probe::Yes)
                            } else {
                                (old, Probe::No)
                            };
                        }
                    }
                    match verdict {
                        Probe::Yes if i < old => {
                            // A frame starts inside the tail: frame from there on. The tail's
                            // bytes were counted as consumed already; count them again.
                            let tail = self.buf[i..old].to_vec();
                            self.clear_tail();
                            self.resynced(h, i as u64);
                            self.offset -= (old - i) as u64;
                            self.replay(&tail, h);
                        }
                        Probe::NeedMore if i < old => {
                            // Still undecided, and all of `data` joined the tail.
                            self.buf.drain(..i);
                            self.tail_starts.retain(|&j| j >= i);
                            for j in &mut self.tail_starts {
                                *j -= i;
                            }
                            self.resync_skipped += i as u64;
                            self.frame_start += i as u64;
                            self.advance(&mut data, take);
                        }
                        _ => {
                            // No frame starts in the tail: drop it, probe `data` in place.
                            self.clear_tail();
                            self.resync_skipped += old as u64;
                            self.frame_start += old as u64;
                        }
                    }
                }
            }
        }
    }

    /// Makes `buf` hold a frame of `size` bytes, if the budget allows: within the limit, and
    /// at most half of it (a frame that alone filled the budget would have the connection
    /// table finish its own connection).
    fn reserve(&mut self, size: usize) -> bool {
        if self.buf.capacity() >= size {
            return true;
        }
        self.buf.clear();
        if size > self.charge.memory().limit() / 2 || !self.charge.set(size) {
            self.charge.note_given_up();
            self.charge.set(self.buf.capacity());
            return false;
        }
        self.buf.reserve_exact(size);
        self.charge.force(self.buf.capacity());
        true
    }

    fn advance(&mut self, data: &mut &[u8], n: usize) {
        *data = &data[n..];
        self.offset += n as u64;
    }

    /// How many bytes from the next one to arrive the next frame starts (its size prefix):
    /// 0 when a size prefix is awaited, the rest of the frame in progress otherwise; `None`
    /// while a size prefix is half read, a frame start is searched for, or the tail of a frame
    /// already ended is passed over.
    pub fn to_next_frame(&self) -> Option<u64> {
        match self.state {
            State::Size if self.prefix_len == 0 => Some(0),
            State::Head { size } => Some(u64::from(size) - self.head_len as u64),
            State::Keep { size } => Some(u64::from(size) - self.buf.len() as u64),
            State::Skip { remaining, .. } | State::Walk { remaining, .. } => {
                Some(u64::from(remaining))
            }
            State::Size | State::Resync | State::Tail { .. } => None,
        }
    }

    /// The bytes (after the size prefix) of the kept frame in progress, `None` when no kept
    /// frame is in progress.
    pub fn kept_bytes(&self) -> Option<&[u8]> {
        match self.state {
            State::Keep { .. } => Some(&self.buf),
            _ => None,
        }
    }

    /// Ends the kept frame in progress after its first `at` bytes (after the prefix), as if its
    /// size prefix had said so (a damaged byte: what follows is the next frame). Returns the
    /// size the prefix said and the bytes after them, to be framed again from the next frame
    /// start ([`Framer::push_again`]), or `None` when no kept frame of more than `at` bytes is
    /// in progress.
    pub fn end_kept_at<H: FrameHandler>(&mut self, at: usize, h: &mut H) -> Option<(u32, Vec<u8>)> {
        let State::Keep { size } = self.state else {
            return None;
        };
        if at >= self.buf.len() {
            return None;
        }
        let rest = self.buf.split_off(at);
        h.on_frame(self.role, self.frame_start, &self.buf);
        self.release_buf();
        self.state = State::Size;
        self.offset -= rest.len() as u64;
        Some((size, rest))
    }

    /// Frames again bytes [`Framer::end_kept_at`] gave back (they were counted as fed once).
    pub fn push_again<H: FrameHandler>(&mut self, rest: &[u8], h: &mut H) {
        self.feed(rest, h);
    }

    /// Ends the frame in progress where its bytes stop, as if its size prefix had said so: the
    /// frame's answer came before the rest of it (its size prefix overstated it: a damaged
    /// byte). A kept frame is handed to the handler with the bytes it has, a skipped one ends
    /// ([`FrameHandler::on_skipped`] with the bytes passed); framing goes on at the next byte.
    /// Returns the size the prefix said and the size taken, or `None` when no kept or skipped
    /// frame is in progress.
    pub fn end_early<H: FrameHandler>(&mut self, h: &mut H) -> Option<(u32, u32)> {
        let taken = u32::try_from(self.offset.saturating_sub(self.frame_start + 4)).ok()?;
        match self.state {
            State::Keep { size } if !self.buf.is_empty() => {
                h.on_frame(self.role, self.frame_start, &self.buf);
                self.release_buf();
                self.state = State::Size;
                Some((size, taken))
            }
            State::Skip { size, damaged, .. } => {
                h.on_skipped(
                    self.role,
                    self.frame_start,
                    taken,
                    &self.head[..self.head_len],
                    damaged,
                );
                self.state = State::Size;
                Some((size, taken))
            }
            _ => None,
        }
    }

    /// Ends the frame in progress where its bytes stop, its tail missing: its answer came
    /// before the rest of it, which the capture lacks (lost, or later than the answer). A kept
    /// or walked frame is decoded in part ([`FrameHandler::on_partial`], as when a gap takes
    /// its end), a skipped one, or one that does not decode in part, ends damaged
    /// ([`FrameHandler::on_skipped`]); the rest of its
    /// bytes, whether they come late or a gap takes them, are passed over, and framing goes on
    /// after them. Returns the bytes of it that had come (after the prefix), or `None` when no
    /// such frame is in progress.
    pub fn end_tail_missing<H: FrameHandler>(&mut self, h: &mut H) -> Option<u32> {
        let taken = u32::try_from(self.offset.saturating_sub(self.frame_start + 4)).ok()?;
        let size = match self.state {
            State::Keep { size } if !self.buf.is_empty() => {
                if !h.on_partial(self.role, self.frame_start, size, &self.buf, false) {
                    let head = &self.head[..self.head_len];
                    h.on_skipped(self.role, self.frame_start, size, head, true);
                }
                self.release_buf();
                size
            }
            State::Walk { size, .. } => {
                if !h.on_partial(self.role, self.frame_start, size, &[], false) {
                    let head = &self.head[..self.head_len];
                    h.on_skipped(self.role, self.frame_start, size, head, true);
                }
                size
            }
            State::Skip { size, .. } => {
                let head = &self.head[..self.head_len];
                h.on_skipped(self.role, self.frame_start, size, head, true);
                size
            }
            _ => return None,
        };
        self.state = match size.checked_sub(taken) {
            Some(remaining @ 1..) => State::Tail { remaining },
            _ => State::Size,
        };
        Some(taken)
    }

    fn try_complete_kept<H: FrameHandler>(&mut self, size: u32, h: &mut H) {
        if self.buf.len() == size as usize {
            h.on_frame(self.role, self.frame_start, &self.buf);
            if self.role == Role::Responses {
                let left = h.overran();
                if left > 0 {
                    self.note_overran(left);
                }
            }
            self.release_buf();
            self.state = State::Size;
        }
    }

    /// Keeps the last `left` bytes of the kept response just handed over (see `overran`).
    #[cold]
    fn note_overran(&mut self, left: usize) {
        if left > MAX_OVERRUN || left > self.buf.len() {
            return;
        }
        let mut tail = [0; MAX_OVERRUN];
        tail[..left].copy_from_slice(&self.buf[self.buf.len() - left..]);
        self.overran = Some((self.offset, left as u8, tail));
    }

    /// At the head of a frame of `size` bytes, right after a kept response that overran
    /// (`overran`): when the head answers no request, [`Framer::realign`] with it.
    #[cold]
    #[inline(never)]
    fn realign_at_head<H: FrameHandler>(&mut self, size: u32, h: &mut H) -> bool {
        let head = self.head;
        let head = &head[..self.head_len];
        if h.plausible_head(self.role, size, head) {
            self.overran = None;
            return false;
        }
        self.realign(head, true, h)
    }

    /// Right after a kept response that overran (`overran`) and the size prefix after it
    /// (a size out of bounds, or one whose head answers no request, `next` the bytes after
    /// it: the head read, or the bytes still to be fed): when the bytes left after the
    /// response's fields, then the prefix and `next`, make the head of a response that answers
    /// a request waiting, that response starts there. Framing goes back to it
    /// ([`FrameHandler::on_realign`]) and frames those bytes again (`next` too when it was
    /// read: `refeed`). Returns whether it went back.
    #[cold]
    #[inline(never)]
    fn realign<H: FrameHandler>(&mut self, next: &[u8], refeed: bool, h: &mut H) -> bool {
        let Some((end, left, tail)) = self.overran.take() else {
            return false;
        };
        let left = usize::from(left);
        let head_len = self.role.head_len();
        if end != self.frame_start {
            return false;
        }
        let mut again = [0u8; MAX_OVERRUN + 12];
        again[..left].copy_from_slice(&tail[..left]);
        again[left..left + 4].copy_from_slice(&self.prefix);
        let shown = next.len().min(8);
        again[left + 4..left + 4 + shown].copy_from_slice(&next[..shown]);
        let said = i32::from_be_bytes([again[0], again[1], again[2], again[3]]);
        if said < self.role.min_frame_size() as i32 || said as u32 > self.max_frame_size {
            return false;
        }
        // The head whole: it must answer a request waiting. Cut by the segment's end (a
        // size out of bounds read at it): taken on trust, the head checked when it comes
        // (as after a resynchronisation), so that where segments break does not decide.
        if left + 4 + shown >= 4 + head_len {
            if !h.plausible_head(self.role, said as u32, &again[4..4 + head_len]) {
                return false;
            }
        } else {
            self.probation = self.probation.max(1);
        }
        let start = self.frame_start - left as u64;
        h.on_realign(self.role, start, left as u32);
        self.state = State::Size;
        self.prefix_len = 0;
        self.head_len = 0;
        self.offset = start;
        let len = left + 4 + if refeed { shown } else { 0 };
        self.feed(&again[..len], h);
        true
    }

    fn try_complete_skipped<H: FrameHandler>(&mut self, h: &mut H) {
        if let State::Skip {
            size,
            remaining: 0,
            damaged,
        } = self.state
        {
            h.on_skipped(
                self.role,
                self.frame_start,
                size,
                &self.head[..self.head_len],
                damaged,
            );
            self.state = State::Size;
        }
    }

    /// A walked frame whose last byte has passed ends as a whole skipped one.
    fn try_complete_walked<H: FrameHandler>(&mut self, h: &mut H) {
        if let State::Walk { size, remaining: 0 } = self.state {
            self.state = State::Skip {
                size,
                remaining: 0,
                damaged: false,
            };
            self.try_complete_skipped(h);
        }
    }

    /// `len` bytes of the direction were never captured (a TCP gap, or a snaplen cut).
    pub fn gap<H: FrameHandler>(&mut self, len: u64, h: &mut H) {
        if len == 0 {
            return;
        }
        self.last_look(h);
        self.cut_look(len, h);
        self.overran = None;
        let at = self.offset;
        self.offset += len;
        self.at_stream_start = false;
        match self.state {
            State::Skip {
                size,
                remaining,
                damaged,
            } if len <= u64::from(remaining) => {
                h.on_gap(self.role, at, len, GapEffect::InsideSkippedFrame);
                self.state = State::Skip {
                    size,
                    remaining: remaining - len as u32,
                    damaged,
                };
                self.try_complete_skipped(h);
            }
            State::Walk { size, remaining } if len <= u64::from(remaining) => {
                // The walk ends: the frame is decoded in part, as a kept one would be.
                h.on_gap(self.role, at, len, GapEffect::KeptFrameLost);
                let _ = h.on_partial(self.role, self.frame_start, size, &[], true);
                self.state = State::Skip {
                    size,
                    remaining: remaining - len as u32,
                    damaged: true,
                };
                self.try_complete_skipped(h);
            }
            State::Keep { size } if len <= (size as usize - self.buf.len()) as u64 => {
                h.on_gap(self.role, at, len, GapEffect::KeptFrameLost);
                let _ = h.on_partial(self.role, self.frame_start, size, &self.buf, true);
                let remaining = (size as usize - self.buf.len()) as u32 - len as u32;
                self.release_buf();
                self.state = State::Skip {
                    size,
                    remaining,
                    damaged: true,
                };
                self.try_complete_skipped(h);
            }
            State::Head { size } if len <= (size as usize - self.head_len) as u64 => {
                h.on_gap(self.role, at, len, GapEffect::HeadLost);
                h.on_head_lost(self.role, size, &self.head[..self.head_len]);
                self.state = State::Skip {
                    size,
                    remaining: size - self.head_len as u32 - len as u32,
                    damaged: true,
                };
                self.try_complete_skipped(h);
            }
            State::Tail { remaining } if len <= u64::from(remaining) => {
                h.on_gap(self.role, at, len, GapEffect::AnsweredFrameTail);
                self.state = match remaining - len as u32 {
                    0 => State::Size,
                    remaining => State::Tail { remaining },
                };
            }
            State::Resync => {
                h.on_gap(self.role, at, len, GapEffect::Resync);
                // The tail's bytes were captured and are given up; the gap's were not captured.
                self.resync_skipped += self.buf.len() as u64;
                self.clear_tail();
                self.frame_start = self.offset;
            }
            _ => {
                h.on_gap(self.role, at, len, GapEffect::Resync);
                let decoded = match self.state {
                    // The gap took the frame's end too.
                    State::Keep { size } => {
                        h.on_partial(self.role, self.frame_start, size, &self.buf, false)
                    }
                    State::Walk { size, .. } => {
                        h.on_partial(self.role, self.frame_start, size, &[], false)
                    }
                    _ => false,
                };
                // Captured bytes of the frame in progress that are given up (the gap's own bytes
                // are reported by the gap, not counted again as passed over).
                let partial = match self.state {
                    State::Size => self.prefix_len as u64,
                    State::Head { .. } => 4 + self.head_len as u64,
                    // Bytes decoded in part were not passed over.
                    State::Keep { .. } if decoded => 0,
                    State::Keep { .. } => 4 + self.buf.len() as u64,
                    State::Walk { .. } if decoded => 0,
                    State::Skip {
                        size, remaining, ..
                    }
                    | State::Walk { size, remaining } => 4 + u64::from(size - remaining),
                    State::Resync | State::Tail { .. } => 0,
                };
                self.prefix_len = 0;
                self.start_resync(self.offset);
                self.resync_skipped = partial;
            }
        }
    }

    /// The direction ended (FIN, RST or end of capture): reports a kept frame cut short. An
    /// undecided resynchronisation tail gets a last look: a candidate whose frame ends exactly
    /// where the stream ended is taken; failing that, the bytes passed over are reported.
    pub fn finish<H: FrameHandler>(&mut self, h: &mut H) {
        self.last_look(h);
        if self.state == State::Resync {
            let skipped = self.resync_skipped + self.buf.len() as u64;
            if skipped > 0 {
                h.on_unresolved(self.role, self.offset, skipped);
            }
        }
        if let State::Keep { size } = self.state {
            h.on_truncated(self.role, self.frame_start, size, &self.buf);
        }
        if let State::Walk { size, remaining } = self.state {
            h.on_walk_truncated(self.role, self.frame_start, size, size - remaining);
        }
        if let State::Skip { size, .. } = self.state {
            h.on_skip_truncated(self.role, self.frame_start, size);
        }
        self.buf = Vec::new();
        self.charge.set(0);
        self.state = State::Size;
        self.prefix_len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Log {
        events: Vec<String>,
        keep_key: Option<i16>,
    }

    impl FrameHandler for Log {
        fn on_head(&mut self, _role: Role, _offset: u64, size: u32, head: &[u8]) -> Decision {
            let key = i16::from_be_bytes([head[0], head[1]]);
            self.events.push(format!("head {size} key {key}"));
            if Some(key) == self.keep_key {
                Decision::Keep
            } else {
                Decision::Skip
            }
        }
        fn on_frame(&mut self, _role: Role, offset: u64, frame: &[u8]) {
            self.events
                .push(format!("frame @{offset} {}", hex::encode(frame)));
        }
        fn on_skipped(&mut self, _r: Role, offset: u64, size: u32, _h: &[u8], damaged: bool) {
            self.events
                .push(format!("skipped @{offset} {size} damaged={damaged}"));
        }
        fn on_bad_size(&mut self, _role: Role, offset: u64, size: i32, _after: &[u8]) {
            self.events.push(format!("bad size @{offset} {size}"));
        }
        fn on_gap(&mut self, _role: Role, at: u64, len: u64, effect: GapEffect) {
            self.events.push(format!("gap @{at} {len} {effect:?}"));
        }
        fn on_head_lost(&mut self, _role: Role, size: u32, head: &[u8]) {
            self.events
                .push(format!("head lost {size} have {}", head.len()));
        }
        fn on_resync(&mut self, _role: Role, offset: u64, skipped: u64) {
            self.events
                .push(format!("resync @{offset} skipped {skipped}"));
        }
        fn on_unresolved(&mut self, _role: Role, end: u64, skipped: u64) {
            self.events.push(format!("unresolved @{end} {skipped}"));
        }
        fn on_truncated(&mut self, _role: Role, offset: u64, size: u32, have: &[u8]) {
            self.events
                .push(format!("truncated @{offset} {size} have {}", have.len()));
        }
        fn probe(&mut self, _role: Role, bytes: &[u8], _at: ProbeAt) -> Probe {
            super::super::header::probe_request(bytes, 1 << 20)
        }
    }

    /// A request frame: size prefix, api key, version 0, correlation id, null client id, body.
    fn req(key: i16, corr: i32, body: &[u8]) -> Vec<u8> {
        let mut f = Vec::new();
        let size = 2 + 2 + 4 + 2 + body.len();
        f.extend_from_slice(&(size as i32).to_be_bytes());
        f.extend_from_slice(&key.to_be_bytes());
        f.extend_from_slice(&0i16.to_be_bytes());
        f.extend_from_slice(&corr.to_be_bytes());
        f.extend_from_slice(&(-1i16).to_be_bytes());
        f.extend_from_slice(body);
        f
    }

    fn run(chunks: &[&[u8]], keep: i16) -> Vec<String> {
        let mut log = Log {
            keep_key: Some(keep),
            ..Default::default()
        };
        let mut f = Framer::new(Role::Requests, 1 << 20, &Memory::default());
        for c in chunks {
            f.push(c, &mut log);
        }
        f.finish(&mut log);
        log.events
    }

    #[test]
    fn frames_split_across_and_within_chunks() {
        let mut stream = req(0, 1, &[9; 20]);
        stream.extend(req(27, 2, &[1, 2, 3]));
        let whole = run(&[&stream], 27);
        for cut in 0..stream.len() {
            let (a, b) = stream.split_at(cut);
            assert_eq!(run(&[a, b], 27), whole, "cut at {cut}");
        }
        let bytewise: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(run(&bytewise, 27), whole);
        assert_eq!(
            whole,
            vec![
                "head 30 key 0".to_string(),
                "skipped @0 30 damaged=false".into(),
                "head 13 key 27".into(),
                "frame @34 001b000000000002ffff010203".into(),
            ]
        );
    }

    /// `skip_inside` takes a chunk only when it falls inside a skipped frame without ending
    /// it, and then leaves the framer as `push` would (same events for the rest, wherever the
    /// stream is cut).
    #[test]
    fn skip_inside_is_push_inside_a_skipped_frame() {
        let mut stream = req(0, 1, &[9; 20]);
        stream.extend(req(27, 2, &[1, 2, 3]));
        let whole = run(&[&stream], 27);
        let mut taken = 0;
        for a in 0..stream.len() {
            for b in a + 1..=stream.len() {
                let mut log = Log {
                    keep_key: Some(27),
                    ..Default::default()
                };
                let mut f = Framer::new(Role::Requests, 1 << 20, &Memory::default());
                f.push(&stream[..a], &mut log);
                // After frame 1's 8 header bytes (bytes 12..34), not reaching its end: taken.
                let inside = a >= 12 && b < 34;
                assert_eq!(f.skip_inside(b - a), inside, "{a}..{b}");
                if inside {
                    taken += 1;
                } else {
                    f.push(&stream[a..b], &mut log);
                }
                f.push(&stream[b..], &mut log);
                f.finish(&mut log);
                assert_eq!(log.events, whole, "{a}..{b}");
                assert_eq!(f.max_segment, f.max_segment.max(b - a), "{a}..{b}");
            }
        }
        assert_eq!(taken, (12..34).map(|a| 34 - a - 1).sum::<usize>());
    }

    #[test]
    fn gap_inside_skipped_frame_keeps_step() {
        let a = req(0, 1, &[9; 20]);
        let b = req(27, 2, &[]);
        let mut log = Log {
            keep_key: Some(27),
            ..Default::default()
        };
        let mut f = Framer::new(Role::Requests, 1 << 20, &Memory::default());
        f.push(&a[..14], &mut log);
        f.gap(10, &mut log);
        f.push(&a[24..], &mut log);
        f.push(&b, &mut log);
        assert_eq!(
            log.events,
            vec![
                "head 30 key 0",
                "gap @14 10 InsideSkippedFrame",
                "skipped @0 30 damaged=false",
                "head 10 key 27",
                "frame @34 001b000000000002ffff",
            ]
        );
    }

    #[test]
    fn gap_over_prefix_resyncs_on_next_request() {
        let a = req(0, 1, &[9; 20]);
        let b = req(27, 2, &[7]);
        let mut log = Log {
            keep_key: Some(27),
            ..Default::default()
        };
        let mut f = Framer::new(Role::Requests, 1 << 20, &Memory::default());
        f.gap(6, &mut log);
        f.push(&a[6..], &mut log);
        f.push(&b, &mut log);
        assert_eq!(
            log.events,
            vec![
                "gap @0 6 Resync".to_string(),
                "resync @34 skipped 28".into(),
                "head 11 key 27".into(),
                "frame @34 001b000000000002ffff07".into(),
            ]
        );
    }

    #[test]
    fn bad_size_resyncs() {
        let mut stream = vec![0xff, 0xff, 0xff, 0xff, 1, 2, 3];
        stream.extend(req(27, 5, &[]));
        let ev = run(&[&stream], 27);
        assert_eq!(
            ev,
            vec![
                "bad size @0 -1".to_string(),
                "resync @7 skipped 7".into(),
                "head 10 key 27".into(),
                "frame @7 001b000000000005ffff".into(),
            ]
        );
    }

    #[test]
    fn truncated_kept_frame_is_reported() {
        let b = req(27, 2, &[1, 2, 3, 4]);
        let ev = run(&[&b[..12]], 27);
        assert_eq!(ev.last().unwrap(), "truncated @0 14 have 8");
    }

    #[test]
    fn gap_inside_head_keeps_step() {
        let a = req(27, 1, &[5; 10]);
        let b = req(27, 2, &[6]);
        let mut log = Log {
            keep_key: Some(27),
            ..Default::default()
        };
        let mut f = Framer::new(Role::Requests, 1 << 20, &Memory::default());
        f.push(&a[..6], &mut log);
        f.gap(a.len() as u64 - 6, &mut log);
        f.push(&b, &mut log);
        assert_eq!(
            log.events,
            vec![
                "gap @6 18 HeadLost",
                "head lost 20 have 2",
                "skipped @0 20 damaged=true",
                "head 11 key 27",
                "frame @24 001b000000000002ffff06",
            ]
        );
    }

    #[test]
    fn gap_inside_kept_frame_loses_only_that_frame() {
        let a = req(27, 1, &[5; 10]);
        let b = req(27, 2, &[6]);
        let mut log = Log {
            keep_key: Some(27),
            ..Default::default()
        };
        let mut f = Framer::new(Role::Requests, 1 << 20, &Memory::default());
        f.push(&a[..16], &mut log);
        f.gap(4, &mut log);
        f.push(&a[20..], &mut log);
        f.push(&b, &mut log);
        assert_eq!(
            log.events,
            vec![
                "head 20 key 27",
                "gap @16 4 KeptFrameLost",
                "skipped @0 20 damaged=true",
                "head 11 key 27",
                "frame @24 001b000000000002ffff06",
            ]
        );
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn events(stream: &[u8], cuts: &[usize], keep: i16) -> Vec<String> {
            let mut log = Log {
                keep_key: Some(keep),
                ..Default::default()
            };
            let mut f = Framer::new(Role::Requests, 1 << 20, &Memory::default());
            let mut at = 0;
            let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
            cuts.sort();
            for c in cuts {
                f.push(&stream[at..c], &mut log);
                at = c;
            }
            f.push(&stream[at..], &mut log);
            f.finish(&mut log);
            log.events
        }

        proptest! {
            /// However a stream of frames is cut into chunks, the framer sees the same frames.
            #[test]
            fn chunking_does_not_matter(
                frames in prop::collection::vec((prop::sample::select(vec![0i16, 3, 18, 27]), 0usize..40), 1..8),
                cuts in prop::collection::vec(any::<usize>(), 0..12),
            ) {
                let mut stream = Vec::new();
                for (i, (key, len)) in frames.iter().enumerate() {
                    stream.extend(req(*key, i as i32, &vec![0xab; *len]));
                }
                let whole = events(&stream, &[], 27);
                prop_assert_eq!(events(&stream, &cuts, 27), whole.clone());
                let n = whole.iter().filter(|e| e.starts_with("frame ") || e.starts_with("skipped ")).count();
                prop_assert_eq!(n, frames.len());
            }

            /// Arbitrary bytes, chunked arbitrarily, with gaps, never panic, and the resync
            /// buffer stays bounded.
            #[test]
            fn garbage_is_survived(
                bytes in prop::collection::vec(any::<u8>(), 0..3000),
                cuts in prop::collection::vec(any::<usize>(), 0..12),
                gap in 0u64..5000,
            ) {
                let mut log = Log { keep_key: Some(27), ..Default::default() };
                let mut f = Framer::new_mid_stream(Role::Requests, 1 << 20, &Memory::default());
                let mut at = 0;
                let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
                cuts.sort();
                for c in cuts {
                    f.push(&bytes[at..c], &mut log);
                    f.gap(gap, &mut log);
                    at = c;
                }
                f.push(&bytes[at..], &mut log);
                prop_assert!(f.buf.len() <= RESYNC_BUFFER_LIMIT + bytes.len());
                f.finish(&mut log);
            }
        }
    }
}
