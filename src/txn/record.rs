//! The `transaction` record of `--transactions`: what one Kafka transaction did, joined from
//! the messages of every connection that speak of it (the schema's `transaction_record`).
//!
//! Field names are Kafka's terms in snake_case (`producer_id`, `coordinator_epoch`,
//! `transaction_timeout_ms`); times are the capture's, durations in microseconds; frames are
//! the capture's frame numbers (1-based, as Wireshark's `frame.number`).

use crate::memory::vec_cost;
use crate::vocab::{Endpoint, Location, Timestamp};
use serde::Serialize;
use std::net::IpAddr;
use std::sync::Arc;

/// One transaction, finished (its last marker answered, or its end seen and nothing more
/// expected) or given out at the end of the capture; `loc` is the message that finished it
/// (its `stream` is `None`: a transaction spans connections).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TransactionRecord {
    /// Time and frame of the message at which it was written: the one that finished it (its
    /// last marker response, its EndTxn response, its producer's next InitProducerId), the
    /// first message more than 10 s after its last, or the capture's last packet for one
    /// given out at the end.
    #[serde(skip)]
    pub loc: Location,
    /// The transaction.
    pub transaction: Transaction,
}

impl TransactionRecord {
    /// What this record holds, in bytes (an estimate, as [`Transaction::held_cost`]): for the
    /// records in flight to the writing thread (`output::offload`).
    pub fn held_cost(&self) -> usize {
        std::mem::size_of::<TransactionRecord>() + self.transaction.held_cost()
    }
}

/// What became of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// COMMIT markers were written, or an EndTxn asking to commit was accepted.
    Committed,
    /// ABORT markers were written, an EndTxn asking to abort was accepted, or its producer was
    /// fenced while it was open (the coordinator aborts it).
    Aborted,
    /// Its beginning is in the capture and no end was seen by the capture's end.
    Open,
    /// Neither its beginning nor its end is in the capture (it began before the capture, and
    /// its end, if any, came after it or was lost), or its end was asked for and never
    /// answered, or bytes were lost after its last message (`end_not_captured`), or no end
    /// was seen but a last stable offset passed its batches after its last message
    /// (`stable_past_frame`: it ended unseen).
    Unknown,
}

impl Outcome {
    /// The JSON name: `"committed"`, `"aborted"`, `"open"`, `"unknown"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Committed => "committed",
            Outcome::Aborted => "aborted",
            Outcome::Open => "open",
            Outcome::Unknown => "unknown",
        }
    }
}

/// What the outcome of a transaction was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeFrom {
    /// Its WriteTxnMarkers markers (what the partitions were told).
    Markers,
    /// An EndTxn the coordinator accepted, with no marker on the wire (for partitions its
    /// coordinator leads, or markers not captured, or never sent: see `hanging_transaction`).
    #[serde(rename = "end_txn")]
    EndTxn,
    /// An InitProducerId that fenced its producer while it was open (the coordinator aborts
    /// it), with no marker seen.
    Fencing,
}

/// Who ended a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EndedBy {
    /// Its client, with EndTxn.
    Client,
    /// The transaction coordinator on its own: markers with no EndTxn, or its producer fenced.
    Coordinator,
    /// An admin client (`kafka-transactions.sh abort`, Kafka's `Admin.abortTransaction`,
    /// KIP-664): ABORT markers sent by a client whose client id names an admin client, or
    /// ABORT markers after an EndTxn asking to commit that the coordinator accepted (which
    /// the coordinator itself never does: a prepared commit is always completed).
    Admin,
}

/// Why the coordinator ended a transaction itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Reason {
    /// It stayed open longer than the `transaction_timeout_ms` its InitProducerId asked for.
    Timeout,
    /// A newer InitProducerId for its transactional id came while it was open.
    Fenced,
}

impl Reason {
    /// The JSON name: `"timeout"` or `"fenced"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Timeout => "timeout",
            Reason::Fenced => "fenced",
        }
    }
}

/// A broker, as seen on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Broker {
    /// Its address (the server side of the connection).
    pub ip: IpAddr,
    /// Its port.
    pub port: u16,
    /// Its node id, when a Metadata or FindCoordinator response of the capture gave one for
    /// this address and port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_id: Option<i32>,
}

