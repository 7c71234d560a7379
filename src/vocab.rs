//! The shared vocabulary at the bottom of the pipeline: where in a capture something happened
//! ([`Timestamp`], [`Endpoint`], [`Location`]) and what went wrong there ([`Anomaly`], of a
//! closed set of [`AnomalyKind`]s, found in a [`Layer`]).
//!
//! Every stage uses these types and none of them depends on a stage: capture, packet, flow,
//! kafka and output all import from here, never from each other upwards. Timestamps follow the
//! capture's own resolution (pcap: microseconds or nanoseconds; pcapng: `if_tsresol`); frame
//! numbers are 1-based and TCP stream indexes 0-based, as Wireshark numbers them.

use serde::{Serialize, Serializer};
use std::net::IpAddr;

/// A packet timestamp: seconds and nanoseconds since the Unix epoch (UTC), and the number of
/// fractional digits the capture recorded (6 for microsecond captures, 9 for nanosecond ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Timestamp {
    /// Whole seconds since 1970-01-01T00:00:00Z.
    pub secs: i64,
    /// Nanoseconds within the second, `0..1_000_000_000`.
    pub nanos: u32,
    /// Fractional digits to print: 6 or 9.
    pub digits: u8,
}

impl Timestamp {
    /// Nanoseconds since the epoch.
    pub fn as_nanos(&self) -> i128 {
        i128::from(self.secs) * 1_000_000_000 + i128::from(self.nanos)
    }

    /// Whole microseconds from `earlier` to `self` (negative when `self` is earlier), saturated.
    pub fn micros_since(&self, earlier: &Timestamp) -> i64 {
        let d = (self.as_nanos() - earlier.as_nanos()) / 1000;
        d.clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// RFC 3339 in UTC with 6 or 9 fractional digits, e.g. `2026-11-29T21:09:15.123456Z`.
    pub fn to_rfc3339(&self) -> String {
        self.rfc3339().as_str().to_string()
    }

    /// The text of [`Timestamp::to_rfc3339`] without allocating (each record's `ts` is
    /// written this way): the calendar fields from chrono, the digits written here. Times
    /// outside the years 0000 to 9999 are written as [`Timestamp::clamped`]; microseconds are
    /// the nanoseconds truncated, as chrono's `SecondsFormat::Micros` has them.
    pub fn rfc3339(&self) -> Rfc3339 {
        use chrono::{DateTime, Datelike, Timelike};
        let t = self.clamped();
        let nanos = t.nanos.min(999_999_999);
        let mut out = Rfc3339 {
            buf: *b"0000-01-01T00:00:00.000000000Z",
            len: 27,
        };
        // Unreachable once clamped: the years 0000 to 9999 are all chrono's.
        let Some(dt) = DateTime::from_timestamp(t.secs, nanos) else {
            out.buf[26] = b'Z';
            return out;
        };
        let d = dt.naive_utc();
        let mut put = |at: usize, width: usize, mut v: u32| {
            for i in (at..at + width).rev() {
                out.buf[i] = b'0' + (v % 10) as u8;
                v /= 10;
            }
        };
        put(0, 4, d.year().clamp(0, 9999) as u32);
        put(5, 2, d.month());
        put(8, 2, d.day());
        put(11, 2, d.hour());
        put(14, 2, d.minute());
        put(17, 2, d.second());
        if self.digits >= 9 {
            put(20, 9, nanos);
            out.len = 30;
        } else {
            put(20, 6, nanos / 1000);
            out.buf[26] = b'Z';
        }
        out
    }

    /// Seconds of 0000-01-01T00:00:00Z, the earliest time RFC 3339 can write.
    pub const MIN_SECS: i64 = -62_167_219_200;
    /// Seconds of 9999-12-31T23:59:59Z, the latest second RFC 3339 can write.
    pub const MAX_SECS: i64 = 253_402_300_799;

    /// Whether the time lies in the years 0000 to 9999, which RFC 3339 can write.
    pub fn in_range(&self) -> bool {
        (Self::MIN_SECS..=Self::MAX_SECS).contains(&self.secs)
    }

    /// The nearest time in the years 0000 to 9999 (itself when [`Timestamp::in_range`]).
    pub fn clamped(&self) -> Timestamp {
        if self.secs < Self::MIN_SECS {
            Timestamp {
                secs: Self::MIN_SECS,
                nanos: 0,
                ..*self
            }
        } else if self.secs > Self::MAX_SECS {
            Timestamp {
                secs: Self::MAX_SECS,
                nanos: 999_999_999,
                ..*self
            }
        } else {
            *self
        }
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.rfc3339().as_str())
    }
}

