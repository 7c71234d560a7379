//! Streaming walks of the messages that carry record batches (Produce requests, Fetch
//! responses): their structure is read as the bytes stream by, and the batches' contents are
//! skipped by their length, never buffered.
//!
//! Input: the body of one frame (after its header), in chunks of any size
//! ([`Walker::feed`]), and its length, known from the size prefix.
//! Output: whatever the API's [`Machine`] builds from the structural fields it reads (topics,
//! partitions, the 61-byte header of every record batch), or a [`DecodeError`] with the field
//! path and the frame offset of the first problem.
//!
//! How: a [`Machine`] reads the body one *unit* at a time (a group of small fields, such as a
//! partition's index and the length of its records, or one batch header) through a [`Cur`],
//! which reports exactly how many bytes a unit needs when it runs short ([`Stop::Need`]). The
//! walker then copies the unit's bytes (at most [`MAX_UNIT`]) into a carry buffer until it is
//! whole, and runs the step again. A step that succeeds may ask for bytes to be skipped (a
//! batch's records), which are counted down without a copy. Memory per walk: the carry (at most
//! `MAX_UNIT`) and what the machine keeps (bounded by [`MAX_LISTED`] elements).
//!
//! Source: Kafka's `DefaultRecordBatch` (magic 2) and `EndTransactionMarker` /
//! `ControlRecordType` (clients/src/main/java/org/apache/kafka/common/record/), the protocol
//! guide's primitive types and KIP-482 (compact fields, tagged fields), KIP-98 (transactional
//! and control batches).

use super::primitives::{Budget, DecodeError, DecodeErrorKind, PathSeg, Text};
use serde::Serialize;

/// Most bytes one unit of a walk may need (64 KiB + 1 KiB): a string of at most [`MAX_STRING`]
/// bytes and the small fields around it.
pub const MAX_UNIT: usize = 65 * 1024;

/// Longest string a walk reads (64 KiB; Kafka's classic strings stop at 32,767 bytes): a longer
/// one is reported as [`DecodeErrorKind::StringLengthExceedsFrame`].
pub const MAX_STRING: usize = 64 * 1024;

/// Most elements (topics, partitions, batch headers, aborted transactions) one walk lists
/// (10,000); beyond it they are counted, not kept, so a walk's memory stays bounded whatever
/// the frame holds.
pub const MAX_LISTED: usize = 10_000;

/// The count of elements a walk lists, bounded by [`MAX_LISTED`]: past it, elements are counted
/// as not listed.
#[derive(Debug, Default)]
pub struct Listing {
    listed: usize,
    /// Elements walked but not listed.
    pub not_listed: u64,
}

impl Listing {
    /// Takes a place for one more element; `false` (and counted) past [`MAX_LISTED`].
    pub fn take(&mut self) -> bool {
        if self.listed < MAX_LISTED {
            self.listed += 1;
            true
        } else {
            self.not_listed += 1;
            false
        }
    }

    /// Bytes the listed elements cost, about (each at most `element` bytes and a share of its
    /// vector).
    pub fn cost(&self, element: usize) -> usize {
        self.listed * (element + 16)
    }
}

/// For serde's `skip_serializing_if`: a count of zero is left out.
pub fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Why a step stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The unit needs this many bytes from its start to go on.
    Need(usize),
    /// The bytes are wrong: what, at which offset within the unit.
    Bad(DecodeErrorKind, usize),
}

/// The result of reading a field from a [`Cur`].
pub type Res<T> = Result<T, Stop>;

/// A cursor over the bytes of one unit, which knows how many bytes the frame's body has left
/// from the unit's start (`left`), so that every length and count is checked against the
/// frame, not against the bytes at hand.
#[derive(Debug)]
pub struct Cur<'a> {
    b: &'a [u8],
    /// Bytes read so far.
    pub pos: usize,
    left: u64,
    /// The field being read (snake_case, as in the JSON), set by the machine before it reads
    /// it: an error's path ends with it.
    pub field: &'static str,
}

impl<'a> Cur<'a> {
    /// A cursor at the start of `b`, with `left` bytes of the body from there on (`b.len()` or
    /// more).
    pub fn new(b: &'a [u8], left: u64) -> Self {
        Cur {
            b,
            pos: 0,
            left,
            field: "",
        }
    }

    /// Bytes of the body left after the cursor.
    pub fn left(&self) -> u64 {
        self.left.saturating_sub(self.pos as u64)
    }

    /// Whether the body has no byte left after the cursor.
    pub fn at_end(&self) -> bool {
        self.left() == 0
    }

    fn bad<T>(&self, kind: DecodeErrorKind, at: usize) -> Res<T> {
        Err(Stop::Bad(kind, at))
    }

