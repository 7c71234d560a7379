//! AddPartitionsToTxn (API key 24) request and response bodies, versions 0 to 5: partitions
//! join a transaction. Versions 0 to 3 are sent by clients for one transaction; versions 4 and
//! up by partition leaders, batched over transactions, with `VerifyOnly` to check that a
//! partition is already in the transaction (transaction version 2, KIP-890, where a
//! transactional Produce adds its partition implicitly).
//!
//! Input: the body bytes of one frame (after the header) and the API version from the request
//! header. Output: [`AddPartitionsToTxnRequest`] or [`AddPartitionsToTxnResponse`], whose serde
//! form is the record's `body`, or a [`DecodeError`] with the field path that failed.
//!
//! Sources: Apache Kafka
//! `clients/src/main/resources/common/message/AddPartitionsToTxnRequest.json` and
//! `AddPartitionsToTxnResponse.json` (`"validVersions": "0-5"`, `"flexibleVersions": "3+"`):
//! v1 is v0; v2 adds no field; v3 is flexible (KIP-482); v4 (KIP-890) replaces the one
//! transaction (the schema's `V3AndBelowTransactionalId`, `V3AndBelowProducerId`,
//! `V3AndBelowProducerEpoch`, `V3AndBelowTopics`, here without the prefix) by `Transactions`,
//! and the response's `ResultsByTopicV3AndBelow` (here `results_by_topic`) by `ErrorCode` and
//! `ResultsByTransaction`; v5 adds the error code TRANSACTION_ABORTABLE.

use super::InferFn;
use crate::kafka::api::ErrorCode;
use crate::kafka::primitives::{
    error_code_field,
    array, array_of, boolean, finish, int16, int32, int64, leaf, string_field, tags,
    Budget, DecodeError, PResult, TaggedField,
};
use serde::Serialize;

/// The versions decoded: 0 to 5.
pub const VERSIONS: std::ops::RangeInclusive<i16> = 0..=5;

/// AddPartitionsToTxn messages are written only with `--all-apis` (for now).
pub const SHOWN_BY_DEFAULT: bool = false;

/// A response is not inferred.
pub const INFER: Option<InferFn<AddPartitionsToTxnResponse>> = None;

/// A decoded AddPartitionsToTxn request body: one transaction (v0-3) or `transactions` (v4+).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AddPartitionsToTxnRequest {
    /// `V3AndBelowTransactionalId` (STRING, v0-3): the transaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transactional_id: Option<String>,
    /// `V3AndBelowProducerId` (INT64, v0-3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producer_id: Option<i64>,
    /// `V3AndBelowProducerEpoch` (INT16, v0-3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producer_epoch: Option<i16>,
    /// `V3AndBelowTopics` (v0-3): the partitions to add.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topics: Option<Vec<TxnTopic>>,
    /// `Transactions` (v4+): the transactions, each with its partitions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transactions: Option<Vec<Transaction>>,
    /// Top-level tagged fields (v3+), none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `Transactions[]` of a v4+ request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Transaction {
    /// `TransactionalId` (STRING).
    pub transactional_id: String,
    /// `ProducerId` (INT64).
    pub producer_id: i64,
    /// `ProducerEpoch` (INT16).
    pub producer_epoch: i16,
    /// `VerifyOnly` (BOOLEAN): only check that the partitions are in the transaction.
    pub verify_only: bool,
    /// `Topics`: the partitions.
    pub topics: Vec<TxnTopic>,
    /// Tagged fields of the entry, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// A topic and its partitions (`AddPartitionsToTxnTopic`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TxnTopic {
    /// `Name` (STRING): the topic.
    pub name: String,
    /// `Partitions` ([]INT32): the partition indexes.
    pub partitions: Vec<i32>,
    /// Tagged fields of the entry, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// A decoded AddPartitionsToTxn response body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AddPartitionsToTxnResponse {
    /// `ThrottleTimeMs` (INT32).
    pub throttle_time_ms: i32,
    /// `ErrorCode` (INT16, v4+): an error for the whole request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<i16>,
    /// Kafka's name for `error_code` (v4+), null for a code missing from Kafka's table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Option<&'static str>>,
    /// `ResultsByTransaction` (v4+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results_by_transaction: Option<Vec<TransactionResult>>,
    /// `ResultsByTopicV3AndBelow` (v0-3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results_by_topic: Option<Vec<TopicResult>>,
    /// Top-level tagged fields (v3+), none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `ResultsByTransaction[]` of a v4+ response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TransactionResult {
    /// `TransactionalId` (STRING).
    pub transactional_id: String,
    /// `TopicResults`.
    pub topic_results: Vec<TopicResult>,
    /// Tagged fields of the entry, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// A topic's results (`AddPartitionsToTxnTopicResult`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopicResult {
    /// `Name` (STRING): the topic.
    pub name: String,
    /// `ResultsByPartition`.
    pub results_by_partition: Vec<PartitionResult>,
    /// Tagged fields of the entry, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// A partition's result (`AddPartitionsToTxnPartitionResult`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionResult {
    /// `PartitionIndex` (INT32).
    pub partition_index: i32,
    /// `PartitionErrorCode` (INT16): 0 when the partition is in the transaction.
    pub partition_error_code: i16,
    /// Kafka's name for `partition_error_code`, null for a code missing from Kafka's table.
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
) -> Result<AddPartitionsToTxnRequest, DecodeError> {
    let flex = version >= 3;
    let parse = |i| -> PResult<'_, AddPartitionsToTxnRequest> {
        let mut r = AddPartitionsToTxnRequest {
            transactional_id: None,
            producer_id: None,
            producer_epoch: None,
            topics: None,
            transactions: None,
            unknown_tagged_fields: Vec::new(),
        };
        let i = if version >= 4 {
            // At least: id (1), producer id (8), epoch (2), verify (1), topics (1), tags (1).
            let (i, t) = array(b, "transactions", "AddPartitionsToTxnTransaction", i, true, 14, |i| {
                transaction(i, b)
            })?;
            r.transactions = Some(t);
            i
        } else {
            let (i, id) = string_field(b, "transactional_id", i, flex)?;
            let (i, pid) = leaf(b, "producer_id", i, int64)?;
            let (i, epoch) = leaf(b, "producer_epoch", i, int16)?;
            let (i, topics) = topics(i, flex, b)?;
            r.transactional_id = Some(id);
            r.producer_id = Some(pid);
            r.producer_epoch = Some(epoch);
            r.topics = Some(topics);
            i
        };
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        r.unknown_tagged_fields = unknown_tagged_fields;
        Ok((i, r))
    };
    finish(parse(body))
}

