//! WriteTxnMarkers (API key 27) request and response bodies, versions 0, 1 and 2, as nom parsers.
//!
//! Input: the body bytes of one frame (after the request or response header) and the API
//! version taken from the request header (for a response: from the paired request).
//! Output: [`WriteTxnMarkersRequest`] or [`WriteTxnMarkersResponse`], whose serde form is the
//! `body` object of the JSON output, or a [`DecodeError`] with the field path that failed.
//!
//! Sources: Apache Kafka `clients/src/main/resources/common/message/WriteTxnMarkersRequest.json`
//! and `WriteTxnMarkersResponse.json`: v0 is classic (INT32 array counts, INT16 string lengths);
//! v1 is flexible (KIP-482: compact arrays and strings, tagged fields after every struct); v2
//! (KIP-1228) adds `TransactionVersion` (INT8) to each request marker. The response has no
//! throttle time and no top-level error code.

use super::{Answers, AnswersText, InferFn, Inferred};
use crate::kafka::api::ErrorCode;
use crate::kafka::header::decode_response_header;
use crate::kafka::primitives::{
    array, array_of, boolean, error_code_field, field, finish, int16, int32, int64, int8, leaf,
    string_field, tags, Budget, DecodeError, PResult, TaggedField,
};
use crate::kafka::trace::Scalar;
use serde::Serialize;

/// The API key of WriteTxnMarkers (its line in the decoder table).
pub const API_KEY: i16 = 27;

/// The highest WriteTxnMarkers version this decoder knows.
pub const MAX_VERSION: i16 = 2;

/// The versions decoded: 0 to 2 (`"validVersions": "0-2"`; v0 was removed in Kafka 4.0 but
/// older brokers still send it).
pub const VERSIONS: std::ops::RangeInclusive<i16> = 0..=MAX_VERSION;

/// WriteTxnMarkers messages are the tool's default output.
pub const SHOWN_BY_DEFAULT: bool = true;

/// Responses without their request are inferred by [`infer`].
pub const INFER: Option<InferFn<WriteTxnMarkersResponse>> = Some(infer);

/// The partitions a request's markers name, by producer id: what its response must answer.
/// Kafka's broker answers every partition of every marker (`KafkaApis.handleWriteTxnMarkersRequest`,
/// an error code each), and its coordinator removes from a transaction's pending partitions
/// only those a response answers `NONE` (`TransactionMarkerRequestCompletionHandler`).
pub fn asked(q: &WriteTxnMarkersRequest) -> Answers {
    let groups = q.markers.iter().map(|m| m.producer_id);
    Answers::of(groups, q.markers.iter().flat_map(|m| {
        m.topics.iter().flat_map(move |t| {
            t.partition_indexes
                .iter()
                .map(move |&p| (m.producer_id, Answers::item(&t.name, p)))
        })
    }))
}

/// The words of a WriteTxnMarkers `response_mismatch`: what Kafka's coordinator does with a
/// response that answers otherwise than its request asked
/// (`TransactionMarkerRequestCompletionHandler` reads the response's error of each partition
/// it answers, and throws for a producer id it does not answer).
pub const ANSWERS_TEXT: AnswersText = AnswersText {
    item: "partition",
    group: "producer id",
    consequence: "Kafka's coordinator takes a marker as written only for a partition its \
                  response answers NONE: a partition left out keeps its transaction from \
                  completing (it stays PrepareCommit or PrepareAbort, its partitions' last \
                  stable offset held, until the coordinator moves), and a producer id left \
                  out is an error it does not handle",
};

/// The partitions a response answers, by producer id (see [`asked`]).
pub fn answered(r: &WriteTxnMarkersResponse) -> Answers {
    let groups = r.markers.iter().map(|m| m.producer_id);
    Answers::of(groups, r.markers.iter().flat_map(|m| {
        m.topics.iter().flat_map(move |t| {
            t.partitions
                .iter()
                .map(move |p| (m.producer_id, Answers::item(&t.name, p.partition_index)))
        })
    }))
}

