//! Names that recur in a capture (topic names, client ids, a Produce request's transactional
//! id), shared instead of allocated for each message that carries them.
//!
//! Input: a string's bytes just read off the wire. Output: a [`Name`], an `Arc<str>`: the one
//! already made for the same bytes on this thread when there is one (found by the bytes, so a
//! name seen before is not checked as UTF-8 again), else a new one if the bytes are UTF-8,
//! kept for the next message. A busy broker's Produce and Fetch messages name the same few
//! topics and clients again and again; on a capture of small frames an allocation for each
//! was a quarter of the decoding thread's allocations, each freed there, gone cold, when its
//! record came back from the writing thread.
//!
//! Bounded whatever the capture: at most [`MAX_KEPT`] names of at most [`MAX_KEPT_LEN`] bytes
//! are kept per thread (about 100 KiB at most, a fixed cost outside `--memory-limit`, like the
//! code's own tables); a longer name is allocated alone, and when the table is full it is
//! emptied and fills again with the names that come next. What a name holds is the same
//! either way: sharing changes no output. Bytes that are not UTF-8 are never kept.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// A shared string: a topic name, a client id or a transactional id. Serialised as the
/// string.
pub type Name = Arc<str>;

/// Most names kept per thread.
pub const MAX_KEPT: usize = 512;

/// Longest name kept (bytes); Kafka's topic names are at most 249 characters, and nearly all
/// are far shorter.
pub const MAX_KEPT_LEN: usize = 128;

thread_local! {
    /// The names kept, by their bytes.
    static KEPT: RefCell<HashMap<Box<[u8]>, Name, foldhash::fast::RandomState>> =
        RefCell::new(HashMap::default());
}

/// The [`Name`] of `s`: the one kept on this thread for the same text, or a new one (kept
/// when it is at most [`MAX_KEPT_LEN`] bytes).
pub fn name(s: &str) -> Name {
    match name_of_bytes(s.as_bytes()) {
        Some(n) => n,
        // Unreachable: `s` is UTF-8.
        None => Name::from(s),
    }
}

/// The [`Name`] of the string whose bytes are `b`: the one kept on this thread for the same
/// bytes, else a new one (kept when it is at most [`MAX_KEPT_LEN`] bytes); `None` when `b` is
/// not UTF-8 (only bytes that were UTF-8 are ever kept).
pub fn name_of_bytes(b: &[u8]) -> Option<Name> {
    if b.len() > MAX_KEPT_LEN {
        return std::str::from_utf8(b).ok().map(Name::from);
    }
    KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        if let Some(n) = kept.get(b) {
            return Some(n.clone());
        }
        let n = Name::from(std::str::from_utf8(b).ok()?);
        if kept.len() >= MAX_KEPT {
            kept.clear();
        }
        kept.insert(b.into(), n.clone());
        Some(n)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_gives_the_same_name() {
        let a = name("orders");
        let b = name(&String::from("orders"));
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(&*a, "orders");
        assert!(!Arc::ptr_eq(&a, &name("payments")));
        let c = name_of_bytes(b"orders").expect("UTF-8");
        assert!(Arc::ptr_eq(&a, &c));
    }

    #[test]
    fn bytes_not_utf8_give_no_name_and_are_not_kept() {
        let before = KEPT.with(|k| k.borrow().len());
        assert_eq!(name_of_bytes(b"ord\xffers"), None);
        assert_eq!(
            name_of_bytes(&[b'x'; MAX_KEPT_LEN + 1][..]).as_deref(),
            Some(&*"x".repeat(MAX_KEPT_LEN + 1))
        );
        assert_eq!(name_of_bytes(&[0xc3; MAX_KEPT_LEN + 1][..]), None);
        assert_eq!(KEPT.with(|k| k.borrow().len()), before);
        assert_eq!(name_of_bytes("é".as_bytes()).as_deref(), Some("é"));
    }

    #[test]
    fn a_long_name_is_not_kept_and_the_table_stays_bounded() {
        let long = "t".repeat(MAX_KEPT_LEN + 1);
        assert!(!Arc::ptr_eq(&name(&long), &name(&long)));
        assert_eq!(&*name(&long), long);
        for i in 0..3 * MAX_KEPT {
            assert_eq!(&*name(&format!("topic-{i}")), format!("topic-{i}"));
            assert!(KEPT.with(|k| k.borrow().len()) <= MAX_KEPT);
        }
        // The latest names are kept after the table was emptied.
        let last = format!("topic-{}", 3 * MAX_KEPT - 1);
        assert!(Arc::ptr_eq(&name(&last), &name(&last)));
    }
}
