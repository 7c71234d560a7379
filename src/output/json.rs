//! Compact JSON of one record into a byte buffer, byte for byte what `serde_json::to_writer`
//! writes, at less cost.
//!
//! Input: any [`Serialize`] value (the records of [`super`]). Output: its compact JSON
//! appended to a `Vec<u8>`: objects `{"key":value,...}`, arrays `[a,b]`, no spaces, the
//! same escapes and number forms as serde_json's `CompactFormatter`.
//!
//! Why: on captures of many small Produce and Fetch frames (`--all-apis`) serialising is a
//! third of the run, and serde_json writes every string (each field name included) through
//! its escaping loop, a byte at a time, and three `io::Write` calls. Here a struct's field
//! names (Rust identifiers) are copied as they are, a string value with nothing to escape
//! (nearly all) is checked eight bytes at a time and copied in one piece, and integers are
//! written by `itoa`, as serde_json writes them. Everything else (a string that needs escapes, floats, `char`,
//! bytes, 128-bit integers) is handed to serde_json itself, so the two cannot differ in how
//! they spell a value; the tests compare both on every record of the captures and on
//! arbitrary strings.
//!
//! Errors are serde_json's: a map key that is not a string, a number (a float must be
//! finite), a `bool`, a `char` or a `Some` of one (which serde_json refuses too), or an error a
//! value's own `Serialize` raises.

use serde::ser::{self, Serialize};

type Error = serde_json::Error;

/// Appends the compact JSON of `v` to `buf` (what `serde_json::to_writer(&mut buf, v)`
/// appends). On an error `buf` holds what was written before it.
pub fn write_compact<T: Serialize + ?Sized>(buf: &mut Vec<u8>, v: &T) -> Result<(), Error> {
    v.serialize(&mut Compact { buf })
}

/// The serializer: the buffer written to.
struct Compact<'b> {
    buf: &'b mut Vec<u8>,
}

/// Whether serde_json writes `s` as it is between quotes: no control character (below
/// 0x20), no `"` and no `\` (its `ESCAPE` table; DEL and non-ASCII pass unescaped). Eight
/// bytes at a time (the last eight overlapping); four to seven bytes as one word of their
/// first and last four; a byte at a time below four.
fn plain(s: &[u8]) -> bool {
    match s.len() {
        0..4 => s.iter().all(|&b| b >= 0x20 && b != b'"' && b != b'\\'),
        4..8 => {
            // The first four and the last four (overlapping) as one word.
            let (Some(a), Some(b)) = (s.first_chunk::<4>(), s.last_chunk::<4>()) else {
                return false;
            };
            word_plain([a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]])
        }
        _ => {
            s.chunks_exact(8)
                .all(|w| w.first_chunk::<8>().is_some_and(|w| word_plain(*w)))
                && s.last_chunk::<8>().is_some_and(|w| word_plain(*w))
        }
    }
}

/// Whether none of the 8 bytes is below 0x20, `"` or `\\`: the "has a byte less than n" and
/// "has a zero byte" tests of Bit Twiddling Hacks (exact as a yes or no for the whole word).
fn word_plain(w: [u8; 8]) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let w = u64::from_le_bytes(w);
    let quote = w ^ (LO * b'"' as u64);
    let backslash = w ^ (LO * b'\\' as u64);
    let found = (w.wrapping_sub(LO * 0x20) & !w)
        | (quote.wrapping_sub(LO) & !quote)
        | (backslash.wrapping_sub(LO) & !backslash);
    found & HI == 0
}

impl Compact<'_> {
    fn str(&mut self, s: &str) -> Result<(), Error> {
        if plain(s.as_bytes()) {
            self.buf.reserve(s.len() + 2);
            self.buf.push(b'"');
            self.buf.extend_from_slice(s.as_bytes());
            self.buf.push(b'"');
            Ok(())
        } else {
            serde_json::to_writer(&mut *self.buf, s)
        }
    }

    /// An integer in decimal, by itoa, as serde_json writes it.
    fn int<I: itoa::Integer>(&mut self, v: I) {
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
    }

    /// Hands a leaf value to serde_json.
    fn by_serde_json<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        serde_json::to_writer(&mut *self.buf, v)
    }

    /// `{"variant":` of an enum's newtype, tuple or struct variant.
    fn open_variant(&mut self, variant: &'static str) -> Result<(), Error> {
        self.buf.push(b'{');
        self.str(variant)?;
        self.buf.push(b':');
        Ok(())
    }
}