    /// The next `n` bytes. Past the body's end it still asks for them ([`Stop::Need`]): the
    /// walker, which knows where the body ends, reports the truncation at the unit, as it would
    /// had the bytes come in pieces.
    pub fn take(&mut self, n: usize) -> Res<&'a [u8]> {
        match self.b.get(self.pos..self.pos + n) {
            Some(s) => {
                self.pos += n;
                Ok(s)
            }
            None => Err(Stop::Need(self.pos + n)),
        }
    }

    fn array<const N: usize>(&mut self) -> Res<[u8; N]> {
        let s = self.take(N)?;
        let mut a = [0; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// INT8.
    pub fn i8(&mut self) -> Res<i8> {
        Ok(i8::from_be_bytes(self.array()?))
    }
    /// INT16.
    pub fn i16(&mut self) -> Res<i16> {
        Ok(i16::from_be_bytes(self.array()?))
    }
    /// INT32.
    pub fn i32(&mut self) -> Res<i32> {
        Ok(i32::from_be_bytes(self.array()?))
    }
    /// UINT32.
    pub fn u32(&mut self) -> Res<u32> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    /// INT64.
    pub fn i64(&mut self) -> Res<i64> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// UUID, as Kafka prints it (the 16 bytes in URL-safe base64 without padding, e.g.
    /// `"AAAAAAAAAAAAAAAAAAAAAA"` for the zero UUID; `Uuid.toString()`).
    pub fn uuid(&mut self) -> Res<String> {
        let b: [u8; 16] = self.array()?;
        Ok(uuid_text(&b))
    }

    /// UNSIGNED_VARINT (at most 5 bytes, 32 bits).
    pub fn uvarint(&mut self) -> Res<u32> {
        let start = self.pos;
        let mut value: u32 = 0;
        for n in 0..5 {
            let b = self.take(1)?[0];
            if n == 4 && b > 0x0f {
                return self.bad(DecodeErrorKind::VarintOverflow, start);
            }
            value |= u32::from(b & 0x7f) << (7 * n);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        self.bad(DecodeErrorKind::VarintOverflow, start)
    }

    /// VARLONG (zig-zag, at most 10 bytes), as in records.
    pub fn varlong(&mut self) -> Res<i64> {
        let start = self.pos;
        let mut value: u64 = 0;
        for n in 0..10 {
            let b = self.take(1)?[0];
            if n == 9 && b > 0x01 {
                return self.bad(DecodeErrorKind::VarintOverflow, start);
            }
            value |= u64::from(b & 0x7f) << (7 * n);
            if b & 0x80 == 0 {
                return Ok(((value >> 1) as i64) ^ -((value & 1) as i64));
            }
        }
        self.bad(DecodeErrorKind::VarintOverflow, start)
    }

    /// A length or count: INT32 (classic; -1 = null) or UNSIGNED_VARINT + 1 (compact; 0 =
    /// null). `None` is null; a count below -1 is [`DecodeErrorKind::NegativeLength`].
    pub fn length(&mut self, compact: bool) -> Res<Option<u64>> {
        let start = self.pos;
        if compact {
            let n = self.uvarint()?;
            Ok(n.checked_sub(1).map(u64::from))
        } else {
            match self.i32()? {
                -1 => Ok(None),
                n if n < -1 => self.bad(DecodeErrorKind::NegativeLength, start),
                n => Ok(Some(n as u64)),
            }
        }
    }

    /// An array's element count (see [`Cur::length`]), checked so that `count * min_size`
    /// bytes fit in the body left after it; `nullable` says whether null is allowed.
    pub fn count(&mut self, compact: bool, nullable: bool, min_size: u64) -> Res<Option<u64>> {
        let start = self.pos;
        let n = self.length(compact)?;
        match n {
            None if !nullable => self.bad(DecodeErrorKind::NullNotAllowed, start),
            Some(n) if n.saturating_mul(min_size.max(1)) > self.left() => {
                self.bad(DecodeErrorKind::ArrayCountExceedsFrame, start)
            }
            n => Ok(n),
        }
    }

    /// A byte field's length (BYTES / COMPACT_BYTES, nullable), checked against the body left.
    pub fn bytes_len(&mut self, compact: bool) -> Res<Option<u64>> {
        let start = self.pos;
        let n = self.length(compact)?;
        match n {
            Some(n) if n > self.left() => {
                self.bad(DecodeErrorKind::StringLengthExceedsFrame, start)
            }
            n => Ok(n),
        }
    }

    /// A nullable string: INT16 length (classic; -1 = null) or UNSIGNED_VARINT + 1 (compact),
    /// UTF-8. A string longer than [`MAX_UNIT`] bytes is refused as too long.
    pub fn nullable_string(&mut self, compact: bool) -> Res<Option<String>> {
        self.nullable_text(compact)
    }

    /// [`Cur::nullable_string`] in any owned form (a topic name as a shared [`super::names::Name`]).
    pub fn nullable_text<T: Text>(&mut self, compact: bool) -> Res<Option<T>> {
        let start = self.pos;
        let len = if compact {
            match self.uvarint()?.checked_sub(1) {
                None => return Ok(None),
                Some(n) => u64::from(n),
            }
        } else {
            match self.i16()? {
                -1 => return Ok(None),
                n if n < -1 => return self.bad(DecodeErrorKind::NegativeLength, start),
                n => n as u64,
            }
        };
        if len > self.left() || len > MAX_STRING as u64 {
            return self.bad(DecodeErrorKind::StringLengthExceedsFrame, start);
        }
        let b = self.take(len as usize)?;
        match T::of_bytes(b) {
            Some(s) => Ok(Some(s)),
            None => self.bad(DecodeErrorKind::InvalidUtf8, start),
        }
    }

    /// A non-nullable string (see [`Cur::nullable_string`]).
    pub fn string(&mut self, compact: bool) -> Res<String> {
        self.text(compact)
    }

    /// [`Cur::string`] in any owned form (a topic name as a shared [`super::names::Name`]).
    pub fn text<T: Text>(&mut self, compact: bool) -> Res<T> {
        let start = self.pos;
        match self.nullable_text(compact)? {
            Some(s) => Ok(s),
            None => self.bad(DecodeErrorKind::NullNotAllowed, start),
        }
    }

    /// A tagged-field section (KIP-482), read whole; returns the fields as (tag, bytes) pairs.
    /// Each field's bytes must be in the unit, so a section is at most [`MAX_UNIT`] bytes.
    pub fn tags(&mut self) -> Res<Vec<(u32, &'a [u8])>> {
        // Nearly every struct has none: a count of 0, one byte.
        if self.b.get(self.pos) == Some(&0) {
            self.pos += 1;
            return Ok(Vec::new());
        }
        let start = self.pos;
        let n = self.uvarint()?;
        if u64::from(n).saturating_mul(2) > self.left() {
            return self.bad(DecodeErrorKind::ArrayCountExceedsFrame, start);
        }
        let mut out = Vec::new();
        for _ in 0..n {
            let tag = self.uvarint()?;
            let at = self.pos;
            let size = self.uvarint()?;
            if u64::from(size) > self.left() {
                return self.bad(DecodeErrorKind::StringLengthExceedsFrame, at);
            }
            if out.len() < 64 {
                out.push((tag, self.take(size as usize)?));
            } else {
                self.take(size as usize)?;
            }
        }
        Ok(out)
    }
}

/// Kafka's text of a UUID: URL-safe base64 of the 16 bytes, without padding (22 characters).
pub fn uuid_text(b: &[u8; 16]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(22);
    for chunk in b.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &x)| acc | (u32::from(x) << (16 - 8 * i)));
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// A field of a walked body that a walk cut short may not have reached (issue 14's partial
/// decoding): absent from the JSON until read, then its value (`null` included). Whole
/// bodies have every such field read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Read<T> {
    /// Not read: the bytes stopped before it.
    #[default]
    Unread,
    /// Read.
    Value(T),
}