/// The layouts a WriteTxnMarkers response may have (v0 with response header v0, or v1/v2 with
/// header v1; v1 and v2 responses are laid out alike) that decode the whole `frame` with at
/// least one marker. A v1 fit is named v2 when the connection's requests were v2 and never v1
/// (bit `v` of `versions_seen` for version `v`).
pub fn infer(frame: &[u8], versions_seen: u32) -> Vec<Inferred<WriteTxnMarkersResponse>> {
    let mut fits = Vec::new();
    for (version, hv) in [(0i16, 0u8), (1, 1)] {
        let budget = Budget::default();
        let Ok(header) = decode_response_header(frame, hv, &budget) else {
            continue;
        };
        if let Ok(body) = decode_response(&frame[header.len..], version, &budget) {
            if !body.markers.is_empty() {
                let version = if version == 1 && versions_seen & 0b110 == 0b100 {
                    2
                } else {
                    version
                };
                let min_request_len = min_request_len(&body);
                fits.push(Inferred {
                    version,
                    header,
                    body,
                    min_request_len,
                });
            }
        }
    }
    fits
}

/// The fewest bytes a WriteTxnMarkers request answered by `r` can have had, size prefix
/// included, whatever its version: the request names every producer id, topic and partition
/// its response does (Kafka's broker answers each partition of each marker). Counted at each
/// field's smallest encoding over v0-v2 (WriteTxnMarkersRequest.json): the header 14 bytes (a
/// null client id), the markers array and tagged fields 2, each marker 17 (producer id 8,
/// epoch 2, result 1, coordinator epoch 4, topics array 1, tagged fields 1), each topic its
/// name's bytes plus 3, each partition 4.
pub fn min_request_len(r: &WriteTxnMarkersResponse) -> u64 {
    let mut n: u64 = 14 + 2;
    for m in &r.markers {
        n = n.saturating_add(17);
        for t in &m.topics {
            n = n
                .saturating_add(t.name.len() as u64 + 3)
                .saturating_add(4u64.saturating_mul(t.partitions.len() as u64));
        }
    }
    n
}

/// A decoded WriteTxnMarkers request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteTxnMarkersRequest {
    /// `Markers`: the transaction markers to be written, one per producer transaction.
    pub markers: Vec<WritableTxnMarker>,
    /// Top-level tagged fields (v1+), none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `WritableTxnMarker`: one producer's transaction outcome for a set of partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WritableTxnMarker {
    /// `ProducerId` (INT64): the current producer id.
    pub producer_id: i64,
    /// `ProducerEpoch` (INT16): the current epoch of that producer id.
    pub producer_epoch: i16,
    /// `TransactionResult` (BOOLEAN): COMMIT (true) or ABORT (false).
    pub transaction_result: TransactionResult,
    /// `Topics`: the partitions to write the marker to, by topic.
    pub topics: Vec<WritableTxnMarkerTopic>,
    /// `CoordinatorEpoch` (INT32): epoch of the transaction state partition on the coordinator.
    pub coordinator_epoch: i32,
    /// `TransactionVersion` (INT8, v2+ only, KIP-1228): the transaction protocol version the
    /// coordinator used. Absent from the JSON for v0 and v1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transaction_version: Option<i8>,
    /// Tagged fields of this struct (v1+).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// The outcome a marker writes: `"COMMIT"` or `"ABORT"` in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TransactionResult {
    /// The wire byte was non-zero (true).
    #[serde(rename = "COMMIT")]
    Commit,
    /// The wire byte was zero (false).
    #[serde(rename = "ABORT")]
    Abort,
}

