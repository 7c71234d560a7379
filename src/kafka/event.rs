//! What the Kafka stage hands on: one [`Record`] per decoded Kafka message or anomaly, each
//! with its [`Location`] in the capture, pushed to a [`RecordOut`] as it completes.
//!
//! These are the pipeline's events. The output layer renders them (NDJSON, text, tree,
//! statistics) and never builds them; the stages below Kafka report only [`Anomaly`]s, which
//! the pipeline wraps in records.

use super::apis::Body;
use super::primitives::TaggedField;
use crate::vocab::{Anomaly, Location};
use serde::Serialize;

/// One output line.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Where it happened.
    pub loc: Location,
    /// What happened.
    pub event: Event,
}

impl Record {
    /// What holding this record in memory costs, in bytes, for the memory budget (an
    /// estimate: the record and its message as [`KafkaMessage::held_cost`] counts it, twelve
    /// times its frame's size for its decoded fields, the ratio of a 6-byte empty topic on the
    /// wire to its decoded struct, plus the frame's bytes when kept; for an anomaly, its
    /// strings).
    pub fn held_cost(&self) -> usize {
        let base = std::mem::size_of::<Record>() + 64;
        match &self.event {
            Event::Kafka(m) => base + m.held_cost(),
            Event::Unanswered(_, r) => base + r.held_cost(),
            Event::Anomaly(a) => {
                // Its strings: the message, the field path, and the undecodable bytes as hex
                // (up to 128 KiB).
                let strings = [Some(&a.message), a.field.as_ref(), a.data.as_ref()];
                base + strings
                    .into_iter()
                    .flatten()
                    .map(|s| crate::memory::alloc_cost(s.capacity()))
                    .sum::<usize>()
            }
        }
    }
}

impl KafkaMessage {
    /// Whether the body's fields can be taken as the sender meant them: not when bytes were
    /// left after the schema's last field (`trailing_bytes`: a damaged length reads so too,
    /// the fields after it read from the wrong bytes). The transaction view and `--stats`'
    /// marker and error counts take only such bodies.
    pub fn body_trusted(&self) -> bool {
        self.trailing_bytes.is_none()
    }

    /// What holding this message costs, as [`Record::held_cost`] counts it: its body at 12
    /// bytes per byte of frame decoded (the captured ones of a truncated message), or for the
    /// bodies walked as they streamed by (Produce requests, Fetch responses) what their
    /// vectors and strings hold; its header's client id and tagged fields, its field path,
    /// its kept frame bytes and packet numbers, and the request record it carries.
    pub fn held_cost(&self) -> usize {
        use crate::memory::{alloc_cost, string_cost, vec_cost};
        let body = match &self.body {
            // Walked as they streamed by: their bodies hold headers, not the frame's data.
            Body::ProduceRequest(b) => b.held_cost(),
            Body::FetchResponse(b) => b.held_cost(),
            _ => 12 * self.captured_bytes.unwrap_or(self.size) as usize,
        };
        let header = crate::memory::name_cost(self.client_id.as_ref().and_then(|c| c.as_deref()))
            + string_cost(self.truncated_field.as_ref())
            + vec_cost::<TaggedField>(self.unknown_tagged_fields.capacity())
            + self
                .unknown_tagged_fields
                .iter()
                .map(|t| alloc_cost(t.data.capacity()))
                .sum::<usize>();
        alloc_cost(std::mem::size_of::<KafkaMessage>())
            + body
            + header
            + self
                .frame_bytes
                .as_ref()
                .map_or(0, |f| alloc_cost(f.capacity()))
            + vec_cost::<u64>(self.packets.capacity())
            + self.request.as_ref().map_or(0, |r| r.held_cost())
    }
}

/// The `event_type` of a record and its payload.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `"kafka"`: a decoded WriteTxnMarkers message.
    Kafka(std::sync::Arc<KafkaMessage>),
    /// `"anomaly"`: something in the input that could not be decoded as expected.
    Anomaly(Box<Anomaly>),
    /// With `crate::Config::hold_requests`: a request record that got no response record (no
    /// response was captured, or it could not be decoded), as the correlator gives it up;
    /// the number orders such requests as their records were first written. Never written
    /// as a record itself: `--pair` turns it into an exchange without response.
    Unanswered(u64, Box<Record>),
}

/// Whether a Kafka message is a request or a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageKind {
    /// Client to broker.
    Request,
    /// Broker to client.
    Response,
}

