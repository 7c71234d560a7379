//! Request/response correlation of one connection: the requests waiting for a response (a
//! queue indexed by correlation id), the frame in progress in each direction, the versions of
//! the decoded APIs seen, the responses without a request, and which APIs are worth an anomaly
//! when lost or unanswered (from the decoder table).

use super::*;
use crate::kafka::apis::Answers;
use crate::memory;

/// A request waiting for its response.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pending {
    pub(super) correlation_id: i32,
    pub(super) api_key: i16,
    pub(super) api_version: i16,
    pub(super) frame: u64,
    pub(super) ts: Timestamp,
    /// A WriteTxnMarkers request that was not decoded (bytes lost, or malformed): its frame
    /// holds an anomaly, not a request record.
    pub(super) not_decoded: bool,
    /// [`PendingQueue::response_lost`] when the request was queued: more since means bytes of
    /// the response direction were lost while it waited.
    pub(super) response_lost: u64,
    /// [`PendingQueue::response_gaps`] when the request was queued.
    pub(super) response_gaps: u64,
    /// Its number among the run's requests (`Shared::held_seq`), the key of its held record.
    pub(super) seq: u64,
    /// Whether `ts` is when its frame ended: false for a request decoded in part whose end a
    /// gap took (its time is when the loss was found), whose response then has no latency.
    pub(super) time_known: bool,
}

/// Requests waiting for a response, in order, with an index of their correlation ids so that
/// probing a candidate response start costs one lookup. Its allocations are charged to the
/// run's budget.
#[derive(Debug)]
pub(super) struct PendingQueue {
    pub(super) queue: VecDeque<Pending>,
    /// Correlation id to how many pending requests have it (foldhash: it is looked up for
    /// every frame head).
    pub(super) ids: std::collections::HashMap<i32, u32, foldhash::fast::RandomState>,
    /// Bytes lost in the response direction where whole responses could have been (gaps
    /// over a frame boundary, responses lost with their header), in all.
    pub(super) response_lost: u64,
    /// How many such losses, in all.
    pub(super) response_gaps: u64,
    /// Frame number where the latest such loss was reported.
    pub(super) last_response_gap: u64,
    /// What `queue` and `ids` cost.
    charge: Charge,
}

impl PendingQueue {
    pub(super) fn new(memory: &Memory) -> Self {
        PendingQueue {
            queue: VecDeque::new(),
            ids: Default::default(),
            response_lost: 0,
            response_gaps: 0,
            last_response_gap: 0,
            charge: memory.charge(Holding::Pending),
        }
    }

    /// What the queue and the index cost at these capacities, with half as much again for the
    /// blocks left behind as they grew (measured with `tools/memory.sh`: the allocator reuses
    /// them only in part).
    fn cost(queue: usize, ids: usize) -> usize {
        let c = memory::vec_cost::<Pending>(queue) + memory::map_cost::<i32, u32>(ids);
        c + c / 2
    }

    /// Charges the queue and the index at the queue's capacity (the index holds at most one
    /// entry per queued request; its own capacity, after removals, depends on where the ids
    /// hashed, with a seed drawn per run: the budget must be the same in every run).
    fn recharge(&mut self) {
        let cost = Self::cost(self.queue.capacity(), self.queue.capacity());
        self.charge.force(cost);
    }

    /// Makes room for one more request, growing the queue (to at most
    /// [`MAX_PENDING_PER_CONNECTION`]) if the budget allows; false when it does not.
    #[inline]
    pub(super) fn make_room(&mut self) -> bool {
        let len = self.queue.len();
        if len < self.queue.capacity() {
            return true;
        }
        let cap = (self.queue.capacity().max(len + 1) * 2).clamp(4, MAX_PENDING_PER_CONNECTION);
        if !self.charge.set(Self::cost(cap, cap)) {
            return false;
        }
        self.queue.reserve_exact(cap.saturating_sub(len));
        self.ids.reserve(cap.saturating_sub(self.ids.len()));
        self.recharge();
        true
    }

    #[inline]
    pub(super) fn push_back(&mut self, p: Pending) {
        *self.ids.entry(p.correlation_id).or_default() += 1;
        self.queue.push_back(p);
        if self.queue.capacity() * std::mem::size_of::<Pending>() > self.charge.bytes() {
            self.recharge(); // grown without make_room (a test)
        }
    }

