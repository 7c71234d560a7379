//! Frames decoded as they stream by (the decoder table's `walk_request` / `walk_response`:
//! Produce requests, Fetch responses): the header is gathered first (at most
//! [`MAX_WALK_HEADER`] bytes), then every body byte goes to the API's walk, which keeps only
//! the structure it reads. What a walk holds is charged to the run's budget.
//!
//! Input: the framer's [`Decision::Walk`] bytes of one frame, its end, or a loss inside it.
//! Output: the frame's record (as a kept frame's would be), or its anomaly; for a frame cut
//! short (a loss or a snapshot-length cut inside it, the end of its direction) the record of
//! what its walk read, marked `truncated` ([`Handler::walk_partial`]).

use super::*;
use crate::kafka::apis::BodyWalk;
use crate::kafka::primitives::{DecodeErrorKind, TaggedField};

/// Most header bytes gathered before a walked frame's body starts: the 8 fixed bytes, a client
/// id of at most 32,767 bytes and some tagged fields.
pub(super) const MAX_WALK_HEADER: usize = 40 * 1024;

/// The header of a walked frame, once read.
#[derive(Debug, Clone)]
pub(super) struct WalkedHeader {
    /// Bytes it took.
    pub(super) len: usize,
    pub(super) header_version: u8,
    pub(super) client_id: Option<crate::kafka::names::Name>,
    pub(super) unknown_tagged_fields: Vec<TaggedField>,
}

/// One frame being walked.
pub(super) struct Walking {
    /// The frame's size (after the prefix).
    pub(super) size: u32,
    /// The header's bytes, while it is incomplete.
    head: Vec<u8>,
    /// How many of them the framer gave with the frame's start (more were gathered since
    /// when `head` is longer).
    head_given: usize,
    /// The header, once read; or why it could not be.
    pub(super) header: Option<Result<WalkedHeader, DecodeError>>,
    /// The body's walk, once the header is read.
    walk: Option<Box<dyn BodyWalk>>,
    /// What the walk holds, charged.
    charge: Charge,
    /// Bytes of the frame seen so far (after its size prefix), for a frame cut short.
    seen: u64,
}

impl std::fmt::Debug for Walking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Walking")
            .field("size", &self.size)
            .field("head", &self.head.len())
            .field("header", &self.header)
            .field("walking", &self.walk.is_some())
            .finish()
    }
}

impl Walking {
    pub(super) fn new(size: u32, head: &[u8], memory: &Memory) -> Self {
        Walking {
            size,
            head: head.to_vec(),
            head_given: head.len(),
            header: None,
            walk: None,
            charge: memory.charge(Holding::Frames),
            seen: head.len() as u64,
        }
    }
}