/// A time's RFC 3339 text ([`Timestamp::rfc3339`]), held without allocating:
/// `YYYY-MM-DDTHH:MM:SS.ffffffZ` (27 bytes) or with 9 fractional digits (30 bytes).
#[derive(Debug, Clone, Copy)]
pub struct Rfc3339 {
    buf: [u8; 30],
    len: usize,
}

impl Rfc3339 {
    /// The text.
    pub fn as_str(&self) -> &str {
        // ASCII digits and separators only.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }
}

/// One endpoint of a TCP connection (JSON: `{"ip": "10.0.0.1", "port": 9092}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Endpoint {
    /// IPv4 or IPv6 address.
    pub ip: IpAddr,
    /// TCP port.
    pub port: u16,
}

/// Which way bytes travel on a TCP connection, named from the connection's first packet
/// captured: [`Direction::Forward`] from its sender to its receiver, [`Direction::Back`] the
/// other way. Per-direction state is a `[T; 2]` indexed by [`Direction::index`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the sender of the connection's first captured packet.
    Forward,
    /// Towards the sender of the connection's first captured packet.
    Back,
}

impl Direction {
    /// Both directions, `Forward` first.
    pub const BOTH: [Direction; 2] = [Direction::Forward, Direction::Back];

    /// 0 for `Forward`, 1 for `Back`: the index of this direction's entry in a `[T; 2]`.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The opposite direction.
    #[inline]
    pub fn other(self) -> Direction {
        match self {
            Direction::Forward => Direction::Back,
            Direction::Back => Direction::Forward,
        }
    }
}

/// The kind of one encapsulation layer a packet was found inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TunnelKind {
    /// VXLAN (RFC 7348) over UDP: `id` is the VNI.
    Vxlan,
    /// Geneve (RFC 8926) over UDP: `id` is the VNI.
    Geneve,
    /// GRE (RFC 2784, keys and sequence numbers of RFC 2890): `id` is the key, when present.
    Gre,
    /// ERSPAN type I (GRE protocol 0x88BE without a sequence number): no header of its own.
    Erspan1,
    /// ERSPAN type II (draft-foschiano-erspan, GRE protocol 0x88BE): `id` is the session id.
    Erspan2,
    /// ERSPAN type III (GRE protocol 0x22EB): `id` is the session id.
    Erspan3,
    /// An IPv4 or IPv6 packet carried directly in IPv4 or IPv6 (IP protocol 4 or 41: IP-in-IP,
    /// 6in4, 4in6, IPv6-in-IPv6; RFC 2003, RFC 4213, RFC 2473).
    IpInIp,
    /// An MPLS label stack (RFC 3032): `id` is the bottom label, `depth` the labels.
    Mpls,
    /// A PPPoE session (RFC 2516): `id` is the session id.
    Pppoe,
}

impl TunnelKind {
    /// The name records give a layer's `id` of this kind: `vni` (VXLAN, Geneve), `key` (GRE),
    /// `label` (MPLS), `session_id` (ERSPAN, PPPoE).
    pub fn id_name(self) -> &'static str {
        match self {
            TunnelKind::Vxlan | TunnelKind::Geneve => "vni",
            TunnelKind::Gre => "key",
            TunnelKind::Mpls => "label",
            _ => "session_id",
        }
    }

    /// The name records give it (`vxlan`, `geneve`, `gre`, `erspan_1`, `erspan_2`,
    /// `erspan_3`, `ip_in_ip`, `mpls`, `pppoe`).
    pub fn as_str(self) -> &'static str {
        match self {
            TunnelKind::Vxlan => "vxlan",
            TunnelKind::Geneve => "geneve",
            TunnelKind::Gre => "gre",
            TunnelKind::Erspan1 => "erspan_1",
            TunnelKind::Erspan2 => "erspan_2",
            TunnelKind::Erspan3 => "erspan_3",
            TunnelKind::IpInIp => "ip_in_ip",
            TunnelKind::Mpls => "mpls",
            TunnelKind::Pppoe => "pppoe",
        }
    }
}

