//! The object tree of one frame of a decoded API: every field with its byte offset and size,
//! in the shape of the seed's object tree (`../shared/seeds/WriteTxnMarkers.txt`).
//!
//! Input: the bytes of one whole frame, its 4-byte size prefix included, and (for a response)
//! the API key and version of its request. Output: a [`Node`] tree, and its text by
//! [`render`]. The tree is the field trace ([`super::trace`]) recorded while the header
//! decoder and the API's body decoder from the table ([`super::apis`]) decode the frame, so
//! the tree shows exactly what was decoded, laid out once, in the decoder. `--format tree`
//! renders it (`crate::output::text`).

use super::api::{self, api_name};
use super::apis::{self, Decoder};
use super::event::MessageKind;
use super::header::{decode_request_header, decode_response_header};
use super::primitives::{group, int32, leaf, Budget, DecodeError, DecodeErrorKind, PResult};
pub use super::trace::Node;
use super::trace::Trace;

/// The seed's text of a tree: one line per node, `+-- ` under its parent, `|   ` for each
/// open ancestor, then `name type = value [0xOFFSET, SIZEB]`.
pub fn render(root: &Node) -> String {
    let mut out = String::new();
    line(&mut out, root, "", "");
    out
}

fn line(out: &mut String, n: &Node, lead: &str, child_lead: &str) {
    out.push_str(lead);
    out.push_str(&n.name);
    if !n.kind.is_empty() {
        out.push(' ');
        out.push_str(&n.kind);
    }
    if !n.value.is_empty() {
        out.push_str(" = ");
        out.push_str(&n.value);
    }
    out.push_str(&format!(" [0x{:04x}, {}B]\n", n.offset, n.size));
    for (i, c) in n.children.iter().enumerate() {
        let last = i + 1 == n.children.len();
        let next = if last { "    " } else { "|   " };
        line(
            out,
            c,
            &format!("{child_lead}+-- "),
            &format!("{child_lead}{next}"),
        );
    }
}

/// The tree of a request frame (size prefix included) of a decoded API: `Frame`, the request
/// header, the body. The API and version are read from the header; a version above the
/// decoder's newest is laid out as the newest. Errors: the [`DecodeError`] of the first field
/// that does not fit (its path is not filled in here), or [`DecodeErrorKind::TruncatedBody`]
/// for a frame whose header is cut or whose API has no decoder. Bytes after the body become a
/// last `trailing_bytes` node, so the tree always covers the frame.
pub fn request_tree(frame: &[u8]) -> Result<Node, DecodeError> {
    let be16 = |at: usize| {
        frame
            .get(at..at + 2)
            .map(|b| i16::from_be_bytes([b[0], b[1]]))
    };
    let (Some(key), Some(version)) = (be16(4), be16(6)) else {
        return Err(DecodeError::at(&[], DecodeErrorKind::TruncatedBody));
    };
    let d = decoder_of(key)?;
    let version = version.clamp(*d.versions.start(), *d.versions.end());
    let hv = api::request_header_version(key, version);
    tree(frame, d, MessageKind::Request, version, |body, b| {
        let h = decode_request_header(body, hv, b)?;
        Ok(h.len)
    })
}

/// The tree of a response frame (size prefix included) to a request of API `api_key` and
/// `version`: `Frame`, the response header, the body. Errors as for [`request_tree`].
pub fn response_tree(frame: &[u8], api_key: i16, version: i16) -> Result<Node, DecodeError> {
    let d = decoder_of(api_key)?;
    let hv = api::response_header_version(api_key, version);
    tree(frame, d, MessageKind::Response, version, |body, b| {
        let h = decode_response_header(body, hv, b)?;
        Ok(h.len)
    })
}

fn decoder_of(api_key: i16) -> Result<&'static Decoder, DecodeError> {
    apis::decoder(api_key).ok_or_else(|| DecodeError::at(&[], DecodeErrorKind::TruncatedBody))
}

