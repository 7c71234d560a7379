//! Kafka's primitive wire types as nom parsers, every one of them bounded by the bytes left.
//!
//! Input: a byte slice holding the rest of one frame (parsers run in nom's *complete* mode: the
//! frame is whole, so running short is an error, never a wait).
//! Output: integers, strings, array counts and tagged fields, or a [`DecodeError`] that names
//! what went wrong ([`DecodeErrorKind`]), where (bytes left at the failure, turned into a frame
//! offset by [`DecodeError::offset_in`]) and in which field (a path like
//! `markers[1].topics[0].name`, built while the error unwinds).
//!
//! Source: the Kafka protocol guide's "Protocol Primitive Types" and KIP-482 (compact strings
//! and arrays, unsigned varints, tagged fields).
//!
//! Every count or length read from the wire is checked against the bytes that remain before
//! anything is allocated or skipped, so a forged count of 2^31-1 costs nothing.

use super::names::Name;
use super::trace::{Scalar, Trace};
use crate::vocab::AnomalyKind;
use nom::error::{ErrorKind, ParseError};
use nom::number::complete::{be_i16, be_i32, be_i64, be_i8, be_u8};
use nom::IResult;
use serde::Serialize;
use std::cell::{Cell, RefCell};
use std::fmt;

/// Result of a primitive or message parser over one frame's bytes.
pub type PResult<'a, T> = IResult<&'a [u8], T, DecodeError>;

/// What went wrong while decoding a frame. Each variant has a stable snake_case name
/// ([`DecodeErrorKind::as_str`]) that becomes the anomaly's `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// The frame ended inside a field (`truncated_body`).
    TruncatedBody,
    /// A length or count below -1, or -1 where null is not allowed for an array count
    /// (`negative_length`).
    NegativeLength,
    /// An array count that cannot fit in the bytes left, even at the smallest element size
    /// (`array_count_exceeds_frame`).
    ArrayCountExceedsFrame,
    /// A string or byte-field length longer than the bytes left (`string_length_exceeds_frame`).
    StringLengthExceedsFrame,
    /// An unsigned varint longer than 5 bytes, or with bits beyond 32 (`varint_overflow`).
    VarintOverflow,
    /// A string that is not UTF-8 (`invalid_utf8`).
    InvalidUtf8,
    /// A null string or array where the schema does not allow null (`null_not_allowed`).
    NullNotAllowed,
    /// Bytes left over after the body was fully decoded (`trailing_bytes`).
    TrailingBytes,
    /// More array elements and tagged fields in one frame than [`MAX_ELEMENTS_PER_FRAME`]
    /// (`too_many_elements`).
    TooManyElements,
}

impl DecodeErrorKind {
    /// The stable anomaly kind name.
    pub fn as_str(self) -> &'static str {
        AnomalyKind::from(self).as_str()
    }
}

impl From<DecodeErrorKind> for AnomalyKind {
    fn from(k: DecodeErrorKind) -> AnomalyKind {
        match k {
            DecodeErrorKind::TruncatedBody => AnomalyKind::TruncatedBody,
            DecodeErrorKind::NegativeLength => AnomalyKind::NegativeLength,
            DecodeErrorKind::ArrayCountExceedsFrame => AnomalyKind::ArrayCountExceedsFrame,
            DecodeErrorKind::StringLengthExceedsFrame => AnomalyKind::StringLengthExceedsFrame,
            DecodeErrorKind::VarintOverflow => AnomalyKind::VarintOverflow,
            DecodeErrorKind::InvalidUtf8 => AnomalyKind::InvalidUtf8,
            DecodeErrorKind::NullNotAllowed => AnomalyKind::NullNotAllowed,
            DecodeErrorKind::TrailingBytes => AnomalyKind::TrailingBytes,
            DecodeErrorKind::TooManyElements => AnomalyKind::TooManyElements,
        }
    }
}

/// One step of a field path: a field name or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSeg {
    /// A field, by its snake_case name as in the JSON output.
    Field(&'static str),
    /// An element of the array named by the preceding field.
    Index(usize),
}

/// A decoding failure: its kind, where it happened, and the field path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// What went wrong.
    pub kind: DecodeErrorKind,
    /// Bytes of the parsed slice left at the failure point (nom's position); see
    /// [`DecodeError::offset_in`].
    pub remaining: usize,
    /// Field path, innermost segment first while the error unwinds (see [`DecodeError::path`]).
    segs: Vec<PathSeg>,
}

impl DecodeError {
    /// A new error of `kind` at the position where `input` starts.
    pub fn at(input: &[u8], kind: DecodeErrorKind) -> Self {
        DecodeError {
            kind,
            remaining: input.len(),
            segs: Vec::new(),
        }
    }