/// One layer of encapsulation a packet was found inside, outermost first in a stack. Two
/// connections with the same inner endpoints inside different tunnels (another VNI, key or
/// session, or other outer addresses) are different connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TunnelLayer {
    /// What kind of encapsulation.
    pub kind: TunnelKind,
    /// The outer IP header's source and destination, for layers carried over IP (VXLAN,
    /// Geneve, GRE, IP-in-IP); `None` for MPLS, PPPoE and ERSPAN (whose GRE layer has them).
    pub outer: Option<(IpAddr, IpAddr)>,
    /// The layer's identifier: VXLAN or Geneve VNI (24 bits), GRE key, ERSPAN session id
    /// (10 bits), MPLS bottom label (20 bits), PPPoE session id; `None` where it has none.
    pub id: Option<u32>,
    /// MPLS: the number of labels in the stack; 0 otherwise.
    pub depth: u8,
}

impl Serialize for TunnelLayer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("type", self.kind.as_str())?;
        if let Some((src, dst)) = self.outer {
            m.serialize_entry("outer_src_ip", &src)?;
            m.serialize_entry("outer_dest_ip", &dst)?;
        }
        if let Some(id) = self.id {
            m.serialize_entry(self.kind.id_name(), &id)?;
        }
        if self.kind == TunnelKind::Mpls {
            m.serialize_entry("labels", &self.depth)?;
        }
        m.end()
    }
}

/// The encapsulation a packet was found inside, outermost layer first: a handle to its
/// description, interned once for the whole process (so that a [`Location`] stays small and
/// `Copy`, and -j's captures share the descriptions). At most [`Tunnel::MAX`] descriptions
/// are ever interned; past them [`Tunnel::intern`] gives `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tunnel(u32);

/// The interned tunnel descriptions of the process: each description once, and its index.
#[derive(Default)]
struct Tunnels {
    list: Vec<std::sync::Arc<[TunnelLayer]>>,
    index: std::collections::HashMap<Vec<TunnelLayer>, u32>,
}

fn tunnels() -> &'static std::sync::Mutex<Tunnels> {
    static TUNNELS: std::sync::OnceLock<std::sync::Mutex<Tunnels>> = std::sync::OnceLock::new();
    TUNNELS.get_or_init(Default::default)
}

impl Tunnel {
    /// Most tunnel descriptions interned in one process (16,384, a few MB at most).
    pub const MAX: usize = 16_384;

    /// The handle of the description `layers` (outermost first), interning it when new;
    /// `None` when [`Tunnel::MAX`] descriptions are already interned.
    pub fn intern(layers: &[TunnelLayer]) -> Option<Tunnel> {
        let mut t = tunnels().lock().ok()?;
        if let Some(i) = t.index.get(layers) {
            return Some(Tunnel(*i));
        }
        if t.list.len() >= Self::MAX {
            return None;
        }
        let i = t.list.len() as u32;
        t.list.push(layers.into());
        t.index.insert(layers.to_vec(), i);
        Some(Tunnel(i))
    }

    /// The layers of the tunnel, outermost first.
    pub fn layers(self) -> std::sync::Arc<[TunnelLayer]> {
        tunnels()
            .lock()
            .ok()
            .and_then(|t| t.list.get(self.0 as usize).cloned())
            .unwrap_or_else(|| std::sync::Arc::from(Vec::new()))
    }
}

impl Serialize for Tunnel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.layers().serialize(s)
    }
}

/// Where in the capture a record belongs: the packet, and for stream-level records the TCP
/// stream and its two endpoints (sender first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// Time of the packet.
    pub ts: Timestamp,
    /// Frame number of the packet, 1-based over the file.
    pub frame: u64,
    /// TCP stream index (0-based, in order of first packet, as Wireshark's `tcp.stream`) and
    /// the sender and receiver of the message.
    pub stream: Option<(u64, Endpoint, Endpoint)>,
    /// The tunnel the packet was found inside, outermost layer first (`None` when it was not
    /// encapsulated).
    pub tunnel: Option<Tunnel>,
}

/// The layer an anomaly was found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// The capture file's records.
    Capture,
    /// Link, IP and TCP headers.
    Packet,
    /// TCP reassembly.
    Tcp,
    /// Kafka framing, headers and bodies.
    Kafka,
    /// The run's memory budget (`--memory-limit`).
    Memory,
    /// The transaction view (`--transactions`): what the joined messages say of a
    /// transaction.
    Transaction,
}

