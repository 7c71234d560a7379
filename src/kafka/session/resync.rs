//! Where a frame may start after a loss: the plausibility of a request or response head, and
//! the evidence asked of a candidate (a correlation id that is expected, a frame that fills its
//! segment, another plausible frame right after it).

use super::*;

impl Handler<'_> {
    /// Whether a frame of `role` starts at `bytes` while framing looks for one (after a loss,
    /// a bad size, or at the start of a capture that began mid-connection), with the evidence
    /// `at` describes: the answer to [`FrameHandler::probe`].
    pub(super) fn candidate(&mut self, role: Role, bytes: &[u8], at: ProbeAt) -> Probe {
        let verdict = self.plausible(role, bytes, self.corr.last_request, at.stream_start);
        let Some(size) = int32_at(bytes, 0).filter(|_| verdict == Probe::Yes) else {
            return verdict;
        };
        let size = size as usize;
        if at.stream_start {
            return Probe::Yes;
        }
        // A response taken blind (no request of the connection captured, so its correlation id
        // proves nothing) needs the stronger evidence: its end in sight, and another plausible
        // frame (or the end of the stream) right after it. The segment-start shortcuts below
        // would let a stretch of record data pass for a huge frame and swallow what follows.
        let blind = role == Role::Responses && self.blind();
        if at.segment_start && !blind {
            // At a segment start, a correlation id that is expected is evidence enough: a
            // response to a pending request, or the request right after one known to be real.
            let expected = match role {
                Role::Requests => {
                    let corr = int32_at(bytes, 8);
                    let last = self.corr.last_request;
                    corr.zip(last)
                        .is_some_and(|(c, l)| (1..=16).contains(&c.wrapping_sub(l)))
                }
                Role::Responses => {
                    int32_at(bytes, 4).is_some_and(|c| self.corr.pending.contains(c))
                }
            };
            // Unless the bytes right after it in view start no plausible frame: a frame
            // inside record data is followed by more record data.
            if expected && self.followed(role, bytes, size) != Probe::No {
                return Probe::Yes;
            }
            // A frame that would run past the end of a segment shorter than the longest seen:
            // a sender fills its segments while a frame continues.
            if let Some(len) = at.segment_len {
                if size + 4 > len && len < at.max_segment {
                    return Probe::No;
                }
                // A frame that fills its segment exactly is what a sender writes.
                if size + 4 == len {
                    return Probe::Yes;
                }
            }
            // A frame too long to see its end within the resync buffer is taken on the
            // evidence of its segment start.
            if size + 16 > RESYNC_BUFFER_LIMIT {
                return Probe::Yes;
            }
        }
        // Otherwise the frame must be followed by another plausible one (a frame header's
        // bytes often pass for a size prefix); at the end of the stream, by nothing.
        if at.stream_end && size + 4 <= bytes.len() {
            let rest = &bytes[size + 4..];
            let after = match role {
                Role::Requests => int32_at(bytes, 8),
                Role::Responses => None,
            };
            // Nothing after it, another frame after it, or (at a segment start) the beginning
            // of what may be one.
            let next = if rest.is_empty() {
                Probe::Yes
            } else {
                self.plausible(role, rest, after, false)
            };
            if next == Probe::Yes || (next == Probe::NeedMore && at.next_is_segment_start) {
                return Probe::Yes;
            }
        }
        // Inside a segment, a frame's header bytes often pass for a size prefix: ask there
        // that the frame be followed by another plausible one.
        self.followed(role, bytes, size)
    }

    /// Whether `bytes` start a plausible frame of `role`: for a request a known API key and
    /// version, a well-formed client id, and a correlation id that follows `after` (the
    /// previous request's, when known); for a response a plausible size and a pending
    /// correlation id (or, at the very start of a stream picked up mid-way, or when nothing of
    /// the request direction was captured, any non-negative one).
    pub(super) fn plausible(
        &self,
        role: Role,
        bytes: &[u8],
        after: Option<i32>,
        stream_start: bool,
    ) -> Probe {
        match role {
            // The correlation id is read below: a header v0 request can pass the probe
            // with fewer bytes than that; what they hold must still fit a request head.
            Role::Requests if bytes.len() < 12 => {
                let size = int32_at(bytes, 0);
                if size.is_some_and(|s| s < 8 || s as u32 > self.shared.max_frame_size)
                    || probe_request(bytes, self.shared.max_frame_size) == Probe::No
                {
                    Probe::No
                } else {
                    Probe::NeedMore
                }
            }
            Role::Requests => match probe_request(bytes, self.shared.max_frame_size) {
                // Produce v0 with correlation id 0 and an empty client id: ten zero bytes,
                // which is what zero-filled payload looks like, not a request.
                Probe::Yes if bytes.len() >= 14 && bytes[4..14].iter().all(|&b| b == 0) => {
                    Probe::No
                }
                // Clients number their requests upwards: the next frame's correlation id
                // follows the previous one closely.
                Probe::Yes => match (int32_at(bytes, 8), after) {
                    (Some(corr), Some(last))
                        if !CORRELATION_WINDOW.contains(&corr.wrapping_sub(last)) =>
                    {
                        Probe::No
                    }
                    _ => Probe::Yes,
                },
                other => other,
            },
            Role::Responses => {
                let (Some(size), Some(corr)) = (int32_at(bytes, 0), int32_at(bytes, 4)) else {
                    return Probe::NeedMore;
                };
                if size < 4 || size as u32 > self.shared.max_frame_size {
                    return Probe::No;
                }
                // With nothing of the request direction captured, no correlation id can be
                // expected: any non-negative one is taken, as at the start of a stream picked
                // up mid-way (the probe still asks for the usual evidence around it).
                if self.corr.pending.contains(corr) || ((stream_start || self.blind()) && corr >= 0)
                {
                    Probe::Yes
                } else {
                    self.answers_a_lost_request(bytes, size as u32, corr)
                }
            }
        }
    }

    /// After a loss in the request direction that may have taken whole requests: whether the
    /// response that `bytes` start (`size` bytes after its prefix, correlation id `corr`) may
    /// answer one of them: its correlation id after the last request known before the loss,
    /// and the whole frame decoding as exactly one layout of the inferable APIs selected (the
    /// rule for a response without its request). `NeedMore` until the frame is in view.
    fn answers_a_lost_request(&self, bytes: &[u8], size: u32, corr: i32) -> Probe {
        if !self.after_request_loss(corr) || size > INFER_LIMIT {
            return Probe::No;
        }
        let Some(frame) = bytes.get(4..4 + size as usize) else {
            return Probe::NeedMore;
        };
        if self.layouts(frame, corr).0.len() == 1 {
            Probe::Yes
        } else {
            Probe::No
        }
    }

    /// Whether a response with correlation id `corr` may answer a request that a remembered
    /// loss of the request direction took.
    pub(super) fn after_request_loss(&self, corr: i32) -> bool {
        self.gap_that_may_hold(corr).is_some()
    }

    /// The latest remembered loss of the request direction that may have taken the request a
    /// response with correlation id `corr` answers ([`RequestGap::may_hold`]).
    pub(super) fn gap_that_may_hold(&self, corr: i32) -> Option<RequestGap> {
        self.corr
            .request_gaps
            .iter()
            .rev()
            .find(|g| g.may_hold(corr))
            .copied()
    }

    /// Whether the frame of `size` bytes that `bytes` start is followed by another plausible
    /// frame (for requests, one whose correlation id follows this one's).
    pub(super) fn followed(&self, role: Role, bytes: &[u8], size: usize) -> Probe {
        let end = 4 + size;
        let Some(next) = bytes.get(end..) else {
            return Probe::NeedMore;
        };
        let after = match role {
            Role::Requests => int32_at(bytes, 8),
            Role::Responses => None,
        };
        // After a loss of the request direction, a response of any API may follow: one whose
        // correlation id that loss may have taken, and whose size is sane, is evidence enough
        // of a frame boundary (the frame taken must still decode as one inferable layout).
        if let (Role::Responses, Some(size), Some(corr)) =
            (role, int32_at(next, 0), int32_at(next, 4))
        {
            if size >= 4
                && size as u32 <= self.shared.max_frame_size
                && self.after_request_loss(corr)
            {
                return Probe::Yes;
            }
        }
        self.plausible(role, next, after, false)
    }
}
