//! The table of Kafka API body decoders: one file per API, one line per API in
//! the `decoders!` invocation below.
//!
//! Input: an API key (from a request header, or for a response from its paired request).
//! Output: the [`Decoder`] for it, if the tool decodes that API: its versions, whether its
//! messages are written without `--all-apis`, its request and response body decoders (nom,
//! returning a [`Body`]), and optionally response inference.
//!
//! The session (`super::session`) asks this table and never names an API: which frames are
//! kept whole and decoded, which lost or unanswered requests are worth an anomaly, which
//! layouts a response without its request may be inferred as.
//!
//! # A decoder file
//! A module `foo` listed here as `KEY => foo(FooRequest, FooResponse)` provides:
//! - `pub const VERSIONS: RangeInclusive<i16>`: the versions it decodes (Kafka's
//!   `validVersions`); other versions become `unsupported_api_version`;
//! - `pub const SHOWN_BY_DEFAULT: bool`: whether its messages are records without `--all-apis`
//!   (and so whether its lost frames and unanswered requests are reported as anomalies);
//! - `pub fn decode_request(body: &[u8], version: i16, b: &Budget) -> Result<FooRequest,
//!   DecodeError>` and `decode_response(...) -> Result<FooResponse, DecodeError>`: the body
//!   after the header, whole (left-over bytes are `trailing_bytes`);
//! - `pub const INFER: Option<InferFn<FooResponse>>`: how to decode a response whose request was
//!   not captured, or `None`;
//! - for a line marked `walks(request)` (or `walks(response)`): `pub fn walk_request(version:
//!   i16, len: u64) -> Box<dyn BodyWalk>` (or `walk_response`), a streaming decode of that side
//!   (see [`super::walk`]) that the session feeds as the bytes arrive instead of keeping the
//!   frame; its `decode_request` (`decode_response`) runs the same walk over a whole body;
//! - for a line marked `checks(answers)`: `pub fn asked(q: &FooRequest) -> Answers` and `pub fn
//!   answered(r: &FooResponse) -> Answers`, what a request asks its response to answer item
//!   by item and what a response answers ([`Answers`]): a response that differs from its
//!   request is a `response_mismatch` anomaly, worded by `pub const ANSWERS_TEXT:
//!   AnswersText`.
//!
//! `FooRequest` and `FooResponse` are its serde types: their JSON is the record's `body`. The
//! decoders read every field with the traced primitives of [`super::primitives`] (`leaf`,
//! `string_field`, `array`, `tags`), so that the `--format tree` view of every decoded API
//! comes from the decoder itself ([`super::tree`]).

use super::header::ResponseHeader;
use super::primitives::{Budget, DecodeError};
use serde::Serialize;
use std::ops::RangeInclusive;

/// A response decoded without its request: the version and header layout that fit, and the
/// body.
#[derive(Debug, Clone, PartialEq)]
pub struct Inferred<R> {
    /// The API version the response was decoded as.
    pub version: i16,
    /// Its response header.
    pub header: ResponseHeader,
    /// Its body.
    pub body: R,
    /// The fewest bytes (size prefix included) that the request it answers can have had,
    /// from what the response names: a loss of fewer bytes cannot have taken that request.
    pub min_request_len: u64,
}

/// What a request asks its response to answer, or what a response answers, as a set of items
/// in groups (for WriteTxnMarkers: (producer id, topic, partition), grouped by producer id),
/// each counted once whatever the order or repetition: a response answers what its request
/// asked when the two are equal ([`Decoder::answers`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answers {
    /// Distinct groups named (with items or without).
    pub groups: u32,
    /// Distinct items named.
    pub items: u32,
    /// A hash of the sets of groups and items: the wrapping sum of each distinct one's hash,
    /// keyed by a number drawn once a run (so that no capture can be made whose other
    /// answers sum alike).
    hash: u64,
}

/// splitmix64's finaliser: every bit of `x` moves every bit of the result.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The run's key of [`Answers`] hashes, drawn at its first use.
fn answers_key() -> u64 {
    static KEY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *KEY.get_or_init(|| {
        use std::hash::BuildHasher;
        std::collections::hash_map::RandomState::new().hash_one(0x006b_6166_6b61_u64)
    })
}