    /// An error of `kind` with `remaining` bytes of the parsed slice left at the failure, in
    /// the field `path` (outermost first), for decoders that are not nom parsers (the
    /// streaming walks of `super::walk`).
    pub fn with_path(kind: DecodeErrorKind, remaining: usize, path: &[PathSeg]) -> Self {
        DecodeError {
            kind,
            remaining,
            segs: path.iter().rev().cloned().collect(),
        }
    }

    /// The byte offset of the failure within a slice of `total_len` bytes that the parse began
    /// on (for example the frame after its size prefix).
    pub fn offset_in(&self, total_len: usize) -> usize {
        total_len.saturating_sub(self.remaining)
    }

    /// The field path, outermost first, as in `markers[1].topics[0].name`; empty at top level.
    pub fn path(&self) -> String {
        let mut s = String::new();
        for seg in self.segs.iter().rev() {
            match seg {
                PathSeg::Field(name) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(name);
                }
                PathSeg::Index(i) => {
                    s.push('[');
                    s.push_str(&i.to_string());
                    s.push(']');
                }
            }
        }
        s
    }

    /// The path, or the kind's name for an error with none.
    pub fn path_or_kind(&self) -> String {
        let p = self.path();
        if p.is_empty() {
            self.kind.as_str().to_string()
        } else {
            p
        }
    }

    fn push(mut self, seg: PathSeg) -> Self {
        self.segs.push(seg);
        self
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path();
        if path.is_empty() {
            write!(f, "{}", self.kind.as_str())
        } else {
            write!(f, "{} at {}", self.kind.as_str(), path)
        }
    }
}

impl<'a> ParseError<&'a [u8]> for DecodeError {
    fn from_error_kind(input: &'a [u8], _kind: ErrorKind) -> Self {
        // In complete mode every primitive failure of nom's own is running out of bytes.
        DecodeError::at(input, DecodeErrorKind::TruncatedBody)
    }

    fn append(_input: &'a [u8], _kind: ErrorKind, other: Self) -> Self {
        other
    }
}

fn fail<T>(input: &[u8], kind: DecodeErrorKind) -> PResult<'_, T> {
    Err(nom::Err::Error(DecodeError::at(input, kind)))
}

/// Adds field `name` to the path of any error from `r`.
#[inline(always)]
pub fn field<'a, T>(name: &'static str, r: PResult<'a, T>) -> PResult<'a, T> {
    r.map_err(|e| e.map(|e| e.push(PathSeg::Field(name))))
}

/// Adds array index `i` to the path of any error from `r`.
pub fn index<T>(i: usize, r: PResult<'_, T>) -> PResult<'_, T> {
    r.map_err(|e| e.map(|e| e.push(PathSeg::Index(i))))
}

/// Most array elements and tagged fields decoded from one frame (100,000). The bytes left bound
/// each count already, but a 3-byte empty topic decodes into a struct of some 70 bytes; this
/// keeps the memory a frame can cost in proportion. WriteTxnMarkers frames carry far fewer.
pub const MAX_ELEMENTS_PER_FRAME: usize = 100_000;

/// The state of decoding one frame, shared by its header and body decoders: the elements it
/// may still decode (see [`MAX_ELEMENTS_PER_FRAME`]) and, when asked, the field trace
/// ([`Budget::traced`]). One per frame.
#[derive(Debug)]
pub struct Budget {
    left: Cell<usize>,
    trace: Option<RefCell<Trace>>,
    /// Bytes of the frame after the input that were not captured (a partial decode): array
    /// counts are checked against the bytes left plus these, as they were on the wire.
    slack: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            left: Cell::new(MAX_ELEMENTS_PER_FRAME),
            trace: None,
            slack: 0,
        }
    }
}

impl Budget {
    /// A budget that also records every field read into a [`Trace`] of a frame of
    /// `whole_len` bytes (size prefix included) under a root node named `root`.
    pub fn traced(whole_len: usize, root: String) -> Self {
        Budget {
            trace: Some(RefCell::new(Trace::new(whole_len, root))),
            ..Budget::default()
        }
    }

    /// A traced budget for decoding the captured first bytes of a frame whose last `slack`
    /// bytes were not captured: an array count is checked against the bytes the frame had
    /// after it, captured or not, so the elements that were captured still decode; decoding
    /// then stops at the first field not wholly captured ([`DecodeErrorKind::TruncatedBody`]).
    pub fn partial(whole_len: usize, root: String, slack: usize) -> Self {
        Budget {
            slack,
            ..Budget::traced(whole_len, root)
        }
    }

    /// Takes `n` elements from the budget; `false` (and nothing taken) when fewer are left.
    pub fn take(&self, n: usize) -> bool {
        match self.left.get().checked_sub(n) {
            Some(left) => {
                self.left.set(left);
                true
            }
            None => false,
        }
    }