/// The transaction an anomaly of the transaction view concerns (`--transactions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TxnRef {
    /// Its transactional id, when known.
    pub transactional_id: Option<String>,
    /// Its producer id.
    pub producer_id: i64,
    /// The epoch it used.
    pub producer_epoch: i16,
    /// The frame of its first message in the capture (its record's `begin.frame`), when the
    /// anomaly concerns one transaction the view followed: a producer id and epoch may hold
    /// several transactions (transaction version 1), and this tells which. Absent for one
    /// that names a producer id and epoch only (a `refused_request` that was all the capture
    /// held, a stale marker no transaction took, a `producer_id_conflict`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub begin_frame: Option<u64>,
}

/// Most bytes of undecodable data carried in an anomaly (64 KiB, 128 KiB of hex).
pub const ANOMALY_DATA_LIMIT: usize = 64 * 1024;

/// The `anomaly` object of a record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Anomaly {
    /// The kind of problem; its snake_case name is the JSON `kind`.
    pub kind: AnomalyKind,
    /// Where it was found.
    pub layer: Layer,
    /// One human sentence.
    pub message: String,
    /// The API key, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key: Option<i16>,
    /// The API version, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<i16>,
    /// The correlation id, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<i32>,
    /// The field path where decoding failed, e.g. `markers[1].topics[0].name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Byte offset of the failure within the frame (after the size prefix).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Stream offset (bytes from the start of the direction as seen, gaps included) where the
    /// problem lies, for TCP and framing anomalies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_offset: Option<u64>,
    /// The frame number of the request a response-side anomaly concerns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_frame: Option<u64>,
    /// Bytes lost or skipped, where that is what the anomaly is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// The undecodable bytes (for a frame: all of it after the size prefix), as hex, at most
    /// [`ANOMALY_DATA_LIMIT`] bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// For `no_response`: bytes of the response direction missing in gaps (where whole
    /// responses could have been) while the request waited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_bytes_missing: Option<u64>,
    /// For `no_response`: in how many gaps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_gaps: Option<u64>,
    /// For `no_response`: the frame at which the last of those gaps was reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_gap_frame: Option<u64>,
    /// For the transaction view's anomalies: the transaction it concerns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transaction: Option<TxnRef>,
    /// It lost nothing the run decodes (a gap inside a frame that is skipped, not decoded):
    /// `--anomalies relevant` (the default) leaves it out; never serialised.
    #[serde(skip)]
    pub harmless: bool,
    /// It may have taken whole frames after the one it names (a gap over a frame boundary):
    /// `--anomalies relevant` writes it whatever that frame's API; never serialised.
    #[serde(skip)]
    pub beyond_frame: bool,
}

impl Anomaly {
    /// An anomaly with only its kind, message and the kind's layer set.
    pub fn new(kind: AnomalyKind, message: impl Into<String>) -> Self {
        Anomaly {
            kind,
            layer: kind.layer(),
            message: message.into(),
            api_key: None,
            api_version: None,
            correlation_id: None,
            field: None,
            offset: None,
            stream_offset: None,
            request_frame: None,
            bytes: None,
            data: None,
            response_bytes_missing: None,
            response_gaps: None,
            last_gap_frame: None,
            transaction: None,
            harmless: false,
            beyond_frame: false,
        }
    }

    /// Sets `data` to the hex of `bytes`, capped at [`ANOMALY_DATA_LIMIT`].
    pub fn with_data(mut self, bytes: &[u8]) -> Self {
        self.data = Some(hex::encode(&bytes[..bytes.len().min(ANOMALY_DATA_LIMIT)]));
        self
    }
}

