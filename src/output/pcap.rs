//! `--write-pcap FILE`: the packets that carried the records written, as a capture of their
//! own that Wireshark, tshark or kafka-pcap opens.
//!
//! Input: the records on their way to the writer ([`PacketCollector`], a [`Sink`] in front of
//! it): a message record names the packets its frame's bytes came in and its connection's
//! handshake (`KafkaMessage::packets`, filled with `crate::Config::write_pcap`), its request's
//! too when it carries it; a transaction record those of its messages
//! (`Transaction::packets`); an anomaly record names its own packet, and its request's
//! (`Anomaly::request_frame`) when it names one. They are gathered in a
//! [`PacketSet`], one bit per frame number. Output: [`write_packets`] reads the capture a
//! second time and copies each packet of the set as it was captured: its link-layer bytes,
//! original length and timestamp, in capture order, as classic pcap (microsecond or
//! nanosecond, as the first packet written was captured) or, for a file named `.pcapng`, as
//! pcapng (one interface per link type, nanosecond timestamps). Frame numbers in the new file
//! are its own (1-based again).

use super::Sink;
use crate::capture::{read_capture, CaptureError, CaptureItem, CapturePacket};
use crate::kafka::event::{Event, Record};
use crate::memory::{vec_cost, Charge, Holding, Memory};
use crate::txn::TransactionRecord;
use crate::vocab::{Endpoint, Timestamp};
use std::io::{self, Read, Write};
use std::path::Path;

/// Frame numbers of packets to write: one bit per frame number up to the largest marked,
/// charged to the run's budget (never refused: it is an eighth of a byte per packet read).
#[derive(Debug)]
pub struct PacketSet {
    words: Vec<u64>,
    /// The packets of anomaly records, with their connection's endpoints and whether it was
    /// inside a tunnel: written only when the packet is of that connection (an anomaly found
    /// at a connection's end names the capture's last packet, of any connection).
    anomalies: Vec<(u64, Endpoint, Endpoint, bool)>,
    /// Records marked (an exchange is one).
    records: u64,
    /// Packets of the transactions marked that their bound left out
    /// (`Transaction::packets_not_kept`).
    not_kept: u64,
    len: u64,
    max: u64,
    charge: Charge,
}

impl PacketSet {
    /// An empty set charged to `memory`.
    pub fn new(memory: &Memory) -> Self {
        PacketSet {
            words: Vec::new(),
            anomalies: Vec::new(),
            records: 0,
            not_kept: 0,
            len: 0,
            max: 0,
            charge: memory.charge(Holding::Packets),
        }
    }

    /// Marks frame number `frame` (1-based; 0, "no packet", is ignored).
    pub fn insert(&mut self, frame: u64) {
        if frame == 0 {
            return;
        }
        let (w, bit) = ((frame / 64) as usize, frame % 64);
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
            let cost = vec_cost::<u64>(self.words.capacity())
                + vec_cost::<(u64, Endpoint, Endpoint, bool)>(self.anomalies.capacity());
            self.charge.force(cost);
        }
        if self.words[w] & (1 << bit) == 0 {
            self.words[w] |= 1 << bit;
            self.len += 1;
            self.max = self.max.max(frame);
        }
    }

    /// Whether frame number `frame` is marked (anomalies' packets aside).
    pub fn contains(&self, frame: u64) -> bool {
        self.words
            .get((frame / 64) as usize)
            .is_some_and(|w| w & (1 << (frame % 64)) != 0)
    }

    /// How many frame numbers are marked.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many records were marked (an exchange counts once).
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Packets of the transactions marked that were not kept: past
    /// [`crate::txn::MAX_PACKETS`] a transaction (not written, but for each message's own
    /// frame).
    pub fn not_kept(&self) -> u64 {
        self.not_kept
    }

    /// The largest frame number marked (0 when none is).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Marks the packets of record `rec` (see the module documentation).
    pub fn mark(&mut self, rec: &Record) {
        match &rec.event {
            Event::Kafka(m) => {
                self.insert(rec.loc.frame);
                for &f in &m.packets {
                    self.insert(f);
                }
                if let Some(r) = &m.request {
                    self.mark(r);
                }
            }
            Event::Anomaly(anomaly) => {
                // An anomaly of no connection (a packet or capture problem) names no packet
                // worth a colleague's time. One that names its request's frame (a
                // `refused_request`, a `no_response`) is written with that packet too.
                if let (Some((_, a, b)), true) = (rec.loc.stream, rec.loc.frame > 0) {
                    let tunnel = rec.loc.tunnel.is_some();
                    self.anomalies.push((rec.loc.frame, a, b, tunnel));
                    self.max = self.max.max(rec.loc.frame);
                    if let Some(f) = anomaly
                        .request_frame
                        .filter(|&f| f > 0 && f != rec.loc.frame)
                    {
                        self.anomalies.push((f, b, a, tunnel));
                        self.max = self.max.max(f);
                    }
                    let cost = vec_cost::<u64>(self.words.capacity())
                        + vec_cost::<(u64, Endpoint, Endpoint, bool)>(self.anomalies.capacity());
                    self.charge.force(cost);
                }
            }
            // Not written as a record: `--pair` hands it on as an exchange.
            Event::Unanswered(..) => {}
        }
    }
}

