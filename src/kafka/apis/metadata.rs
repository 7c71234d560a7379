//! Metadata (API key 3) request and response bodies, versions 0 to 13: which brokers a cluster
//! has (node id, host, port, rack), which broker leads each partition, and each topic's id
//! (what Produce v13+ and Fetch v13+ name topics by).
//!
//! Input: the body bytes of one frame (after the header) and the API version from the request
//! header. Output: [`MetadataRequest`] or [`MetadataResponse`], whose serde form is the
//! record's `body`, or a [`DecodeError`] with the field path that failed.
//!
//! Sources: Apache Kafka `clients/src/main/resources/common/message/MetadataRequest.json` and
//! `MetadataResponse.json` (`"validVersions": "0-13"`, `"flexibleVersions": "9+"`): v1 adds
//! racks, the controller and `IsInternal` (and a null topic list for "all topics"), v2 the
//! cluster id, v3 `ThrottleTimeMs`, v4 `AllowAutoTopicCreation`, v5 `OfflineReplicas`, v7
//! `LeaderEpoch`, v8 authorized operations (the cluster's only to v10, KIP-430 / KIP-700), v10
//! topic ids (KIP-516), v12 nullable topic names, v13 a top-level `ErrorCode` (KIP-1102).

use super::InferFn;
use crate::kafka::api::ErrorCode;
use crate::kafka::primitives::{
    array, array_of, boolean, error_code_field, finish, int32, leaf, nullable_array,
    nullable_string_field, string_field, tags, uuid_field, Budget, DecodeError, PResult,
    TaggedField,
};
use serde::Serialize;

/// The versions decoded: 0 to 13.
pub const VERSIONS: std::ops::RangeInclusive<i16> = 0..=13;

/// Metadata messages are written only with `--all-apis` or `--api Metadata`.
pub const SHOWN_BY_DEFAULT: bool = false;

/// A response is not inferred.
pub const INFER: Option<InferFn<MetadataResponse>> = None;

/// A decoded Metadata request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetadataRequest {
    /// `Topics` (nullable from v1: null asks for every topic; in v0 an empty list does).
    pub topics: Option<Vec<MetadataRequestTopic>>,
    /// `AllowAutoTopicCreation` (BOOLEAN, v4+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_auto_topic_creation: Option<bool>,
    /// `IncludeClusterAuthorizedOperations` (BOOLEAN, v8-10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_cluster_authorized_operations: Option<bool>,
    /// `IncludeTopicAuthorizedOperations` (BOOLEAN, v8+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_topic_authorized_operations: Option<bool>,
    /// Top-level tagged fields (v9+), none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// One topic asked about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetadataRequestTopic {
    /// `TopicId` (UUID, v10+), as Kafka prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_id: Option<String>,
    /// `Name` (STRING; nullable from v10, when the topic is asked by id).
    pub name: Option<String>,
}

/// A decoded Metadata response body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetadataResponse {
    /// `ThrottleTimeMs` (INT32, v3+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttle_time_ms: Option<i32>,
    /// `Brokers`: every broker of the cluster.
    pub brokers: Vec<MetadataResponseBroker>,
    /// `ClusterId` (NULLABLE_STRING, v2+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_id: Option<Option<String>>,
    /// `ControllerId` (INT32, v1+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller_id: Option<i32>,
    /// `Topics`.
    pub topics: Vec<MetadataResponseTopic>,
    /// `ClusterAuthorizedOperations` (INT32, v8-10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_authorized_operations: Option<i32>,
    /// `ErrorCode` (INT16, v13+): a top-level error (e.g. REBOOTSTRAP_REQUIRED).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<i16>,
    /// Kafka's name for `error_code` (v13+; null for a code missing from Kafka's table).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Option<&'static str>>,
    /// Top-level tagged fields (v9+), none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// One broker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetadataResponseBroker {
    /// `NodeId` (INT32).
    pub node_id: i32,
    /// `Host` (STRING).
    pub host: String,
    /// `Port` (INT32).
    pub port: i32,
    /// `Rack` (NULLABLE_STRING, v1+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rack: Option<Option<String>>,
}