    /// Gives back memory once most of the queue is empty.
    fn shrink(&mut self) {
        let cap = self.queue.capacity();
        if cap > 64 && self.queue.len() < cap / 4 {
            self.queue.shrink_to(cap / 2);
            self.ids.shrink_to(cap / 2);
            self.recharge();
        }
    }

    pub(super) fn forget(&mut self, p: &Pending) {
        if let Some(n) = self.ids.get_mut(&p.correlation_id) {
            *n -= 1;
            if *n == 0 {
                self.ids.remove(&p.correlation_id);
            }
        }
    }

    pub(super) fn pop_front(&mut self) -> Option<Pending> {
        let p = self.queue.pop_front()?;
        self.forget(&p);
        self.shrink();
        Some(p)
    }

    pub(super) fn contains(&self, correlation_id: i32) -> bool {
        self.ids.contains_key(&correlation_id)
    }

    #[inline]
    pub(super) fn position(&self, correlation_id: i32) -> Option<usize> {
        if !self.contains(correlation_id) {
            return None;
        }
        self.queue
            .iter()
            .position(|p| p.correlation_id == correlation_id)
    }

    pub(super) fn len(&self) -> usize {
        self.queue.len()
    }

    /// Notes a loss in the response direction (reported at `frame`, `bytes` long) that may
    /// have taken the responses of the requests waiting now.
    pub(super) fn response_gap(&mut self, frame: u64, bytes: u64) {
        self.response_lost += bytes;
        self.response_gaps += 1;
        self.last_response_gap = frame;
    }

    /// Why `p` may have had a response the capture did not hold, for its `no_response`: the
    /// bytes lost in gaps reported while it waited, in how many gaps, and the frame of the
    /// last of them.
    pub(super) fn lost_since(&self, p: &Pending) -> Option<LostWhileWaiting> {
        let bytes = self.response_lost - p.response_lost;
        (bytes > 0).then_some(LostWhileWaiting {
            bytes,
            gaps: self.response_gaps - p.response_gaps,
            last_frame: self.last_response_gap,
        })
    }
}

/// What of the response direction was lost while a request waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LostWhileWaiting {
    /// Bytes missing in gaps where whole responses could have been.
    pub(super) bytes: u64,
    /// In how many gaps.
    pub(super) gaps: u64,
    /// The frame at which the last of them was reported.
    pub(super) last_frame: u64,
}

/// A loss of the request direction over a frame boundary, which may have taken whole
/// requests: their correlation ids lie after the last request seen before it and before the
/// first seen after it, and no more of them fit in its bytes than `max_ids`.
#[derive(Debug, Clone, Copy)]
pub(super) struct RequestGap {
    pub(super) lost: RequestLost,
    /// Correlation id of the last request whose head was seen before it.
    pub(super) last_request: Option<i32>,
    /// Correlation id of the first request whose head was seen after it, once one was.
    pub(super) next_request: Option<i32>,
    /// How many requests its bytes could hold (a request frame is at least 12 bytes).
    pub(super) max_ids: i32,
    /// The correlation id of the last response inferred as answering a request it took, and
    /// that response's frame: responses come in request order, so a later one must have a
    /// greater id.
    pub(super) inferred: Option<(i32, u64)>,
    /// Bytes of it that the requests of the responses inferred for it took at least
    /// ([`crate::kafka::apis::Inferred::min_request_len`]): another must fit in the rest.
    pub(super) claimed: u64,
    /// Bytes its whole requests may have had: its own bytes when nothing was sent after them
    /// (the connection ended: see `Session::unseen`), else no bound (a request whose start
    /// it took may end in the bytes after it, passed over while framing looked for a frame).
    pub(super) room: u64,
    /// For a loss not yet declared: the stream offset of the request direction's missing bytes,
    /// which a packet of the other direction acknowledged before the capture gave them. Such a
    /// loss is forgotten once bytes at that offset come (they were only late), and replaced
    /// when a gap is declared there.
    pub(super) unseen_from: Option<u64>,
}