impl<T> Read<T> {
    /// Whether the field was not read (for `skip_serializing_if`).
    pub fn is_unread(&self) -> bool {
        matches!(self, Read::Unread)
    }

    /// Its value, when read.
    pub fn get(&self) -> Option<&T> {
        match self {
            Read::Value(v) => Some(v),
            Read::Unread => None,
        }
    }

    /// Its value, when read.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        match self {
            Read::Value(v) => Some(v),
            Read::Unread => None,
        }
    }
}

impl<T: serde::Serialize> serde::Serialize for Read<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Read::Value(v) => v.serialize(s),
            Read::Unread => s.serialize_none(),
        }
    }
}

/// One API's reading of a walked body: a state machine advanced one unit at a time.
pub trait Machine {
    /// Reads the next unit from `c` and, on success, returns how many bytes to skip after it
    /// (e.g. a batch's records). A step must not change the machine unless it succeeds: on
    /// [`Stop::Need`] it runs again, from the unit's start, with more bytes.
    fn step(&mut self, c: &mut Cur) -> Res<u64>;
    /// Whether the body's structure is complete (any byte after it is trailing).
    fn done(&self) -> bool;
    /// The field path of the unit being read, outermost first (e.g.
    /// `topic_data[0].partition_data[1].records`), for errors.
    fn path(&self) -> Vec<PathSeg>;
    /// Bytes the machine holds (what it has built so far), for the memory budget.
    fn cost(&self) -> usize;
    /// Whether the body's first unit (its top-level fields) was read: before, what the machine
    /// holds is defaults, not fields of the body ([`Walker::cut`]).
    fn started(&self) -> bool {
        true
    }
    /// The field path of the bytes being skipped after the last unit read (e.g. a batch's
    /// records: `topic_data[0].partition_data[1].records.batches[0].records`), for a cut
    /// inside them. Defaults to [`Machine::path`].
    fn skip_path(&self) -> Vec<PathSeg> {
        self.path()
    }
    /// The first damage passed over while the walk went on (a [`BatchItem::Damaged`] batch),
    /// as an error with its path, once: the record is written with the rest of the body, and
    /// an anomaly says what was passed over.
    fn take_damage(&mut self) -> Option<DecodeError> {
        None
    }
}

/// Keeps in `first` (a machine's [`Machine::take_damage`]), unless it holds one already, the
/// error of a [`BatchItem::Damaged`] batch `d` at path `path` (its `batches[i]` element).
pub fn keep_damage(first: &mut Option<DecodeError>, d: &BatchDamage, mut path: Vec<PathSeg>) {
    if first.is_none() {
        path.push(PathSeg::Field("batch_length"));
        *first = Some(DecodeError::with_path(d.kind, d.remaining as usize, &path));
    }
}

/// Room to make for the `n` elements a walk just read the count of: all of them up to 16
/// (so that a list of a few takes one allocation of its size, not a first one of four
/// elements and then larger ones), never more whatever the count says (it is bounded only by
/// the frame's bytes).
pub fn capacity_hint(n: u64) -> usize {
    n.min(16) as usize
}

/// Drives a [`Machine`] over a body delivered in chunks. See the module documentation.
#[derive(Debug)]
pub struct Walker<M> {
    /// The machine.
    pub m: M,
    carry: Vec<u8>,
    need: usize,
    skip: u64,
    /// Body offset of the first byte not consumed (the carry's first byte, when it has any).
    pos: u64,
    len: u64,
    error: Option<DecodeError>,
    /// Bytes after the structure's end (`trailing_bytes`, as many as were left then): the
    /// walk passes over them, the machine complete.
    trailing: Option<DecodeError>,
    /// The field the latest [`Stop::Need`] was reading (for a truncation found at the end).
    need_field: &'static str,
}

