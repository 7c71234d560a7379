//! The run's memory budget: one limit (`--memory-limit`) for everything held across packets.
//!
//! Each stage that holds bytes from one packet to the next (the connection table, out-of-order
//! segments, frames being buffered, requests waiting for their response, request records held
//! for `--pair` and the filters, bytes held while recognising Kafka, the transaction view, the
//! `--report` page's data) charges what it holds to
//! one [`Memory`], at its real cost (allocated capacity and bookkeeping, not only the bytes of
//! the capture), through a [`Charge`] that it owns; dropping the charge releases it, so that
//! what is counted is what is held.
//!
//! A charge that would pass the limit is refused: the holder then gives up a holding of its own
//! (the frame being buffered, the oldest waiting request, the out-of-order bytes of a direction)
//! and reports it as a `memory_limit` anomaly. Connections are the exception: they are always
//! charged, and when the budget is exceeded the connection table finishes the half seen least
//! recently, which releases everything they held. The `--report` page's data, made after the
//! records, says what it left out on the page itself (no anomaly: the records are written).
//!
//! A [`Memory`] may be shared by the runs of several captures (a library user's choice: the
//! limit is then for all of them together, and what each gives up depends on their timing);
//! the command gives each capture read at once its own share of the limit instead.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// The default limit (40 MiB): with the read buffer and the program itself, peak resident
/// memory stays under 64 MB whatever the capture.
pub const DEFAULT_MEMORY_LIMIT: usize = 40 * 1024 * 1024;

/// The smallest `--memory-limit` (64 KiB).
pub const MIN_MEMORY_LIMIT: usize = 64 * 1024;

/// What a charge holds, for the anomaly that reports a holding given up and for statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Holding {
    /// The connection table and each connection's Kafka session state.
    Connections,
    /// Out-of-order segments held ahead of a hole.
    OutOfOrder,
    /// Frames being buffered to be decoded, and bytes held while looking for a frame start.
    Frames,
    /// Requests waiting for their response.
    Pending,
    /// Request records held until their response (`--pair`, filters).
    HeldRecords,
    /// Bytes held while recognising Kafka on a port nobody named.
    Probing,
    /// The transaction view's transactions and what it remembers (`--transactions`).
    Transactions,
    /// IP datagrams in reassembly from their fragments.
    Fragments,
    /// `--write-pcap`: which packets carried the records written.
    Packets,
    /// `--report`: what the page is drawn from (bars, round trips, verdicts, tables).
    Report,
}

impl Holding {
    /// Every holding, in the order of [`Holding::index`].
    pub const ALL: [Holding; 10] = [
        Holding::Connections,
        Holding::OutOfOrder,
        Holding::Frames,
        Holding::Pending,
        Holding::HeldRecords,
        Holding::Probing,
        Holding::Transactions,
        Holding::Fragments,
        Holding::Packets,
        Holding::Report,
    ];

    /// Whether what its charges hold is also counted apart, for [`Memory::held`]: the
    /// holdings that change by the record, not by the packet (the transaction view, the
    /// `--report` page's data), so that the per-packet path pays nothing for it.
    pub fn counted_apart(self) -> bool {
        matches!(self, Holding::Transactions | Holding::Report)
    }

    /// Its position in [`Holding::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its snake_case name, as in `--stats`: e.g. `"out_of_order"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Holding::Connections => "connections",
            Holding::OutOfOrder => "out_of_order",
            Holding::Frames => "frames",
            Holding::Pending => "pending_requests",
            Holding::HeldRecords => "held_records",
            Holding::Probing => "probing",
            Holding::Transactions => "transactions",
            Holding::Fragments => "fragments",
            Holding::Packets => "packets",
            Holding::Report => "report",
        }
    }
}

#[derive(Debug)]
struct Inner {
    limit: usize,
    /// The `--memory-limit` this budget is a share of (the same as `limit` when it is all).
    asked: usize,
    used: AtomicUsize,
    peak: AtomicUsize,
    given_up: [AtomicU64; Holding::ALL.len()],
    /// Bytes charged now by the holdings counted apart ([`Holding::counted_apart`]).
    held: [AtomicUsize; Holding::ALL.len()],
}

/// The budget: a limit in bytes and what is charged against it now. Cloning gives another
/// handle to the same budget.
#[derive(Debug, Clone)]
pub struct Memory(Arc<Inner>);

/// Budgets are alike when their limits are (a `Config` compares its settings).
impl PartialEq for Memory {
    fn eq(&self, other: &Self) -> bool {
        self.limit() == other.limit()
    }
}

impl Default for Memory {
    fn default() -> Self {
        Memory::new(DEFAULT_MEMORY_LIMIT)
    }
}