    /// Runs `f` on the trace, when one is being recorded.
    #[inline]
    pub fn trace(&self, f: impl FnOnce(&mut Trace)) {
        if let Some(t) = &self.trace {
            f(&mut t.borrow_mut());
        }
    }

    /// Whether a trace is being recorded.
    #[inline]
    pub fn is_traced(&self) -> bool {
        self.trace.is_some()
    }

    /// The recorded trace, if any.
    pub fn into_trace(self) -> Option<Trace> {
        self.trace.map(RefCell::into_inner)
    }
}

/// A primitive's wire type name and value text in a trace.
pub trait Shown: Sized {
    /// The wire type, e.g. `int64`.
    const KIND: &'static str;
    /// The value as text.
    fn show(&self) -> String;
    /// The typed value, for a partial body.
    fn scalar(&self) -> Scalar;
}

macro_rules! shown {
    ($($t:ty => $k:literal),*) => {$(
        impl Shown for $t {
            const KIND: &'static str = $k;
            fn show(&self) -> String {
                self.to_string()
            }
            fn scalar(&self) -> Scalar {
                Scalar::Int(i64::from(*self))
            }
        }
    )*};
}
shown!(i8 => "int8", i16 => "int16", i32 => "int32", i64 => "int64", u16 => "uint16", u32 => "uvarint");

impl Shown for bool {
    const KIND: &'static str = "bool";
    fn show(&self) -> String {
        self.to_string()
    }
    fn scalar(&self) -> Scalar {
        Scalar::Bool(*self)
    }
}

/// Strings (elements of `[]string` arrays) are shown quoted, escaped as Rust does.
impl Shown for String {
    const KIND: &'static str = "string";
    fn show(&self) -> String {
        format!("{self:?}")
    }
    fn scalar(&self) -> Scalar {
        Scalar::Str(self.clone())
    }
}

/// An error code field `name` (INT16, Kafka's `ErrorCode` type), traced with Kafka's name of
/// the code beside it, e.g. `ErrorCode int16 = 0 (NONE)`.
pub fn error_code_field<'a>(b: &Budget, name: &'static str, i: &'a [u8]) -> PResult<'a, i16> {
    let (rest, v) = field(name, int16(i))?;
    b.trace(|t| {
        let text = crate::kafka::api::ErrorCode(v).text();
        t.leaf_typed(name, "int16", text, Scalar::Error(v), i, rest)
    });
    Ok((rest, v))
}

/// Field `name` read by `p`: errors get `name` in their path, and the trace (when recorded)
/// a leaf of the value's wire type.
#[inline(always)]
pub fn leaf<'a, T: Shown>(
    b: &Budget,
    name: &'static str,
    i: &'a [u8],
    p: impl FnOnce(&'a [u8]) -> PResult<'a, T>,
) -> PResult<'a, T> {
    leaf_shown(b, name, T::KIND, i, p, T::show)
}

/// Like [`leaf`], with the wire type `kind` and the value text `show` given (for a value
/// whose text says more than the number, such as an error code's name).
#[inline(always)]
pub fn leaf_shown<'a, T: Shown>(
    b: &Budget,
    name: &'static str,
    kind: &str,
    i: &'a [u8],
    p: impl FnOnce(&'a [u8]) -> PResult<'a, T>,
    show: impl FnOnce(&T) -> String,
) -> PResult<'a, T> {
    let (rest, v) = field(name, p(i))?;
    b.trace(|t| t.leaf_typed(name, kind, show(&v), v.scalar(), i, rest));
    Ok((rest, v))
}

/// A group of fields `name` (a struct, a header) read by `f`, traced as one node.
pub fn group<'a, T>(
    b: &Budget,
    name: &str,
    kind: &str,
    value: &str,
    i: &'a [u8],
    f: impl FnOnce(&'a [u8]) -> PResult<'a, T>,
) -> PResult<'a, T> {
    b.trace(|t| t.open(name, kind, value, i));
    let (rest, v) = f(i)?;
    b.trace(|t| t.close(rest));
    Ok((rest, v))
}

fn string_text(v: Option<&[u8]>, compact: bool) -> String {
    let text = match v {
        None => "null".to_string(),
        Some(b) => format!("{:?}", String::from_utf8_lossy(b)),
    };
    let len = v.map_or(-1, |b| b.len() as i64);
    if compact {
        format!("{text} (compact, len+1={})", len + 1)
    } else {
        format!("{text} (int16 len={len})")
    }
}

/// String field `name` ([`string`]), traced as `string` with its length encoding.
pub fn string_field<'a>(
    b: &Budget,
    name: &'static str,
    i: &'a [u8],
    compact: bool,
) -> PResult<'a, String> {
    text_field(b, name, i, compact)
}