/// Records the trace of `frame`: the size prefix, the header (`header` returns its length),
/// and the body of `d` at `version`.
fn tree(
    frame: &[u8],
    d: &Decoder,
    kind: MessageKind,
    version: i16,
    header: impl FnOnce(&[u8], &Budget) -> Result<usize, DecodeError>,
) -> Result<Node, DecodeError> {
    let name = api_name(d.api_key).unwrap_or("unknown");
    let what = match kind {
        MessageKind::Request => "Request",
        MessageKind::Response => "Response",
    };
    // A frame cut short (its prefix gives more bytes than it holds) is laid out as far as it
    // was captured, as a truncated record's body is (`super::partial`).
    let declared = frame
        .get(..4)
        .map_or(0, |p| i32::from_be_bytes([p[0], p[1], p[2], p[3]]));
    let slack = usize::try_from(declared)
        .unwrap_or(0)
        .saturating_add(4)
        .saturating_sub(frame.len());
    let root = format!("{name}{what} message v{version}");
    let b = if slack > 0 {
        Budget::partial(frame.len(), root, slack)
    } else {
        Budget::traced(frame.len(), root)
    };
    frame_group(frame, &b).map_err(|e| match e {
        nom::Err::Error(e) | nom::Err::Failure(e) => e,
        nom::Err::Incomplete(_) => DecodeError::at(&[], DecodeErrorKind::TruncatedBody),
    })?;
    let after_prefix = &frame[4..];
    let header_len = match header(after_prefix, &b) {
        Ok(n) => n,
        // Cut inside the header: its fields captured, then the rest.
        Err(e) if slack > 0 && super::partial::stopped_at_cut(&e) => {
            return Ok(cut_tree(b, frame.len(), slack, &e));
        }
        Err(e) => return Err(e),
    };
    let body = &after_prefix[header_len..];
    b.trace(|t| {
        t.open(&format!("{name}{what}"), "struct", "", body);
        t.camel = true;
    });
    let decode = match kind {
        MessageKind::Request => d.decode_request,
        MessageKind::Response => d.decode_response,
    };
    let trailing = match decode(body, version, &b) {
        Ok(_) => 0,
        Err(e) if e.kind == DecodeErrorKind::TrailingBytes => e.remaining,
        Err(e) if slack > 0 && super::partial::stopped_at_cut(&e) => {
            return Ok(cut_tree(b, frame.len(), slack, &e));
        }
        Err(e) => return Err(e),
    };
    // The body ends where decoding did; the rest is not described.
    b.trace(|t| t.close(&body[body.len().saturating_sub(trailing)..]));
    let mut root = b.into_trace().map(Trace::finish).unwrap_or_else(|| Node {
        name: String::new(),
        kind: String::new(),
        value: String::new(),
        offset: 0,
        size: frame.len(),
        ..Node::default()
    });
    if trailing > 0 {
        root.children.push(Node {
            name: "trailing_bytes".into(),
            kind: "bytes".into(),
            value: format!("{trailing} bytes the schema does not describe"),
            offset: frame.len() - trailing,
            size: trailing,
            ..Node::default()
        });
    }
    Ok(root)
}

/// The tree of a frame of `captured` bytes (size prefix included) whose last `slack` bytes
/// were not captured, decoding having stopped at the cut with `e`: the fields recorded, then
/// the captured bytes of the field cut (`cut_field`) and the bytes never captured
/// (`not_captured`).
fn cut_tree(b: Budget, captured: usize, slack: usize, e: &DecodeError) -> Node {
    let mut root = b.into_trace().map(Trace::finish).unwrap_or_default();
    let end = root.children.last().map_or(0, |c| c.offset + c.size);
    let mut tail = |name: &str, value: String, offset: usize, size: usize| {
        root.children.push(Node {
            name: name.into(),
            kind: "bytes".into(),
            value,
            offset,
            size,
            ..Node::default()
        })
    };
    if end < captured {
        let n = captured - end;
        tail(
            "cut_field",
            format!("{n} bytes of {}", e.path_or_kind()),
            end,
            n,
        );
    }
    tail(
        "not_captured",
        format!("{slack} bytes cut off (snapshot length or a gap)"),
        captured,
        slack,
    );
    root.size = captured + slack;
    root
}

fn frame_group<'a>(frame: &'a [u8], b: &Budget) -> PResult<'a, i32> {
    group(b, "Frame", "", "", frame, |i| leaf(b, "size", i, int32))
}
