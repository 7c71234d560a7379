//! Fetch (API key 1) request and response bodies, versions 4 to 18: consumers (and follower
//! brokers) read partitions; a `read_committed` consumer sees data only up to the last stable
//! offset, with the aborted transactions to drop and the control batches (COMMIT / ABORT
//! markers) in the data.
//!
//! Input: a request body whole ([`decode_request`]); a response body in chunks as it streams
//! by ([`walk_response`]: record batches are never buffered, only their headers read, and a
//! control batch's first bytes for its control record), or whole ([`decode_response`], the same
//! walk). Output: [`FetchRequest`] or [`FetchResponse`], whose serde form is the record's
//! `body`, or a [`DecodeError`] with the field path that failed.
//!
//! Sources: Apache Kafka `clients/src/main/resources/common/message/FetchRequest.json` and
//! `FetchResponse.json` (`"validVersions": "4-18"`, `"flexibleVersions": "12+"`): v4 adds
//! `IsolationLevel`, `LastStableOffset` and `AbortedTransactions` (KIP-98), v5
//! `LogStartOffset`, v7 fetch sessions (KIP-227), v9 `CurrentLeaderEpoch`, v11
//! `RackId` / `PreferredReadReplica` (KIP-392), v12 is flexible with tagged
//! `DivergingEpoch`, `CurrentLeader`, `SnapshotId`, v13 topic ids (KIP-516), v15 `ReplicaState`
//! (KIP-903), v16 `NodeEndpoints` (KIP-951), v17 `ReplicaDirectoryId` (KIP-853), v18 the
//! tagged `HighWatermark` of a request partition (KIP-1166).

use super::produce::{leader_id_and_epoch, node_endpoints, LeaderIdAndEpoch, NodeEndpoint};
use super::{Body, BodyWalk, InferFn};
use crate::kafka::api::ErrorCode;
use crate::kafka::names::Name;
use crate::kafka::primitives::{
    array, array_of, finish, int32, int64, int8, leaf, leaf_shown,
    text_field, string_field, tags, uuid_field, Budget, DecodeError, PResult, PathSeg, TaggedField,
};
use crate::kafka::walk::{self, batch_step, BatchHeader, BatchItem, Cur, Machine, Res};
use crate::memory::{string_cost, vec_cost};
use serde::Serialize;

/// The versions decoded: 4 to 18 (0-3 were removed in Kafka 4.0).
pub const VERSIONS: std::ops::RangeInclusive<i16> = 4..=18;

/// Fetch messages are written only with `--all-apis` or `--api Fetch`.
pub const SHOWN_BY_DEFAULT: bool = false;

/// A response is not inferred.
pub const INFER: Option<InferFn<FetchResponse>> = None;

/// Kafka's name of an isolation level: 0 `READ_UNCOMMITTED`, 1 `READ_COMMITTED` (else
/// `UNKNOWN`). A body decoded in part names it too ([`crate::kafka::partial`]).
pub fn isolation_name(level: i8) -> &'static str {
    match level {
        0 => "READ_UNCOMMITTED",
        1 => "READ_COMMITTED",
        _ => "UNKNOWN",
    }
}

/// A decoded Fetch request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FetchRequest {
    /// `ReplicaId` (INT32, v0-14): -1 for a consumer, the broker id for a follower.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replica_id: Option<i32>,
    /// `MaxWaitMs` (INT32).
    pub max_wait_ms: i32,
    /// `MinBytes` (INT32).
    pub min_bytes: i32,
    /// `MaxBytes` (INT32).
    pub max_bytes: i32,
    /// `IsolationLevel` (INT8): 0 read_uncommitted, 1 read_committed.
    pub isolation_level: i8,
    /// Kafka's name of `isolation_level`: `READ_UNCOMMITTED` or `READ_COMMITTED`.
    pub isolation: &'static str,
    /// `SessionId` (INT32, v7+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<i32>,
    /// `SessionEpoch` (INT32, v7+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_epoch: Option<i32>,
    /// `Topics`: what to fetch.
    pub topics: Vec<FetchTopic>,
    /// `ForgottenTopicsData` (v7+): partitions leaving the fetch session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forgotten_topics_data: Option<Vec<ForgottenTopic>>,
    /// `RackId` (STRING, v11+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rack_id: Option<String>,
    /// Tagged fields (`ClusterId` 0, `ReplicaState` 1), kept as they are.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// One topic of a Fetch request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FetchTopic {
    /// `Topic` (STRING, v0-12), shared with the other messages naming it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<Name>,
    /// `TopicId` (UUID, v13+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_id: Option<String>,
    /// `Partitions`.
    pub partitions: Vec<FetchPartition>,
}