/// [`string_field`] in any owned form ([`Text`]: a topic name or a client id as a shared
/// [`Name`]).
pub fn text_field<'a, T: Text>(
    b: &Budget,
    name: &'static str,
    i: &'a [u8],
    compact: bool,
) -> PResult<'a, T> {
    let (rest, v) = field(name, text::<T>(i, compact))?;
    b.trace(|t| {
        t.leaf_typed(
            name,
            "string",
            string_text(Some(v.text().as_bytes()), compact),
            Scalar::Str(v.text().to_owned()),
            i,
            rest,
        )
    });
    Ok((rest, v))
}

/// Nullable string field `name` ([`nullable_string`]), traced as `nullable_string`.
pub fn nullable_string_field<'a>(
    b: &Budget,
    name: &'static str,
    i: &'a [u8],
    compact: bool,
) -> PResult<'a, Option<String>> {
    nullable_text_field(b, name, i, compact)
}

/// [`nullable_string_field`] in any owned form ([`Text`]: a client id as a shared [`Name`]).
pub fn nullable_text_field<'a, T: Text>(
    b: &Budget,
    name: &'static str,
    i: &'a [u8],
    compact: bool,
) -> PResult<'a, Option<T>> {
    // Null, the common case of optional texts (error messages), read as its 1 or 2 bytes.
    if !b.is_traced() {
        let null = if compact { 1 } else { 2 };
        if i.get(..null)
            .is_some_and(|h| h.iter().all(|&x| x == if compact { 0 } else { 0xff }))
        {
            return Ok((&i[null..], None));
        }
    }
    let (rest, v) = field(name, nullable_text::<T>(i, compact))?;
    b.trace(|t| {
        let text = string_text(v.as_ref().map(|v| v.text().as_bytes()), compact);
        let scalar = v
            .as_ref()
            .map_or(Scalar::Null, |v| Scalar::Str(v.text().to_owned()));
        t.leaf_typed(name, "nullable_string", text, scalar, i, rest)
    });
    Ok((rest, v))
}

/// INT8.
pub fn int8(i: &[u8]) -> PResult<'_, i8> {
    be_i8(i)
}
/// INT16, big-endian.
pub fn int16(i: &[u8]) -> PResult<'_, i16> {
    be_i16(i)
}
/// INT32, big-endian.
pub fn int32(i: &[u8]) -> PResult<'_, i32> {
    be_i32(i)
}
/// INT64, big-endian.
pub fn int64(i: &[u8]) -> PResult<'_, i64> {
    be_i64(i)
}
/// BOOLEAN: one byte, 0 is false and any other value true (as Kafka's `readByte() != 0`).
pub fn boolean(i: &[u8]) -> PResult<'_, bool> {
    let (i, b) = be_u8(i)?;
    Ok((i, b != 0))
}

/// UUID (16 bytes), as Kafka prints it: URL-safe base64 without padding
/// ([`super::walk::uuid_text`]).
pub fn uuid(i: &[u8]) -> PResult<'_, String> {
    if i.len() < 16 {
        return fail(i, DecodeErrorKind::TruncatedBody);
    }
    let mut b = [0u8; 16];
    b.copy_from_slice(&i[..16]);
    Ok((&i[16..], super::walk::uuid_text(&b)))
}

/// UUID field `name` ([`uuid`]), traced as `uuid`.
pub fn uuid_field<'a>(b: &Budget, name: &'static str, i: &'a [u8]) -> PResult<'a, String> {
    leaf_shown(b, name, "uuid", i, uuid, String::clone)
}

/// UNSIGNED_VARINT (32-bit): 7 bits per byte, least significant group first. More than 5 bytes,
/// or a fifth byte carrying bits beyond 32, is [`DecodeErrorKind::VarintOverflow`].
pub fn uvarint(input: &[u8]) -> PResult<'_, u32> {
    let mut value: u32 = 0;
    for (n, &b) in input.iter().enumerate().take(5) {
        if n == 4 && b > 0x0f {
            return fail(input, DecodeErrorKind::VarintOverflow);
        }
        value |= u32::from(b & 0x7f) << (7 * n);
        if b & 0x80 == 0 {
            return Ok((&input[n + 1..], value));
        }
    }
    if input.len() < 5 {
        fail(input, DecodeErrorKind::TruncatedBody)
    } else {
        fail(input, DecodeErrorKind::VarintOverflow)
    }
}

/// Takes `len` bytes, or fails with [`DecodeErrorKind::StringLengthExceedsFrame`].
fn take_len(input: &[u8], len: usize) -> PResult<'_, &[u8]> {
    if len > input.len() {
        return fail(input, DecodeErrorKind::StringLengthExceedsFrame);
    }
    Ok((&input[len..], &input[..len]))
}