/// A [`Sink`] that marks in a [`PacketSet`] the packets of every record it hands on to
/// `inner` (put it right before the writer, so that only records written count).
pub struct PacketCollector<'a> {
    inner: &'a mut dyn Sink,
    set: &'a mut PacketSet,
}

impl<'a> PacketCollector<'a> {
    /// A collector in front of `inner`, marking in `set`.
    pub fn new(inner: &'a mut dyn Sink, set: &'a mut PacketSet) -> Self {
        PacketCollector { inner, set }
    }
}

impl Sink for PacketCollector<'_> {
    fn record(&mut self, rec: &Record) -> io::Result<()> {
        if !matches!(rec.event, Event::Unanswered(..)) {
            self.set.records += 1;
        }
        self.set.mark(rec);
        self.inner.record(rec)
    }

    fn transaction(&mut self, t: &TransactionRecord) -> io::Result<()> {
        // Its messages' packets (the view kept them with `Config::write_pcap`), and each
        // message's own frame.
        self.set.records += 1;
        self.set.not_kept += t.transaction.packets_not_kept;
        for &f in t.transaction.frames.iter().chain(&t.transaction.packets) {
            self.set.insert(f);
        }
        self.inner.transaction(t)
    }

    fn capture_start(&mut self, ts: Timestamp) {
        self.inner.capture_start(ts)
    }

    fn response_alone(&mut self, response: &Record) -> io::Result<()> {
        self.set.records += 1;
        self.set.mark(response);
        self.inner.response_alone(response)
    }

    fn exchange(&mut self, request: &Record, response: Option<&Record>) -> io::Result<()> {
        self.set.records += 1;
        self.set.mark(request);
        if let Some(r) = response {
            self.set.mark(r);
        }
        self.inner.exchange(request, response)
    }
}

/// Where `payload`, a non-empty part of `data`, starts in it: `None` when empty or not
/// inside `data` (a payload gathered from IP fragments).
fn payload_start(data: &[u8], payload: &[u8]) -> Option<usize> {
    if payload.is_empty() {
        return None;
    }
    let (d, q) = (data.as_ptr() as usize, payload.as_ptr() as usize);
    let at = q.checked_sub(d)?;
    (at.checked_add(payload.len())? <= data.len()).then_some(at)
}

/// The file format [`write_packets`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PcapFormat {
    /// Classic pcap: one link type for the whole file.
    Pcap,
    /// pcapng: an interface per link type.
    PcapNg,
}

impl PcapFormat {
    /// pcapng for a path ending `.pcapng` (any case), classic pcap otherwise.
    pub fn for_path(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("pcapng") => PcapFormat::PcapNg,
            _ => PcapFormat::Pcap,
        }
    }
}

/// What [`write_packets`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Written {
    /// Packets written.
    pub packets: u64,
    /// Of them, acknowledgments added after kept segments.
    pub acks: u64,
    /// Of those, acknowledgments that carried bytes of other messages, written cut after
    /// their TCP header (as a snapshot length cuts: their length on the wire kept).
    pub acks_cut: u64,
    /// Packets of the set left out of a classic pcap file because their link type differs
    /// from the first one written (a pcapng file takes them all).
    pub other_link_type: u64,
    /// Packets written with the nearest time the format can hold: captured before 1970, or
    /// (classic pcap) after 2106.
    pub clamped: u64,
}