impl<M: Machine> Walker<M> {
    /// A walk of a body of `len` bytes.
    pub fn new(m: M, len: u64) -> Self {
        Walker {
            m,
            carry: Vec::new(),
            need: 0,
            skip: 0,
            pos: 0,
            len,
            error: None,
            trailing: None,
            need_field: "",
        }
    }

    /// Bytes held: the carry buffer's capacity and what the machine built.
    pub fn cost(&self) -> usize {
        self.carry.capacity() + self.m.cost()
    }

    fn fail(&mut self, kind: DecodeErrorKind, at: u64, field: &'static str) {
        let remaining = self.len.saturating_sub(at) as usize;
        let mut path = self.m.path();
        if !field.is_empty() {
            path.push(PathSeg::Field(field));
        }
        self.error = Some(DecodeError::with_path(kind, remaining, &path));
        self.carry = Vec::new();
    }

    /// Feeds the next bytes of the body.
    pub fn feed(&mut self, mut data: &[u8]) {
        let mut idle = 0u32;
        loop {
            if self.error.is_some() {
                return;
            }
            if self.skip > 0 {
                let n = if self.carry.is_empty() {
                    let n = self.skip.min(data.len() as u64) as usize;
                    data = &data[n..];
                    n
                } else {
                    let n = self.skip.min(self.carry.len() as u64) as usize;
                    self.carry.drain(..n);
                    n
                };
                self.skip -= n as u64;
                self.pos += n as u64;
                if n == 0 {
                    return;
                }
                continue;
            }
            if self.m.done() {
                if (self.carry.is_empty() && data.is_empty()) || self.trailing.is_some() {
                    return;
                }
                // Bytes after the structure: counted once, then passed over as a batch's
                // records are (the machine keeps what it read).
                let left = self.len.saturating_sub(self.pos);
                self.trailing = Some(DecodeError::with_path(
                    DecodeErrorKind::TrailingBytes,
                    left as usize,
                    &[],
                ));
                self.skip = left;
                continue;
            }
            let from_carry = !self.carry.is_empty();
            if from_carry {
                let take = self.need.saturating_sub(self.carry.len()).min(data.len());
                self.carry.extend_from_slice(&data[..take]);
                data = &data[take..];
                if self.carry.len() < self.need {
                    return;
                }
            } else if data.is_empty() && self.pos < self.len {
                return;
            }
            let buf: &[u8] = if from_carry { &self.carry } else { data };
            let mut c = Cur::new(buf, self.len - self.pos);
            match self.m.step(&mut c) {
                Ok(skip) => {
                    let used = c.pos;
                    if from_carry {
                        self.carry.drain(..used);
                        if self.carry.is_empty() {
                            self.carry = Vec::new();
                        }
                    } else {
                        data = &data[used..];
                    }
                    self.pos += used as u64;
                    self.skip = skip;
                    idle = if used == 0 && skip == 0 { idle + 1 } else { 0 };
                    if idle > 16 {
                        // A machine that goes round without reading: never expected.
                        return self.fail(DecodeErrorKind::TrailingBytes, self.pos, "");
                    }
                }
                Err(Stop::Need(n)) => {
                    let field = c.field;
                    if n as u64 > self.len - self.pos {
                        // The unit runs past the body's end.
                        return self.fail(DecodeErrorKind::TruncatedBody, self.pos, field);
                    }
                    self.need_field = field;
                    if n > MAX_UNIT {
                        return self.fail(
                            DecodeErrorKind::StringLengthExceedsFrame,
                            self.pos,
                            field,
                        );
                    }
                    if !from_carry {
                        self.carry.reserve_exact(n);
                        self.carry.extend_from_slice(data);
                        data = &[];
                    }
                    self.need = n;
                    if data.is_empty() {
                        return;
                    }
                }
                Err(Stop::Bad(kind, at)) => {
                    let field = c.field;
                    return self.fail(kind, self.pos + at as u64, field);
                }
            }
        }
    }

    /// Ends a walk whose bytes stopped short (a snapshot-length cut, a loss, the end of the
    /// capture): the machine, holding every unit read wholly from the bytes fed, and the field
    /// path of the unit the bytes stopped in (the bytes skipped after a unit: its
    /// [`Machine::skip_path`]); or the error met before the bytes stopped.
    pub fn cut(mut self) -> Result<(M, Vec<PathSeg>), DecodeError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let path = if self.skip > 0 {
            self.m.skip_path()
        } else {
            let mut p = self.m.path();
            let field = if !self.carry.is_empty() {
                self.need_field
            } else if self.m.done() {
                ""
            } else {
                // Stopped between units: the field the next unit starts with, from a step
                // over no bytes (which changes nothing unless it needs none).
                let mut c = Cur::new(&[], self.len.saturating_sub(self.pos));
                match self.m.step(&mut c) {
                    Err(Stop::Need(_)) => c.field,
                    _ => "",
                }
            };
            if !field.is_empty() {
                p.push(PathSeg::Field(field));
            }
            p
        };
        Ok((self.m, path))
    }

    /// Ends the walk: the machine, with the `trailing_bytes` error when bytes followed the
    /// structure's end; or the first error; a body whose structure did not complete is
    /// [`DecodeErrorKind::TruncatedBody`] at the unit it stopped in.
    pub fn finish(mut self) -> Result<(M, Option<DecodeError>), DecodeError> {
        if self.carry.is_empty() && self.skip == 0 {
            // A body never fed (empty) gets the steps the bytes would have had.
            self.feed(&[]);
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if !self.m.done() || self.skip > 0 {
            let field = self.need_field;
            self.fail(DecodeErrorKind::TruncatedBody, self.pos, field);
            return Err(self.error.take().unwrap_or_else(|| {
                DecodeError::with_path(DecodeErrorKind::TruncatedBody, 0, &[])
            }));
        }
        Ok((self.m, self.trailing))
    }
}

