//! Kafka request and response headers.
//!
//! Input: a frame's bytes after the int32 size prefix, and the header version to read (from
//! [`super::api::request_header_version`] / [`super::api::response_header_version`]).
//! Output: the header fields and the number of bytes the header took, so that the body starts
//! right after it.
//!
//! Source: Apache Kafka `RequestHeader.json` (v0: api_key, api_version, correlation_id; v1 adds
//! the INT16-prefixed nullable client_id; v2 adds tagged fields, with client_id still classic)
//! and `ResponseHeader.json` (v0: correlation_id; v1 adds tagged fields).

use super::api::api_name;
use super::names::Name;
use super::primitives::{
    group, int16, int32, leaf, leaf_shown, nullable_text_field, tags, Budget, DecodeError, PResult,
    TaggedField,
};

/// A decoded request header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHeader {
    /// `request_api_key`.
    pub api_key: i16,
    /// `request_api_version`.
    pub api_version: i16,
    /// `correlation_id`, echoed in the response.
    pub correlation_id: i32,
    /// `client_id`: `None` when null on the wire or absent (header v0); shared with the other
    /// messages of the same client.
    pub client_id: Option<Name>,
    /// Header tagged fields (v2), none of which Kafka defines.
    pub unknown_tagged_fields: Vec<TaggedField>,
    /// The header version that was read (0, 1 or 2).
    pub header_version: u8,
    /// Bytes the header took.
    pub len: usize,
}

/// A decoded response header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHeader {
    /// `correlation_id`, matching the request's.
    pub correlation_id: i32,
    /// Header tagged fields (v1).
    pub unknown_tagged_fields: Vec<TaggedField>,
    /// The header version that was read (0 or 1).
    pub header_version: u8,
    /// Bytes the header took.
    pub len: usize,
}

fn complete<T>(r: PResult<'_, T>) -> Result<(&[u8], T), DecodeError> {
    r.map_err(|e| match e {
        nom::Err::Error(e) | nom::Err::Failure(e) => e,
        nom::Err::Incomplete(_) => {
            DecodeError::at(&[], super::primitives::DecodeErrorKind::TruncatedBody)
        }
    })
}

/// The trace group of a header, `RequestHeader v2` (made only when a trace is recorded).
fn group_name(b: &Budget, what: &str, header_version: u8) -> String {
    if b.is_traced() {
        format!("{what} v{header_version}")
    } else {
        String::new()
    }
}

/// Reads a request header of `header_version` from `frame` (the bytes after the size prefix).
/// Tagged fields count against `budget`, the frame's element budget, which also records the
/// header as the trace group `RequestHeader vN` when asked.
pub fn decode_request_header(
    frame: &[u8],
    header_version: u8,
    budget: &Budget,
) -> Result<RequestHeader, DecodeError> {
    let b = budget;
    let name = group_name(b, "RequestHeader", header_version);
    let (i, header) = complete(group(b, &name, "", "", frame, |i| {
        let (i, api_key) = leaf_shown(
            b,
            "request_api_key",
            "int16",
            i,
            int16,
            |k| match api_name(*k) {
                Some(name) => format!("{k} ({name})"),
                None => k.to_string(),
            },
        )?;
        let (i, api_version) = leaf(b, "request_api_version", i, int16)?;
        let (i, correlation_id) = leaf(b, "correlation_id", i, int32)?;
        let (i, client_id) = if header_version >= 1 {
            nullable_text_field::<Name>(b, "client_id", i, false)?
        } else {
            (i, None)
        };
        let (i, unknown_tagged_fields) = tags(b, i, header_version >= 2)?;
        let header = RequestHeader {
            api_key,
            api_version,
            correlation_id,
            client_id,
            unknown_tagged_fields,
            header_version,
            len: 0,
        };
        Ok((i, header))
    }))?;
    Ok(RequestHeader {
        len: frame.len() - i.len(),
        ..header
    })
}

/// Reads a response header of `header_version` from `frame` (the bytes after the size prefix).
///
/// Tagged fields count against `budget`, the frame's element budget, which also records the
/// header as the trace group `ResponseHeader vN` when asked.
pub fn decode_response_header(
    frame: &[u8],
    header_version: u8,
    budget: &Budget,
) -> Result<ResponseHeader, DecodeError> {
    let b = budget;
    let name = group_name(b, "ResponseHeader", header_version);
    let (i, (correlation_id, unknown_tagged_fields)) =
        complete(group(b, &name, "", "", frame, |i| {
            let (i, correlation_id) = leaf(b, "correlation_id", i, int32)?;
            let (i, tags) = tags(b, i, header_version >= 1)?;
            Ok((i, (correlation_id, tags)))
        }))?;
    Ok(ResponseHeader {
        correlation_id,
        unknown_tagged_fields,
        header_version,
        len: frame.len() - i.len(),
    })
}