impl Broker {
    /// A broker at `e`, node id unknown.
    pub fn at(e: Endpoint) -> Self {
        Broker {
            ip: e.ip,
            port: e.port,
            node_id: None,
        }
    }

    /// Its address and port, as the packets give an endpoint.
    pub fn endpoint(&self) -> Endpoint {
        Endpoint {
            ip: self.ip,
            port: self.port,
        }
    }
}

/// A moment of a transaction: a message's time and frame number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Moment {
    /// The time of the message's packet.
    pub ts: Timestamp,
    /// The frame number of the message (its last packet's, as in its own record).
    pub frame: u64,
}

impl Moment {
    /// The moment of a record at `loc`.
    pub fn of(loc: &Location) -> Self {
        Moment {
            ts: loc.ts,
            frame: loc.frame,
        }
    }

    /// Microseconds from `self` to `later` (negative when the capture's clock went back).
    pub fn micros_to(&self, later: &Moment) -> i64 {
        let a = i128::from(self.ts.secs) * 1_000_000 + i128::from(self.ts.nanos / 1_000);
        let b = i128::from(later.ts.secs) * 1_000_000 + i128::from(later.ts.nanos / 1_000);
        (b - a).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }

    /// [`Moment::micros_to`] `later`, or `None` when the capture's clock went back between
    /// them (a latency is then not known, as a message record's `latency_us` is null).
    pub fn elapsed_to(&self, later: &Moment) -> Option<i64> {
        Some(self.micros_to(later)).filter(|us| *us >= 0)
    }
}

/// One message of a transaction, for the `--format tree` timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// Its time and frame.
    pub at: Moment,
    /// Its API, as Kafka spells it.
    pub api_name: &'static str,
    /// Request or response.
    pub message: crate::kafka::event::MessageKind,
}

/// How a partition joined a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Joined {
    /// The client's AddPartitionsToTxn (v0-3), or a broker's v4+ without VerifyOnly.
    #[serde(rename = "AddPartitionsToTxn")]
    AddPartitionsToTxn,
    /// A partition leader's AddPartitionsToTxn v4+ with VerifyOnly (KIP-890).
    #[serde(rename = "verify")]
    Verify,
    /// A transactional Produce batch with no AddPartitionsToTxn for it seen (transaction
    /// version 2 adds partitions implicitly; or its AddPartitionsToTxn was not captured).
    #[serde(rename = "implicit")]
    Implicit,
    /// The `__consumer_offsets` partition of a group its AddOffsetsToTxn named, seen in its
    /// markers.
    #[serde(rename = "offsets")]
    Offsets,
    /// Seen only in its markers.
    #[serde(rename = "marker")]
    Marker,
}

/// How the coordinator treats a marker's partition error (Kafka's
/// `TransactionMarkerRequestCompletionHandler`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkerErrorHandling {
    /// The marker is sent again (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION,
    /// NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT,
    /// KAFKA_STORAGE_ERROR).
    Retried,
    /// The transaction's remaining markers are cancelled (INVALID_PRODUCER_EPOCH,
    /// TRANSACTION_COORDINATOR_FENCED).
    Terminal,
    /// The partition is dropped from the marker (UNSUPPORTED_FOR_MESSAGE_FORMAT,
    /// UNSUPPORTED_VERSION).
    Dropped,
    /// Any other error: the coordinator does not expect it.
    Unexpected,
}

impl MarkerErrorHandling {
    /// The JSON name: `"retried"`, `"terminal"`, `"dropped"`, `"unexpected"`.
    pub fn as_str(self) -> &'static str {
        match self {
            MarkerErrorHandling::Retried => "retried",
            MarkerErrorHandling::Terminal => "terminal",
            MarkerErrorHandling::Dropped => "dropped",
            MarkerErrorHandling::Unexpected => "unexpected",
        }
    }

    /// How the coordinator treats error `name` (Kafka's spelling).
    pub fn of(name: &str) -> Self {
        match name {
            "NOT_LEADER_OR_FOLLOWER"
            | "UNKNOWN_TOPIC_OR_PARTITION"
            | "NOT_ENOUGH_REPLICAS"
            | "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
            | "REQUEST_TIMED_OUT"
            | "KAFKA_STORAGE_ERROR" => MarkerErrorHandling::Retried,
            "INVALID_PRODUCER_EPOCH" | "TRANSACTION_COORDINATOR_FENCED" => {
                MarkerErrorHandling::Terminal
            }
            "UNSUPPORTED_FOR_MESSAGE_FORMAT" | "UNSUPPORTED_VERSION" => {
                MarkerErrorHandling::Dropped
            }
            _ => MarkerErrorHandling::Unexpected,
        }
    }
}