impl Answers {
    /// The answers of `groups` (each group named, producer ids say) and `items`, each given
    /// as `(group, hash of the item)` ([`Answers::item`]). Sorts the items' keyed hashes and
    /// the groups: its cost is the message's own size.
    pub fn of(groups: impl Iterator<Item = i64>, items: impl Iterator<Item = (i64, u64)>) -> Self {
        let key = answers_key();
        let mut hashes: Vec<u64> = items.map(|(g, h)| mix(h ^ mix(g as u64 ^ key))).collect();
        hashes.sort_unstable();
        hashes.dedup();
        let mut groups: Vec<i64> = groups.collect();
        groups.sort_unstable();
        groups.dedup();
        let group_key = mix(key ^ 0x9e37_79b9_7f4a_7c15);
        let hash = hashes
            .iter()
            .copied()
            .chain(groups.iter().map(|&g| mix(g as u64 ^ group_key)))
            .fold(0u64, u64::wrapping_add);
        Answers {
            groups: u32::try_from(groups.len()).unwrap_or(u32::MAX),
            items: u32::try_from(hashes.len()).unwrap_or(u32::MAX),
            hash,
        }
    }

    /// The hash of an item named by `name` and `index` (a topic and a partition): FNV-1a of
    /// the name, a separator and the index's four bytes, mixed (FNV's low bits follow the
    /// bytes' low bits alone), every bit of it usable. Not keyed: the same in every run.
    pub fn item(name: &str, index: i32) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes().chain([0xff]).chain(index.to_le_bytes()) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        mix(h)
    }
}

/// Tries every layout an API's response may have against `frame` (the bytes after the size
/// prefix, header included), given the versions of that API's requests seen on the connection
/// (bit `v` for version `v`), and returns each layout that decodes it.
pub type InferFn<R> = fn(frame: &[u8], versions_seen: u32) -> Vec<Inferred<R>>;

/// A streaming decode of one frame's body, for the APIs whose messages carry record batches
/// (see [`super::walk`]): fed the body's bytes as they arrive, it holds only the structure it
/// has read, never the batches.
pub trait BodyWalk: Send {
    /// Feeds the next bytes of the body (the header excluded).
    fn feed(&mut self, data: &[u8]);
    /// Bytes it holds now (for the memory budget).
    fn cost(&self) -> usize;
    /// Ends the walk once the whole body was fed: the body, with the `trailing_bytes` error
    /// when bytes followed its structure (passed over) and the first damage passed over inside
    /// it ([`super::walk::Machine::take_damage`]: a record batch whose length is no batch's,
    /// the rest of its records field not read); or the first error.
    fn finish(self: Box<Self>) -> Result<Finished, DecodeError>;
    /// Ends a walk whose bytes stopped short of the body's end (issue 14's partial decoding):
    /// the body of the fields read wholly from the bytes fed (an empty [`Body::Partial`] when
    /// not even its top-level fields were), and the field path the bytes stopped in; `None`
    /// when the bytes fed were already not a body of this API (a decode error before the cut).
    fn cut(self: Box<Self>) -> Option<(Body, String)>;
}

/// A walk's end ([`BodyWalk::finish`]): the body, bytes after its structure
/// (`trailing_bytes`), and the first damage passed over inside it.
#[derive(Debug)]
pub struct Finished {
    /// The record's body.
    pub body: Body,
    /// The `trailing_bytes` error, when bytes followed the body's structure.
    pub trailing: Option<DecodeError>,
    /// The first damage passed over inside the body (the rest of a records field).
    pub damage: Option<DecodeError>,
}

/// A [`super::walk::Walker`] as a [`BodyWalk`]: `body` turns the finished machine into the
/// record's body.
struct Walked<M> {
    walker: super::walk::Walker<M>,
    body: fn(M) -> Body,
}

impl<M: super::walk::Machine + Send> BodyWalk for Walked<M> {
    fn feed(&mut self, data: &[u8]) {
        self.walker.feed(data)
    }
    fn cost(&self) -> usize {
        self.walker.cost()
    }
    fn finish(self: Box<Self>) -> Result<Finished, DecodeError> {
        let body = self.body;
        self.walker.finish().map(|(mut m, trailing)| Finished {
            damage: m.take_damage(),
            body: body(m),
            trailing,
        })
    }
    fn cut(self: Box<Self>) -> Option<(Body, String)> {
        let make = self.body;
        let (m, path) = self.walker.cut().ok()?;
        let path =
            DecodeError::with_path(super::primitives::DecodeErrorKind::TruncatedBody, 0, &path)
                .path_or_kind();
        let body = if m.started() {
            make(m)
        } else {
            Body::Partial(Default::default())
        };
        Some((body, path))
    }
}

/// Starts walking a body of `len` bytes with machine `m`; `body` makes the record's body of it.
pub fn walked<M: super::walk::Machine + Send + 'static>(
    m: M,
    len: u64,
    body: fn(M) -> Body,
) -> Box<dyn BodyWalk> {
    Box::new(Walked {
        walker: super::walk::Walker::new(m, len),
        body,
    })
}