/// Walks a whole body with machine `m` (for a decoder's `decode_request` / `decode_response`):
/// the finished machine, or the first error (bytes after the structure are `trailing_bytes`,
/// as a decoder's [`crate::kafka::primitives::finish`] has them, and damage a streaming walk
/// passes over, [`Machine::take_damage`], is an error here as in any whole decode). The trace,
/// when `b` records one, gets a single node for the body: a walk reads units, not traced
/// fields.
pub fn walk_whole<M: Machine>(m: M, body: &[u8], b: &Budget) -> Result<M, DecodeError> {
    let mut w = Walker::new(m, body.len() as u64);
    w.feed(body);
    let m = match w.finish()? {
        (mut m, None) => match m.take_damage() {
            Some(e) => return Err(e),
            None => m,
        },
        (_, Some(trailing)) => return Err(trailing),
    };
    b.trace(|t| {
        let text = format!(
            "{} bytes, walked (the record's body has its fields)",
            body.len()
        );
        t.leaf("walked_body", "bytes", text, body, &body[body.len()..])
    });
    Ok(m)
}

/// The path of the records of batch `batch` of a partition (`topic` and `partition`: each
/// array's field name and index), skipped after its header:
/// `topic_data[0].partition_data[1].records.batches[2].records`.
pub fn batch_records_path(
    topic: (&'static str, usize),
    partition: (&'static str, usize),
    batch: usize,
) -> Vec<PathSeg> {
    use PathSeg::{Field, Index};
    nested_path(
        &[topic, partition],
        &[
            Field("records"),
            Field("batches"),
            Index(batch),
            Field("records"),
        ],
    )
}

/// A field path through nested arrays, outermost first: each level an array field and the
/// index in it (`[("topic_data", 0), ("partition_data", 2)]`), then `tail`.
pub fn nested_path(levels: &[(&'static str, usize)], tail: &[PathSeg]) -> Vec<PathSeg> {
    let mut p = Vec::with_capacity(2 * levels.len() + tail.len());
    for &(name, i) in levels {
        p.push(PathSeg::Field(name));
        p.push(PathSeg::Index(i));
    }
    p.extend_from_slice(tail);
    p
}

/// What compression a batch's attributes name (bits 0-2).
fn compression_name(attributes: i16) -> &'static str {
    match attributes & 7 {
        0 => "none",
        1 => "gzip",
        2 => "snappy",
        3 => "lz4",
        4 => "zstd",
        _ => "unknown",
    }
}

/// The batch headers of one `Records` field, in order: the first held in place, the others
/// in a vector, so that the common field of one batch (most Produce partitions) costs no
/// allocation of its own. Written as a JSON array of [`BatchHeader`]s.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Batches {
    first: Option<BatchHeader>,
    rest: Vec<BatchHeader>,
}

impl Batches {
    /// Adds a header after the others.
    pub fn push(&mut self, h: BatchHeader) {
        if self.first.is_none() {
            self.first = Some(h);
        } else {
            self.rest.push(h);
        }
    }

    /// The headers, in order.
    pub fn iter(&self) -> impl Iterator<Item = &BatchHeader> {
        self.first.iter().chain(&self.rest)
    }

    /// The `i`th header (0-based), if held.
    pub fn get(&self, i: usize) -> Option<&BatchHeader> {
        match i {
            0 => self.first.as_ref(),
            _ => self.rest.get(i - 1),
        }
    }

    /// How many headers are held.
    pub fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.rest.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// Bytes held on the heap (an estimate, as [`crate::memory::vec_cost`] gives it).
    pub fn heap_cost(&self) -> usize {
        crate::memory::vec_cost::<BatchHeader>(self.rest.capacity())
    }
}

impl<'a> IntoIterator for &'a Batches {
    type Item = &'a BatchHeader;
    type IntoIter =
        std::iter::Chain<std::option::Iter<'a, BatchHeader>, std::slice::Iter<'a, BatchHeader>>;
    fn into_iter(self) -> Self::IntoIter {
        self.first.iter().chain(&self.rest)
    }
}

impl FromIterator<BatchHeader> for Batches {
    fn from_iter<I: IntoIterator<Item = BatchHeader>>(iter: I) -> Self {
        let mut b = Batches::default();
        for h in iter {
            b.push(h);
        }
        b
    }
}

impl Serialize for Batches {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self)
    }
}