/// `WritableTxnMarkerTopic`: one topic and the partitions to mark in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WritableTxnMarkerTopic {
    /// `Name` (STRING): the topic name.
    pub name: String,
    /// `PartitionIndexes` ([]INT32).
    pub partition_indexes: Vec<i32>,
    /// Tagged fields of this struct (v1+).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// A decoded WriteTxnMarkers response body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteTxnMarkersResponse {
    /// `Markers`: the results, one per producer id of the request.
    pub markers: Vec<WritableTxnMarkerResult>,
    /// Top-level tagged fields (v1+).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `WritableTxnMarkerResult`: the results for one producer id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WritableTxnMarkerResult {
    /// `ProducerId` (INT64).
    pub producer_id: i64,
    /// `Topics`: the results by topic.
    pub topics: Vec<WritableTxnMarkerTopicResult>,
    /// Tagged fields of this struct (v1+).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `WritableTxnMarkerTopicResult`: the results for one topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WritableTxnMarkerTopicResult {
    /// `Name` (STRING): the topic name.
    pub name: String,
    /// `Partitions`: the results by partition.
    pub partitions: Vec<WritableTxnMarkerPartitionResult>,
    /// Tagged fields of this struct (v1+).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `WritableTxnMarkerPartitionResult`: one partition's error code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WritableTxnMarkerPartitionResult {
    /// `PartitionIndex` (INT32).
    pub partition_index: i32,
    /// `ErrorCode` (INT16): 0 when the marker was written.
    pub error_code: i16,
    /// Kafka's name for `error_code` (`"NONE"`, `"NOT_LEADER_OR_FOLLOWER"`, ...), null for a
    /// code missing from Kafka's table.
    pub error: Option<&'static str>,
    /// Tagged fields of this struct (v1+).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// Decodes a whole request body of `version` (0, 1 or 2). Bytes left over after the body are
/// `trailing_bytes`. Callers must reject other versions first. Arrays and tagged fields count
/// against `b`, the frame's element budget, which also records the field trace when asked.
pub fn decode_request(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<WriteTxnMarkersRequest, DecodeError> {
    let flex = version >= 1;
    // ProducerId, ProducerEpoch, TransactionResult, Topics (a count), CoordinatorEpoch,
    // TransactionVersion (v2), tagged fields (v1+): 8 + 2 + 1 + 1 + 4 (+ 1) + 1 when
    // flexible, 8 + 2 + 1 + 4 + 4 classic.
    let min_marker = if flex { 17 } else { 19 } + usize::from(version >= 2);
    let parse = |i| -> PResult<'_, WriteTxnMarkersRequest> {
        let (i, markers) = array(
            b,
            "markers",
            "WritableTxnMarker",
            i,
            flex,
            min_marker,
            |i| request_marker(i, version, b),
        )?;
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            WriteTxnMarkersRequest {
                markers,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}

fn request_marker<'a>(i: &'a [u8], version: i16, b: &Budget) -> PResult<'a, WritableTxnMarker> {
    let flex = version >= 1;
    let (i, producer_id) = leaf(b, "producer_id", i, int64)?;
    let (i, producer_epoch) = leaf(b, "producer_epoch", i, int16)?;
    let at = i;
    let (i, result) = field("transaction_result", boolean(i))?;
    b.trace(|t| {
        let name = if result { "COMMIT" } else { "ABORT" };
        let text = format!("{result} ({name})");
        t.leaf_typed("transaction_result", "bool", text, Scalar::Named(name), at, i)
    });
    // Name (a length), PartitionIndexes (a count), tagged fields: 1 + 1 + 1 flexible, 2 + 4.
    let min_topic = if flex { 3 } else { 6 };
    let (i, topics) = array(
        b,
        "topics",
        "WritableTxnMarkerTopic",
        i,
        flex,
        min_topic,
        |i| request_topic(i, flex, b),
    )?;
    let (i, coordinator_epoch) = leaf(b, "coordinator_epoch", i, int32)?;
    let (i, transaction_version) = if version >= 2 {
        let (i, v) = leaf(b, "transaction_version", i, int8)?;
        (i, Some(v))
    } else {
        (i, None)
    };
    let (i, unknown_tagged_fields) = tags(b, i, flex)?;
    Ok((
        i,
        WritableTxnMarker {
            producer_id,
            producer_epoch,
            transaction_result: if result {
                TransactionResult::Commit
            } else {
                TransactionResult::Abort
            },
            topics,
            coordinator_epoch,
            transaction_version,
            unknown_tagged_fields,
        },
    ))
}