fn transaction<'a>(i: &'a [u8], b: &Budget) -> PResult<'a, Transaction> {
    let (i, transactional_id) = string_field(b, "transactional_id", i, true)?;
    let (i, producer_id) = leaf(b, "producer_id", i, int64)?;
    let (i, producer_epoch) = leaf(b, "producer_epoch", i, int16)?;
    let (i, verify_only) = leaf(b, "verify_only", i, boolean)?;
    let (i, topics) = topics(i, true, b)?;
    let (i, unknown_tagged_fields) = tags(b, i, true)?;
    Ok((
        i,
        Transaction {
            transactional_id,
            producer_id,
            producer_epoch,
            verify_only,
            topics,
            unknown_tagged_fields,
        },
    ))
}

fn topics<'a>(i: &'a [u8], flex: bool, b: &Budget) -> PResult<'a, Vec<TxnTopic>> {
    array(b, "topics", "AddPartitionsToTxnTopic", i, flex, 2, |i| {
        let (i, name) = string_field(b, "name", i, flex)?;
        let (i, partitions) = array_of(b, "partitions", i, flex, 4, int32)?;
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            TxnTopic {
                name,
                partitions,
                unknown_tagged_fields,
            },
        ))
    })
}

/// Decodes a whole response body of `version` (0 to 5; callers reject others).
pub fn decode_response(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<AddPartitionsToTxnResponse, DecodeError> {
    let flex = version >= 3;
    let parse = |i| -> PResult<'_, AddPartitionsToTxnResponse> {
        let (i, throttle_time_ms) = leaf(b, "throttle_time_ms", i, int32)?;
        let mut r = AddPartitionsToTxnResponse {
            throttle_time_ms,
            error_code: None,
            error: None,
            results_by_transaction: None,
            results_by_topic: None,
            unknown_tagged_fields: Vec::new(),
        };
        let i = if version >= 4 {
            let (i, code) =
                error_code_field(b, "error_code", i)?;
            let (i, results) = array(
                b,
                "results_by_transaction",
                "AddPartitionsToTxnResult",
                i,
                true,
                3,
                |i| {
                    let (i, transactional_id) = string_field(b, "transactional_id", i, true)?;
                    let (i, topic_results) = topic_results(i, "topic_results", true, b)?;
                    let (i, unknown_tagged_fields) = tags(b, i, true)?;
                    Ok((
                        i,
                        TransactionResult {
                            transactional_id,
                            topic_results,
                            unknown_tagged_fields,
                        },
                    ))
                },
            )?;
            r.error_code = Some(code);
            r.error = Some(ErrorCode(code).name());
            r.results_by_transaction = Some(results);
            i
        } else {
            let (i, results) = topic_results(i, "results_by_topic", flex, b)?;
            r.results_by_topic = Some(results);
            i
        };
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        r.unknown_tagged_fields = unknown_tagged_fields;
        Ok((i, r))
    };
    finish(parse(body))
}

fn topic_results<'a>(
    i: &'a [u8],
    name: &'static str,
    flex: bool,
    b: &Budget,
) -> PResult<'a, Vec<TopicResult>> {
    array(b, name, "AddPartitionsToTxnTopicResult", i, flex, 2, |i| {
        let (i, topic) = string_field(b, "name", i, flex)?;
        let (i, results_by_partition) = array(
            b,
            "results_by_partition",
            "AddPartitionsToTxnPartitionResult",
            i,
            flex,
            6,
            |i| {
                let (i, partition_index) = leaf(b, "partition_index", i, int32)?;
                let (i, code) = error_code_field(b, "partition_error_code", i)?;
                let (i, unknown_tagged_fields) = tags(b, i, flex)?;
                Ok((
                    i,
                    PartitionResult {
                        partition_index,
                        partition_error_code: code,
                        error: ErrorCode(code).name(),
                        unknown_tagged_fields,
                    },
                ))
            },
        )?;
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            TopicResult {
                name: topic,
                results_by_partition,
                unknown_tagged_fields,
            },
        ))
    })
}
