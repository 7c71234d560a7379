//! AddOffsetsToTxn (API key 25) request and response bodies, versions 0 to 4: a transactional
//! producer tells its transaction coordinator that the transaction will commit consumer
//! offsets of a group (the coordinator adds that group's `__consumer_offsets` partition to
//! the transaction; the offsets themselves go to the group coordinator in TxnOffsetCommit).
//!
//! Input: the body bytes of one frame (after the header) and the API version from the request
//! header. Output: [`AddOffsetsToTxnRequest`] or [`AddOffsetsToTxnResponse`], whose serde form
//! is the record's `body`, or a [`DecodeError`] with the field path that failed.
//!
//! Sources: Apache Kafka `clients/src/main/resources/common/message/AddOffsetsToTxnRequest.json`
//! and `AddOffsetsToTxnResponse.json` (`"validVersions": "0-4"`, `"flexibleVersions": "3+"`):
//! v1 is v0 (responses sent before throttling); v2 adds no field; v3 is flexible (KIP-482);
//! v4 adds the error code TRANSACTION_ABORTABLE (KIP-890).

use super::InferFn;
use crate::kafka::api::ErrorCode;
use crate::kafka::primitives::{
    error_code_field,
    finish, int16, int32, int64, leaf, string_field, tags, Budget, DecodeError,
    PResult, TaggedField,
};
use serde::Serialize;

/// The versions decoded: 0 to 4.
pub const VERSIONS: std::ops::RangeInclusive<i16> = 0..=4;

/// AddOffsetsToTxn messages are written only with `--all-apis` (for now).
pub const SHOWN_BY_DEFAULT: bool = false;

/// A response names no transaction: it is not inferred.
pub const INFER: Option<InferFn<AddOffsetsToTxnResponse>> = None;

/// A decoded AddOffsetsToTxn request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AddOffsetsToTxnRequest {
    /// `TransactionalId` (STRING): the transaction.
    pub transactional_id: String,
    /// `ProducerId` (INT64): the producer id of the transaction.
    pub producer_id: i64,
    /// `ProducerEpoch` (INT16): the producer's current epoch.
    pub producer_epoch: i16,
    /// `GroupId` (STRING): the consumer group whose offsets the transaction will commit.
    pub group_id: String,
    /// Top-level tagged fields (v3+), none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// A decoded AddOffsetsToTxn response body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AddOffsetsToTxnResponse {
    /// `ThrottleTimeMs` (INT32): milliseconds the request was throttled for a quota.
    pub throttle_time_ms: i32,
    /// `ErrorCode` (INT16): 0 when the group's offsets partition joined the transaction.
    pub error_code: i16,
    /// Kafka's name for `error_code`, null for a code missing from Kafka's table.
    pub error: Option<&'static str>,
    /// Top-level tagged fields (v3+), none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// Decodes a whole request body of `version` (0 to 4; callers reject others). Bytes left over
/// are `trailing_bytes`; tagged fields count against `b`.
pub fn decode_request(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<AddOffsetsToTxnRequest, DecodeError> {
    let flex = version >= 3;
    let parse = |i| -> PResult<'_, AddOffsetsToTxnRequest> {
        let (i, transactional_id) = string_field(b, "transactional_id", i, flex)?;
        let (i, producer_id) = leaf(b, "producer_id", i, int64)?;
        let (i, producer_epoch) = leaf(b, "producer_epoch", i, int16)?;
        let (i, group_id) = string_field(b, "group_id", i, flex)?;
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            AddOffsetsToTxnRequest {
                transactional_id,
                producer_id,
                producer_epoch,
                group_id,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}

/// Decodes a whole response body of `version` (0 to 4; callers reject others).
pub fn decode_response(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<AddOffsetsToTxnResponse, DecodeError> {
    let flex = version >= 3;
    let parse = |i| -> PResult<'_, AddOffsetsToTxnResponse> {
        let (i, throttle_time_ms) = leaf(b, "throttle_time_ms", i, int32)?;
        let (i, error_code) =
            error_code_field(b, "error_code", i)?;
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            AddOffsetsToTxnResponse {
                throttle_time_ms,
                error_code,
                error: ErrorCode(error_code).name(),
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}
