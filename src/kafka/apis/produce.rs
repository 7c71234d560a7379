//! Produce (API key 0) request and response bodies, versions 3 to 13: a producer writes record
//! batches to partition leaders; for a transaction, batches flagged transactional with its
//! producer id and epoch.
//!
//! Input: a request body in chunks as it streams by ([`walk_request`]: its record batches are
//! never buffered, only their 61-byte headers read), or whole ([`decode_request`], the same
//! walk); a response body whole ([`decode_response`]). Output: [`ProduceRequest`] (the
//! structure and every batch header, never the records) or [`ProduceResponse`], whose serde
//! form is the record's `body`, or a [`DecodeError`] with the field path that failed.
//!
//! Sources: Apache Kafka `clients/src/main/resources/common/message/ProduceRequest.json` and
//! `ProduceResponse.json` (`"validVersions": "3-13"`, `"flexibleVersions": "9+"`): v8 adds
//! `RecordErrors` and `ErrorMessage` to the response (KIP-467), v10 the tagged `CurrentLeader`
//! and `NodeEndpoints` (KIP-951), v12 only marks transaction version 2 (KIP-890), v13 replaces
//! topic names by topic ids (KIP-516). The batch header is Kafka's `DefaultRecordBatch`
//! ([`crate::kafka::walk::BatchHeader`]).

use super::{Body, BodyWalk, InferFn};
use crate::kafka::api::ErrorCode;
use crate::kafka::names::Name;
use crate::kafka::primitives::{
    array, error_code_field, finish, int32, int64, leaf, text_field, nullable_string_field, string_field,
    tags, uuid_field, Budget, DecodeError, PResult, PathSeg, TaggedField,
};
use crate::kafka::walk::{self, batch_step, BatchHeader, BatchItem, Cur, Machine, Res};
use crate::memory::{string_cost, vec_cost};
use serde::Serialize;

/// The versions decoded: 3 to 13 (0-2 were removed in Kafka 4.0).
pub const VERSIONS: std::ops::RangeInclusive<i16> = 3..=13;

/// Produce messages are written only with `--all-apis` or `--api Produce`.
pub const SHOWN_BY_DEFAULT: bool = false;

/// A response names no producer: it is not inferred.
pub const INFER: Option<InferFn<ProduceResponse>> = None;

/// A decoded Produce request body: everything but the records themselves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProduceRequest {
    /// `TransactionalId` (NULLABLE_STRING): the producer's transactional id, null outside a
    /// transaction; shared with the producer's other requests.
    pub transactional_id: Option<Name>,
    /// `Acks` (INT16): 0, 1 or -1 (all in-sync replicas).
    pub acks: i16,
    /// `TimeoutMs` (INT32): how long the leader may wait for the acks.
    pub timeout_ms: i32,
    /// `TopicData`: each topic written to (at most [`walk::MAX_LISTED`] elements are listed in
    /// all; see `elements_not_listed`).
    pub topic_data: Vec<TopicProduceData>,
    /// Topics, partitions and batches walked but not listed, past [`walk::MAX_LISTED`].
    #[serde(skip_serializing_if = "walk::is_zero")]
    pub elements_not_listed: u64,
}

impl ProduceRequest {
    /// What this body holds on the heap, in bytes (an estimate: its vectors' capacities as the
    /// allocator rounds them, and its strings): a walked body holds the headers of its
    /// batches, not its record data, so its frame's size says nothing of it.
    pub fn held_cost(&self) -> usize {
        let string = |s: &Option<String>| string_cost(s.as_ref());
        crate::memory::name_cost(self.transactional_id.as_deref())
            + vec_cost::<TopicProduceData>(self.topic_data.capacity())
            + self
                .topic_data
                .iter()
                .map(|t| {
                    crate::memory::name_cost(t.name.as_deref())
                        + string(&t.topic_id)
                        + vec_cost::<PartitionProduceData>(t.partition_data.capacity())
                        + t.partition_data
                            .iter()
                            .filter_map(|p| p.records.as_ref())
                            .map(|r| r.batches.heap_cost())
                            .sum::<usize>()
                })
                .sum::<usize>()
    }
}