/// The big-endian INT16 at byte `at` of `bytes`, if they reach that far.
#[inline]
pub fn int16_at(bytes: &[u8], at: usize) -> Option<i16> {
    let b = bytes.get(at..at.checked_add(2)?)?;
    Some(i16::from_be_bytes([b[0], b[1]]))
}

/// The big-endian INT32 at byte `at` of `bytes`, if they reach that far (a size prefix at 0,
/// a response's correlation id at 4 of a frame with its prefix).
#[inline]
pub fn int32_at(bytes: &[u8], at: usize) -> Option<i32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// The fields every request frame starts with, whatever its header version
/// (`RequestHeader.json`: `RequestApiKey`, `RequestApiVersion`, `CorrelationId`), read
/// without decoding the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestHead {
    /// `request_api_key`.
    pub api_key: i16,
    /// `request_api_version`.
    pub api_version: i16,
    /// `correlation_id`.
    pub correlation_id: i32,
}

impl RequestHead {
    /// The head of the frame whose bytes after the size prefix start `frame`; `None` with
    /// fewer than 8 bytes.
    #[inline]
    pub fn peek(frame: &[u8]) -> Option<Self> {
        Some(RequestHead {
            api_key: int16_at(frame, 0)?,
            api_version: int16_at(frame, 2)?,
            correlation_id: int32_at(frame, 4)?,
        })
    }
}

/// How a run of bytes looks as the start of a request frame, for resynchronising after a gap
/// and for finding Kafka on ports nobody named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// A plausible request starts here.
    Yes,
    /// No request starts here.
    No,
    /// Too few bytes to tell.
    NeedMore,
}

/// Whether `bytes` (starting at a size prefix) look like the start of a Kafka request: size in
/// `8..=max_frame_size`, a known API key, a version in that key's range and, for header v1 and
/// v2, a client id whose length fits in the frame and whose bytes are printable ASCII.
pub fn probe_request(bytes: &[u8], max_frame_size: u32) -> Probe {
    if bytes.len() < 8 {
        return Probe::NeedMore;
    }
    let size = i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    if size < 8 || size as u32 > max_frame_size {
        return Probe::No;
    }
    let key = i16::from_be_bytes([bytes[4], bytes[5]]);
    let version = i16::from_be_bytes([bytes[6], bytes[7]]);
    match super::api::api_info(key) {
        Some(info) if info.has_version(version) => {}
        _ => return Probe::No,
    }
    if super::api::request_header_version(key, version) == 0 {
        return Probe::Yes;
    }
    if size < 10 {
        return Probe::No;
    }
    if bytes.len() < 14 {
        return Probe::NeedMore;
    }
    let len = i16::from_be_bytes([bytes[12], bytes[13]]);
    if len == -1 {
        return Probe::Yes;
    }
    if len < 0 || len as i64 > size as i64 - 10 {
        return Probe::No;
    }
    let len = len as usize;
    if bytes.len() < 14 + len {
        return Probe::NeedMore;
    }
    if bytes[14..14 + len].iter().all(|b| (0x20..0x7f).contains(b)) {
        Probe::Yes
    } else {
        Probe::No
    }
}

/// [`probe_request`] of a frame head that a snapshot length cut inside its client id (a frame
/// whose size prefix says it ends where the cut does): the client id bytes that were captured
/// must be printable ASCII; the rest were never captured.
pub fn probe_request_cut(bytes: &[u8], max_frame_size: u32) -> Probe {
    match probe_request(bytes, max_frame_size) {
        Probe::NeedMore if bytes.len() >= 14 => {
            if bytes[14..].iter().all(|b| (0x20..0x7f).contains(b)) {
                Probe::Yes
            } else {
                Probe::No
            }
        }
        other => other,
    }
}