/// One partition of a Fetch request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FetchPartition {
    /// `Partition` (INT32).
    pub partition: i32,
    /// `CurrentLeaderEpoch` (INT32, v9+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_leader_epoch: Option<i32>,
    /// `FetchOffset` (INT64).
    pub fetch_offset: i64,
    /// `LastFetchedEpoch` (INT32, v12+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_fetched_epoch: Option<i32>,
    /// `LogStartOffset` (INT64, v5+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_start_offset: Option<i64>,
    /// `PartitionMaxBytes` (INT32).
    pub partition_max_bytes: i32,
    /// Tagged fields (`ReplicaDirectoryId` 0, `HighWatermark` 1), kept as they are.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// A topic leaving a fetch session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForgottenTopic {
    /// `Topic` (STRING, v7-12), shared with the other messages naming it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<Name>,
    /// `TopicId` (UUID, v13+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_id: Option<String>,
    /// `Partitions` ([]INT32).
    pub partitions: Vec<i32>,
}

/// Decodes a whole request body of `version` (4 to 18; callers reject others).
pub fn decode_request(body: &[u8], version: i16, b: &Budget) -> Result<FetchRequest, DecodeError> {
    let flex = version >= 12;
    let topic_name = |i| -> PResult<'_, (Option<Name>, Option<String>)> {
        if version >= 13 {
            let (i, id) = uuid_field(b, "topic_id", i)?;
            Ok((i, (None, Some(id))))
        } else {
            let (i, name) = text_field::<Name>(b, "topic", i, flex)?;
            Ok((i, (Some(name), None)))
        }
    };
    let partition = |i| -> PResult<'_, FetchPartition> {
        let (i, partition) = leaf(b, "partition", i, int32)?;
        let (i, current_leader_epoch) = if version >= 9 {
            let (i, v) = leaf(b, "current_leader_epoch", i, int32)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, fetch_offset) = leaf(b, "fetch_offset", i, int64)?;
        let (i, last_fetched_epoch) = if version >= 12 {
            let (i, v) = leaf(b, "last_fetched_epoch", i, int32)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, log_start_offset) = if version >= 5 {
            let (i, v) = leaf(b, "log_start_offset", i, int64)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, partition_max_bytes) = leaf(b, "partition_max_bytes", i, int32)?;
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            FetchPartition {
                partition,
                current_leader_epoch,
                fetch_offset,
                last_fetched_epoch,
                log_start_offset,
                partition_max_bytes,
                unknown_tagged_fields,
            },
        ))
    };
    let topic = |i| -> PResult<'_, FetchTopic> {
        let (i, (topic, topic_id)) = topic_name(i)?;
        let (i, partitions) = array(b, "partitions", "FetchPartition", i, flex, 16, partition)?;
        let (i, _) = tags(b, i, flex)?;
        Ok((
            i,
            FetchTopic {
                topic,
                topic_id,
                partitions,
            },
        ))
    };
    let forgotten = |i| -> PResult<'_, ForgottenTopic> {
        let (i, (topic, topic_id)) = topic_name(i)?;
        let (i, partitions) = array_of(b, "partitions", i, flex, 4, int32)?;
        let (i, _) = tags(b, i, flex)?;
        Ok((
            i,
            ForgottenTopic {
                topic,
                topic_id,
                partitions,
            },
        ))
    };
    let parse = |i| -> PResult<'_, FetchRequest> {
        let (i, replica_id) = if version <= 14 {
            let (i, v) = leaf(b, "replica_id", i, int32)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, max_wait_ms) = leaf(b, "max_wait_ms", i, int32)?;
        let (i, min_bytes) = leaf(b, "min_bytes", i, int32)?;
        let (i, max_bytes) = leaf(b, "max_bytes", i, int32)?;
        let (i, isolation_level) = leaf_shown(b, "isolation_level", "int8", i, int8, |l| {
            format!("{l} ({})", isolation_name(*l))
        })?;
        let (i, session_id, session_epoch) = if version >= 7 {
            let (i, id) = leaf(b, "session_id", i, int32)?;
            let (i, epoch) = leaf(b, "session_epoch", i, int32)?;
            (i, Some(id), Some(epoch))
        } else {
            (i, None, None)
        };
        let min = if version >= 13 { 18 } else { 3 };
        let (i, topics) = array(b, "topics", "FetchTopic", i, flex, min, topic)?;
        let (i, forgotten_topics_data) = if version >= 7 {
            let (i, v) = array(
                b,
                "forgotten_topics_data",
                "ForgottenTopic",
                i,
                flex,
                min,
                forgotten,
            )?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, rack_id) = if version >= 11 {
            let (i, v) = string_field(b, "rack_id", i, flex)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            FetchRequest {
                replica_id,
                max_wait_ms,
                min_bytes,
                max_bytes,
                isolation_level,
                isolation: isolation_name(isolation_level),
                session_id,
                session_epoch,
                topics,
                forgotten_topics_data,
                rack_id,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}

/// A decoded Fetch response body: the structure, the aborted transactions and the control
/// batches; data batches are counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FetchResponse {
    /// `ThrottleTimeMs` (INT32).
    pub throttle_time_ms: i32,
    /// `ErrorCode` (INT16, v7+): a top-level error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<i16>,
    /// Kafka's name for `error_code` (v7+; null for a code missing from Kafka's table).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Option<&'static str>>,
    /// `SessionId` (INT32, v7+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<i32>,
    /// `Responses`: each topic's data.
    pub responses: Vec<FetchableTopicResponse>,
    /// `NodeEndpoints` (tagged 0, v16+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_endpoints: Option<Vec<NodeEndpoint>>,
    /// Topics, partitions, aborted transactions and control batches walked but not listed,
    /// past [`walk::MAX_LISTED`].
    #[serde(skip_serializing_if = "walk::is_zero")]
    pub elements_not_listed: u64,
}