/// One partition a transaction covered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TxnPartition {
    /// Topic name; `None` when only a topic id was seen and no Metadata response named it.
    /// (Shared: the view keeps each name once.)
    pub topic: Option<Arc<str>>,
    /// Topic id (Produce v13+), when the messages gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_id: Option<Arc<str>>,
    /// Partition index.
    pub partition: i32,
    /// How it joined.
    pub joined: Joined,
    /// The frame of the message that joined it.
    pub joined_frame: u64,
    /// Its leader's node id, when a Metadata response of the capture gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leader: Option<i32>,
    /// Transactional record batches of this producer id and epoch in Produce requests.
    pub batches: u64,
    /// Records in those batches (their `records_count`).
    pub records: u64,
    /// Its consumer group's offsets were committed into it: a `__consumer_offsets` partition
    /// (the group's, as Kafka's group coordinator computes it) and a TxnOffsetCommit for the
    /// group that the coordinator accepted for at least one partition. The group coordinator
    /// wrote them there as transactional records of this producer, so until its marker is
    /// written they stay pending (consumers' OffsetFetch with `require_stable` answered
    /// UNSTABLE_OFFSET_COMMIT, KIP-447) and hold that partition's last stable offset, as
    /// batches would. Present only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub offsets_committed: bool,
    /// Offset of the first record written, from the Produce responses (their `base_offset`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_offset: Option<i64>,
    /// Offset of the last record written (`base_offset` plus the batches' offset deltas).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_offset: Option<i64>,
    /// The marker the coordinator sent for it (`"COMMIT"`, `"ABORT"`), or `None` when none
    /// was seen on the wire (a partition its coordinator leads is marked without a message).
    pub marker: Option<&'static str>,
    /// The coordinator epoch of its marker.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coordinator_epoch: Option<i32>,
    /// The broker the marker went to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marker_broker: Option<Broker>,
    /// WriteTxnMarkers requests that carried its marker.
    pub marker_attempts: u32,
    /// Frame of the first WriteTxnMarkers request that carried its marker.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marker_frame: Option<u64>,
    /// Frame of the last response to them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marker_response_frame: Option<u64>,
    /// Whether a WriteTxnMarkers response said the marker was written (error NONE). `false`
    /// too for a partition whose marker needs no message ([`TxnPartition::marker_local`]).
    pub marker_written: bool,
    /// The transaction ended (committed or aborted), no marker was on the wire for it, and
    /// none was needed: its leader (by the capture's Metadata responses: the coordinator's
    /// node id, and its address where that is an IP address) is the transaction's coordinator,
    /// which writes the markers of the partitions it leads to its own log, with no
    /// WriteTxnMarkers message (`marker` null, `marker_written` false). Present only when
    /// true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub marker_local: bool,
    /// Its marker was sent and never answered on the capture's wire, and a later message of
    /// the producer that its coordinator accepted proves it written (the coordinator answers
    /// CONCURRENT_TRANSACTIONS to those until the markers of the transaction before are
    /// written). Present only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub marker_written_later: bool,
    /// No marker was seen written for it, and a read_committed Fetch response of this frame
    /// gave the partition a `last_stable_offset` past its batches (past `last_offset`): the
    /// first to pass them where the capture had given the partition's offset before its last
    /// batch there was answered, else the one where the offset last changed before the view
    /// judged it. A marker (COMMIT or ABORT) was written, unseen (a capture on a client's
    /// host, where markers pass between brokers), so it holds no consumer back. Only an offset first
    /// seen after its end was asked for, or, when no end was seen, after its last message
    /// (then the transaction ended unseen: its outcome is `unknown`). Present only then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stable_past_frame: Option<u64>,
    /// Its marker's WriteTxnMarkers request was not captured (lost in a gap, or before the
    /// capture began; or cut before its producer id) and its response (`inferred`, or the
    /// cut request's) named it: the response says whether the marker
    /// was written, not its result: `marker` stays `None` (unless a captured request of the
    /// transaction gave it), `coordinator_epoch` and `marker_frame` absent. Present only when
    /// true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub marker_request_lost: bool,
    /// A response to its marker's request came but was cut (by the snapshot length, or the
    /// file's end) before its error code: answered, whether written is not known. Present only
    /// when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub marker_answer_cut: bool,
    /// A response to its marker's request came and left it out (a `response_mismatch`):
    /// Kafka's coordinator takes a marker as written only for a partition a response answers
    /// NONE, and does not send it again, so the transaction does not complete (its partitions'
    /// last stable offset held until the coordinator moves). Present only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub marker_left_out: bool,
    /// The last error a marker response gave it (Kafka's name), if any.
    pub marker_error: Option<String>,
    /// How the coordinator treats that error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marker_error_handling: Option<MarkerErrorHandling>,
    /// Microseconds from the first marker request to the last response; absent when the
    /// capture's clock went back between them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marker_latency_us: Option<i64>,
    /// The marker this partition was sent before a marker of the other result replaced it
    /// (an admin's ABORT after a COMMIT that was never written): what became of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced_marker: Option<Box<ReplacedMarker>>,
    /// The `base_sequence`s of the last batches counted (as many as a producer may have in
    /// flight: Kafka's `max.in.flight.requests.per.connection` is at most 5 with idempotence),
    /// so that a batch sent again (the same sequence, after NOT_LEADER_OR_FOLLOWER say) is not
    /// counted twice, even when several in flight are; not serialised.
    #[serde(skip)]
    pub recent_base_sequences: [Option<i32>; 5],
    /// Each WriteTxnMarkers exchange that answered its marker: when, and its own round trip
    /// (`marker_latency_us` spans the retries); at most [`MAX_ROUND_TRIPS`], the last always
    /// kept; not serialised (`--report` draws them).
    #[serde(skip)]
    pub marker_round_trips: Vec<MarkerRoundTrip>,
    /// Its leader's `host:port`, when a Metadata or FindCoordinator response of the capture
    /// gave one for the node `leader` names; not serialised (`--report`'s broker table).
    #[serde(skip)]
    pub leader_address: Option<Arc<str>>,
    /// When a read_committed Fetch response first gave the partition a `last_stable_offset`
    /// past `last_offset` (once its last batch there was known), and the broker that sent
    /// it; once the view has judged, the moment behind `stable_past_frame`. Not serialised.
    #[serde(skip)]
    pub stable_passed: Option<(Moment, Option<Endpoint>)>,
}

