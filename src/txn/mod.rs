//! The transaction view (`--transactions`): joins the transaction messages of every
//! connection of a capture into one [`TransactionRecord`] per Kafka transaction.
//!
//! Input: the Kafka stage's records as they come out (requests as they complete, responses
//! carrying their request, `crate::Config::hold_requests`), decoded by the API decoders:
//! InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn,
//! WriteTxnMarkers, Produce (record batch headers), FindCoordinator and Metadata (names of
//! brokers, topic ids, partition leaders). Output: transaction records, each as soon as the
//! transaction is finished, the rest at the end of the capture.
//!
//! How messages are joined (the flow of `../shared/kafka/transactions.md`, Kafka's
//! `TransactionCoordinator` and KIP-890):
//! - a transaction is a producer id and epoch from its first message (AddPartitionsToTxn,
//!   AddOffsetsToTxn, TxnOffsetCommit, a transactional Produce batch) to its end; under
//!   transaction version 1 one epoch serves many transactions one after another, so a
//!   message after an end begins the next one;
//! - EndTxn ends it as the client asked; WriteTxnMarkers markers of its producer id with its
//!   epoch, or the next one (transaction version 2 and coordinator aborts bump it), give the
//!   coordinator's result per partition; markers with no EndTxn are the coordinator's own
//!   abort: `fenced` when an InitProducerId for its transactional id came while it was open,
//!   `timeout` when it was open past its `transaction_timeout_ms`;
//! - it is finished when its end is known and every partition has its marker answered or is
//!   led by its coordinator (marked without a message), or when its producer begins again
//!   (an InitProducerId, the coordinator answers only once the markers are written), or
//!   [`LINGER_SECS`] of capture time after its last message, or at the capture's end.
//!
//! State is bounded: [`MAX_OPEN`] transactions at once (past it the least recently active is
//! given out as it stands), [`MAX_PARTITIONS`] partitions, [`MAX_FRAMES`] frames and
//! [`MAX_ERRORS`] errors per transaction, [`MAX_REMEMBERED`] producers, topic ids and
//! partition leaders.

pub mod record;

use crate::kafka::api::ErrorCode;
use crate::kafka::apis::Body;
use crate::kafka::event::{Event, KafkaMessage, MessageKind, Record};
use crate::memory::{vec_cost, Charge, Holding, Memory};
use crate::vocab::{Anomaly, AnomalyKind, Endpoint, Location, Timestamp, TxnRef};
pub use record::*;
use std::collections::HashMap as StdHashMap;
use std::collections::HashSet as StdHashSet;

/// The view's maps and sets, hashed with foldhash (seeded per process): std's SipHash was
/// 7% of a `--transactions` run on a busy capture.
type HashMap<K, V> = StdHashMap<K, V, foldhash::fast::RandomState>;
type HashSet<K> = StdHashSet<K, foldhash::fast::RandomState>;
use std::sync::Arc;

/// The API keys the view reads (decoded under `--transactions`): Produce, Fetch, Metadata,
/// FindCoordinator, InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
/// WriteTxnMarkers, TxnOffsetCommit.
pub const APIS: [i16; 10] = [0, 1, 3, 10, 22, 24, 25, 26, 27, 28];

/// Most transactions followed at once.
pub const MAX_OPEN: usize = 10_000;
/// Most partitions listed per transaction; more are counted in `partitions_not_listed`.
pub const MAX_PARTITIONS: usize = 1_000;
/// Most frame numbers listed per transaction; more are counted in `frames_not_listed`.
pub const MAX_FRAMES: usize = 1_000;

/// Most packet frame numbers a transaction keeps for `--write-pcap` (128 KiB), each once: past
/// them its later messages' packets are not written (their own frames are, and standard error
/// says how many were not).
pub const MAX_PACKETS: usize = 16_384;
/// Most packet frame numbers kept of a producer's InitProducerId exchange for `--write-pcap`.
const MAX_INIT_PACKETS: usize = 64;
/// EndTxn errors after which the client asks again (Kafka's `TransactionManager`):
/// REQUEST_TIMED_OUT, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
/// NOT_COORDINATOR, CONCURRENT_TRANSACTIONS.
const RETRIABLE_END: [i16; 5] = [7, 14, 15, 16, 51];

/// Errors that refuse a transactional message for good: INVALID_PRODUCER_EPOCH,
/// INVALID_TXN_STATE, INVALID_PRODUCER_ID_MAPPING, TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
/// PRODUCER_FENCED. A transaction whose only message got one of them is dropped (a late
/// Produce after the end, a fenced zombie's AddPartitionsToTxn).
const REFUSED: [i16; 5] = [47, 48, 49, 53, 90];

/// Longest topic name kept whole (Kafka's limit: 249 characters).
pub const MAX_NAME: usize = 249;

/// Most consumer groups listed per transaction (`offsets`).
pub const MAX_GROUPS: usize = 100;
/// Most errors listed per transaction.
pub const MAX_ERRORS: usize = 100;
/// Most producers, topic ids, brokers and partition leaders remembered.
pub const MAX_REMEMBERED: usize = 100_000;
/// Records between two updates of the memory charge (besides one per second of capture
/// time); past 1,024 producers and open transactions followed, a sixteenth of their number.
pub const ACCOUNT_EVERY: u32 = 64;

/// Seconds of capture time after its last message that an ended transaction waits for more
/// markers before it is given out; also how long past its timeout an open transaction may
/// stay open before it is called hanging (Kafka's coordinator looks for timed-out
/// transactions every 10 s by default:
/// `transaction.abort.timed.out.transaction.cleanup.interval.ms`).
pub const LINGER_SECS: i64 = 10;

/// Records past a leap in capture time before the view sweeps at the new time (see
/// [`TxnView::observe`]): a quiet spell is followed by many, one exchange dated far ahead by a
/// few.
pub const LEAP_RECORDS: u32 = 8;

/// Most transactions written that the view remembers where it wrote (256: 6 KiB).
pub const RECENT_WRITTEN: usize = 256;

/// Most `refused_request` verdicts held to be written after the records of the transactions
/// they name (64 in all); later ones are written at once.
pub const MAX_HELD_VERDICTS: usize = 64;

/// About what one partition of a transaction holds, in bytes (counted as a message joins it,
/// before it is held): its entry in the list, its marker's time, its place in the index.
pub const PARTITION_COST: usize = std::mem::size_of::<TxnPartition>() + 64;

/// `serde`'s `skip_serializing_if` for counts.
pub fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `serde`'s `skip_serializing_if` for flags shown only when set.
pub fn is_false(b: &bool) -> bool {
    !*b
}

/// Where a transaction is in its life, as seen so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Begun, no end seen.
    Open,
    /// Its end was asked for (EndTxn) or markers for it were seen.
    Ending,
}

/// A transaction being followed.
#[derive(Debug)]
struct Txn {
    /// Order of creation, for giving out the rest at the end in order.
    seq: u64,
    state: State,
    t: Transaction,
    /// Its last message.
    last: Moment,
    /// Whether any of its client's messages (not markers) was seen.
    client_seen: bool,
    /// Whether a response accepted any of its messages (error NONE).
    accepted: bool,
    /// The TCP stream and client end of its last message to its coordinator
    /// (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn), where its EndTxn would go.
    client_stream: Option<(u64, Endpoint)>,
    /// The result of its markers, once seen.
    marker_result: Option<&'static str>,
    /// The frame of its EndTxn request.
    end_request_frame: Option<u64>,
    /// Frames of the WriteTxnMarkers requests that carried its markers (the last few).
    marker_requests: Vec<u64>,
    /// The first marker request's moment of each partition, aligned with `t.partitions`.
    marker_sent: Vec<Option<Moment>>,
    /// Of `t.partitions_not_listed`, those whose topic the memory budget had not kept a name
    /// for (the others are past [`MAX_PARTITIONS`]).
    unnamed: u64,
    /// Its named partitions' places in `t.partitions`, by topic name and partition, once it
    /// has more than [`INDEX_FROM`] (a search of the list per partition joined made a marker
    /// of 1,000 partitions cost a million comparisons).
    index: Option<HashMap<Arc<str>, HashMap<i32, u32>>>,
    /// The first admin's ABORT request for partitions of this commit whose COMMIT marker
    /// was never written (a partial commit), with the client id that sent it.
    abort_after_commit: Option<(Moment, Option<String>)>,
    /// How many of `t.packets` were sorted and deduplicated when last they were.
    packets_sorted: usize,
    /// The frame of the last message noted (one message may be noted several times: once
    /// for each of its partitions' errors, say).
    touched_frame: u64,
}

/// A producer id, with what the capture told of it.
#[derive(Debug, Default)]
struct Producer {
    transactional_id: Option<String>,
    client_id: Option<String>,
    timeout_ms: Option<i32>,
    coordinator: Option<Endpoint>,
    /// The epoch at which the capture saw a transaction of it may begin: its InitProducerId's,
    /// or the one after its last end.
    /// Under transaction version 2 the coordinator bumps the epoch at every end (KIP-890):
    /// the one after an end is known from the EndTxn request (v5+: its epoch + 1) or from the
    /// markers (they carry it) before the response says it, which may be lost.
    known_start: Option<i16>,
    /// The last InitProducerId request for its transactional id.
    init_requested: Option<Moment>,
    /// The TCP stream and client end of its last accepted InitProducerId: the connection to
    /// its coordinator, where its transactions' EndTxn go unless a message says otherwise.
    client_stream: Option<(u64, Endpoint)>,
    /// The epoch its last accepted InitProducerId gave, and the frame of that request: a
    /// message of an older epoch captured before it, read after it (a loss held it back), was
    /// of a transaction already over.
    init: Option<(i16, u64)>,
    /// With `--write-pcap`: the packets of that InitProducerId's request and response (at
    /// most [`MAX_INIT_PACKETS`]), written with each of its transactions.
    init_packets: Vec<u64>,
    /// With `--write-pcap`: the packets of the InitProducerId exchange of `init_requested`
    /// (its request, and the error responses to retries of it, CONCURRENT_TRANSACTIONS; at
    /// most [`MAX_INIT_PACKETS`]), written with the transaction it fenced.
    fence_packets: Vec<u64>,
    /// Its transactions being followed, oldest first.
    txns: Vec<Txn>,
    /// The last of its transactions given out: a message of its epoch captured before its
    /// end, which a loss held back till after it was given out, was that transaction's, not
    /// a new one's. (Frame numbers, not times: a few bytes a producer, of which thousands
    /// may be remembered.)
    last_given: Option<Given>,
}

/// What the view gives out.
#[derive(Debug)]
pub enum TxnOut {
    /// A transaction, finished or given out.
    Transaction(Box<TransactionRecord>),
    /// A verdict on a transaction (`hanging_transaction`, `marker_failed`,
    /// `stale_coordinator_epoch`, `fenced_producer`, `lso_stuck`) or `transaction_limit`: an
    /// anomaly record, its `transaction` naming the transaction it concerns.
    Anomaly(Record),
}

impl TxnOut {
    /// An anomaly record of the view at `loc`.
    fn anomaly(loc: Location, a: Anomaly) -> Self {
        TxnOut::Anomaly(Record {
            loc,
            event: Event::Anomaly(Box::new(a)),
        })
    }
}

impl Producer {
    /// Adds `packets` to [`Producer::fence_packets`], as many as [`MAX_INIT_PACKETS`] hold.
    fn note_fence_packets(&mut self, packets: &[u64]) {
        let room = MAX_INIT_PACKETS.saturating_sub(self.fence_packets.len());
        self.fence_packets
            .extend(packets.iter().take(room).copied());
    }

    /// Whether a message at `epoch` sent at `at` is of a transaction over before the
    /// producer's last InitProducerId (sent after it, giving a newer epoch): read late.
    fn superseded(&self, epoch: i16, at: Moment) -> bool {
        self.init
            .is_some_and(|(e, sent)| epoch < e && at.frame < sent)
    }

    /// Whether a client's message at `epoch` sent at `at`, with no transaction followed to
    /// join, belongs to one given out already: sent before the end of the last given out, of
    /// its epoch, or superseded.
    fn late_message(&self, epoch: i16, at: Moment) -> bool {
        self.last_given
            .is_some_and(|g| g.epoch == epoch && at.frame <= g.end)
            || self.superseded(epoch, at)
    }

    /// Whether markers at `epoch` sent at `at`, with no transaction followed to join, belong to
    /// one given out already: sent after the end of the last given out (of their epoch, or the
    /// one before under transaction version 2's bump) and before it was given out, or
    /// superseded.
    fn late_markers(&self, epoch: i16, at: Moment) -> bool {
        self.last_given.is_some_and(|g| {
            (g.epoch == epoch || i32::from(g.epoch) + 1 == i32::from(epoch))
                && g.end <= at.frame
                && at.frame < g.at()
        }) || self.superseded(epoch, at)
    }
}

/// A transaction given out, as its producer remembers it ([`Producer::last_given`]).
#[derive(Debug, Clone, Copy)]
struct Given {
    epoch: i16,
    /// Whether its client's EndTxn asked to commit (`true`) or to abort, when the coordinator
    /// accepted it (`NONE`).
    accepted: Option<bool>,
    /// The TCP stream index of that EndTxn's connection, cut to 32 bits (`u32::MAX`: not
    /// known): a retry of it comes on another connection.
    end_stream: u32,
    /// The frame of its end: its EndTxn or first markers, the earlier.
    end: u64,
    /// How many frames after `end` the message being read when it was given out came (at
    /// most `u32::MAX`): [`Given::at`].
    given_after: u32,
    /// The result of its markers (`true`: COMMIT; `None`: no marker seen), their producer
    /// epoch and the newest coordinator epoch they carried (`i32::MAX`: not known).
    marker: Option<bool>,
    marker_epoch: i16,
    marker_coordinator_epoch: i32,
    /// Its partitions as 32 bits, each (topic, partition) setting one ([`partition_bit`]);
    /// all set when some were not listed.
    partitions: u32,
}

impl Given {
    /// The frame of the message being read when it was given out.
    fn at(&self) -> u64 {
        self.end.saturating_add(u64::from(self.given_after))
    }

    /// Whether markers of `result` at producer epoch `epoch` for `topics` are this
    /// transaction's sent again by a newer coordinator: a coordinator that takes over a
    /// transaction log re-sends the markers of each transaction it finds prepared (Kafka's
    /// `TransactionStateManager` loading PrepareCommit or PrepareAbort), those its predecessor
    /// wrote included, until each is written. `coordinator_epoch` is the markers' when the
    /// caller found every partition they name written before by this producer id at an older
    /// coordinator epoch, and they are not an admin client's (`None` otherwise: no re-send).
    /// Same result and producer epoch, a newer coordinator epoch than this transaction's
    /// markers, and only its partitions (as far as [`Given::partitions`] tells; under
    /// transaction version 1 the producer's next transaction shares the epoch: one whose every
    /// message the capture lost but these markers, ended by a new coordinator on partitions
    /// of this one, is taken for it).
    fn resent_by(
        &self,
        result: &str,
        epoch: i16,
        coordinator_epoch: Option<i32>,
        topics: &[crate::kafka::apis::write_txn_markers::WritableTxnMarkerTopic],
    ) -> bool {
        self.marker == Some(result == "COMMIT")
            && self.marker_epoch == epoch
            && coordinator_epoch.is_some_and(|e| e > self.marker_coordinator_epoch)
            && topics.iter().all(|t| {
                t.partition_indexes.iter().all(|&p| {
                    let bit = partition_bit(&kept_name(&t.name), p);
                    self.partitions & bit == bit
                })
            })
    }
}

/// One of 32 bits standing for `(topic, partition)` ([`Given::partitions`]): the top five bits
/// of its mixed hash ([`crate::kafka::apis::Answers::item`]; unmixed, FNV's low bits made
/// partitions 32 apart share one).
fn partition_bit(topic: &str, partition: i32) -> u32 {
    1 << (crate::kafka::apis::Answers::item(topic, partition) >> 59)
}

/// What read_committed Fetch responses showed of one partition's last stable offset.
#[derive(Debug)]
struct StableOffset {
    lso: i64,
    /// The high watermark when the last stable offset was first seen at `lso`.
    high_watermark: i64,
    since: Moment,
    /// The last response that gave it (at `lso`): a marker due before it did not come.
    seen: Moment,
    /// The broker whose Fetch response gave it then.
    broker: Option<Endpoint>,
    reported: bool,
    /// How long, in microseconds, it may stay before `lso_stuck` is said (see
    /// [`TxnView::stable_offset`]), once the stall is long enough to ask.
    limit_us: Option<i64>,
    /// Transactions with batches here up to an offset, waiting for the offset to pass it
    /// (then their partition's `stable_passed` is set): the first frame to pass it, not
    /// only the last change before the view judges. At most [`WAITING`]; when full, the one
    /// waiting for the lowest offset gives way (its transaction likely ended, markers seen).
    waiting: [Option<Waiting>; WAITING],
    /// The first offset the capture gave for the partition, when, and from which broker: the
    /// first to pass a transaction's batches written before it, if it does.
    first: (i64, Moment, Option<Endpoint>),
}

/// How many transactions a partition's [`StableOffset`] watches for at once.
const WAITING: usize = 4;

/// A transaction waiting for a partition's last stable offset to pass its last batch there.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    /// Its last batch's last offset there.
    last: i64,
    producer_id: i64,
    /// Its [`Txn::seq`].
    seq: u64,
}

/// A partition a transaction already written out left holding its last stable offset: data
/// from its first batch there on, and no marker seen written for it (none came, or one was
/// refused for good or left out of its response).
#[derive(Debug)]
struct Unsettled {
    /// The offset of the transaction's first batch on the partition: the last stable offset
    /// it holds the partition at.
    first_offset: i64,
    /// Its producer id and epoch.
    producer_id: i64,
    producer_epoch: i16,
    /// Its transactional id, shared ([`TxnView::intern`]): an id may be 32,767 bytes long
    /// and a transaction may leave a thousand partitions.
    transactional_id: Option<Arc<str>>,
    /// The frame of its record (when it was written out).
    written_frame: u64,
    /// The frame of its first message ([`TxnRef::begin_frame`]).
    begin_frame: u64,
}

impl Unsettled {
    fn txn(&self) -> TxnRef {
        TxnRef {
            transactional_id: self.transactional_id.as_deref().map(str::to_string),
            producer_id: self.producer_id,
            producer_epoch: self.producer_epoch,
            begin_frame: Some(self.begin_frame),
        }
    }
}

/// Most transactions written out remembered as leaving one partition unsettled
/// ([`TxnView::unsettled`]): the one holding it is among the latest.
const UNSETTLED_PER_PARTITION: usize = 4;

/// The transaction view: feed it every record with [`TxnView::observe`], end it with
/// [`TxnView::finish`].
#[derive(Debug, Default)]
pub struct TxnView {
    producers: HashMap<i64, Producer>,
    /// Transactional id to its latest producer id.
    ids: HashMap<String, i64>,
    /// Topic id to name (Metadata responses).
    topic_names: HashMap<Arc<str>, Arc<str>>,
    /// Every topic name and id the view keeps, each once (`Arc`s shared by the maps and the
    /// transactions); their bytes are charged as they are added.
    interned: HashSet<Arc<str>>,
    /// Bytes of `interned` and of the remembered maps' entries, charged as they grow.
    remembered_bytes: usize,
    /// The partition count of `__consumer_offsets`, when a Metadata response listed it.
    offsets_partitions: Option<i32>,
    /// Transactions begun and then dropped: their only message was refused (a late Produce
    /// answered INVALID_TXN_STATE, a fenced zombie's AddPartitionsToTxn).
    discarded: u64,
    /// The `refused_request` verdicts of the message being read, written after everything
    /// else it gives out (the transaction it was meant for may be written by the same
    /// message, and a verdict follows its transaction).
    deferred: Vec<Record>,
    /// `refused_request` verdicts of requests of a transaction the view still held (its
    /// producer id and `seq`), at most [`MAX_HELD_VERDICTS`] in all: written after its
    /// record.
    held_verdicts: Vec<(i64, u64, Record)>,
    /// The transactions written last (producer id, epoch, frame of the record; at most
    /// [`RECENT_WRITTEN`]): where a `refused_request` verdict's transaction went.
    recent_written: std::collections::VecDeque<(i64, i16, u64)>,
    /// (host, port) to node id (Metadata and FindCoordinator responses; an IP address as
    /// `IpAddr` writes it), and, where those name brokers by host name, the addresses of
    /// accepted requests' brokers ([`TxnView::learn_node`]).
    nodes: HashMap<(String, u16), i32>,
    /// Whether a Metadata or FindCoordinator response named a broker by a host name, not an
    /// IP address (Kubernetes, managed clusters): then brokers' addresses are learned from the
    /// requests they accepted.
    named_brokers: bool,
    /// Transactional id to its coordinator's node id, from FindCoordinator exchanges of key
    /// type 1 (TRANSACTION).
    coordinator_of: HashMap<String, i32>,
    /// Node id to its `host:port` (`[host]:port` for an IPv6 address), the last that
    /// Metadata or FindCoordinator gave.
    node_addresses: HashMap<i32, Arc<str>>,
    /// (topic, partition) to its leader's node id (Metadata responses).
    leaders: HashMap<(Arc<str>, i32), i32>,
    /// (producer id, topic, partition) to the newest coordinator epoch its markers carried
    /// there (a partition leader keeps it per producer: Kafka's
    /// `ProducerStateEntry.coordinatorEpoch`, in each partition's log).
    coordinator_epochs: HashMap<(i64, Arc<str>, i32), i32>,
    /// (topic, partition) to what read_committed Fetch responses showed of its LSO.
    stable_offsets: HashMap<(Arc<str>, i32), StableOffset>,
    /// (topic, partition) to the transactions written out that left it unsettled (at most
    /// [`UNSETTLED_PER_PARTITION`], the latest; those a read_committed Fetch response showed
    /// the last stable offset past are dropped): the holder `lso_stuck` names when no
    /// transaction still followed holds the partition. Kept only once read_committed Fetch
    /// responses were seen (nothing else reads it).
    unsettled: HashMap<(Arc<str>, i32), Vec<Unsettled>>,
    /// (TCP stream index, sender) to the last loss of that sender's bytes (a `gap` anomaly,
    /// the snapshot length's cuts included): a transaction whose client lost bytes toward
    /// its coordinator after its last message may have lost its end there.
    client_losses: HashMap<(u64, Endpoint), Moment>,
    /// Producer ids a `producer_id_conflict` was reported for.
    conflicts_reported: std::collections::HashSet<i64>,
    /// The last frame the memory budget passed over undecoded, or a connection's bytes it did
    /// not hold (a `memory_limit` anomaly of the Kafka or capture stages): under the budget a
    /// connection is finished and resumed under the same index, so which client's bytes
    /// went is not known; any transaction whose last message came before it may have lost
    /// its end.
    budget_loss: Option<Moment>,
    /// The largest `transaction_timeout_ms` an InitProducerId asked for.
    max_timeout_ms: Option<i32>,
    /// The smallest `transaction_timeout_ms` an InitProducerId asked for.
    min_timeout_ms: Option<i32>,
    /// The senders of the WriteTxnMarkers requests seen (a coordinator's; an admin client's
    /// own, [`is_admin_client`], do not count): their addresses, and the nodes of their client
    /// ids (`broker-N-txn-marker-sender`), at most [`MAX_MARKER_SENDERS`] each. A transaction
    /// whose coordinator is among them was captured where its markers show; on a client's
    /// host, or another broker's, they do not.
    marker_senders: (StdHashSet<std::net::IpAddr>, StdHashSet<i32>),
    /// Transactions that ended (EndTxn or markers), by the capture second of their last
    /// message when noted: [`TxnView::sweep`] looks only at those whose linger has passed.
    linger: std::collections::BTreeSet<(i64, u64, i64)>,
    /// Transactions given out early for [`MAX_OPEN`].
    given_out_early: u64,
    seq: u64,
    open: usize,
    /// The next capture second at which ended transactions are looked over.
    next_sweep: i64,
    /// After a record more than [`LINGER_SECS`] ahead of the one before: the second before
    /// the leap, and how many records have come past it since (no sweep till
    /// [`LEAP_RECORDS`]).
    leap: Option<(i64, u32)>,
    last: Option<Location>,
    /// The message being read.
    step: Option<Step>,
    /// The packets of the message being read (with `--write-pcap`; empty otherwise).
    packets: Vec<u64>,
    /// What the view holds, charged to the run's memory budget (`None` for a view made with
    /// [`TxnView::default`]).
    charge: Option<Charge>,
    /// Records seen since the charge was last brought up to date.
    since_account: u32,
    /// About how many bytes the view grew by since then ([`TxnView::grew`]).
    growth: usize,
    /// Room, in bytes, its share had left at the last count.
    headroom: usize,
    /// Rounds of giving out transactions for the memory budget.
    memory_rounds: u64,
    /// The bounds reached so far, reported once each (`transaction_limit`).
    limits_reported: [bool; 2],
}