/// An array or object being written: whether an element has been.
struct Compound<'a, 'b> {
    ser: &'a mut Compact<'b>,
    first: bool,
    /// The byte that closes it (`]` or `}`).
    close: u8,
    /// An enum variant's, inside `{"variant":...}`: a `}` follows.
    variant: bool,
}

impl<'a, 'b> Compound<'a, 'b> {
    fn open(ser: &'a mut Compact<'b>, open: u8, close: u8) -> Self {
        ser.buf.push(open);
        Compound {
            ser,
            first: true,
            close,
            variant: false,
        }
    }

    fn open_in_variant(ser: &'a mut Compact<'b>, open: u8, close: u8) -> Self {
        let mut c = Compound::open(ser, open, close);
        c.variant = true;
        c
    }

    fn comma(&mut self) {
        if !std::mem::take(&mut self.first) {
            self.ser.buf.push(b',');
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.comma();
        v.serialize(&mut *self.ser)
    }

    /// A struct's field: its name is a Rust identifier or a `serde(rename)` of this crate,
    /// never one with a character to escape (checked in debug builds, so by every test), so
    /// it is copied without the check.
    #[inline(always)]
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), Error> {
        debug_assert!(plain(key.as_bytes()), "field name {key:?} needs escaping");
        let buf = &mut *self.ser.buf;
        buf.reserve(key.len() + 4);
        if !std::mem::take(&mut self.first) {
            buf.push(b',');
        }
        buf.push(b'"');
        buf.extend_from_slice(key.as_bytes());
        buf.extend_from_slice(b"\":");
        v.serialize(&mut *self.ser)
    }

    fn close(self) -> Result<(), Error> {
        self.ser.buf.push(self.close);
        if self.variant {
            self.ser.buf.push(b'}');
        }
        Ok(())
    }
}

macro_rules! ints {
    ($($f:ident: $t:ty),*) => {$(
        fn $f(self, v: $t) -> Result<(), Error> {
            self.int(v);
            Ok(())
        }
    )*};
}

impl<'a, 'b> ser::Serializer for &'a mut Compact<'b> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a, 'b>;
    type SerializeTuple = Compound<'a, 'b>;
    type SerializeTupleStruct = Compound<'a, 'b>;
    type SerializeTupleVariant = Compound<'a, 'b>;
    type SerializeMap = Compound<'a, 'b>;
    type SerializeStruct = Compound<'a, 'b>;
    type SerializeStructVariant = Compound<'a, 'b>;

    ints!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64);

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.buf
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }

    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.by_serde_json(&v)
    }

    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.by_serde_json(&v)
    }

    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.by_serde_json(&v)
    }

    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.by_serde_json(&v)
    }

    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.by_serde_json(&v)
    }

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.str(v)
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        self.by_serde_json(&serde_bytes_as_seq(v))
    }

    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Error> {
        self.buf.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> Result<(), Error> {
        self.str(v)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        self.open_variant(variant)?;
        v.serialize(&mut *self)?;
        self.buf.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'a, 'b>, Error> {
        Ok(Compound::open(self, b'[', b']'))
    }

    fn serialize_tuple(self, _: usize) -> Result<Compound<'a, 'b>, Error> {
        Ok(Compound::open(self, b'[', b']'))
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Compound<'a, 'b>, Error> {
        Ok(Compound::open(self, b'[', b']'))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a, 'b>, Error> {
        self.open_variant(variant)?;
        Ok(Compound::open_in_variant(self, b'[', b']'))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'a, 'b>, Error> {
        Ok(Compound::open(self, b'{', b'}'))
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'a, 'b>, Error> {
        Ok(Compound::open(self, b'{', b'}'))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a, 'b>, Error> {
        self.open_variant(variant)?;
        Ok(Compound::open_in_variant(self, b'{', b'}'))
    }
}

/// Bytes as serde_json writes them: an array of numbers.
fn serde_bytes_as_seq(v: &[u8]) -> impl Serialize + '_ {
    struct Seq<'v>(&'v [u8]);
    impl Serialize for Seq<'_> {
        fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.0)
        }
    }
    Seq(v)
}

/// The compound traits whose items are elements (`[a,b]`) or fields (`{"k":v}`).
macro_rules! compound {
    ($($tr:ident: $f:ident (elements)),* ; $($ftr:ident (fields)),*) => {
        $(impl ser::$tr for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;
            fn $f<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
                self.element(v)
            }
            fn end(self) -> Result<(), Error> {
                self.close()
            }
        })*
        $(impl ser::$ftr for Compound<'_, '_> {
            type Ok = ();
            type Error = Error;
            #[inline(always)]
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                v: &T,
            ) -> Result<(), Error> {
                self.field(key, v)
            }
            fn end(self) -> Result<(), Error> {
                self.close()
            }
        })*
    };
}