fn request_topic<'a>(i: &'a [u8], flex: bool, b: &Budget) -> PResult<'a, WritableTxnMarkerTopic> {
    let (i, name) = string_field(b, "name", i, flex)?;
    let (i, partition_indexes) = array_of(b, "partition_indexes", i, flex, 4, int32)?;
    let (i, unknown_tagged_fields) = tags(b, i, flex)?;
    Ok((
        i,
        WritableTxnMarkerTopic {
            name,
            partition_indexes,
            unknown_tagged_fields,
        },
    ))
}

/// Decodes a whole response body of `version` (0, 1 or 2; v2's response is laid out as v1).
/// Bytes left over are `trailing_bytes`. Arrays and tagged fields count against `b`, the
/// frame's element budget, which also records the field trace when asked.
pub fn decode_response(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<WriteTxnMarkersResponse, DecodeError> {
    let flex = version >= 1;
    // ProducerId, Topics (a count), tagged fields: 8 + 1 + 1 flexible, 8 + 4 classic.
    let min_marker = if flex { 10 } else { 12 };
    let parse = |i| -> PResult<'_, WriteTxnMarkersResponse> {
        let (i, markers) = array(
            b,
            "markers",
            "WritableTxnMarkerResult",
            i,
            flex,
            min_marker,
            |i| response_marker(i, flex, b),
        )?;
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            WriteTxnMarkersResponse {
                markers,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}

fn response_marker<'a>(
    i: &'a [u8],
    flex: bool,
    b: &Budget,
) -> PResult<'a, WritableTxnMarkerResult> {
    let (i, producer_id) = leaf(b, "producer_id", i, int64)?;
    let min_topic = if flex { 3 } else { 6 };
    let (i, topics) = array(
        b,
        "topics",
        "WritableTxnMarkerTopicResult",
        i,
        flex,
        min_topic,
        |i| response_topic(i, flex, b),
    )?;
    let (i, unknown_tagged_fields) = tags(b, i, flex)?;
    Ok((
        i,
        WritableTxnMarkerResult {
            producer_id,
            topics,
            unknown_tagged_fields,
        },
    ))
}

fn response_topic<'a>(
    i: &'a [u8],
    flex: bool,
    b: &Budget,
) -> PResult<'a, WritableTxnMarkerTopicResult> {
    let (i, name) = string_field(b, "name", i, flex)?;
    // PartitionIndex, ErrorCode, tagged fields: 4 + 2 + 1 flexible, 4 + 2 classic.
    let min_partition = if flex { 7 } else { 6 };
    let (i, partitions) = array(
        b,
        "partitions",
        "WritableTxnMarkerPartitionResult",
        i,
        flex,
        min_partition,
        |i| response_partition(i, flex, b),
    )?;
    let (i, unknown_tagged_fields) = tags(b, i, flex)?;
    Ok((
        i,
        WritableTxnMarkerTopicResult {
            name,
            partitions,
            unknown_tagged_fields,
        },
    ))
}

fn response_partition<'a>(
    i: &'a [u8],
    flex: bool,
    b: &Budget,
) -> PResult<'a, WritableTxnMarkerPartitionResult> {
    let (i, partition_index) = leaf(b, "partition_index", i, int32)?;
    let (i, error_code) = error_code_field(b, "error_code", i)?;
    let (i, unknown_tagged_fields) = tags(b, i, flex)?;
    Ok((
        i,
        WritableTxnMarkerPartitionResult {
            partition_index,
            error_code,
            error: ErrorCode(error_code).name(),
            unknown_tagged_fields,
        },
    ))
}

/// The coordinator epoch given to a marker rebuilt from a body decoded in part whose
/// `coordinator_epoch` was not captured ([`request_from_partial`]): lower than any real one.
pub const UNKNOWN_COORDINATOR_EPOCH: i32 = i32::MIN;