impl FetchResponse {
    /// What this body holds on the heap, in bytes (an estimate, as
    /// [`super::produce::ProduceRequest::held_cost`]: a walked body holds counts, aborted
    /// transactions and control batches, not its record data).
    pub fn held_cost(&self) -> usize {
        let string = |s: &Option<String>| string_cost(s.as_ref());
        vec_cost::<FetchableTopicResponse>(self.responses.capacity())
            + self
                .node_endpoints
                .as_ref()
                .map_or(0, |n| vec_cost::<NodeEndpoint>(n.capacity()) + 64 * n.len())
            + self
                .responses
                .iter()
                .map(|t| {
                    crate::memory::name_cost(t.topic.as_deref())
                        + string(&t.topic_id)
                        + vec_cost::<PartitionData>(t.partitions.capacity())
                        + t.partitions
                            .iter()
                            .map(|p| {
                                p.aborted_transactions
                                    .as_ref()
                                    .map_or(0, |a| vec_cost::<AbortedTransaction>(a.capacity()))
                                    + match &p.records {
                                        walk::Read::Value(Some(r)) => {
                                            vec_cost::<BatchHeader>(r.control_batches.capacity())
                                        }
                                        _ => 0,
                                    }
                            })
                            .sum::<usize>()
                })
                .sum::<usize>()
    }
}