/// Every kind of anomaly the tool reports: a closed list, each with its stable snake_case
/// name (the JSON `kind`) and the layer that finds it. The README's table of anomaly kinds and
/// the schema's `kind` enum are checked against [`AnomalyKind::ALL`] by `tests/schema.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AnomalyKind {
    /// `truncated_capture` (capture): the file ends inside a record.
    TruncatedCapture,
    /// `bad_block` (capture): a damaged pcapng block or a damaged record.
    BadBlock,
    /// `record_too_large` (capture): a record larger than the capture reader's limit.
    RecordTooLarge,
    /// `unknown_interface` (capture): a pcapng packet names an interface its section did not describe.
    UnknownInterface,
    /// `unknown_block` (capture): a pcapng block of a type this tool does not know (skipped;
    /// reported once per type, with the count at the end).
    UnknownBlock,
    /// `unsupported_link_type` (capture): a link type this tool does not decode.
    UnsupportedLinkType,
    /// `bad_timestamp` (capture): a packet timestamp that is invalid or outside the years
    /// 0000-9999.
    BadTimestamp,
    /// `truncated_packet` (packet): a link or TCP header cut short.
    TruncatedPacket,
    /// `bad_ip_header` (packet): an IP header that cannot be read.
    BadIpHeader,
    /// `tunnel_limit` (packet): a packet nested deeper than the tunnel layers this tool
    /// unwraps, or more distinct tunnels in one capture than it remembers.
    TunnelLimit,
    /// `fragment_overlap` (packet): an IP fragment whose bytes differ from those already held for
    /// the same offsets of its datagram.
    FragmentOverlap,
    /// `bad_fragment` (packet): an IP fragment no datagram can have (unaligned, past 65,535
    /// bytes, past the end the last fragment gave); its datagram is given up.
    BadFragment,
    /// `fragment_missing` (packet): an IP datagram given up before all its fragments came.
    FragmentMissing,
    /// `gap` (tcp): bytes of a stream that were never captured (or captured and not kept, or
    /// captured after the connection's end).
    Gap,
    /// `frame_lost` (tcp): a frame of interest lost bytes to a gap and was not decoded.
    FrameLost,
    /// `overlap_mismatch` (tcp): a retransmission that differs from the copy captured first.
    OverlapMismatch,
    /// `frame_too_large` (kafka): a size prefix above `--max-frame-size`.
    FrameTooLarge,
    /// `frame_too_small` (kafka): a size prefix below the smallest frame.
    FrameTooSmall,
    /// `resync` (kafka): framing resumed after passing over bytes that start no plausible frame.
    Resync,
    /// `no_frame_found` (kafka): the connection ended while framing looked for a frame start.
    NoFrameFound,
    /// `truncated_frame` (kafka): the connection ended inside a frame of interest.
    TruncatedFrame,
    /// `no_response` (kafka): a request of interest got no response.
    NoResponse,
    /// `response_without_request` (kafka): a response whose request was not captured, not inferred.
    ResponseWithoutRequest,
    /// `response_mismatch` (kafka): a decoded response that does not answer what its decoded
    /// request asked (a WriteTxnMarkers response leaving out a producer id or partition of its
    /// request, or naming one it did not).
    ResponseMismatch,
    /// `unsupported_api_version` (kafka): a decoded API at a version its decoder does not know.
    UnsupportedApiVersion,
    /// `truncated_body` (kafka): the frame ended inside a field.
    TruncatedBody,
    /// `trailing_bytes` (kafka): bytes left over after the body.
    TrailingBytes,
    /// `negative_length` (kafka): a length or count below -1, or a null where none is allowed.
    NegativeLength,
    /// `array_count_exceeds_frame` (kafka): an array count that cannot fit in the bytes left.
    ArrayCountExceedsFrame,
    /// `string_length_exceeds_frame` (kafka): a string or bytes length longer than the bytes left.
    StringLengthExceedsFrame,
    /// `varint_overflow` (kafka): an unsigned varint longer than 5 bytes or above 32 bits.
    VarintOverflow,
    /// `invalid_utf8` (kafka): a string that is not UTF-8.
    InvalidUtf8,
    /// `null_not_allowed` (kafka): a null string where the schema allows none.
    NullNotAllowed,
    /// `too_many_elements` (kafka): more array elements and tagged fields than one frame may decode.
    TooManyElements,
    /// `memory_limit` (memory): a holding given up because the memory budget was reached.
    MemoryLimit,
    /// `hanging_transaction` (transaction): a partition with transactional data and no marker
    /// for that producer epoch at the end of the capture, after the end was asked for or the
    /// timeout passed.
    HangingTransaction,
    /// `marker_failed` (transaction): a marker answered with an error the coordinator treats
    /// as terminal (the transaction's remaining markers are cancelled).
    MarkerFailed,
    /// `stale_coordinator_epoch` (transaction): a marker with a coordinator epoch older than
    /// one its partition already saw.
    StaleCoordinatorEpoch,
    /// `fenced_producer` (transaction): a newer InitProducerId for a transactional id while
    /// its transaction was open; the coordinator aborts it.
    FencedProducer,
    /// `lso_stuck` (transaction): read_committed Fetch responses whose last stable offset
    /// stays while the high watermark moves, for longer than the largest transaction timeout
    /// seen.
    LsoStuck,
    /// `accepted_commit_aborted` (transaction): ABORT markers for a transaction whose EndTxn
    /// asking to commit the coordinator had accepted: its client was told it committed, and
    /// its records were aborted (an admin's `kafka-transactions.sh abort`; Kafka's coordinator
    /// itself always completes a commit it accepted).
    AcceptedCommitAborted,
    /// `accepted_abort_committed` (transaction): COMMIT markers for a transaction whose EndTxn
    /// asking to abort the coordinator had accepted: its client gave it up, and its records
    /// were committed. Kafka's coordinator never commits a transaction it accepted to abort
    /// (a coordinator that lost its state, another cluster's producer of the same id and
    /// epoch, or damaged bytes).
    AcceptedAbortCommitted,
    /// `producer_id_conflict` (transaction): an InitProducerId gave a producer id already
    /// given to another transactional id. A Kafka cluster never gives one producer id to two
    /// transactional ids: the capture holds two clusters (or a damaged id), whose
    /// transactions the view, joining by producer id and epoch, may mix.
    ProducerIdConflict,
    /// `refused_request` (transaction): an EndTxn, AddPartitionsToTxn or Produce refused for
    /// good (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH, INVALID_PRODUCER_ID_MAPPING,
    /// INVALID_TXN_STATE, TRANSACTIONAL_ID_AUTHORIZATION_FAILED) that was all the capture held
    /// of a transaction, so that no transaction is written for it: a fenced zombie's request,
    /// or one sent after its transaction ended.
    RefusedRequest,
    /// `transaction_limit` (transaction): more transactions at once than the view follows;
    /// the least recently active was written as it stood.
    TransactionLimit,
}