/// Starts a [`BodyWalk`] of a body of `len` bytes at an API version.
pub type WalkFn = fn(version: i16, len: u64) -> Box<dyn BodyWalk>;

/// One line of the table: what the session needs to know of a decoded API.
#[derive(Debug, Clone)]
pub struct Decoder {
    /// The API key.
    pub api_key: i16,
    /// The versions decoded.
    pub versions: RangeInclusive<i16>,
    /// Its messages are records without `--all-apis`, and its losses anomalies.
    pub shown_by_default: bool,
    /// Decodes a request body of a version in `versions`.
    pub decode_request: fn(&[u8], i16, &Budget) -> Result<Body, DecodeError>,
    /// Decodes a response body of a version in `versions`.
    pub decode_response: fn(&[u8], i16, &Budget) -> Result<Body, DecodeError>,
    /// Response inference, when the API supports it.
    pub infer: Option<InferFn<Body>>,
    /// For an API whose requests carry record batches (Produce): a streaming walk of a request
    /// body, used instead of keeping the frame whole.
    pub walk_request: Option<WalkFn>,
    /// For an API whose responses carry record batches (Fetch): the same for a response.
    pub walk_response: Option<WalkFn>,
    /// For an API whose response answers its request item by item (WriteTxnMarkers: each
    /// partition of each marker): the session says `response_mismatch` when a decoded
    /// response answers otherwise than its decoded request asked.
    pub answers: Option<AnswersCheck>,
}

/// How the responses of an API are checked against their requests ([`Decoder::answers`]).
#[derive(Debug, Clone, Copy)]
pub struct AnswersCheck {
    /// What a decoded request asks or a decoded response answers (`None` for another body).
    pub of: fn(&Body) -> Option<Answers>,
    /// The words of its anomaly.
    pub text: &'static AnswersText,
}

/// The words of a `response_mismatch` anomaly of an API (a decoder file's `ANSWERS_TEXT`).
#[derive(Debug)]
pub struct AnswersText {
    /// An item, singular ("partition").
    pub item: &'static str,
    /// A group, singular ("producer id").
    pub group: &'static str,
    /// What a mismatch does, a sentence without its full stop.
    pub consequence: &'static str,
}

impl Decoder {
    /// Whether messages of this API at `version` are kept whole and decoded in a run that
    /// writes the APIs of `selection`: only when the API is selected; then always when it is
    /// shown by default (a version the decoder does not know is an `unsupported_api_version`
    /// anomaly), and otherwise when the decoder knows the version (else the message gets the
    /// header-only record of an API that is not decoded).
    pub fn keeps(&self, selection: &ApiSelection, version: i16) -> bool {
        selection.selected(self.api_key)
            && (self.shown_by_default || self.versions.contains(&version))
    }
}

/// Which APIs a run writes records for: by default those whose decoder is
/// [`Decoder::shown_by_default`] (WriteTxnMarkers); with `--api NAME|KEY` exactly those named;
/// with `--all-apis` every API, known or not. A set of API keys 0-255 plus "every other key".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiSelection {
    /// Bit `k` of word `k / 64` set: API key `k` (0-255) is selected.
    bits: [u64; 4],
    /// Keys outside 0-255 (which no Kafka release defines) are selected too.
    all: bool,
}

impl Default for ApiSelection {
    /// The default selection: the APIs shown by default.
    fn default() -> Self {
        ApiSelection::new(false, &[])
    }
}

impl ApiSelection {
    /// The selection of a run: every API with `all_apis` (`--all-apis`); else the keys of
    /// `apis` (`--api`, repeatable) when any is given; else the APIs shown by default.
    pub fn new(all_apis: bool, apis: &[i16]) -> Self {
        let mut s = ApiSelection {
            bits: [0; 4],
            all: all_apis,
        };
        if all_apis {
            s.bits = [u64::MAX; 4];
        } else if apis.is_empty() {
            for d in all().filter(|d| d.shown_by_default) {
                s.set(d.api_key);
            }
        } else {
            for &k in apis {
                s.set(k);
            }
        }
        s
    }

    fn set(&mut self, key: i16) {
        if let Ok(k @ 0..=255) = u8::try_from(key) {
            self.bits[usize::from(k / 64)] |= 1 << (k % 64);
        }
    }