/// One topic of a Fetch response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FetchableTopicResponse {
    /// `Topic` (STRING, v0-12), shared with the other messages naming it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<Name>,
    /// `TopicId` (UUID, v13+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_id: Option<String>,
    /// `Partitions`.
    pub partitions: Vec<PartitionData>,
}

/// One partition of a Fetch response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionData {
    /// `PartitionIndex` (INT32).
    pub partition_index: i32,
    /// `ErrorCode` (INT16).
    pub error_code: i16,
    /// Kafka's name for `error_code`.
    pub error: Option<&'static str>,
    /// `HighWatermark` (INT64).
    pub high_watermark: i64,
    /// `LastStableOffset` (INT64): below it every transaction is decided; a
    /// `read_committed` consumer reads no further.
    pub last_stable_offset: i64,
    /// `LogStartOffset` (INT64, v5+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_start_offset: Option<i64>,
    /// `AbortedTransactions` (nullable; sent to `read_committed` consumers): the aborted
    /// transactions in the fetched range.
    pub aborted_transactions: Option<Vec<AbortedTransaction>>,
    /// `PreferredReadReplica` (INT32, v11+): -1 unless the consumer should read elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preferred_read_replica: Option<i32>,
    /// `Records` (nullable): what the field holds. Absent only from a response decoded in
    /// part whose bytes stopped before it.
    #[serde(skip_serializing_if = "walk::Read::is_unread")]
    pub records: walk::Read<Option<FetchedRecords>>,
    /// `DivergingEpoch` (tagged 0, v12+): for a follower whose log diverged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diverging_epoch: Option<EpochEndOffset>,
    /// `CurrentLeader` (tagged 1, v12+): the leader, with NOT_LEADER_OR_FOLLOWER or
    /// FENCED_LEADER_EPOCH.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_leader: Option<LeaderIdAndEpoch>,
    /// `SnapshotId` (tagged 2, v12+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<SnapshotId>,
}

/// One aborted transaction in a Fetch response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AbortedTransaction {
    /// `ProducerId` (INT64).
    pub producer_id: i64,
    /// `FirstOffset` (INT64): the transaction's first offset in this partition.
    pub first_offset: i64,
}

/// `DivergingEpoch` of a Fetch response partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EpochEndOffset {
    /// `Epoch` (INT32).
    pub epoch: i32,
    /// `EndOffset` (INT64).
    pub end_offset: i64,
}

/// `SnapshotId` of a Fetch response partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapshotId {
    /// `EndOffset` (INT64).
    pub end_offset: i64,
    /// `Epoch` (INT32).
    pub epoch: i32,
}

/// What a Fetch response's `Records` field holds: data batches counted, control batches
/// listed with their control record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FetchedRecords {
    /// The field's length in bytes.
    pub size: u64,
    /// Whole batches that are not control batches.
    pub data_batches: u64,
    /// Their `records_count`, summed.
    pub data_records: u64,
    /// Of the data batches, those flagged transactional.
    pub transactional_batches: u64,
    /// Offset of the first whole batch (`base_offset`), when there is one.
    pub first_offset: Option<i64>,
    /// Last offset of the last whole batch (`base_offset + last_offset_delta`), when known.
    pub last_offset: Option<i64>,
    /// Control batches (transaction markers), each with its control record.
    pub control_batches: Vec<BatchHeader>,
    /// Bytes at the end that hold no whole batch: a batch cut by the fetch size, as brokers
    /// send (0: none).
    #[serde(skip_serializing_if = "walk::is_zero")]
    pub partial_batch_bytes: u64,
    /// Bytes at the end passed over from a batch whose `batch_length` is no batch's (negative,
    /// or too short for its header): damaged bytes, which a `negative_length` or
    /// `truncated_body` anomaly names (0: none).
    #[serde(skip_serializing_if = "walk::is_zero")]
    pub damaged_batch_bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Prelude,
    Topic,
    Partition,
    Aborted,
    PartitionRest,
    Records,
    PartitionTail,
    TopicTail,
    Tail,
    Done,
}