/// The owned form a decoded string takes: a `String`, or a [`Name`] shared with the other
/// messages that carry the same text ([`super::names`]: topic names, client ids).
pub trait Text: Sized + Clone {
    /// `s`, owned.
    fn of(s: &str) -> Self;
    /// The string whose bytes are `b`, owned; `None` when they are not UTF-8.
    fn of_bytes(b: &[u8]) -> Option<Self> {
        std::str::from_utf8(b).ok().map(Self::of)
    }
    /// The text.
    fn text(&self) -> &str;
}

impl Text for String {
    fn of(s: &str) -> Self {
        s.to_owned()
    }
    fn text(&self) -> &str {
        self
    }
}

impl Text for Name {
    fn of(s: &str) -> Self {
        super::names::name(s)
    }
    fn of_bytes(b: &[u8]) -> Option<Self> {
        super::names::name_of_bytes(b)
    }
    fn text(&self) -> &str {
        self
    }
}

fn utf8<'a, T: Text>(at: &'a [u8], bytes: &'a [u8]) -> Result<T, nom::Err<DecodeError>> {
    match T::of_bytes(bytes) {
        Some(s) => Ok(s),
        None => Err(nom::Err::Error(DecodeError::at(
            at,
            DecodeErrorKind::InvalidUtf8,
        ))),
    }
}

/// Raw bytes of a string field: classic (INT16 length, -1 = null) or compact (UNSIGNED_VARINT
/// length + 1, 0 = null) as `compact` says. `Ok(None)` is null.
pub fn nullable_string_bytes(input: &[u8], compact: bool) -> PResult<'_, Option<&[u8]>> {
    let start = input;
    let (input, len) = if compact {
        let (input, n) = uvarint(input)?;
        if n == 0 {
            return Ok((input, None));
        }
        (input, (n - 1) as usize)
    } else {
        let (input, n) = int16(input)?;
        if n == -1 {
            return Ok((input, None));
        }
        if n < -1 {
            return fail(start, DecodeErrorKind::NegativeLength);
        }
        (input, n as usize)
    };
    let (input, bytes) = take_len(input, len).map_err(|e| {
        e.map(|mut e| {
            e.remaining = start.len();
            e
        })
    })?;
    Ok((input, Some(bytes)))
}

/// A nullable string (`NULLABLE_STRING` or `COMPACT_NULLABLE_STRING`), UTF-8.
pub fn nullable_string(input: &[u8], compact: bool) -> PResult<'_, Option<String>> {
    nullable_text(input, compact)
}

/// [`nullable_string`] in any owned form ([`Text`]).
pub fn nullable_text<T: Text>(input: &[u8], compact: bool) -> PResult<'_, Option<T>> {
    let (rest, bytes) = nullable_string_bytes(input, compact)?;
    match bytes {
        None => Ok((rest, None)),
        Some(b) => Ok((rest, Some(utf8(input, b)?))),
    }
}

/// A non-nullable string (`STRING` or `COMPACT_STRING`), UTF-8; null is
/// [`DecodeErrorKind::NullNotAllowed`].
pub fn string(input: &[u8], compact: bool) -> PResult<'_, String> {
    text(input, compact)
}

/// [`string`] in any owned form ([`Text`]).
pub fn text<T: Text>(input: &[u8], compact: bool) -> PResult<'_, T> {
    let (rest, s) = nullable_text(input, compact)?;
    match s {
        Some(s) => Ok((rest, s)),
        None => fail(input, DecodeErrorKind::NullNotAllowed),
    }
}

/// A non-nullable array's element count (`ARRAY`: INT32; `COMPACT_ARRAY`: UNSIGNED_VARINT
/// count + 1), checked so that `count * min_element_size` fits in the bytes left after it.
/// Null (-1 or 0) is [`DecodeErrorKind::NullNotAllowed`].
pub fn array_len(input: &[u8], compact: bool, min_element_size: usize) -> PResult<'_, usize> {
    array_len_within(input, compact, min_element_size, 0)
}

/// [`array_len`] for an input whose frame goes on for `slack` bytes that were not captured.
fn array_len_within(
    input: &[u8],
    compact: bool,
    min_element_size: usize,
    slack: usize,
) -> PResult<'_, usize> {
    let start = input;
    let (input, count) = if compact {
        let (input, n) = uvarint(input)?;
        if n == 0 {
            return fail(start, DecodeErrorKind::NullNotAllowed);
        }
        (input, (n - 1) as usize)
    } else {
        let (input, n) = int32(input)?;
        if n == -1 {
            return fail(start, DecodeErrorKind::NullNotAllowed);
        }
        if n < -1 {
            return fail(start, DecodeErrorKind::NegativeLength);
        }
        (input, n as usize)
    };
    let need = count.checked_mul(min_element_size.max(1));
    match need {
        Some(need) if need <= input.len().saturating_add(slack) => Ok((input, count)),
        _ => fail(start, DecodeErrorKind::ArrayCountExceedsFrame),
    }
}