    /// Whether records of `api_key` are written (and its messages decoded where a decoder
    /// knows them).
    #[inline]
    pub fn selected(&self, api_key: i16) -> bool {
        match u8::try_from(api_key) {
            Ok(k) => self.bits[usize::from(k / 64)] & (1 << (k % 64)) != 0,
            Err(_) => self.all,
        }
    }

    /// Whether this is the default selection (no `--api`, no `--all-apis`).
    pub fn is_default(&self) -> bool {
        *self == ApiSelection::default()
    }
}

/// The `walk_request` / `walk_response` of a table line: `Some` for the side named by the
/// line's `walks(...)`.
macro_rules! walk_fn {
    (request, $module:ident, request) => {
        Some($module::walk_request as WalkFn)
    };
    (response, $module:ident, response) => {
        Some($module::walk_response as WalkFn)
    };
    ($side:ident, $module:ident $(, $walks:ident)?) => {
        None
    };
}

/// The `answers` of a table line: `Some` for a line marked `checks(answers)`.
macro_rules! answers_fn {
    ($module:ident, $req:ident, $resp:ident, answers) => {
        Some(AnswersCheck {
            of: |b: &Body| match b {
                Body::$req(q) => Some($module::asked(q)),
                Body::$resp(r) => Some($module::answered(r)),
                _ => None,
            },
            text: &$module::ANSWERS_TEXT,
        })
    };
    ($module:ident, $req:ident, $resp:ident $(, $checks:ident)?) => {
        None
    };
}

/// Declares the table: each line `KEY => module(RequestType, ResponseType)` declares the module,
/// two [`Body`] variants named after the types, and the [`Decoder`] built from the module's
/// items (see the module documentation for what a decoder file provides). A line ending in
/// `walks(request)` or `walks(response)` says that side carries record batches and is walked as
/// it streams by (`module::walk_request` or `module::walk_response`); one marked
/// `checks(answers)`, that its response answers its request item by item (`module::asked`,
/// `module::answered`, `module::ANSWERS_TEXT`).
macro_rules! decoders {
    ($($key:literal => $module:ident($req:ident, $resp:ident) $(walks($walks:ident))? $(checks($checks:ident))?),* $(,)?) => {
        $(pub mod $module;)*

        /// A decoded body, serialised without a tag (its shape and the record's `api_key` and
        /// `message` tell which it is).
        #[derive(Debug, Clone, PartialEq, Serialize)]
        #[serde(untagged)]
        pub enum Body {
            $(
                #[doc = concat!("A `", stringify!($req), "` body (`", stringify!($module), "`).")]
                $req($module::$req),
                #[doc = concat!("A `", stringify!($resp), "` body (`", stringify!($module), "`).")]
                $resp($module::$resp),
            )*
            /// The fields of a frame cut short that were captured (the record says
            /// `"truncated": true`), see [`crate::kafka::partial`].
            Partial(crate::kafka::partial::PartialBody),
            /// An API this tool does not decode (`--all-apis`): `null` in JSON.
            NotDecoded,
        }

        /// The decoder of `api_key`, or `None` for an API that is only framed.
        pub fn decoder(api_key: i16) -> Option<&'static Decoder> {
            match api_key {
                $($key => {
                    static DECODER: Decoder = Decoder {
                        api_key: $key,
                        versions: $module::VERSIONS,
                        shown_by_default: $module::SHOWN_BY_DEFAULT,
                        decode_request: |b, v, budget| {
                            $module::decode_request(b, v, budget).map(Body::$req)
                        },
                        decode_response: |b, v, budget| {
                            $module::decode_response(b, v, budget).map(Body::$resp)
                        },
                        infer: match $module::INFER {
                            Some(_) => Some(|frame, seen| match $module::INFER {
                                Some(f) => f(frame, seen)
                                    .into_iter()
                                    .map(|i| Inferred {
                                        version: i.version,
                                        header: i.header,
                                        body: Body::$resp(i.body),
                                        min_request_len: i.min_request_len,
                                    })
                                    .collect(),
                                None => Vec::new(),
                            }),
                            None => None,
                        },
                        walk_request: walk_fn!(request, $module $(, $walks)?),
                        walk_response: walk_fn!(response, $module $(, $walks)?),
                        answers: answers_fn!($module, $req, $resp $(, $checks)?),
                    };
                    Some(&DECODER)
                })*
                _ => None,
            }
        }

        /// The API keys of the table, in its order.
        pub const KEYS: &[i16] = &[$($key),*];
    };
}