impl Handler<'_> {
    /// Starts walking the frame whose head was just read, when its API walks this side.
    /// `false`: keep the frame as usual.
    pub(super) fn start_walk(&mut self, role: Role, size: u32, head: &[u8]) -> bool {
        let Some(c) = self.corr.current[self.dir.index()] else {
            return false;
        };
        let Some(d) = self.kept(c.api_key, c.api_version) else {
            return false;
        };
        let walks = match role {
            Role::Requests => d.walk_request,
            Role::Responses => d.walk_response,
        };
        if walks.is_none() || !d.versions.contains(&c.api_version) {
            return false;
        }
        let mut w = Box::new(Walking::new(size, head, &self.shared.memory));
        // Only a header v0 is the head itself ([`Role::head_len`]); a longer one waits for the
        // bytes that follow (trying it now would only build the error of a short read).
        let header_v0 = match role {
            Role::Requests => api::request_header_version(c.api_key, c.api_version) == 0,
            Role::Responses => api::response_header_version(c.api_key, c.api_version) == 0,
        };
        if header_v0 || head.len() as u64 >= u64::from(size) {
            self.walk_header(role, &mut w, &[]);
        }
        self.corr.walks[self.dir.index()] = Some(w);
        true
    }

    /// Gathers header bytes; once the header is read, starts the walk with the rest.
    fn walk_header(&mut self, role: Role, w: &mut Walking, bytes: &[u8]) {
        let Some(c) = self.corr.current[self.dir.index()] else {
            return;
        };
        // Most headers (a client id of a few dozen bytes) are whole in the frame's head and
        // the first bytes after it: read them from a copy on the stack, not gathered on the
        // heap (an allocation of a segment's size per frame: some 7% of the decoding thread on
        // a capture of small frames). Tried once, on the first bytes after the frame's start;
        // a header longer than that, or spread over segments, is gathered below (a header read
        // from a prefix of the bytes is the one read from all of them).
        if w.head.len() == w.head_given && w.head.len() < QUICK_HEADER && !bytes.is_empty() {
            let mut quick = [0u8; QUICK_HEADER];
            let (held, more) = (w.head.len(), bytes.len().min(QUICK_HEADER - w.head.len()));
            quick[..held].copy_from_slice(&w.head);
            quick[held..held + more].copy_from_slice(&bytes[..more]);
            if let Ok(h) = read_walked_header(role, c, &quick[..held + more]) {
                let head = std::mem::take(&mut w.head);
                let (head, rest) = if h.len <= held {
                    (&head[h.len..], bytes)
                } else {
                    (&[][..], &bytes[h.len - held..])
                };
                start_body(c, role, w, &h, head, rest);
                w.header = Some(Ok(h));
                return;
            }
        }
        let room = MAX_WALK_HEADER.saturating_sub(w.head.len());
        let take = room.min(bytes.len());
        w.head.extend_from_slice(&bytes[..take]);
        let parsed = read_walked_header(role, c, &w.head);
        let all_here = w.head.len() as u64 >= u64::from(w.size) || w.head.len() >= MAX_WALK_HEADER;
        match parsed {
            Ok(h) => {
                let head = std::mem::take(&mut w.head);
                start_body(
                    c,
                    role,
                    w,
                    &h,
                    &head[h.len.min(head.len())..],
                    &bytes[take..],
                );
                w.header = Some(Ok(h));
            }
            Err(mut e) if all_here || !short(&e) => {
                // The error's position is relative to the bytes gathered; make it relative to
                // the whole frame, as `walked` reads it, whatever the segments were.
                let at = w.head.len().saturating_sub(e.remaining);
                e.remaining = (w.size as usize).saturating_sub(at);
                w.head = Vec::new();
                w.header = Some(Err(e));
            }
            Err(_) => {}
        }
    }

    /// Bytes of the frame being walked in this direction.
    pub(super) fn walk_bytes(&mut self, role: Role, bytes: &[u8]) {
        let Some(mut w) = self.corr.walks[self.dir.index()].take() else {
            return;
        };
        w.seen += bytes.len() as u64;
        match (&mut w.walk, &w.header) {
            (Some(walk), _) => walk.feed(bytes),
            (None, None) => self.walk_header(role, &mut w, bytes),
            (None, Some(_)) => {}
        }
        // The header bytes gathered, counted as bytes (not the vector's capacity, which
        // depends on how the segments came).
        let cost = w.head.len() + w.walk.as_ref().map_or(0, |x| x.cost());
        let moved = cost > w.charge.bytes() + 4096 || cost + 4096 < w.charge.bytes();
        if moved && !w.charge.set(cost) {
            w.charge.note_given_up();
            self.corr.refused[self.dir.index()] = true;
            let what = match self.corr.current[self.dir.index()] {
                Some(c) => format!(
                    "the {} {} v{} (correlation_id {}) of {} bytes was not decoded: what its \
                     walk held ({}) would pass the memory limit",
                    name_of(c.api_key),
                    side(role),
                    c.api_version,
                    c.correlation_id,
                    w.size,
                    crate::memory::human(cost)
                ),
                None => "a frame being walked was not decoded".to_string(),
            };
            self.memory_limit(Holding::Frames, what);
            return;
        }
        self.corr.walks[self.dir.index()] = Some(w);
    }

    /// The frame being walked ended whole: its record, or the anomaly of why it did not decode.
    pub(super) fn walked(&mut self, role: Role, w: Walking, end_seen: bool) {
        let Some(c) = self.corr.current[self.dir.index()].take() else {
            return;
        };
        let name = name_of(c.api_key);
        let Walking {
            size, header, walk, ..
        } = w;
        let side = side(role);
        let header = match header {
            Some(Ok(h)) => h,
            Some(Err(e)) => {
                if role == Role::Requests {
                    self.push_pending(&c, true);
                }
                let what = format!("{name} {side} header");
                return self.not_decoded(Some(c), &what, &e, size as usize, 0, None);
            }
            None => {
                if role == Role::Requests {
                    self.push_pending(&c, true);
                }
                let e = DecodeError::with_path(DecodeErrorKind::TruncatedBody, 0, &[]);
                let what = format!("{name} {side} header");
                return self.not_decoded(Some(c), &what, &e, size as usize, 0, None);
            }
        };
        if role == Role::Requests {
            self.push_pending(&c, false);
            self.corr.versions_seen.add(c.api_key, c.api_version);
            self.shared.versions_seen.add(c.api_key, c.api_version);
        }
        let result = match walk {
            Some(walk) => walk.finish(),
            None => Err(DecodeError::with_path(
                DecodeErrorKind::TruncatedBody,
                0,
                &[],
            )),
        };
        let apis::Finished {
            body,
            trailing,
            damage,
        } = match result {
            Ok(b) => b,
            Err(e) => {
                if role == Role::Requests {
                    self.last_not_decoded();
                }
                let what = format!("{name} {side} body");
                return self.not_decoded(Some(c), &what, &e, size as usize, header.len, None);
            }
        };
        if let Some(e) = &damage {
            // Passed over inside the body, whose record is written with everything else.
            self.body_problem(Some(c), e, size as usize, header.len, None, |offset| {
                format!(
                    "{name} {side} body: {e} (frame offset {offset}): a record batch whose \
                     length is no batch's; the rest of its records field was passed over (its \
                     `damaged_batch_bytes`), the message's other fields were read"
                )
            });
        }
        if let Some(e) = &trailing {
            let what = format!("{name} {side} body");
            self.trailing(Some(c), &what, e, size as usize, header.len, None);
        }
        let mut m = KafkaMessage {
            unknown_tagged_fields: header.unknown_tagged_fields,
            trailing_bytes: trailing.map(|e| e.remaining as u32),
            body,
            size,
            frame_bytes: None,
            packets: Vec::new(),
            response_missing: None,
            ..self.message(&c, MessageKind::Request, header.header_version, &[])
        };
        match role {
            Role::Requests => {
                self.confirm(c.correlation_id);
                m.client_id = Some(header.client_id);
            }
            Role::Responses => {
                let Some(req) = c.request else {
                    return;
                };
                m.message = MessageKind::Response;
                m.request_frame = Some(req.frame);
                m.latency_us = self.latency(&req, end_seen);
                m.clock_went_back = self.clock_went_back(&req);
                m.request_not_decoded = req.not_decoded;
            }
        }
        self.emit_message(m);
    }
}