/// Array field `name` of struct elements of type `elem_type` (see [`array_len`]), each parsed
/// by `elem`, which must consume at least `min_element_size` bytes; the count is taken from
/// `b`. Errors get `name` and the element's index in their path; the trace gets a node
/// `[]elem_type` with the length and one `elem_type[n]` group per element.
pub fn array<'a, T>(
    b: &Budget,
    name: &'static str,
    elem_type: &'static str,
    input: &'a [u8],
    compact: bool,
    min_element_size: usize,
    mut elem: impl FnMut(&'a [u8]) -> PResult<'a, T>,
) -> PResult<'a, Vec<T>> {
    let traced = b.is_traced();
    field(
        name,
        array_with(
            b,
            name,
            elem_type,
            input,
            compact,
            min_element_size,
            |i, n| {
                if !traced {
                    return elem(i);
                }
                let label = format!("{elem_type}[{n}]");
                group(b, &label, elem_type, "struct", i, &mut elem)
            },
        ),
    )
}

/// Nullable array field `name` (`ARRAY` with -1, or `COMPACT_ARRAY` with 0, for null): `None`
/// for null, else as [`array()`].
pub fn nullable_array<'a, T>(
    b: &Budget,
    name: &'static str,
    elem_type: &'static str,
    input: &'a [u8],
    compact: bool,
    min_element_size: usize,
    elem: impl FnMut(&'a [u8]) -> PResult<'a, T>,
) -> PResult<'a, Option<Vec<T>>> {
    let null_len = if compact {
        (input.first() == Some(&0)).then_some(1)
    } else {
        (input.get(..4) == Some(&[0xff; 4][..])).then_some(4)
    };
    if let Some(n) = null_len {
        let rest = &input[n..];
        b.trace(|t| {
            t.leaf_typed(
                name,
                &format!("[]{elem_type}"),
                "null".to_string(),
                Scalar::Null,
                input,
                rest,
            )
        });
        return Ok((rest, None));
    }
    let (rest, v) = array(b, name, elem_type, input, compact, min_element_size, elem)?;
    Ok((rest, Some(v)))
}

/// Array field `name` of primitive elements (`[]int32`, ...), each read by `p` and traced as
/// a leaf `int32[n]`.
pub fn array_of<'a, T: Shown>(
    b: &Budget,
    name: &'static str,
    input: &'a [u8],
    compact: bool,
    min_element_size: usize,
    p: impl Fn(&'a [u8]) -> PResult<'a, T>,
) -> PResult<'a, Vec<T>> {
    field(
        name,
        array_with(
            b,
            name,
            T::KIND,
            input,
            compact,
            min_element_size,
            |i, n| {
                let (rest, v) = p(i)?;
                b.trace(|t| {
                    let name = format!("{}[{n}]", T::KIND);
                    t.leaf_typed(&name, T::KIND, v.show(), v.scalar(), i, rest)
                });
                Ok((rest, v))
            },
        ),
    )
}

fn array_with<'a, T>(
    b: &Budget,
    name: &'static str,
    elem_type: &str,
    input: &'a [u8],
    compact: bool,
    min_element_size: usize,
    mut elem: impl FnMut(&'a [u8], usize) -> PResult<'a, T>,
) -> PResult<'a, Vec<T>> {
    // An empty array (most per-partition error lists), read as its count's 1 or 4 bytes.
    if !b.is_traced() {
        let n = if compact { 1 } else { 4 };
        let zero: &[u8] = if compact { &[1] } else { &[0; 4] };
        if input.get(..n) == Some(zero) {
            return Ok((&input[n..], Vec::new()));
        }
    }
    b.trace(|t| t.open(name, &format!("[]{elem_type}"), "", input));
    let (mut rest, count) = array_len_within(input, compact, min_element_size, b.slack)?;
    b.trace(|t| {
        let (kind, value) = if compact {
            ("uvarint", format!("{} (compact, n+1)", count + 1))
        } else {
            ("int32", count.to_string())
        };
        t.leaf_typed(
            "length",
            kind,
            value,
            Scalar::Int(count as i64),
            input,
            rest,
        );
        t.set_value(format!(
            "{count} element{}",
            if count == 1 { "" } else { "s" }
        ));
    });
    if !b.take(count) {
        return fail(rest, DecodeErrorKind::TooManyElements);
    }
    // A partial decode's count may pass the bytes at hand (they were cut): room only for the
    // elements they can hold.
    let mut out = Vec::with_capacity(count.min(rest.len() / min_element_size.max(1) + 1));
    for n in 0..count {
        let (after, v) = index(n, elem(rest, n))?;
        rest = after;
        out.push(v);
    }
    b.trace(|t| t.close(rest));
    Ok((rest, out))
}