impl TxnView {
    /// A view with nothing seen, charging what it holds to `memory` (a `Holding::Transactions`
    /// charge, brought up to date every [`ACCOUNT_EVERY`] records and every second of capture
    /// time): when the budget refuses it, the least recently active transactions are written
    /// as they stand until it fits, with a `memory_limit` anomaly.
    pub fn new(memory: &Memory) -> Self {
        TxnView {
            charge: Some(memory.charge(Holding::Transactions)),
            ..TxnView::default()
        }
    }

    /// How many transactions were begun so far (each is written once: when finished, given
    /// out early, or at [`TxnView::finish`]).
    pub fn begun(&self) -> u64 {
        self.seq - self.discarded
    }

    /// Takes one record of the Kafka stage; transactions it finishes go to `out`.
    pub fn observe(&mut self, rec: &Record, out: &mut dyn FnMut(TxnOut)) {
        let k = match &rec.event {
            // A body read with bytes left after its schema's last field: a damaged length
            // reads the same way, every field after it from the wrong bytes (one byte of an
            // EndTxn request's transactional_id length made up a producer id and its
            // transaction), so the view leaves it out, as it left the undecoded frame out.
            Event::Kafka(k) if !k.body_trusted() => return,
            Event::Kafka(k) => k,
            Event::Anomaly(a) => {
                // Bytes the capture lacks, or that the memory budget passed over (a frame not
                // decoded, a connection's bytes not held): either may have taken an EndTxn or
                // a marker, and the view must not judge as if it had seen them all. (Packets
                // `--write-pcap` forgot lose nothing decoded.)
                let over_budget = a.kind == AnomalyKind::MemoryLimit
                    && a.layer != crate::vocab::Layer::Transaction
                    && !a.message.starts_with("--write-pcap");
                if a.kind == AnomalyKind::Gap {
                    self.lost(rec);
                } else if over_budget {
                    self.budget_loss = Some(Moment::of(&rec.loc));
                }
                return;
            }
            _ => return,
        };
        // A WriteTxnMarkers message decoded in part: its markers that say what they mark.
        let rebuilt;
        let k = match &k.body {
            Body::Partial(p) if k.api_key == crate::kafka::apis::write_txn_markers::API_KEY => {
                use crate::kafka::apis::write_txn_markers as wtm;
                let body = match k.message {
                    MessageKind::Request => {
                        Body::WriteTxnMarkersRequest(wtm::request_from_partial(p))
                    }
                    MessageKind::Response => {
                        Body::WriteTxnMarkersResponse(wtm::response_from_partial(p))
                    }
                };
                rebuilt = KafkaMessage {
                    body,
                    ..(**k).clone()
                };
                &rebuilt
            }
            _ => &**k,
        };
        // A record more than the linger ahead of the one before: a quiet spell, or a packet
        // dated far ahead (a clock that jumped, one exchange of a merged capture); only the
        // records after it tell which, so none sweeps till [`LEAP_RECORDS`] have come at or
        // past it (one exchange a year ahead would otherwise give out every transaction
        // waiting for its markers); one back before it ends the wait.
        let now = rec.loc.ts.secs;
        if self
            .last
            .is_some_and(|l| now > l.ts.secs.saturating_add(LINGER_SECS))
        {
            let from = self.last.map_or(now, |l| l.ts.secs);
            self.leap = Some((self.leap.map_or(from, |(f, _)| f), 0));
        }
        let leap = match self.leap {
            Some((from, n)) if now > from.saturating_add(LINGER_SECS) && n < LEAP_RECORDS => {
                self.leap = Some((from, n + 1));
                true
            }
            _ => {
                self.leap = None;
                false
            }
        };
        self.last = Some(rec.loc);
        self.step = Some(step_of(k, Moment::of(&rec.loc)));
        if !(self.packets.is_empty() && k.packets.is_empty()) {
            self.packets.clone_from(&k.packets);
        }
        match k.message {
            MessageKind::Request => self.request(rec, k, out),
            MessageKind::Response => self.response(rec, k, out),
        }
        if self.open > MAX_OPEN {
            self.give_out_oldest(out);
        }
        self.after_message(now, leap, k, out);
        if !self.deferred.is_empty() {
            for v in std::mem::take(&mut self.deferred) {
                out(TxnOut::Anomaly(v));
            }
        }
    }

    /// What follows each message: limits reported, ended transactions swept once per capture
    /// second, the memory charge brought up to date.
    fn after_message(
        &mut self,
        now: i64,
        leap: bool,
        k: &KafkaMessage,
        out: &mut dyn FnMut(TxnOut),
    ) {
        let full = [
            self.producers.len(),
            self.ids.len(),
            self.topic_names.len(),
            self.nodes.len(),
            self.coordinator_of.len(),
            self.leaders.len(),
            self.coordinator_epochs.len(),
            self.stable_offsets.len(),
            self.unsettled.len(),
        ]
        .into_iter()
        .any(|n| n >= MAX_REMEMBERED);
        if full {
            self.limit_reached(
                1,
                format!(
                    "the transaction view remembers at most {MAX_REMEMBERED} producers, \
                     transactional ids, topic ids, brokers, partition leaders, coordinator \
                     epochs, last stable offsets and partitions left unsettled by transactions \
                     written out each: later ones are not remembered (reported once)"
                ),
                None,
                out,
            );
        }
        // Once per capture second; a clock that went back (before the second of the last
        // sweep: one packet dated a year ahead) sweeps again from where it now is, or no
        // transaction would be given out till the capture's end.
        if leap {
            self.since_account += 1;
        } else if now >= self.next_sweep || now.saturating_add(1) < self.next_sweep {
            self.next_sweep = now.saturating_add(1);
            self.sweep(now, out);
            self.account(out);
        } else {
            self.since_account += 1;
            // Counting costs a pass over every producer and transaction followed: past a
            // thousand of them, it is done every sixteenth of their number of messages (the
            // charge then lags by at most about a sixteenth of what is held), so that the
            // passes cost a bounded amount per message, not one per producer (200,000
            // transactions at --memory-limit 1G took 18 s, not 1). A large message may grow
            // the view by much at once.
            let followed = self.producers.len().saturating_add(self.open);
            let every = ACCOUNT_EVERY.max(u32::try_from(followed / 16).unwrap_or(u32::MAX));
            if self.since_account >= every {
                self.account(out);
            } else {
                // A message may grow the view by much at once: its size counts toward the
                // room left (see `grew`).
                self.grew(k.size as usize, out);
            }
        }
    }

    /// Brings the memory charge up to date; when the budget refuses it, writes the least
    /// recently active transactions as they stand until it fits, then forgets what is
    /// remembered of producers, topics and brokers if it still does not.
    fn account(&mut self, out: &mut dyn FnMut(TxnOut)) {
        self.since_account = 0;
        self.growth = 0;
        let Some(limit) = self.charge.as_ref().map(|c| c.memory().limit()) else {
            self.headroom = usize::MAX;
            return;
        };
        // The view keeps to half the budget, so that the connections keep theirs.
        let share = self.charge.as_ref().map_or(limit / 2, share);
        let total = self.held_cost();
        if total <= share && self.charge.as_mut().is_some_and(|c| c.set(total)) {
            self.headroom = share - total;
            return;
        }
        self.memory_rounds += 1;
        let round = self.memory_rounds;
        let held_by_report = self
            .charge
            .as_ref()
            .map_or(0, |c| c.memory().held(Holding::Report));
        // Write the least recently active transactions, as they stand, until the view holds
        // at most a quarter of the budget: one pass, oldest first.
        let mut order: Vec<(i64, u32, u64, i64, usize)> = self
            .producers
            .iter()
            .flat_map(|(pid, p)| {
                p.txns
                    .iter()
                    .map(move |t| (t.last.ts.secs, t.last.ts.nanos, t.seq, *pid, txn_cost(t)))
            })
            .collect();
        order.sort_unstable();
        let target = share / 2;
        let mut now = total;
        let mut given = 0u64;
        for (_, _, seq, pid, cost) in order {
            if now <= target {
                break;
            }
            let Some(mut t) = self.take(pid, seq) else {
                continue;
            };
            t.t.given_up = true;
            self.give(t, None, out);
            now = now.saturating_sub(cost);
            given += 1;
        }
        let mut forgot = false;
        if now > target {
            self.forget();
            forgot = true;
        }
        let now = self.held_cost();
        self.headroom = share.saturating_sub(now);
        if let Some(c) = self.charge.as_mut() {
            c.force(now);
            c.note_given_up();
        }
        if round.is_power_of_two() {
            let a = Anomaly::new(
                AnomalyKind::MemoryLimit,
                format!(
                    "the transaction view reached its share of the memory budget (half of \
                     {}{}): {given} transactions were written as they stood{} (round {round}; \
                     rounds are reported at 1, 2, 4, 8, ...); raise it with --memory-limit",
                    crate::memory::human(limit),
                    match held_by_report {
                        0 => String::new(),
                        n => format!(
                            ", less the {} of the --report page",
                            crate::memory::human(n)
                        ),
                    },
                    if forgot {
                        ", and what was remembered of producers, topics and brokers was forgotten"
                    } else {
                        ""
                    }
                ),
            );
            let loc = self.here();
            out(TxnOut::anomaly(loc, a));
        }
    }

    /// Notes that what the view holds grew by about `bytes` (a message's size, or the
    /// partitions a message joined, at [`PARTITION_COST`] each) and brings the charge up to
    /// date once that passes the room the last count left: between counts, the view can
    /// outgrow its share by at most one message's growth, whatever the count of records (a
    /// WriteTxnMarkers request of 64 KiB naming 15,000 partitions held 7 MB before).
    fn grew(&mut self, bytes: usize, out: &mut dyn FnMut(TxnOut)) {
        self.growth = self.growth.saturating_add(bytes);
        if self.growth > self.headroom {
            self.account(out);
        }
    }

    /// Takes transaction `seq` of `pid` out of those followed, if it still is.
    fn take(&mut self, pid: i64, seq: u64) -> Option<Txn> {
        let p = self.producers.get_mut(&pid)?;
        let i = p.txns.iter().position(|t| t.seq == seq)?;
        self.open = self.open.saturating_sub(1);
        Some(remove_txn(&mut p.txns, i))
    }

    /// Where a record of the view's own goes: at the message being read, without a stream.
    fn here(&self) -> Location {
        self.last.map_or(
            Location {
                ts: Timestamp::default(),
                frame: 0,
                stream: None,
                tunnel: None,
            },
            |l| Location { stream: None, ..l },
        )
    }

    /// What the view holds, in bytes (an estimate): its transactions (structures and
    /// strings), its producers, and the remembered names and entries charged as they came.
    fn held_cost(&self) -> usize {
        let txns: usize = self
            .producers
            .values()
            .flat_map(|p| &p.txns)
            .map(txn_cost)
            .sum();
        let producers: usize = self
            .producers
            .values()
            .map(|p| {
                std::mem::size_of::<Producer>()
                    + 64
                    + vec_cost::<Txn>(p.txns.capacity())
                    + vec_cost::<u64>(p.init_packets.capacity() + p.fence_packets.capacity())
                    + p.transactional_id.as_ref().map_or(0, |s| s.len() + 16)
                    + p.client_id.as_ref().map_or(0, |s| s.len() + 16)
            })
            .sum();
        txns + producers
            + self.remembered_bytes
            + vec_cost::<(i64, i16, u64)>(self.recent_written.capacity())
    }

    /// Forgets what is remembered beside the transactions followed (their names stay, with
    /// the transactions that use them).
    fn forget(&mut self) {
        self.ids = HashMap::default();
        self.topic_names = HashMap::default();
        self.nodes = HashMap::default();
        self.node_addresses = HashMap::default();
        self.coordinator_of = HashMap::default();
        self.leaders = HashMap::default();
        self.coordinator_epochs = HashMap::default();
        self.stable_offsets = HashMap::default();
        self.unsettled = HashMap::default();
        self.client_losses = HashMap::default();
        self.producers.retain(|_, p| !p.txns.is_empty());
        self.producers.shrink_to_fit();
        self.interned.retain(|a| Arc::strong_count(a) > 1);
        self.interned.shrink_to_fit();
        self.remembered_bytes = self
            .interned
            .iter()
            .map(|a| crate::memory::alloc_cost(a.len() + 16) + 32)
            .sum();
    }

    /// Reports a bound reached (`transaction_limit`), once per bound: 0 the partitions of one
    /// transaction, 1 the producers, topics and brokers remembered.
    fn limit_reached(
        &mut self,
        which: usize,
        message: String,
        t: Option<TxnRef>,
        out: &mut dyn FnMut(TxnOut),
    ) {
        if self.limits_reported[which] {
            return;
        }
        self.limits_reported[which] = true;
        let mut a = Anomaly::new(AnomalyKind::TransactionLimit, message);
        a.transaction = t;
        let loc = self.here();
        out(TxnOut::anomaly(loc, a));
    }

    /// Ends the capture: every transaction still followed goes to `out`, in the order they
    /// were first seen.
    pub fn finish(&mut self, at: Location, out: &mut dyn FnMut(TxnOut)) {
        let mut rest: Vec<Txn> = Vec::new();
        let pids: Vec<i64> = self.producers.keys().copied().collect();
        for pid in pids {
            if let Some(p) = self.producers.get_mut(&pid) {
                rest.append(&mut p.txns);
            }
        }
        self.open = 0;
        rest.sort_by_key(|t| t.seq);
        for t in rest {
            self.give(t, Some(at), out);
        }
    }

    fn request(&mut self, rec: &Record, k: &KafkaMessage, out: &mut dyn FnMut(TxnOut)) {
        let at = Moment::of(&rec.loc);
        let broker = rec.loc.stream.map(|(_, _, dst)| dst);
        let client_id = k.client_id.clone().flatten();
        match &k.body {
            Body::InitProducerIdRequest(b) => {
                if let Some(&pid) = b.transactional_id.as_ref().and_then(|t| self.ids.get(t)) {
                    // A producer that names itself (v3+, KIP-360) bumps its own epoch after an
                    // error: that fences nothing.
                    let own = b.producer_id == Some(pid);
                    if let (Some(p), false) = (self.producers.get_mut(&pid), own) {
                        // The first one fences; retries (CONCURRENT_TRANSACTIONS) follow it.
                        if p.init_requested.is_none() {
                            p.fence_packets.clear();
                        }
                        p.init_requested.get_or_insert(at);
                        p.note_fence_packets(&k.packets);
                    }
                }
            }
            Body::AddPartitionsToTxnRequest(b) => {
                let joined: usize = b
                    .topics
                    .iter()
                    .flatten()
                    .map(|t| t.partitions.len())
                    .chain(
                        b.transactions
                            .iter()
                            .flatten()
                            .flat_map(|x| &x.topics)
                            .map(|t| t.partitions.len()),
                    )
                    .sum();
                self.grew(joined.saturating_mul(PARTITION_COST), out);
                if let (Some(tid), Some(pid), Some(epoch), Some(topics)) = (
                    &b.transactional_id,
                    b.producer_id,
                    b.producer_epoch,
                    &b.topics,
                ) {
                    self.client(pid, Some(tid), client_id.as_deref(), broker);
                    let names: Vec<Option<Arc<str>>> =
                        topics.iter().map(|t| self.intern(&t.name)).collect();
                    self.ended_in_loss(pid, epoch, topics, client_end(&rec.loc), at);
                    let Some(txn) = self.data_txn(pid, epoch, at) else {
                        return;
                    };
                    txn.client_seen = true;
                    txn.client_stream = client_end(&rec.loc);
                    // Clients send AddPartitionsToTxn for data only under transaction
                    // version 1 (KIP-890: version 2 adds them implicitly).
                    txn.t.transaction_version.get_or_insert(1);
                    for (t, name) in topics.iter().zip(&names) {
                        for &p in &t.partitions {
                            join(txn, name.as_ref(), None, p, Joined::AddPartitionsToTxn, at);
                        }
                    }
                }
                for tx in b.transactions.iter().flatten() {
                    self.remember_id(&tx.transactional_id, tx.producer_id);
                    let how = if tx.verify_only {
                        Joined::Verify
                    } else {
                        Joined::AddPartitionsToTxn
                    };
                    let names: Vec<Option<Arc<str>>> =
                        tx.topics.iter().map(|t| self.intern(&t.name)).collect();
                    let Some(txn) = self.data_txn(tx.producer_id, tx.producer_epoch, at) else {
                        continue;
                    };
                    for (t, name) in tx.topics.iter().zip(&names) {
                        for &p in &t.partitions {
                            join(txn, name.as_ref(), None, p, how, at);
                        }
                    }
                }
            }
            Body::AddOffsetsToTxnRequest(b) => {
                self.client(
                    b.producer_id,
                    Some(&b.transactional_id),
                    client_id.as_deref(),
                    broker,
                );
                // The group's `__consumer_offsets` partition, as Kafka's group coordinator
                // computes it (`abs(groupId.hashCode) % offsets partitions`), when a Metadata
                // response gave the partition count.
                let offsets_topic = self
                    .offsets_partitions
                    .and_then(|n| Some((self.intern("__consumer_offsets")?, n)));
                let Some(txn) = self.data_txn(b.producer_id, b.producer_epoch, at) else {
                    return;
                };
                txn.client_seen = true;
                txn.client_stream = client_end(&rec.loc);
                if let Some(o) = offsets_of(txn, &b.group_id) {
                    o.add_offsets_frame = Some(at.frame);
                    if let Some((topic, n)) = offsets_topic {
                        let partition = offsets_partition_of(&b.group_id, n);
                        join(txn, Some(&topic), None, partition, Joined::Offsets, at);
                    }
                }
            }
            Body::TxnOffsetCommitRequest(b) => {
                self.remember_id(&b.transactional_id, b.producer_id);
                let names: Vec<Option<Arc<str>>> =
                    b.topics.iter().map(|t| self.intern(&t.name)).collect();
                let Some(txn) = self.data_txn(b.producer_id, b.producer_epoch, at) else {
                    return;
                };
                txn.client_seen = true;
                let Some(o) = offsets_of(txn, &b.group_id) else {
                    return;
                };
                o.commit_frame = Some(at.frame);
                for (t, name) in b.topics.iter().zip(names) {
                    let Some(name) = name else { continue };
                    for p in &t.partitions {
                        if o.positions.len() < MAX_PARTITIONS {
                            o.positions.push(TxnOffsetPosition {
                                topic: name.clone(),
                                partition: p.partition_index,
                                committed_offset: p.committed_offset,
                                error: None,
                            });
                        }
                    }
                }
            }
            Body::ProduceRequest(b) => {
                for t in &b.topic_data {
                    let (name, id) = self.topic(t.name.as_deref(), t.topic_id.as_deref());
                    for pd in &t.partition_data {
                        for h in pd.records.iter().flat_map(|r| &r.batches) {
                            let (Some(pid), Some(epoch), Some(true)) =
                                (h.producer_id, h.producer_epoch, h.is_transactional)
                            else {
                                continue;
                            };
                            if pid < 0 || h.is_control == Some(true) {
                                continue;
                            }
                            if let Some(tid) = &b.transactional_id {
                                self.remember_id(tid, pid);
                            }
                            self.note_client_id(pid, client_id.as_deref());
                            let Some(txn) = self.data_txn(pid, epoch, at) else {
                                continue;
                            };
                            txn.client_seen = true;
                            let i = join(
                                txn,
                                name.as_ref(),
                                id.as_ref(),
                                pd.index,
                                Joined::Implicit,
                                at,
                            );
                            if let Some(p) = i.and_then(|i| txn.t.partitions.get_mut(i)) {
                                // A batch sent again (after NOT_LEADER_OR_FOLLOWER, say)
                                // carries the same base sequence: counted once.
                                let retried = h.base_sequence.is_some()
                                    && p.recent_base_sequences.contains(&h.base_sequence);
                                if !retried {
                                    p.batches += 1;
                                    p.records += h.records_count.map_or(0, |n| n.max(0) as u64);
                                    p.recent_base_sequences.rotate_right(1);
                                    p.recent_base_sequences[0] = h.base_sequence;
                                }
                            }
                        }
                    }
                }
            }
            Body::EndTxnRequest(b) => {
                self.client(
                    b.producer_id,
                    Some(&b.transactional_id),
                    client_id.as_deref(),
                    broker,
                );
                let requested = if b.committed { "commit" } else { "abort" };
                let stream = client_end(&rec.loc).map(|(i, _)| i);
                let Some(txn) =
                    self.end_txn(b.producer_id, b.producer_epoch, requested, stream, at)
                else {
                    return;
                };
                txn.client_seen = true;
                // A retry of an accepted end keeps the connection that got the answer (see
                // `end_txn`).
                if txn.t.end_error.as_deref() != Some("NONE") {
                    txn.client_stream = client_end(&rec.loc);
                }
                let was_open = txn.state == State::Open;
                txn.state = State::Ending;
                // A retry keeps the first request's time; its response answers this one.
                txn.t.end_requested.get_or_insert(at);
                txn.t.requested = Some(requested);
                txn.end_request_frame = Some(at.frame);
                if txn.t.transaction_version.is_none() {
                    txn.t.transaction_version = Some(if k.api_version >= 5 { 2 } else { 1 });
                }
                let seq = txn.seq;
                let next = (txn.t.transaction_version == Some(2))
                    .then(|| b.producer_epoch.checked_add(1))
                    .flatten();
                if let (Some(next), Some(p)) = (next, self.producers.get_mut(&b.producer_id)) {
                    p.known_start = Some(p.known_start.map_or(next, |k| k.max(next)));
                }
                if was_open {
                    self.ended(b.producer_id, seq, at.ts.secs);
                }
            }
            Body::WriteTxnMarkersRequest(b) => {
                // (An admin client's own, `kafka-transactions.sh abort`, sent from a client's
                // host, says nothing of the brokers' markers.)
                if !client_id.as_deref().is_some_and(is_admin_client) {
                    let (ips, nodes) = &mut self.marker_senders;
                    if let Some((_, from, _)) = rec.loc.stream {
                        if ips.len() < MAX_MARKER_SENDERS {
                            ips.insert(from.ip);
                        }
                    }
                    if let Some(n) = client_id.as_deref().and_then(marker_sender_node) {
                        if nodes.len() < MAX_MARKER_SENDERS {
                            nodes.insert(n);
                        }
                    }
                }
                let mut stale = Vec::new();
                let mut ended = Vec::new();
                let mut named_ids: Vec<(Arc<str>, Arc<str>)> = Vec::new();
                for m in &b.markers {
                    let result = match m.transaction_result {
                        crate::kafka::apis::write_txn_markers::TransactionResult::Commit => {
                            "COMMIT"
                        }
                        crate::kafka::apis::write_txn_markers::TransactionResult::Abort => "ABORT",
                    };
                    // Transaction version 2: its markers carry the epoch its next
                    // transaction begins at.
                    if m.transaction_version == Some(2) {
                        // (Only forward: a deposed coordinator's stale re-send carries an
                        // older epoch.)
                        if let Some(p) = self.producers.get_mut(&m.producer_id) {
                            let e = m.producer_epoch;
                            p.known_start = Some(p.known_start.map_or(e, |k| k.max(e)));
                        }
                    }
                    let leader = broker.map(|e| self.broker(e));
                    let joined: usize = m.topics.iter().map(|t| t.partition_indexes.len()).sum();
                    self.grew(joined.saturating_mul(PARTITION_COST), out);
                    let names: Vec<Option<Arc<str>>> =
                        m.topics.iter().map(|t| self.intern(&t.name)).collect();
                    // A stale coordinator epoch: older than one an earlier marker of this
                    // producer id written to the same partition carried (a leader keeps it per
                    // producer in each partition's log when it writes a marker: Kafka's
                    // `ProducerStateEntry.coordinatorEpoch`; an admin's abort of a partition
                    // whose marker was never written carries 0, and is written). The first
                    // such partition of the marker is said.
                    // Not captured (a marker decoded in part): unknown, and not compared.
                    let epoch = Some(m.coordinator_epoch).filter(|&e| {
                        e != crate::kafka::apis::write_txn_markers::UNKNOWN_COORDINATOR_EPOCH
                    });
                    // Stale for every partition it names: refused wholly (a leader checks the
                    // coordinator epoch partition by partition, and writes the marker where it
                    // is not stale).
                    let mut marker_stale = false;
                    // Written before by this producer id to every partition it names, each at
                    // an older coordinator epoch: it may be a new coordinator's re-send (a
                    // coordinator re-sends a marker until it is written, never once it is).
                    let mut written_before = false;
                    if let Some(epoch) = epoch {
                        let mut first_stale = None;
                        let (mut named, mut stale_in, mut older_in) = (0usize, 0usize, 0usize);
                        for (t, name) in m.topics.iter().zip(&names) {
                            named += t.partition_indexes.len();
                            let Some(name) = name else { continue };
                            for &p in &t.partition_indexes {
                                let key = (m.producer_id, name.clone(), p);
                                if let Some(&seen) = self.coordinator_epochs.get(&key) {
                                    if seen > epoch {
                                        stale_in += 1;
                                        first_stale.get_or_insert((t.name.clone(), p, seen));
                                    } else if seen < epoch {
                                        older_in += 1;
                                    }
                                }
                            }
                        }
                        marker_stale = named > 0 && stale_in == named;
                        written_before = named > 0 && older_in == named;
                        stale.extend(first_stale);
                    }
                    let admin = client_id.as_deref().is_some_and(is_admin_client);
                    let Some(txn) = self.marker_txn(
                        m.producer_id,
                        m.producer_epoch,
                        result,
                        (
                            &m.topics,
                            admin,
                            marker_stale,
                            epoch.filter(|_| written_before && !admin),
                        ),
                        at,
                    ) else {
                        // A stale marker no transaction takes (see `marker_txn`) is still said.
                        let t = TxnRef {
                            transactional_id: self
                                .producers
                                .get(&m.producer_id)
                                .and_then(|p| p.transactional_id.clone()),
                            producer_id: m.producer_id,
                            producer_epoch: m.producer_epoch,
                            begin_frame: None,
                        };
                        let whose = producer_text(&t);
                        for (topic, partition, seen) in stale.drain(..) {
                            let a = Anomaly {
                                api_key: Some(k.api_key),
                                api_version: Some(k.api_version),
                                correlation_id: Some(k.correlation_id),
                                ..stale_marker(
                                    result,
                                    &topic,
                                    partition,
                                    &whose,
                                    m.coordinator_epoch,
                                    seen,
                                )
                            };
                            let message =
                                a.message.clone() + "; it decides no transaction's outcome";
                            out(TxnOut::anomaly(
                                rec.loc,
                                Anomaly {
                                    transaction: Some(t.clone()),
                                    message,
                                    ..a
                                },
                            ));
                        }
                        continue;
                    };
                    let fresh = !txn.client_seen && txn.marker_requests.is_empty();
                    if fresh && m.transaction_version == Some(2) && txn.t.producer_epoch > 0 {
                        // Known from its markers only: they carry the bumped epoch.
                        txn.t.producer_epoch -= 1;
                    }
                    // An admin's ABORT of a commit's unmarked partitions (see `marker_txn`):
                    // noted apart, the commit's own markers keep their sender.
                    let partial = result == "ABORT" && txn.marker_result == Some("COMMIT");
                    if partial {
                        txn.abort_after_commit
                            .get_or_insert((at, client_id.as_deref().map(str::to_owned)));
                    } else if client_id.is_some() {
                        txn.t.markers_client_id = client_id.as_deref().map(str::to_owned);
                    }
                    if txn.t.markers_from.is_none() {
                        txn.t.markers_from = rec.loc.stream.map(|(_, src, _)| src);
                    }
                    for (topic, partition, seen) in stale.drain(..) {
                        let a = Anomaly {
                            api_key: Some(k.api_key),
                            api_version: Some(k.api_version),
                            correlation_id: Some(k.correlation_id),
                            transaction: Some(txn_ref(&txn.t)),
                            ..stale_marker(
                                result,
                                &topic,
                                partition,
                                &describe(&txn.t),
                                m.coordinator_epoch,
                                seen,
                            )
                        };
                        out(TxnOut::anomaly(rec.loc, a));
                    }
                    if txn.state == State::Open {
                        ended.push((m.producer_id, txn.seq));
                    }
                    txn.state = State::Ending;
                    // The first result decides (ABORT markers for the unmarked partitions of
                    // a commit are an admin's, partition by partition: see `marker_txn`).
                    txn.marker_result.get_or_insert(result);
                    if m.producer_epoch != txn.t.producer_epoch {
                        txn.t.marker_producer_epoch = Some(m.producer_epoch);
                    }
                    if let Some(tv) = m.transaction_version {
                        txn.t.transaction_version = Some(if tv >= 2 { 2 } else { 1 });
                    }
                    txn.t.markers_sent.get_or_insert(at);
                    if !txn.marker_requests.contains(&at.frame) {
                        if txn.marker_requests.len() >= 16 {
                            txn.marker_requests.remove(0);
                        }
                        txn.marker_requests.push(at.frame);
                    }
                    if let Some(named) = name_topic_id(txn, &m.topics, &names) {
                        named_ids.push(named);
                    }
                    for (t, name) in m.topics.iter().zip(&names) {
                        let Some(name) = name else { continue };
                        for &p in &t.partition_indexes {
                            let how = if t.name == "__consumer_offsets" && !txn.t.offsets.is_empty()
                            {
                                Joined::Offsets
                            } else {
                                Joined::Marker
                            };
                            // An offsets partition joined with its AddOffsetsToTxn.
                            let joined_at = match how {
                                Joined::Offsets => txn
                                    .t
                                    .offsets
                                    .iter()
                                    .find_map(|o| o.add_offsets_frame)
                                    .map_or(at, |f| Moment { frame: f, ..at }),
                                _ => at,
                            };
                            let Some(i) = join(txn, Some(name), None, p, how, joined_at) else {
                                continue;
                            };
                            let part = &mut txn.t.partitions[i];
                            if part.marker.is_some_and(|m| m != result) {
                                // A new result for it (an admin's ABORT after a COMMIT never
                                // written): its marker is counted afresh, the old one
                                // kept in brief.
                                if let Some(old) = part.marker {
                                    part.replaced_marker = Some(Box::new(ReplacedMarker {
                                        marker: old,
                                        marker_attempts: part.marker_attempts,
                                        marker_frame: part.marker_frame,
                                        marker_response_frame: part.marker_response_frame,
                                        marker_error: part.marker_error.take(),
                                    }));
                                }
                                part.marker_attempts = 0;
                                part.marker_frame = None;
                                part.marker_error = None;
                                part.marker_error_handling = None;
                                part.marker_latency_us = None;
                                part.marker_response_frame = None;
                                part.marker_written = false;
                                txn.marker_sent[i] = None;
                            }
                            let part = &mut txn.t.partitions[i];
                            part.marker = Some(result);
                            part.coordinator_epoch = epoch;
                            part.marker_broker.clone_from(&leader);
                            part.marker_attempts += 1;
                            part.marker_frame.get_or_insert(at.frame);
                            txn.marker_sent[i].get_or_insert(at);
                        }
                    }
                }
                for (pid, seq) in ended {
                    self.ended(pid, seq, at.ts.secs);
                }
                // Topic ids named by markers: kept for the messages after.
                for (id, name) in named_ids {
                    if !self.topic_names.contains_key(&id)
                        && self.topic_names.len() < MAX_REMEMBERED
                        && self.remember(64)
                    {
                        self.topic_names.insert(id, name);
                    }
                }
            }
            _ => {}
        }
    }

