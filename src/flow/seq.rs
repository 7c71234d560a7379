//! TCP sequence numbers, whose order wraps at 2^32 (RFC 9293 section 3.4; comparison as in
//! RFC 1982 serial-number arithmetic).
//!
//! Input: raw 32-bit sequence numbers from TCP headers.
//! Output: [`SeqNum`], whose only comparisons are by wrapping difference, so no raw `u32`
//! comparison of sequence numbers appears anywhere else.

/// A TCP sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SeqNum(pub u32);

impl SeqNum {
    /// The signed distance from `other` to `self` in bytes: positive when `self` is after
    /// `other` (within 2^31), negative when before.
    pub fn diff(self, other: SeqNum) -> i64 {
        i64::from(self.0.wrapping_sub(other.0) as i32)
    }

    /// This sequence number moved on by `n` bytes, wrapping at 2^32.
    pub fn plus(self, n: u64) -> SeqNum {
        SeqNum(self.0.wrapping_add(n as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps() {
        assert_eq!(SeqNum(5).diff(SeqNum(u32::MAX - 4)), 10);
        assert_eq!(SeqNum(u32::MAX - 4).diff(SeqNum(5)), -10);
        assert_eq!(SeqNum(u32::MAX).plus(2), SeqNum(1));
        assert_eq!(SeqNum(100).diff(SeqNum(100)), 0);
    }
}