/// Why [`write_packets`] failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The capture could not be read again.
    #[error("reading the capture again: {0}")]
    Read(CaptureError),
    /// Writing the new file failed.
    #[error("writing: {0}")]
    Write(io::Error),
}

/// Most kept segments waiting at once for the packet that acknowledges them (65,536); past
/// it, the oldest go without.
pub const MAX_AWAITED_ACKS: usize = 65_536;

/// How far past the last packet of the set the second reading goes looking for the
/// acknowledgments still awaited (65,536 packets).
pub const ACK_LOOKAHEAD: u64 = 65_536;

/// Stops the second reading.
#[derive(Debug)]
struct Stop;

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stop")
    }
}

impl std::error::Error for Stop {}

/// Reads the capture `input` again and writes the packets of `set` to `out` in `format`, in
/// capture order. After each kept TCP segment (outside tunnels) the first packet of the other
/// direction that acknowledges it is written too, when it is not already: without it a
/// reader of the new file would hold the segment back until the connection's end, as it
/// would any bytes after a hole (the holes where the other messages were).
///
/// # Errors
/// [`WriteError::Read`] when the capture cannot be read again (it must be the same file:
/// frame numbers are matched, not contents), [`WriteError::Write`] when writing fails.
pub fn write_packets<R: Read + Send, W: Write>(
    input: R,
    set: &PacketSet,
    format: PcapFormat,
    out: &mut W,
) -> Result<Written, WriteError> {
    use crate::packet::{decode, Decoded};
    use std::collections::HashMap;
    let mut anomalies = set.anomalies.clone();
    anomalies.sort_unstable_by_key(|a| a.0);
    let mut next_anomaly = 0;
    let mut w = Writer {
        format,
        out,
        linktypes: Vec::new(),
        digits: 6,
        resolutions: Vec::new(),
        written: Written::default(),
    };
    // (acknowledger, acknowledged) -> the sequence number just past the kept segment.
    let mut awaited: HashMap<(Endpoint, Endpoint), u32> = HashMap::new();
    let mut order: std::collections::VecDeque<(Endpoint, Endpoint)> = Default::default();
    let mut failed = None;
    let result = read_capture(input, |item| {
        let CaptureItem::Packet(p) = item else {
            return Ok(());
        };
        let kept = set.contains(p.frame);
        while anomalies.get(next_anomaly).is_some_and(|a| a.0 < p.frame) {
            next_anomaly += 1;
        }
        let here = &anomalies[next_anomaly..];
        let here = &here[..here.partition_point(|a| a.0 == p.frame)];
        if !kept
            && here.is_empty()
            && (awaited.is_empty() || p.frame > set.max().saturating_add(ACK_LOOKAHEAD))
        {
            if p.frame > set.max() {
                return Err(io::Error::other(Stop));
            }
            return Ok(());
        }
        let seg = match decode(p.linktype, p.data, p.orig_len) {
            Decoded::Tcp(seg) => Some(seg),
            _ => None,
        };
        let mut write = kept
            || here.iter().any(|&(_, a, b, tunnel)| match &seg {
                Some(s) => (s.src, s.dst) == (a, b) || (s.src, s.dst) == (b, a),
                // Inside a tunnel: the plain reading finds no TCP to tell.
                None => tunnel,
            });
        // An acknowledgment that carries bytes of a message not kept (a client's next request
        // with the ack piggybacked) is written cut after its headers, as a snapshot length
        // cuts: read back, those bytes are missing, not a message without its answer.
        let mut head_only = None;
        if let Some(seg) = &seg {
            let key = (seg.src, seg.dst);
            if let Some(&end) = awaited.get(&key).filter(|_| seg.ack) {
                if (seg.ack_number.wrapping_sub(end) as i32) >= 0 {
                    awaited.remove(&key);
                    if !kept {
                        if !write {
                            // (One written for an anomaly is written whole.)
                            head_only = payload_start(p.data, seg.payload);
                        }
                        write = true;
                        w.written.acks += 1;
                    }
                }
            }
            let len = seg.payload.len() as u64 + seg.cut + u64::from(seg.syn) + u64::from(seg.fin);
            if kept && len > 0 {
                let end = seg.seq.wrapping_add(len as u32);
                let back = (seg.dst, seg.src);
                if awaited.insert(back, end).is_none() {
                    order.push_back(back);
                    while awaited.len() > MAX_AWAITED_ACKS {
                        match order.pop_front() {
                            Some(k) => {
                                awaited.remove(&k);
                            }
                            None => break,
                        }
                    }
                }
            }
            if order.len() > 2 * MAX_AWAITED_ACKS {
                order.retain(|k| awaited.contains_key(k));
            }
        }
        if write {
            let cut;
            let p = match head_only {
                Some(head) => {
                    w.written.acks_cut += 1;
                    cut = CapturePacket {
                        data: &p.data[..head],
                        ..*p
                    };
                    &cut
                }
                None => p,
            };
            if let Err(e) = w.packet(p) {
                failed = Some(e);
                return Err(io::Error::other(Stop));
            }
        }
        Ok(())
    });
    if let Some(e) = failed {
        return Err(WriteError::Write(e));
    }
    match result {
        Err(CaptureError::Io(e)) if e.get_ref().is_some_and(|i| i.is::<Stop>()) => {}
        Err(e) => return Err(WriteError::Read(e)),
        Ok(()) => {}
    }
    if w.linktypes.is_empty() {
        // Nothing to write: still a valid, empty capture.
        w.header(1, 6).map_err(WriteError::Write)?;
    }
    w.out.flush().map_err(WriteError::Write)?;
    Ok(w.written)
}