impl RequestGap {
    /// Whether a request of `len` bytes at least fits in what this gap's inferred responses
    /// left of its bytes.
    pub(super) fn fits(&self, len: u64) -> bool {
        self.claimed.saturating_add(len) <= self.room
    }

    /// Whether a response with correlation id `corr` may answer a request this gap took.
    pub(super) fn may_hold(&self, corr: i32) -> bool {
        corr >= 0
            && self.last_request.is_none_or(|l| {
                let d = corr.wrapping_sub(l);
                d >= 1 && d <= self.max_ids
            })
            && self.next_request.is_none_or(|n| corr.wrapping_sub(n) < 0)
    }
}

/// Most request-direction losses remembered per connection for the responses they may have
/// orphaned.
pub(super) const MAX_REQUEST_GAPS: usize = 8;

/// The record of a frame cut short by a gap and decoded in part, held until the frame's end
/// passes (see `Correlation::partial`).
#[derive(Debug)]
pub(super) struct PartialHeld {
    /// The record's message (`truncated`).
    pub(super) message: Box<KafkaMessage>,
    /// For a response: its request.
    pub(super) request: Option<Pending>,
    /// Whether the capture's snapshot length cut the bytes (the packets carried them).
    pub(super) cut: bool,
}

/// Where a frame decoded in part was cut, which says when its record is written and what
/// reports its loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PartialAt {
    /// Inside it: the rest of it passes as a damaged skipped frame, whose end writes the
    /// record and its `frame_lost`.
    Skipped,
    /// A gap took its end too: written now, with a `frame_lost`.
    GapEnd,
    /// Its direction ended inside it: written now, before its `truncated_frame`.
    StreamEnd,
}

/// A frame in progress, as learned from its head.
#[derive(Debug, Clone, Copy)]
pub(super) struct Current {
    pub(super) api_key: i16,
    pub(super) api_version: i16,
    pub(super) correlation_id: i32,
    /// For a response: its request, if one was pending.
    pub(super) request: Option<Pending>,
    /// Whether `api_key` and `api_version` are known: always for a request, for a response
    /// only when its request was pending (otherwise they are -1 placeholders).
    pub(super) api_known: bool,
    /// For a frame cut short and decoded in part (a `truncated` record was made): how many
    /// of its bytes were captured. A request so decoded is already pending.
    pub(super) partial: Option<u32>,
}

/// A connection's request/response correlation and what framing learns of it: the state the
/// frame handlers of both directions share.
#[derive(Debug)]
pub(super) struct Correlation {
    /// The direction that carries requests.
    pub(super) requests_dir: Direction,
    /// The frame in progress in each direction, as learned from its head.
    pub(super) current: [Option<Current>; 2],
    /// Stream offset of the size prefix of the latest frame whose head each direction's framer
    /// handed over (in the framer's count): where the frame of a record being made begins.
    pub(super) frame_offset: [u64; 2],
    /// The latest losses in the request direction that may have taken whole requests (at most
    /// [`MAX_REQUEST_GAPS`], oldest first); forgotten once a response answers a request seen
    /// after them.
    pub(super) request_gaps: VecDeque<RequestGap>,
    /// Correlation id of the last request whose head was seen.
    pub(super) last_request_head: Option<i32>,
    /// Per direction: why the response being framed made no record, when it makes none
    /// (`Lost` unless it failed to decode).
    pub(super) answering_fate: [ResponseMissing; 2],
    /// Requests waiting for their response.
    pub(super) pending: PendingQueue,
    /// Versions of the decoded APIs' requests seen on this connection: bit `v` of an API's
    /// entry for version `v` (response inference names the version by them).
    pub(super) versions_seen: VersionsSeen,
    /// Whether a Fetch request was seen on the connection (a consumer's or a follower's: see
    /// `Handler::inferable_here`).
    pub(super) fetch_requests: bool,
    /// Correlation id of the latest request known to be real on this connection: one that got
    /// its response, or a WriteTxnMarkers request that decoded. (A frame found by
    /// resynchronisation could be a false one; its correlation id must not vouch for others.)
    pub(super) last_request: Option<i32>,
    /// Responses without a captured request: reported so far, and counted past the cap.
    pub(super) unpaired: Unpaired,
    /// With `Shared::hold_requests`: the records of waiting requests, by their `seq`.
    pub(super) held: std::collections::HashMap<u64, Box<Record>>,
    /// Per direction, the held record of the request whose response is being framed, until
    /// the response's record carries it.
    pub(super) answering: [Option<(u64, Box<Record>)>; 2],
    /// What `held` and `answering` cost, charged to the run's budget.
    pub(super) held_charge: Charge,
    /// Per direction: the record of a frame cut short by a gap and decoded in part, held until
    /// the frame's end passes (`FrameHandler::on_skipped`), so that it is written at the
    /// frame's last packet, with the anomaly of its loss, as a whole frame's would be; and
    /// whether a snapshot-length cut (not a gap) took the bytes. Charged to `held_charge`.
    pub(super) partial: [Option<PartialHeld>; 2],
    /// Bit [`Holding::index`] set once a `memory_limit` anomaly of that holding was reported
    /// on this connection.
    pub(super) memory_reported: u8,
    /// Per direction: the frame being skipped was refused for the memory budget (its
    /// `memory_limit` anomaly is written; no `frame_lost` follows).
    pub(super) refused: [bool; 2],
    /// Per direction: the frame being walked as it streams by ([`super::walking`]).
    pub(super) walks: [Option<Box<super::walking::Walking>>; 2],
    /// What the waiting requests of an API whose response answers them item by item asked
    /// ([`crate::kafka::apis::Decoder::answers`]), by their `seq`: at most [`MAX_ASKED`] (those
    /// of requests no longer waiting dropped first; when all still wait, a new request is not
    /// remembered, and its response not checked), its room charged to `held_charge`.
    pub(super) asked: Vec<(u64, Answers)>,
}

