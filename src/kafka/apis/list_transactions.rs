//! ListTransactions (API key 66) request and response bodies, versions 0 to 2: an admin client
//! (`kafka-transactions.sh list`, `find-hanging`; KIP-664) asks a broker for the transactions
//! its coordinator holds, filtered by state, producer id, duration (v1+) and transactional id
//! pattern (v2+).
//!
//! Input: the body bytes of one frame (after the header) and the API version from the request
//! header. Output: [`ListTransactionsRequest`] or [`ListTransactionsResponse`], whose serde
//! form is the record's `body`, or a [`DecodeError`] with the field path that failed.
//!
//! Sources: Apache Kafka `clients/src/main/resources/common/message/ListTransactionsRequest.json`
//! and `ListTransactionsResponse.json` (`"validVersions": "0-2"`, `"flexibleVersions": "0+"`):
//! v1 adds `DurationFilter` (KIP-994), v2 `TransactionalIdPattern` (KIP-1152).

use super::InferFn;
use crate::kafka::api::ErrorCode;
use crate::kafka::primitives::{
    array, array_of, error_code_field, finish, int32, int64, leaf, nullable_string_field, string,
    string_field, tags, Budget, DecodeError, PResult, TaggedField,
};
use serde::Serialize;

/// The versions decoded: 0 to 2.
pub const VERSIONS: std::ops::RangeInclusive<i16> = 0..=2;

/// ListTransactions messages are written only with `--all-apis` (for now).
pub const SHOWN_BY_DEFAULT: bool = false;

/// A response is not inferred.
pub const INFER: Option<InferFn<ListTransactionsResponse>> = None;

/// A decoded ListTransactions request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListTransactionsRequest {
    /// `StateFilters` ([]STRING): states to list (empty: all).
    pub state_filters: Vec<String>,
    /// `ProducerIdFilters` ([]INT64): producer ids to list (empty: all).
    pub producer_id_filters: Vec<i64>,
    /// `DurationFilter` (INT64, v1+): only transactions open longer than this many
    /// milliseconds (-1: no filter). Absent in v0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_filter: Option<i64>,
    /// `TransactionalIdPattern` (NULLABLE_STRING, v2+): a regular expression over
    /// transactional ids, or null. Absent before v2.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transactional_id_pattern: Option<Option<String>>,
    /// Top-level tagged fields, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// A decoded ListTransactions response body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListTransactionsResponse {
    /// `ThrottleTimeMs` (INT32).
    pub throttle_time_ms: i32,
    /// `ErrorCode` (INT16).
    pub error_code: i16,
    /// Kafka's name for `error_code`, null for a code missing from Kafka's table.
    pub error: Option<&'static str>,
    /// `UnknownStateFilters` ([]STRING): the state filters the broker did not know.
    pub unknown_state_filters: Vec<String>,
    /// `TransactionStates`: the transactions listed.
    pub transaction_states: Vec<ListedTransaction>,
    /// Top-level tagged fields, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `TransactionStates[]` of a response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListedTransaction {
    /// `TransactionalId` (STRING).
    pub transactional_id: String,
    /// `ProducerId` (INT64).
    pub producer_id: i64,
    /// `TransactionState` (STRING): e.g. `Ongoing`, `PrepareAbort`, `CompleteCommit`.
    pub transaction_state: String,
    /// Tagged fields of the entry, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// Decodes a whole request body of `version` (0 to 2; callers reject others). Bytes left over
/// are `trailing_bytes`; array elements and tagged fields count against `b`.
pub fn decode_request(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<ListTransactionsRequest, DecodeError> {
    let parse = |i| -> PResult<'_, ListTransactionsRequest> {
        let (i, state_filters) = array_of(b, "state_filters", i, true, 1, |i| string(i, true))?;
        let (i, producer_id_filters) = array_of(b, "producer_id_filters", i, true, 8, int64)?;
        let (i, duration_filter) = if version >= 1 {
            let (i, d) = leaf(b, "duration_filter", i, int64)?;
            (i, Some(d))
        } else {
            (i, None)
        };
        let (i, transactional_id_pattern) = if version >= 2 {
            let (i, p) = nullable_string_field(b, "transactional_id_pattern", i, true)?;
            (i, Some(p))
        } else {
            (i, None)
        };
        let (i, unknown_tagged_fields) = tags(b, i, true)?;
        Ok((
            i,
            ListTransactionsRequest {
                state_filters,
                producer_id_filters,
                duration_filter,
                transactional_id_pattern,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}

/// Decodes a whole response body of `version` (0 to 2; callers reject others).
pub fn decode_response(
    body: &[u8],
    _version: i16,
    b: &Budget,
) -> Result<ListTransactionsResponse, DecodeError> {
    let parse = |i| -> PResult<'_, ListTransactionsResponse> {
        let (i, throttle_time_ms) = leaf(b, "throttle_time_ms", i, int32)?;
        let (i, error_code) = error_code_field(b, "error_code", i)?;
        let (i, unknown_state_filters) =
            array_of(b, "unknown_state_filters", i, true, 1, |i| string(i, true))?;
        // At least: id (1), producer id (8), state (1), tags (1).
        let (i, transaction_states) =
            array(b, "transaction_states", "TransactionState", i, true, 11, |i| {
                let (i, transactional_id) = string_field(b, "transactional_id", i, true)?;
                let (i, producer_id) = leaf(b, "producer_id", i, int64)?;
                let (i, transaction_state) = string_field(b, "transaction_state", i, true)?;
                let (i, unknown_tagged_fields) = tags(b, i, true)?;
                Ok((
                    i,
                    ListedTransaction {
                        transactional_id,
                        producer_id,
                        transaction_state,
                        unknown_tagged_fields,
                    },
                ))
            })?;
        let (i, unknown_tagged_fields) = tags(b, i, true)?;
        Ok((
            i,
            ListTransactionsResponse {
                throttle_time_ms,
                error_code,
                error: ErrorCode(error_code).name(),
                unknown_state_filters,
                transaction_states,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}