compound!(
    SerializeSeq: serialize_element (elements),
    SerializeTuple: serialize_element (elements),
    SerializeTupleStruct: serialize_field (elements),
    SerializeTupleVariant: serialize_field (elements);
    SerializeStruct (fields),
    SerializeStructVariant (fields)
);

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.comma();
        key.serialize(Key(&mut *self.ser))?;
        self.ser.buf.push(b':');
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        v.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

/// A map key: a string, or a number (a finite float), `bool` or `char` written as one, the
/// value of a `Some`, as serde_json's `MapKeySerializer` does; anything else is refused.
struct Key<'a, 'b>(&'a mut Compact<'b>);

impl Key<'_, '_> {
    /// A float key: its number in quotes, as serde_json writes it; refused when not finite.
    fn float<F: Serialize>(self, finite: bool, v: &F) -> Result<(), Error> {
        if !finite {
            return Err(ser::Error::custom(
                "float key must be finite (got NaN or +/-inf)",
            ));
        }
        self.0.buf.push(b'"');
        self.0.by_serde_json(v)?;
        self.0.buf.push(b'"');
        Ok(())
    }
}

fn not_a_key() -> Error {
    ser::Error::custom("key must be a string")
}

macro_rules! int_keys {
    ($($f:ident: $t:ty),*) => {$(
        fn $f(self, v: $t) -> Result<(), Error> {
            self.0.buf.push(b'"');
            self.0.int(v);
            self.0.buf.push(b'"');
            Ok(())
        }
    )*};
}