impl AnomalyKind {
    /// Every kind, in the README's order.
    pub const ALL: [AnomalyKind; 45] = [
        AnomalyKind::TruncatedCapture,
        AnomalyKind::BadBlock,
        AnomalyKind::RecordTooLarge,
        AnomalyKind::UnknownInterface,
        AnomalyKind::UnknownBlock,
        AnomalyKind::UnsupportedLinkType,
        AnomalyKind::BadTimestamp,
        AnomalyKind::TruncatedPacket,
        AnomalyKind::BadIpHeader,
        AnomalyKind::TunnelLimit,
        AnomalyKind::FragmentOverlap,
        AnomalyKind::BadFragment,
        AnomalyKind::FragmentMissing,
        AnomalyKind::Gap,
        AnomalyKind::FrameLost,
        AnomalyKind::OverlapMismatch,
        AnomalyKind::FrameTooLarge,
        AnomalyKind::FrameTooSmall,
        AnomalyKind::Resync,
        AnomalyKind::NoFrameFound,
        AnomalyKind::TruncatedFrame,
        AnomalyKind::NoResponse,
        AnomalyKind::ResponseWithoutRequest,
        AnomalyKind::ResponseMismatch,
        AnomalyKind::UnsupportedApiVersion,
        AnomalyKind::TruncatedBody,
        AnomalyKind::TrailingBytes,
        AnomalyKind::NegativeLength,
        AnomalyKind::ArrayCountExceedsFrame,
        AnomalyKind::StringLengthExceedsFrame,
        AnomalyKind::VarintOverflow,
        AnomalyKind::InvalidUtf8,
        AnomalyKind::NullNotAllowed,
        AnomalyKind::TooManyElements,
        AnomalyKind::MemoryLimit,
        AnomalyKind::HangingTransaction,
        AnomalyKind::MarkerFailed,
        AnomalyKind::StaleCoordinatorEpoch,
        AnomalyKind::FencedProducer,
        AnomalyKind::LsoStuck,
        AnomalyKind::AcceptedCommitAborted,
        AnomalyKind::AcceptedAbortCommitted,
        AnomalyKind::ProducerIdConflict,
        AnomalyKind::RefusedRequest,
        AnomalyKind::TransactionLimit,
    ];