/// The state of a Fetch response walk ([`crate::kafka::walk::Machine`]).
#[derive(Debug)]
pub struct ResponseMachine {
    version: i16,
    at: At,
    topics_left: u64,
    parts_left: u64,
    aborted_left: u64,
    records_left: u64,
    topic: usize,
    part: usize,
    item: usize,
    /// The batch whose records the walk skips after its header (for [`Machine::skip_path`]).
    skipping: usize,
    topic_listed: bool,
    part_listed: bool,
    listing: walk::Listing,
    body: FetchResponse,
    /// The first damaged batch passed over ([`Machine::take_damage`]).
    damage: Option<DecodeError>,
}

impl ResponseMachine {
    fn new(version: i16) -> Self {
        ResponseMachine {
            version,
            at: At::Prelude,
            topics_left: 0,
            parts_left: 0,
            aborted_left: 0,
            records_left: 0,
            topic: 0,
            part: 0,
            item: 0,
            skipping: 0,
            topic_listed: false,
            part_listed: false,
            listing: walk::Listing::default(),
            body: FetchResponse {
                throttle_time_ms: 0,
                error_code: None,
                error: None,
                session_id: None,
                responses: Vec::new(),
                node_endpoints: None,
                elements_not_listed: 0,
            },
            damage: None,
        }
    }

    fn flex(&self) -> bool {
        self.version >= 12
    }

    fn list(&mut self) -> bool {
        self.listing.take()
    }

    fn partition(&mut self) -> Option<&mut PartitionData> {
        if !(self.topic_listed && self.part_listed) {
            return None;
        }
        self.body.responses.last_mut()?.partitions.last_mut()
    }
}