/// One tagged field that the schema does not name (KIP-482): its tag, size and raw bytes
/// (at most [`crate::vocab::ANOMALY_DATA_LIMIT`] of them, as anomaly data is capped).
/// Serialised as `{"tag":7,"size":3,"data":"0a0b0c"}` (`data` in lower-case hex), with
/// `"data_truncated":true` when `data` holds only the first bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaggedField {
    /// The field's tag (UNSIGNED_VARINT).
    pub tag: u32,
    /// The field's size in bytes.
    pub size: u32,
    /// The field's bytes (the first [`crate::vocab::ANOMALY_DATA_LIMIT`]), as hex in JSON.
    #[serde(serialize_with = "hex_bytes")]
    pub data: Vec<u8>,
    /// `data` holds only the field's first bytes.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub data_truncated: bool,
}

/// Serialises bytes as a lower-case hex string.
pub fn hex_bytes<S: serde::Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&hex::encode(b))
}

/// A tagged-field section: UNSIGNED_VARINT count, then per field an UNSIGNED_VARINT tag, an
/// UNSIGNED_VARINT size and that many bytes. WriteTxnMarkers and the headers define no tags, so
/// every field found is kept as unknown. The count is taken from `budget`.
pub fn tagged_fields<'a>(input: &'a [u8], budget: &Budget) -> PResult<'a, Vec<TaggedField>> {
    let start = input;
    let (mut input, count) = uvarint(input)?;
    // Each field takes at least two bytes (tag and size).
    if (count as usize).saturating_mul(2) > input.len().saturating_add(budget.slack) {
        return fail(start, DecodeErrorKind::ArrayCountExceedsFrame);
    }
    if !budget.take(count as usize) {
        return fail(start, DecodeErrorKind::TooManyElements);
    }
    let mut out = Vec::with_capacity((count as usize).min(input.len() / 2 + 1));
    for n in 0..count as usize {
        let (rest, tf) = index(n, tagged_field(input))?;
        input = rest;
        out.push(tf);
    }
    Ok((input, out))
}

fn tagged_field(input: &[u8]) -> PResult<'_, TaggedField> {
    let start = input;
    let (input, tag) = uvarint(input)?;
    let (input, size) = uvarint(input)?;
    let (input, data) = take_len(input, size as usize).map_err(|e| {
        e.map(|mut e| {
            e.remaining = start.len();
            e
        })
    })?;
    Ok((
        input,
        TaggedField {
            tag,
            size,
            data: data[..data.len().min(crate::vocab::ANOMALY_DATA_LIMIT)].to_vec(),
            data_truncated: data.len() > crate::vocab::ANOMALY_DATA_LIMIT,
        },
    ))
}

/// The tagged fields that end a struct of a flexible version (KIP-482), as field
/// `tagged_fields`; none, without reading, for a classic version.
#[inline]
pub fn tags<'a>(b: &Budget, input: &'a [u8], flexible: bool) -> PResult<'a, Vec<TaggedField>> {
    if flexible {
        // Nearly every struct has none: a count of 0, one byte.
        if let Some((0, rest)) = input.split_first() {
            b.trace(|t| t.leaf("tagged_fields", "uvarint", "0".to_string(), input, rest));
            return Ok((rest, Vec::new()));
        }
        let (rest, v) = field("tagged_fields", tagged_fields(input, b))?;
        b.trace(|t| t.leaf("tagged_fields", "uvarint", v.len().to_string(), input, rest));
        Ok((rest, v))
    } else {
        Ok((input, Vec::new()))
    }
}

