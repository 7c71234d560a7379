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

use super::api::ErrorCode;
use super::primitives::{
    array, boolean, field, int16, int32, int64, int8, string, tagged_fields, Budget, DecodeError,
    DecodeErrorKind, PResult, TaggedField,
};
use serde::Serialize;

/// The highest WriteTxnMarkers version this decoder knows.
pub const MAX_VERSION: i16 = 2;

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

fn tags<'a>(input: &'a [u8], flexible: bool, b: &Budget) -> PResult<'a, Vec<TaggedField>> {
    if flexible {
        field("tagged_fields", tagged_fields(input, b))
    } else {
        Ok((input, Vec::new()))
    }
}

/// Decodes a whole request body of `version` (0, 1 or 2). Bytes left over after the body are
/// [`DecodeErrorKind::TrailingBytes`]. Callers must reject other versions first. Arrays and
/// tagged fields count against `b`, the frame's element budget.
pub fn decode_request(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<WriteTxnMarkersRequest, DecodeError> {
    let flex = version >= 1;
    let min_marker = if flex { 17 } else { 19 } + usize::from(version >= 2);
    let parse = |i| -> PResult<'_, WriteTxnMarkersRequest> {
        let (i, markers) = field(
            "markers",
            array(i, flex, min_marker, b, |i| request_marker(i, version, b)),
        )?;
        let (i, unknown_tagged_fields) = tags(i, flex, b)?;
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
    let (i, producer_id) = field("producer_id", int64(i))?;
    let (i, producer_epoch) = field("producer_epoch", int16(i))?;
    let (i, result) = field("transaction_result", boolean(i))?;
    let min_topic = if flex { 3 } else { 6 };
    let (i, topics) = field(
        "topics",
        array(i, flex, min_topic, b, |i| request_topic(i, flex, b)),
    )?;
    let (i, coordinator_epoch) = field("coordinator_epoch", int32(i))?;
    let (i, transaction_version) = if version >= 2 {
        let (i, v) = field("transaction_version", int8(i))?;
        (i, Some(v))
    } else {
        (i, None)
    };
    let (i, unknown_tagged_fields) = tags(i, flex, b)?;
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
    let (i, name) = field("name", string(i, flex))?;
    let (i, partition_indexes) = field("partition_indexes", array(i, flex, 4, b, int32))?;
    let (i, unknown_tagged_fields) = tags(i, flex, b)?;
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
/// Bytes left over are [`DecodeErrorKind::TrailingBytes`]. Arrays and tagged fields count
/// against `b`, the frame's element budget.
pub fn decode_response(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<WriteTxnMarkersResponse, DecodeError> {
    let flex = version >= 1;
    let min_marker = if flex { 10 } else { 12 };
    let parse = |i| -> PResult<'_, WriteTxnMarkersResponse> {
        let (i, markers) = field(
            "markers",
            array(i, flex, min_marker, b, |i| response_marker(i, flex, b)),
        )?;
        let (i, unknown_tagged_fields) = tags(i, flex, b)?;
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
    let (i, producer_id) = field("producer_id", int64(i))?;
    let min_topic = if flex { 3 } else { 6 };
    let (i, topics) = field(
        "topics",
        array(i, flex, min_topic, b, |i| response_topic(i, flex, b)),
    )?;
    let (i, unknown_tagged_fields) = tags(i, flex, b)?;
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
    let (i, name) = field("name", string(i, flex))?;
    let min_partition = if flex { 7 } else { 6 };
    let (i, partitions) = field(
        "partitions",
        array(i, flex, min_partition, b, |i| {
            response_partition(i, flex, b)
        }),
    )?;
    let (i, unknown_tagged_fields) = tags(i, flex, b)?;
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
    let (i, partition_index) = field("partition_index", int32(i))?;
    let (i, error_code) = field("error_code", int16(i))?;
    let (i, unknown_tagged_fields) = tags(i, flex, b)?;
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

fn finish<T>(r: PResult<'_, T>) -> Result<T, DecodeError> {
    match r {
        Ok(([], v)) => Ok(v),
        Ok((rest, _)) => Err(DecodeError::at(rest, DecodeErrorKind::TrailingBytes)),
        Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => Err(e),
        // Complete-mode parsers never ask for more input; treat it as a truncated body.
        Err(nom::Err::Incomplete(_)) => Err(DecodeError::at(&[], DecodeErrorKind::TruncatedBody)),
    }
}
