//! FindCoordinator (API key 10) request and response bodies, versions 0 to 6: a client asks
//! any broker which broker coordinates a consumer group (key type 0) or a transactional id
//! (key type 1; the leader of the id's `__transaction_state` partition), or a share group
//! (key type 2).
//!
//! Input: the body bytes of one frame (after the header) and the API version from the request
//! header. Output: [`FindCoordinatorRequest`] or [`FindCoordinatorResponse`], whose serde form
//! is the record's `body`, or a [`DecodeError`] with the field path that failed.
//!
//! Sources: Apache Kafka `clients/src/main/resources/common/message/FindCoordinatorRequest.json`
//! and `FindCoordinatorResponse.json` (`"validVersions": "0-6"`, `"flexibleVersions": "3+"`):
//! v1 adds `KeyType` and, in the response, `ThrottleTimeMs` and `ErrorMessage`; v2 is v1; v3 is
//! flexible (KIP-482); v4 (KIP-699) asks for several keys at once (`CoordinatorKeys`) and
//! answers with one `Coordinators` entry per key; v5 and v6 add no field (error codes, share
//! groups of KIP-932).

use super::InferFn;
use crate::kafka::api::ErrorCode;
use crate::kafka::primitives::{
    error_code_field,
    array, array_of, finish, int32, int8, leaf, nullable_string_field, string,
    string_field, tags, Budget, DecodeError, PResult, TaggedField,
};
use serde::Serialize;

/// The versions decoded: 0 to 6.
pub const VERSIONS: std::ops::RangeInclusive<i16> = 0..=6;

/// FindCoordinator messages are written only with `--all-apis` (for now).
pub const SHOWN_BY_DEFAULT: bool = false;

/// A response is not inferred.
pub const INFER: Option<InferFn<FindCoordinatorResponse>> = None;

/// A decoded FindCoordinator request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FindCoordinatorRequest {
    /// `Key` (STRING, v0-3): the group id or transactional id. Absent from v4.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `KeyType` (INT8, v1+): 0 group, 1 transaction, 2 share group. Absent in v0 (a group).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_type: Option<i8>,
    /// `CoordinatorKeys` ([]STRING, v4+): the keys asked for. Absent before v4.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coordinator_keys: Option<Vec<String>>,
    /// Top-level tagged fields (v3+), none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// A decoded FindCoordinator response body. Versions 0 to 3 answer for one key at the top
/// level; versions 4 and up in `coordinators`, one per key asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FindCoordinatorResponse {
    /// `ThrottleTimeMs` (INT32, v1+): milliseconds the request was throttled for a quota.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttle_time_ms: Option<i32>,
    /// `ErrorCode` (INT16, v0-3): 0 when the coordinator was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<i16>,
    /// Kafka's name for `error_code` (v0-3), null for a code missing from Kafka's table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Option<&'static str>>,
    /// `ErrorMessage` (NULLABLE_STRING, v1-3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<Option<String>>,
    /// `NodeId` (INT32, v0-3): the coordinator's broker id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_id: Option<i32>,
    /// `Host` (STRING, v0-3): the coordinator's host name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// `Port` (INT32, v0-3): the coordinator's port.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    /// `Coordinators` (v4+): the coordinator of each key asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coordinators: Option<Vec<Coordinator>>,
    /// Top-level tagged fields (v3+), none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// `Coordinators[]` of a v4+ response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Coordinator {
    /// `Key` (STRING): the key asked for.
    pub key: String,
    /// `NodeId` (INT32): the coordinator's broker id (-1 on error).
    pub node_id: i32,
    /// `Host` (STRING): the coordinator's host name.
    pub host: String,
    /// `Port` (INT32): the coordinator's port.
    pub port: i32,
    /// `ErrorCode` (INT16): 0 when the coordinator was found.
    pub error_code: i16,
    /// Kafka's name for `error_code`, null for a code missing from Kafka's table.
    pub error: Option<&'static str>,
    /// `ErrorMessage` (NULLABLE_STRING).
    pub error_message: Option<String>,
    /// Tagged fields of the entry, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
}