/// The 61-byte header of a record batch of magic 2 (Kafka's `DefaultRecordBatch`), names in
/// snake_case; the attribute bits spelt out beside `attributes`. For a batch of magic 0 or 1
/// (the old message sets) only `base_offset`, `batch_length` and `magic` are read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BatchHeader {
    /// BaseOffset (int64): the offset of the first record (0 in Produce requests).
    pub base_offset: i64,
    /// BatchLength (int32): bytes after this field.
    pub batch_length: i32,
    /// PartitionLeaderEpoch (int32).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition_leader_epoch: Option<i32>,
    /// Magic (int8): 2 for record batches.
    pub magic: i8,
    /// CRC (uint32): CRC-32C of the bytes from `attributes` to the batch's end (not checked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crc: Option<u32>,
    /// Attributes (int16).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attributes: Option<i16>,
    /// Bits 0-2 of `attributes`: `none`, `gzip`, `snappy`, `lz4`, `zstd` (records left as they
    /// are: never decompressed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compression: Option<&'static str>,
    /// Bit 3: `create_time` or `log_append_time`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp_type: Option<&'static str>,
    /// Bit 4: the batch belongs to a transaction (KIP-98).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_transactional: Option<bool>,
    /// Bit 5: a control batch (transaction markers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_control: Option<bool>,
    /// LastOffsetDelta (int32).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_offset_delta: Option<i32>,
    /// BaseTimestamp (int64, ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_timestamp: Option<i64>,
    /// MaxTimestamp (int64, ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_timestamp: Option<i64>,
    /// ProducerId (int64; -1 without an idempotent producer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producer_id: Option<i64>,
    /// ProducerEpoch (int16).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producer_epoch: Option<i16>,
    /// BaseSequence (int32).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_sequence: Option<i32>,
    /// RecordsCount (int32).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub records_count: Option<i32>,
    /// For a control batch: its control record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control: Option<ControlRecord>,
    /// A control batch whose control record could not be read (compressed, which Kafka never
    /// does, or bytes that are not a record): its marker is unknown.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub control_unreadable: bool,
}

impl BatchHeader {
    /// Whether the batch is a control batch.
    pub fn control_batch(&self) -> bool {
        self.is_control == Some(true)
    }
}

/// The control record of a control batch (Kafka's `ControlRecordType` key and, for COMMIT and
/// ABORT, the `EndTransactionMarker` value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ControlRecord {
    /// The key's type: `"ABORT"` (0), `"COMMIT"` (1), `"LEADER_CHANGE"` (2),
    /// `"SNAPSHOT_HEADER"` (3), `"SNAPSHOT_FOOTER"` (4), `"KRAFT_VERSION"` (5),
    /// `"KRAFT_VOTERS"` (6), else `"UNKNOWN"`.
    #[serde(rename = "type")]
    pub control_type: &'static str,
    /// The key's type as on the wire (int16).
    pub type_code: i16,
    /// The key's version (int16).
    pub version: i16,
    /// For COMMIT and ABORT: the value's coordinator epoch (int32).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coordinator_epoch: Option<i32>,
}

/// Bytes of a control batch read for its control record (the record is some 20 bytes).
const CONTROL_BYTES: u64 = 64;

/// What one step over a records field found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchItem {
    /// A batch (its header; for a control batch with `control` asked, its control record).
    Batch(BatchHeader),
    /// The records field ends inside a batch: its last `n` bytes hold no whole batch.
    Partial(u64),
    /// A batch whose `batch_length` is no batch's (negative, or too short for its header):
    /// the records field's last bytes are passed over (its other partitions and the message's
    /// other fields are still read).
    Damaged(BatchDamage),
}

/// What [`BatchItem::Damaged`] passed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchDamage {
    /// What is wrong: `negative_length` or `truncated_body`.
    pub kind: DecodeErrorKind,
    /// The body's bytes from the `batch_length` field on (for the error's frame offset).
    pub remaining: u64,
    /// The records field's bytes passed over, from the batch on.
    pub bytes: u64,
}

/// Reads the next batch of a records field that has `left` bytes left, and returns it with the
/// bytes to skip after what was read (the rest of the batch). With `control`, a control
/// batch's first bytes are read for its control record. A batch cut by the end of the field is
/// [`BatchItem::Partial`] (normal at the end of a Fetch response); a negative `batch_length`,
/// or one below the 49 bytes of a magic-2 header, is [`BatchItem::Damaged`]: the field's
/// bytes from it on are passed over, as the field's own length bounds them.
pub fn batch_step(c: &mut Cur, left: u64, control: bool) -> Res<(BatchItem, u64)> {
    let start = c.pos;
    if left < 17 {
        return Ok((BatchItem::Partial(left), left));
    }
    let base_offset = c.i64()?;
    let at = c.pos;
    let batch_length = c.i32()?;
    c.field = "batch_length";
    if batch_length < 0 {
        return damaged(c, start, at, left, DecodeErrorKind::NegativeLength);
    }
    let total = 12 + batch_length as u64;
    if total > left {
        c.pos = start;
        return Ok((BatchItem::Partial(left), left));
    }
    if total < 17 {
        // Too short to hold even an old message set's CRC and magic.
        return damaged(c, start, at, left, DecodeErrorKind::TruncatedBody);
    }
    c.field = "";
    let ple = c.i32()?;
    let magic = c.i8()?;
    if magic != 2 {
        let h = BatchHeader {
            base_offset,
            batch_length,
            partition_leader_epoch: None,
            magic,
            crc: None,
            attributes: None,
            compression: None,
            timestamp_type: None,
            is_transactional: None,
            is_control: None,
            last_offset_delta: None,
            base_timestamp: None,
            max_timestamp: None,
            producer_id: None,
            producer_epoch: None,
            base_sequence: None,
            records_count: None,
            control: None,
            control_unreadable: false,
        };
        return Ok((BatchItem::Batch(h), total - (c.pos - start) as u64));
    }
    if batch_length < 49 {
        return damaged(c, start, at, left, DecodeErrorKind::TruncatedBody);
    }
    // The 44 bytes after the magic, read in place with one bounds check (a cursor that does
    // not hold them all asks for the rest, and the batch is read again when they came).
    let Ok(rest) = <&[u8; 44]>::try_from(c.take(44)?) else {
        return Err(Stop::Need(c.pos + 44));
    };
    let mut h = header_rest(base_offset, batch_length, ple, magic, rest);
    if control && h.control_batch() {
        if h.attributes.is_some_and(|a| a & 7 == 0) {
            let body = (total - 61).min(CONTROL_BYTES) as usize;
            let bytes = c.take(body)?;
            h.control = control_record(bytes);
        }
        h.control_unreadable = h.control.is_none();
    }
    Ok((BatchItem::Batch(h), total - (c.pos - start) as u64))
}

