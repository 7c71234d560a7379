//! TxnOffsetCommit (API key 28) request and response bodies, versions 0 to 5: a transactional
//! producer commits consumer offsets to the group coordinator as part of its transaction
//! (they become visible only if the transaction commits).
//!
//! Input: the body bytes of one frame (after the header) and the API version from the request
//! header. Output: [`TxnOffsetCommitRequest`] or [`TxnOffsetCommitResponse`], whose serde form
//! is the record's `body`, or a [`DecodeError`] with the field path that failed.
//!
//! Sources: Apache Kafka `clients/src/main/resources/common/message/TxnOffsetCommitRequest.json`
//! and `TxnOffsetCommitResponse.json` (`"validVersions": "0-5"`, `"flexibleVersions": "3+"`):
//! v1 is v0; v2 adds `CommittedLeaderEpoch`; v3 is flexible and adds `GenerationId`,
//! `MemberId` and `GroupInstanceId` (KIP-447); v4 and v5 add error codes (PRODUCER_FENCED,
//! and for v5 the implicit partition add of transaction version 2, KIP-890).

use super::InferFn;
use crate::kafka::api::ErrorCode;
use crate::kafka::primitives::{
    error_code_field,
    array, finish, int16, int32, int64, leaf, nullable_string_field, string_field,
    tags, Budget, DecodeError, PResult, TaggedField,
};
use serde::Serialize;

/// The versions decoded: 0 to 5.
pub const VERSIONS: std::ops::RangeInclusive<i16> = 0..=5;

/// TxnOffsetCommit messages are written only with `--all-apis` (for now).
pub const SHOWN_BY_DEFAULT: bool = false;

/// A response is not inferred.
pub const INFER: Option<InferFn<TxnOffsetCommitResponse>> = None;

/// A decoded TxnOffsetCommit request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TxnOffsetCommitRequest {
    /// `TransactionalId` (STRING): the transaction.
    pub transactional_id: String,
    /// `GroupId` (STRING): the consumer group.
    pub group_id: String,
    /// `ProducerId` (INT64).
    pub producer_id: i64,
    /// `ProducerEpoch` (INT16).
    pub producer_epoch: i16,
    /// `GenerationId` (INT32, v3+): the group's generation, -1 when not known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation_id: Option<i32>,
    /// `MemberId` (STRING, v3+): the member id given by the group coordinator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member_id: Option<String>,
    /// `GroupInstanceId` (NULLABLE_STRING, v3+): the static member id, or null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_instance_id: Option<Option<String>>,
    /// `Topics`: the offsets to commit.
    pub topics: Vec<OffsetTopic>,
    /// Top-level tagged fields (v3+), none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `Topics[]` of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OffsetTopic {
    /// `Name` (STRING): the topic.
    pub name: String,
    /// `Partitions`.
    pub partitions: Vec<OffsetPartition>,
    /// Tagged fields of the entry, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `Partitions[]` of a request topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OffsetPartition {
    /// `PartitionIndex` (INT32).
    pub partition_index: i32,
    /// `CommittedOffset` (INT64): the offset to commit.
    pub committed_offset: i64,
    /// `CommittedLeaderEpoch` (INT32, v2+): the leader epoch of the last consumed record, -1
    /// when not known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub committed_leader_epoch: Option<i32>,
    /// `CommittedMetadata` (NULLABLE_STRING): metadata the consumer stores with the offset.
    pub committed_metadata: Option<String>,
    /// Tagged fields of the entry, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// A decoded TxnOffsetCommit response body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TxnOffsetCommitResponse {
    /// `ThrottleTimeMs` (INT32).
    pub throttle_time_ms: i32,
    /// `Topics`: the result of each partition.
    pub topics: Vec<ResultTopic>,
    /// Top-level tagged fields (v3+), none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `Topics[]` of a response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResultTopic {
    /// `Name` (STRING): the topic.
    pub name: String,
    /// `Partitions`.
    pub partitions: Vec<ResultPartition>,
    /// Tagged fields of the entry, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `Partitions[]` of a response topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResultPartition {
    /// `PartitionIndex` (INT32).
    pub partition_index: i32,
    /// `ErrorCode` (INT16): 0 when the offset was stored in the transaction.
    pub error_code: i16,
    /// Kafka's name for `error_code`, null for a code missing from Kafka's table.
    pub error: Option<&'static str>,
    /// Tagged fields of the entry, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// Decodes a whole request body of `version` (0 to 5; callers reject others). Bytes left over