/// One topic of a Produce request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopicProduceData {
    /// `Name` (STRING, v0-12), shared with the other messages naming it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<Name>,
    /// `TopicId` (UUID, v13+), as Kafka prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_id: Option<String>,
    /// `PartitionData`: each partition written to.
    pub partition_data: Vec<PartitionProduceData>,
}

/// One partition of a Produce request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionProduceData {
    /// `Index` (INT32): the partition index.
    pub index: i32,
    /// `Records` (RECORDS, nullable): what the field holds, or null.
    pub records: Option<Records>,
}

/// What a `Records` field holds: its size and the header of every record batch in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Records {
    /// The field's length in bytes.
    pub size: u64,
    /// The header of each batch, in order (records never decompressed nor copied).
    pub batches: walk::Batches,
    /// Bytes at the end that hold no whole batch (0: none).
    #[serde(skip_serializing_if = "walk::is_zero")]
    pub partial_batch_bytes: u64,
    /// Batches walked but not listed, past [`walk::MAX_LISTED`] elements in the message.
    #[serde(skip_serializing_if = "walk::is_zero")]
    pub batches_not_listed: u64,
    /// Bytes at the end passed over from a batch whose `batch_length` is no batch's (negative,
    /// or too short for its header): damaged bytes, which a `negative_length` or
    /// `truncated_body` anomaly names (0: none).
    #[serde(skip_serializing_if = "walk::is_zero")]
    pub damaged_batch_bytes: u64,
}

/// Where a Produce request walk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Prelude,
    Topic,
    Partition,
    Records,
    PartitionTail,
    TopicTail,
    Tail,
    Done,
}

/// The state of a Produce request walk ([`crate::kafka::walk::Machine`]).
#[derive(Debug)]
pub struct RequestMachine {
    version: i16,
    at: At,
    topics_left: u64,
    parts_left: u64,
    records_left: u64,
    topic: usize,
    part: usize,
    batch: usize,
    /// The batch whose records the walk skips after its header (for [`Machine::skip_path`]).
    skipping: usize,
    /// Whether the topic (partition) being walked is listed.
    topic_listed: bool,
    part_listed: bool,
    listing: walk::Listing,
    body: ProduceRequest,
    /// The first damaged batch passed over ([`Machine::take_damage`]).
    damage: Option<DecodeError>,
}

impl RequestMachine {
    fn new(version: i16) -> Self {
        RequestMachine {
            version,
            at: At::Prelude,
            topics_left: 0,
            parts_left: 0,
            records_left: 0,
            topic: 0,
            part: 0,
            batch: 0,
            skipping: 0,
            topic_listed: false,
            part_listed: false,
            listing: walk::Listing::default(),
            body: ProduceRequest {
                transactional_id: None,
                acks: 0,
                timeout_ms: 0,
                topic_data: Vec::new(),
                elements_not_listed: 0,
            },
            damage: None,
        }
    }

    fn flex(&self) -> bool {
        self.version >= 9
    }

    /// Takes a place in the listing; `false` past [`walk::MAX_LISTED`] (then counted).
    fn list(&mut self) -> bool {
        self.listing.take()
    }

    fn records(&mut self) -> Option<&mut Records> {
        if !(self.topic_listed && self.part_listed) {
            return None;
        }
        let t = self.body.topic_data.last_mut()?;
        t.partition_data.last_mut()?.records.as_mut()
    }

    fn after_partition(&mut self) {
        self.parts_left -= 1;
        self.part += 1;
        self.at = if self.parts_left > 0 {
            At::Partition
        } else {
            At::TopicTail
        };
    }
}