/// A [`BatchItem::Damaged`] batch read from `start` (its `batch_length` at `at`) in a records
/// field of which `left` bytes were left there: the cursor back at `start`, all of them to
/// pass over.
#[cold]
#[inline(never)]
fn damaged(
    c: &mut Cur,
    start: usize,
    at: usize,
    left: u64,
    kind: DecodeErrorKind,
) -> Res<(BatchItem, u64)> {
    let remaining = c.left() + (c.pos - at) as u64;
    c.pos = start;
    c.field = "";
    let item = BatchItem::Damaged(BatchDamage {
        kind,
        remaining,
        bytes: left,
    });
    Ok((item, left))
}

/// A magic-2 batch header from its 44 bytes after the magic (`crc` to `records_count`),
/// `DefaultRecordBatch`'s layout.
#[inline(always)]
fn header_rest(
    base_offset: i64,
    batch_length: i32,
    ple: i32,
    magic: i8,
    b: &[u8; 44],
) -> BatchHeader {
    fn be<const N: usize>(b: &[u8; 44], at: usize) -> [u8; N] {
        let mut a = [0; N];
        a.copy_from_slice(&b[at..at + N]);
        a
    }
    let attributes = i16::from_be_bytes(be(b, 4));
    BatchHeader {
        base_offset,
        batch_length,
        partition_leader_epoch: Some(ple),
        magic,
        crc: Some(u32::from_be_bytes(be(b, 0))),
        attributes: Some(attributes),
        compression: Some(compression_name(attributes)),
        timestamp_type: Some(if attributes & 8 != 0 {
            "log_append_time"
        } else {
            "create_time"
        }),
        is_transactional: Some(attributes & 0x10 != 0),
        is_control: Some(attributes & 0x20 != 0),
        last_offset_delta: Some(i32::from_be_bytes(be(b, 6))),
        base_timestamp: Some(i64::from_be_bytes(be(b, 10))),
        max_timestamp: Some(i64::from_be_bytes(be(b, 18))),
        producer_id: Some(i64::from_be_bytes(be(b, 26))),
        producer_epoch: Some(i16::from_be_bytes(be(b, 34))),
        base_sequence: Some(i32::from_be_bytes(be(b, 36))),
        records_count: Some(i32::from_be_bytes(be(b, 40))),
        control: None,
        control_unreadable: false,
    }
}