/// A stricter [`probe_request`] for deciding that a connection on a port nobody named is Kafka,
/// from the first bytes of one direction: the correlation id must also be non-negative (clients
/// count up from 0), and when the bytes run past the end of the first frame, the next four must
/// be a plausible size too.
pub fn detect_request(bytes: &[u8], max_frame_size: u32) -> Probe {
    match probe_request(bytes, max_frame_size) {
        // A header v0 request passes the probe with 8 bytes; the correlation id is read below.
        Probe::Yes if bytes.len() < 12 => return Probe::NeedMore,
        Probe::Yes => {}
        other => return other,
    }
    let correlation_id = i32::from_be_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if correlation_id < 0 {
        return Probe::No;
    }
    let size = i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
    let next = 4 + size;
    if bytes.len() > next {
        if bytes.len() < next + 4 {
            return Probe::NeedMore;
        }
        let s = i32::from_be_bytes([
            bytes[next],
            bytes[next + 1],
            bytes[next + 2],
            bytes[next + 3],
        ]);
        if s < 8 || s as u32 > max_frame_size {
            return Probe::No;
        }
    }
    Probe::Yes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes() {
        let seed = hex::decode("00000025001b0001000000000000").unwrap();
        assert_eq!(probe_request(&seed, 1 << 20), Probe::Yes);
        assert_eq!(probe_request(&seed[..10], 1 << 20), Probe::NeedMore);
        // Unknown API key 200.
        let bad = hex::decode("0000002500c80001000000000000").unwrap();
        assert_eq!(probe_request(&bad, 1 << 20), Probe::No);
        // Version 9 of WriteTxnMarkers does not exist.
        let bad = hex::decode("00000025001b0009000000000000").unwrap();
        assert_eq!(probe_request(&bad, 1 << 20), Probe::No);
        // client id "ab\x01" is not printable.
        let bad = hex::decode("00000025001b000100000000000361620100").unwrap();
        assert_eq!(probe_request(&bad, 1 << 20), Probe::No);
        let ok = hex::decode("00000025001b00010000000000036162630000").unwrap();
        assert_eq!(probe_request(&ok, 1 << 20), Probe::Yes);
        // Size above the cap.
        assert_eq!(probe_request(&seed, 16), Probe::No);
    }

    #[test]
    fn detection_is_stricter() {
        // An X11 server's first event looks like Produce v0 with correlation id 0x87010000.
        let x11 = hex::decode("0103df28000000008701000000000000ed10000000000000").unwrap();
        assert_eq!(probe_request(&x11, 100 << 20), Probe::Yes);
        assert_eq!(detect_request(&x11, 100 << 20), Probe::No);
        let seed = hex::decode("00000025001b00010000000000000002").unwrap();
        assert_eq!(detect_request(&seed, 1 << 20), Probe::Yes);
        // A frame of 10 bytes followed by garbage that is no size prefix.
        let two = hex::decode("0000000a001b00010000000100000fffffffff").unwrap();
        assert_eq!(detect_request(&two, 1 << 20), Probe::No);
        let two = hex::decode("0000000a001b0001000000010000000000080000").unwrap();
        assert_eq!(detect_request(&two, 1 << 20), Probe::Yes);
        // ControlledShutdown v0 (request header v0) passes the probe on its first 8 bytes; the
        // correlation id needs 12 (it used to be read past the end: a fuzz crash).
        let v0 = hex::decode("0000000800070000000000050000000800070000").unwrap();
        assert_eq!(probe_request(&v0[..8], 1 << 20), Probe::Yes);
        for n in 8..12 {
            assert_eq!(
                detect_request(&v0[..n], 1 << 20),
                Probe::NeedMore,
                "{n} bytes"
            );
        }
        assert_eq!(detect_request(&v0[..12], 1 << 20), Probe::Yes);
        assert_eq!(detect_request(&v0, 1 << 20), Probe::Yes);
    }

    #[test]
    fn headers() {
        let frame = hex::decode("001b00010000000700036162630201000501aa").unwrap();
        let h = decode_request_header(&frame, 2, &Budget::default()).unwrap();
        assert_eq!(h.api_key, 27);
        assert_eq!(h.correlation_id, 7);
        assert_eq!(h.client_id.as_deref(), Some("abc"));
        assert_eq!(h.unknown_tagged_fields.len(), 2);
        assert_eq!(h.len, frame.len());
        let h = decode_request_header(
            &hex::decode("0007000000000001").unwrap(),
            0,
            &Budget::default(),
        )
        .unwrap();
        assert_eq!((h.client_id, h.len), (None, 8));
        let r =
            decode_response_header(&hex::decode("0000000900ff").unwrap(), 1, &Budget::default())
                .unwrap();
        assert_eq!((r.correlation_id, r.len), (9, 5));
        assert!(decode_response_header(&[0, 0], 0, &Budget::default()).is_err());
    }
}