    /// The stable snake_case name, e.g. `"frame_lost"`.
    pub fn as_str(self) -> &'static str {
        match self {
            AnomalyKind::TruncatedCapture => "truncated_capture",
            AnomalyKind::BadBlock => "bad_block",
            AnomalyKind::RecordTooLarge => "record_too_large",
            AnomalyKind::UnknownInterface => "unknown_interface",
            AnomalyKind::UnknownBlock => "unknown_block",
            AnomalyKind::UnsupportedLinkType => "unsupported_link_type",
            AnomalyKind::BadTimestamp => "bad_timestamp",
            AnomalyKind::TruncatedPacket => "truncated_packet",
            AnomalyKind::BadIpHeader => "bad_ip_header",
            AnomalyKind::TunnelLimit => "tunnel_limit",
            AnomalyKind::FragmentOverlap => "fragment_overlap",
            AnomalyKind::BadFragment => "bad_fragment",
            AnomalyKind::FragmentMissing => "fragment_missing",
            AnomalyKind::Gap => "gap",
            AnomalyKind::FrameLost => "frame_lost",
            AnomalyKind::OverlapMismatch => "overlap_mismatch",
            AnomalyKind::FrameTooLarge => "frame_too_large",
            AnomalyKind::FrameTooSmall => "frame_too_small",
            AnomalyKind::Resync => "resync",
            AnomalyKind::NoFrameFound => "no_frame_found",
            AnomalyKind::TruncatedFrame => "truncated_frame",
            AnomalyKind::NoResponse => "no_response",
            AnomalyKind::ResponseWithoutRequest => "response_without_request",
            AnomalyKind::ResponseMismatch => "response_mismatch",
            AnomalyKind::UnsupportedApiVersion => "unsupported_api_version",
            AnomalyKind::TruncatedBody => "truncated_body",
            AnomalyKind::TrailingBytes => "trailing_bytes",
            AnomalyKind::NegativeLength => "negative_length",
            AnomalyKind::ArrayCountExceedsFrame => "array_count_exceeds_frame",
            AnomalyKind::StringLengthExceedsFrame => "string_length_exceeds_frame",
            AnomalyKind::VarintOverflow => "varint_overflow",
            AnomalyKind::InvalidUtf8 => "invalid_utf8",
            AnomalyKind::NullNotAllowed => "null_not_allowed",
            AnomalyKind::TooManyElements => "too_many_elements",
            AnomalyKind::MemoryLimit => "memory_limit",
            AnomalyKind::HangingTransaction => "hanging_transaction",
            AnomalyKind::MarkerFailed => "marker_failed",
            AnomalyKind::StaleCoordinatorEpoch => "stale_coordinator_epoch",
            AnomalyKind::FencedProducer => "fenced_producer",
            AnomalyKind::LsoStuck => "lso_stuck",
            AnomalyKind::AcceptedCommitAborted => "accepted_commit_aborted",
            AnomalyKind::AcceptedAbortCommitted => "accepted_abort_committed",
            AnomalyKind::ProducerIdConflict => "producer_id_conflict",
            AnomalyKind::RefusedRequest => "refused_request",
            AnomalyKind::TransactionLimit => "transaction_limit",
        }
    }

    /// The layer whose stage finds this kind.
    pub fn layer(self) -> Layer {
        match self {
            AnomalyKind::TruncatedCapture => Layer::Capture,
            AnomalyKind::BadBlock => Layer::Capture,
            AnomalyKind::RecordTooLarge => Layer::Capture,
            AnomalyKind::UnknownInterface => Layer::Capture,
            AnomalyKind::UnknownBlock => Layer::Capture,
            AnomalyKind::UnsupportedLinkType => Layer::Capture,
            AnomalyKind::BadTimestamp => Layer::Capture,
            AnomalyKind::TruncatedPacket => Layer::Packet,
            AnomalyKind::BadIpHeader => Layer::Packet,
            AnomalyKind::TunnelLimit
            | AnomalyKind::FragmentOverlap
            | AnomalyKind::BadFragment
            | AnomalyKind::FragmentMissing => Layer::Packet,
            AnomalyKind::Gap => Layer::Tcp,
            AnomalyKind::FrameLost => Layer::Tcp,
            AnomalyKind::OverlapMismatch => Layer::Tcp,
            AnomalyKind::FrameTooLarge => Layer::Kafka,
            AnomalyKind::FrameTooSmall => Layer::Kafka,
            AnomalyKind::Resync => Layer::Kafka,
            AnomalyKind::NoFrameFound => Layer::Kafka,
            AnomalyKind::TruncatedFrame => Layer::Kafka,
            AnomalyKind::NoResponse => Layer::Kafka,
            AnomalyKind::ResponseWithoutRequest => Layer::Kafka,
            AnomalyKind::ResponseMismatch => Layer::Kafka,
            AnomalyKind::UnsupportedApiVersion => Layer::Kafka,
            AnomalyKind::TruncatedBody => Layer::Kafka,
            AnomalyKind::TrailingBytes => Layer::Kafka,
            AnomalyKind::NegativeLength => Layer::Kafka,
            AnomalyKind::ArrayCountExceedsFrame => Layer::Kafka,
            AnomalyKind::StringLengthExceedsFrame => Layer::Kafka,
            AnomalyKind::VarintOverflow => Layer::Kafka,
            AnomalyKind::InvalidUtf8 => Layer::Kafka,
            AnomalyKind::NullNotAllowed => Layer::Kafka,
            AnomalyKind::TooManyElements => Layer::Kafka,
            AnomalyKind::MemoryLimit => Layer::Memory,
            AnomalyKind::HangingTransaction
            | AnomalyKind::MarkerFailed
            | AnomalyKind::StaleCoordinatorEpoch
            | AnomalyKind::FencedProducer
            | AnomalyKind::LsoStuck
            | AnomalyKind::AcceptedCommitAborted
            | AnomalyKind::AcceptedAbortCommitted
            | AnomalyKind::ProducerIdConflict
            | AnomalyKind::RefusedRequest
            | AnomalyKind::TransactionLimit => Layer::Transaction,
        }
    }
}