impl Machine for ResponseMachine {
    fn step(&mut self, c: &mut Cur) -> Res<u64> {
        let flex = self.flex();
        let v = self.version;
        match self.at {
            At::Prelude => {
                c.field = "throttle_time_ms";
                let throttle = c.i32()?;
                let (error_code, session_id) = if v >= 7 {
                    c.field = "error_code";
                    let e = c.i16()?;
                    c.field = "session_id";
                    (Some(e), Some(c.i32()?))
                } else {
                    (None, None)
                };
                c.field = "responses";
                let min = if v >= 13 { 18 } else { 3 };
                let n = c.count(flex, false, min)?.unwrap_or(0);
                self.body.throttle_time_ms = throttle;
                self.body.error_code = error_code;
                self.body.error = error_code.map(|e| ErrorCode(e).name());
                self.body.session_id = session_id;
                self.body.responses.reserve_exact(walk::capacity_hint(n));
                self.topics_left = n;
                self.at = if n > 0 { At::Topic } else { At::Tail };
            }
            At::Topic => {
                let (topic, topic_id) = if v >= 13 {
                    c.field = "topic_id";
                    (None, Some(c.uuid()?))
                } else {
                    c.field = "topic";
                    (Some(c.text(flex)?), None)
                };
                c.field = "partitions";
                let n = c.count(flex, false, 30)?.unwrap_or(0);
                self.topic_listed = self.list();
                if self.topic_listed {
                    self.body.responses.push(FetchableTopicResponse {
                        topic,
                        topic_id,
                        partitions: Vec::with_capacity(walk::capacity_hint(n)),
                    });
                }
                self.parts_left = n;
                self.part = 0;
                self.at = if n > 0 { At::Partition } else { At::TopicTail };
            }
            At::Partition => {
                c.field = "partition_index";
                let partition_index = c.i32()?;
                c.field = "error_code";
                let error_code = c.i16()?;
                c.field = "high_watermark";
                let high_watermark = c.i64()?;
                c.field = "last_stable_offset";
                let last_stable_offset = c.i64()?;
                c.field = "log_start_offset";
                let log_start_offset = if v >= 5 { Some(c.i64()?) } else { None };
                c.field = "aborted_transactions";
                let n = c.count(flex, true, 16)?;
                let listed = self.list();
                self.part_listed = self.topic_listed && listed;
                let p = PartitionData {
                    partition_index,
                    error_code,
                    error: ErrorCode(error_code).name(),
                    high_watermark,
                    last_stable_offset,
                    log_start_offset,
                    aborted_transactions: n.map(|_| Vec::new()),
                    preferred_read_replica: None,
                    records: walk::Read::Unread,
                    diverging_epoch: None,
                    current_leader: None,
                    snapshot_id: None,
                };
                if self.part_listed {
                    if let Some(t) = self.body.responses.last_mut() {
                        t.partitions.push(p);
                    }
                }
                self.aborted_left = n.unwrap_or(0);
                self.item = 0;
                if self.aborted_left > 0 {
                    self.at = At::Aborted;
                } else {
                    self.at = At::PartitionRest;
                }
            }
            At::Aborted => {
                c.field = "producer_id";
                let producer_id = c.i64()?;
                c.field = "first_offset";
                let first_offset = c.i64()?;
                if flex {
                    c.field = "tagged_fields";
                    c.tags()?;
                }
                let listed = self.list();
                if listed {
                    if let Some(list) = self
                        .partition()
                        .and_then(|p| p.aborted_transactions.as_mut())
                    {
                        list.push(AbortedTransaction {
                            producer_id,
                            first_offset,
                        });
                    }
                }
                self.aborted_left -= 1;
                self.item += 1;
                if self.aborted_left == 0 {
                    self.at = At::PartitionRest;
                }
            }
            At::PartitionRest => {
                c.field = "preferred_read_replica";
                let preferred = if v >= 11 { Some(c.i32()?) } else { None };
                c.field = "records";
                let len = c.bytes_len(flex)?;
                if let Some(p) = self.partition() {
                    p.preferred_read_replica = preferred;
                    p.records = walk::Read::Value(len.map(|size| FetchedRecords {
                        size,
                        data_batches: 0,
                        data_records: 0,
                        transactional_batches: 0,
                        first_offset: None,
                        last_offset: None,
                        control_batches: Vec::new(),
                        partial_batch_bytes: 0,
                        damaged_batch_bytes: 0,
                    }));
                }
                self.records_left = len.unwrap_or(0);
                self.item = 0;
                self.at = if self.records_left > 0 {
                    At::Records
                } else {
                    At::PartitionTail
                };
            }
            At::Records => {
                let (item, skip) = batch_step(c, self.records_left, true)?;
                self.records_left -= c.pos as u64 + skip;
                self.skipping = self.item;
                match item {
                    BatchItem::Batch(h) => {
                        let list_it = h.control_batch() && self.list();
                        if let Some(r) = self.partition().and_then(|p| p.records.get_mut()?.as_mut()) {
                            r.first_offset.get_or_insert(h.base_offset);
                            r.last_offset = h
                                .last_offset_delta
                                .map(|d| h.base_offset.saturating_add(i64::from(d)));
                            if h.control_batch() {
                                if list_it {
                                    r.control_batches.push(h);
                                }
                            } else {
                                r.data_batches += 1;
                                r.data_records +=
                                    h.records_count.map_or(0, |n| n.max(0) as u64);
                                if h.is_transactional == Some(true) {
                                    r.transactional_batches += 1;
                                }
                            }
                        }
                        self.item += 1;
                    }
                    BatchItem::Partial(n) => {
                        if let Some(r) = self.partition().and_then(|p| p.records.get_mut()?.as_mut()) {
                            r.partial_batch_bytes = n;
                        }
                    }
                    BatchItem::Damaged(d) => {
                        let path = self.path();
                        walk::keep_damage(&mut self.damage, &d, path);
                        if let Some(r) = self.partition().and_then(|p| p.records.get_mut()?.as_mut()) {
                            r.damaged_batch_bytes = d.bytes;
                        }
                    }
                }
                if self.records_left == 0 {
                    self.at = At::PartitionTail;
                }
                return Ok(skip);
            }
            At::PartitionTail => {
                if flex {
                    let fields = c.tags()?;
                    if let Some(p) = self.partition() {
                        for (tag, data) in fields {
                            let mut t = Cur::new(data, data.len() as u64);
                            match tag {
                                0 => {
                                    p.diverging_epoch = (|| {
                                        Some(EpochEndOffset {
                                            epoch: t.i32().ok()?,
                                            end_offset: t.i64().ok()?,
                                        })
                                    })()
                                }
                                1 => {
                                    p.current_leader =
                                        leader_id_and_epoch(data, &Budget::default())
                                }
                                2 => {
                                    p.snapshot_id = (|| {
                                        Some(SnapshotId {
                                            end_offset: t.i64().ok()?,
                                            epoch: t.i32().ok()?,
                                        })
                                    })()
                                }
                                _ => {}
                            }
                        }
                    }
                }
                self.parts_left -= 1;
                self.part += 1;
                self.at = if self.parts_left > 0 {
                    At::Partition
                } else {
                    At::TopicTail
                };
            }
            At::TopicTail => {
                if flex {
                    c.tags()?;
                }
                self.topics_left -= 1;
                self.topic += 1;
                self.at = if self.topics_left > 0 {
                    At::Topic
                } else {
                    At::Tail
                };
            }
            At::Tail => {
                if flex {
                    let fields = c.tags()?;
                    if v >= 16 {
                        if let Some((_, data)) = fields.iter().find(|(t, _)| *t == 0) {
                            self.body.node_endpoints = node_endpoints(data, &Budget::default());
                        }
                    }
                }
                self.at = At::Done;
            }
            At::Done => {}
        }
        Ok(0)
    }