    fn response(&mut self, rec: &Record, k: &KafkaMessage, out: &mut dyn FnMut(TxnOut)) {
        let at = Moment::of(&rec.loc);
        let req = k.request.as_deref().and_then(|r| match &r.event {
            Event::Kafka(q) => Some((r, &**q)),
            _ => None,
        });
        if self.named_brokers {
            if let (Some((_, broker, client)), Some((_, q))) = (rec.loc.stream, req) {
                self.learn_node(broker, &q.body, &k.body);
                self.learn_marker_sender(client, q);
            }
        }
        match &k.body {
            Body::InitProducerIdResponse(b) => {
                let Some((_, q)) = req else { return };
                let Body::InitProducerIdRequest(qb) = &q.body else {
                    return;
                };
                let Some(tid) = &qb.transactional_id else {
                    return; // an idempotent producer: no transactions
                };
                if b.error_code != 0 || b.producer_id < 0 {
                    // The error goes to the transaction of the producer its id last named
                    // when the request named that producer itself (KIP-360's v3+ bump of its
                    // own epoch); a request naming none is a new instance's, whose error
                    // (CONCURRENT_TRANSACTIONS while the old one is being aborted, say) is
                    // not the old transaction's: its message record has it.
                    let own = |pid: &i64| qb.producer_id.is_some_and(|q| q == *pid);
                    // (`--write-pcap`: a new instance's refused retry goes with what it fences.)
                    if let Some(p) = self
                        .ids
                        .get(tid)
                        .filter(|pid| !own(pid))
                        .and_then(|pid| self.producers.get_mut(pid))
                        .filter(|p| p.init_requested.is_some())
                    {
                        p.note_fence_packets(&k.packets);
                    }
                    if let Some(p) = self
                        .ids
                        .get(tid)
                        .filter(|pid| own(pid))
                        .and_then(|pid| self.producers.get_mut(pid))
                    {
                        if let Some(txn) = p.txns.last_mut() {
                            error(txn, k, b.error_code, at, None);
                        }
                    }
                    return;
                }
                let (pid, epoch) = (b.producer_id, b.producer_epoch);
                self.check_conflict(rec, k, tid, (pid, epoch), out);
                // `--write-pcap`: the packets of this exchange (the request's ride in its
                // record), written with the producer's transactions, and with one it fences
                // (read back, the file then shows why it was aborted).
                let exchange: Vec<u64> = if k.packets.is_empty() {
                    Vec::new()
                } else {
                    let request = k.request.as_ref().and_then(|r| match &r.event {
                        Event::Kafka(q) => Some(&q.packets),
                        _ => None,
                    });
                    let all = k.packets.iter().chain(request.into_iter().flatten());
                    all.take(MAX_INIT_PACKETS).copied().collect()
                };
                // The coordinator answers only once the producer's earlier transactions are
                // written: those that ended are finished; one still open is fenced.
                let mut done = Vec::new();
                let previous = self.ids.get(tid).copied();
                // (`--write-pcap`: this answer goes with the transaction an earlier request of
                // the exchange fenced, as that request does: read back, the request has its
                // response.)
                if let Some(p) = previous
                    .and_then(|o| self.producers.get_mut(&o))
                    .filter(|p| p.init_requested.is_some())
                {
                    p.note_fence_packets(&k.packets);
                }
                for owner in [Some(pid), previous].into_iter().flatten() {
                    if let Some(p) = self.producers.get_mut(&owner) {
                        let mut i = 0;
                        while i < p.txns.len() {
                            let t = &mut p.txns[i];
                            if owner == pid && t.t.producer_epoch >= epoch {
                                i += 1;
                                continue;
                            }
                            let own = qb.producer_id == Some(owner);
                            if t.state == State::Open && !own {
                                // Its client lost bytes toward its coordinator after its
                                // last message: its EndTxn may be among them, so this
                                // InitProducerId is not known to have fenced it.
                                let stream = t.client_stream.or(p.client_stream);
                                if lost_after(&self.client_losses, stream, t.last)
                                    || budget_lost_after(self.budget_loss, t.last)
                                {
                                    t.t.end_not_captured = true;
                                } else {
                                    t.t.fenced_by_frame = Some(at.frame);
                                    keep_packets(t, &exchange);
                                }
                            }
                            done.push(remove_txn(&mut p.txns, i));
                        }
                    }
                }
                for mut t in done {
                    if t.state == State::Ending {
                        written_later(&mut t);
                    }
                    self.open = self.open.saturating_sub(1);
                    self.give(t, None, out);
                }
                self.remember_id(tid, pid);
                let coordinator = k.request.as_ref().and_then(|r| r.loc.stream).map(|s| s.2);
                let client_id = q.client_id.clone().flatten();
                let timeout = qb.transaction_timeout_ms;
                if timeout > 0 && self.max_timeout_ms.is_none_or(|m| m < timeout) {
                    self.max_timeout_ms = Some(timeout);
                }
                if timeout > 0 && self.min_timeout_ms.is_none_or(|m| m > timeout) {
                    self.min_timeout_ms = Some(timeout);
                }
                if let Some(p) = self.producer(pid) {
                    p.timeout_ms = Some(timeout);
                    p.known_start = Some(epoch);
                    if let Some(r) = k.request.as_ref() {
                        p.init = Some((epoch, r.loc.frame));
                    }
                    p.init_packets.clone_from(&exchange);
                    p.init_requested = None;
                    p.fence_packets = Vec::new();
                    p.client_stream = k.request.as_ref().and_then(|r| client_end(&r.loc));
                    if client_id.is_some() {
                        p.client_id = client_id.as_deref().map(str::to_owned);
                    }
                    if coordinator.is_some() {
                        p.coordinator = coordinator;
                    }
                }
            }
            Body::AddPartitionsToTxnResponse(b) => {
                let Some((r, q)) = req else { return };
                let Body::AddPartitionsToTxnRequest(qb) = &q.body else {
                    return;
                };
                if let (Some(pid), Some(epoch)) = (qb.producer_id, qb.producer_epoch) {
                    // The first code refusing for good, and its partitions (the first three).
                    let mut refused = None;
                    let mut parts = Vec::new();
                    let mut accepted = None;
                    if let Some(txn) = self.latest(pid, epoch) {
                        for t in b.results_by_topic.iter().flatten() {
                            for p in &t.results_by_partition {
                                if p.partition_error_code != 0 {
                                    unjoin(txn, &t.name, p.partition_index, r.loc.frame);
                                }
                                if REFUSED.contains(&p.partition_error_code) {
                                    refused.get_or_insert(p.partition_error_code);
                                    if parts.len() < 4 {
                                        parts.push(format!(
                                            "{} {}",
                                            truncate(&t.name, 256),
                                            p.partition_index
                                        ));
                                    }
                                }
                                if p.partition_error_code == 0 {
                                    accepted = Some(txn.seq);
                                }
                                error(
                                    txn,
                                    k,
                                    p.partition_error_code,
                                    at,
                                    Some((&t.name, p.partition_index)),
                                );
                            }
                        }
                    }
                    if let Some(code) = refused {
                        if self.discard_if_only(pid, epoch, r.loc.frame) {
                            if parts.len() > 3 {
                                parts[3] = "...".to_string();
                            }
                            let what = format!("AddPartitionsToTxn for {}", parts.join(", "));
                            let tid = qb.transactional_id.as_deref();
                            let a = self.refused_verdict(
                                (pid, epoch, tid),
                                &what,
                                r.loc.frame,
                                code,
                                k,
                            );
                            self.defer(rec.loc, a);
                        }
                    }
                    if let Some(seq) = accepted {
                        self.complete_earlier(pid, seq, out);
                    }
                }
                // A broker's batched form (v4+): each result names its transaction (Kafka
                // answers them as each one's append completes, in any order).
                for res in b.results_by_transaction.iter().flatten() {
                    let Some(tx) = qb
                        .transactions
                        .iter()
                        .flatten()
                        .find(|t| t.transactional_id == res.transactional_id)
                    else {
                        continue;
                    };
                    if let Some(txn) = self.latest(tx.producer_id, tx.producer_epoch) {
                        for t in &res.topic_results {
                            for p in &t.results_by_partition {
                                error(
                                    txn,
                                    k,
                                    p.partition_error_code,
                                    at,
                                    Some((&t.name, p.partition_index)),
                                );
                            }
                        }
                    }
                }
            }
            Body::AddOffsetsToTxnResponse(b) => {
                let Some((_, q)) = req else { return };
                if let Body::AddOffsetsToTxnRequest(qb) = &q.body {
                    if let Some(txn) = self.latest(qb.producer_id, qb.producer_epoch) {
                        error(txn, k, b.error_code, at, None);
                        let seq = txn.seq;
                        if b.error_code == 0 {
                            self.complete_earlier(qb.producer_id, seq, out);
                        }
                    }
                }
            }
            Body::TxnOffsetCommitResponse(b) => {
                let Some((_, q)) = req else { return };
                if let Body::TxnOffsetCommitRequest(qb) = &q.body {
                    // The group's `__consumer_offsets` partition, when a Metadata response
                    // gave the partition count.
                    let offsets = self
                        .offsets_partitions
                        .map(|n| offsets_partition_of(&qb.group_id, n))
                        .zip(self.intern("__consumer_offsets"));
                    if let Some(txn) = self.latest(qb.producer_id, qb.producer_epoch) {
                        // Committed (the group coordinator wrote them as transactional
                        // records) where a partition was accepted; the group's partition
                        // joined here when no AddOffsetsToTxn joined it (transaction version
                        // 2 sends none: TxnOffsetCommit adds it; or the partition count came
                        // after the AddOffsetsToTxn).
                        let accepted = b
                            .topics
                            .iter()
                            .flat_map(|t| &t.partitions)
                            .any(|p| p.error_code == 0);
                        if let (true, Some((index, topic))) = (accepted, offsets) {
                            if let Some(i) =
                                join(txn, Some(&topic), None, index, Joined::Offsets, at)
                            {
                                txn.t.partitions[i].offsets_committed = true;
                            }
                        }
                        for t in &b.topics {
                            for p in &t.partitions {
                                let name = error_name(p.error_code);
                                if let Some(o) =
                                    txn.t.offsets.iter_mut().find(|o| o.group_id == qb.group_id)
                                {
                                    let topic = kept_name(&t.name);
                                    if let Some(pos) = o.positions.iter_mut().find(|x| {
                                        *x.topic == *topic && x.partition == p.partition_index
                                    }) {
                                        pos.error = Some(name);
                                    }
                                }
                                error(txn, k, p.error_code, at, Some((&t.name, p.partition_index)));
                            }
                        }
                    }
                }
            }
            Body::ProduceResponse(b) => {
                let Some((r, q)) = req else { return };
                let Body::ProduceRequest(qb) = &q.body else {
                    return;
                };
                // Partitions refused for good, the first of each producer id and epoch: judged
                // once every partition was read (another may have been accepted).
                let mut refused: Vec<(i64, i16, String, i16)> = Vec::new();
                for t in &b.responses {
                    let (name, id) = self.topic(t.name.as_deref(), t.topic_id.as_deref());
                    for pr in &t.partition_responses {
                        // The transactional batches this partition's request carried.
                        let batches = qb
                            .topic_data
                            .iter()
                            .filter(|d| d.name == t.name && d.topic_id == t.topic_id)
                            .flat_map(|d| &d.partition_data)
                            .filter(|d| d.index == pr.index)
                            .flat_map(|d| d.records.iter().flat_map(|r| &r.batches))
                            .filter(|h| h.is_transactional == Some(true));
                        let mut key = None;
                        let mut span: i64 = 0;
                        for h in batches {
                            if let (Some(pid), Some(epoch)) = (h.producer_id, h.producer_epoch) {
                                key = Some((pid, epoch));
                                span = span.saturating_add(
                                    i64::from(h.last_offset_delta.unwrap_or(0).max(0)) + 1,
                                );
                            }
                        }
                        let Some((pid, epoch)) = key else { continue };
                        let Some(txn) = self.latest(pid, epoch) else {
                            continue;
                        };
                        error(
                            txn,
                            k,
                            pr.error_code,
                            at,
                            Some((name.as_deref().unwrap_or(""), pr.index)),
                        );
                        if REFUSED.contains(&pr.error_code) {
                            if refused.len() < 16
                                && !refused.iter().any(|x| (x.0, x.1) == (pid, epoch))
                            {
                                let what = format!(
                                    "Produce to {} {}",
                                    truncate(name.as_deref().unwrap_or("?"), 256),
                                    pr.index
                                );
                                refused.push((pid, epoch, what, pr.error_code));
                            }
                            continue;
                        }
                        if pr.error_code != 0 || pr.base_offset < 0 {
                            continue;
                        }
                        let seq = txn.seq;
                        let Some(p) = txn.t.partitions.iter_mut().find(|p| {
                            p.partition == pr.index
                                && (p.topic == name || (id.is_some() && p.topic_id == id))
                        }) else {
                            continue;
                        };
                        let last = pr.base_offset.saturating_add(span - 1);
                        p.first_offset = Some(
                            p.first_offset
                                .map_or(pr.base_offset, |f| f.min(pr.base_offset)),
                        );
                        let before = p.last_offset;
                        p.last_offset = Some(before.map_or(last, |l| l.max(last)));
                        // A later batch there: a last stable offset past the earlier ones
                        // does not pass it.
                        let wait = match (&p.topic, p.last_offset) {
                            (Some(topic), Some(last)) if before != Some(last) => {
                                p.stable_passed = None;
                                Some((topic.clone(), p.partition, last))
                            }
                            _ => None,
                        };
                        touch(txn, step_of(k, at), &k.packets);
                        if let Some((topic, partition, last)) = wait {
                            let w = Waiting {
                                last,
                                producer_id: pid,
                                seq,
                            };
                            self.wait_for_stable(&topic, partition, w);
                        }
                        self.complete_earlier(pid, seq, out);
                    }
                }
                for (pid, epoch, what, code) in refused {
                    if self.discard_if_only(pid, epoch, r.loc.frame) {
                        let tid = qb.transactional_id.as_deref();
                        let a =
                            self.refused_verdict((pid, epoch, tid), &what, r.loc.frame, code, k);
                        self.defer(rec.loc, a);
                    }
                }
            }
            Body::EndTxnResponse(b) => {
                let Some((r, q)) = req else { return };
                let Body::EndTxnRequest(qb) = &q.body else {
                    return;
                };
                let frame = r.loc.frame;
                let Some(p) = self.producers.get_mut(&qb.producer_id) else {
                    return;
                };
                let Some(i) = p
                    .txns
                    .iter()
                    .rposition(|t| t.end_request_frame == Some(frame))
                else {
                    return;
                };
                let txn = &mut p.txns[i];
                if txn.t.end_error.as_deref() == Some("NONE") {
                    // The answer to the same end asked again after the coordinator accepted
                    // it (see `end_txn`): the first answer stands; an error is noted.
                    if b.error_code != 0 {
                        error(txn, k, b.error_code, at, None);
                    }
                    touch(txn, step_of(k, at), &k.packets);
                    return;
                }
                if REFUSED.contains(&b.error_code) {
                    // A zombie's EndTxn, refused: when it is all there is of its transaction
                    // (the one it meant was given out when the producer was fenced), no
                    // transaction, and a `refused_request` verdict says what was refused.
                    let only = txn.t.frames.first() == Some(&frame) && txn.marker_result.is_none();
                    if only && txn.t.frames.len() <= 2 {
                        remove_txn(&mut p.txns, i);
                        self.open = self.open.saturating_sub(1);
                        self.discarded += 1;
                        let what = format!(
                            "EndTxn asking to {}",
                            if qb.committed { "commit" } else { "abort" }
                        );
                        let a = self.refused_verdict(
                            (
                                qb.producer_id,
                                qb.producer_epoch,
                                Some(&qb.transactional_id),
                            ),
                            &what,
                            frame,
                            b.error_code,
                            k,
                        );
                        self.defer(rec.loc, a);
                        return;
                    }
                }
                if RETRIABLE_END.contains(&b.error_code) && txn.marker_result.is_none() {
                    // The client asks again: the transaction stays as it was.
                    error(txn, k, b.error_code, at, None);
                    txn.t.end_requested = None;
                    txn.t.requested = None;
                    txn.end_request_frame = None;
                    txn.state = State::Open;
                    return;
                }
                txn.t.end_response = Some(at);
                txn.t.end_error = Some(error_name(b.error_code));
                txn.t.end_latency_us = txn.t.end_requested.and_then(|s| s.elapsed_to(&at));
                error(txn, k, b.error_code, at, None);
                if let Some(e) = b
                    .producer_epoch
                    .filter(|e| *e != txn.t.producer_epoch && *e >= 0)
                {
                    txn.t.marker_producer_epoch = Some(e);
                }
                let next = b
                    .producer_epoch
                    .filter(|e| *e >= 0)
                    .unwrap_or(txn.t.producer_epoch);
                if b.error_code == 0 {
                    p.known_start = Some(next);
                }
                let seq = txn.seq;
                // Epoch exhaustion under transaction version 2: the response hands out a new
                // producer id, where the next transaction begins.
                if let Some(new) = b.producer_id.filter(|n| *n >= 0 && *n != qb.producer_id) {
                    if b.error_code == 0 {
                        let (timeout, client, coordinator) =
                            (p.timeout_ms, p.client_id.clone(), p.coordinator);
                        self.remember_id(&qb.transactional_id, new);
                        if let Some(q) = self.producer(new) {
                            q.known_start = Some(next);
                            q.timeout_ms = q.timeout_ms.or(timeout);
                            q.client_id = q.client_id.take().or(client);
                            q.coordinator = q.coordinator.or(coordinator);
                        }
                    }
                }
                if b.error_code == 0 {
                    self.complete_earlier(qb.producer_id, seq, out);
                }
                if let Some(i) = self
                    .producers
                    .get(&qb.producer_id)
                    .and_then(|p| p.txns.iter().position(|t| t.seq == seq))
                {
                    self.try_finish(qb.producer_id, i, out);
                }
            }
            Body::WriteTxnMarkersResponse(b) => {
                let Some((r, q)) = req else {
                    if k.inferred {
                        self.inferred_markers(rec, k, b, out);
                    }
                    return;
                };
                let frame = r.loc.frame;
                let mut failed = Vec::new();
                let mut written = Vec::new();
                // A request decoded in part may have lost its topics and partitions to the
                // cut: its response names those it answered, which join from it.
                let answering = rec.loc.stream.map(|(_, src, _)| self.broker(src));
                // An admin client's markers are its own, not the coordinator's.
                let admin = match (
                    r.loc.stream,
                    q.client_id.as_ref().and_then(|c| c.as_deref()),
                ) {
                    (Some((_, from, _)), Some(id)) if is_admin_client(id) => {
                        Some((from, Arc::<str>::from(id)))
                    }
                    _ => None,
                };
                let names: Vec<Vec<Option<Arc<str>>>> = if q.truncated {
                    b.markers
                        .iter()
                        .map(|m| m.topics.iter().map(|t| self.intern(&t.name)).collect())
                        .collect()
                } else {
                    Vec::new()
                };
                // Markers of a request cut before their producer ids: answered as if their
                // request was lost (`inferred_markers`).
                let mut unmatched = Vec::new();
                // Markers no transaction holds (a re-send of one given out, one read late, a
                // producer the view does not follow): their leaders keep the coordinator
                // epoch they were written with all the same.
                let mut unheld = Vec::new();
                for (mi, m) in b.markers.iter().enumerate() {
                    let Some(p) = self.producers.get_mut(&m.producer_id) else {
                        continue;
                    };
                    let Some(i) = p
                        .txns
                        .iter()
                        .rposition(|t| t.marker_requests.contains(&frame))
                    else {
                        if q.truncated {
                            unmatched.push(m.clone());
                        } else {
                            unheld.push(m);
                        }
                        continue;
                    };
                    let txn = &mut p.txns[i];
                    touch(txn, step_of(k, at), &k.packets);
                    txn.t.markers_answered = Some(at);
                    let (tref, desc) = (txn_ref(&txn.t), describe(&txn.t));
                    for (ti, t) in m.topics.iter().enumerate() {
                        for pr in &t.partitions {
                            let known = find_partition(
                                txn,
                                Some(&kept_name(&t.name)),
                                None,
                                pr.partition_index,
                            );
                            let name = names.get(mi).and_then(|n| n.get(ti)).cloned().flatten();
                            let j = match (known, name) {
                                (Some(j), _) => j,
                                (None, Some(name)) => {
                                    let how = Joined::Marker;
                                    let request_at = Moment::of(&r.loc);
                                    let Some(j) = join(
                                        txn,
                                        Some(&name),
                                        None,
                                        pr.partition_index,
                                        how,
                                        request_at,
                                    ) else {
                                        continue;
                                    };
                                    let part = &mut txn.t.partitions[j];
                                    part.marker = txn.marker_result;
                                    part.marker_broker.clone_from(&answering);
                                    part.marker_attempts += 1;
                                    part.marker_frame.get_or_insert(frame);
                                    txn.marker_sent[j].get_or_insert(request_at);
                                    j
                                }
                                (None, None) => continue,
                            };
                            let part = &mut txn.t.partitions[j];
                            part.marker_response_frame = Some(at.frame);
                            part.marker_latency_us =
                                txn.marker_sent[j].and_then(|s| s.elapsed_to(&at));
                            let trip = MarkerRoundTrip {
                                answered: at,
                                broker: answering.clone(),
                                us: Moment::of(&r.loc).micros_to(&at),
                                admin: admin.clone(),
                            };
                            if part.marker_round_trips.len() >= MAX_ROUND_TRIPS {
                                // The last one stays: it is the one that settled the marker.
                                part.marker_round_trips.pop();
                            }
                            part.marker_round_trips.push(trip);
                            if pr.error_code == 0 {
                                part.marker_written = true;
                                if let (Some(e), Some(topic)) =
                                    (part.coordinator_epoch, part.topic.clone())
                                {
                                    written.push((topic, pr.partition_index, e));
                                }
                            } else {
                                let name = error_name(pr.error_code);
                                let handling = MarkerErrorHandling::of(&name);
                                part.marker_error_handling = Some(handling);
                                if handling == MarkerErrorHandling::Terminal {
                                    failed.push(Anomaly {
                                        api_key: Some(k.api_key),
                                        api_version: Some(k.api_version),
                                        correlation_id: Some(k.correlation_id),
                                        request_frame: Some(frame),
                                        transaction: Some(tref.clone()),
                                        ..Anomaly::new(
                                            AnomalyKind::MarkerFailed,
                                            format!(
                                                "the {} marker for {} {} of {} was answered \
                                                 {name}, which Kafka's coordinator treats as \
                                                 terminal: the transaction's remaining markers \
                                                 are cancelled",
                                                part.marker.unwrap_or("?"),
                                                t.name,
                                                pr.partition_index,
                                                desc
                                            ),
                                        )
                                    });
                                }
                                part.marker_error = Some(name);
                            }
                            error(
                                txn,
                                k,
                                pr.error_code,
                                at,
                                Some((&t.name, pr.partition_index)),
                            );
                        }
                    }
                    for a in failed.drain(..) {
                        out(TxnOut::anomaly(rec.loc, a));
                    }
                    // The coordinator epoch each written marker leaves its partition with.
                    for (topic, partition, e) in written.drain(..) {
                        self.written_with(m.producer_id, topic, partition, e);
                    }
                    self.try_finish(m.producer_id, i, out);
                }
                if let Body::WriteTxnMarkersRequest(qb) = &q.body {
                    if !unheld.is_empty() {
                        self.written_unheld(&unheld, qb);
                    }
                    if !q.truncated && !k.truncated {
                        self.left_out(qb, b, frame);
                    }
                }
                if !unmatched.is_empty() {
                    let rest = crate::kafka::apis::write_txn_markers::WriteTxnMarkersResponse {
                        markers: unmatched,
                        unknown_tagged_fields: Vec::new(),
                    };
                    self.inferred_markers(rec, k, &rest, out);
                }
                if k.truncated {
                    // Cut before some of its error codes: the markers of that request still
                    // unanswered were answered, how is not known.
                    let mut pids: Vec<i64> = b.markers.iter().map(|m| m.producer_id).collect();
                    if let Body::WriteTxnMarkersRequest(qb) = &q.body {
                        pids.extend(qb.markers.iter().map(|m| m.producer_id));
                    }
                    pids.sort_unstable();
                    pids.dedup();
                    for pid in pids {
                        let Some(p) = self.producers.get_mut(&pid) else {
                            continue;
                        };
                        let Some(txn) = p
                            .txns
                            .iter_mut()
                            .rev()
                            .find(|t| t.marker_requests.contains(&frame))
                        else {
                            continue;
                        };
                        for (j, part) in txn.t.partitions.iter_mut().enumerate() {
                            if part.marker.is_some()
                                && part.marker_response_frame.is_none()
                                && !part.marker_written
                                && txn.marker_sent[j].is_some()
                            {
                                part.marker_answer_cut = true;
                                part.marker_response_frame = Some(at.frame);
                            }
                        }
                    }
                }
            }
            Body::FetchResponse(b) => {
                let Some((_, q)) = req else { return };
                let Body::FetchRequest(qb) = &q.body else {
                    return;
                };
                if qb.isolation_level == 1 {
                    for t in &b.responses {
                        let (name, id) = self.topic(t.topic.as_deref(), t.topic_id.as_deref());
                        let Some(name) = name.or(id) else {
                            continue;
                        };
                        for p in &t.partitions {
                            if p.error_code == 0 && p.last_stable_offset >= 0 {
                                self.stable_offset(
                                    rec,
                                    &name,
                                    p.partition_index,
                                    p.last_stable_offset,
                                    p.high_watermark,
                                    out,
                                );
                            }
                        }
                    }
                }
            }
            Body::FindCoordinatorResponse(b) => {
                if let (Some(node), Some(host), Some(port)) = (b.node_id, &b.host, b.port) {
                    self.node(host, port, node);
                }
                for c in b.coordinators.iter().flatten() {
                    self.node(&c.host, c.port, c.node_id);
                }
                // Which transactional ids it is the coordinator of (key type 1).
                let Some((_, q)) = req else { return };
                let Body::FindCoordinatorRequest(qb) = &q.body else {
                    return;
                };
                if qb.key_type != Some(1) {
                    return;
                }
                let mut found: Vec<(&str, i32)> = Vec::new();
                if let (Some(key), Some(node), Some(0)) = (&qb.key, b.node_id, b.error_code) {
                    found.push((key, node));
                }
                for c in b
                    .coordinators
                    .iter()
                    .flatten()
                    .filter(|c| c.error_code == 0)
                {
                    found.push((&c.key, c.node_id));
                }
                for (key, node) in found {
                    if let Some(n) = self.coordinator_of.get_mut(key) {
                        *n = node;
                    } else if self.coordinator_of.len() < MAX_REMEMBERED
                        && self.remember(key.len() + 64)
                    {
                        self.coordinator_of.insert(key.to_string(), node);
                    }
                }
            }
            Body::MetadataResponse(b) => {
                for br in &b.brokers {
                    self.node(&br.host, br.port, br.node_id);
                }
                for t in &b.topics {
                    // The partition count only from a whole list (indexes 0 to n-1): a response
                    // may list some partitions only.
                    if t.name.as_deref() == Some("__consumer_offsets") && !t.partitions.is_empty() {
                        let n = t.partitions.len();
                        let whole = t
                            .partitions
                            .iter()
                            .all(|p| usize::try_from(p.partition_index).is_ok_and(|i| i < n));
                        if whole {
                            self.offsets_partitions = Some(i32::try_from(n).unwrap_or(i32::MAX));
                        }
                    }
                    if let (Some(id), Some(name)) = (&t.topic_id, &t.name) {
                        let known = self.topic_names.contains_key(id.as_str());
                        if !known && self.topic_names.len() < MAX_REMEMBERED && self.remember(64) {
                            if let (Some(id), Some(name)) = (self.intern(id), self.intern(name)) {
                                self.topic_names.insert(id, name);
                            }
                        }
                    }
                    let Some(name) = t.name.as_deref().and_then(|n| self.intern(n)) else {
                        continue;
                    };
                    for p in &t.partitions {
                        if p.leader_id < 0 {
                            continue;
                        }
                        let key = (name.clone(), p.partition_index);
                        if let Some(l) = self.leaders.get_mut(&key) {
                            *l = p.leader_id;
                        } else if self.leaders.len() < MAX_REMEMBERED && self.remember(64) {
                            self.leaders.insert(key, p.leader_id);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Notes a loss of a sender's bytes (a `gap` anomaly record) on its TCP stream.
    /// Notes that `pid`'s marker was written to `partition` of `topic` with coordinator epoch
    /// `e`: its leader keeps the newest ([`TxnView::coordinator_epochs`]).
    fn written_with(&mut self, pid: i64, topic: Arc<str>, partition: i32, e: i32) {
        let key = (pid, topic, partition);
        if let Some(seen) = self.coordinator_epochs.get_mut(&key) {
            *seen = (*seen).max(e);
        } else if self.coordinator_epochs.len() < MAX_REMEMBERED && self.remember(80) {
            self.coordinator_epochs.insert(key, e);
        }
    }

    /// Notes the coordinator epoch each partition answered `NONE` in `answered` (a
    /// WriteTxnMarkers response's markers that no transaction holds) was written with, as
    /// its request `q` gave it.
    fn written_unheld(
        &mut self,
        answered: &[&crate::kafka::apis::write_txn_markers::WritableTxnMarkerResult],
        q: &crate::kafka::apis::write_txn_markers::WriteTxnMarkersRequest,
    ) {
        // The request's (producer id, topic, partition) to its coordinator epoch, for the
        // producers answered: one pass over each, whatever their sizes.
        let pids: HashSet<i64> = answered.iter().map(|m| m.producer_id).collect();
        let mut sent: HashMap<(i64, &str, i32), i32> = HashMap::default();
        for x in &q.markers {
            if x.coordinator_epoch
                == crate::kafka::apis::write_txn_markers::UNKNOWN_COORDINATOR_EPOCH
                || !pids.contains(&x.producer_id)
            {
                continue;
            }
            for t in &x.topics {
                for &p in &t.partition_indexes {
                    sent.insert((x.producer_id, &t.name, p), x.coordinator_epoch);
                }
            }
        }
        for m in answered {
            for t in &m.topics {
                for pr in t.partitions.iter().filter(|pr| pr.error_code == 0) {
                    let Some(&e) = sent.get(&(m.producer_id, &*t.name, pr.partition_index)) else {
                        continue;
                    };
                    let Some(name) = self.intern(&kept_name(&t.name)) else {
                        continue;
                    };
                    self.written_with(m.producer_id, name, pr.partition_index, e);
                }
            }
        }
    }

    /// Notes the partitions of request `q` (in frame `frame`) that its response `r` left out
    /// (`marker_left_out`): their markers are not written, and Kafka's coordinator does not
    /// send them again.
    fn left_out(
        &mut self,
        q: &crate::kafka::apis::write_txn_markers::WriteTxnMarkersRequest,
        r: &crate::kafka::apis::write_txn_markers::WriteTxnMarkersResponse,
        frame: u64,
    ) {
        let answered: HashSet<(i64, &str, i32)> = r
            .markers
            .iter()
            .flat_map(|m| {
                m.topics.iter().flat_map(move |t| {
                    t.partitions
                        .iter()
                        .map(move |p| (m.producer_id, &*t.name, p.partition_index))
                })
            })
            .collect();
        for x in &q.markers {
            for t in &x.topics {
                for &p in &t.partition_indexes {
                    if answered.contains(&(x.producer_id, &*t.name, p)) {
                        continue;
                    }
                    let Some(txn) = self.producers.get_mut(&x.producer_id).and_then(|pr| {
                        pr.txns
                            .iter_mut()
                            .rev()
                            .find(|t| t.marker_requests.contains(&frame))
                    }) else {
                        continue;
                    };
                    let Some(j) = find_partition(txn, Some(&kept_name(&t.name)), None, p) else {
                        continue;
                    };
                    let part = &mut txn.t.partitions[j];
                    if !part.marker_written {
                        part.marker_left_out = true;
                    }
                }
            }
        }
    }

    fn lost(&mut self, rec: &Record) {
        let Some((i, src, _)) = rec.loc.stream else {
            return;
        };
        let at = Moment::of(&rec.loc);
        if let Some(m) = self.client_losses.get_mut(&(i, src)) {
            *m = at;
        } else if self.client_losses.len() < MAX_REMEMBERED && self.remember(64) {
            self.client_losses.insert((i, src), at);
        }
    }

    /// A WriteTxnMarkers response whose request was not captured (`inferred`): it names the
    /// producer ids and partitions its markers were for and whether each was written, not the
    /// result nor the epoch. Its partitions join the producer's latest transaction begun by
    /// then that holds one of them with no marker sent in a captured request nor answered,
    /// else its latest that ended by
    /// then (its EndTxn or markers seen), marked `marker_request_lost`, their `marker` left
    /// unknown (an admin's ABORT of a commit's partition looks the same as the COMMIT). A
    /// producer the view does not follow is passed over.
    fn inferred_markers(
        &mut self,
        rec: &Record,
        k: &KafkaMessage,
        b: &crate::kafka::apis::write_txn_markers::WriteTxnMarkersResponse,
        out: &mut dyn FnMut(TxnOut),
    ) {
        let at = Moment::of(&rec.loc);
        let answering = rec.loc.stream.map(|(_, src, _)| self.broker(src));
        for m in &b.markers {
            let names: Vec<Option<Arc<str>>> =
                m.topics.iter().map(|t| self.intern(&t.name)).collect();
            let Some(p) = self.producers.get(&m.producer_id) else {
                continue;
            };
            // A partition no captured request carried a marker to (one that did gets its
            // own response), not answered yet.
            let unmarked = |part: &TxnPartition| {
                part.marker_frame.is_none()
                    && part.marker_response_frame.is_none()
                    && !part.marker_written
            };
            // Only a transaction begun by then (a response a gap held back reaches the view
            // late, when the producer's next transaction may have begun).
            let unanswered = |t: &Txn| {
                t.t.begin.micros_to(&at) >= 0
                    && m.topics.iter().any(|x| {
                        x.partitions.iter().any(|pr| {
                            find_partition(t, Some(&kept_name(&x.name)), None, pr.partition_index)
                                .is_some_and(|j| unmarked(&t.t.partitions[j]))
                        })
                    })
            };
            let Some(i) = p.txns.iter().rposition(unanswered).or_else(|| {
                p.txns.iter().rposition(|t| {
                    t.state == State::Ending
                        && [t.t.end_requested, t.t.markers_sent]
                            .iter()
                            .flatten()
                            .any(|e| e.micros_to(&at) >= 0)
                })
            }) else {
                continue;
            };
            let joined: usize = m.topics.iter().map(|t| t.partitions.len()).sum();
            self.grew(joined.saturating_mul(PARTITION_COST), out);
            let Some(txn) = self
                .producers
                .get_mut(&m.producer_id)
                .and_then(|p| p.txns.get_mut(i))
            else {
                continue;
            };
            let mut answered = false;
            for (t, name) in m.topics.iter().zip(&names) {
                for pr in &t.partitions {
                    let j = match find_partition(
                        txn,
                        Some(&kept_name(&t.name)),
                        None,
                        pr.partition_index,
                    ) {
                        Some(j) => j,
                        None => {
                            let Some(j) = join(
                                txn,
                                name.as_ref(),
                                None,
                                pr.partition_index,
                                Joined::Marker,
                                at,
                            ) else {
                                continue;
                            };
                            j
                        }
                    };
                    let part = &mut txn.t.partitions[j];
                    if !unmarked(part) {
                        continue; // its own request's response answers it
                    }
                    answered = true;
                    part.marker_request_lost = true;
                    part.marker_response_frame = Some(at.frame);
                    part.marker_broker.clone_from(&answering);
                    if pr.error_code == 0 {
                        part.marker_written = true;
                    } else {
                        let name = error_name(pr.error_code);
                        part.marker_error_handling = Some(MarkerErrorHandling::of(&name));
                        part.marker_error = Some(name);
                    }
                }
            }
            if answered {
                touch(txn, step_of(k, at), &k.packets);
                txn.t.markers_answered = Some(at);
                // Markers go out only once the coordinator ended it.
                let was_open = txn.state == State::Open;
                txn.state = State::Ending;
                let seq = txn.seq;
                if was_open {
                    self.ended(m.producer_id, seq, at.ts.secs);
                }
                self.try_finish(m.producer_id, i, out);
            }
        }
    }

    /// Notes a read_committed Fetch response's last stable offset `lso` and high watermark
    /// `hwm` for a partition; reports `lso_stuck` (once per offset) when the offset has stayed
    /// while the high watermark moved for longer than the largest transaction timeout seen
    /// (Kafka's default `transaction.timeout.ms`, 60 s, when none was).
    fn stable_offset(
        &mut self,
        rec: &Record,
        topic: &Arc<str>,
        partition: i32,
        lso: i64,
        hwm: i64,
        out: &mut dyn FnMut(TxnOut),
    ) {
        let at = Moment::of(&rec.loc);
        let key = (topic.clone(), partition);
        let broker = rec.loc.stream.map(|(_, src, _)| src);
        let Some(s) = self.stable_offsets.get_mut(&key) else {
            if self.stable_offsets.len() < MAX_REMEMBERED && self.remember(192) {
                let fresh = StableOffset {
                    lso,
                    high_watermark: hwm,
                    since: at,
                    seen: at,
                    broker,
                    reported: false,
                    limit_us: None,
                    waiting: [None; WAITING],
                    first: (lso, at, broker),
                };
                self.stable_offsets.insert(key, fresh);
            }
            return;
        };
        s.seen = at;
        if s.lso != lso {
            (s.lso, s.high_watermark, s.since, s.broker) = (lso, hwm, at, broker);
            (s.reported, s.limit_us) = (false, None);
            if s.waiting.iter().any(|w| w.is_some_and(|w| w.last < lso)) {
                let passed = s.waiting;
                for w in &mut s.waiting {
                    *w = w.filter(|x| x.last >= lso);
                }
                for w in passed.into_iter().flatten().filter(|x| x.last < lso) {
                    self.stable_passed(topic, partition, w, (at, broker));
                }
            }
            // Transactions written out whose first batch there is below the new last stable
            // offset are settled on this partition.
            if let Some(list) = self.unsettled.get_mut(&key) {
                list.retain(|u| u.first_offset >= lso);
                if list.is_empty() {
                    self.unsettled.remove(&key);
                }
            }
            return;
        }
        let stayed = s.since.micros_to(&at);
        // No limit is below the smallest timeout seen, nor 60 s when none was.
        let floor_ms = self.min_timeout_ms.map_or(60_000, |m| m.min(60_000));
        if s.reported
            || hwm <= s.high_watermark
            || stayed <= s.limit_us.unwrap_or(i64::from(floor_ms) * 1_000)
        {
            return;
        }
        let (from, since) = (s.high_watermark, s.since);
        // The transaction that holds it: one with data at that offset, not ended there (no
        // marker, or one refused for good or left out of its response).
        let holder = self
            .producers
            .iter()
            .flat_map(|(pid, p)| p.txns.iter().map(move |t| (*pid, t)))
            .filter(|(_, t)| {
                t.t.partitions.iter().any(|p| {
                    p.topic.as_deref() == Some(topic)
                        && p.partition == partition
                        && p.first_offset.is_some_and(|f| f <= lso)
                        && holds_stable_offset(p)
                })
            })
            .min_by_key(|(_, t)| t.seq);
        // Else one written out before (at its end, no Metadata having named the leader that
        // missed its marker) whose first batch there is exactly where the offset stays.
        let written = holder
            .is_none()
            .then(|| self.unsettled.get(&(topic.clone(), partition)))
            .flatten()
            .and_then(|list| list.iter().rev().find(|u| u.first_offset == lso));
        // The holder's own timeout when its InitProducerId was seen; else the largest seen,
        // and at least Kafka's default `transaction.timeout.ms`, 60 s (its own may be up to
        // the broker's 15 min: another producer's short one says nothing of it).
        let own = holder
            .map(|(pid, _)| pid)
            .or(written.map(|u| u.producer_id))
            .and_then(|pid| self.producers.get(&pid)?.timeout_ms);
        let written = written.map(|u| (u.txn(), u.written_frame));
        let limit_ms = match own {
            Some(ms) => ms.max(0),
            None => self.max_timeout_ms.map_or(60_000, |m| m.max(60_000)),
        };
        let holder = holder.map(|(_, t)| t);
        let Some(s) = self.stable_offsets.get_mut(&(topic.clone(), partition)) else {
            return;
        };
        let limit_us = *s.limit_us.get_or_insert(i64::from(limit_ms) * 1_000);
        if stayed <= limit_us {
            return;
        }
        s.reported = true;
        let limit_ms = limit_us / 1_000;
        let held = match (holder, &written) {
            (Some(t), _) => format!("{} holds it", describe(&t.t)),
            (None, Some((t, frame))) => format!(
                "the transaction of {}, written out in frame {frame}, holds it: its first \
                 batch there is at offset {lso}, and no marker for {topic} {partition} was \
                 seen written",
                producer_text(t)
            ),
            (None, None) => "no transaction of the capture holds it (it began before the \
                             capture, or its producer's messages were not captured)"
                .to_string(),
        };
        let mut a = Anomaly::new(
            AnomalyKind::LsoStuck,
            format!(
                "read_committed Fetch responses for {topic} {partition} kept last_stable_offset \
                 {lso} from frame {} to this one, {} so far, while high_watermark moved from \
                 {from} to {hwm}: longer than {} ({limit_ms} ms; said once, when it passed \
                 it: the stall may go on past this frame): {held}{}",
                since.frame,
                human_us(stayed),
                match (own, self.max_timeout_ms) {
                    (Some(_), _) => "the transaction timeout of the transaction that holds it",
                    (None, Some(_)) => {
                        "the largest transaction timeout seen, and Kafka's default of 60 s"
                    }
                    (None, None) => "Kafka's default transaction.timeout.ms, 60 s",
                },
                // Its holder's own timeout unknown: a longer one (a stream processor's) may
                // be its.
                if own.is_some() {
                    ""
                } else {
                    "; its holder's own timeout was not captured (its producer's InitProducerId \
                     came before the capture) and may be longer, up to the broker's \
                     transaction.max.timeout.ms, 15 min by default: a long transaction, as a \
                     stream processor's, may still end"
                }
            ),
        );
        a.api_key = Some(1);
        a.transaction = holder.map(|t| txn_ref(&t.t)).or(written.map(|(t, _)| t));
        out(TxnOut::anomaly(rec.loc, a));
    }

    /// Watches for the last stable offset of `topic` `partition` to pass `last`, the last
    /// batch there of the transaction `seq` of producer `producer_id` (nothing when no
    /// read_committed Fetch response has given that partition's offset yet: the view then
    /// judges from the offset's last change alone).
    fn wait_for_stable(&mut self, topic: &Arc<str>, partition: i32, w: Waiting) {
        let Some(s) = self.stable_offsets.get_mut(&(topic.clone(), partition)) else {
            return;
        };
        if s.lso > w.last {
            return;
        }
        let slot = s
            .waiting
            .iter()
            .position(|x| x.is_some_and(|x| (x.producer_id, x.seq) == (w.producer_id, w.seq)))
            .or_else(|| s.waiting.iter().position(Option::is_none))
            .or_else(|| (0..WAITING).min_by_key(|&i| s.waiting[i].map_or(i64::MIN, |x| x.last)));
        if let Some(i) = slot {
            s.waiting[i] = Some(w);
        }
    }

    /// The last stable offset of `topic` `partition` passed `w`'s last batch there at `at`:
    /// noted on its partition, unless it wrote more there since.
    fn stable_passed(
        &mut self,
        topic: &Arc<str>,
        partition: i32,
        w: Waiting,
        at: (Moment, Option<Endpoint>),
    ) {
        let Some(t) = self
            .producers
            .get_mut(&w.producer_id)
            .and_then(|p| p.txns.iter_mut().find(|t| t.seq == w.seq))
        else {
            return;
        };
        if let Some(p) =
            t.t.partitions
                .iter_mut()
                .find(|p| p.partition == partition && p.topic.as_deref() == Some(&**topic))
        {
            if p.last_offset == Some(w.last) && p.stable_passed.is_none() {
                p.stable_passed = Some(at);
            }
        }
    }

    /// The producer `pid`, made when there is room.
    fn producer(&mut self, pid: i64) -> Option<&mut Producer> {
        let room = self.producers.len() < MAX_REMEMBERED;
        if room {
            return Some(self.producers.entry(pid).or_default());
        }
        if !self.producers.contains_key(&pid) {
            if self.producers.len() >= MAX_REMEMBERED {
                // Forget producers with nothing followed.
                self.producers.retain(|_, p| !p.txns.is_empty());
                if self.producers.len() >= MAX_REMEMBERED {
                    return None;
                }
            }
            self.producers.insert(pid, Producer::default());
        }
        self.producers.get_mut(&pid)
    }

    /// Says, once per producer id, when an InitProducerId response (`k`, at `rec`) gives
    /// `pid` and `epoch` to transactional id `tid` while the view knows the producer id as
    /// another's: no cluster does that, so two clusters (or a damaged id) share it. The
    /// anomaly names the new holder's transaction (`transaction`), whose filters it follows.
    fn check_conflict(
        &mut self,
        rec: &Record,
        k: &KafkaMessage,
        tid: &str,
        (pid, epoch): (i64, i16),
        out: &mut dyn FnMut(TxnOut),
    ) {
        let Some(p) = self.producers.get(&pid) else {
            return;
        };
        let Some(other) = p.transactional_id.as_deref().filter(|o| *o != tid) else {
            return;
        };
        if self.conflicts_reported.contains(&pid) || self.conflicts_reported.len() >= MAX_REMEMBERED
        {
            return;
        }
        let shown = |t: &str| -> String { t.chars().take(100).collect() };
        let endpoint = |e: Option<Endpoint>| {
            e.map_or("?".to_string(), |e| {
                std::net::SocketAddr::new(e.ip, e.port).to_string()
            })
        };
        let coordinator = k.request.as_ref().and_then(|r| r.loc.stream).map(|s| s.2);
        let message = format!(
            "producer id {pid} was given to transactional id {:?} here (coordinator {}), and \
             before to {:?} (InitProducerId in frame {}, coordinator {}): a Kafka cluster never \
             gives one producer id to two transactional ids, so the capture holds two clusters \
             (or a damaged id); the view joins transactions by producer id and epoch, and may \
             mix theirs",
            shown(tid),
            endpoint(coordinator),
            shown(other),
            p.init.map_or("?".to_string(), |(_, f)| f.to_string()),
            endpoint(p.coordinator),
        );
        if !self.remember(16) {
            return;
        }
        self.conflicts_reported.insert(pid);
        let mut a = Anomaly::new(AnomalyKind::ProducerIdConflict, message);
        a.api_key = Some(k.api_key);
        a.api_version = Some(k.api_version);
        a.correlation_id = Some(k.correlation_id);
        // It goes with the transactions the new holder begins at that epoch (the filters
        // keep or leave it out with them).
        a.transaction = Some(TxnRef {
            transactional_id: Some(shown(tid)),
            producer_id: pid,
            producer_epoch: epoch,
            begin_frame: None,
        });
        out(TxnOut::anomaly(rec.loc, a));
    }

    fn remember_id(&mut self, tid: &str, pid: i64) {
        if pid < 0 {
            return;
        }
        if let Some(p) = self.ids.get_mut(tid) {
            *p = pid;
        } else if self.ids.len() < MAX_REMEMBERED && self.remember(tid.len() + 64) {
            self.ids.insert(tid.to_string(), pid);
        }
        if let Some(p) = self.producer(pid) {
            if p.transactional_id.as_deref() != Some(tid) {
                p.transactional_id = Some(tid.to_string());
            }
        }
    }

    fn note_client_id(&mut self, pid: i64, client_id: Option<&str>) {
        if let (Some(c), Some(p)) = (client_id, self.producer(pid)) {
            if p.client_id.as_deref() != Some(c) {
                p.client_id = Some(c.to_string());
            }
        }
    }

    /// Notes a client request to the coordinator.
    fn client(
        &mut self,
        pid: i64,
        tid: Option<&str>,
        client_id: Option<&str>,
        to: Option<Endpoint>,
    ) {
        if let Some(t) = tid {
            self.remember_id(t, pid);
        }
        self.note_client_id(pid, client_id);
        if let (Some(e), Some(p)) = (to, self.producer(pid)) {
            p.coordinator = Some(e);
        }
    }

    /// The open transaction of `pid` at `epoch`, begun at `at` when there is none.
    /// Ends the open transaction of `pid` at `epoch` when the AddPartitionsToTxn (client form)
    /// of `topics`, sent at `at` on the connection `stream`, names only partitions it already
    /// joined by an AddPartitionsToTxn and wrote to (a client writes only once its add was
    /// accepted: one asked again after a lost answer has no batch yet), and that connection
    /// lost bytes (a `gap`) since the
    /// transaction's last message: a client adds a partition once per transaction, so this one
    /// is the next transaction's, and the end of the one before was in the lost bytes (its
    /// EndTxn, and the markers or the next message that settle it, as for any end). Under
    /// transaction version 1 both keep the epoch; this keeps them apart.
    fn ended_in_loss(
        &mut self,
        pid: i64,
        epoch: i16,
        topics: &[crate::kafka::apis::add_partitions_to_txn::TxnTopic],
        stream: Option<(u64, Endpoint)>,
        at: Moment,
    ) {
        if self.client_losses.is_empty() || topics.iter().all(|t| t.partitions.is_empty()) {
            return;
        }
        let Some(p) = self.producers.get_mut(&pid) else {
            return;
        };
        let Some(txn) = p
            .txns
            .iter_mut()
            .rev()
            .find(|t| t.state == State::Open && t.t.producer_epoch == epoch)
        else {
            return;
        };
        let again = topics.iter().all(|t| {
            t.partitions.iter().all(|&i| {
                find_partition(txn, Some(&t.name), None, i).is_some_and(|j| {
                    let p = &txn.t.partitions[j];
                    p.joined == Joined::AddPartitionsToTxn && p.batches > 0
                })
            })
        });
        if !again
            || !lost_after(&self.client_losses, stream, txn.last)
            || txn.last.micros_to(&at) < 0
        {
            return;
        }
        txn.state = State::Ending;
        let seq = txn.seq;
        self.ended(pid, seq, at.ts.secs);
    }

    fn data_txn(&mut self, pid: i64, epoch: i16, at: Moment) -> Option<&mut Txn> {
        let found = self.producers.get(&pid).and_then(|p| {
            p.txns
                .iter()
                .rposition(|t| t.state == State::Open && t.t.producer_epoch == epoch)
                // One of that epoch that ended after the message was sent: a loss held the
                // message back till after its end (its response waited for bytes).
                .or_else(|| {
                    p.txns.iter().rposition(|t| {
                        t.t.producer_epoch == epoch
                            && ended_at(&t.t).is_some_and(|end| at.micros_to(&end) >= 0)
                            && t.t.begin.micros_to(&at) >= 0
                    })
                })
        });
        // A loss held it back till after its transaction was given out.
        self.found_or_begun(found, pid, epoch, at, |p| p.late_message(epoch, at))
    }

    /// The transaction an EndTxn of `pid` at `epoch` asking for `requested` ("commit",
    /// "abort") ends: the latest of that epoch with no EndTxn yet, open or already ended by
    /// the coordinator's markers (a late EndTxn, then rejected), or whose EndTxn asking the
    /// same got no response (this is the client's retry after its request timed out), or,
    /// asked on another connection than `stream` got the first answer on, accepted already
    /// (a retry after that answer was lost to the client: `None` when the transaction was
    /// written already); else the open one, begun now when there is none.
    fn end_txn(
        &mut self,
        pid: i64,
        epoch: i16,
        requested: &str,
        stream: Option<u64>,
        at: Moment,
    ) -> Option<&mut Txn> {
        let found = self.producers.get(&pid).and_then(|p| {
            p.txns.iter().rposition(|t| {
                t.t.producer_epoch == epoch
                    && (t.t.end_requested.is_none()
                        || (t.t.end_response.is_none() && t.t.requested == Some(requested)))
            })
        });
        // The same end asked again after the coordinator accepted it (a client whose request
        // timed out retries it, on a new connection; Kafka answers a retry of a completed end
        // NONE, one being completed CONCURRENT_TRANSACTIONS): the transaction's own, when it
        // is the latest of its epoch (a next transaction at that epoch joins partitions
        // first), or nothing when it was written already. Not a new, empty transaction. On the
        // connection that got the answer it is the next transaction's end (its joining
        // messages lost).
        let retry = found.is_none().then(|| {
            self.producers.get(&pid).map(|p| {
                match p.txns.iter().rposition(|t| t.t.producer_epoch == epoch) {
                    Some(i) => {
                        let t = &p.txns[i];
                        let again = t.t.end_error.as_deref() == Some("NONE")
                            && t.t.requested == Some(requested)
                            && t.client_stream.map(|(i, _)| i) != stream;
                        again.then_some(Some(i))
                    }
                    None => p
                        .last_given
                        .filter(|g| {
                            g.epoch == epoch
                                && g.accepted == Some(requested == "commit")
                                && stream.map_or(u32::MAX, |i| i as u32) != g.end_stream
                        })
                        .map(|_| None),
                }
            })
        });
        match (found, retry.flatten().flatten()) {
            (Some(i), _) | (None, Some(Some(i))) => self.touched(pid, i, at),
            (None, Some(None)) => None,
            (None, None) => self.data_txn(pid, epoch, at),
        }
    }

    /// The transaction a marker of `pid` at `epoch` with `result` belongs to: the latest
    /// ending one of that epoch (or the one before, bumped), else the latest open one, else a
    /// new one known from its markers only.
    fn marker_txn(
        &mut self,
        pid: i64,
        epoch: i16,
        result: &str,
        (topics, admin, stale, resent_at): (
            &[crate::kafka::apis::write_txn_markers::WritableTxnMarkerTopic],
            bool,
            bool,
            Option<i32>,
        ),
        at: Moment,
    ) -> Option<&mut Txn> {
        // ABORT markers sent by an admin client, at the producer's own epoch, only for
        // partitions of a committing transaction whose COMMIT marker was never written: the
        // admin's abort of those partitions (kafka-transactions.sh abort of a hanging
        // transaction), a partial commit, not a new transaction. (The coordinator never
        // aborts a commit it decided: its ABORT at that epoch is the next transaction's.)
        let unmarked_of = |t: &Txn| {
            if !(admin
                && result == "ABORT"
                && t.marker_result == Some("COMMIT")
                && t.t.producer_epoch == epoch
                && topics.iter().any(|x| !x.partition_indexes.is_empty()))
            {
                return false;
            }
            // Its partitions whose COMMIT marker was not written (or that an ABORT already
            // reached), looked up by name: one pass over each list, whatever their sizes.
            let open: HashSet<(&str, i32)> =
                t.t.partitions
                    .iter()
                    .filter(|p| {
                        p.marker.is_none()
                            || (p.marker == Some("COMMIT") && !p.marker_written)
                            || p.marker == Some("ABORT")
                    })
                    .filter_map(|p| Some((p.topic.as_deref()?, p.partition)))
                    .collect();
            topics.iter().all(|x| {
                x.partition_indexes
                    .iter()
                    .all(|&i| open.contains(&(&*kept_name(&x.name), i)))
            })
        };
        // A marker with a stale coordinator epoch (its leader refuses it: a deposed
        // coordinator's re-send of an earlier transaction's marker) is not the result of a
        // transaction whose end the coordinator accepted with the other result.
        let other_than_accepted = |t: &Txn| {
            stale
                && t.t.end_error.as_deref() == Some("NONE")
                && t.t
                    .requested
                    .is_some_and(|r| !r.eq_ignore_ascii_case(result))
        };
        // A stale marker is a transaction's own only when it names one of that transaction's
        // partitions (its own marker sent again), never another's.
        let foreign = |t: &Txn| {
            stale
                && !t.t.partitions.iter().any(|p| {
                    p.topic.as_deref().is_some_and(|name| {
                        topics
                            .iter()
                            .any(|x| x.name == name && x.partition_indexes.contains(&p.partition))
                    })
                })
        };
        let fits = |t: &Txn| {
            t.t.producer_epoch == epoch
                || t.t.marker_producer_epoch == Some(epoch)
                || i32::from(t.t.producer_epoch) + 1 == i32::from(epoch)
        };
        // A new coordinator's re-send of the markers of the transaction last given out (see
        // `Given::resent_by`).
        let resend = self.producers.get(&pid).is_some_and(|p| {
            p.last_given
                .is_some_and(|g| g.resent_by(result, epoch, resent_at, topics))
        });
        let found = self.producers.get(&pid).and_then(|p| {
            // Only the latest committing transaction at this epoch can be the one an admin's
            // ABORT completes (the producer's transactions at one epoch follow each other).
            let committing = p.txns.iter().rposition(|t| {
                t.state == State::Ending
                    && t.marker_result == Some("COMMIT")
                    && t.t.producer_epoch == epoch
            });
            let partial = committing.filter(|&i| unmarked_of(&p.txns[i]));
            let ending = p.txns.iter().enumerate().rposition(|(i, t)| {
                // Any result: an ABORT after an EndTxn asking to commit is an admin's or the
                // coordinator's own abort (the markers decide the outcome).
                t.state == State::Ending
                    && fits(t)
                    && (t.marker_result.is_none_or(|r| r == result) || partial == Some(i))
                    // A commit the coordinator accepted is completed, not aborted by it: ABORT
                    // markers at a bumped epoch are the coordinator's abort of the producer's
                    // next transaction (an admin's abort carries the producer's own epoch).
                    && !(result == "ABORT"
                        && t.t.requested == Some("commit")
                        && t.t.end_error.as_deref() == Some("NONE")
                        && epoch != t.t.producer_epoch)
                    // Under transaction version 1 a client's end keeps its epoch: markers at
                    // the next epoch are the coordinator's abort of the producer's next
                    // transaction (its timeout), not this one's.
                    && !(t.t.transaction_version == Some(1)
                        && t.t.requested.is_some()
                        && t.t.end_error.as_deref() == Some("NONE")
                        && t.t.marker_producer_epoch.is_none()
                        && epoch != t.t.producer_epoch)
                    && !other_than_accepted(t)
                    && !foreign(t)
                    // An end accepted with no partition known waits for markers of its own
                    // result only (see `try_finish`): those of the other are no evidence of
                    // it (another cluster's producer of that id and epoch, a re-send).
                    && !(t.t.partitions.is_empty()
                        && t.marker_result.is_none()
                        && t.t.end_error.as_deref() == Some("NONE")
                        && t.t.requested.is_some_and(|r| !r.eq_ignore_ascii_case(result)))
            });
            // An open transaction ended by no marker of its own; not by a re-send when no
            // message of it was accepted yet (the producer's next transaction, refused
            // CONCURRENT_TRANSACTIONS while the new coordinator completes the last one).
            ending.or_else(|| {
                p.txns.iter().rposition(|t| {
                    t.state == State::Open && fits(t) && !stale && (t.accepted || !resend)
                })
            })
        });
        if found.is_none() && stale {
            // Refused by its leader for every partition (a deposed coordinator's): no
            // transaction of its own.
            return None;
        }
        if found.is_none() && resend {
            // A new coordinator's re-send of the markers of the transaction last given out:
            // its own, not a new one.
            return None;
        }
        // A loss held them back (their response lost) till after their transaction was given
        // out.
        self.found_or_begun(found, pid, epoch, at, |p| p.late_markers(epoch, at))
    }

    /// Transaction `found` of `pid`, or when there is none a new one at `epoch` begun at
    /// `at`, unless `late` says the producer already gave out the one the message belonged
    /// to; noted as touched by the message being read.
    fn found_or_begun(
        &mut self,
        found: Option<usize>,
        pid: i64,
        epoch: i16,
        at: Moment,
        late: impl FnOnce(&Producer) -> bool,
    ) -> Option<&mut Txn> {
        let i = match found {
            Some(i) => i,
            None if self.producers.get(&pid).is_some_and(late) => return None,
            None => self.begin(pid, epoch, at),
        };
        self.touched(pid, i, at)
    }

    /// Transaction `i` of `pid`, noting the message being read (at `at`) as one of its own.
    fn touched(&mut self, pid: i64, i: usize, at: Moment) -> Option<&mut Txn> {
        let step = self.step.unwrap_or(Step {
            at,
            api_name: "",
            message: MessageKind::Request,
        });
        let txn = self.producers.get_mut(&pid)?.txns.get_mut(i)?;
        touch(txn, step, &self.packets);
        Some(txn)
    }

    /// Begins a transaction of `pid` at `epoch`; returns its index in the producer's list.
    fn begin(&mut self, pid: i64, epoch: i16, at: Moment) -> usize {
        self.seq += 1;
        self.open += 1;
        let seq = self.seq;
        // A producer past the bound of those remembered still gets its transaction followed.
        let p = self.producers.entry(pid).or_default();
        let begun = p.known_start == Some(epoch);
        p.txns.push(Txn {
            seq,
            state: State::Open,
            t: Transaction {
                transactional_id: p.transactional_id.clone(),
                producer_id: pid,
                producer_epoch: epoch,
                marker_producer_epoch: None,
                transaction_version: None,
                coordinator: None,
                client_id: None,
                markers_client_id: None,
                markers_from: None,
                transaction_timeout_ms: None,
                outcome: Outcome::Open,
                outcome_from: None,
                requested: None,
                ended_by: None,
                reason: None,
                timed_out: false,
                hanging: false,
                partial_commit: false,
                fenced_by_frame: None,
                end_not_captured: false,
                markers_not_captured: false,
                markers_written_later: false,
                given_up: false,
                begin: at,
                begun_in_capture: begun,
                end_requested: None,
                end_response: None,
                end_error: None,
                markers_sent: None,
                markers_answered: None,
                duration_us: 0,
                end_latency_us: None,
                partitions: Vec::new(),
                partitions_not_listed: 0,
                offsets: Vec::new(),
                errors: Vec::new(),
                frames: Vec::new(),
                frames_not_listed: 0,
                timeline: Vec::new(),
                packets: Vec::new(),
                packets_not_kept: 0,
            },
            last: at,
            client_seen: false,
            accepted: false,
            client_stream: None,
            marker_result: None,
            abort_after_commit: None,
            packets_sorted: 0,
            touched_frame: 0,
            end_request_frame: None,
            marker_requests: Vec::new(),
            marker_sent: Vec::new(),
            unnamed: 0,
            index: None,
        });
        p.txns.len() - 1
    }

    /// The latest transaction of `pid` at `epoch`, whatever its state.
    fn latest(&mut self, pid: i64, epoch: i16) -> Option<&mut Txn> {
        let p = self.producers.get_mut(&pid)?;
        p.txns
            .iter_mut()
            .rev()
            .find(|t| t.t.producer_epoch == epoch)
    }

    /// Drops the latest transaction of `pid` at `epoch` when the request in frame `frame`,
    /// just refused for good, began it and nothing of it was accepted since (no response
    /// said NONE, no end asked for, no marker): a late Produce after the end (with the
    /// leader's check of it, AddPartitionsToTxn `verify_only`, refused too: KIP-890), a fenced
    /// zombie's AddPartitionsToTxn.
    /// Whether it did (the caller then writes a `refused_request` verdict, [`TxnView::defer`]).
    fn discard_if_only(&mut self, pid: i64, epoch: i16, frame: u64) -> bool {
        let Some(p) = self.producers.get_mut(&pid) else {
            return false;
        };
        let Some(i) = p.txns.iter().rposition(|t| t.t.producer_epoch == epoch) else {
            return false;
        };
        let t = &p.txns[i];
        if t.t.frames.first() == Some(&frame)
            && !t.accepted
            && t.t.end_requested.is_none()
            && t.marker_result.is_none()
        {
            remove_txn(&mut p.txns, i);
            self.open = self.open.saturating_sub(1);
            self.discarded += 1;
            return true;
        }
        false
    }

    /// Writes `refused_request` verdict `a` at `loc` after the record of the transaction it
    /// names (its producer id and epoch) when the view still holds one (at most
    /// [`MAX_HELD_VERDICTS`] held in all), else after everything else the message being read
    /// gives out: a verdict follows its transaction.
    fn defer(&mut self, loc: Location, a: Anomaly) {
        let rec = Record {
            loc,
            event: Event::Anomaly(Box::new(a)),
        };
        let held = match &rec.event {
            Event::Anomaly(a) => a.transaction.as_ref().and_then(|t| {
                let p = self.producers.get(&t.producer_id)?;
                let x = p
                    .txns
                    .iter()
                    .rev()
                    .find(|x| x.t.producer_epoch == t.producer_epoch)?;
                Some((t.producer_id, x.seq))
            }),
            _ => None,
        };
        match held {
            Some((pid, seq)) if self.held_verdicts.len() < MAX_HELD_VERDICTS => {
                self.held_verdicts.push((pid, seq, rec));
            }
            _ => self.deferred.push(rec),
        }
    }

    /// The `refused_request` verdict of `what` (`EndTxn asking to commit`, `AddPartitionsToTxn
    /// for orders 2`, ...), a request of producer `pid` at `epoch` sent in `request_frame` and
    /// (its transactional id `tid` when the request names it) refused for good with `code`
    /// (one of [`REFUSED`]) by response `k`, when it was all the
    /// capture held of a transaction (none is written for it): a fenced zombie's request, or
    /// one sent after its transaction ended. Its `transaction` names the producer id and
    /// epoch (with the transactional id the view knows for it): the transaction of that epoch
    /// it was meant for, when the capture holds it.
    fn refused_verdict(
        &self,
        (pid, epoch, tid): (i64, i16, Option<&str>),
        what: &str,
        request_frame: u64,
        code: i16,
        k: &KafkaMessage,
    ) -> Anomaly {
        let p = self.producers.get(&pid);
        let t = TxnRef {
            transactional_id: tid
                .map(str::to_owned)
                .or_else(|| p.and_then(|p| p.transactional_id.clone())),
            producer_id: pid,
            producer_epoch: epoch,
            begin_frame: None,
        };
        let why = match code {
            47 | 90 => {
                "that producer epoch is no longer its transactional id's at the coordinator \
                 (bumped since: by a newer instance's InitProducerId, which fences this one, a \
                 zombie; by the coordinator's abort of a transaction past its timeout; or, \
                 under transaction version 2, by the end of its transaction)"
            }
            49 => {
                "its transactional id no longer maps to that producer id (a newer instance took \
                 it over, or the coordinator expired it)"
            }
            48 => "no transaction of that producer epoch was open (sent after its end)",
            _ => "its principal may not use its transactional id",
        };
        let ended = self
            .recent_written
            .iter()
            .rev()
            .find(|w| (w.0, w.1) == (pid, epoch))
            .map_or(String::new(), |w| {
                format!(
                    "; the transaction of that epoch was written at frame {}",
                    w.2
                )
            });
        Anomaly {
            api_key: Some(k.api_key),
            api_version: Some(k.api_version),
            correlation_id: Some(k.correlation_id),
            request_frame: Some(request_frame),
            message: format!(
                "{}: its {what} (frame {request_frame}) was refused {}: {why}; it begins no \
                 transaction of its own{ended}",
                producer_text(&TxnRef {
                    transactional_id: t
                        .transactional_id
                        .as_deref()
                        .map(|i| truncate(i, 256).to_string()),
                    ..t.clone()
                }),
                error_name(code),
            ),
            transaction: Some(t),
            ..Anomaly::new(AnomalyKind::RefusedRequest, String::new())
        }
    }

    /// Gives out transaction `i` of `pid` when nothing more is expected for it.
    fn try_finish(&mut self, pid: i64, i: usize, out: &mut dyn FnMut(TxnOut)) {
        let Some(p) = self.producers.get(&pid) else {
            return;
        };
        let Some(txn) = p.txns.get(i) else { return };
        if txn.state != State::Ending {
            return;
        }
        let coordinator_node = self.coordinator_node(p);
        let leader_of = |part: &TxnPartition| self.leader_of(part);
        let ended = match (&txn.t.end_requested, &txn.t.end_error) {
            // The client's end: answered.
            (Some(_), Some(_)) => true,
            (Some(_), None) => false,
            // Markers only, none of the client's messages: nothing more to learn.
            (None, _) if !txn.client_seen => txn.marker_result.is_some(),
            // The coordinator's own end: wait for the reason (an InitProducerId may follow).
            (None, _) => false,
        };
        let marked = txn.t.partitions.iter().all(|part| {
            // A marker refused for good on a partition holding its data is not the end: the
            // partition hangs (its verdict is given at the capture's end) unless a marker
            // still comes (an admin's abort, a new coordinator's).
            let answered = part.marker_written
                || part.marker_error_handling == Some(MarkerErrorHandling::Dropped)
                || (part.marker_error_handling == Some(MarkerErrorHandling::Terminal)
                    && !part.holds_data());
            // (Not one whose marker went on the wire: its answer is awaited.)
            let local = part.marker_frame.is_none()
                && coordinator_node.is_some()
                && leader_of(part) == coordinator_node;
            answered || local
        });
        // Offsets sent (AddOffsetsToTxn) but their partition not known yet: its marker is
        // still to come.
        let marked = marked
            && (txn.t.offsets.iter().all(|o| o.add_offsets_frame.is_none())
                || txn.t.partitions.iter().any(|p| p.joined == Joined::Offsets));
        // An end accepted with no partition known (added before the capture began, or in
        // bytes it lost: a client sends no end of a transaction it added nothing to): its
        // markers may still come, and are its own. It waits for them, its producer's next
        // message, or the capture's end.
        let unknown = txn.t.partitions.is_empty()
            && txn.t.offsets.is_empty()
            && txn.marker_result.is_none()
            && txn.t.end_error.as_deref() == Some("NONE");
        let marked = marked && !unknown;
        let rejected =
            txn.t.end_error.as_deref().is_some_and(|e| e != "NONE") && txn.marker_result.is_none();
        if ended && (marked || rejected) {
            let Some(p) = self.producers.get_mut(&pid) else {
                return;
            };
            let t = remove_txn(&mut p.txns, i);
            self.open = self.open.saturating_sub(1);
            self.give(t, None, out);
        }
    }

    /// A message of transaction `seq` of `pid` was accepted by its coordinator (its
    /// AddPartitionsToTxn, AddOffsetsToTxn or EndTxn; a Produce, which the client sends only
    /// once its partition was added, and a leader checks with the coordinator under KIP-890):
    /// the coordinator answers CONCURRENT_TRANSACTIONS to those while an earlier transaction
    /// of the producer completes, so every earlier one that ended is complete, its markers
    /// written (if off this capture's wire: a capture taken on the client's host), and is
    /// given out.
    fn complete_earlier(&mut self, pid: i64, seq: u64, out: &mut dyn FnMut(TxnOut)) {
        let Some(p) = self.producers.get_mut(&pid) else {
            return;
        };
        if !p
            .txns
            .iter()
            .any(|t| t.seq < seq && t.state == State::Ending)
        {
            return;
        }
        let mut done = Vec::new();
        let mut i = 0;
        while i < p.txns.len() {
            if p.txns[i].seq < seq && p.txns[i].state == State::Ending {
                done.push(remove_txn(&mut p.txns, i));
            } else {
                i += 1;
            }
        }
        for mut t in done {
            written_later(&mut t);
            self.open = self.open.saturating_sub(1);
            self.give(t, None, out);
        }
    }

    /// The leader of a transaction's partition: the broker that wrote its marker, else the
    /// one noted when the transaction ended (its markers went to that broker, or its
    /// coordinator wrote them itself: a later Metadata moving the partition does not change
    /// that), else the last a Metadata response gave.
    fn leader_of(&self, part: &TxnPartition) -> Option<i32> {
        // The broker that wrote its marker, when one did: it led the partition then.
        let wrote = part
            .marker_broker
            .as_ref()
            .filter(|_| part.marker_written)
            .and_then(|b| self.node_of(b.endpoint()));
        wrote.or(part.leader).or_else(|| {
            part.topic
                .as_ref()
                .and_then(|t| self.leaders.get(&(t.clone(), part.partition)).copied())
        })
    }

    /// Notes that transaction `seq` of `pid` ended at capture second `secs`, and the leaders
    /// of its partitions then.
    fn ended(&mut self, pid: i64, seq: u64, secs: i64) {
        if let Some(t) = self
            .producers
            .get_mut(&pid)
            .and_then(|p| p.txns.iter_mut().find(|t| t.seq == seq))
        {
            for part in &mut t.t.partitions {
                if part.leader.is_none() {
                    part.leader = part
                        .topic
                        .as_ref()
                        .and_then(|t| self.leaders.get(&(t.clone(), part.partition)).copied());
                }
            }
        }
        self.linger.insert((secs, seq, pid));
        // Most of what it notes finishes before its linger passes (its last marker answered)
        // and is skipped when swept; when they pile up within one capture second (no sweep
        // comes), those are dropped, so that it holds about twice what is still followed.
        let bound = 2 * (self.open + 1_024);
        if self.linger.len() > bound {
            let producers = &self.producers;
            self.linger.retain(|&(_, seq, pid)| {
                producers
                    .get(&pid)
                    .is_some_and(|p| p.txns.iter().any(|t| t.seq == seq))
            });
        }
    }

    /// Gives out ended transactions idle for [`LINGER_SECS`], but for one with data on a
    /// partition led elsewhere whose marker was not written (none yet, refused for good, or
    /// never answered; a marker may still come: late, or an admin's abort): it waits for the
    /// end of the capture, where hanging is judged. Looks only at the transactions
    /// whose linger has passed, oldest first.
    fn sweep(&mut self, now: i64, out: &mut dyn FnMut(TxnOut)) {
        let mut done = Vec::new();
        while let Some(&(secs, seq, pid)) = self.linger.first() {
            if secs.saturating_add(LINGER_SECS) > now {
                break;
            }
            self.linger.pop_first();
            let coordinator_node = self
                .producers
                .get(&pid)
                .and_then(|p| self.coordinator_node(p));
            let Some(p) = self.producers.get(&pid) else {
                continue;
            };
            let Some(i) = p.txns.iter().position(|t| t.seq == seq) else {
                continue; // finished meanwhile
            };
            let t = &p.txns[i];
            if t.state != State::Ending {
                continue;
            }
            if t.last.ts.secs > secs {
                // Active since: wait from its last message.
                self.linger.insert((t.last.ts.secs, seq, pid));
                continue;
            }
            // A partition holding its data, led elsewhere, whose marker never came, was
            // refused for good or was never answered: it is kept to the capture's end, where
            // hanging is judged (and an admin's abort of it may still come).
            let awaited = coordinator_node.is_some()
                && t.t.partitions.iter().any(|part| {
                    part.holds_data()
                        && !part.marker_written
                        && part.marker_error_handling != Some(MarkerErrorHandling::Dropped)
                        && self
                            .leader_of(part)
                            .is_some_and(|l| Some(l) != coordinator_node)
                });
            // Its client's EndTxn unanswered: the client asks again after its request
            // timeout (30 s by default), which answers it. A marker sent and not answered on
            // the wire: a later message of the producer may prove it written
            // (`complete_earlier`).
            let unanswered = t.t.end_requested.is_some() && t.t.end_response.is_none()
                || t.t.partitions.iter().any(|part| {
                    part.marker_frame.is_some()
                        && part.marker_response_frame.is_none()
                        && !part.marker_written
                        && part.marker_error.is_none()
                });
            if awaited || unanswered {
                continue; // to the end of the capture
            }
            if let Some(p) = self.producers.get_mut(&pid) {
                done.push(remove_txn(&mut p.txns, i));
            }
        }
        done.sort_by_key(|t| t.seq);
        for t in done {
            self.open = self.open.saturating_sub(1);
            self.give(t, None, out);
        }
    }

    /// Past [`MAX_OPEN`]: gives out the least recently active tenth of the transactions
    /// followed, as they stand (one sort for many, so that a flood of transactions costs
    /// O(n log n)), with a `transaction_limit` anomaly at the 1st, 2nd, 4th ... such round.
    fn give_out_oldest(&mut self, out: &mut dyn FnMut(TxnOut)) {
        let mut order: Vec<(i64, u32, u64, i64)> = self
            .producers
            .iter()
            .flat_map(|(pid, p)| {
                p.txns
                    .iter()
                    .map(move |t| (t.last.ts.secs, t.last.ts.nanos, t.seq, *pid))
            })
            .collect();
        order.sort_unstable();
        order.truncate((MAX_OPEN / 10).max(1));
        self.given_out_early += 1;
        let round = self.given_out_early;
        let mut first = true;
        for (_, _, seq, pid) in order {
            let Some(mut t) = self.take(pid, seq) else {
                continue;
            };
            t.t.given_up = true;
            if first && round.is_power_of_two() {
                let loc = self.last.unwrap_or(Location {
                    ts: t.last.ts,
                    frame: t.last.frame,
                    stream: None,
                    tunnel: None,
                });
                let mut a = Anomaly::new(
                    AnomalyKind::TransactionLimit,
                    format!(
                        "more than {MAX_OPEN} transactions were open at once: the least \
                         recently active {} were written as they stood (round {round}; \
                         reported at 1, 2, 4, 8, ...)",
                        MAX_OPEN / 10
                    ),
                );
                a.transaction = Some(txn_ref(&t.t));
                out(TxnOut::anomaly(
                    Location {
                        stream: None,
                        ..loc
                    },
                    a,
                ));
            }
            first = false;
            self.give(t, None, out);
        }
    }

    /// Writes a transaction's record, then its verdicts: `fenced_producer` when an
    /// InitProducerId fenced it, and at the capture's end (`end`) `hanging_transaction` for
    /// each partition led by another broker than its coordinator whose data got no marker,
    /// once its end was asked for or its timeout passed.
    fn give(&mut self, txn: Txn, end: Option<Location>, out: &mut dyn FnMut(TxnOut)) {
        let after: Vec<Record> = if self.held_verdicts.is_empty() {
            Vec::new()
        } else {
            let (pid, seq) = (txn.t.producer_id, txn.seq);
            let (mine, others) = std::mem::take(&mut self.held_verdicts)
                .into_iter()
                .partition(|v| (v.0, v.1) == (pid, seq));
            self.held_verdicts = others;
            mine.into_iter().map(|v| v.2).collect()
        };
        let coordinator_node = self
            .producers
            .get(&txn.t.producer_id)
            .and_then(|p| self.coordinator_node(p));
        let unnamed = txn.unnamed;
        let partial = txn.abort_after_commit.clone();
        if let (Some(end), Some(p)) = (ended_at(&txn.t), self.producers.get_mut(&txn.t.producer_id))
        {
            p.last_given = Some(Given {
                epoch: txn.t.producer_epoch,
                accepted: txn
                    .t
                    .requested
                    .filter(|_| txn.t.end_error.as_deref() == Some("NONE"))
                    .map(|r| r == "commit"),
                end_stream: txn.client_stream.map_or(u32::MAX, |(i, _)| i as u32),
                end: end.frame,
                given_after: self.last.map_or(0, |l| {
                    u32::try_from(l.frame.saturating_sub(end.frame)).unwrap_or(u32::MAX)
                }),
                marker: txn.marker_result.map(|r| r == "COMMIT"),
                marker_epoch: txn.t.marker_producer_epoch.unwrap_or(txn.t.producer_epoch),
                marker_coordinator_epoch: txn
                    .t
                    .partitions
                    .iter()
                    .filter_map(|p| p.coordinator_epoch)
                    .max()
                    .unwrap_or(i32::MAX),
                partitions: if txn.t.partitions_not_listed > 0 || txn.unnamed > 0 {
                    u32::MAX
                } else {
                    txn.t.partitions.iter().fold(0, |bits, p| {
                        bits | p
                            .topic
                            .as_deref()
                            .map_or(u32::MAX, |t| partition_bit(t, p.partition))
                    })
                },
            });
        }
        let r = self.close(txn, end);
        if self.recent_written.len() >= RECENT_WRITTEN {
            self.recent_written.pop_front();
        }
        self.recent_written.push_back((
            r.transaction.producer_id,
            r.transaction.producer_epoch,
            r.loc.frame,
        ));
        let not_listed = r.transaction.partitions_not_listed;
        if not_listed > 0 {
            let why = if unnamed == 0 {
                format!("covered more than {MAX_PARTITIONS} partitions: the others are counted")
            } else if unnamed >= not_listed {
                format!(
                    "touched {not_listed} partition{} of topics whose names the memory budget \
                     did not keep: {} counted",
                    if not_listed == 1 { "" } else { "s" },
                    if not_listed == 1 { "it is" } else { "they are" }
                )
            } else {
                format!(
                    "covered more than {MAX_PARTITIONS} partitions, and {unnamed} of topics \
                     whose names the memory budget did not keep: those are counted"
                )
            };
            self.limit_reached(
                0,
                format!(
                    "{} {why} in partitions_not_listed (reported once)",
                    describe(&r.transaction)
                ),
                Some(txn_ref(&r.transaction)),
                out,
            );
        }
        let t = &r.transaction;
        let mut verdicts = Vec::new();
        if t.reason == Some(Reason::Fenced) {
            let by = t
                .fenced_by_frame
                .map_or(String::new(), |f| format!(" in frame {f}"));
            verdicts.push(Anomaly::new(
                AnomalyKind::FencedProducer,
                format!(
                    "{} was open when an InitProducerId for its transactional id{by} fenced its \
                     producer; the coordinator aborts it{}",
                    describe(t),
                    if t.outcome == Outcome::Aborted && t.markers_sent.is_some() {
                        " (its ABORT markers are in the capture)"
                    } else {
                        ""
                    },
                ) + &closed_at(&r),
            ));
        }
        if t.outcome == Outcome::Aborted
            && t.requested == Some("commit")
            && t.end_error.as_deref() == Some("NONE")
            && t.markers_sent.is_some()
        {
            let by = t.markers_client_id.as_deref().map_or(String::new(), |c| {
                // At most 100 characters of a client id (it may be 32,767 bytes).
                let c: String = c.chars().take(100).collect();
                format!(" (sent by {c})")
            });
            verdicts.push(Anomaly::new(
                AnomalyKind::AcceptedCommitAborted,
                format!(
                    "{}: the coordinator accepted its EndTxn asking to commit (frame {}), then \
                     ABORT markers{by} came in frame {}: its client was told it committed, and \
                     its records were aborted (Kafka's coordinator completes a commit it \
                     accepted: {})",
                    describe(t),
                    t.end_response.map_or(0, |m| m.frame),
                    t.markers_sent.map_or(0, |m| m.frame),
                    if t.markers_client_id.as_deref().is_some_and(is_admin_client) {
                        "an admin's kafka-transactions.sh abort"
                    } else {
                        "an admin's kafka-transactions.sh abort, or a coordinator that lost its \
                         state"
                    }
                ),
            ));
        }
        if t.outcome == Outcome::Committed
            && t.requested == Some("abort")
            && t.end_error.as_deref() == Some("NONE")
            && t.partitions
                .iter()
                .any(|p| p.marker == Some("COMMIT") && p.marker_written)
        {
            let by = t.markers_client_id.as_deref().map_or(String::new(), |c| {
                let c: String = c.chars().take(100).collect();
                format!(" (sent by {c})")
            });
            let frame = t
                .partitions
                .iter()
                .filter(|p| p.marker == Some("COMMIT") && p.marker_written)
                .filter_map(|p| p.marker_frame)
                .min()
                .unwrap_or(0);
            verdicts.push(Anomaly::new(
                AnomalyKind::AcceptedAbortCommitted,
                format!(
                    "{}: the coordinator accepted its EndTxn asking to abort (frame {}), and \
                     COMMIT markers{by} were written (frame {frame}): its client gave it up, and \
                     its records were committed (Kafka's coordinator never commits a transaction \
                     it accepted to abort: a coordinator that lost its state, another \
                     cluster's producer with the same id and epoch in the capture, or damaged \
                     bytes)",
                    describe(t),
                    t.end_response.map_or(0, |m| m.frame),
                ),
            ));
        }
        let aborted_parts: Vec<&TxnPartition> = t
            .partitions
            .iter()
            .filter(|p| p.marker == Some("ABORT"))
            .collect();
        if t.partial_commit && !aborted_parts.is_empty() {
            // A partial commit: COMMIT markers for some partitions, ABORT for others (an
            // admin's abort of the partitions whose COMMIT marker never came).
            let names: Vec<String> = aborted_parts
                .iter()
                .take(5)
                .map(|p| {
                    let topic: String = p
                        .topic
                        .as_deref()
                        .unwrap_or("?")
                        .chars()
                        .take(100)
                        .collect();
                    format!("{topic} {}", p.partition)
                })
                .collect();
            let more = aborted_parts.len().saturating_sub(names.len());
            let frame = aborted_parts
                .iter()
                .filter_map(|p| p.marker_frame)
                .min()
                .unwrap_or(0);
            let committed = t
                .partitions
                .iter()
                .filter(|p| p.marker == Some("COMMIT"))
                .count();
            let by = partial
                .as_ref()
                .and_then(|(_, c)| c.as_deref())
                .map_or(String::new(), |c| {
                    let c: String = c.chars().take(100).collect();
                    format!(" (sent by {c})")
                });
            let frame = partial.as_ref().map_or(frame, |(m, _)| m.frame);
            verdicts.push(Anomaly::new(
                AnomalyKind::AcceptedCommitAborted,
                format!(
                    "{}: committed on {committed} partition{}, but ABORT markers{by} came for \
                     {}{} in frame {frame}: a partial commit, those partitions' records were \
                     aborted while the rest were committed{}",
                    describe(t),
                    if committed == 1 { "" } else { "s" },
                    names.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    },
                    if t.requested == Some("commit") && t.end_error.as_deref() == Some("NONE") {
                        format!(
                            " (the coordinator accepted its EndTxn asking to commit in frame {}: \
                             its client was told it committed)",
                            t.end_response.map_or(0, |m| m.frame)
                        )
                    } else {
                        String::new()
                    }
                ),
            ));
        }
        // Past its timeout by more than the coordinator's sweep for timed-out transactions
        // (Kafka's transaction.abort.timed.out.transaction.cleanup.interval.ms, 10 s by
        // default: [`LINGER_SECS`]) at the capture's end: the coordinator should have aborted
        // it by then (within the sweep it may simply not have looked yet).
        let overdue = end.is_some_and(|e| {
            t.timed_out
                && t.transaction_timeout_ms.is_some_and(|ms| {
                    t.begin.micros_to(&Moment::of(&e))
                        > i64::from(ms.max(0)) * 1_000 + LINGER_SECS * 1_000_000
                })
        });
        // Judged hanging but for markers the capture could not show (see below).
        let mut not_captured = false;
        // Whether the capture shows its coordinator's markers: a WriteTxnMarkers request from
        // its address, or from its node's marker channel (`broker-N-txn-marker-sender`). Else
        // (a client's host, or another broker's) a missing marker may have gone unseen.
        let markers_visible = t
            .coordinator
            .as_ref()
            .is_some_and(|b| self.marker_senders.0.contains(&b.ip))
            || coordinator_node.is_some_and(|n| self.marker_senders.1.contains(&n));
        if let Some(e) = end {
            // No end seen, but a last stable offset passed its batches on a partition (it ended
            // unseen: `stable_past_frame`), and its timeout and the coordinator's sweep passed
            // since it began: by then every marker should have come, whichever end it had (an
            // EndTxn not captured, or the coordinator's abort). The first such frame.
            let past_timeout = t.transaction_timeout_ms.is_some_and(|ms| {
                t.begin.micros_to(&Moment::of(&e))
                    > i64::from(ms.max(0)) * 1_000 + LINGER_SECS * 1_000_000
            });
            let unseen_end = if t.end_requested.is_none() && past_timeout {
                t.partitions
                    .iter()
                    .filter_map(|p| p.stable_past_frame)
                    .min()
            } else {
                None
            };
            // Its end asked for long enough before the capture ended for the markers to have
            // come ([`LINGER_SECS`]), or its timeout and the coordinator's sweep passed, or it
            // ended unseen.
            let asked = t
                .end_requested
                .is_some_and(|m| m.micros_to(&Moment::of(&e)) >= LINGER_SECS * 1_000_000)
                || overdue
                || unseen_end.is_some();
            for p in &t.partitions {
                let remote = p.leader.is_some()
                    && coordinator_node.is_some()
                    && p.leader != coordinator_node;
                // No marker, or one refused for good (a stale coordinator's) or left out of
                // its response (sent on the wire: to another broker): the partition still
                // waits for its marker.
                let left_out = p.marker_left_out && !p.marker_written;
                // (A marker whose request the capture lost, answered NONE, was written.)
                let unmarked = (p.marker.is_none() && !p.marker_written)
                    || left_out
                    || (!p.marker_written
                        && p.marker_error_handling == Some(MarkerErrorHandling::Terminal));
                // (A consumer's last stable offset past its batches: written, unseen.)
                let unmarked = unmarked && p.stable_past_frame.is_none();
                if !(asked && (remote || left_out) && p.holds_data() && unmarked) {
                    continue;
                }
                // With no WriteTxnMarkers from its coordinator in the capture (a client's
                // host, or another broker's: markers go between brokers unseen), a missing
                // marker says nothing, unless a read_committed consumer's last stable offset
                // stayed on its batches after the marker was due (its end asked for, or its
                // timeout and the coordinator's sweep passed, [`LINGER_SECS`] before), from
                // the leader where Metadata named it by its address (not another cluster's
                // broker of a topic of that name).
                // Held by this transaction: at its batches there (a last stable offset is the
                // first offset of the partition's earliest open transaction; one below its
                // first batch is another's).
                let held = p
                    .topic
                    .clone()
                    .zip(p.first_offset)
                    .zip(p.last_offset.or(p.first_offset))
                    .and_then(|((topic, first), last)| {
                        let s = self.stable_offsets.get(&(topic, p.partition))?;
                        let due = match &t.end_requested {
                            Some(m) => m.micros_to(&s.seen) >= LINGER_SECS * 1_000_000,
                            None => t.transaction_timeout_ms.is_some_and(|ms| {
                                t.begin.micros_to(&s.seen)
                                    > i64::from(ms.max(0)) * 1_000 + LINGER_SECS * 1_000_000
                            }),
                        };
                        ((first..=last).contains(&s.lso) && due && may_be_leader(p, s.broker))
                            .then_some(s)
                    });
                if !markers_visible && !left_out && held.is_none() {
                    not_captured = true;
                    continue;
                }
                let since = match (&t.end_requested, unseen_end) {
                    (Some(m), _) => format!(
                        "its end was asked for in frame {} ({} before the capture ended)",
                        m.frame,
                        human_us(m.micros_to(&Moment::of(&e)))
                    ),
                    (None, Some(f)) => format!(
                        "it ended unseen (a read_committed Fetch response in frame {f} gave \
                         another of its partitions a last_stable_offset past its batches) \
                         and its transaction_timeout_ms ({} ms) and the coordinator's \
                         {LINGER_SECS} s sweep passed since it began",
                        t.transaction_timeout_ms.unwrap_or(0)
                    ),
                    (None, None) => format!(
                        "it was open past its transaction_timeout_ms ({} ms) and the \
                         coordinator's {LINGER_SECS} s sweep for timed-out transactions",
                        t.transaction_timeout_ms.unwrap_or(0)
                    ),
                };
                // Its COMMIT decided (an accepted EndTxn asking to commit, or a COMMIT
                // marker written elsewhere): an admin's abort of this partition would make
                // it committed in part.
                // Only where another of its partitions got its COMMIT (or is led by the
                // coordinator, marked without a message) would that be in part; else the
                // abort throws the committed records away.
                let committed = t.outcome == Outcome::Committed;
                // (A committed transaction's markers are all COMMIT: one written whose
                // request the capture lost counts; one of a partition without its data
                // commits nothing of it.)
                let elsewhere = t.partitions.iter().any(|q| {
                    !std::ptr::eq(q, p)
                        && q.holds_data()
                        && ((q.marker_written && q.marker != Some("ABORT")) || q.marker_local)
                });
                let told = t.requested == Some("commit") && t.end_error.as_deref() == Some("NONE");
                // Which broker to move it from: its coordinator, where known (a restart
                // of the broker leading its `__transaction_state` partition moves it).
                let coordinator = t.coordinator.as_ref().map_or(String::new(), |b| {
                    format!(
                        " ({}{}: restart it)",
                        b.node_id.map_or(String::new(), |n| format!("node {n} at ")),
                        address_text(b.endpoint())
                    )
                });
                let moved = format!(
                    "move its coordinator{coordinator}, whose successor sends the markers again, \
                     once kafka-transactions.sh describe shows it still PrepareCommit"
                );
                let fix = match (committed, elsewhere, told) {
                    // Ended unseen: a marker of another partition was written, of a result
                    // the capture does not hold.
                    (false, ..) if unseen_end.is_some() => format!(
                        "its end was decided unseen, commit or abort: kafka-transactions.sh \
                         describe tells which; if a commit, {moved} (an admin abort would \
                         commit it in part); if an abort, kafka-transactions.sh abort"
                    ),
                    // Its abort by an admin, with what the command needs where known
                    // (the partition and its first batch's offset; a broker to ask).
                    (false, ..) => match (p.topic.as_deref(), p.first_offset) {
                        (Some(topic), Some(offset)) if !topic.chars().any(char::is_control) => {
                            format!(
                                "the fix: kafka-transactions.sh --bootstrap-server {} abort \
                                 --topic {} --partition {} --start-offset {offset} (after \
                                 kafka-transactions.sh describe confirms it still hangs)",
                                p.leader_address.as_deref().unwrap_or("BROKER:PORT"),
                                shell_quoted(truncate(topic, 256)),
                                p.partition
                            )
                        }
                        _ => "the fix: kafka-transactions.sh find-hanging / abort".into(),
                    },
                    (true, true, _) => {
                        format!("commit decided: {moved}; an admin abort would commit it in part")
                    }
                    (true, false, true) => format!(
                        "commit decided: {moved}; an admin abort would lose what its client \
                         was told was committed"
                    ),
                    (true, false, false) => format!(
                        "commit decided: {moved}; an admin abort would lose committed records"
                    ),
                };
                let led = p
                    .leader
                    .map_or(String::new(), |l| format!(" (led by node {l})"));
                // What it got instead of a written marker.
                let got = match (p.marker, p.marker_frame) {
                    (Some(m), Some(f)) if left_out => format!(
                        "its {m} marker, sent in frame {f}, was left out of its response: \
                         not written"
                    ),
                    (Some(m), Some(f)) => {
                        format!("its {m} marker, sent in frame {f}, was refused for good")
                    }
                    _ => "got no marker".to_string(),
                };
                // What it holds, and who waits for it: a group's offsets committed
                // into `__consumer_offsets` (no batch of the producer's own there) hold
                // that group's offset fetches.
                let (holds, waits) = if p.batches == 0 && p.offsets_committed {
                    let group = t
                        .offsets
                        .iter()
                        .filter(|o| o.commit_frame.is_some())
                        .find(|o| {
                            self.offsets_partitions.is_some_and(|n| {
                                offsets_partition_of(&o.group_id, n) == p.partition
                            })
                        });
                    (
                        group.map_or("its group's committed offsets".to_string(), |o| {
                            format!(
                                "the offsets of group {} its TxnOffsetCommit committed{}",
                                truncate(&o.group_id, 256),
                                o.commit_frame
                                    .map_or(String::new(), |f| format!(" in frame {f}"))
                            )
                        }),
                        "the group's consumers fetching its committed offsets get \
                         UNSTABLE_OFFSET_COMMIT, and read_committed consumers of \
                         __consumer_offsets stay behind its last stable offset",
                    )
                } else {
                    (
                        format!(
                            "{} transactional record{}",
                            p.records,
                            if p.records == 1 { "" } else { "s" }
                        ),
                        "read_committed consumers of it stay behind its last stable offset",
                    )
                };
                verdicts.push(Anomaly::new(
                    AnomalyKind::HangingTransaction,
                    format!(
                        "{}: {} {}{led} holds {holds} and {got} by the end of the capture, \
                         although {since}; {waits} ({fix}){}",
                        describe(t),
                        p.topic.as_deref().or(p.topic_id.as_deref()).unwrap_or("?"),
                        p.partition,
                        match held {
                            // On a client's host: a read_committed consumer's offset held
                            // short of its last batch says the marker did not come.
                            Some(s) if !markers_visible => format!(
                                " (the capture holds no WriteTxnMarkers from its coordinator, as \
                                 on a client's host, but read_committed Fetch responses kept \
                                 the last_stable_offset at {}, on its batches, from frame {} to \
                                 frame {}: no marker came)",
                                s.lso, s.since.frame, s.seen.frame
                            ),
                            _ => String::new(),
                        },
                    ),
                ));
            }
        }
        let mut r = r;
        // Judged at the capture's end only (one written early, for the budget, is not).
        // Hanging when a partition is (its `hanging_transaction` verdict): open past its
        // timeout and the sweep, or its end asked for long enough, with data on a partition
        // another broker than the coordinator leads and no marker for it. One whose
        // partitions its coordinator leads is not (their markers need no message).
        r.transaction.hanging = end.is_some()
            && verdicts
                .iter()
                .any(|a| a.kind == AnomalyKind::HangingTransaction);
        // (A hanging one's verdicts name the partitions that hang; no "not judged" beside it.)
        r.transaction.markers_not_captured = not_captured && !r.transaction.hanging;
        let loc = r.loc;
        let tref = txn_ref(&r.transaction);
        self.note_unsettled(&r.transaction, &tref, loc.frame);
        out(TxnOut::Transaction(Box::new(r)));
        for mut a in verdicts {
            a.transaction = Some(tref.clone());
            out(TxnOut::anomaly(loc, a));
        }
        for rec in after {
            out(TxnOut::Anomaly(rec));
        }
    }

    /// Remembers the partitions transaction `t` (`tref`, written in frame `frame`) leaves
    /// holding their last stable offset ([`holds_stable_offset`]), when read_committed Fetch
    /// responses were seen and there is room (each entry charged to the budget).
    fn note_unsettled(&mut self, t: &Transaction, tref: &TxnRef, frame: u64) {
        if self.stable_offsets.is_empty() {
            return;
        }
        let mut tid: Option<Option<Arc<str>>> = None;
        for p in t.partitions.iter().filter(|p| holds_stable_offset(p)) {
            let (Some(topic), Some(first_offset)) = (&p.topic, p.first_offset) else {
                continue;
            };
            let Some(topic) = self.intern(topic) else {
                continue;
            };
            let key = (topic, p.partition);
            let known = self.unsettled.contains_key(&key);
            if !known && self.unsettled.len() >= MAX_REMEMBERED {
                continue;
            }
            if !self.remember(64 + std::mem::size_of::<Unsettled>()) {
                continue;
            }
            let transactional_id = match &tid {
                Some(i) => i.clone(),
                None => {
                    let i = tref
                        .transactional_id
                        .as_deref()
                        .and_then(|i| self.intern(i));
                    tid = Some(i.clone());
                    i
                }
            };
            let list = self.unsettled.entry(key).or_default();
            if list.len() >= UNSETTLED_PER_PARTITION {
                list.remove(0);
            }
            list.push(Unsettled {
                first_offset,
                producer_id: tref.producer_id,
                producer_epoch: tref.producer_epoch,
                transactional_id,
                written_frame: frame,
                begin_frame: tref.begin_frame.unwrap_or(0),
            });
        }
    }

    /// Fills in what a transaction's messages imply and makes its record; `end` is the
    /// capture's end when it is given out there.
    fn close(&self, txn: Txn, end: Option<Location>) -> TransactionRecord {
        let Txn {
            mut t,
            last,
            client_seen,
            marker_result,
            client_stream,
            ..
        } = txn;
        let p = self.producers.get(&t.producer_id);
        // Known from its markers alone: its first message seen is not its beginning.
        if !client_seen {
            t.begun_in_capture = false;
        }
        // No end seen, and its client lost bytes toward its coordinator after its last
        // message: its end may have been there (not open, then, but not known).
        if t.requested.is_none()
            && marker_result.is_none()
            && t.fenced_by_frame.is_none()
            && (lost_after(
                &self.client_losses,
                client_stream.or(p.and_then(|p| p.client_stream)),
                last,
            ) || budget_lost_after(self.budget_loss, last))
        {
            t.end_not_captured = true;
        }
        if let Some(p) = p {
            if t.transactional_id.is_none() {
                t.transactional_id.clone_from(&p.transactional_id);
            }
            t.client_id.clone_from(&p.client_id);
            t.transaction_timeout_ms = p.timeout_ms;
            // Known from its markers alone, sent from another host than the producer's last
            // coordinator (its successor after a failover, or an admin client): that
            // coordinator is not known to be its own (`markers_from` says who sent them).
            let elsewhere = !client_seen
                && t.markers_from
                    .is_some_and(|m| p.coordinator.is_none_or(|c| c.ip != m.ip));
            if !elsewhere {
                let node_id = self.coordinator_node(p);
                t.coordinator = p.coordinator.map(|e| Broker {
                    node_id,
                    ..Broker::at(e)
                });
            }
        }
        // Whence a last stable offset past a partition's batches shows its marker
        // written (below): its end asked for, or, with no end seen, its last message.
        let stable_since = t.end_requested.or((t.requested.is_none()
            && marker_result.is_none()
            && t.fenced_by_frame.is_none())
        .then_some(last));
        for part in &mut t.partitions {
            // Its leader when the transaction ended (noted then), else the last known.
            part.leader = self.leader_of(part);
            part.leader_address = part
                .leader
                .and_then(|n| self.node_addresses.get(&n).cloned());
            if let Some(b) = &mut part.marker_broker {
                b.node_id = self.node_of(b.endpoint());
            }
            // A read_committed consumer's last stable offset past its batches: its
            // marker was written, whether or not the capture saw it. An offset first seen
            // after its end was asked for, or, with no end seen, after its last message (then
            // it ended unseen: aborted by its coordinator past its timeout, or its EndTxn not
            // captured), not one of a topic of that name before it was made again; from the
            // partition's leader when Metadata named it (not another cluster's broker: a
            // mirroring host reads a topic of that name from another cluster).
            if !part.marker_written && holds_stable_offset(part) {
                if let Some(asked) = stable_since {
                    // Past its last batch there (the transaction's messages may join two of
                    // one producer epoch when an end was lost).
                    let last = part.last_offset.or(part.first_offset);
                    // (A leader named by a host name, as in Kubernetes, cannot be told from
                    // the Fetch's address: taken as its.)
                    // (The leader's address, where Metadata named it by one.)
                    let verified = leader_ip_address(part).is_some();
                    let leader_ok = |broker: Option<Endpoint>| may_be_leader(part, broker);
                    // The first response to pass its last batch there: the one watched for
                    // after it was answered, or the partition's first if its offset already
                    // passed it; else the offset's last change, if past it. An earlier one
                    // counts only from the leader Metadata named by its address, or where
                    // the offset's last change passes it too (one response of another
                    // cluster's broker of a topic of that name does not settle it).
                    let stable = part.topic.clone().zip(last).and_then(|(topic, last)| {
                        Some((self.stable_offsets.get(&(topic, part.partition))?, last))
                    });
                    let still = stable.is_some_and(|(s, last)| s.lso > last);
                    let earlier_ok = |b: Option<Endpoint>| leader_ok(b) && (verified || still);
                    let watched = part
                        .stable_passed
                        .filter(|(m, b)| asked.micros_to(m) >= 0 && earlier_ok(*b));
                    let passed = watched.or_else(|| {
                        let (s, last) = stable?;
                        let (lso, since, broker) = s.first;
                        if lso > last && asked.micros_to(&since) >= 0 && earlier_ok(broker) {
                            return Some((since, broker));
                        }
                        (s.lso > last && asked.micros_to(&s.since) >= 0 && leader_ok(s.broker))
                            .then_some((s.since, s.broker))
                    });
                    part.stable_past_frame = passed.map(|(m, _)| m.frame);
                    part.stable_passed = passed;
                }
            }
        }
        if let Some(p) = p {
            // Its producer's InitProducerId (which transactional id it is, its timeout).
            t.packets.extend_from_slice(&p.init_packets);
        }
        let accepted = t.end_error.as_deref() == Some("NONE");
        t.outcome = match (marker_result, t.requested, accepted) {
            (Some("COMMIT"), _, _) => Outcome::Committed,
            (Some(_), _, _) => Outcome::Aborted,
            (None, Some("commit"), true) => Outcome::Committed,
            (None, Some(_), true) => Outcome::Aborted,
            (None, _, _) if t.fenced_by_frame.is_some() => Outcome::Aborted,
            // Ended (markers went out), its result not captured.
            (None, None, _) if t.partitions.iter().any(|p| p.marker_request_lost) => {
                Outcome::Unknown
            }
            (None, None, _) if t.end_not_captured => Outcome::Unknown,
            // Ended unseen: a last stable offset passed its batches after its last message.
            (None, None, _) if t.partitions.iter().any(|p| p.stable_past_frame.is_some()) => {
                Outcome::Unknown
            }
            (None, Some(_), false) => Outcome::Unknown,
            (None, None, _) if t.begun_in_capture => Outcome::Open,
            (None, None, _) => Outcome::Unknown,
        };
        t.outcome_from = match (marker_result, accepted) {
            (Some(_), _) => Some(OutcomeFrom::Markers),
            (None, true) if t.requested.is_some() => Some(OutcomeFrom::EndTxn),
            (None, _) if t.outcome == Outcome::Aborted => Some(OutcomeFrom::Fencing),
            _ => None,
        };
        // A partition its coordinator leads gets its marker with no message, once the
        // transaction ended. Led by the coordinator's node id, and (where the leader's address
        // is an IP address) at its address: node ids of another cluster in the capture are
        // not its.
        let ended = matches!(t.outcome, Outcome::Committed | Outcome::Aborted);
        let coordinator = t.coordinator.clone();
        for part in &mut t.partitions {
            let at_coordinator = coordinator.as_ref().is_some_and(|c| {
                let address = part
                    .leader_address
                    .as_deref()
                    .and_then(|a| a.parse::<std::net::SocketAddr>().ok());
                c.node_id.is_some()
                    && c.node_id == part.leader
                    && address.is_none_or(|a| a.ip() == c.ip && a.port() == c.port)
            });
            part.marker_local = ended
                && at_coordinator
                && part.marker.is_none()
                && part.marker_attempts == 0
                && !part.marker_request_lost;
        }
        let timeout_us = t
            .transaction_timeout_ms
            .map(|ms| i64::from(ms.max(0)) * 1_000);
        let open_until = match end {
            Some(e) if t.outcome == Outcome::Open => Moment::of(&e),
            _ => last,
        };
        // Open until the first of its EndTxn and its markers.
        let ended_at = ended_at(&t);
        let open_for = t.begin.micros_to(ended_at.as_ref().unwrap_or(&open_until));
        t.timed_out = timeout_us.is_some_and(|limit| open_for > limit);
        // Markers before the client's EndTxn (or without one): the coordinator ended it.
        let markers_first = match (&t.markers_sent, &t.end_requested) {
            (Some(m), Some(e)) => m.micros_to(e) > 0,
            (Some(_), None) => true,
            _ => false,
        };
        if marker_result == Some("ABORT")
            && (t.markers_client_id.as_deref().is_some_and(is_admin_client)
                || (t.requested == Some("commit") && accepted))
        {
            // Kafka's coordinator completes a commit it accepted; ABORT markers after one
            // are an admin's (kafka-transactions.sh abort), as is a client id that says so.
            t.ended_by = Some(EndedBy::Admin);
        } else if t.end_requested.is_some() && accepted {
            t.ended_by = Some(EndedBy::Client);
        } else if marker_result == Some("COMMIT") && client_seen {
            // Only a client commits (its EndTxn was not captured, or came after).
            t.ended_by = Some(EndedBy::Client);
        } else if t.fenced_by_frame.is_some()
            || (marker_result == Some("ABORT")
                && markers_first
                && (client_seen || t.end_requested.is_some()))
        {
            t.ended_by = Some(EndedBy::Coordinator);
        } else if t.end_requested.is_some() && t.timed_out {
            // An EndTxn rejected after the timeout: the coordinator had aborted it.
            t.ended_by = Some(EndedBy::Coordinator);
        }
        if t.ended_by == Some(EndedBy::Coordinator) {
            t.reason = if t.fenced_by_frame.is_some() {
                Some(Reason::Fenced)
            } else if t.timed_out {
                Some(Reason::Timeout)
            } else {
                None
            };
            if t.fenced_by_frame.is_none() && t.reason.is_none() {
                // An InitProducerId while it was open fenced it; one after the coordinator's
                // ABORT markers (a producer made anew after it was aborted on its timeout)
                // came too late to.
                if let Some(init) = p.and_then(|p| p.init_requested) {
                    if t.begin.micros_to(&init) >= 0
                        && t.markers_sent.is_none_or(|m| init.micros_to(&m) >= 0)
                    {
                        t.fenced_by_frame = Some(init.frame);
                        t.reason = Some(Reason::Fenced);
                        if let Some(p) = p {
                            t.packets.extend_from_slice(&p.fence_packets);
                        }
                    }
                }
            }
        }
        t.partial_commit = t.outcome == Outcome::Committed
            && t.partitions.iter().any(|p| p.marker == Some("ABORT"));
        t.duration_us = t.begin.micros_to(&open_until).max(0);
        t.frames.sort_unstable();
        t.frames.dedup();
        // Written at the message being read (the one that finished it, or that came after
        // its linger), or at the capture's end; but an end accepted with no partition known
        // and no marker seen (see `try_finish`), which waited for markers that did not come,
        // at its EndTxn response, the message that finished it as far as the capture shows.
        let empty_end = t.partitions.is_empty()
            && t.offsets.is_empty()
            && marker_result.is_none()
            && t.end_error.as_deref() == Some("NONE");
        let at = match (t.end_response.filter(|_| empty_end), end.or(self.last)) {
            (Some(m), _) => Location {
                ts: m.ts,
                frame: m.frame,
                stream: None,
                tunnel: None,
            },
            (None, Some(e)) => Location { stream: None, ..e },
            (None, None) => Location {
                ts: last.ts,
                frame: last.frame,
                stream: None,
                tunnel: None,
            },
        };
        TransactionRecord {
            loc: at,
            transaction: t,
        }
    }

    /// A broker at `e`, its node id filled in when known.
    fn broker(&self, e: Endpoint) -> Broker {
        Broker {
            node_id: self.node_of(e),
            ..Broker::at(e)
        }
    }

    /// The node id at `e`, when a Metadata or FindCoordinator response gave it (or it was
    /// learned, [`TxnView::learn_node`]); not one where evidence disagreed (a load balancer's
    /// address, all brokers behind it).
    fn node_of(&self, e: Endpoint) -> Option<i32> {
        self.nodes
            .get(&(e.ip.to_string(), e.port))
            .copied()
            .filter(|n| *n >= 0)
    }

    /// The node id of producer `p`'s coordinator: where brokers are named by host name, the
    /// latest FindCoordinator answer for its transactional id (its address may be shared, as
    /// behind a load balancer), else the node at its coordinator's address.
    fn coordinator_node(&self, p: &Producer) -> Option<i32> {
        let named = self
            .named_brokers
            .then(|| {
                self.coordinator_of
                    .get(p.transactional_id.as_deref()?)
                    .copied()
            })
            .flatten();
        named.or_else(|| p.coordinator.and_then(|e| self.node_of(e)))
    }

    /// Learns the node id of `broker`, the broker that answered a request accepted there,
    /// when the capture's Metadata named brokers by host name: an InitProducerId,
    /// AddPartitionsToTxn, AddOffsetsToTxn or EndTxn its coordinator (the node a
    /// FindCoordinator exchange named for its transactional id) accepted. (Not from the
    /// partitions a broker accepted: the capture's Metadata may be older than the leader
    /// that accepted them.) Evidence of two nodes at one address leaves it unknown.
    fn learn_node(&mut self, broker: Endpoint, request: &Body, response: &Body) {
        let node = match (request, response) {
            (Body::InitProducerIdRequest(q), Body::InitProducerIdResponse(r)) => (r.error_code
                == 0)
                .then_some(q.transactional_id.as_deref())
                .flatten()
                .and_then(|tid| self.coordinator_of.get(tid).copied()),
            (Body::EndTxnRequest(q), Body::EndTxnResponse(r)) if r.error_code == 0 => {
                self.coordinator_of.get(&q.transactional_id).copied()
            }
            (Body::AddOffsetsToTxnRequest(q), Body::AddOffsetsToTxnResponse(r))
                if r.error_code == 0 =>
            {
                self.coordinator_of.get(&q.transactional_id).copied()
            }
            (Body::AddPartitionsToTxnRequest(q), Body::AddPartitionsToTxnResponse(r)) => {
                let accepted = r.results_by_topic.as_ref().is_some_and(|t| {
                    t.iter()
                        .flat_map(|t| &t.results_by_partition)
                        .all(|p| p.partition_error_code == 0)
                });
                q.transactional_id
                    .as_deref()
                    .filter(|_| accepted)
                    .and_then(|tid| self.coordinator_of.get(tid).copied())
            }
            _ => None,
        };
        if let Some(node) = node {
            self.learned(broker.ip.to_string(), broker.port, node);
        }
    }

    /// Notes node `node` at `ip`:`port` as learned from the capture; where another node was
    /// noted there, neither is (-1: several brokers behind one address, a load balancer's).
    fn learned(&mut self, ip: String, port: u16, node: i32) {
        let key = (ip, port);
        match self.nodes.get_mut(&key) {
            Some(n) if *n != node => *n = -1,
            Some(_) => {}
            None => {
                if self.nodes.len() < MAX_REMEMBERED && self.remember(key.0.len() + 64) {
                    self.nodes.insert(key, node);
                }
            }
        }
    }

    /// Learns the node id of a broker's address from its transaction marker sender (where
    /// brokers are named by host name, as [`TxnView::learn_node`]): a WriteTxnMarkers request
    /// from `client` with Kafka's client id `broker-N-txn-marker-sender` came from node N's
    /// host, whose clients' listener is on the port Metadata gave for node N.
    fn learn_marker_sender(&mut self, client: Endpoint, q: &KafkaMessage) {
        if !matches!(q.body, Body::WriteTxnMarkersRequest(_)) {
            return;
        }
        let Some(n) = q
            .client_id
            .as_ref()
            .and_then(|c| c.as_deref())
            .and_then(marker_sender_node)
        else {
            return;
        };
        let Some(port) = self
            .node_addresses
            .get(&n)
            .and_then(|a| a.rsplit_once(':')?.1.parse::<u16>().ok())
        else {
            return;
        };
        self.learned(client.ip.to_string(), port, n);
    }

    fn node(&mut self, host: &str, port: i32, node: i32) {
        let (Ok(port), true) = (u16::try_from(port), node >= 0) else {
            return;
        };
        // An IP address as the packets' addresses are written (`fd00:0:0:0:0:0:0:1`, `FD00::1`
        // and `fd00::1` are one); a host name noted.
        let text = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let ip = text
            .parse::<std::net::IpAddr>()
            .ok()
            .map(|ip| ip.to_string());
        if ip.is_none() && !host.is_empty() {
            self.named_brokers = true;
        }
        let host = ip.as_deref().unwrap_or(host);
        if let Some(n) = self.nodes.get_mut(&(host.to_string(), port)) {
            *n = node;
        } else if self.nodes.len() < MAX_REMEMBERED && self.remember(host.len() + 64) {
            self.nodes.insert((host.to_string(), port), node);
        }
        let known = self.node_addresses.contains_key(&node);
        if known || (self.node_addresses.len() < MAX_REMEMBERED && self.remember(host.len() + 64)) {
            let address = host_port(host, port);
            self.node_addresses.insert(node, address.into());
        }
    }

    /// A topic's name and id as a message gives them, interned, the name looked up from the
    /// id when only the id is given.
    fn topic(
        &mut self,
        name: Option<&str>,
        id: Option<&str>,
    ) -> (Option<Arc<str>>, Option<Arc<str>>) {
        let name = match name {
            Some(n) => self.intern(n),
            None => id.and_then(|i| self.topic_names.get(i).cloned()),
        };
        (name, id.and_then(|i| self.intern(i)))
    }

    /// The one shared copy of `s`, added (and its bytes charged) when new; `None` when the
    /// memory budget refuses it (the caller then does without).
    fn intern(&mut self, s: &str) -> Option<Arc<str>> {
        let s = kept_name(s);
        let s = &*s;
        if let Some(a) = self.interned.get(s) {
            return Some(a.clone());
        }
        let cost = crate::memory::alloc_cost(s.len() + 16) + 32;
        if !self.remember(cost) {
            return None;
        }
        let a: Arc<str> = Arc::from(s);
        self.interned.insert(a.clone());
        Some(a)
    }

    /// Charges `bytes` more of remembered state; false (nothing charged) when the budget, or
    /// the view's share of it (half), refuses.
    fn remember(&mut self, bytes: usize) -> bool {
        let Some(c) = self.charge.as_mut() else {
            self.remembered_bytes += bytes;
            return true;
        };
        let share = share(c);
        if c.bytes().saturating_add(bytes) > share || !c.add(bytes) {
            return false;
        }
        self.remembered_bytes += bytes;
        true
    }
}

/// The TCP stream and sender of a message at `loc`: a client's end of its connection.
fn client_end(loc: &Location) -> Option<(u64, Endpoint)> {
    loc.stream.map(|(i, src, _)| (i, src))
}

/// Whether the client end `stream` lost bytes (a `gap`, in `losses`) after a transaction's last
/// message at `last`: its end (an EndTxn) may have been among them.
fn lost_after(
    losses: &HashMap<(u64, Endpoint), Moment>,
    stream: Option<(u64, Endpoint)>,
    last: Moment,
) -> bool {
    stream
        .and_then(|c| losses.get(&c))
        .is_some_and(|m| last.micros_to(m) >= 0)
}

/// Whether the memory budget passed over bytes (`budget_loss`) at or after `last`.
fn budget_lost_after(budget_loss: Option<Moment>, last: Moment) -> bool {
    budget_loss.is_some_and(|m| last.micros_to(&m) >= 0)
}

/// When `t` ended: the first of its EndTxn request and its first marker request.
fn ended_at(t: &Transaction) -> Option<Moment> {
    match (t.end_requested, t.markers_sent) {
        (Some(a), Some(b)) => Some(if a.micros_to(&b) < 0 { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// A later message of the producer that its coordinator accepted proves the markers of `t`,
/// which ended, written (`Transaction::markers_written_later`): those sent and never answered
/// on the capture's wire are noted so (`TxnPartition::marker_written_later`).
fn written_later(t: &mut Txn) {
    t.t.markers_written_later =
        t.t.partitions
            .iter()
            .any(|p| p.holds_data() && !p.marker_written && !p.marker_local);
    for part in &mut t.t.partitions {
        if part.marker.is_some() && !part.marker_written && part.marker_error.is_none() {
            part.marker_written_later = true;
        }
    }
}

/// Takes transaction `i` out of a producer's `txns`; the list's room is given back when it is
/// left empty (a producer between transactions holds no room for one: at 30,000 producers of
/// one transaction each, that room was 2.8 KiB each, 86 MB in all).
fn remove_txn(txns: &mut Vec<Txn>, i: usize) -> Txn {
    let t = txns.remove(i);
    if txns.is_empty() {
        *txns = Vec::new();
    }
    t
}

/// The view's share of the budget `c` is charged to: half, less what the `--report` page's
/// data holds (at most a quarter: [`crate::output::report`]), so that the two together leave
/// the stages reading the capture their half.
fn share(c: &Charge) -> usize {
    let m = c.memory();
    (m.limit() / 2).saturating_sub(m.held(Holding::Report))
}

/// The `stale_coordinator_epoch` anomaly of a `result` marker for `topic` `partition` of
/// `whose` (the transaction, or the producer id and epoch a marker no transaction took names)
/// carrying coordinator epoch `epoch`, older than the `seen` an earlier marker of that
/// producer id carried to that partition.
fn stale_marker(
    result: &str,
    topic: &str,
    partition: i32,
    whose: &str,
    epoch: i32,
    seen: i32,
) -> Anomaly {
    Anomaly::new(
        AnomalyKind::StaleCoordinatorEpoch,
        format!(
            "the {result} marker for {topic} {partition} of {whose} carries coordinator_epoch \
             {epoch}, older than the {seen} an earlier marker of that producer id carried to \
             that partition: a coordinator that lost its role, or old markers sent again (the \
             leader answers TRANSACTION_COORDINATOR_FENCED)"
        ),
    )
}

/// Whether partition `p` of a transaction holds the partition's last stable offset from its
/// first batch on: no marker seen for it, or one not written that never will be (refused for
/// good, or left out of its response), and no Fetch response's last stable offset seen past
/// it ([`TxnPartition::stable_past_frame`]).
fn holds_stable_offset(p: &TxnPartition) -> bool {
    p.stable_past_frame.is_none()
        && (p.marker.is_none()
            || (!p.marker_written
                && (p.marker_left_out
                    || p.marker_error_handling == Some(MarkerErrorHandling::Terminal))))
}

/// `host:port`, an IPv6 address in brackets: a broker's address as the view keeps it.
fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The address of partition `p`'s leader where Metadata named it by an IP address (`None`
/// where by a host name, as in Kubernetes, or not at all).
fn leader_ip_address(p: &TxnPartition) -> Option<&str> {
    p.leader_address
        .as_deref()
        .filter(|a| a.parse::<std::net::SocketAddr>().is_ok())
}

/// Whether a Fetch response from `broker` may be of partition `p`'s leader: from its address
/// where Metadata named it by one ([`leader_ip_address`]); from any broker else (the leader's
/// address not known).
fn may_be_leader(p: &TxnPartition, broker: Option<Endpoint>) -> bool {
    leader_ip_address(p).is_none_or(|a| broker.is_some_and(|b| a == address_text(b)))
}

/// An endpoint as `HOST:PORT` (an IPv6 address in brackets: `[fd00::1]:9092`), as the
/// messages' commands take a broker.
pub fn address_text(e: Endpoint) -> String {
    host_port(&e.ip.to_string(), e.port)
}

/// `the transaction of producer 8000 epoch 4 (app-zombie)`: a transaction for a message.
fn describe(t: &Transaction) -> String {
    format!("the transaction of {}", producer_text(&txn_ref(t)))
}

/// `producer 8000 epoch 4 (app-zombie)`: the producer id, epoch and transactional id of `t`.
fn producer_text(t: &TxnRef) -> String {
    let tid = t
        .transactional_id
        .as_deref()
        .map_or(String::new(), |i| format!(" ({i})"));
    format!("producer {} epoch {}{tid}", t.producer_id, t.producer_epoch)
}

/// Where a verdict written with record `r` is, when that is past the transaction's own last
/// frame (a later message closed it, such as the InitProducerId response that gave a fenced
/// producer's transactional id its new epoch): `"; said at frame N, ..."`, else nothing.
fn closed_at(r: &TransactionRecord) -> String {
    match r.transaction.frames.last() {
        Some(&last) if r.loc.frame > last => format!(
            "; said at frame {}, the message that closed it (its own last is frame {last})",
            r.loc.frame
        ),
        _ => String::new(),
    }
}

/// The reference an anomaly carries to transaction `t`.
fn txn_ref(t: &Transaction) -> TxnRef {
    TxnRef {
        transactional_id: t.transactional_id.clone(),
        producer_id: t.producer_id,
        producer_epoch: t.producer_epoch,
        begin_frame: Some(t.begin.frame),
    }
}

/// Whether `client_id` names an admin client (Kafka's admin clients are `adminclient-<n>`
/// unless configured otherwise): one that contains `admin`, in any case.
pub fn is_admin_client(client_id: &str) -> bool {
    client_id.to_ascii_lowercase().contains("admin")
}

/// The node of a coordinator's marker channel's client id, `broker-N-txn-marker-sender` (Kafka's
/// `TransactionMarkerChannelManager`), or `None` for another client id.
fn marker_sender_node(client_id: &str) -> Option<i32> {
    client_id
        .strip_prefix("broker-")?
        .strip_suffix("-txn-marker-sender")?
        .parse()
        .ok()
}

/// Most marker senders [`TxnView`] keeps of each kind (addresses, nodes).
const MAX_MARKER_SENDERS: usize = 1024;

/// `s` in single quotes, one word of a POSIX shell command with nothing in it expanded (a
/// `'` inside written `'\''`): the words of the commands the messages advise.
pub fn shell_quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A duration for people, from microseconds: `850 us`, `8.7 ms`, `2.31 s`, `1.50 h`,
/// `29256.3 days` (the messages' and the text view's way of saying one).
pub fn human_us(us: i64) -> String {
    match us {
        u if u < 1_000 => format!("{u} us"),
        u if u < 1_000_000 => format!("{:.1} ms", u as f64 / 1e3),
        u if u < 3_600_000_000 => format!("{:.2} s", u as f64 / 1e6),
        // Past an hour (a clock that jumped shows as years), in hours or days.
        u if u < 86_400_000_000 => format!("{:.2} h", u as f64 / 3.6e9),
        u => format!("{:.1} days", u as f64 / 8.64e10),
    }
}

/// What transaction `t` holds, in bytes (an estimate: its structures' capacities and 48 bytes
/// per string; its record's part as [`Transaction::held_cost`] counts it).
fn txn_cost(t: &Txn) -> usize {
    let index = t.index.as_ref().map_or(0, |ix| {
        crate::memory::map_cost::<Arc<str>, HashMap<i32, u32>>(ix.capacity())
            + ix.values()
                .map(|m| crate::memory::map_cost::<i32, u32>(m.capacity()))
                .sum::<usize>()
    });
    index
        + std::mem::size_of::<Txn>()
        + t.t.held_cost()
        + vec_cost::<Option<Moment>>(t.marker_sent.capacity())
        + vec_cost::<u64>(t.marker_requests.capacity())
}

/// The step of message `k` at `at`.
fn step_of(k: &KafkaMessage, at: Moment) -> Step {
    Step {
        at,
        api_name: k.api_name,
        message: k.message,
    }
}

/// Notes a message of `txn`, and the packets it came in (`KafkaMessage::packets`: empty but
/// with `--write-pcap`).
fn touch(txn: &mut Txn, step: Step, packets: &[u64]) {
    let at = step.at;
    if txn.last.micros_to(&at) >= 0 {
        txn.last = at;
    }
    if txn.touched_frame != at.frame {
        txn.touched_frame = at.frame;
        if txn.t.frames.len() < MAX_FRAMES {
            txn.t.frames.push(at.frame);
            txn.t.timeline.push(step);
        } else {
            txn.t.frames_not_listed += 1;
        }
        keep_packets(txn, packets);
    }
}

/// Adds a message's packets to those `--write-pcap` writes for `txn`, each once (a message's
/// list repeats its connection's handshake), as many as [`MAX_PACKETS`]; those past it are
/// counted in `packets_not_kept`.
fn keep_packets(txn: &mut Txn, packets: &[u64]) {
    if packets.is_empty() {
        return;
    }
    let p = &mut txn.t.packets;
    // Deduplicated whenever the list would grow, and when full, if anything came since.
    let grows = p.len() + packets.len() > p.capacity();
    if (grows || p.len() + packets.len() > MAX_PACKETS) && p.len() > txn.packets_sorted {
        p.sort_unstable();
        p.dedup();
        txn.packets_sorted = p.len();
    }
    let room = MAX_PACKETS.saturating_sub(p.len()).min(packets.len());
    p.extend_from_slice(&packets[..room]);
    txn.t.packets_not_kept += (packets.len() - room) as u64;
}

/// Partitions of a transaction past which they are looked up by name in an index.
const INDEX_FROM: usize = 16;

/// The place in `txn.t.partitions` of partition `index` of the topic named `name` or of id
/// `id`, if it is there.
fn find_partition(txn: &Txn, name: Option<&str>, id: Option<&str>, index: i32) -> Option<usize> {
    if let (Some(ix), Some(n)) = (&txn.index, name) {
        if let Some(&i) = ix.get(n).and_then(|m| m.get(&index)) {
            return Some(i as usize);
        }
        // Joined by topic id alone (not indexed), or not there.
        id?;
    }
    txn.t.partitions.iter().position(|p| {
        p.partition == index
            && ((name.is_some() && p.topic.as_deref() == name)
                || (id.is_some() && p.topic_id.as_deref() == id))
    })
}

/// Takes partition `index` of `topic` out of `txn` when the AddPartitionsToTxn request of
/// frame `request_frame` added it and its response refused it (Kafka adds none of a request's
/// partitions when one fails: the others are answered OPERATION_NOT_ATTEMPTED), before any
/// batch or marker of it: it was never in the transaction (an AddPartitionsToTxn accepted
/// later adds it again, at its own frame). Its error stays among the transaction's errors.
fn unjoin(txn: &mut Txn, topic: &str, index: i32, request_frame: u64) {
    let Some(j) = find_partition(txn, Some(topic), None, index) else {
        return;
    };
    let p = &txn.t.partitions[j];
    if p.joined != Joined::AddPartitionsToTxn
        || p.joined_frame != request_frame
        || p.batches > 0
        || p.marker.is_some()
        || p.marker_request_lost
    {
        return;
    }
    txn.t.partitions.remove(j);
    if j < txn.marker_sent.len() {
        txn.marker_sent.remove(j);
    }
    // Positions moved: `join` indexes them again when the list is long.
    txn.index = None;
}

/// Adds partition `index` of a topic to `txn` (if not already in it); returns its index in
/// the list, `None` past [`MAX_PARTITIONS`].
/// Names the topic id of `txn`'s partitions that no message of the capture named (Produce v13+
/// writes topic ids, and a capture begun after the client's Metadata holds no name for them)
/// from a WriteTxnMarkers request's `topics` (their names, `names` as interned), where it
/// cannot be another: all its unnamed partitions are of one topic id, the marker names
/// exactly one topic the transaction does not hold, and every partition the marker gives it
/// is one of that id's. Returns the (id, name) learned, which the view keeps for the
/// messages after.
fn name_topic_id(
    txn: &mut Txn,
    topics: &[crate::kafka::apis::write_txn_markers::WritableTxnMarkerTopic],
    names: &[Option<Arc<str>>],
) -> Option<(Arc<str>, Arc<str>)> {
    let mut unnamed = txn
        .t
        .partitions
        .iter()
        .filter(|p| p.topic.is_none())
        .filter_map(|p| p.topic_id.clone());
    let id = unnamed.next()?;
    if unnamed.any(|i| i != id) {
        return None;
    }
    let mut new = topics.iter().zip(names).filter(|(_, n)| {
        n.as_ref()
            .is_some_and(|n| !txn.t.partitions.iter().any(|p| p.topic.as_ref() == Some(n)))
    });
    let (topic, name) = new.next()?;
    let name = name.clone()?;
    if new.next().is_some() {
        return None;
    }
    let fits = topic.partition_indexes.iter().all(|&i| {
        txn.t
            .partitions
            .iter()
            .any(|p| p.topic.is_none() && p.topic_id.as_ref() == Some(&id) && p.partition == i)
    });
    if !fits {
        return None;
    }
    for (i, p) in txn.t.partitions.iter_mut().enumerate() {
        if p.topic.is_none() && p.topic_id.as_ref() == Some(&id) {
            p.topic = Some(name.clone());
            if let Some(ix) = txn.index.as_mut() {
                ix.entry(name.clone())
                    .or_default()
                    .entry(p.partition)
                    .or_insert(i as u32);
            }
        }
    }
    Some((id, name))
}

fn join(
    txn: &mut Txn,
    name: Option<&Arc<str>>,
    id: Option<&Arc<str>>,
    index: i32,
    how: Joined,
    at: Moment,
) -> Option<usize> {
    if name.is_none() && id.is_none() {
        // Its name was not kept (the memory budget): it cannot be told from the others.
        txn.t.partitions_not_listed += 1;
        txn.unnamed += 1;
        return None;
    }
    if let Some(i) = find_partition(txn, name.map(|n| &**n), id.map(|n| &**n), index) {
        return Some(i);
    }
    if txn.t.partitions.len() >= MAX_PARTITIONS {
        txn.t.partitions_not_listed += 1;
        return None;
    }
    if txn.index.is_none() && txn.t.partitions.len() >= INDEX_FROM {
        let mut ix: HashMap<Arc<str>, HashMap<i32, u32>> = HashMap::default();
        for (i, p) in txn.t.partitions.iter().enumerate() {
            if let Some(t) = &p.topic {
                ix.entry(t.clone())
                    .or_default()
                    .entry(p.partition)
                    .or_insert(i as u32);
            }
        }
        txn.index = Some(ix);
    }
    if let (Some(ix), Some(n)) = (txn.index.as_mut(), name) {
        ix.entry(n.clone())
            .or_default()
            .entry(index)
            .or_insert(txn.t.partitions.len() as u32);
    }
    txn.t.partitions.push(TxnPartition {
        topic: name.cloned(),
        topic_id: id.cloned(),
        partition: index,
        joined: how,
        joined_frame: at.frame,
        leader: None,
        batches: 0,
        records: 0,
        offsets_committed: false,
        first_offset: None,
        last_offset: None,
        marker: None,
        coordinator_epoch: None,
        marker_broker: None,
        marker_attempts: 0,
        marker_frame: None,
        marker_response_frame: None,
        marker_written: false,
        marker_local: false,
        marker_written_later: false,
        stable_past_frame: None,
        stable_passed: None,
        marker_request_lost: false,
        marker_answer_cut: false,
        marker_left_out: false,
        marker_error: None,
        marker_error_handling: None,
        marker_latency_us: None,
        replaced_marker: None,
        recent_base_sequences: [None; 5],
        marker_round_trips: Vec::new(),
        leader_address: None,
    });
    txn.marker_sent.push(None);
    Some(txn.t.partitions.len() - 1)
}

/// The offsets entry of `group` in `txn`, made when missing; `None` past [`MAX_GROUPS`]
/// groups.
fn offsets_of<'a>(txn: &'a mut Txn, group: &str) -> Option<&'a mut TxnOffsets> {
    let i = match txn.t.offsets.iter().position(|o| o.group_id == group) {
        Some(i) => i,
        None if txn.t.offsets.len() >= MAX_GROUPS => return None,
        None => {
            txn.t.offsets.push(TxnOffsets {
                group_id: group.to_string(),
                add_offsets_frame: None,
                commit_frame: None,
                positions: Vec::new(),
            });
            txn.t.offsets.len() - 1
        }
    };
    txn.t.offsets.get_mut(i)
}

/// The `__consumer_offsets` partition of consumer group `group` among `partitions`, as
/// Kafka's group coordinator computes it: `Utils.abs(groupId.hashCode()) % partitions`, the
/// hash Java's `String.hashCode` (over UTF-16 code units, wrapping) and `Utils.abs` its
/// absolute value (0 for `i32::MIN`), not the sign bit cleared (that is the producer's
/// `Utils.toPositive`: for a negative hash the two differ, `my-group` on 12 of 50, not 36).
pub fn offsets_partition_of(group: &str, partitions: i32) -> i32 {
    let mut h: i32 = 0;
    for unit in group.encode_utf16() {
        h = h.wrapping_mul(31).wrapping_add(i32::from(unit));
    }
    let abs = if h == i32::MIN { 0 } else { h.abs() };
    abs % partitions.max(1)
}

/// A name as the view keeps it: Kafka's topic names have at most 249 characters; a longer
/// one (hostile, or not a name) is kept as its first [`MAX_NAME`] bytes and its length, so that
/// a record naming it for each of its partitions does not repeat kilobytes. Every name read
/// off a message is compared with those kept in this form.
fn kept_name(s: &str) -> std::borrow::Cow<'_, str> {
    if s.len() > MAX_NAME {
        std::borrow::Cow::Owned(format!("{}...({} bytes)", truncate(s, MAX_NAME), s.len()))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub(crate) fn truncate(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Kafka's name of an error code, or the code.
fn error_name(code: i16) -> String {
    ErrorCode(code)
        .name()
        .map_or_else(|| code.to_string(), str::to_string)
}

/// Notes a response of `txn`, and its error when not NONE.
fn error(txn: &mut Txn, k: &KafkaMessage, code: i16, at: Moment, part: Option<(&str, i32)>) {
    touch(
        txn,
        Step {
            at,
            api_name: k.api_name,
            message: k.message,
        },
        &k.packets,
    );
    if code == 0 {
        txn.accepted = true;
        return;
    }
    if txn.t.errors.len() >= MAX_ERRORS {
        return;
    }
    txn.t.errors.push(TxnError {
        api_name: k.api_name,
        error: error_name(code),
        frame: at.frame,
        // At most 256 bytes of the name: an error names its partition, it does not keep a
        // hostile topic name of 32 KiB per error.
        topic: part.map(|p| Arc::from(truncate(p.0, 256))),
        partition: part.map(|p| p.1),
    });
}

#[cfg(test)]
mod tests {
    /// Kafka's `GroupCoordinatorService.partitionFor`: `Utils.abs(groupId.hashCode()) %
    /// partitions`. The hashes are Java's `String.hashCode` (`"my-group"` -1906497762,
    /// `"etl"` 100765, `"polygenelubricants"` `Integer.MIN_VALUE`, which `Utils.abs` makes 0).
    #[test]
    fn consumer_offsets_partition_is_kafkas() {
        assert_eq!(super::offsets_partition_of("my-group", 50), 12);
        assert_eq!(super::offsets_partition_of("etl", 50), 15);
        assert_eq!(super::offsets_partition_of("polygenelubricants", 50), 0);
        assert_eq!(super::offsets_partition_of("polygenelubricants", 7), 0);
        assert_eq!(super::offsets_partition_of("", 50), 0);
        assert_eq!(super::offsets_partition_of("my-group", 0), 0);
    }

    use super::*;

    #[test]
    fn human_durations_from_microseconds_to_days() {
        assert_eq!(human_us(850), "850 us");
        assert_eq!(human_us(8_700), "8.7 ms");
        assert_eq!(human_us(2_310_000), "2.31 s");
        assert_eq!(human_us(5_400_000_000), "1.50 h");
        // A packet dated 2106 among ones of 2026 (a hostile review: "2527741692.00 s").
        assert_eq!(human_us(2_527_741_692_000_000), "29256.3 days");
    }

    fn at(frame: u64) -> Moment {
        Moment {
            ts: Timestamp {
                secs: 1,
                nanos: 0,
                digits: 6,
            },
            frame,
        }
    }

    fn step(frame: u64) -> Step {
        Step {
            at: at(frame),
            api_name: "Produce",
            message: MessageKind::Request,
        }
    }

    /// A transaction of more messages than it lists frames still keeps all their packets for
    /// `--write-pcap` (its end among them), each once: a hostile review's transaction of 1,100
    /// Produce requests read back from its file without its EndTxn and markers.
    #[test]
    fn packets_are_kept_past_the_listed_frames_each_once() {
        let mut v = TxnView::default();
        let i = v.begin(7000, 1, at(10));
        let txn = &mut v.producers.get_mut(&7000).unwrap().txns[i];
        for f in 0..1_100u64 {
            let frame = 10 + 2 * f;
            // Its two segments, and its connection's handshake again.
            touch(txn, step(frame), &[1, 2, 3, frame - 1, frame]);
        }
        assert_eq!(txn.t.frames.len(), MAX_FRAMES);
        // A message noted twice (an error for each of its partitions) counts once.
        touch(txn, step(2_208), &[]);
        assert_eq!(txn.t.frames_not_listed, 100);
        let mut kept = txn.t.packets.clone();
        kept.sort_unstable();
        kept.dedup();
        let want: Vec<u64> = (1..=3).chain(9..=2_208).collect();
        assert!(kept == want, "{} kept, {} wanted", kept.len(), want.len());
        // Deduplicated as the list grows: the handshake's 3,300 repeats do not pile up.
        assert!(
            txn.t.packets.len() < 2 * want.len(),
            "{}",
            txn.t.packets.len()
        );
        assert_eq!(txn.t.packets_not_kept, 0);
    }

    /// Past [`MAX_PACKETS`] distinct packets a transaction keeps no more, and counts them.
    #[test]
    fn packets_past_the_bound_are_counted() {
        let mut v = TxnView::default();
        let i = v.begin(7000, 1, at(10));
        let txn = &mut v.producers.get_mut(&7000).unwrap().txns[i];
        for m in 0..200u64 {
            let first = 1 + 100 * m;
            let packets: Vec<u64> = (first..first + 100).collect();
            touch(txn, step(first + 99), &packets);
        }
        assert_eq!(txn.t.frames.len(), 200);
        let mut kept = txn.t.packets.clone();
        kept.sort_unstable();
        kept.dedup();
        assert_eq!(kept.len(), MAX_PACKETS);
        assert!(kept == (1..=MAX_PACKETS as u64).collect::<Vec<_>>());
        assert_eq!(txn.t.packets_not_kept, 20_000 - MAX_PACKETS as u64);
    }
}