/// A partition's marker that a marker of the other result replaced ([`TxnPartition::replaced_marker`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplacedMarker {
    /// Its result (`"COMMIT"`, `"ABORT"`).
    pub marker: &'static str,
    /// WriteTxnMarkers requests that carried it.
    pub marker_attempts: u32,
    /// Frame of the first of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marker_frame: Option<u64>,
    /// Frame of the last response to them; absent when none was answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marker_response_frame: Option<u64>,
    /// The last error a response gave it (Kafka's name), if any.
    pub marker_error: Option<String>,
}

/// Most marker round trips kept per partition ([`TxnPartition::marker_round_trips`]): 8.
pub const MAX_ROUND_TRIPS: usize = 8;

/// One WriteTxnMarkers exchange that answered a partition's marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkerRoundTrip {
    /// Its response.
    pub answered: Moment,
    /// The broker that answered it (the server side of its connection), when known: a
    /// retried marker may go to another leader.
    pub broker: Option<Broker>,
    /// Microseconds from its request to its response (negative when the capture's clock went
    /// back).
    pub us: i64,
    /// Who sent its request, when it was not the coordinator: an admin client's abort
    /// (`kafka-transactions.sh abort`) of a commit's unmarked partitions, say. The client side
    /// of its connection and its client id; `None` for the coordinator's own markers.
    pub admin: Option<(crate::vocab::Endpoint, Arc<str>)>,
}

/// Consumer offsets sent in a transaction (AddOffsetsToTxn, TxnOffsetCommit).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TxnOffsets {
    /// The consumer group.
    pub group_id: String,
    /// Frame of its AddOffsetsToTxn request, when seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_offsets_frame: Option<u64>,
    /// Frame of its TxnOffsetCommit request, when seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit_frame: Option<u64>,
    /// The committed positions.
    pub positions: Vec<TxnOffsetPosition>,
}

