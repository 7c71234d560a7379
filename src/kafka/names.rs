//! Names that recur in a capture (topic names, client ids, a Produce request's transactional
//! id), shared instead of allocated for each message that carries them.
//!
//! Input: a string just decoded (valid UTF-8). Output: a [`Name`], an `Arc<str>`: the one
//! already made for the same text on this thread when there is one, else a new one, kept for
//! the next message. A busy broker's Produce and Fetch messages name the same few topics and
//! clients again and again; on a capture of small frames an allocation for each was a quarter
//! of the decoding thread's allocations, each freed there, gone cold, when its record came
//! back from the writing thread.
//!
//! Bounded whatever the capture: at most [`MAX_KEPT`] names of at most [`MAX_KEPT_LEN`] bytes
//! are kept per thread (about 100 KiB at most, a fixed cost outside `--memory-limit`, like the
//! code's own tables); a longer name is allocated alone, and when the table is full it is
//! emptied and fills again with the names that come next. What a name holds is the same
//! either way: sharing changes no output.

use std::cell::RefCell;
use std::collections::HashSet;
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
    static KEPT: RefCell<HashSet<Name, foldhash::fast::RandomState>> =
        RefCell::new(HashSet::default());
}

/// The [`Name`] of `s`: the one kept on this thread for the same text, or a new one (kept
/// when it is at most [`MAX_KEPT_LEN`] bytes).
pub fn name(s: &str) -> Name {
    if s.len() > MAX_KEPT_LEN {
        return Name::from(s);
    }
    KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        if let Some(n) = kept.get(s) {
            return n.clone();
        }
        if kept.len() >= MAX_KEPT {
            kept.clear();
        }
        let n = Name::from(s);
        kept.insert(n.clone());
        n
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