impl ser::Serializer for Key<'_, '_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    int_keys!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64,
        serialize_i128: i128, serialize_u128: u128);

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.0
            .buf
            .extend_from_slice(if v { b"\"true\"" } else { b"\"false\"" });
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.float(f64::from(v).is_finite(), &v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.float(v.is_finite(), &v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.0.str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.0.str(v)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        Err(not_a_key())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(not_a_key())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(not_a_key())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        Err(not_a_key())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> Result<(), Error> {
        self.0.str(v)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(not_a_key())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(not_a_key())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(not_a_key())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(not_a_key())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(not_a_key())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(not_a_key())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(not_a_key())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(not_a_key())
    }
}

#[cfg(test)]
mod tests {
    use super::write_compact;
    use proptest::prelude::*;
    use serde::Serialize;
    use std::collections::BTreeMap;

    fn ours<T: Serialize + ?Sized>(v: &T) -> String {
        let mut buf = Vec::new();
        write_compact(&mut buf, v).unwrap();
        String::from_utf8(buf).unwrap()
    }

    fn theirs<T: Serialize + ?Sized>(v: &T) -> String {
        serde_json::to_string(v).unwrap()
    }

    #[derive(Serialize)]
    enum E {
        Unit,
        New(i32),
        Tuple(u8, &'static str),
        Struct { a: Option<i64>, b: Vec<u16> },
    }

    #[derive(Serialize)]
    struct S<'a> {
        name: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<u8>,
        neg: i64,
        big: u64,
        f: f64,
        nan: f32,
        c: char,
        flag: bool,
        nothing: Option<()>,
        unit: (),
        empty: Vec<u8>,
        tuple: (i8, u128, i128),
        extremes: (i64, i64, i64, u64, u64, i8),
        e: Vec<E>,
        map: BTreeMap<i32, &'a str>,
        bool_keys: BTreeMap<bool, u8>,
        #[serde(with = "serde_bytes_like")]
        bytes: &'a [u8],
    }

    mod serde_bytes_like {
        pub fn serialize<S: serde::Serializer>(v: &&[u8], s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(v)
        }
    }

    #[test]
    fn every_shape_is_written_as_serde_json_writes_it() {
        let v = S {
            name: "orders \"q\" \\ \n\t\u{1}\u{7f} é 🦀",
            skipped: None,
            neg: i64::MIN,
            big: u64::MAX,
            f: 1.5e-7,
            nan: f32::NAN,
            c: '"',
            flag: true,
            nothing: None,
            unit: (),
            empty: vec![],
            tuple: (-1, u128::MAX, i128::MIN),
            extremes: (i64::MIN, i64::MAX, 0, u64::MAX, 0, i8::MIN),
            e: vec![
                E::Unit,
                E::New(-7),
                E::Tuple(3, "x"),
                E::Struct {
                    a: Some(1),
                    b: vec![1, 2],
                },
                E::Struct { a: None, b: vec![] },
            ],
            map: [(-3, "a"), (9, "b\"")].into_iter().collect(),
            bool_keys: [(false, 0), (true, 1)].into_iter().collect(),
            bytes: &[0, 255, 7],
        };
        let want = theirs(&v);
        assert_eq!(ours(&v), want);
        // And the value is what it says, not only equal: a spot check of the forms.
        assert!(want.starts_with(r#"{"name":"orders \"q\" \\ \n\t\u0001"#));
        assert!(want.contains(r#""map":{"-3":"a","9":"b\""}"#));
        assert!(want
            .contains(r#""e":["Unit",{"New":-7},{"Tuple":[3,"x"]},{"Struct":{"a":1,"b":[1,2]}}"#));
        assert!(want.contains(r#""bytes":[0,255,7]"#));
    }

    #[test]
    fn a_value_tree_is_written_as_serde_json_writes_it() {
        let v = serde_json::json!({
            "z": [1, -2, 3.25, null, true, {"nested": "é\u{0}"}],
            "a": {"": [], "k": {}},
        });
        assert_eq!(ours(&v), theirs(&v));
    }

    /// A map whose keys serialise as floats or as `Some` of a string (no such key in a
    /// record today, but serde_json writes them).
    struct OddKeys(f64, f32, Option<&'static str>);

    impl Serialize for OddKeys {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut m = s.serialize_map(Some(3))?;
            m.serialize_entry(&self.0, &1)?;
            m.serialize_entry(&self.1, &2)?;
            m.serialize_entry(&self.2, &3)?;
            m.end()
        }
    }

    #[test]
    fn float_and_some_keys_are_written_as_serde_json_writes_them() {
        let v = OddKeys(-1.5e300, 0.25, Some("k\"ey"));
        let want = theirs(&v);
        assert_eq!(want, r#"{"-1.5e+300":1,"0.25":2,"k\"ey":3}"#);
        assert_eq!(ours(&v), want);
        for bad in [
            OddKeys(f64::NAN, 0.0, Some("k")),
            OddKeys(0.0, f32::INFINITY, Some("k")),
            OddKeys(0.0, 0.0, None),
        ] {
            assert!(serde_json::to_string(&bad).is_err());
            assert!(write_compact(&mut Vec::new(), &bad).is_err());
        }
    }

    #[test]
    fn a_key_that_is_not_a_string_is_refused() {
        let m: BTreeMap<Vec<u8>, u8> = [(vec![1], 1)].into_iter().collect();
        assert!(write_compact(&mut Vec::new(), &m).is_err());
        assert!(serde_json::to_string(&m).is_err());
    }

    proptest! {
        #[test]
        fn the_word_test_finds_what_the_byte_test_finds(
            b in proptest::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\\'), Just(0x1fu8), Just(0x20u8), Just(0x7f), any::<u8>()],
                0..40,
            )
        ) {
            let naive = b.iter().all(|&c| c >= 0x20 && c != b'"' && c != b'\\');
            prop_assert_eq!(super::plain(&b), naive);
        }

        #[test]
        fn any_string_is_escaped_as_serde_json_escapes_it(s in any::<String>()) {
            prop_assert_eq!(ours(&s), theirs(&s));
        }

        #[test]
        fn any_ascii_bytes_are_escaped_as_serde_json_escapes_them(
            b in proptest::collection::vec(0u8..0x80, 0..80)
        ) {
            let s = String::from_utf8(b).unwrap();
            prop_assert_eq!(ours(&s), theirs(&s));
        }

        #[test]
        fn any_integer_is_written_as_serde_json_writes_it(
            a in any::<i64>(), b in any::<u64>(), c in any::<i16>(), d in any::<u8>(),
            // Every digit count, its edges included.
            e in (0u32..20).prop_flat_map(|k| {
                let lo = 10u64.pow(k);
                prop_oneof![Just(lo), Just(lo - 1), Just(lo.saturating_mul(10) - 1), lo..lo.saturating_mul(10)]
            }),
        ) {
            prop_assert_eq!(ours(&(a, b, c, d, e)), theirs(&(a, b, c, d, e)));
            let negative = i64::try_from(e).map_or(i64::MIN, |e| -e);
            prop_assert_eq!(ours(&negative), theirs(&negative));
        }
    }
}