/// One topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetadataResponseTopic {
    /// `ErrorCode` (INT16).
    pub error_code: i16,
    /// Kafka's name for `error_code`.
    pub error: Option<&'static str>,
    /// `Name` (STRING; nullable from v12).
    pub name: Option<String>,
    /// `TopicId` (UUID, v10+), as Kafka prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_id: Option<String>,
    /// `IsInternal` (BOOLEAN, v1+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_internal: Option<bool>,
    /// `Partitions`.
    pub partitions: Vec<MetadataResponsePartition>,
    /// `TopicAuthorizedOperations` (INT32, v8+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_authorized_operations: Option<i32>,
}

/// One partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetadataResponsePartition {
    /// `ErrorCode` (INT16).
    pub error_code: i16,
    /// Kafka's name for `error_code`.
    pub error: Option<&'static str>,
    /// `PartitionIndex` (INT32).
    pub partition_index: i32,
    /// `LeaderId` (INT32): the leader's node id, -1 without one.
    pub leader_id: i32,
    /// `LeaderEpoch` (INT32, v7+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leader_epoch: Option<i32>,
    /// `ReplicaNodes` ([]INT32).
    pub replica_nodes: Vec<i32>,
    /// `IsrNodes` ([]INT32).
    pub isr_nodes: Vec<i32>,
    /// `OfflineReplicas` ([]INT32, v5+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offline_replicas: Option<Vec<i32>>,
}

