//! DescribeTransactions (API key 65) request and response bodies, version 0: an admin client
//! (`kafka-transactions.sh describe`, KIP-664) asks a transaction coordinator for the state of
//! transactional ids: state, timeout, start time, producer id and epoch, partitions.
//!
//! Input: the body bytes of one frame (after the header) and the API version from the request
//! header. Output: [`DescribeTransactionsRequest`] or [`DescribeTransactionsResponse`], whose
//! serde form is the record's `body`, or a [`DecodeError`] with the field path that failed.
//!
//! Sources: Apache Kafka
//! `clients/src/main/resources/common/message/DescribeTransactionsRequest.json` and
//! `DescribeTransactionsResponse.json` (`"validVersions": "0"`, `"flexibleVersions": "0+"`).

use super::InferFn;
use crate::kafka::api::ErrorCode;
use crate::kafka::primitives::{
    array, array_of, error_code_field, finish, int16, int32, int64, leaf, string, string_field,
    tags, Budget, DecodeError, PResult, TaggedField,
};
use serde::Serialize;

/// The versions decoded: 0.
pub const VERSIONS: std::ops::RangeInclusive<i16> = 0..=0;

/// DescribeTransactions messages are written only with `--all-apis` (for now).
pub const SHOWN_BY_DEFAULT: bool = false;

/// A response is not inferred.
pub const INFER: Option<InferFn<DescribeTransactionsResponse>> = None;

/// A decoded DescribeTransactions request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DescribeTransactionsRequest {
    /// `TransactionalIds` ([]STRING): the transactions to describe.
    pub transactional_ids: Vec<String>,
    /// Top-level tagged fields, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// A decoded DescribeTransactions response body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DescribeTransactionsResponse {
    /// `ThrottleTimeMs` (INT32).
    pub throttle_time_ms: i32,
    /// `TransactionStates`: one per transactional id asked for.
    pub transaction_states: Vec<TransactionState>,
    /// Top-level tagged fields, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `TransactionStates[]` of a response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TransactionState {
    /// `ErrorCode` (INT16): 0 when the transaction was described.
    pub error_code: i16,
    /// Kafka's name for `error_code`, null for a code missing from Kafka's table.
    pub error: Option<&'static str>,
    /// `TransactionalId` (STRING).
    pub transactional_id: String,
    /// `TransactionState` (STRING): e.g. `Ongoing`, `PrepareCommit`, `CompleteAbort`, `Empty`.
    pub transaction_state: String,
    /// `TransactionTimeoutMs` (INT32).
    pub transaction_timeout_ms: i32,
    /// `TransactionStartTimeMs` (INT64): milliseconds since the epoch, -1 when none is open.
    pub transaction_start_time_ms: i64,
    /// `ProducerId` (INT64).
    pub producer_id: i64,
    /// `ProducerEpoch` (INT16).
    pub producer_epoch: i16,
    /// `Topics`: the partitions in the transaction.
    pub topics: Vec<TopicData>,
    /// Tagged fields of the entry, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `Topics[]` of a transaction state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopicData {
    /// `Topic` (STRING).
    pub topic: String,
    /// `Partitions` ([]INT32).
    pub partitions: Vec<i32>,
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
) -> Result<DescribeTransactionsRequest, DecodeError> {
    let parse = |i| -> PResult<'_, DescribeTransactionsRequest> {
        let (i, transactional_ids) =
            array_of(b, "transactional_ids", i, true, 1, |i| string(i, true))?;
        let (i, unknown_tagged_fields) = tags(b, i, true)?;
        Ok((
            i,
            DescribeTransactionsRequest {
                transactional_ids,
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
) -> Result<DescribeTransactionsResponse, DecodeError> {
    let parse = |i| -> PResult<'_, DescribeTransactionsResponse> {
        let (i, throttle_time_ms) = leaf(b, "throttle_time_ms", i, int32)?;
        // At least: error (2), id (1), state (1), timeout (4), start (8), producer id (8),
        // epoch (2), topics (1), tags (1).
        let (i, transaction_states) =
            array(b, "transaction_states", "TransactionState", i, true, 28, |i| {
                state(i, b)
            })?;
        let (i, unknown_tagged_fields) = tags(b, i, true)?;
        Ok((
            i,
            DescribeTransactionsResponse {
                throttle_time_ms,
                transaction_states,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}

fn state<'a>(i: &'a [u8], b: &Budget) -> PResult<'a, TransactionState> {
    let (i, error_code) = error_code_field(b, "error_code", i)?;
    let (i, transactional_id) = string_field(b, "transactional_id", i, true)?;
    let (i, transaction_state) = string_field(b, "transaction_state", i, true)?;
    let (i, transaction_timeout_ms) = leaf(b, "transaction_timeout_ms", i, int32)?;
    let (i, transaction_start_time_ms) = leaf(b, "transaction_start_time_ms", i, int64)?;
    let (i, producer_id) = leaf(b, "producer_id", i, int64)?;
    let (i, producer_epoch) = leaf(b, "producer_epoch", i, int16)?;
    let (i, topics) = array(b, "topics", "TopicData", i, true, 3, |i| {
        let (i, topic) = string_field(b, "topic", i, true)?;
        let (i, partitions) = array_of(b, "partitions", i, true, 4, int32)?;
        let (i, unknown_tagged_fields) = tags(b, i, true)?;
        Ok((
            i,
            TopicData {
                topic,
                partitions,
                unknown_tagged_fields,
            },
        ))
    })?;
    let (i, unknown_tagged_fields) = tags(b, i, true)?;
    Ok((
        i,
        TransactionState {
            error_code,
            error: ErrorCode(error_code).name(),
            transactional_id,
            transaction_state,
            transaction_timeout_ms,
            transaction_start_time_ms,
            producer_id,
            producer_epoch,
            topics,
            unknown_tagged_fields,
        },
    ))
}