/// Decodes a whole request body of `version` (0 to 6; callers reject others). Bytes left over
/// are `trailing_bytes`; array elements and tagged fields count against `b`.
pub fn decode_request(
    body: &[u8],
    version: i16,
    b: &Budget,
) -> Result<FindCoordinatorRequest, DecodeError> {
    let flex = version >= 3;
    let parse = |i| -> PResult<'_, FindCoordinatorRequest> {
        let (i, key) = if version <= 3 {
            let (i, k) = string_field(b, "key", i, flex)?;
            (i, Some(k))
        } else {
            (i, None)
        };
        let (i, key_type) = if version >= 1 {
            let (i, t) = leaf(b, "key_type", i, int8)?;
            (i, Some(t))
        } else {
            (i, None)
        };
        let (i, coordinator_keys) = if version >= 4 {
            let (i, keys) = array_of(b, "coordinator_keys", i, flex, 1, |i| string(i, flex))?;
            (i, Some(keys))
        } else {
            (i, None)
        };
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        Ok((
            i,
            FindCoordinatorRequest {
                key,
                key_type,
                coordinator_keys,
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
) -> Result<FindCoordinatorResponse, DecodeError> {
    let flex = version >= 3;
    let parse = |i| -> PResult<'_, FindCoordinatorResponse> {
        let (i, throttle_time_ms) = if version >= 1 {
            let (i, t) = leaf(b, "throttle_time_ms", i, int32)?;
            (i, Some(t))
        } else {
            (i, None)
        };
        let mut r = FindCoordinatorResponse {
            throttle_time_ms,
            error_code: None,
            error: None,
            error_message: None,
            node_id: None,
            host: None,
            port: None,
            coordinators: None,
            unknown_tagged_fields: Vec::new(),
        };
        let i = if version <= 3 {
            let (i, code) =
                error_code_field(b, "error_code", i)?;
            let (i, message) = if version >= 1 {
                let (i, m) = nullable_string_field(b, "error_message", i, flex)?;
                (i, Some(m))
            } else {
                (i, None)
            };
            let (i, node_id) = leaf(b, "node_id", i, int32)?;
            let (i, host) = string_field(b, "host", i, flex)?;
            let (i, port) = leaf(b, "port", i, int32)?;
            r.error_code = Some(code);
            r.error = Some(ErrorCode(code).name());
            r.error_message = message;
            r.node_id = Some(node_id);
            r.host = Some(host);
            r.port = Some(port);
            i
        } else {
            // At least: key (1), node id (4), host (1), port (4), error (2), message (1), tags.
            let (i, coordinators) =
                array(b, "coordinators", "Coordinator", i, flex, 14, |i| coordinator(i, b))?;
            r.coordinators = Some(coordinators);
            i
        };
        let (i, unknown_tagged_fields) = tags(b, i, flex)?;
        r.unknown_tagged_fields = unknown_tagged_fields;
        Ok((i, r))
    };
    finish(parse(body))
}

fn coordinator<'a>(i: &'a [u8], b: &Budget) -> PResult<'a, Coordinator> {
    let (i, key) = string_field(b, "key", i, true)?;
    let (i, node_id) = leaf(b, "node_id", i, int32)?;
    let (i, host) = string_field(b, "host", i, true)?;
    let (i, port) = leaf(b, "port", i, int32)?;
    let (i, error_code) = error_code_field(b, "error_code", i)?;
    let (i, error_message) = nullable_string_field(b, "error_message", i, true)?;
    let (i, unknown_tagged_fields) = tags(b, i, true)?;
    Ok((
        i,
        Coordinator {
            key,
            node_id,
            host,
            port,
            error_code,
            error: ErrorCode(error_code).name(),
            error_message,
            unknown_tagged_fields,
        },
    ))
}
