//! EndTxn (API key 26) request and response bodies, versions 0 to 5: the client asks its
//! transaction coordinator to commit or abort the open transaction.
//!
//! Input: the body bytes of one frame (after the header) and the API version from the request
//! header. Output: [`EndTxnRequest`] or [`EndTxnResponse`], whose serde form is the record's
//! `body`, or a [`DecodeError`] with the field path that failed.
//!
//! Sources: Apache Kafka `clients/src/main/resources/common/message/EndTxnRequest.json` and
//! `EndTxnResponse.json` (`"validVersions": "0-5"`, `"flexibleVersions": "3+"`): v1 is v0; v2
//! and v4 only add error codes (PRODUCER_FENCED, TRANSACTION_ABORTABLE of KIP-890); v3 is
//! flexible (KIP-482); v5 (KIP-890 part 2, transaction version 2) adds `ProducerId` and
//! `ProducerEpoch` to the response: the epoch the coordinator bumped at the end of the
//! transaction, which the markers carry.

use super::InferFn;
use crate::kafka::api::ErrorCode;
use crate::kafka::primitives::{
    error_code_field,
    boolean, finish, int16, int32, int64, leaf, string_field, tags, Budget,
    DecodeError, PResult, TaggedField,
};
use serde::Serialize;

/// The versions decoded: 0 to 5.
pub const VERSIONS: std::ops::RangeInclusive<i16> = 0..=5;

/// EndTxn messages are written only with `--all-apis` (for now).
pub const SHOWN_BY_DEFAULT: bool = false;

/// A response names no transaction: it is not inferred.
pub const INFER: Option<InferFn<EndTxnResponse>> = None;

/// A decoded EndTxn request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EndTxnRequest {
    /// `TransactionalId` (STRING): the transaction to end.
    pub transactional_id: String,
    /// `ProducerId` (INT64): the producer id of the transaction.
    pub producer_id: i64,
    /// `ProducerEpoch` (INT16): the producer's current epoch.
    pub producer_epoch: i16,
    /// `Committed` (BOOLEAN): true to commit, false to abort.
    pub committed: bool,
    /// Top-level tagged fields (v3+), none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// A decoded EndTxn response body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EndTxnResponse {
    /// `ThrottleTimeMs` (INT32): milliseconds the request was throttled for a quota.
    pub throttle_time_ms: i32,
    /// `ErrorCode` (INT16): 0 when the transaction was ended.
    pub error_code: i16,
    /// Kafka's name for `error_code`, null for a code missing from Kafka's table.
    pub error: Option<&'static str>,
    /// `ProducerId` (INT64, v5+): the producer id to use for the next transaction (-1 when
    /// the coordinator gave none). Absent before v5.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producer_id: Option<i64>,
    /// `ProducerEpoch` (INT16, v5+): the epoch bumped at the end of this transaction (-1 when
    /// none). Absent before v5.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producer_epoch: Option<i16>,
    /// Top-level tagged fields (v3+), none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// Decodes a whole request body of `version` (0 to 5; callers reject others). Bytes left over
/// are `trailing_bytes`; tagged fields count against `b`.
pub fn decode_request(body: &[u8], version: i16, b: &Budget) -> Result<EndTxnRequest, DecodeError> {
    let flex = version >= 3;
    let parse = |i| -> PResult<'_, EndTxnRequest> {
        let (i, transactional_id) = string_field(b, "transactional_id", i, flex)?;
        let (i, producer_id) = leaf(b, "producer_id", i, int64)?;
        let (i, producer_epoch) = leaf(b, "producer_epoch", i, int16)?;
        let (i, committed) = leaf(b, "committed", i, boolean)?;
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            EndTxnRequest {
                transactional_id,
                producer_id,
                producer_epoch,
                committed,
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
) -> Result<EndTxnResponse, DecodeError> {
    let flex = version >= 3;
    let parse = |i| -> PResult<'_, EndTxnResponse> {
        let (i, throttle_time_ms) = leaf(b, "throttle_time_ms", i, int32)?;
        let (i, error_code) =
            error_code_field(b, "error_code", i)?;
        let (i, producer_id, producer_epoch) = if version >= 5 {
            let (i, id) = leaf(b, "producer_id", i, int64)?;
            let (i, epoch) = leaf(b, "producer_epoch", i, int16)?;
            (i, Some(id), Some(epoch))
        } else {
            (i, None, None)
        };
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            EndTxnResponse {
                throttle_time_ms,
                error_code,
                error: ErrorCode(error_code).name(),
                producer_id,
                producer_epoch,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}