/// Decodes a whole request body of `version` (0 to 13; callers reject others).
pub fn decode_request(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<MetadataRequest, DecodeError> {
    let flex = version >= 9;
    let topic = |i| -> PResult<'_, MetadataRequestTopic> {
        let (i, topic_id) = if version >= 10 {
            let (i, id) = uuid_field(b, "topic_id", i)?;
            (i, Some(id))
        } else {
            (i, None)
        };
        let (i, name) = if version >= 10 {
            nullable_string_field(b, "name", i, flex)?
        } else {
            let (i, n) = string_field(b, "name", i, flex)?;
            (i, Some(n))
        };
        let (i, _) = tags(b, i, flex)?;
        Ok((i, MetadataRequestTopic { topic_id, name }))
    };
    let parse = |i| -> PResult<'_, MetadataRequest> {
        let min = 2;
        let (i, topics) = if version >= 1 {
            nullable_array(b, "topics", "MetadataRequestTopic", i, flex, min, topic)?
        } else {
            let (i, t) = array(b, "topics", "MetadataRequestTopic", i, flex, min, topic)?;
            (i, Some(t))
        };
        let (i, allow_auto_topic_creation) = if version >= 4 {
            let (i, v) = leaf(b, "allow_auto_topic_creation", i, boolean)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, include_cluster_authorized_operations) = if (8..=10).contains(&version) {
            let (i, v) = leaf(b, "include_cluster_authorized_operations", i, boolean)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, include_topic_authorized_operations) = if version >= 8 {
            let (i, v) = leaf(b, "include_topic_authorized_operations", i, boolean)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            MetadataRequest {
                topics,
                allow_auto_topic_creation,
                include_cluster_authorized_operations,
                include_topic_authorized_operations,
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}

/// Decodes a whole response body of `version` (0 to 13; callers reject others).
pub fn decode_response(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<MetadataResponse, DecodeError> {
    let flex = version >= 9;
    let broker = |i| -> PResult<'_, MetadataResponseBroker> {
        let (i, node_id) = leaf(b, "node_id", i, int32)?;
        let (i, host) = string_field(b, "host", i, flex)?;
        let (i, port) = leaf(b, "port", i, int32)?;
        let (i, rack) = if version >= 1 {
            let (i, r) = nullable_string_field(b, "rack", i, flex)?;
            (i, Some(r))
        } else {
            (i, None)
        };
        let (i, _) = tags(b, i, flex)?;
        Ok((
            i,
            MetadataResponseBroker {
                node_id,
                host,
                port,
                rack,
            },
        ))
    };
    let partition = |i| -> PResult<'_, MetadataResponsePartition> {
        let (i, error_code) = error_code_field(b, "error_code", i)?;
        let (i, partition_index) = leaf(b, "partition_index", i, int32)?;
        let (i, leader_id) = leaf(b, "leader_id", i, int32)?;
        let (i, leader_epoch) = if version >= 7 {
            let (i, v) = leaf(b, "leader_epoch", i, int32)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, replica_nodes) = array_of(b, "replica_nodes", i, flex, 4, int32)?;
        let (i, isr_nodes) = array_of(b, "isr_nodes", i, flex, 4, int32)?;
        let (i, offline_replicas) = if version >= 5 {
            let (i, v) = array_of(b, "offline_replicas", i, flex, 4, int32)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, _) = tags(b, i, flex)?;
        Ok((
            i,
            MetadataResponsePartition {
                error_code,
                error: ErrorCode(error_code).name(),
                partition_index,
                leader_id,
                leader_epoch,
                replica_nodes,
                isr_nodes,
                offline_replicas,
            },
        ))
    };
    let topic = |i| -> PResult<'_, MetadataResponseTopic> {
        let (i, error_code) = error_code_field(b, "error_code", i)?;
        let (i, name) = if version >= 12 {
            nullable_string_field(b, "name", i, flex)?
        } else {
            let (i, n) = string_field(b, "name", i, flex)?;
            (i, Some(n))
        };
        let (i, topic_id) = if version >= 10 {
            let (i, id) = uuid_field(b, "topic_id", i)?;
            (i, Some(id))
        } else {
            (i, None)
        };
        let (i, is_internal) = if version >= 1 {
            let (i, v) = leaf(b, "is_internal", i, boolean)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, partitions) = array(
            b,
            "partitions",
            "MetadataResponsePartition",
            i,
            flex,
            10,
            partition,
        )?;
        let (i, topic_authorized_operations) = if version >= 8 {
            let (i, v) = leaf(b, "topic_authorized_operations", i, int32)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, _) = tags(b, i, flex)?;
        Ok((
            i,
            MetadataResponseTopic {
                error_code,
                error: ErrorCode(error_code).name(),
                name,
                topic_id,
                is_internal,
                partitions,
                topic_authorized_operations,
            },
        ))
    };
    let parse = |i| -> PResult<'_, MetadataResponse> {
        let (i, throttle_time_ms) = if version >= 3 {
            let (i, v) = leaf(b, "throttle_time_ms", i, int32)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, brokers) = array(b, "brokers", "MetadataResponseBroker", i, flex, 9, broker)?;
        let (i, cluster_id) = if version >= 2 {
            let (i, v) = nullable_string_field(b, "cluster_id", i, flex)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, controller_id) = if version >= 1 {
            let (i, v) = leaf(b, "controller_id", i, int32)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, topics) = array(b, "topics", "MetadataResponseTopic", i, flex, 4, topic)?;
        let (i, cluster_authorized_operations) = if (8..=10).contains(&version) {
            let (i, v) = leaf(b, "cluster_authorized_operations", i, int32)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, error_code) = if version >= 13 {
            let (i, v) = error_code_field(b, "error_code", i)?;
            (i, Some(v))
        } else {
            (i, None)
        };
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            MetadataResponse {
                throttle_time_ms,
                brokers,
                cluster_id,
                controller_id,
                topics,
                cluster_authorized_operations,
                error_code,
                error: error_code.map(|e| ErrorCode(e).name()),
                unknown_tagged_fields,
            },
        ))
    };
    finish(parse(body))
}