/// The first record of a control batch's records: length, attributes, timestamp and offset
/// deltas, key {version, type}, value {version, coordinator_epoch} for COMMIT and ABORT.
/// `None` when the bytes do not hold one.
fn control_record(bytes: &[u8]) -> Option<ControlRecord> {
    let mut c = Cur::new(bytes, bytes.len() as u64);
    let _length = c.varlong().ok()?;
    let _attributes = c.i8().ok()?;
    let _timestamp_delta = c.varlong().ok()?;
    let _offset_delta = c.varlong().ok()?;
    let key_len = c.varlong().ok()?;
    if key_len < 4 {
        return None;
    }
    let version = c.i16().ok()?;
    let type_code = c.i16().ok()?;
    c.take(key_len as usize - 4).ok()?;
    let control_type = match type_code {
        0 => "ABORT",
        1 => "COMMIT",
        2 => "LEADER_CHANGE",
        3 => "SNAPSHOT_HEADER",
        4 => "SNAPSHOT_FOOTER",
        5 => "KRAFT_VERSION",
        6 => "KRAFT_VOTERS",
        _ => "UNKNOWN",
    };
    let coordinator_epoch = if type_code <= 1 {
        let value_len = c.varlong().ok();
        match value_len {
            Some(n) if n >= 6 => {
                let _value_version = c.i16().ok();
                c.i32().ok()
            }
            _ => None,
        }
    } else {
        None
    };
    Some(ControlRecord {
        control_type,
        type_code,
        version,
        coordinator_epoch,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_read_as_kafka_prints_them() {
        assert_eq!(uuid_text(&[0; 16]), "AAAAAAAAAAAAAAAAAAAAAA");
        // Uuid(0x0123456789abcdef, 0xfedcba9876543210).toString() in Kafka.
        let b = [
            0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54,
            0x32, 0x10,
        ];
        assert_eq!(uuid_text(&b), "ASNFZ4mrze_-3LqYdlQyEA");
    }

    #[test]
    fn cursor_says_what_it_needs() {
        let mut c = Cur::new(&[0, 0, 0], 100);
        assert_eq!(c.i32(), Err(Stop::Need(4)));
        let mut c = Cur::new(&[0, 5, b'a'], 100);
        assert_eq!(c.string(false), Err(Stop::Need(7)));
        let mut c = Cur::new(&[0, 5, b'a'], 4);
        assert!(matches!(
            c.string(false),
            Err(Stop::Bad(DecodeErrorKind::StringLengthExceedsFrame, 0))
        ));
        let mut c = Cur::new(&[0x80, 0x80], 100);
        assert_eq!(c.uvarint(), Err(Stop::Need(3)));
        let mut c = Cur::new(&[0xff, 0xff, 0xff, 0xff, 0x7f], 100);
        assert!(matches!(
            c.uvarint(),
            Err(Stop::Bad(DecodeErrorKind::VarintOverflow, 0))
        ));
        let mut c = Cur::new(&[0, 0, 0, 9], 8);
        assert!(matches!(
            c.count(false, false, 1),
            Err(Stop::Bad(DecodeErrorKind::ArrayCountExceedsFrame, 0))
        ));
        let mut c = Cur::new(&[0xff, 0xff, 0xff, 0xff], 8);
        assert_eq!(c.count(false, true, 1), Ok(None));
        let mut c = Cur::new(&[3], 1); // zig-zag 3 = -2
        assert_eq!(c.varlong(), Ok(-2));
    }

    /// A control batch as Kafka writes a COMMIT marker: coordinator epoch 7, producer 1000.
    pub(crate) fn commit_batch() -> Vec<u8> {
        let record: Vec<u8> = vec![
            0x00, // attributes
            0x00, // timestamp delta 0
            0x00, // offset delta 0
            0x08, // key length 4 (zig-zag)
            0, 0, 0, 1,    // key: version 0, type 1 (COMMIT)
            0x0c, // value length 6
            0, 0, 0, 0, 0, 7,    // value: version 0, coordinator epoch 7
            0x00, // no headers
        ];
        let mut records = vec![(record.len() as u8) << 1];
        records.extend(&record);
        let mut b = Vec::new();
        b.extend(42i64.to_be_bytes()); // base_offset
        b.extend(((49 + records.len()) as i32).to_be_bytes());
        b.extend(3i32.to_be_bytes()); // partition_leader_epoch
        b.push(2); // magic
        b.extend(0xdead_beefu32.to_be_bytes()); // crc
        b.extend(0x30i16.to_be_bytes()); // transactional | control
        b.extend(0i32.to_be_bytes()); // last_offset_delta
        b.extend(1_700_000_000_000i64.to_be_bytes());
        b.extend(1_700_000_000_000i64.to_be_bytes());
        b.extend(1000i64.to_be_bytes()); // producer_id
        b.extend(5i16.to_be_bytes()); // producer_epoch
        b.extend((-1i32).to_be_bytes()); // base_sequence
        b.extend(1i32.to_be_bytes()); // records_count
        b.extend(&records);
        b
    }

    #[test]
    fn a_control_batch_gives_its_marker() {
        let b = commit_batch();
        let mut c = Cur::new(&b, b.len() as u64);
        let (item, skip) = batch_step(&mut c, b.len() as u64, true).unwrap();
        assert_eq!(skip, 0, "the whole control record was read");
        let BatchItem::Batch(h) = item else {
            panic!("{item:?}")
        };
        assert_eq!(
            (h.base_offset, h.producer_id, h.producer_epoch),
            (42, Some(1000), Some(5))
        );
        assert_eq!((h.is_control, h.is_transactional), (Some(true), Some(true)));
        assert_eq!(h.crc, Some(0xdead_beef));
        let ctl = h.control.unwrap();
        assert_eq!(
            (ctl.control_type, ctl.coordinator_epoch),
            ("COMMIT", Some(7))
        );
        // Without asking, the body is skipped.
        let mut c = Cur::new(&b, b.len() as u64);
        let (item, skip) = batch_step(&mut c, b.len() as u64, false).unwrap();
        assert_eq!((c.pos, skip), (61, b.len() as u64 - 61));
        assert!(matches!(
            item,
            BatchItem::Batch(BatchHeader { control: None, .. })
        ));
        assert!(!h.control_unreadable);
        // A control record of garbage, and a compressed control batch: the marker is unknown,
        // and said so.
        let mut bad = b.clone();
        for x in &mut bad[61..] {
            *x = 0xff;
        }
        let mut c = Cur::new(&bad, bad.len() as u64);
        let (item, _) = batch_step(&mut c, bad.len() as u64, true).unwrap();
        assert!(matches!(
            item,
            BatchItem::Batch(BatchHeader {
                control: None,
                control_unreadable: true,
                ..
            })
        ));
        let mut gz = b.clone();
        gz[22] |= 1; // attributes' low byte: gzip
        let mut c = Cur::new(&gz, gz.len() as u64);
        let (item, _) = batch_step(&mut c, gz.len() as u64, true).unwrap();
        assert!(matches!(
            item,
            BatchItem::Batch(BatchHeader {
                control: None,
                control_unreadable: true,
                ..
            })
        ));
        // Cut short: partial, everything skipped.
        let mut c = Cur::new(&b[..40], 40);
        assert_eq!(
            batch_step(&mut c, 40, true).unwrap(),
            (BatchItem::Partial(40), 40)
        );
        assert_eq!(c.pos, 0);
    }
}