/// Most requests of [`Correlation::asked`] remembered per connection.
pub(super) const MAX_ASKED: usize = 64;

/// Versions of each decoded API's requests seen (on a connection, or in the whole run), as
/// bit sets (bit `v` for version `v`; decoders know versions below 32).
#[derive(Debug, Default, Clone)]
pub struct VersionsSeen(Vec<(i16, u32)>);

impl VersionsSeen {
    /// Notes a request of `api_key` at `version`.
    pub fn add(&mut self, api_key: i16, version: i16) {
        let bit = 1u32.checked_shl(version as u32).unwrap_or(0);
        match self.0.iter_mut().find(|(k, _)| *k == api_key) {
            Some((_, bits)) => *bits |= bit,
            None => self.0.push((api_key, bit)),
        }
    }

    /// The versions of `api_key` seen, bit `v` for version `v`.
    pub fn of(&self, api_key: i16) -> u32 {
        self.0
            .iter()
            .find(|(k, _)| *k == api_key)
            .map_or(0, |(_, bits)| *bits)
    }
}

/// Responses without a captured request on one connection.
#[derive(Debug, Default)]
pub(super) struct Unpaired {
    /// Reported one by one so far.
    pub(super) reported: u32,
    /// Counted, not reported, past [`MAX_UNPAIRED_REPORTS_PER_CONNECTION`].
    pub(super) more: u64,
    /// Their bytes.
    pub(super) more_bytes: u64,
}

/// Whether lost frames and unanswered requests of `api_key` at `version` are worth an
/// anomaly: those of the APIs this run decodes (see [`apis::Decoder::keeps`]: the selected
/// APIs that have a decoder, at a version it knows, or any version for one shown by default).
pub(super) fn watched(api_key: i16, version: i16, selection: &apis::ApiSelection) -> bool {
    apis::decoder(api_key).is_some_and(|d| d.keeps(selection, version))
}

/// The APIs whose responses may be inferred without their request, e.g. `"WriteTxnMarkers"`.
pub(super) fn inferable() -> String {
    let names: Vec<&str> = apis::all()
        .filter(|d| d.infer.is_some())
        .map(|d| name_of(d.api_key))
        .collect();
    names.join(" or ")
}