/// Ends the decoding of a whole body: bytes left over are [`DecodeErrorKind::TrailingBytes`];
/// a parser that asked for more input (complete-mode parsers never do) is a truncated body.
pub fn finish<T>(r: PResult<'_, T>) -> Result<T, DecodeError> {
    match r {
        Ok(([], v)) => Ok(v),
        Ok((rest, _)) => Err(DecodeError::at(rest, DecodeErrorKind::TrailingBytes)),
        Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => Err(e),
        Err(nom::Err::Incomplete(_)) => Err(DecodeError::at(&[], DecodeErrorKind::TruncatedBody)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind<T: std::fmt::Debug>(r: PResult<'_, T>) -> DecodeErrorKind {
        match r {
            Err(nom::Err::Error(e)) => e.kind,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn uvarint_values() {
        assert_eq!(uvarint(&[0x00]).unwrap(), (&[][..], 0));
        assert_eq!(uvarint(&[0x7f, 9]).unwrap(), (&[9][..], 127));
        assert_eq!(uvarint(&[0x80, 0x01]).unwrap(), (&[][..], 128));
        assert_eq!(
            uvarint(&[0xff, 0xff, 0xff, 0xff, 0x0f]).unwrap(),
            (&[][..], u32::MAX)
        );
        assert_eq!(
            kind(uvarint(&[0xff, 0xff, 0xff, 0xff, 0x1f])),
            DecodeErrorKind::VarintOverflow
        );
        assert_eq!(
            kind(uvarint(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01])),
            DecodeErrorKind::VarintOverflow
        );
        assert_eq!(kind(uvarint(&[0x80, 0x80])), DecodeErrorKind::TruncatedBody);
        assert_eq!(kind(uvarint(&[])), DecodeErrorKind::TruncatedBody);
    }

    #[test]
    fn strings() {
        assert_eq!(
            string(&[0, 2, b'h', b'i'], false).unwrap(),
            (&[][..], "hi".to_string())
        );
        assert_eq!(
            string(&[3, b'h', b'i', 7], true).unwrap(),
            (&[7][..], "hi".to_string())
        );
        assert_eq!(nullable_string(&[0xff, 0xff], false).unwrap().1, None);
        assert_eq!(nullable_string(&[0], true).unwrap().1, None);
        assert_eq!(
            kind(string(&[0xff, 0xff], false)),
            DecodeErrorKind::NullNotAllowed
        );
        assert_eq!(kind(string(&[0], true)), DecodeErrorKind::NullNotAllowed);
        assert_eq!(
            kind(string(&[0xff, 0xfe], false)),
            DecodeErrorKind::NegativeLength
        );
        assert_eq!(
            kind(string(&[0, 5, b'a'], false)),
            DecodeErrorKind::StringLengthExceedsFrame
        );
        assert_eq!(kind(string(&[2, 0xff], true)), DecodeErrorKind::InvalidUtf8);
    }

    #[test]
    fn array_counts_are_bounded_by_bytes_left() {
        // 2^31-1 elements of at least 4 bytes in a 4-byte remainder.
        let r = array_len(&[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0], false, 4);
        assert_eq!(kind(r), DecodeErrorKind::ArrayCountExceedsFrame);
        let r = array_len(&[0xff, 0xff, 0xff, 0xff, 0x07], true, 1);
        assert_eq!(kind(r), DecodeErrorKind::ArrayCountExceedsFrame);
        assert_eq!(
            kind(array_len(&[0xff, 0xff, 0xff, 0xfe], false, 1)),
            DecodeErrorKind::NegativeLength
        );
        assert_eq!(array_len(&[0, 0, 0, 1, 0, 0, 0, 0], false, 4).unwrap().1, 1);
    }

    #[test]
    fn tagged_fields_are_kept() {
        let (rest, tf) =
            tagged_fields(&[2, 1, 0, 7, 3, 0x0a, 0x0b, 0x0c, 0xee], &Budget::default()).unwrap();
        assert_eq!(rest, &[0xee]);
        assert_eq!(
            tf,
            vec![
                TaggedField {
                    tag: 1,
                    size: 0,
                    data: vec![],
                    data_truncated: false,
                },
                TaggedField {
                    tag: 7,
                    size: 3,
                    data: vec![0x0a, 0x0b, 0x0c],
                    data_truncated: false,
                }
            ]
        );
        // A field larger than anomaly data may be keeps only its first bytes.
        let mut big = vec![1, 9];
        big.extend_from_slice(&[0x80, 0x80, 0x05]); // size 81,920
        big.extend(std::iter::repeat_n(0xab, 81_920));
        let (rest, tf) = tagged_fields(&big, &Budget::default()).unwrap();
        assert!(rest.is_empty());
        assert_eq!(
            (tf[0].size, tf[0].data.len(), tf[0].data_truncated),
            (81_920, crate::vocab::ANOMALY_DATA_LIMIT, true)
        );
        assert_eq!(
            kind(tagged_fields(
                &[0xff, 0xff, 0xff, 0xff, 0x07],
                &Budget::default()
            )),
            DecodeErrorKind::ArrayCountExceedsFrame
        );
        assert_eq!(
            kind(tagged_fields(&[1, 7, 9, 0], &Budget::default())),
            DecodeErrorKind::StringLengthExceedsFrame
        );
    }

    #[test]
    fn budget_bounds_elements() {
        let b = Budget::default();
        assert!(b.take(MAX_ELEMENTS_PER_FRAME - 1));
        assert!(!b.take(2));
        assert!(b.take(1));
        assert!(!b.take(1));
        let bytes = [3, 0, 0, 0, 0];
        let b = Budget {
            left: Cell::new(1),
            ..Budget::default()
        };
        let r = array_of(&b, "a", &bytes, true, 1, int8);
        assert_eq!(kind(r), DecodeErrorKind::TooManyElements);
    }

    #[test]
    fn paths_render_outermost_first() {
        let e = DecodeError::at(&[], DecodeErrorKind::TruncatedBody)
            .push(PathSeg::Field("name"))
            .push(PathSeg::Index(0))
            .push(PathSeg::Field("topics"))
            .push(PathSeg::Index(1))
            .push(PathSeg::Field("markers"));
        assert_eq!(e.path(), "markers[1].topics[0].name");
    }
}