/// One committed position of a TxnOffsetCommit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TxnOffsetPosition {
    /// Topic.
    pub topic: Arc<str>,
    /// Partition.
    pub partition: i32,
    /// `CommittedOffset`.
    pub committed_offset: i64,
    /// The response's error for it (Kafka's name), when answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// An error one of the transaction's messages got.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TxnError {
    /// The API of the response, as Kafka spells it.
    pub api_name: &'static str,
    /// Kafka's error name (or the code, for a code Kafka's table lacks).
    pub error: String,
    /// The response's frame.
    pub frame: u64,
    /// The topic it concerns, for a per-partition error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<Arc<str>>,
    /// The partition it concerns, for a per-partition error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
}

/// The `transaction` object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Transaction {
    /// The transactional id, from its InitProducerId, AddPartitionsToTxn, EndTxn or Produce
    /// messages; `None` when none was seen (a capture of inter-broker traffic only).
    pub transactional_id: Option<String>,
    /// Producer id.
    pub producer_id: i64,
    /// The epoch the producer used.
    pub producer_epoch: i16,
    /// The bumped epoch its markers carry (or its EndTxn v5 response returned), when it
    /// differs from `producer_epoch`: transaction version 2 bumps the epoch at every end, and
    /// the coordinator bumps it when it aborts on its own (timeout, fencing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marker_producer_epoch: Option<i16>,
    /// 1 or 2 (KIP-890), when the messages tell: a WriteTxnMarkers v2 marker's
    /// `transaction_version` (0 and 1 both mean 1), the EndTxn version (v5+ is 2).
    pub transaction_version: Option<i8>,
    /// The transaction coordinator: the broker its producer's EndTxn, AddPartitionsToTxn or
    /// InitProducerId went to last. `None` when not known, and for a transaction known from
    /// its markers alone that another host sent (a new coordinator after a failover, or an
    /// admin client: `markers_from` says which).
    pub coordinator: Option<Broker>,
    /// The client id of its producer's requests to the coordinator.
    pub client_id: Option<String>,
    /// The client id of the WriteTxnMarkers requests that carried its markers: a broker's
    /// (Kafka's coordinator uses `broker-<id>-txn-marker-sender`), or an admin client's
    /// (`kafka-transactions.sh abort`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub markers_client_id: Option<String>,
    /// The client side of the connection its first WriteTxnMarkers request came on: the
    /// coordinator's address (the port is the connection's own, not the broker's listener),
    /// or an admin client's. Says where the markers came from when `coordinator` is not
    /// known (a capture of inter-broker traffic only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub markers_from: Option<crate::vocab::Endpoint>,
    /// The timeout its InitProducerId asked for, in milliseconds.
    pub transaction_timeout_ms: Option<i32>,
    /// What became of it.
    pub outcome: Outcome,
    /// What `outcome` was read from (`"markers"`, `"end_txn"`, `"fencing"`), `None` for
    /// `open` and `unknown`.
    pub outcome_from: Option<OutcomeFrom>,
    /// What the client asked with EndTxn (`"commit"`, `"abort"`), or `None`.
    pub requested: Option<&'static str>,
    /// Who ended it, or `None` when not known (no end seen, or markers only with none of the
    /// client's messages).
    pub ended_by: Option<EndedBy>,
    /// Why the coordinator ended it, when it did.
    pub reason: Option<Reason>,
    /// Whether the capture shows it open past its timeout.
    pub timed_out: bool,
    /// Whether it hangs at the capture's end: still open past its timeout, or a partition led
    /// by another broker than its coordinator holds its data and got no marker although its
    /// end was asked for (its `hanging_transaction` verdicts, one per such partition, follow
    /// its record). Absent when false. `--outcome hanging` selects these, whatever their
    /// `outcome`; the report draws them as hanging.
    #[serde(skip_serializing_if = "crate::txn::is_false")]
    pub hanging: bool,
    /// Present, `true`, where it would be judged hanging but the capture holds no
    /// WriteTxnMarkers request from its coordinator (from its address, or from its
    /// `broker-N-txn-marker-sender`; an admin client's own, `kafka-transactions.sh abort`, never
    /// count), as on a client's host (markers go from its coordinator
    /// to the partitions' leaders, broker to broker, unseen there): a partition another broker
    /// than its coordinator leads holds its data with no marker seen, its end asked for (or
    /// its timeout and the coordinator's sweep passed) at least [`LINGER_SECS`] s before the
    /// capture ended, and no read_committed Fetch response of its leader since showed that
    /// partition's last_stable_offset still on its batches. Whether it hangs is not judged
    /// (`hanging` stays false, as where another partition's verdict makes it hanging;
    /// `kafka-transactions.sh describe --transactional-id ID` tells).
    ///
    /// [`LINGER_SECS`]: crate::txn::LINGER_SECS
    #[serde(skip_serializing_if = "crate::txn::is_false")]
    pub markers_not_captured: bool,
    /// Present, `true`, when a later message of its producer that its coordinator accepted
    /// (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, a transactional Produce) proved its
    /// markers written before all of them were seen written (Kafka's coordinator refuses those
    /// with CONCURRENT_TRANSACTIONS until they are): its record is written at that message
    /// (the record's `frame`). Absent when false.
    #[serde(skip_serializing_if = "crate::txn::is_false")]
    pub markers_written_later: bool,
    /// Committed, but ABORT markers (an admin client's, `kafka-transactions.sh abort`) came
    /// for some of its partitions: their records were aborted while the rest were committed
    /// (the partitions whose `marker` is `ABORT`; its `accepted_commit_aborted` verdict
    /// follows its record). Absent when false.
    #[serde(skip_serializing_if = "crate::txn::is_false")]
    pub partial_commit: bool,
    /// The frame of the InitProducerId response that fenced it, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fenced_by_frame: Option<u64>,
    /// Present, `true`, when its end was not seen and bytes were lost after its last message:
    /// its client's connection to its coordinator lost bytes (a `gap`: lost packets or the
    /// snapshot length), or the memory budget passed over a frame anywhere after it. Its
    /// EndTxn may have been there, so an InitProducerId that came next is not taken as fencing
    /// it, nor is it called open at the capture's end: its outcome is `unknown`.
    #[serde(skip_serializing_if = "crate::txn::is_false")]
    pub end_not_captured: bool,
    /// Present, `true`, when the view wrote it before its end, for the memory budget or past
    /// the most transactions it follows at once (a `memory_limit` or `transaction_limit`
    /// anomaly says so): what it holds is what was seen by then, and an `open` outcome means
    /// not ended by then, not at the capture's end.
    #[serde(skip_serializing_if = "crate::txn::is_false")]
    pub given_up: bool,
    /// Its first message in the capture.
    pub begin: Moment,
    /// Whether its producer's InitProducerId (or the end of its previous transaction) is in
    /// the capture, so that `begin` is its true beginning.
    pub begun_in_capture: bool,
    /// Its EndTxn request.
    pub end_requested: Option<Moment>,
    /// Its EndTxn response, and the error it gave (Kafka's name; `"NONE"` when accepted).
    pub end_response: Option<Moment>,
    /// The EndTxn response's error, when answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_error: Option<String>,
    /// Its first WriteTxnMarkers request.
    pub markers_sent: Option<Moment>,
    /// The last response to its WriteTxnMarkers requests.
    pub markers_answered: Option<Moment>,
    /// Microseconds from `begin` to its last message (to the capture's end for one still
    /// open there).
    pub duration_us: i64,
    /// Microseconds from its EndTxn request to its response; absent when the capture's
    /// clock went back between them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_latency_us: Option<i64>,
    /// Every partition it covered.
    pub partitions: Vec<TxnPartition>,
    /// Partitions past [`crate::txn::MAX_PARTITIONS`], counted only.
    #[serde(skip_serializing_if = "crate::txn::is_zero")]
    pub partitions_not_listed: u64,
    /// Consumer offsets sent in it.
    pub offsets: Vec<TxnOffsets>,
    /// Every error its messages got.
    pub errors: Vec<TxnError>,
    /// The frame numbers of its messages, in order (at most [`crate::txn::MAX_FRAMES`]).
    pub frames: Vec<u64>,
    /// Frames past that bound, counted only.
    #[serde(skip_serializing_if = "crate::txn::is_zero")]
    pub frames_not_listed: u64,
    /// Its messages in order (as many as `frames`), for the `--format tree` timeline; not
    /// serialised.
    #[serde(skip)]
    pub timeline: Vec<Step>,
    /// With `crate::Config::write_pcap`: the frame numbers of the packets of its messages
    /// (each message's `KafkaMessage::packets`: the segments of its frame and its
    /// connection's handshake) and of its producer's InitProducerId exchange, each once, as
    /// many as [`crate::txn::MAX_PACKETS`], for `--write-pcap` with `--transactions`; empty
    /// otherwise; not serialised.
    #[serde(skip)]
    pub packets: Vec<u64>,
    /// Packets of its messages past [`crate::txn::MAX_PACKETS`], not kept; not serialised.
    #[serde(skip)]
    pub packets_not_kept: u64,
}