/// The API's name as Kafka spells it, or `"unknown API"`.
pub(super) fn name_of(api_key: i16) -> &'static str {
    api::api_name(api_key).unwrap_or("unknown API")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(correlation_id: i32, frame: u64, response_lost: u64) -> Pending {
        Pending {
            correlation_id,
            api_key: 27,
            api_version: 1,
            frame,
            ts: Timestamp::default(),
            not_decoded: false,
            response_lost,
            response_gaps: 0,
            seq: 0,
            time_known: true,
        }
    }

    #[test]
    fn pending_queue_counts_repeated_correlation_ids() {
        let mut q = PendingQueue::new(&Memory::new(1 << 30));
        q.push_back(pending(5, 1, 0));
        q.push_back(pending(6, 2, 0));
        q.push_back(pending(5, 3, 0));
        assert_eq!(
            (q.len(), q.position(6), q.position(5)),
            (3, Some(1), Some(0))
        );
        assert_eq!(q.pop_front().map(|p| p.frame), Some(1));
        // The second request with id 5 still waits.
        assert!(q.contains(5));
        assert_eq!(q.position(5), Some(1));
        assert_eq!(q.pop_front().map(|p| p.frame), Some(2));
        assert_eq!(q.pop_front().map(|p| p.frame), Some(3));
        assert!(!q.contains(5) && !q.contains(6) && q.ids.is_empty());
        assert_eq!(q.position(7), None);
    }

    /// What the queue charges depends on what it holds, not on the seed its index hashed
    /// with (drawn per queue): 16 queues doing the same pushes and pops charge the same at
    /// every step (the index's capacity after removals varies with the seed; it used to be
    /// charged, and runs under a tight --memory-limit gave up different connections).
    #[test]
    fn the_charge_does_not_depend_on_the_hash_seed() {
        let memory = Memory::new(1 << 30);
        let mut queues: Vec<PendingQueue> = (0..16).map(|_| PendingQueue::new(&memory)).collect();
        let mut id = 0i32;
        for round in 0..3_000u64 {
            // Up to about 1,500 waiting, then as many answered as asked.
            let (push, pop) = if round < 1_500 { (2, 1) } else { (3, 3) };
            for q in &mut queues {
                for k in 0..push {
                    assert!(q.make_room());
                    q.push_back(pending(id.wrapping_add(k * 7919), round, 0));
                }
                for _ in 0..pop {
                    q.pop_front();
                }
            }
            id = id.wrapping_add(104_729);
            let charges: Vec<usize> = queues.iter().map(|q| q.charge.bytes()).collect();
            assert!(
                charges.iter().all(|&c| c == charges[0]),
                "round {round}: {charges:?}"
            );
        }
    }

    #[test]
    fn losses_are_counted_from_when_a_request_was_queued() {
        let mut q = PendingQueue::new(&Memory::new(1 << 30));
        q.response_gap(10, 100);
        let mut p = pending(1, 11, q.response_lost);
        p.response_gaps = q.response_gaps;
        assert_eq!(q.lost_since(&p), None);
        q.response_gap(20, 30);
        q.response_gap(25, 5);
        assert_eq!(
            q.lost_since(&p),
            Some(LostWhileWaiting {
                bytes: 35,
                gaps: 2,
                last_frame: 25
            })
        );
    }

    #[test]
    fn versions_seen_per_api() {
        let mut v = VersionsSeen::default();
        v.add(27, 2);
        v.add(27, 0);
        v.add(26, 5);
        v.add(26, 40); // past the bit set: ignored, no panic
        v.add(26, -1);
        assert_eq!((v.of(27), v.of(26), v.of(0)), (0b101, 1 << 5, 0));
    }

    #[test]
    fn which_apis_are_watched() {
        let default = apis::ApiSelection::default();
        let all = apis::ApiSelection::new(true, &[]);
        let end_txn = apis::ApiSelection::new(false, &[26]);
        assert!(watched(27, 1, &default) && watched(27, 7, &default));
        assert!(!watched(26, 3, &default)); // decoded only with --all-apis or --api
        assert!(watched(26, 3, &all) && !watched(26, 6, &all));
        assert!(watched(26, 3, &end_txn) && !watched(27, 1, &end_txn));
        assert!(watched(0, 9, &all) && !watched(0, 2, &all)); // Produce v3-13 only
        assert!(!watched(2, 1, &all)); // ListOffsets is only framed
        assert_eq!(inferable(), "WriteTxnMarkers");
        assert_eq!((name_of(26), name_of(-5)), ("EndTxn", "unknown API"));
    }
}
