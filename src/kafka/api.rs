//! The Kafka API and error-code tables, and the header-version rules built on them.
//!
//! Input: an API key and version, or an error code, as read off the wire.
//! Output: the API's name, whether the version is valid, which request and response header
//! versions it uses (KIP-482 flexible versions, KIP-511 for ApiVersions), and error names.

use super::tables::{API_KEYS, ERROR_CODES};

/// The Kafka API key of WriteTxnMarkers (`WriteTxnMarkersRequest.json`, `"apiKey": 27`).
pub const WRITE_TXN_MARKERS: i16 = 27;
/// The Kafka API key of ApiVersions, whose response header is always v0 (KIP-511).
pub const API_VERSIONS: i16 = 18;
/// The Kafka API key of ControlledShutdown, whose v0 request used request header v0.
pub const CONTROLLED_SHUTDOWN: i16 = 7;

/// One row of the API key table: what Kafka calls the API and which versions exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiInfo {
    /// The API key (`request_api_key` in the request header).
    pub key: i16,
    /// The API's name as Kafka spells it, e.g. `"WriteTxnMarkers"`.
    pub name: &'static str,
    /// Lowest version any known Kafka release accepts.
    pub min_version: i16,
    /// Highest version any known Kafka release (or trunk, for KIP-1228) accepts.
    pub max_version: i16,
    /// First flexible version (KIP-482), or `None` when no version is flexible.
    pub first_flexible: Option<i16>,
}

impl ApiInfo {
    /// Whether `version` lies in this API's valid range.
    pub fn has_version(&self, version: i16) -> bool {
        (self.min_version..=self.max_version).contains(&version)
    }

    /// Whether `version` is flexible (compact strings and arrays, tagged fields).
    pub fn is_flexible(&self, version: i16) -> bool {
        matches!(self.first_flexible, Some(f) if version >= f)
    }
}

/// Looks up an API key; `None` for a key no Kafka release defines.
pub fn api_info(key: i16) -> Option<&'static ApiInfo> {
    API_KEYS
        .binary_search_by_key(&key, |a| a.key)
        .ok()
        .map(|i| &API_KEYS[i])
}

/// The API's name, or `None` for an unknown key.
pub fn api_name(key: i16) -> Option<&'static str> {
    api_info(key).map(|a| a.name)
}

/// The highest API key any known Kafka release defines.
pub const MAX_API_KEY: i16 = API_KEYS[API_KEYS.len() - 1].key;

/// Looks up an API by its name as Kafka spells it (case ignored, e.g. `"EndTxn"` or
/// `"endtxn"`) or by its key in decimal (e.g. `"26"`); `None` when neither names an API
/// Kafka defines.
pub fn api_by_name_or_key(text: &str) -> Option<&'static ApiInfo> {
    let text = text.trim();
    match text.parse::<i16>() {
        Ok(key) => api_info(key),
        Err(_) => API_KEYS.iter().find(|a| a.name.eq_ignore_ascii_case(text)),
    }
}

/// The request header version (0, 1 or 2) that `(key, version)` uses.
///
/// Flexible versions use header v2; others v1; ControlledShutdown v0 used v0 (no client id).
/// Unknown keys are taken as v1, the most common non-flexible layout.
pub fn request_header_version(key: i16, version: i16) -> u8 {
    if key == CONTROLLED_SHUTDOWN && version == 0 {
        return 0;
    }
    match api_info(key) {
        Some(info) if info.is_flexible(version) => 2,
        _ => 1,
    }
}

/// The response header version (0 or 1) that `(key, version)` uses.
///
/// Flexible versions use header v1, others v0, and ApiVersions always v0 (KIP-511).
pub fn response_header_version(key: i16, version: i16) -> u8 {
    if key == API_VERSIONS {
        return 0;
    }
    match api_info(key) {
        Some(info) if info.is_flexible(version) => 1,
        _ => 0,
    }
}

/// A Kafka error code (`ErrorCode int16` on the wire), kept as its integer so that codes
/// unknown to this table still decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode(pub i16);

impl ErrorCode {
    /// Kafka's name for the code (`"NONE"`, `"NOT_LEADER_OR_FOLLOWER"`, ...), or `None` when the
    /// code is not in Kafka's table (`kafka-error-codes.tsv`).
    pub fn name(self) -> Option<&'static str> {
        ERROR_CODES
            .binary_search_by_key(&self.0, |e| e.0)
            .ok()
            .map(|i| ERROR_CODES[i].1)
    }

    /// The code with its name, `6 (NOT_LEADER_OR_FOLLOWER)`, or the number alone for a code
    /// Kafka's table lacks (the field tree's text).
    pub fn text(self) -> String {
        match self.name() {
            Some(name) => format!("{} ({name})", self.0),
            None => self.0.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_txn_markers_versions_and_headers() {
        let info = api_info(27).expect("key 27");
        assert_eq!(info.name, "WriteTxnMarkers");
        assert_eq!((info.min_version, info.max_version), (0, 2));
        assert_eq!(request_header_version(27, 0), 1);
        assert_eq!(request_header_version(27, 1), 2);
        assert_eq!(request_header_version(27, 2), 2);
        assert_eq!(response_header_version(27, 0), 0);
        assert_eq!(response_header_version(27, 1), 1);
    }

    #[test]
    fn header_exceptions() {
        assert_eq!(request_header_version(7, 0), 0);
        assert_eq!(request_header_version(7, 1), 1);
        assert_eq!(request_header_version(7, 3), 2);
        assert_eq!(response_header_version(18, 3), 0);
        assert_eq!(request_header_version(18, 3), 2);
        assert_eq!(request_header_version(0, 8), 1);
        assert_eq!(request_header_version(0, 9), 2);
        assert_eq!(request_header_version(17, 1), 1); // SaslHandshake: never flexible
        assert_eq!(api_info(88).map(|a| a.name), Some("StreamsGroupHeartbeat")); // KIP-1071
        assert_eq!(api_info(93), None);
        assert_eq!(api_name(92), Some("DeleteShareGroupOffsets"));
    }

    #[test]
    fn error_names() {
        assert_eq!(ErrorCode(0).name(), Some("NONE"));
        assert_eq!(ErrorCode(6).name(), Some("NOT_LEADER_OR_FOLLOWER"));
        assert_eq!(ErrorCode(-1).name(), Some("UNKNOWN_SERVER_ERROR"));
        assert_eq!(ErrorCode(52).name(), Some("TRANSACTION_COORDINATOR_FENCED"));
        assert_eq!(ErrorCode(9999).name(), None);
    }
}