impl TxnPartition {
    /// Whether it holds data of the transaction that its marker must settle: transactional
    /// batches of its Produce requests, or its group's committed offsets
    /// ([`TxnPartition::offsets_committed`]).
    pub fn holds_data(&self) -> bool {
        self.batches > 0 || self.offsets_committed
    }
}

impl Transaction {
    /// Whether it ended unseen: outcome `unknown`, no end asked for in the capture, and a
    /// read_committed consumer's last stable offset past a partition's batches
    /// ([`TxnPartition::stable_past_frame`]): its EndTxn not captured, or its coordinator's
    /// abort past its timeout.
    pub fn ended_unseen(&self) -> bool {
        self.outcome == Outcome::Unknown
            && self.requested.is_none()
            && self
                .partitions
                .iter()
                .any(|p| p.stable_past_frame.is_some())
    }

    /// Whether it ended unseen ([`Transaction::ended_unseen`]) before its
    /// `transaction_timeout_ms` passed: a read_committed consumer's last stable offset passed
    /// a partition's batches sooner than that after it began (begun in the capture, so its
    /// start is known), so its coordinator did not abort it on its timeout: its EndTxn was
    /// not captured, or a new instance of its producer (an InitProducerId for its
    /// transactional id) fenced it, unseen.
    pub fn ended_unseen_before_timeout(&self) -> bool {
        let Some(ms) = self
            .transaction_timeout_ms
            .filter(|_| self.begun_in_capture)
        else {
            return false;
        };
        self.ended_unseen()
            && self
                .partitions
                .iter()
                .filter(|p| p.stable_past_frame.is_some())
                .filter_map(|p| p.stable_passed.map(|(m, _)| m))
                .any(|m| self.begin.micros_to(&m) < i64::from(ms.max(0)) * 1_000)
    }

