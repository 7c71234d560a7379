//! InitProducerId (API key 22) request and response bodies, versions 0 to 6: a producer asks
//! its transaction coordinator (or any broker, for an idempotent producer without
//! transactional id) for a producer id and epoch. For a transactional id it fences older
//! instances (their open transaction is aborted) and sets the transaction timeout.
//!
//! Input: the body bytes of one frame (after the header) and the API version from the request
//! header. Output: [`InitProducerIdRequest`] or [`InitProducerIdResponse`], whose serde form is
//! the record's `body`, or a [`DecodeError`] with the field path that failed.
//!
//! Sources: Apache Kafka `clients/src/main/resources/common/message/InitProducerIdRequest.json`
//! and `InitProducerIdResponse.json` (`"validVersions": "0-6"`, `"flexibleVersions": "2+"`):
//! v1 is v0; v2 is flexible (KIP-482); v3 adds `ProducerId` and `ProducerEpoch` to the request
//! (KIP-360, resuming after INVALID_PRODUCER_EPOCH); v4 and v5 add error codes (PRODUCER_FENCED,
//! TRANSACTION_ABORTABLE of KIP-890); v6 (KIP-939, two-phase commit; unstable in Kafka) adds
//! `Enable2Pc` and `KeepPreparedTxn` to the request and `OngoingTxnProducerId` and
//! `OngoingTxnProducerEpoch` to the response.

use super::InferFn;
use crate::kafka::api::ErrorCode;
use crate::kafka::primitives::{
    error_code_field,
    boolean, finish, int16, int32, int64, leaf, nullable_string_field, tags, Budget,
    DecodeError, PResult, TaggedField,
};
use serde::Serialize;

/// The versions decoded: 0 to 6.
pub const VERSIONS: std::ops::RangeInclusive<i16> = 0..=6;

/// InitProducerId messages are written only with `--all-apis` (for now).
pub const SHOWN_BY_DEFAULT: bool = false;

/// A response names no transactional id: it is not inferred.
pub const INFER: Option<InferFn<InitProducerIdResponse>> = None;

/// A decoded InitProducerId request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InitProducerIdRequest {
    /// `TransactionalId` (NULLABLE_STRING): the transactional id, null for an idempotent
    /// producer without transactions.
    pub transactional_id: Option<String>,
    /// `TransactionTimeoutMs` (INT32): milliseconds after which the coordinator aborts a
    /// transaction left open.
    pub transaction_timeout_ms: i32,
    /// `ProducerId` (INT64, v3+): the producer id in use (-1 for none). Absent before v3.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producer_id: Option<i64>,
    /// `ProducerEpoch` (INT16, v3+): the epoch in use (-1 for none). Absent before v3.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producer_epoch: Option<i16>,
    /// `Enable2Pc` (BOOLEAN, v6+): the client asks for two-phase commit (KIP-939).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enable_2_pc: Option<bool>,
    /// `KeepPreparedTxn` (BOOLEAN, v6+): keep the prepared transaction instead of aborting it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_prepared_txn: Option<bool>,
    /// Top-level tagged fields (v2+), none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// A decoded InitProducerId response body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InitProducerIdResponse {
    /// `ThrottleTimeMs` (INT32): milliseconds the request was throttled for a quota.
    pub throttle_time_ms: i32,
    /// `ErrorCode` (INT16): 0 when a producer id was given.
    pub error_code: i16,
    /// Kafka's name for `error_code`, null for a code missing from Kafka's table.
    pub error: Option<&'static str>,
    /// `ProducerId` (INT64): the producer id to use (-1 on error).
    pub producer_id: i64,
    /// `ProducerEpoch` (INT16): its epoch.
    pub producer_epoch: i16,
    /// `OngoingTxnProducerId` (INT64, v6+): the producer id of the transaction kept by
    /// `KeepPreparedTxn`, -1 for none. Absent before v6.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ongoing_txn_producer_id: Option<i64>,
    /// `OngoingTxnProducerEpoch` (INT16, v6+): its epoch, -1 for none. Absent before v6.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ongoing_txn_producer_epoch: Option<i16>,
    /// Top-level tagged fields (v2+), none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// Decodes a whole request body of `version` (0 to 6; callers reject others). Bytes left over
/// are `trailing_bytes`; tagged fields count against `b`.
pub fn decode_request(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<InitProducerIdRequest, DecodeError> {
    let flex = version >= 2;
    let parse = |i| -> PResult<'_, InitProducerIdRequest> {
        let (i, transactional_id) = nullable_string_field(b, "transactional_id", i, flex)?;
        let (i, transaction_timeout_ms) = leaf(b, "transaction_timeout_ms", i, int32)?;
        let (i, producer_id, producer_epoch) = if version >= 3 {
            let (i, id) = leaf(b, "producer_id", i, int64)?;
            let (i, epoch) = leaf(b, "producer_epoch", i, int16)?;
            (i, Some(id), Some(epoch))
        } else {
            (i, None, None)
        };
        let (i, enable_2_pc, keep_prepared_txn) = if version >= 6 {
            let (i, two_pc) = leaf(b, "enable_2_pc", i, boolean)?;
            let (i, keep) = leaf(b, "keep_prepared_txn", i, boolean)?;
            (i, Some(two_pc), Some(keep))
        } else {
            (i, None, None)
        };
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            InitProducerIdRequest {
                transactional_id,
                transaction_timeout_ms,
                producer_id,
                producer_epoch,
                enable_2_pc,
                keep_prepared_txn,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}

/// Decodes a whole response body of `version` (0 to 6; callers reject others).
pub fn decode_response(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<InitProducerIdResponse, DecodeError> {
    let flex = version >= 2;
    let parse = |i| -> PResult<'_, InitProducerIdResponse> {
        let (i, throttle_time_ms) = leaf(b, "throttle_time_ms", i, int32)?;
        let (i, error_code) =
            error_code_field(b, "error_code", i)?;
        let (i, producer_id) = leaf(b, "producer_id", i, int64)?;
        let (i, producer_epoch) = leaf(b, "producer_epoch", i, int16)?;
        let (i, ongoing_txn_producer_id, ongoing_txn_producer_epoch) = if version >= 6 {
            let (i, id) = leaf(b, "ongoing_txn_producer_id", i, int64)?;
            let (i, epoch) = leaf(b, "ongoing_txn_producer_epoch", i, int16)?;
            (i, Some(id), Some(epoch))
        } else {
            (i, None, None)
        };
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            InitProducerIdResponse {
                throttle_time_ms,
                error_code,
                error: ErrorCode(error_code).name(),
                producer_id,
                producer_epoch,
                ongoing_txn_producer_id,
                ongoing_txn_producer_epoch,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}