/// The markers of a request decoded in part ([`crate::kafka::partial`]) that say what they
/// mark: those whose producer id, epoch and result were captured, each with the topics whose
/// name was captured and the partition indexes decoded (possibly fewer than were sent), and
/// [`UNKNOWN_COORDINATOR_EPOCH`] when its coordinator epoch was cut. For the transaction view,
/// which reads markers; never written as a body.
pub fn request_from_partial(p: &crate::kafka::partial::PartialBody) -> WriteTxnMarkersRequest {
    use crate::kafka::partial::Value;
    let markers = p
        .list("markers")
        .iter()
        .filter_map(|m| {
            let m = m.fields()?;
            let result = match Value::get(m, "transaction_result")? {
                Value::Named("COMMIT") => TransactionResult::Commit,
                Value::Named("ABORT") => TransactionResult::Abort,
                _ => return None,
            };
            let topics = partial_topics(m, |name, t| {
                let partition_indexes = Value::list_in(t, "partition_indexes")
                    .iter()
                    .filter_map(|v| match v {
                        Value::Int(i) => i32::try_from(*i).ok(),
                        _ => None,
                    })
                    .collect();
                Some(WritableTxnMarkerTopic {
                    name,
                    partition_indexes,
                    unknown_tagged_fields: Vec::new(),
                })
            });
            Some(WritableTxnMarker {
                producer_id: Value::get(m, "producer_id")?.int()?,
                producer_epoch: i16::try_from(Value::get(m, "producer_epoch")?.int()?).ok()?,
                transaction_result: result,
                topics,
                coordinator_epoch: Value::get(m, "coordinator_epoch")
                    .and_then(Value::int)
                    .and_then(|e| i32::try_from(e).ok())
                    .unwrap_or(UNKNOWN_COORDINATOR_EPOCH),
                transaction_version: Value::get(m, "transaction_version")
                    .and_then(Value::int)
                    .and_then(|v| i8::try_from(v).ok()),
                unknown_tagged_fields: Vec::new(),
            })
        })
        .collect();
    WriteTxnMarkersRequest {
        markers,
        unknown_tagged_fields: Vec::new(),
    }
}

/// The results of a response decoded in part that say what they answer: markers whose
/// producer id was captured, topics whose name was, partitions whose index and error code
/// were. For the transaction view; never written as a body.
pub fn response_from_partial(p: &crate::kafka::partial::PartialBody) -> WriteTxnMarkersResponse {
    use crate::kafka::partial::Value;
    let markers = p
        .list("markers")
        .iter()
        .filter_map(|m| {
            let m = m.fields()?;
            let topics = partial_topics(m, |name, t| {
                    let partitions = Value::list_in(t, "partitions")
                        .iter()
                        .filter_map(|p| {
                            let p = p.fields()?;
                            let index = i32::try_from(Value::get(p, "partition_index")?.int()?);
                            let Value::Error(code) = Value::get(p, "error_code")? else {
                                return None;
                            };
                            Some(WritableTxnMarkerPartitionResult {
                                partition_index: index.ok()?,
                                error_code: *code,
                                error: ErrorCode(*code).name(),
                                unknown_tagged_fields: Vec::new(),
                            })
                        })
                        .collect();
                    Some(WritableTxnMarkerTopicResult {
                        name,
                        partitions,
                        unknown_tagged_fields: Vec::new(),
                    })
            });
            Some(WritableTxnMarkerResult {
                producer_id: Value::get(m, "producer_id")?.int()?,
                topics,
                unknown_tagged_fields: Vec::new(),
            })
        })
        .collect();
    WriteTxnMarkersResponse {
        markers,
        unknown_tagged_fields: Vec::new(),
    }
}

/// The topics of a marker decoded in part whose name was captured, each made by `build` from
/// its name and fields.
fn partial_topics<T>(
    marker: &[(String, crate::kafka::partial::Value)],
    build: impl Fn(String, &[(String, crate::kafka::partial::Value)]) -> Option<T>,
) -> Vec<T> {
    use crate::kafka::partial::Value;
    Value::list_in(marker, "topics")
        .iter()
        .filter_map(|t| {
            let t = t.fields()?;
            let Value::Str(name) = Value::get(t, "name")? else {
                return None;
            };
            build(name.clone(), t)
        })
        .collect()
}