impl std::fmt::Display for AnomalyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Compares with a kind's snake_case name: `kind == "gap"`.
impl PartialEq<&str> for AnomalyKind {
    fn eq(&self, name: &&str) -> bool {
        self.as_str() == *name
    }
}

impl Serialize for AnomalyKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// chrono's own RFC 3339 text of `t` (6 or 9 digits, `Z`), as kafka-pcap wrote it before
    /// writing the digits itself.
    fn chrono_text(t: &Timestamp) -> String {
        use chrono::{DateTime, SecondsFormat};
        let fmt = if t.digits >= 9 {
            SecondsFormat::Nanos
        } else {
            SecondsFormat::Micros
        };
        let c = t.clamped();
        DateTime::from_timestamp(c.secs, c.nanos.min(999_999_999))
            .expect("in range once clamped")
            .to_rfc3339_opts(fmt, true)
    }

    proptest! {
        /// Every time in the years 0000 to 9999 (and past them, clamped), at 6 and 9 digits,
        /// is written as chrono writes it.
        #[test]
        fn rfc3339_text_is_chronos(
            secs in prop_oneof![
                Timestamp::MIN_SECS - 1000..Timestamp::MIN_SECS + 100_000_000,
                -100_000_000i64..4_000_000_000,
                Timestamp::MAX_SECS - 100_000_000..Timestamp::MAX_SECS + 1000,
                any::<i64>(),
            ],
            nanos in 0u32..1_000_000_000,
            nine in any::<bool>(),
        ) {
            let t = Timestamp { secs, nanos, digits: if nine { 9 } else { 6 } };
            let text = t.rfc3339();
            prop_assert_eq!(text.as_str(), chrono_text(&t));
            prop_assert_eq!(t.to_rfc3339(), chrono_text(&t));
        }
    }

    #[test]
    fn timestamps() {
        let t = Timestamp {
            secs: 1_700_000_000,
            nanos: 123_456_789,
            digits: 9,
        };
        assert_eq!(t.to_rfc3339(), "2023-11-14T22:13:20.123456789Z");
        let t = Timestamp { digits: 6, ..t };
        assert_eq!(t.to_rfc3339(), "2023-11-14T22:13:20.123456Z");
        let early = Timestamp {
            secs: 1_699_999_999,
            nanos: 999_999_000,
            digits: 6,
        };
        assert_eq!(t.micros_since(&early), 123_457);
        assert_eq!(early.micros_since(&t), -123_457);
    }

    #[test]
    fn anomaly_kinds_are_distinct_snake_case() {
        let mut names: Vec<&str> = AnomalyKind::ALL.iter().map(|k| k.as_str()).collect();
        assert!(names.iter().all(|n| n
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')));
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), AnomalyKind::ALL.len());
        assert_eq!(AnomalyKind::FrameLost.layer(), Layer::Tcp);
        assert_eq!(AnomalyKind::UnsupportedLinkType.layer(), Layer::Capture);
        let a = Anomaly::new(AnomalyKind::Gap, "m");
        assert_eq!(serde_json::to_value(&a).unwrap()["kind"], "gap");
        assert_eq!(serde_json::to_value(&a).unwrap()["layer"], "tcp");
    }
}