impl Handler<'_> {
    /// The frame being walked stopped short (`at`: a loss inside it, a loss that took its end,
    /// the end of its direction): the record of the fields read wholly from the bytes that
    /// came, marked `truncated` as a kept frame's is ([`Handler::partial`]). `false` when the
    /// bytes fed were already not a body of its API, or its response has no request.
    pub(super) fn walk_partial(&mut self, role: Role, size: u32, at: PartialAt) -> bool {
        let Some(w) = self.corr.walks[self.dir.index()].take() else {
            return false;
        };
        let Some(c) = self.corr.current[self.dir.index()] else {
            return false;
        };
        if c.partial.is_some() || (role == Role::Responses && c.request.is_none()) {
            return false;
        }
        let Walking {
            head,
            header,
            walk,
            seen,
            ..
        } = *w;
        let captured = seen.min(u64::from(size)) as u32;
        let parts = match header {
            Some(Ok(h)) => {
                let Some((body, path)) = walk.and_then(|x| x.cut()) else {
                    return false;
                };
                PartialParts {
                    header_version: h.header_version,
                    client_id: (role == Role::Requests).then_some(h.client_id),
                    tags: h.unknown_tagged_fields,
                    body,
                    path,
                    captured,
                }
            }
            Some(Err(_)) => return false,
            None => {
                // Cut inside the header: the head gave the API, version and correlation id;
                // the header's own error names the field it stopped in.
                let budget = Budget::default();
                let (hv, e) = match role {
                    Role::Requests => {
                        let hv = api::request_header_version(c.api_key, c.api_version);
                        (hv, decode_request_header(&head, hv, &budget).err())
                    }
                    Role::Responses => {
                        let hv = api::response_header_version(c.api_key, c.api_version);
                        (hv, decode_response_header(&head, hv, &budget).err())
                    }
                };
                PartialParts {
                    header_version: hv,
                    client_id: None,
                    tags: Vec::new(),
                    body: Body::Partial(Default::default()),
                    path: e.map_or_else(|| "header".to_string(), |e| e.path_or_kind()),
                    captured,
                }
            }
        };
        self.partial_record(role, c, size, &[], parts, at)
    }
}

/// Header bytes read from a copy on the stack before any are gathered on the heap.
const QUICK_HEADER: usize = 256;

/// The header of a walked frame from its first bytes (`head`, as many as are at hand).
fn read_walked_header(role: Role, c: Current, head: &[u8]) -> Result<WalkedHeader, DecodeError> {
    let budget = Budget::default();
    match role {
        Role::Requests => {
            let hv = api::request_header_version(c.api_key, c.api_version);
            decode_request_header(head, hv, &budget).map(|h| WalkedHeader {
                len: h.len,
                header_version: hv,
                client_id: h.client_id,
                unknown_tagged_fields: h.unknown_tagged_fields,
            })
        }
        Role::Responses => {
            let hv = api::response_header_version(c.api_key, c.api_version);
            decode_response_header(head, hv, &budget).map(|h| WalkedHeader {
                len: h.len,
                header_version: hv,
                client_id: None,
                unknown_tagged_fields: h.unknown_tagged_fields,
            })
        }
    }
}

/// Starts the body's walk of a frame whose header `h` was read, feeding it the body's first
/// bytes: `head` (those gathered after the header), then `rest`.
fn start_body(c: Current, role: Role, w: &mut Walking, h: &WalkedHeader, head: &[u8], rest: &[u8]) {
    let d = apis::decoder(c.api_key);
    let start = match role {
        Role::Requests => d.and_then(|d| d.walk_request),
        Role::Responses => d.and_then(|d| d.walk_response),
    };
    if let Some(start) = start {
        let body_len = u64::from(w.size).saturating_sub(h.len as u64);
        let mut walk = start(c.api_version, body_len);
        walk.feed(head);
        walk.feed(rest);
        w.walk = Some(walk);
    }
}

/// Whether a header error may only mean its bytes have not all arrived.
fn short(e: &DecodeError) -> bool {
    matches!(
        e.kind,
        DecodeErrorKind::TruncatedBody
            | DecodeErrorKind::StringLengthExceedsFrame
            | DecodeErrorKind::ArrayCountExceedsFrame
    )
}
