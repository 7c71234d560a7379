//! The bookkeeping of which byte ranges of a stream are held, apart from the bytes themselves
//! (after smoltcp's `storage/assembler.rs`).
//!
//! Input: ranges `[start, end)` of stream offsets (bytes, 64-bit, never wrapping) as segments
//! arrive ahead of the next byte to deliver.
//! Output: for each insertion, which parts are new (to be stored: the first copy of a byte wins)
//! and which were already held (to compare against); and the held ranges in order.
//!
//! Invariant: `ranges` is sorted, its ranges are non-empty, and no two overlap or touch
//! (touching ranges are merged), so every held byte is in exactly one range.

use std::collections::BTreeMap;

/// A half-open range of stream offsets.
pub type Range = (u64, u64);

/// The held ranges of one direction, keyed by start. See the module documentation for the
/// invariant. Insertion costs O(log n) plus the ranges it merges.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Assembler {
    ranges: BTreeMap<u64, u64>,
}

/// What an insertion found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Insert {
    /// Parts of the inserted range that were not held before, in order.
    pub new: Vec<Range>,
    /// Parts that were already held, in order.
    pub overlap: Vec<Range>,
}

impl Assembler {
    /// Marks `[start, end)` as held; says which parts are new and which were held already.
    pub fn insert(&mut self, start: u64, end: u64) -> Insert {
        let mut out = Insert::default();
        if start >= end {
            return out;
        }
        // The ranges that overlap or touch [start, end]: perhaps one starting before `start`,
        // then every one starting within it.
        let mut touching: Vec<Range> = Vec::new();
        if let Some((&s, &e)) = self.ranges.range(..start).next_back() {
            if e >= start {
                touching.push((s, e));
            }
        }
        touching.extend(self.ranges.range(start..=end).map(|(&s, &e)| (s, e)));
        let mut at = start;
        for &(rs, re) in &touching {
            if rs > at {
                out.new.push((at, rs.min(end)));
            }
            let (os, oe) = (rs.max(start), re.min(end));
            if os < oe {
                out.overlap.push((os, oe));
            }
            at = at.max(re);
        }
        if at < end {
            out.new.push((at, end));
        }
        let merged_start = touching.first().map_or(start, |r| r.0.min(start));
        let merged_end = touching.last().map_or(end, |r| r.1.max(end));
        for (s, _) in touching {
            self.ranges.remove(&s);
        }
        self.ranges.insert(merged_start, merged_end);
        out
    }

    /// The first held range, if any.
    pub fn first(&self) -> Option<Range> {
        self.ranges.first_key_value().map(|(&s, &e)| (s, e))
    }

    /// Forgets everything before offset `to` (delivered or declared lost).
    pub fn forget_before(&mut self, to: u64) {
        while let Some(entry) = self.ranges.first_entry() {
            let (s, e) = (*entry.key(), *entry.get());
            if s >= to {
                break;
            }
            entry.remove();
            if e > to {
                self.ranges.insert(to, e);
                break;
            }
        }
    }

    /// Bytes held.
    pub fn held(&self) -> u64 {
        self.ranges.iter().map(|(s, e)| e - s).sum()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The held ranges, in order.
    pub fn ranges(&self) -> Vec<Range> {
        self.ranges.iter().map(|(&s, &e)| (s, e)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranges held before, range inserted, ranges held after, new parts, overlapping parts.
    #[allow(clippy::type_complexity)]
    fn case(before: &[Range], ins: Range, after: &[Range], new: &[Range], overlap: &[Range]) {
        let mut a = Assembler {
            ranges: before.iter().copied().collect(),
        };
        let r = a.insert(ins.0, ins.1);
        assert_eq!(
            a.ranges(),
            after,
            "held after inserting {ins:?} into {before:?}"
        );
        assert_eq!(r.new, new, "new parts of {ins:?} into {before:?}");
        assert_eq!(r.overlap, overlap, "overlap of {ins:?} into {before:?}");
    }

    #[test]
    fn into_empty() {
        case(&[], (10, 20), &[(10, 20)], &[(10, 20)], &[]);
    }

    #[test]
    fn empty_range_changes_nothing() {
        case(&[(10, 20)], (15, 15), &[(10, 20)], &[], &[]);
    }

    #[test]
    fn disjoint_before_and_after() {
        case(&[(10, 20)], (0, 5), &[(0, 5), (10, 20)], &[(0, 5)], &[]);
        case(
            &[(10, 20)],
            (25, 30),
            &[(10, 20), (25, 30)],
            &[(25, 30)],
            &[],
        );
    }

    #[test]
    fn touching_merges() {
        case(&[(10, 20)], (5, 10), &[(5, 20)], &[(5, 10)], &[]);
        case(&[(10, 20)], (20, 25), &[(10, 25)], &[(20, 25)], &[]);
        case(&[(0, 5), (10, 20)], (5, 10), &[(0, 20)], &[(5, 10)], &[]);
    }

    #[test]
    fn exact_duplicate() {
        case(&[(10, 20)], (10, 20), &[(10, 20)], &[], &[(10, 20)]);
    }

    #[test]
    fn inside_existing() {
        case(&[(10, 20)], (12, 18), &[(10, 20)], &[], &[(12, 18)]);
    }

    #[test]
    fn covering_existing() {
        case(
            &[(10, 20)],
            (5, 25),
            &[(5, 25)],
            &[(5, 10), (20, 25)],
            &[(10, 20)],
        );
    }

    #[test]
    fn overlapping_start_and_end() {
        case(&[(10, 20)], (5, 15), &[(5, 20)], &[(5, 10)], &[(10, 15)]);
        case(&[(10, 20)], (15, 25), &[(10, 25)], &[(20, 25)], &[(15, 20)]);
    }

    #[test]
    fn bridging_several() {
        case(
            &[(0, 2), (4, 6), (8, 10), (20, 30)],
            (1, 9),
            &[(0, 10), (20, 30)],
            &[(2, 4), (6, 8)],
            &[(1, 2), (4, 6), (8, 9)],
        );
    }

    #[test]
    fn forget_before_trims() {
        let mut a = Assembler {
            ranges: [(0, 5), (8, 12), (20, 30)].into_iter().collect(),
        };
        a.forget_before(10);
        assert_eq!(a.ranges(), vec![(10, 12), (20, 30)]);
        assert_eq!(a.held(), 12);
        a.forget_before(40);
        assert!(a.is_empty());
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// The invariant holds after any insertions, and the held set equals the union of
            /// what was inserted, byte for byte; new parts never repeat a byte.
            #[test]
            fn union_and_invariant(ins in prop::collection::vec((0u64..200, 0u64..40), 0..30)) {
                let mut a = Assembler::default();
                let mut bytes = [false; 240];
                for (s, len) in ins {
                    let r = a.insert(s, s + len);
                    for (ns, ne) in r.new {
                        for b in ns..ne {
                            prop_assert!(!bytes[b as usize], "byte {} new twice", b);
                            bytes[b as usize] = true;
                        }
                    }
                    let rs = a.ranges();
                    for w in rs.windows(2) {
                        prop_assert!(w[0].1 < w[1].0);
                    }
                    prop_assert!(rs.iter().all(|r| r.0 < r.1));
                }
                let mut held = [false; 240];
                for (s, e) in a.ranges() {
                    for b in s..e { held[b as usize] = true; }
                }
                prop_assert_eq!(held, bytes);
            }
        }
    }
}