/// The capture being written.
struct Writer<'a, W: Write> {
    format: PcapFormat,
    out: &'a mut W,
    /// Link types given a header (pcap: the one; pcapng: interface `i` has `linktypes[i]`).
    linktypes: Vec<i32>,
    /// pcap: fractional digits of its timestamps (6 or 9).
    digits: u8,
    /// pcapng: whether interface `i` has nanosecond timestamps.
    resolutions: Vec<bool>,
    written: Written,
}

impl<W: Write> Writer<'_, W> {
    /// Snapshot length written in the headers: the largest packet kafka-pcap reads.
    const SNAPLEN: u32 = 262_144;

    /// The file header, for a first packet of `linktype` with timestamps of `digits`
    /// fractional digits.
    fn header(&mut self, linktype: i32, digits: u8) -> io::Result<()> {
        let mut h = Vec::with_capacity(28);
        match self.format {
            PcapFormat::Pcap => {
                let magic: u32 = if digits == 9 {
                    0xa1b2_3c4d
                } else {
                    0xa1b2_c3d4
                };
                h.extend(magic.to_le_bytes());
                h.extend(2u16.to_le_bytes());
                h.extend(4u16.to_le_bytes());
                h.extend(0i32.to_le_bytes());
                h.extend(0u32.to_le_bytes());
                h.extend(Self::SNAPLEN.to_le_bytes());
                h.extend((linktype as u32).to_le_bytes());
                self.out.write_all(&h)?;
                self.linktypes.push(linktype);
                self.digits = digits;
            }
            PcapFormat::PcapNg => {
                // Section Header Block: byte-order magic, version 1.0, section length unknown.
                h.extend(0x0A0D_0D0Au32.to_le_bytes());
                h.extend(28u32.to_le_bytes());
                h.extend(0x1A2B_3C4Du32.to_le_bytes());
                h.extend(1u16.to_le_bytes());
                h.extend(0u16.to_le_bytes());
                h.extend((-1i64).to_le_bytes());
                h.extend(28u32.to_le_bytes());
                self.out.write_all(&h)?;
                self.interface(linktype, digits)?;
            }
        }
        Ok(())
    }

    /// pcapng: an Interface Description Block for `linktype`, with timestamps of `digits`
    /// fractional digits (6: microseconds, 9: nanoseconds; `if_tsresol`).
    fn interface(&mut self, linktype: i32, digits: u8) -> io::Result<()> {
        let mut b = Vec::with_capacity(32);
        b.extend(1u32.to_le_bytes());
        b.extend(32u32.to_le_bytes());
        b.extend((linktype as u16).to_le_bytes());
        b.extend(0u16.to_le_bytes());
        b.extend(Self::SNAPLEN.to_le_bytes());
        // if_tsresol (option 9): 10^-digits seconds, padded to 4 bytes; then opt_endofopt.
        b.extend(9u16.to_le_bytes());
        b.extend(1u16.to_le_bytes());
        b.extend([if digits == 9 { 9 } else { 6 }, 0, 0, 0]);
        b.extend([0, 0, 0, 0]);
        b.extend(32u32.to_le_bytes());
        self.out.write_all(&b)?;
        self.linktypes.push(linktype);
        self.resolutions.push(digits == 9);
        Ok(())
    }

    fn packet(&mut self, p: &CapturePacket<'_>) -> io::Result<()> {
        if self.linktypes.is_empty() {
            if self.format == PcapFormat::Pcap && !crate::packet::is_supported_link_type(p.linktype)
            {
                // A classic pcap takes the link type of its first packet: not one of a link
                // kafka-pcap cannot read (an anomaly's packet).
                self.written.other_link_type += 1;
                return Ok(());
            }
            self.header(p.linktype, p.ts.digits)?;
        }
        let late = p.ts.secs > i64::from(u32::MAX);
        if p.ts.secs < 0 || (late && self.format == PcapFormat::Pcap) {
            self.written.clamped += 1;
        }
        let caplen = p.data.len() as u32;
        let orig_len = p.orig_len.max(caplen);
        match self.format {
            PcapFormat::Pcap => {
                if p.linktype != self.linktypes[0] {
                    self.written.other_link_type += 1;
                    return Ok(());
                }
                // Seconds before 1970 or after 2106 cannot be written: the nearest are.
                let secs = p.ts.secs.clamp(0, i64::from(u32::MAX)) as u32;
                let frac = if self.digits == 9 {
                    p.ts.nanos
                } else {
                    p.ts.nanos / 1000
                };
                let mut h = [0u8; 16];
                h[0..4].copy_from_slice(&secs.to_le_bytes());
                h[4..8].copy_from_slice(&frac.to_le_bytes());
                h[8..12].copy_from_slice(&caplen.to_le_bytes());
                h[12..16].copy_from_slice(&orig_len.to_le_bytes());
                self.out.write_all(&h)?;
                self.out.write_all(p.data)?;
            }
            PcapFormat::PcapNg => {
                let nanos = p.ts.digits == 9;
                let found = (0..self.linktypes.len())
                    .find(|&i| self.linktypes[i] == p.linktype && self.resolutions[i] == nanos);
                let id = match found {
                    Some(i) => i,
                    None => {
                        self.interface(p.linktype, p.ts.digits)?;
                        self.linktypes.len() - 1
                    }
                };
                let units = if nanos {
                    p.ts.as_nanos()
                } else {
                    p.ts.as_nanos() / 1000
                };
                let ns = units.clamp(0, i128::from(u64::MAX)) as u64;
                let pad = (4 - p.data.len() % 4) % 4;
                let total = 32 + p.data.len() as u32 + pad as u32;
                let mut h = Vec::with_capacity(28);
                h.extend(6u32.to_le_bytes());
                h.extend(total.to_le_bytes());
                h.extend((id as u32).to_le_bytes());
                h.extend(((ns >> 32) as u32).to_le_bytes());
                h.extend((ns as u32).to_le_bytes());
                h.extend(caplen.to_le_bytes());
                h.extend(orig_len.to_le_bytes());
                self.out.write_all(&h)?;
                self.out.write_all(p.data)?;
                self.out.write_all(&[0u8; 3][..pad])?;
                self.out.write_all(&total.to_le_bytes())?;
            }
        }
        self.written.packets += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_marks_each_frame_once_and_charges_its_bits() {
        let mem = Memory::new(1 << 20);
        let mut s = PacketSet::new(&mem);
        for f in [0, 3, 64, 3, 1000] {
            s.insert(f);
        }
        assert_eq!((s.len(), s.max()), (3, 1000));
        assert!(s.contains(3) && s.contains(64) && s.contains(1000));
        assert!(!s.contains(0) && !s.contains(4) && !s.contains(1_000_000));
        assert!(mem.used() >= 16 * 8);
        drop(s);
        assert_eq!(mem.used(), 0);
    }

    #[test]
    fn output_format_follows_the_file_name() {
        assert_eq!(
            PcapFormat::for_path(Path::new("a/out.PCAPNG")),
            PcapFormat::PcapNg
        );
        assert_eq!(
            PcapFormat::for_path(Path::new("out.pcap")),
            PcapFormat::Pcap
        );
        assert_eq!(PcapFormat::for_path(Path::new("out")), PcapFormat::Pcap);
    }
}