decoders! {
    0 => produce(ProduceRequest, ProduceResponse) walks(request),
    1 => fetch(FetchRequest, FetchResponse) walks(response),
    3 => metadata(MetadataRequest, MetadataResponse),
    10 => find_coordinator(FindCoordinatorRequest, FindCoordinatorResponse),
    22 => init_producer_id(InitProducerIdRequest, InitProducerIdResponse),
    24 => add_partitions_to_txn(AddPartitionsToTxnRequest, AddPartitionsToTxnResponse),
    25 => add_offsets_to_txn(AddOffsetsToTxnRequest, AddOffsetsToTxnResponse),
    26 => end_txn(EndTxnRequest, EndTxnResponse),
    27 => write_txn_markers(WriteTxnMarkersRequest, WriteTxnMarkersResponse) checks(answers),
    28 => txn_offset_commit(TxnOffsetCommitRequest, TxnOffsetCommitResponse),
    61 => describe_producers(DescribeProducersRequest, DescribeProducersResponse),
    65 => describe_transactions(DescribeTransactionsRequest, DescribeTransactionsResponse),
    66 => list_transactions(ListTransactionsRequest, ListTransactionsResponse),
}

/// Every decoder, in the table's order.
pub fn all() -> impl Iterator<Item = &'static Decoder> {
    KEYS.iter().filter_map(|&k| decoder(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::api::api_info;

    #[test]
    fn table_lines_agree_with_kafka_api_table() {
        for &key in KEYS {
            let d = decoder(key).expect("every key of the table has a decoder");
            assert_eq!(d.api_key, key);
            let info = api_info(key).expect("a decoded API is in Kafka's API table");
            assert!(info.has_version(*d.versions.start()), "{}", info.name);
            assert!(info.has_version(*d.versions.end()), "{}", info.name);
        }
        let mut keys = KEYS.to_vec();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), KEYS.len(), "one line per API");
        assert!(decoder(2).is_none(), "ListOffsets is only framed");
        assert!(decoder(0).is_some_and(|d| d.walk_request.is_some() && d.walk_response.is_none()));
        assert!(decoder(1).is_some_and(|d| d.walk_request.is_none() && d.walk_response.is_some()));
        assert!(decoder(27).is_some_and(|d| d.walk_request.is_none() && d.walk_response.is_none()));
        assert_eq!(all().count(), KEYS.len());
    }

    #[test]
    fn what_is_shown_and_inferred() {
        let wtm = decoder(27).unwrap();
        assert!(wtm.shown_by_default && wtm.infer.is_some());
        assert_eq!(wtm.versions, 0..=2);
        let end_txn = decoder(26).unwrap();
        assert!(!end_txn.shown_by_default && end_txn.infer.is_none());
        let (all, default) = (ApiSelection::new(true, &[]), ApiSelection::default());
        assert!(end_txn.keeps(&all, 5) && !end_txn.keeps(&default, 5) && !end_txn.keeps(&all, 6));
        assert!(wtm.keeps(&default, 3) && wtm.keeps(&all, 3));
        // --api EndTxn: EndTxn decoded, WriteTxnMarkers not.
        let only = ApiSelection::new(false, &[26]);
        assert!(end_txn.keeps(&only, 5) && !wtm.keeps(&only, 1));
        assert_eq!(end_txn.versions, 0..=5);
    }

    #[test]
    fn selections() {
        let default = ApiSelection::default();
        assert!(default.selected(27) && !default.selected(26) && !default.selected(0));
        assert!(!default.selected(-1) && !default.selected(300) && default.is_default());
        let all = ApiSelection::new(true, &[26]);
        assert!(all.selected(0) && all.selected(255) && all.selected(-1) && all.selected(1000));
        let some = ApiSelection::new(false, &[26, 27, 0, 255, 64, -5]);
        for k in [26, 27, 0, 255, 64] {
            assert!(some.selected(k), "{k}");
        }
        for k in [1, 25, 28, 63, 65, 254, -5, 256] {
            assert!(!some.selected(k), "{k}");
        }
        assert!(!some.is_default() && ApiSelection::new(false, &[27]).is_default());
    }

    #[test]
    fn decoders_wrap_bodies() {
        // EndTxn v0 request: transactional_id "t", producer_id 7, epoch 1, committed true.
        let body = [0, 1, b't', 0, 0, 0, 0, 0, 0, 0, 7, 0, 1, 1];
        let d = decoder(26).unwrap();
        match (d.decode_request)(&body, 0, &Budget::default()) {
            Ok(Body::EndTxnRequest(r)) => {
                assert_eq!((r.transactional_id.as_str(), r.producer_id), ("t", 7));
                assert_eq!((r.producer_epoch, r.committed), (1, true));
            }
            other => panic!("{other:?}"),
        }
    }
}