impl Machine for RequestMachine {
    fn step(&mut self, c: &mut Cur) -> Res<u64> {
        let flex = self.flex();
        match self.at {
            At::Prelude => {
                c.field = "transactional_id";
                let transactional_id = c.nullable_text(flex)?;
                c.field = "acks";
                let acks = c.i16()?;
                c.field = "timeout_ms";
                let timeout_ms = c.i32()?;
                c.field = "topic_data";
                let min = if self.version >= 13 { 18 } else if flex { 3 } else { 6 };
                let n = c.count(flex, false, min)?.unwrap_or(0);
                self.body.transactional_id = transactional_id;
                self.body.acks = acks;
                self.body.timeout_ms = timeout_ms;
                self.body.topic_data.reserve_exact(walk::capacity_hint(n));
                self.topics_left = n;
                self.at = if n > 0 { At::Topic } else { At::Tail };
            }
            At::Topic => {
                let (name, topic_id) = if self.version >= 13 {
                    c.field = "topic_id";
                    (None, Some(c.uuid()?))
                } else {
                    c.field = "name";
                    (Some(c.text(flex)?), None)
                };
                c.field = "partition_data";
                let n = c.count(flex, false, if flex { 6 } else { 8 })?.unwrap_or(0);
                self.topic_listed = self.list();
                if self.topic_listed {
                    self.body.topic_data.push(TopicProduceData {
                        name,
                        topic_id,
                        partition_data: Vec::with_capacity(walk::capacity_hint(n)),
                    });
                }
                self.parts_left = n;
                self.part = 0;
                self.at = if n > 0 { At::Partition } else { At::TopicTail };
            }
            At::Partition => {
                c.field = "index";
                let index = c.i32()?;
                c.field = "records";
                let len = c.bytes_len(flex)?;
                let listed = self.list();
                self.part_listed = self.topic_listed && listed;
                if self.part_listed {
                    if let Some(t) = self.body.topic_data.last_mut() {
                        t.partition_data.push(PartitionProduceData {
                            index,
                            records: len.map(|size| Records {
                                size,
                                batches: walk::Batches::default(),
                                partial_batch_bytes: 0,
                                batches_not_listed: 0,
                                damaged_batch_bytes: 0,
                            }),
                        });
                    }
                }
                self.records_left = len.unwrap_or(0);
                self.batch = 0;
                self.at = if self.records_left > 0 {
                    At::Records
                } else {
                    At::PartitionTail
                };
            }
            At::Records => {
                let (item, skip) = batch_step(c, self.records_left, false)?;
                self.records_left -= c.pos as u64 + skip;
                self.skipping = self.batch;
                match item {
                    BatchItem::Batch(h) => {
                        let listed = self.list();
                        if let Some(r) = self.records() {
                            if listed {
                                r.batches.push(h);
                            } else {
                                r.batches_not_listed += 1;
                            }
                        }
                        self.batch += 1;
                    }
                    BatchItem::Partial(n) => {
                        if let Some(r) = self.records() {
                            r.partial_batch_bytes = n;
                        }
                    }
                    BatchItem::Damaged(d) => {
                        let path = self.path();
                        walk::keep_damage(&mut self.damage, &d, path);
                        if let Some(r) = self.records() {
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
                    c.tags()?;
                }
                self.after_partition();
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
                    c.tags()?;
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
        let topic = ("topic_data", self.topic);
        let part = ("partition_data", self.part);
        let tags = [Field("tagged_fields")];
        match self.at {
            At::Prelude | At::Done => Vec::new(),
            At::Tail => tags.to_vec(),
            At::Topic => walk::nested_path(&[topic], &[]),
            At::TopicTail => walk::nested_path(&[topic], &tags),
            At::Partition => walk::nested_path(&[topic, part], &[]),
            At::Records => walk::nested_path(
                &[topic, part],
                &[Field("records"), Field("batches"), Index(self.batch)],
            ),
            At::PartitionTail => walk::nested_path(&[topic, part], &tags),
        }
    }

    fn cost(&self) -> usize {
        // Each listed element costs about its struct and a share of its vector.
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
            ("topic_data", self.topic),
            ("partition_data", self.part),
            self.skipping,
        )
    }
}

impl RequestMachine {
    fn into_body(mut self) -> ProduceRequest {
        self.body.elements_not_listed = self.listing.not_listed;
        self.body
    }
}

/// Starts a walk of a request body of `len` bytes at `version` (3 to 13; callers reject
/// others), to be fed as its bytes arrive.
pub fn walk_request(version: i16, len: u64) -> Box<dyn BodyWalk> {
    super::walked(RequestMachine::new(version), len, |m| {
        Body::ProduceRequest(m.into_body())
    })
}

/// Decodes a whole request body of `version` (3 to 13) by the same walk. Bytes left over are
/// `trailing_bytes`.
pub fn decode_request(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<ProduceRequest, DecodeError> {
    walk::walk_whole(RequestMachine::new(version), body, b).map(RequestMachine::into_body)
}

/// A decoded Produce response body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProduceResponse {
    /// `Responses`: each topic's result.
    pub responses: Vec<TopicProduceResponse>,
    /// `ThrottleTimeMs` (INT32).
    pub throttle_time_ms: i32,
    /// `NodeEndpoints` (tagged 0, v10+): brokers named by `current_leader`, when sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_endpoints: Option<Vec<NodeEndpoint>>,
    /// Other top-level tagged fields.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// One topic of a Produce response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopicProduceResponse {
    /// `Name` (STRING, v0-12), shared with the other messages naming it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<Name>,
    /// `TopicId` (UUID, v13+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_id: Option<String>,
    /// `PartitionResponses`.
    pub partition_responses: Vec<PartitionProduceResponse>,
}

/// One partition of a Produce response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionProduceResponse {
    /// `Index` (INT32).
    pub index: i32,
    /// `ErrorCode` (INT16).
    pub error_code: i16,
    /// Kafka's name for `error_code`.
    pub error: Option<&'static str>,
    /// `BaseOffset` (INT64): the offset given to the first record.
    pub base_offset: i64,
    /// `LogAppendTimeMs` (INT64): -1 unless the topic uses log append time.
    pub log_append_time_ms: i64,
    /// `LogStartOffset` (INT64, v5+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_start_offset: Option<i64>,
    /// `RecordErrors` (v8+): records that failed, by batch index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record_errors: Option<Vec<BatchIndexAndErrorMessage>>,
    /// `ErrorMessage` (NULLABLE_STRING, v8+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<Option<String>>,
    /// `CurrentLeader` (tagged 0, v10+): the new leader, with NOT_LEADER_OR_FOLLOWER.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_leader: Option<LeaderIdAndEpoch>,
    /// Other tagged fields.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// One failed record (`RecordErrors`, v8+).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BatchIndexAndErrorMessage {
    /// `BatchIndex` (INT32).
    pub batch_index: i32,
    /// `BatchIndexErrorMessage` (NULLABLE_STRING).
    pub batch_index_error_message: Option<String>,
}

/// A partition's leader (`LeaderIdAndEpoch`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeaderIdAndEpoch {
    /// `LeaderId` (INT32).
    pub leader_id: i32,
    /// `LeaderEpoch` (INT32).
    pub leader_epoch: i32,
}

/// A broker (`NodeEndpoint`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeEndpoint {
    /// `NodeId` (INT32).
    pub node_id: i32,
    /// `Host` (STRING).
    pub host: String,
    /// `Port` (INT32).
    pub port: i32,
    /// `Rack` (NULLABLE_STRING).
    pub rack: Option<String>,
}