/// The `kafka` object of a record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KafkaMessage {
    /// `"request"` or `"response"`.
    pub message: MessageKind,
    /// API key (27).
    pub api_key: i16,
    /// The API's name as Kafka spells it, e.g. `"WriteTxnMarkers"`.
    pub api_name: &'static str,
    /// API version: from the request header, or for a response from its request.
    pub api_version: i16,
    /// Request header version (0, 1, 2) or response header version (0, 1).
    pub header_version: u8,
    /// Correlation id from the header.
    pub correlation_id: i32,
    /// Requests only: the client id, `null` when null on the wire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<Option<crate::kafka::names::Name>>,
    /// Frame bytes after the 4-byte size prefix.
    pub size: u32,
    /// Responses paired by correlation id: the frame number of the request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_frame: Option<u64>,
    /// Responses paired by correlation id: microseconds from the request's packet to the
    /// response's packet; `None` also when the response's last bytes were never captured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_us: Option<i64>,
    /// `true` for a paired response whose packet is timestamped before its request's (the
    /// capture's clock went back): no `latency_us` is given, nor counted in `--stats`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub clock_went_back: bool,
    /// `true` for a paired response whose request was not decoded (bytes of it were lost, or
    /// it was malformed): `request_frame` then holds an anomaly, not a request record.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub request_not_decoded: bool,
    /// `true` for a response whose request was not captured, decoded because exactly one
    /// WriteTxnMarkers layout fits it whole; absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub inferred: bool,
    /// For an inferred response on a connection whose request direction lost bytes over a
    /// frame boundary before it: that loss, which took its request (the latest such gap
    /// before the response; absent at a capture's start, where the request was never
    /// captured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_lost: Option<RequestLost>,
    /// `true` for a message cut short (by the capture's snapshot length, or a gap inside its
    /// frame) and decoded in part: `body` then holds only the fields wholly captured, in wire
    /// order ([`crate::kafka::partial`]); absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// For a truncated message: how many bytes of its frame (after the size prefix, as
    /// `size`) were captured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub captured_bytes: Option<u32>,
    /// For a truncated message: the field path decoding stopped in, the first field not wholly
    /// captured (`markers[0].topics[0].name`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_field: Option<String>,
    /// Bytes after the last field of the version's schema (the sender wrote for another
    /// layout, or a damaged length made the fields after it read from the wrong
    /// bytes; a `trailing_bytes` anomaly of the same frame says so): `body` holds every field
    /// of the schema as the version reads them. The transaction view and `--stats`' marker
    /// and error counts leave such a message out. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trailing_bytes: Option<u32>,
    /// Header tagged fields, none of which Kafka defines.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_tagged_fields: Vec<TaggedField>,
    /// The decoded body.
    pub body: Body,
    /// The frame's bytes after the size prefix (not its number: that is the record's
    /// `loc.frame`), kept only when `Config::keep_frames` is set
    /// (`--format tree`); never serialised.
    #[serde(skip)]
    pub frame_bytes: Option<Vec<u8>>,
    /// With `crate::Config::write_pcap`: the frame numbers of the packets its frame's bytes
    /// came in and of its connection's handshake (SYN, SYN-ACK, ACK), each once; empty
    /// otherwise; never serialised.
    #[serde(skip)]
    pub packets: Vec<u64>,
    /// For a request given up without a response record (`Event::Unanswered`): why, for
    /// `--pair`'s `response_missing`; never serialised.
    #[serde(skip)]
    pub response_missing: Option<ResponseMissing>,
    /// For a response, with `crate::Config::hold_requests`: the record of the request it
    /// answers, as the correlator paired them; never serialised.
    #[serde(skip)]
    pub request: Option<Box<Record>>,
    /// For a request, with `crate::Config::hold_requests`: its record is held, and comes
    /// back with its response or as an `Event::Unanswered` (false past the correlator's bound,
    /// `crate::kafka::session::MAX_HELD_REQUESTS`); never serialised.
    #[serde(skip)]
    pub held: bool,
}

/// Why a request got no response record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseMissing {
    /// No response was seen: the connection ended, a later response passed it over, or it
    /// was forgotten for a bound.
    NoResponse,
    /// Its response began but bytes of it were lost (a gap, the snapshot length, the
    /// connection's end).
    Lost,
    /// Its response was captured but did not decode.
    NotDecoded,
}

impl ResponseMissing {
    /// As `--pair` writes it: `no_response`, `lost`, `not_decoded`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseMissing::NoResponse => "no_response",
            ResponseMissing::Lost => "lost",
            ResponseMissing::NotDecoded => "not_decoded",
        }
    }
}

/// A loss in the request direction that took requests whose responses were inferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RequestLost {
    /// Frame number of the packet at which the gap was reported.
    pub frame: u64,
    /// Bytes of the request direction missing in it.
    pub bytes: u64,
}

impl Record {
    /// Notes why this request record got no response record (see
    /// [`KafkaMessage::response_missing`]); nothing for other records.
    pub fn set_response_missing(&mut self, why: ResponseMissing) {
        if let Event::Kafka(m) = &mut self.event {
            std::sync::Arc::make_mut(m).response_missing = Some(why);
        }
    }
}

/// Where the stages put the records they make, as they make them.
pub trait RecordOut {
    /// Takes one record.
    fn push(&mut self, rec: Record);
}