    /// What this transaction holds on the heap, in bytes (an estimate: its vectors'
    /// capacities as the allocator rounds them, and 48 bytes per string beside its length).
    pub fn held_cost(&self) -> usize {
        vec_cost::<TxnPartition>(self.partitions.capacity())
            + self
                .partitions
                .iter()
                .map(|p| {
                    vec_cost::<MarkerRoundTrip>(p.marker_round_trips.capacity())
                        + p.replaced_marker
                            .as_ref()
                            .map_or(0, |_| std::mem::size_of::<ReplacedMarker>() + 48)
                })
                .sum::<usize>()
            + vec_cost::<u64>(self.frames.capacity())
            + vec_cost::<Step>(self.timeline.capacity())
            + vec_cost::<u64>(self.packets.capacity())
            + vec_cost::<TxnError>(self.errors.capacity())
            + vec_cost::<TxnOffsets>(self.offsets.capacity())
            + self
                .offsets
                .iter()
                .map(|o| {
                    vec_cost::<TxnOffsetPosition>(o.positions.capacity())
                        + 48 * (1 + o.positions.len())
                })
                .sum::<usize>()
            + 48 * (self.partitions.len() + self.errors.len() + 3)
            + self
                .errors
                .iter()
                .map(|e| e.topic.as_ref().map_or(0, |t| t.len()))
                .sum::<usize>()
            + self.offsets.iter().map(|o| o.group_id.len()).sum::<usize>()
            + [
                &self.transactional_id,
                &self.client_id,
                &self.markers_client_id,
            ]
            .iter()
            .map(|s| s.as_ref().map_or(0, |s| s.len()))
            .sum::<usize>()
    }
}