/// `CurrentLeader` from a tagged field's bytes.
pub(crate) fn leader_id_and_epoch(data: &[u8], b: &Budget) -> Option<LeaderIdAndEpoch> {
    let parse = |i| -> PResult<'_, LeaderIdAndEpoch> {
        let (i, leader_id) = leaf(b, "leader_id", i, int32)?;
        let (i, leader_epoch) = leaf(b, "leader_epoch", i, int32)?;
        let (i, _) = tags(b, i, true)?;
        Ok((
            i,
            LeaderIdAndEpoch {
                leader_id,
                leader_epoch,
            },
        ))
    };
    finish(parse(data)).ok()
}

/// `NodeEndpoints` from a tagged field's bytes.
pub(crate) fn node_endpoints(data: &[u8], b: &Budget) -> Option<Vec<NodeEndpoint>> {
    let parse = |i| {
        array(b, "node_endpoints", "NodeEndpoint", i, true, 12, |i| {
            let (i, node_id) = leaf(b, "node_id", i, int32)?;
            let (i, host) = string_field(b, "host", i, true)?;
            let (i, port) = leaf(b, "port", i, int32)?;
            let (i, rack) = nullable_string_field(b, "rack", i, true)?;
            let (i, _) = tags(b, i, true)?;
            Ok((
                i,
                NodeEndpoint {
                    node_id,
                    host,
                    port,
                    rack,
                },
            ))
        })
    };
    finish(parse(data)).ok()
}