    fn done(&self) -> bool {
        self.at == At::Done
    }

    fn path(&self) -> Vec<PathSeg> {
        use PathSeg::{Field, Index};
        let topic = ("responses", self.topic);
        let part = ("partitions", self.part);
        let tags = [Field("tagged_fields")];
        match self.at {
            At::Prelude | At::Done => Vec::new(),
            At::Tail => tags.to_vec(),
            At::Topic => walk::nested_path(&[topic], &[]),
            At::TopicTail => walk::nested_path(&[topic], &tags),
            At::Partition | At::PartitionRest => walk::nested_path(&[topic, part], &[]),
            At::Aborted => walk::nested_path(
                &[topic, part],
                &[Field("aborted_transactions"), Index(self.item)],
            ),
            At::Records => walk::nested_path(
                &[topic, part],
                &[Field("records"), Field("batches"), Index(self.item)],
            ),
            At::PartitionTail => walk::nested_path(&[topic, part], &tags),
        }
    }

    fn cost(&self) -> usize {
        self.listing.cost(std::mem::size_of::<BatchHeader>())
    }

    fn started(&self) -> bool {
        self.at != At::Prelude
    }

    fn take_damage(&mut self) -> Option<DecodeError> {
        self.damage.take()
    }

    fn skip_path(&self) -> Vec<PathSeg> {
        walk::batch_records_path(
            ("responses", self.topic),
            ("partitions", self.part),
            self.skipping,
        )
    }
}

impl ResponseMachine {
    fn into_body(mut self) -> FetchResponse {
        self.body.elements_not_listed = self.listing.not_listed;
        self.body
    }
}

/// Starts a walk of a response body of `len` bytes at `version` (4 to 18; callers reject
/// others), to be fed as its bytes arrive.
pub fn walk_response(version: i16, len: u64) -> Box<dyn BodyWalk> {
    super::walked(ResponseMachine::new(version), len, |m| {
        Body::FetchResponse(m.into_body())
    })
}

/// Decodes a whole response body of `version` (4 to 18) by the same walk.
pub fn decode_response(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<FetchResponse, DecodeError> {
    walk::walk_whole(ResponseMachine::new(version), body, b).map(ResponseMachine::into_body)
}