impl Memory {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Memory::share_of(limit, 1)
    }

    /// A budget of `1/parts` of `limit` bytes (at least [`MIN_MEMORY_LIMIT`], or `limit` when
    /// smaller), for one of `parts` captures read at once; its anomalies name `limit`.
    pub fn share_of(limit: usize, parts: usize) -> Self {
        let share = (limit / parts.max(1)).max(MIN_MEMORY_LIMIT.min(limit));
        Memory(Arc::new(Inner {
            limit: share,
            asked: limit,
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            given_up: Default::default(),
            held: Default::default(),
        }))
    }

    /// The limit, in bytes.
    pub fn limit(&self) -> usize {
        self.0.limit
    }

    /// Bytes charged now, in all.
    pub fn used(&self) -> usize {
        self.0.used.load(Ordering::Relaxed)
    }

    /// The most bytes charged at once so far.
    pub fn peak(&self) -> usize {
        self.0.peak.load(Ordering::Relaxed)
    }

    /// Whether more is charged than the limit allows (only connections are charged past it).
    #[inline]
    pub fn over(&self) -> bool {
        self.used() > self.0.limit
    }

    /// Whether the budget is close to full (past seven eighths of the limit): the connection
    /// table then finishes its least recently seen half, leaving room for the other holders.
    #[inline]
    pub fn pressed(&self) -> bool {
        self.used() > self.0.limit - self.0.limit / 8
    }

    /// Bytes charged now by the charges of `h`, for a holding [counted
    /// apart](Holding::counted_apart) (0 for the others).
    pub fn held(&self, h: Holding) -> usize {
        self.0.held[h.index()].load(Ordering::Relaxed)
    }

    /// How many holdings of `h` were given up for the limit.
    pub fn given_up(&self, h: Holding) -> u64 {
        self.0.given_up[h.index()].load(Ordering::Relaxed)
    }

    /// Counts a holding of `h` given up for the limit.
    pub fn note_given_up(&self, h: Holding) {
        self.0.given_up[h.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// A charge of nothing yet, for a holding of kind `h`.
    pub fn charge(&self, h: Holding) -> Charge {
        Charge {
            mem: self.clone(),
            holding: h,
            bytes: 0,
            apart: h.counted_apart(),
        }
    }

    fn add(&self, n: usize, force: bool) -> bool {
        let before = self.0.used.fetch_add(n, Ordering::Relaxed);
        let now = before.saturating_add(n);
        if !force && now > self.0.limit {
            self.0.used.fetch_sub(n, Ordering::Relaxed);
            return false;
        }
        if now > self.0.peak.load(Ordering::Relaxed) {
            self.0.peak.fetch_max(now, Ordering::Relaxed);
        }
        true
    }

    fn sub(&self, n: usize) {
        self.0.used.fetch_sub(n, Ordering::Relaxed);
    }

    /// A fresh budget with the same limit and share (nothing charged, no peak).
    pub fn fresh(&self) -> Memory {
        Memory(Arc::new(Inner {
            limit: self.0.limit,
            asked: self.0.asked,
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            given_up: Default::default(),
            held: Default::default(),
        }))
    }

    /// The text that ends every `memory_limit` anomaly: the limit and how to raise it (four
    /// times).
    pub fn advice(&self) -> String {
        self.advice_for(self.0.limit.saturating_mul(4))
    }

    /// `bytes` of this budget as the `--memory-limit` that gives it them (the same, or scaled
    /// by `--memory-limit` over this capture's share of it).
    fn scaled(&self, bytes: usize) -> usize {
        let s = bytes as u128 * self.0.asked as u128 / self.0.limit.max(1) as u128;
        usize::try_from(s).unwrap_or(usize::MAX)
    }

    /// As [`Memory::advice`], asking for a limit that gives this budget at least `needed`
    /// bytes (scaled up to `--memory-limit` when this budget is a capture's share of it with
    /// `-j`).
    pub fn advice_for(&self, needed: usize) -> String {
        let share = if self.0.asked != self.0.limit {
            format!(
                ", this capture's share of --memory-limit {} with -j",
                human(self.0.asked)
            )
        } else {
            String::new()
        };
        format!(
            "the budget is {}{share}; raise it with --memory-limit, e.g. --memory-limit {}",
            human(self.0.limit),
            human(self.scaled(needed.max(self.0.limit))),
        )
    }
}

/// `bytes` as a `--memory-limit` value, rounded up: `48M`, `1G`, `64K`, or bytes below 1K.
pub fn human(bytes: usize) -> String {
    const M: usize = 1024 * 1024;
    if bytes >= 1024 * M && bytes % (1024 * M) == 0 {
        format!("{}G", bytes / (1024 * M))
    } else if bytes >= M {
        format!("{}M", bytes.div_ceil(M))
    } else if bytes >= 1024 {
        format!("{}K", bytes.div_ceil(1024))
    } else {
        format!("{bytes}")
    }
}

/// Parses a `--memory-limit` value: bytes, or a number with `K`, `M` or `G` (powers of 1024,
/// in either case, with or without a trailing `B` or `iB`), e.g. `64M`, `1g`, `500000`. Below
/// [`MIN_MEMORY_LIMIT`] is refused.
pub fn parse_limit(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let upper = t.to_ascii_uppercase();
    let digits = upper.trim_end_matches("IB").trim_end_matches('B');
    let (num, mult) = match digits.chars().last() {
        Some('K') => (&digits[..digits.len() - 1], 1usize << 10),
        Some('M') => (&digits[..digits.len() - 1], 1 << 20),
        Some('G') => (&digits[..digits.len() - 1], 1 << 30),
        _ => (digits, 1),
    };
    let n: usize = num
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a size (e.g. 64M, 1G or a number of bytes)"))?;
    match n.checked_mul(mult) {
        Some(v) if v < MIN_MEMORY_LIMIT => Err(format!(
            "the memory limit must be at least 64K (less cannot hold one connection's state), \
             not `{s}`{}",
            match num.trim().parse::<u64>() {
                // A number alone is bytes: `40` was most likely meant as 40M.
                Ok(m) if mult == 1 && (1..=4096).contains(&m) => {
                    format!(" ({m} bytes; for {m} megabytes write {m}M)")
                }
                _ => String::new(),
            }
        )),
        Some(v) => Ok(v),
        None => Err(format!("`{s}` is too large")),
    }
}

/// What one holder has charged to a [`Memory`]; released when dropped.
#[derive(Debug)]
pub struct Charge {
    mem: Memory,
    holding: Holding,
    bytes: usize,
    /// Its holding is [counted apart](Holding::counted_apart).
    apart: bool,
}

impl Charge {
    /// Moves the count apart of this charge's holding from `self.bytes` to `bytes`.
    fn count_apart(&self, bytes: usize) {
        if self.apart {
            let held = &self.mem.0.held[self.holding.index()];
            if bytes > self.bytes {
                held.fetch_add(bytes - self.bytes, Ordering::Relaxed);
            } else {
                held.fetch_sub(self.bytes - bytes, Ordering::Relaxed);
            }
        }
    }

    /// Bytes charged now.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The budget charged.
    pub fn memory(&self) -> &Memory {
        &self.mem
    }

    /// What this charge holds.
    pub fn holding(&self) -> Holding {
        self.holding
    }

    /// Counts a holding of this charge's kind given up for the limit.
    pub fn note_given_up(&self) {
        self.mem.note_given_up(self.holding);
    }

    /// Sets the charge to `bytes`; growing it is refused (and nothing changes) when that
    /// would pass the limit. Returns whether the charge is now `bytes`.
    #[inline]
    pub fn set(&mut self, bytes: usize) -> bool {
        if bytes > self.bytes {
            if !self.mem.add(bytes - self.bytes, false) {
                return false;
            }
        } else if bytes < self.bytes {
            self.mem.sub(self.bytes - bytes);
        }
        self.count_apart(bytes);
        self.bytes = bytes;
        true
    }

    /// Sets the charge to `bytes` even past the limit (for holdings that cannot be refused:
    /// the connection table).
    pub fn force(&mut self, bytes: usize) {
        if bytes > self.bytes {
            self.mem.add(bytes - self.bytes, true);
        } else {
            self.mem.sub(self.bytes - bytes);
        }
        self.count_apart(bytes);
        self.bytes = bytes;
    }

    /// Adds `n` bytes if they fit; see [`Charge::set`].
    #[inline]
    pub fn add(&mut self, n: usize) -> bool {
        self.set(self.bytes.saturating_add(n))
    }

    /// Releases `n` bytes (at most what is charged).
    #[inline]
    pub fn sub(&mut self, n: usize) {
        self.set(self.bytes.saturating_sub(n));
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.count_apart(0);
        self.mem.sub(self.bytes);
    }
}

/// Heap bytes a `Vec` of `capacity` elements of `T` really takes: its capacity, rounded up
/// as the allocator does (16-byte granules and a header of 8 bytes), nothing when empty.
pub fn vec_cost<T>(capacity: usize) -> usize {
    let n = capacity.saturating_mul(std::mem::size_of::<T>());
    if n == 0 {
        0
    } else {
        alloc_cost(n)
    }
}

/// Heap bytes a string takes (its capacity as one allocation), nothing for none.
pub fn string_cost(s: Option<&String>) -> usize {
    s.map_or(0, |s| alloc_cost(s.capacity()))
}

/// Heap bytes charged for a shared name (`kafka::names::Name`, an `Arc<str>`: its text after
/// two reference counts, 16 bytes): as if it were the message's own (it may be shared with
/// other messages and kept by the table of names, so this over-counts, never under-counts).
pub fn name_cost(s: Option<&str>) -> usize {
    s.map_or(0, |s| alloc_cost(s.len() + 16))
}

/// Heap bytes one allocation of `n` bytes really takes (glibc malloc: 8 bytes of header,
/// 16-byte granules, 32 bytes at least).
pub const fn alloc_cost(n: usize) -> usize {
    let c = n.saturating_add(8).div_ceil(16) * 16;
    if c < 32 {
        32
    } else {
        c
    }
}

/// Heap bytes a `HashMap` of `capacity` entries of `(K, V)` takes (hashbrown: buckets at a
/// load factor of 7/8, rounded to a power of two, and one control byte each).
pub fn map_cost<K, V>(capacity: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = (capacity.saturating_mul(8) / 7).next_power_of_two().max(4);
    alloc_cost(buckets.saturating_mul(std::mem::size_of::<(K, V)>() + 1) + 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_add_up_and_are_released_when_dropped() {
        let m = Memory::new(1000);
        let mut a = m.charge(Holding::Frames);
        let mut b = m.charge(Holding::Pending);
        assert!(a.set(600));
        assert!(!b.set(500)); // 1,100 > 1,000: refused, nothing changes
        assert_eq!((m.used(), b.bytes()), (600, 0));
        assert!(b.add(400));
        assert_eq!((m.used(), b.bytes()), (1000, 400));
        assert!(!a.add(1) && m.pressed() && !m.over());
        a.sub(100);
        assert_eq!(m.used(), 900);
        let mut c = m.charge(Holding::Connections);
        c.force(300); // connections are charged past the limit
        assert!(m.over());
        assert_eq!(m.peak(), 1200);
        drop(a);
        drop(c);
        assert_eq!(m.used(), 400);
        drop(b);
        assert_eq!(m.used(), 0);
        assert!(!m.over() && !m.pressed());
    }

    #[test]
    fn limits_parse() {
        assert_eq!(parse_limit("64M"), Ok(64 << 20));
        assert_eq!(parse_limit("1g"), Ok(1 << 30));
        assert_eq!(parse_limit("512KiB"), Ok(512 << 10));
        assert_eq!(parse_limit("100000"), Ok(100_000));
        assert_eq!(human(65_536), "64K");
        assert_eq!(parse_limit("2MB"), Ok(2 << 20));
        assert!(parse_limit("0").is_err());
        assert!(parse_limit("63K").is_err() && parse_limit("64K").is_ok());
        assert!(parse_limit("lots").is_err());
        assert!(parse_limit("99999999999999999999G").is_err());
        assert_eq!(human(48 << 20), "48M");
        assert_eq!(human(2 << 30), "2G");
    }

    #[test]
    fn costs_are_those_of_the_allocator() {
        assert_eq!(vec_cost::<u8>(0), 0);
        assert_eq!(vec_cost::<u8>(1), 32);
        assert_eq!(vec_cost::<u8>(100), 112);
        assert_eq!(vec_cost::<u64>(100), 816);
        assert!(map_cost::<i32, u32>(4096) >= 4096 * 9);
    }

    #[test]
    fn holdings_counted_apart_say_what_they_hold() {
        let m = Memory::new(1 << 20);
        let mut report = m.charge(Holding::Report);
        let mut frames = m.charge(Holding::Frames);
        assert!(report.add(1000) && frames.add(500));
        report.force(3000);
        assert_eq!(
            (m.held(Holding::Report), m.held(Holding::Frames)),
            (3000, 0)
        );
        report.sub(1000);
        assert_eq!(m.held(Holding::Report), 2000);
        // Refused: nothing changes.
        assert!(!report.set(2 << 20));
        assert_eq!(m.held(Holding::Report), 2000);
        let mut other = m.charge(Holding::Report);
        other.force(10);
        assert_eq!(m.held(Holding::Report), 2010);
        drop(report);
        assert_eq!((m.held(Holding::Report), m.used()), (10, 510));
        drop(other);
        assert_eq!(m.held(Holding::Report), 0);
    }

    #[test]
    fn advice_asks_for_what_is_needed_of_the_whole_limit() {
        let m = Memory::new(40 << 20);
        assert!(
            m.advice().ends_with("--memory-limit 160M"),
            "{}",
            m.advice()
        );
        assert!(m.advice_for(100 << 20).ends_with("--memory-limit 100M"));
        // Never less than the limit it is.
        assert!(m.advice_for(1).ends_with("--memory-limit 40M"));
        // A capture's share with -j 4: the whole limit that gives this share what it needs.
        let s = Memory::share_of(40 << 20, 4);
        assert!(
            s.advice_for(20 << 20).ends_with("--memory-limit 80M"),
            "{}",
            s.advice_for(20 << 20)
        );
    }
}
