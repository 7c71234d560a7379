//! DescribeProducers (API key 61) request and response bodies, version 0: an admin client
//! (`kafka-transactions.sh describe-producers`, `find-hanging`; KIP-664) asks partition
//! leaders for the producers active on partitions, with the start offset of each one's open
//! transaction (the offset a hanging transaction holds the last stable offset at).
//!
//! Input: the body bytes of one frame (after the header) and the API version from the request
//! header. Output: [`DescribeProducersRequest`] or [`DescribeProducersResponse`], whose serde
//! form is the record's `body`, or a [`DecodeError`] with the field path that failed.
//!
//! Sources: Apache Kafka
//! `clients/src/main/resources/common/message/DescribeProducersRequest.json` and
//! `DescribeProducersResponse.json` (`"validVersions": "0"`, `"flexibleVersions": "0+"`).
//! `ProducerEpoch` is an INT32 in this API.

use super::InferFn;
use crate::kafka::api::ErrorCode;
use crate::kafka::primitives::{
    array, array_of, error_code_field, finish, int32, int64, leaf, nullable_string_field,
    string_field, tags, Budget, DecodeError, PResult, TaggedField,
};
use serde::Serialize;

/// The versions decoded: 0.
pub const VERSIONS: std::ops::RangeInclusive<i16> = 0..=0;

/// DescribeProducers messages are written only with `--all-apis` (for now).
pub const SHOWN_BY_DEFAULT: bool = false;

/// A response is not inferred.
pub const INFER: Option<InferFn<DescribeProducersResponse>> = None;

/// A decoded DescribeProducers request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DescribeProducersRequest {
    /// `Topics`: the partitions to describe.
    pub topics: Vec<TopicRequest>,
    /// Top-level tagged fields, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `Topics[]` of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopicRequest {
    /// `Name` (STRING): the topic.
    pub name: String,
    /// `PartitionIndexes` ([]INT32).
    pub partition_indexes: Vec<i32>,
    /// Tagged fields of the entry, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// A decoded DescribeProducers response body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DescribeProducersResponse {
    /// `ThrottleTimeMs` (INT32).
    pub throttle_time_ms: i32,
    /// `Topics`: each partition's active producers.
    pub topics: Vec<TopicResponse>,
    /// Top-level tagged fields, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `Topics[]` of a response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopicResponse {
    /// `Name` (STRING): the topic.
    pub name: String,
    /// `Partitions`.
    pub partitions: Vec<PartitionResponse>,
    /// Tagged fields of the entry, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `Partitions[]` of a response topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionResponse {
    /// `PartitionIndex` (INT32).
    pub partition_index: i32,
    /// `ErrorCode` (INT16).
    pub error_code: i16,
    /// Kafka's name for `error_code`, null for a code missing from Kafka's table.
    pub error: Option<&'static str>,
    /// `ErrorMessage` (NULLABLE_STRING).
    pub error_message: Option<String>,
    /// `ActiveProducers`.
    pub active_producers: Vec<ProducerState>,
    /// Tagged fields of the entry, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `ActiveProducers[]` of a partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProducerState {
    /// `ProducerId` (INT64).
    pub producer_id: i64,
    /// `ProducerEpoch` (INT32 in this API).
    pub producer_epoch: i32,
    /// `LastSequence` (INT32): the last sequence number written, -1 for none.
    pub last_sequence: i32,
    /// `LastTimestamp` (INT64): milliseconds since the epoch of the last write, -1 for none.
    pub last_timestamp: i64,
    /// `CoordinatorEpoch` (INT32): the epoch of the coordinator that last wrote a marker.
    pub coordinator_epoch: i32,
    /// `CurrentTxnStartOffset` (INT64): the first offset of the producer's open transaction,
    /// -1 when none is open.
    pub current_txn_start_offset: i64,
    /// Tagged fields of the entry, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// Decodes a whole request body of `version` (0; callers reject others). Bytes left over are
/// `trailing_bytes`; array elements and tagged fields count against `b`.
pub fn decode_request(
    body: &[u8],
    _version: i16,
    b: &Budget,
) -> Result<DescribeProducersRequest, DecodeError> {
    let parse = |i| -> PResult<'_, DescribeProducersRequest> {
        let (i, topics) = array(b, "topics", "TopicRequest", i, true, 3, |i| {
            let (i, name) = string_field(b, "name", i, true)?;
            let (i, partition_indexes) = array_of(b, "partition_indexes", i, true, 4, int32)?;
            let (i, unknown_tagged_fields) = tags(b, i, true)?;
            Ok((
                i,
                TopicRequest {
                    name,
                    partition_indexes,
                    unknown_tagged_fields,
                },
            ))
        })?;
        let (i, unknown_tagged_fields) = tags(b, i, true)?;
        Ok((
            i,
            DescribeProducersRequest {
                topics,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}

/// Decodes a whole response body of `version` (0; callers reject others).
pub fn decode_response(
    body: &[u8],
    _version: i16,
    b: &Budget,
) -> Result<DescribeProducersResponse, DecodeError> {
    let parse = |i| -> PResult<'_, DescribeProducersResponse> {
        let (i, throttle_time_ms) = leaf(b, "throttle_time_ms", i, int32)?;
        let (i, topics) = array(b, "topics", "TopicResponse", i, true, 3, |i| {
            let (i, name) = string_field(b, "name", i, true)?;
            // At least: index (4), error (2), message (1), producers (1), tags (1).
            let (i, partitions) = array(b, "partitions", "PartitionResponse", i, true, 9, |i| {
                partition(i, b)
            })?;
            let (i, unknown_tagged_fields) = tags(b, i, true)?;
            Ok((
                i,
                TopicResponse {
                    name,
                    partitions,
                    unknown_tagged_fields,
                },
            ))
        })?;
        let (i, unknown_tagged_fields) = tags(b, i, true)?;
        Ok((
            i,
            DescribeProducersResponse {
                throttle_time_ms,
                topics,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}

fn partition<'a>(i: &'a [u8], b: &Budget) -> PResult<'a, PartitionResponse> {
    let (i, partition_index) = leaf(b, "partition_index", i, int32)?;
    let (i, error_code) = error_code_field(b, "error_code", i)?;
    let (i, error_message) = nullable_string_field(b, "error_message", i, true)?;
    // Each: 8 + 4 + 4 + 8 + 4 + 8 bytes and tags.
    let (i, active_producers) = array(b, "active_producers", "ProducerState", i, true, 37, |i| {
        let (i, producer_id) = leaf(b, "producer_id", i, int64)?;
        let (i, producer_epoch) = leaf(b, "producer_epoch", i, int32)?;
        let (i, last_sequence) = leaf(b, "last_sequence", i, int32)?;
        let (i, last_timestamp) = leaf(b, "last_timestamp", i, int64)?;
        let (i, coordinator_epoch) = leaf(b, "coordinator_epoch", i, int32)?;
        let (i, current_txn_start_offset) = leaf(b, "current_txn_start_offset", i, int64)?;
        let (i, unknown_tagged_fields) = tags(b, i, true)?;
        Ok((
            i,
            ProducerState {
                producer_id,
                producer_epoch,
                last_sequence,
                last_timestamp,
                coordinator_epoch,
                current_txn_start_offset,
                unknown_tagged_fields,
            },
        ))
    })?;
    let (i, unknown_tagged_fields) = tags(b, i, true)?;
    Ok((
        i,
        PartitionResponse {
            partition_index,
            error_code,
            error: ErrorCode(error_code).name(),
            error_message,
            active_producers,
            unknown_tagged_fields,
        },
    ))
}