/// Splits tagged fields into the one with `tag` (decoded by `f`, kept unknown when it does not
/// decode) and the others. The fields' bytes are copies: `f` must decode them untraced (the
/// trace places nodes by their position in the frame).
pub(crate) fn take_tag<T>(
    fields: Vec<TaggedField>,
    tag: u32,
    f: impl Fn(&[u8]) -> Option<T>,
) -> (Option<T>, Vec<TaggedField>) {
    let mut found = None;
    let mut rest = Vec::new();
    for t in fields {
        match (t.tag == tag && !t.data_truncated && found.is_none())
            .then(|| f(&t.data))
            .flatten()
        {
            Some(v) => found = Some(v),
            None => rest.push(t),
        }
    }
    (found, rest)
}

/// Decodes a whole response body of `version` (3 to 13; callers reject others).
pub fn decode_response(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<ProduceResponse, DecodeError> {
    let flex = version >= 9;
    let partition = |i| -> PResult<'_, PartitionProduceResponse> {
        let (i, index) = leaf(b, "index", i, int32)?;
        let (i, error_code) = error_code_field(b, "error_code", i)?;
        let (i, base_offset) = leaf(b, "base_offset", i, int64)?;
        let (i, log_append_time_ms) = leaf(b, "log_append_time_ms", i, int64)?;
        let (i, log_start_offset) = if version >= 5 {
            let (i, v) = leaf(b, "log_start_offset", i, int64)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, record_errors, error_message) = if version >= 8 {
            let (i, errors) = array(
                b,
                "record_errors",
                "BatchIndexAndErrorMessage",
                i,
                flex,
                6,
                |i| {
                    let (i, batch_index) = leaf(b, "batch_index", i, int32)?;
                    let (i, message) =
                        nullable_string_field(b, "batch_index_error_message", i, flex)?;
                    let (i, _) = tags(b, i, flex)?;
                    Ok((
                        i,
                        BatchIndexAndErrorMessage {
                            batch_index,
                            batch_index_error_message: message,
                        },
                    ))
                },
            )?;
            let (i, message) = nullable_string_field(b, "error_message", i, flex)?;
            (i, Some(errors), Some(message))
        } else {
            (i, None, None)
        };
        let (i, fields) = tags(b, i, flex)?;
        let (current_leader, unknown_tagged_fields) = if version >= 10 {
            take_tag(fields, 0, |d| leader_id_and_epoch(d, &Budget::default()))
        } else {
            (None, fields)
        };
        Ok((
            i,
            PartitionProduceResponse {
                index,
                error_code,
                error: ErrorCode(error_code).name(),
                base_offset,
                log_append_time_ms,
                log_start_offset,
                record_errors,
                error_message,
                current_leader,
                unknown_tagged_fields,
            },
        ))
    };
    let topic = |i| -> PResult<'_, TopicProduceResponse> {
        let (i, name, topic_id) = if version >= 13 {
            let (i, id) = uuid_field(b, "topic_id", i)?;
            (i, None, Some(id))
        } else {
            let (i, name) = text_field::<Name>(b, "name", i, flex)?;
            (i, Some(name), None)
        };
        // index, error_code, base_offset, log_append_time_ms (22 bytes) at least.
        let min = 22;
        let (i, partition_responses) = array(
            b,
            "partition_responses",
            "PartitionProduceResponse",
            i,
            flex,
            min,
            partition,
        )?;
        let (i, _) = tags(b, i, flex)?;
        Ok((
            i,
            TopicProduceResponse {
                name,
                topic_id,
                partition_responses,
            },
        ))
    };
    let parse = |i| -> PResult<'_, ProduceResponse> {
        let min = if version >= 13 { 18 } else { 3 };
        let (i, responses) = array(b, "responses", "TopicProduceResponse", i, flex, min, topic)?;
        let (i, throttle_time_ms) = leaf(b, "throttle_time_ms", i, int32)?;
        let (i, fields) = tags(b, i, flex)?;
        let (node_endpoints, unknown_tagged_fields) = if version >= 10 {
            take_tag(fields, 0, |d| node_endpoints(d, &Budget::default()))
        } else {
            (None, fields)
        };
        Ok((
            i,
            ProduceResponse {
                responses,
                throttle_time_ms,
                node_endpoints,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}
