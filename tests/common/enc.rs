//! A hand encoder of Kafka's wire primitives, big-endian, from the protocol guide's
//! definitions (INT8 to INT64, UNSIGNED_VARINT, STRING and COMPACT_STRING, array lengths,
//! tagged fields): for frames the `kafka-protocol` crate does not encode (WriteTxnMarkers v0
//! and v2). Shared by the capture generators in `examples/`.

/// Hand encoder for the classic (v0) and flexible (v2) layouts: each method appends one field
/// and returns the encoder; [`Enc::frame`] puts the int32 size prefix before the bytes.
#[derive(Default)]
pub struct Enc(pub Vec<u8>);

impl Enc {
    pub fn i8(&mut self, v: i8) -> &mut Self {
        self.0.push(v as u8);
        self
    }
    pub fn i16(&mut self, v: i16) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn i64(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn uvarint(&mut self, mut v: u32) -> &mut Self {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
        self
    }
    pub fn classic_str(&mut self, s: &str) -> &mut Self {
        self.i16(s.len() as i16);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    pub fn compact_str(&mut self, s: &str) -> &mut Self {
        self.uvarint(s.len() as u32 + 1);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    pub fn len(&mut self, flexible: bool, n: usize) -> &mut Self {
        if flexible {
            self.uvarint(n as u32 + 1)
        } else {
            self.i32(n as i32)
        }
    }
    pub fn s(&mut self, flexible: bool, s: &str) -> &mut Self {
        if flexible {
            self.compact_str(s)
        } else {
            self.classic_str(s)
        }
    }
    /// An empty tagged-field section, or the given `(tag, bytes)` fields.
    pub fn tags(&mut self, fields: &[(u32, &[u8])]) -> &mut Self {
        self.uvarint(fields.len() as u32);
        for (tag, data) in fields {
            self.uvarint(*tag).uvarint(data.len() as u32);
            self.0.extend_from_slice(data);
        }
        self
    }
    pub fn frame(&self) -> Vec<u8> {
        let mut f = (self.0.len() as i32).to_be_bytes().to_vec();
        f.extend_from_slice(&self.0);
        f
    }
}