/// are `trailing_bytes`; array elements and tagged fields count against `b`.
pub fn decode_request(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<TxnOffsetCommitRequest, DecodeError> {
    let flex = version >= 3;
    let parse = |i| -> PResult<'_, TxnOffsetCommitRequest> {
        let (i, transactional_id) = string_field(b, "transactional_id", i, flex)?;
        let (i, group_id) = string_field(b, "group_id", i, flex)?;
        let (i, producer_id) = leaf(b, "producer_id", i, int64)?;
        let (i, producer_epoch) = leaf(b, "producer_epoch", i, int16)?;
        let (i, generation_id, member_id, group_instance_id) = if version >= 3 {
            let (i, g) = leaf(b, "generation_id", i, int32)?;
            let (i, m) = string_field(b, "member_id", i, true)?;
            let (i, gi) = nullable_string_field(b, "group_instance_id", i, true)?;
            (i, Some(g), Some(m), Some(gi))
        } else {
            (i, None, None, None)
        };
        let (i, topics) = array(b, "topics", "TxnOffsetCommitRequestTopic", i, flex, 2, |i| {
            let (i, name) = string_field(b, "name", i, flex)?;
            let (i, partitions) = array(
                b,
                "partitions",
                "TxnOffsetCommitRequestPartition",
                i,
                flex,
                13,
                |i| {
                    let (i, partition_index) = leaf(b, "partition_index", i, int32)?;
                    let (i, committed_offset) = leaf(b, "committed_offset", i, int64)?;
                    let (i, committed_leader_epoch) = if version >= 2 {
                        let (i, e) = leaf(b, "committed_leader_epoch", i, int32)?;
                        (i, Some(e))
                    } else {
                        (i, None)
                    };
                    let (i, committed_metadata) =
                        nullable_string_field(b, "committed_metadata", i, flex)?;
                    let (i, unknown_tagged_fields) = tags(b, i, flex)?;
                    Ok((
                        i,
                        OffsetPartition {
                            partition_index,
                            committed_offset,
                            committed_leader_epoch,
                            committed_metadata,
                            unknown_tagged_fields,
                        },
                    ))
                },
            )?;
            let (i, unknown_tagged_fields) = tags(b, i, flex)?;
            Ok((
                i,
                OffsetTopic {
                    name,
                    partitions,
                    unknown_tagged_fields,
                },
            ))
        })?;
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            TxnOffsetCommitRequest {
                transactional_id,
                group_id,
                producer_id,
                producer_epoch,
                generation_id,
                member_id,
                group_instance_id,
                topics,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}

/// Decodes a whole response body of `version` (0 to 5; callers reject others).
pub fn decode_response(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<TxnOffsetCommitResponse, DecodeError> {
    let flex = version >= 3;
    let parse = |i| -> PResult<'_, TxnOffsetCommitResponse> {
        let (i, throttle_time_ms) = leaf(b, "throttle_time_ms", i, int32)?;
        let (i, topics) = array(b, "topics", "TxnOffsetCommitResponseTopic", i, flex, 2, |i| {
            let (i, name) = string_field(b, "name", i, flex)?;
            let (i, partitions) = array(
                b,
                "partitions",
                "TxnOffsetCommitResponsePartition",
                i,
                flex,
                6,
                |i| {
                    let (i, partition_index) = leaf(b, "partition_index", i, int32)?;
                    let (i, error_code) =
                        error_code_field(b, "error_code", i)?;
                    let (i, unknown_tagged_fields) = tags(b, i, flex)?;
                    Ok((
                        i,
                        ResultPartition {
                            partition_index,
                            error_code,
                            error: ErrorCode(error_code).name(),
                            unknown_tagged_fields,
                        },
                    ))
                },
            )?;
            let (i, unknown_tagged_fields) = tags(b, i, flex)?;
            Ok((
                i,
                ResultTopic {
                    name,
                    partitions,
                    unknown_tagged_fields,
                },
            ))
        })?;
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            TxnOffsetCommitResponse {
                throttle_time_ms,
                topics,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}
