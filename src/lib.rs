//! kafka-pcap: dissects recorded Apache Kafka broker traffic offline and reports every
//! WriteTxnMarkers (API key 27) request and response as one JSON record.
//!
//! The pipeline runs one way, one job per module:
//!
//! 1. [`capture`]: pcap / pcapng records, streamed (pcap-parser);
//! 2. [`packet`]: link, IP and TCP headers (etherparse);
//! 3. [`flow`]: TCP connections, stream indexes, reassembly of each direction;
//! 4. [`kafka`]: Kafka detection, framing on the int32 size prefix, request/response
//!    correlation by correlation id, and the WriteTxnMarkers decoders (nom);
//! 5. [`output`]: records and their NDJSON form (serde_json).
//!
//! Below them all, [`vocab`] holds what every stage speaks of (timestamps, endpoints,
//! locations, anomalies) and [`memory`] the run's memory budget; each stage imports only from
//! stages before it and from those two.
//!
//! [`Pipeline`] connects the stages; [`run`] reads one capture into a [`output::Sink`].
//!
//! ```no_run
//! use kafka_pcap::{run, Config, output::NdjsonWriter};
//! let file = std::fs::File::open("broker.pcap")?;
//! let mut out = NdjsonWriter::new(std::io::stdout(), None);
//! let stats = run(file, &Config::default(), &mut out)?;
//! eprintln!("{} packets", stats.packets);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod capture;
pub mod flow;
pub mod kafka;
pub mod memory;
pub mod output;
pub mod packet;
pub mod stats;
pub mod txn;
pub mod vocab;

use capture::{CaptureError, CaptureItem, CapturePacket};
use flow::reassembly::{Delivery, HalfStream, Origin};
use flow::seq::SeqNum;
use flow::{Conn, End, FlowTable, Found, Syn};
use kafka::event::{Event, Record, RecordOut};
use kafka::session::{FrameCounts, KafkaConn, Lost, Missing, Shared};
use output::{Emitter, Sink};
use packet::{Decoded, TcpSegment};
use stats::Stats;
use std::collections::HashSet;
use std::io::{self, Read};
use vocab::{Anomaly, AnomalyKind, Direction, Location, Timestamp};

/// The default Kafka broker port.
pub const DEFAULT_KAFKA_PORT: u16 = 9092;
/// The default largest plausible Kafka frame, in bytes (100 MiB, as Kafka's
/// `socket.request.max.bytes` default).
pub const DEFAULT_MAX_FRAME_SIZE: u32 = 100 * 1024 * 1024;

/// What a run needs to know.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Ports taken as Kafka broker ports without looking at the bytes (9092 and `--port`).
    pub kafka_ports: Vec<u16>,
    /// Largest plausible frame size in bytes; a size prefix above it is a `frame_too_large`
    /// anomaly.
    pub max_frame_size: u32,
    /// Write a record for every Kafka message of every API (header fields, no body), not only
    /// for WriteTxnMarkers.
    pub all_apis: bool,
    /// Write records for the messages of these API keys only (`--api`, repeatable), decoding
    /// the bodies of those that have a decoder; empty: the default (WriteTxnMarkers).
    /// `all_apis` takes precedence.
    pub apis: Vec<i16>,
    /// Records of decoded messages keep the bytes of their frame
    /// (`KafkaMessage::frame_bytes`), for the `--format tree` view. Off by default: it copies
    /// every frame.
    pub keep_frames: bool,
    /// Message records list the packets their frame's bytes came in, and the connection's
    /// handshake (`KafkaMessage::packets`), for `--write-pcap`. Off by default: it notes every
    /// delivery.
    pub write_pcap: bool,
    /// The correlator keeps each request record until its response: the response record
    /// carries it (`KafkaMessage::request`), and a request that gets no response record comes
    /// back as an `Event::Unanswered` (for `--pair` and the filters). Off by default.
    pub hold_requests: bool,
    /// The transaction view (`--transactions`): the records also go through
    /// [`txn::TxnView`], whose transaction records go to the sink's `transaction`. Needs
    /// `hold_requests` and the transaction APIs among those decoded ([`txn::APIS`]).
    pub transactions: bool,
    /// Stop after this many packets (`-c N`, as tshark's): the capture is read no further,
    /// and the run ends as at the end of its input. `None`: read it all.
    pub max_packets: Option<u64>,
    /// UDP destination ports read as VXLAN (`--vxlan-port`; default 4789 and 8472).
    pub vxlan_ports: Vec<u16>,
    /// The memory budget for everything held across packets (`--memory-limit`; see
    /// [`memory`]). Clones of a `Config` share it: runs of several captures at once draw on
    /// one budget.
    pub memory: memory::Memory,
    /// Read the capture on a thread of its own, ahead of the decoding (classic pcap files
    /// not compressed; see `capture::read_capture_with`): the output is the same, the run
    /// takes a second core. Off by default; the command turns it on when a core is free.
    pub read_ahead: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            kafka_ports: vec![DEFAULT_KAFKA_PORT],
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            all_apis: false,
            apis: Vec::new(),
            keep_frames: false,
            write_pcap: false,
            hold_requests: false,
            transactions: false,
            max_packets: None,
            vxlan_ports: packet::DEFAULT_VXLAN_PORTS.to_vec(),
            memory: memory::Memory::default(),
            read_ahead: false,
        }
    }
}

/// Why a run could not be completed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input is not a pcap or pcapng capture.
    #[error("not a pcap or pcapng capture: {0}")]
    NotACapture(String),
    /// Reading the input failed.
    #[error("read error: {0}")]
    Read(io::Error),
    /// Writing a record failed (for example standard output was closed).
    #[error("write error: {0}")]
    Write(io::Error),
}

/// The stages of one capture's run, connected, and the run's statistics.
pub struct Pipeline {
    stages: Stages,
    txn: Option<txn::TxnView>,
    stats: Stats,
}

/// The state of the stages after the capture reader: packets, connections, Kafka.
struct Stages {
    decoder: packet::PacketDecoder,
    table: FlowTable<KafkaConn>,
    memory: memory::Memory,
    /// Rounds of connections finished for the memory budget, connections so finished, and
    /// whether the forgetting of released connections' stream indexes was reported.
    evictions: (u64, u64, bool),
    /// The capture time connection bookkeeping goes by.
    clock: flow::CaptureClock,
    /// Runs of packets dated far ahead that the clock refused ([`Stages::clock_jump`]).
    clock_jumps: u32,
    /// How far ahead (seconds; behind, below zero) the last run reported was, and whether a
    /// run as far off again was said to be a second clock.
    clock_offset: (Option<i64>, bool),
    shared: Shared,
    unsupported_link_types: HashSet<i32>,
    last: Location,
    /// `--write-pcap`: the packets of the IP fragments the segment at hand came in (empty
    /// for a segment of one packet).
    carried: Vec<u64>,
    /// The connections whose close is put off (`flow::Closing`), by their endpoints and
    /// connection space, with the frame number from which it no longer is, in that order.
    closing: Vec<(vocab::Endpoint, vocab::Endpoint, u32, u64)>,
}

impl Pipeline {
    /// A pipeline for one capture.
    pub fn new(config: &Config) -> Self {
        let stages = Stages::new(config);
        let mut stats = Stats::decoding(stages.shared.apis.selected(27));
        stats.transactions_followed = config.transactions;
        Pipeline {
            stages,
            txn: config
                .transactions
                .then(|| txn::TxnView::new(&config.memory)),
            stats,
        }
    }

    /// Takes one item from the capture reader; the records it completes go to `sink` at once,
    /// counted in the run's statistics.
    pub fn item(&mut self, item: CaptureItem<'_, '_>, sink: &mut dyn Sink) -> io::Result<()> {
        if let CaptureItem::Packet(p) = &item {
            if self.stats.packets == 0 {
                sink.capture_start(p.ts);
                self.stats.first_ts = Some(p.ts);
            }
            self.stats.last_ts = Some(p.ts);
            self.stats.packets += 1;
            self.stats.bytes += p.data.len() as u64;
            if p.data.len() < p.orig_len as usize && !p.cut_by_file_end {
                self.stats.cut_packets += 1;
                let len = u32::try_from(p.data.len()).unwrap_or(u32::MAX);
                self.stats.snapshot_length = self.stats.snapshot_length.max(len);
            }
            self.stages.shared.file_end = p.cut_by_file_end;
        }
        let mut out = Emitter::new(sink, &mut self.stats, self.txn.as_mut());
        match item {
            CaptureItem::Packet(p) => self.stages.packet(p, &mut out),
            CaptureItem::Problem(p) => {
                let loc = Location {
                    frame: p.after_frame,
                    ..self.stages.last
                };
                let a = Anomaly::new(p.kind, p.message.clone());
                out.push(Record {
                    loc,
                    event: Event::Anomaly(Box::new(a)),
                });
            }
        }
        out.result()
    }

    /// Ends the capture: finishes every open connection, in stream order, and writes what that
    /// produces. Returns the run's statistics.
    pub fn finish(mut self, sink: &mut dyn Sink) -> io::Result<Stats> {
        let s = &mut self.stages;
        let at = s.last;
        let mut out = Emitter::new(sink, &mut self.stats, self.txn.as_mut());
        s.fragments_missing(true, &mut out);
        s.end_put_off(None, &mut out);
        for mut c in s.table.drain_in_order() {
            finish_conn(&mut c, &at, End::CaptureEnded, &mut s.shared, &mut out);
        }
        out.finish_transactions(at);
        out.result()?;
        // Every held request was handed over or given up with its connection.
        debug_assert_eq!(s.shared.held_now, 0);
        self.stats.streams = s.table.streams();
        self.stats.frames = s.shared.counts.clone();
        let mut ports: Vec<u16> = s.shared.detected_ports.iter().copied().collect();
        ports.sort_unstable();
        self.stats.detected_ports = ports;
        let m = &s.memory;
        self.stats.memory_limit = m.limit();
        self.stats.memory_peak = m.peak();
        self.stats.memory_given_up = memory::Holding::ALL
            .iter()
            .map(|h| (h.as_str(), m.given_up(*h)))
            .filter(|(_, n)| *n > 0)
            .collect();
        Ok(self.stats)
    }
}

impl Stages {
    /// The `bad_timestamp` anomaly of packets dated far ahead of the capture clock (or behind
    /// it) that the packets after them contradicted (the first [`MAX_CLOCK_JUMPS`] such runs;
    /// the last says later ones are not reported), at `at`, the packet that contradicted them
    /// (so that its time is the capture's, as `--since` and `--until` judge it); a run as far
    /// off as the one before is said once to be a second clock, and no more are; a time
    /// outside the years 0000-9999 is reported as such already.
    #[cold]
    fn clock_jump(&mut self, jump: flow::ClockJump, at: &Location, out: &mut dyn RecordOut) {
        if !jump.ts.in_range() {
            return;
        }
        let loc = Location {
            stream: None,
            ..*at
        };
        // As far off as the last run, within 2 s: not a damaged time but a second clock (the
        // packets of an interface, or of a merged file, whose clock is that far off), said
        // once; its runs are not reported one by one.
        if let Some(prev) = self.clock_offset.0 {
            if jump.ahead_secs.abs_diff(prev) <= 2 {
                if !self.clock_offset.1 {
                    self.clock_offset.1 = true;
                    let message = format!(
                        "frame {} is dated {}, {} the packets around it, as the packets \
                         of an earlier bad_timestamp were: the capture interleaves packets of \
                         two clocks that far apart (interfaces with clocks apart, or merged \
                         captures); times and latencies between packets of the two are off by \
                         as much, those within one connection are not (later such packets are \
                         not reported)",
                        jump.frame,
                        jump.ts.to_rfc3339(),
                        how_far(&jump),
                    );
                    push_anomaly(out, loc, Anomaly::new(AnomalyKind::BadTimestamp, message));
                }
                return;
            }
        }
        self.clock_offset.0 = Some(jump.ahead_secs);
        self.clock_jumps = self.clock_jumps.saturating_add(1);
        if self.clock_jumps > MAX_CLOCK_JUMPS {
            return;
        }
        let after = match jump.packets {
            1 => String::new(),
            2 => " (and the packet after it)".to_string(),
            n => format!(" (and the {} packets after it)", n - 1),
        };
        let later = if self.clock_jumps == MAX_CLOCK_JUMPS {
            " (later such packets are not reported)"
        } else {
            ""
        };
        let message = format!(
            "frame {}{after} is dated {}: {} {} the packets before and after it, a \
             clock that jumped or a damaged time; latencies and transaction durations measured \
             to or from it are off by as much (idle connections are not timed by it){later}",
            jump.frame,
            jump.ts.to_rfc3339(),
            if jump.packets > 1 {
                "they are"
            } else {
                "it is"
            },
            how_far(&jump),
        );
        push_anomaly(out, loc, Anomaly::new(AnomalyKind::BadTimestamp, message));
    }

    fn new(config: &Config) -> Self {
        Stages {
            decoder: packet::PacketDecoder::new(&config.vxlan_ports, &config.memory),
            table: FlowTable::new(&config.memory),
            memory: config.memory.clone(),
            evictions: (0, 0, false),
            clock: flow::CaptureClock::default(),
            clock_jumps: 0,
            clock_offset: (None, false),
            shared: Shared {
                kafka_ports: config.kafka_ports.iter().copied().collect(),
                detected_ports: HashSet::new(),
                max_frame_size: config.max_frame_size,
                counts: FrameCounts::default(),
                apis: kafka::apis::ApiSelection::new(config.all_apis, &config.apis),
                keep_frames: config.keep_frames,
                write_pcap: config.write_pcap,
                hold_requests: config.hold_requests,
                held_seq: 0,
                held_now: 0,
                memory: config.memory.clone(),
                memory_reports: [0; memory::Holding::ALL.len()],
                file_end: false,
                versions_seen: Default::default(),
            },
            unsupported_link_types: HashSet::new(),
            closing: Vec::new(),
            last: Location {
                ts: Timestamp::default(),
                frame: 0,
                stream: None,
                tunnel: None,
            },
            carried: Vec::new(),
        }
    }

    fn packet(&mut self, p: &CapturePacket<'_>, out: &mut dyn RecordOut) {
        let loc = Location {
            ts: p.ts,
            frame: p.frame,
            stream: None,
            tunnel: None,
        };
        self.last = loc;
        // One call of `tcp` (so that it is inlined here): after the plain pass, or after the
        // tunnel pass for a packet the plain pass found no TCP in, or for the datagram its
        // fragment made whole.
        let mut datagram = None;
        let (seg, loc) = match packet::decode(p.linktype, p.data, p.orig_len) {
            Decoded::Tcp(seg) => (seg, loc),
            Decoded::Other | Decoded::Reassembled => match self.tunnelled(p, out) {
                Some(found) => found,
                None => {
                    datagram = self.decoder.take_reassembled();
                    let Some(found) = datagram.as_ref().and_then(|d| self.reassembled(d, out))
                    else {
                        return;
                    };
                    found
                }
            },
            // The file ends inside this packet's headers: its `truncated_capture` says so.
            Decoded::Anomaly { .. } if p.cut_by_file_end => return,
            Decoded::Anomaly { kind, message } => {
                if kind == AnomalyKind::UnsupportedLinkType {
                    if !self.unsupported_link_types.insert(p.linktype) {
                        return;
                    }
                    let message = format!("{message}; its packets are skipped (reported once)");
                    push_anomaly(out, loc, Anomaly::new(kind, message));
                } else {
                    push_anomaly(out, loc, Anomaly::new(kind, message));
                }
                return;
            }
        };
        if self.shared.write_pcap {
            if let Some(d) = &datagram {
                self.carried.clone_from(&d.datagram.frames);
            }
        }
        self.tcp(&seg, loc, out);
        self.carried.clear();
        if let Some(d) = datagram {
            self.decoder.recycle(d);
        }
    }

    /// The tunnel pass over a packet the plain pass found no TCP in: the TCP segment found
    /// inside a tunnel and its location (which names the tunnel), if any. A fragment that
    /// made its datagram whole leaves it in the decoder.
    #[inline(never)]
    fn tunnelled<'a>(
        &mut self,
        p: &CapturePacket<'a>,
        out: &mut dyn RecordOut,
    ) -> Option<(TcpSegment<'a>, Location)> {
        let decoded = self
            .decoder
            .decode_tunnelled(p.linktype, p.data, p.orig_len, p.ts.secs, p.frame);
        if self.decoder.has_missing() {
            self.fragments_missing(false, out);
        }
        self.found(decoded, out)
    }

    /// A datagram rebuilt from fragments, decoded: the TCP segment in it and its location.
    #[inline(never)]
    fn reassembled<'b>(
        &mut self,
        d: &'b packet::Reassembled,
        out: &mut dyn RecordOut,
    ) -> Option<(TcpSegment<'b>, Location)> {
        let decoded = self.decoder.decode_reassembled(d);
        self.found(decoded, out)
    }

    /// What the tunnel pass decoded: a segment and its location, with the tunnel it came in;
    /// an anomaly is written.
    fn found<'a>(
        &mut self,
        decoded: Decoded<'a>,
        out: &mut dyn RecordOut,
    ) -> Option<(TcpSegment<'a>, Location)> {
        match decoded {
            Decoded::Tcp(seg) if seg.space == 0 => Some((seg, self.last)),
            Decoded::Tcp(seg) => {
                let loc = Location {
                    tunnel: self.decoder.tunnel_of_last(),
                    ..self.last
                };
                if self.decoder.take_tunnel_limit() {
                    let message = format!(
                        "more than {} distinct tunnels in this capture: the connections of \
                         further tunnels share one space apart from plain traffic, and their \
                         records carry no tunnel (reported once)",
                        packet::MAX_TUNNELS
                    );
                    push_anomaly(
                        out,
                        self.last,
                        Anomaly::new(AnomalyKind::TunnelLimit, message),
                    );
                }
                Some((seg, loc))
            }
            Decoded::Other | Decoded::Reassembled => None,
            Decoded::Anomaly { kind, message } => {
                push_anomaly(out, self.last, Anomaly::new(kind, message));
                None
            }
        }
    }

    /// Writes a `fragment_missing` anomaly for each datagram given up since the last call;
    /// with `end`, first gives up every datagram still in reassembly.
    fn fragments_missing(&mut self, end: bool, out: &mut dyn RecordOut) {
        for message in self.decoder.take_missing(self.last.ts.secs, end) {
            push_anomaly(
                out,
                self.last,
                Anomaly::new(AnomalyKind::FragmentMissing, message),
            );
        }
    }

    /// Ends the closes put off (`flow::Closing`) whose wait is over at frame `frame` (all of
    /// them with `None`), each as it would have ended at its FIN's packet.
    #[cold]
    #[inline(never)]
    fn end_put_off(&mut self, frame: Option<u64>, out: &mut dyn RecordOut) {
        let due = self
            .closing
            .iter()
            .take_while(|c| frame.is_none_or(|f| c.3 <= f))
            .count();
        for (a, b, space, until) in self.closing.drain(..due) {
            let Some(conn) = self.table.get_mut(a, b, space) else {
                continue;
            };
            // Not a later connection of the same endpoints, whose close waits on its own.
            let Some(at) = conn
                .closing
                .as_ref()
                .filter(|c| c.until == until)
                .map(|c| c.at)
            else {
                continue;
            };
            let watched = conn.app.is_kafka();
            finish_conn(conn, &at, End::Closed, &mut self.shared, out);
            self.table.end(a, b, space, at.ts.secs, watched);
        }
    }

    fn tcp(&mut self, seg: &TcpSegment<'_>, at: Location, out: &mut dyn RecordOut) {
        if self.closing.first().is_some_and(|c| c.3 <= at.frame) {
            self.end_put_off(Some(at.frame), out);
        }
        let syn = Syn::of(seg.syn, seg.ack);
        // Connections note when they were seen by their packets' own time; sweeps for idle
        // ones go by the capture clock, which a lone packet far ahead does not move.
        let now = at.ts.secs;
        let clock = self.clock.observe(at.frame, &at.ts);
        if let Some(jump) = self.clock.take_refused() {
            self.clock_jump(jump, &at, out);
        }
        let Stages {
            table,
            shared,
            memory,
            evictions,
            carried,
            closing,
            ..
        } = self;
        if table.expiry_due(clock) {
            let in_use = memory.used();
            let gone = table.expire(clock);
            let released = gone.iter().filter(|(_, e)| *e == End::MemoryLimit).count() as u64;
            if released > 0 {
                for _ in 0..released {
                    memory.note_given_up(memory::Holding::Connections);
                }
                evictions.0 += 1;
                evictions.1 += released;
                // The 1st, 2nd, 4th, 8th ... round is reported: under lasting pressure a round
                // can come with every packet.
                if evictions.0.is_power_of_two() {
                    let (rounds, total, _) = *evictions;
                    let message = format!(
                        "the memory budget was nearly full ({} of {} in use): the {released} \
                         least recently seen connections were finished, with what they held \
                         (round {rounds}, {total} connections so far; rounds are reported at \
                         1, 2, 4, 8, ...; their later packets resume the same stream); {}",
                        memory::human(in_use),
                        memory::human(memory.limit()),
                        memory.advice()
                    );
                    push_anomaly(out, at, Anomaly::new(AnomalyKind::MemoryLimit, message));
                }
            }
            if table.take_forgotten() && !evictions.2 {
                evictions.2 = true;
                let message = format!(
                    "more than {} connections were finished while still open: the stream \
                     indexes of the oldest are forgotten, and a later packet of one of them \
                     starts a new stream (reported once); {}",
                    flow::MAX_RELEASED_CONNECTIONS,
                    memory.advice()
                );
                push_anomaly(out, at, Anomaly::new(AnomalyKind::MemoryLimit, message));
            }
            for (mut gone, end) in gone {
                finish_conn(&mut gone, &at, end, shared, out);
            }
        }
        let (src, dst) = (seg.src, seg.dst);
        let found = table.lookup(src, dst, seg.space, syn, SeqNum(seg.seq), now, |_| {
            KafkaConn::new([src.port, dst.port], syn, shared)
        });
        let Found::Conn(conn, old) = found else {
            // A late packet of a connection that ended.
            if !seg.payload.is_empty() {
                let late = (src, dst, seg.space, seg.seq, seg.payload.len());
                after_end(table, late, &at, out);
            }
            return;
        };
        if let Some(mut old) = old {
            finish_conn(&mut old, &at, End::Replaced, shared, out);
        }
        if !conn.app.is_ignored() {
            let dir = conn.dir_of(&src);
            // A segment held back for this packet (`flow::Parked`): taken after it when it
            // comes from the other direction (the bytes the held one acknowledged, most
            // often), before it otherwise.
            let ends = seg.fin || seg.rst;
            if conn.closing.is_some() && !seg.payload.is_empty() {
                goes_on_after_reset(conn, dir, seg.seq);
            }
            if conn.parked.is_some()
                && !ends
                && !shared.write_pcap
                && !seg.syn
                && seg.cut == 0
                && seg.ack
                && extend_parked(conn, dir, seg.seq, seg.ack_number, seg.payload, &at)
            {
                // The held segment's next bytes, which still wait for the other direction.
                return;
            }
            let after = conn.parked.is_some() && take_parked(conn, Some(dir), ends, shared, out);
            let conn_stream = conn.stream;
            let loc = Location {
                stream: Some((conn.stream, src, dst)),
                ..at
            };
            let syn_seen = conn.halves[dir.index()].syn_seen() || seg.syn;
            let Conn {
                halves,
                app,
                parked,
                ..
            } = &mut *conn;
            if shared.write_pcap {
                app.packet(dir, seg.syn, seg.ack, at.frame);
                if !carried.is_empty() {
                    app.fragmented(at.frame, carried);
                }
            }
            if halves[dir.index()].has_unseen() {
                // Its sender moved past bytes its peer acknowledged and the capture lacks.
                if let Some((len, origin)) = halves[dir.index()].passed_unseen(SeqNum(seg.seq)) {
                    let lost = Location {
                        frame: origin.frame,
                        ts: origin.ts,
                        ..loc
                    };
                    app.unseen_acked(dir, len, &lost);
                }
            }
            let mut ahead = 0;
            if seg.ack {
                // The acknowledgment speaks of the other direction: a hole it covers is a gap.
                let back = Location {
                    stream: Some((conn_stream, dst, src)),
                    ..at
                };
                let back_dir = dir.other();
                let other_syn = halves[back_dir.index()].syn_seen();
                let (back_half, half) = pair_mut(halves, back_dir);
                let peer = Peer::Half(half, Some(SeqNum(seg.seq)));
                ahead = back_half.acked(SeqNum(seg.ack_number), &mut |d| {
                    deliver(app, back_dir, other_syn, d, &back, peer, shared, out)
                });
            }
            let len = seg.payload.len();
            // It acknowledges bytes of the other direction not captured yet: held back for
            // the connection's next packet, when it can be (a pure acknowledgment, the most
            // common such packet, carries nothing to hold).
            if ahead > 0 {
                // Bytes of the other direction its peer received and the capture lacks (yet).
                let origin = Origin {
                    frame: at.frame,
                    ts: at.ts,
                };
                halves[dir.other().index()].note_unseen(ahead, origin);
            }
            let held = ahead > 0
                && len > 0
                && !after
                && !(seg.syn || seg.fin || seg.rst || seg.cut > 0)
                && {
                    // The segment's fields, not the segment: a reference to it would keep it
                    // out of registers on every packet's path.
                    *parked = park(
                        halves,
                        dir,
                        seg.seq,
                        seg.ack_number,
                        seg.payload,
                        &at,
                        memory,
                    );
                    parked.is_some()
                };
            if held {
                // Held back.
            } else if !seg.syn
                && !seg.fin
                && seg.cut == 0
                && !shared.write_pcap
                && len > 0
                && halves[dir.index()].is_next(SeqNum(seg.seq))
                && app.skip_inside(dir, len)
            {
                // The common case of a busy capture: the next bytes of a frame being skipped,
                // in order. This is what `segment` and `deliver` would do with them.
                halves[dir.index()].consumed_in_order(len as u64);
            } else {
                let (half, other) = pair_mut(halves, dir);
                let peer = Peer::Half(other, seg.ack.then_some(SeqNum(seg.ack_number)));
                half.segment(
                    SeqNum(seg.seq),
                    seg.syn,
                    seg.fin,
                    seg.payload,
                    seg.cut,
                    Origin {
                        frame: at.frame,
                        ts: at.ts,
                    },
                    memory,
                    &mut |d| deliver(app, dir, syn_seen, d, &loc, peer, shared, out),
                );
            }
            if after {
                // Taken once the bytes it acknowledged came, or it waited long enough.
                let caught_up = conn.parked.as_mut().is_some_and(|p| {
                    p.waited += 1;
                    p.waited >= flow::Parked::MAX_WAIT
                        || !conn.halves[p.dir.other().index()].acked_ahead(SeqNum(p.ack_number))
                });
                if caught_up {
                    take_parked(conn, None, true, shared, out);
                }
            }
        }
        if seg.fin || seg.rst || conn.closing.is_some() {
            let end = conn.flags(&src, SeqNum(seg.seq), seg.fin, seg.rst);
            if let Some(end) = end.filter(|&end| !put_off(conn, end, &at, seg.seq, closing)) {
                let watched = conn.app.is_kafka();
                finish_conn(conn, &at, end, shared, out);
                table.end(src, dst, seg.space, now, watched);
            }
        }
    }
}

/// How far off the packets of a clock jump were, for a message: `1.00 h behind`, `365.0 days
/// ahead of`.
fn how_far(jump: &flow::ClockJump) -> String {
    format!(
        "{} {}",
        txn::human_us(jump.ahead_secs.saturating_abs().saturating_mul(1_000_000)),
        if jump.ahead_secs < 0 {
            "behind"
        } else {
            "ahead of"
        }
    )
}

/// Whether the end `end` of `conn`, at the packet of `at`, is put off (`flow::Closing`) until
/// the capture's packet `Closing::WAIT_PACKETS` after it (noted in `closing`, the pipeline's
/// list): a close while a direction's FIN is ahead of bytes not captured yet, and a reset
/// (the segments in flight when it was sent still come). A reset that comes while a close is
/// put off ends the connection as at the FIN; any end that comes while a reset is put off
/// waits with it.
#[cold]
#[inline(never)]
fn put_off(
    conn: &mut Conn<KafkaConn>,
    end: End,
    at: &Location,
    seq: u32,
    closing: &mut Vec<(vocab::Endpoint, vocab::Endpoint, u32, u64)>,
) -> bool {
    let waiting = !conn.app.is_ignored()
        && match end {
            End::Closed => conn.halves.iter().any(|h| h.before_fin()),
            End::Reset => true,
            _ => false,
        };
    match &conn.closing {
        None if waiting => {
            let until = at.frame + flow::Closing::WAIT_PACKETS;
            conn.closing = Some(Box::new(flow::Closing {
                at: *at,
                until,
                end,
                seq,
            }));
            let [a, b] = conn.endpoints;
            closing.push((a, b, conn.space, until));
            true
        }
        Some(c) if c.end == End::Reset => at.frame < c.until,
        Some(c) => waiting && end == End::Closed && at.frame < c.until,
        None => false,
    }
}

/// Takes back the reset of `conn` put off (`flow::Closing`) when a segment of `dir` with a
/// payload starting at `seq` is its sender's next bytes, at or past the RST's sequence number:
/// the RST was not the connection's end (its peer answered it with a challenge ACK, RFC 5961
/// 3.2), and the connection goes on. (Bytes before the RST's sequence number were sent before
/// it and captured after it, `tcpdump -i any` on several cores: the reset stands.)
#[cold]
#[inline(never)]
fn goes_on_after_reset(conn: &mut Conn<KafkaConn>, dir: Direction, seq: u32) {
    let reset = conn
        .closing
        .as_ref()
        .is_some_and(|c| c.end == End::Reset && SeqNum(seq).diff(SeqNum(c.seq)) >= 0);
    if reset && conn.reset_by == Some(dir) && conn.halves[dir.index()].is_next(SeqNum(seq)) {
        conn.closing = None;
        conn.reset_by = None;
    }
}

/// `seg`, held back (`flow::Parked`): its acknowledgment covered bytes of the other direction
/// not captured yet (a response before its request). Only a segment in order in its own
/// direction, with a payload and no SYN, FIN, RST or snapshot-length cut, whose bytes the
/// budget takes; else `None`. (Its acknowledgment was taken: it covered nothing held.)
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn park(
    halves: &[flow::reassembly::HalfStream; 2],
    dir: Direction,
    seq: u32,
    ack_number: u32,
    payload: &[u8],
    at: &Location,
    memory: &memory::Memory,
) -> Option<Box<flow::Parked>> {
    if payload.is_empty() || !halves[dir.index()].is_next(SeqNum(seq)) {
        return None;
    }
    let mut charge = memory.charge(memory::Holding::OutOfOrder);
    if !charge.set(memory::alloc_cost(payload.len()) + std::mem::size_of::<flow::Parked>()) {
        return None;
    }
    Some(Box::new(flow::Parked {
        dir,
        seq,
        ack_number,
        waited: 0,
        payload: payload.to_vec(),
        joined: Vec::new(),
        frame: at.frame,
        ts: at.ts,
        tunnel: at.tunnel,
        charge,
    }))
}

/// Most bytes held back on a connection (`flow::Parked`) while the other direction catches up.
const MAX_PARKED: usize = 256 * 1024;

/// Adds `seg` to the segment held back on `conn` (`flow::Parked`) when it is that segment's
/// next bytes in the same direction and also acknowledges bytes of the other direction not
/// captured yet (a response of several segments, all before its request), up to
/// [`MAX_PARKED`] bytes whose charge the budget takes, or drops it when it is a copy of
/// bytes held; returns whether it did either.
/// (The segment comes by its fields, with no SYN nor snapshot-length cut, and its ACK set: a
/// reference to it would keep it out of registers on every packet's path.)
#[cold]
#[inline(never)]
fn extend_parked(
    conn: &mut Conn<KafkaConn>,
    dir: Direction,
    seq: u32,
    ack_number: u32,
    payload: &[u8],
    at: &Location,
) -> bool {
    let other_waits = conn.halves[dir.other().index()].acked_ahead(SeqNum(ack_number));
    let Some(p) = conn.parked.as_mut() else {
        return false;
    };
    // A copy of held bytes (a retransmission, or the same packet captured twice): dropped,
    // as reassembly drops a copy that agrees; the held segment waits on. One that agrees
    // with them and goes on (a retransmission that joined segments) adds what follows them.
    let from = SeqNum(seq).diff(SeqNum(p.seq));
    let mut seq = seq;
    let mut payload = payload;
    if p.dir == dir && other_waits && !payload.is_empty() && from >= 0 {
        let from = from as usize;
        if p.payload.get(from..from + payload.len()) == Some(payload) {
            return true;
        }
        if let Some(held) = p.payload.get(from..) {
            if payload.starts_with(held) {
                seq = SeqNum(seq).plus(held.len() as u64).0;
                payload = &payload[held.len()..];
            }
        }
    }
    let next = SeqNum(p.seq).plus(p.payload.len() as u64);
    if p.dir != dir
        || !other_waits
        || payload.is_empty()
        || SeqNum(seq) != next
        || p.payload.len() + payload.len() > MAX_PARKED
    {
        return false;
    }
    let len = p.payload.len() + payload.len();
    let cost = memory::alloc_cost(len)
        + memory::vec_cost::<(usize, u64, vocab::Timestamp)>(p.joined.len() + 1)
        + std::mem::size_of::<flow::Parked>();
    if !p.charge.set(cost) {
        return false;
    }
    p.joined.push((p.payload.len(), at.frame, at.ts));
    p.payload.extend_from_slice(payload);
    p.ack_number = ack_number;
    true
}

/// Takes the bytes of the segment held back on `conn` (`flow::Parked`) as they would have
/// been taken when it came (its records keep its frame and time): when `all`, or when it was
/// sent in direction `dir` (a packet of that direction comes: it goes first); returns `true`
/// when it is left held (a packet of the other direction comes: it goes after that one).
#[cold]
#[inline(never)]
fn take_parked(
    conn: &mut Conn<KafkaConn>,
    dir: Option<Direction>,
    all: bool,
    shared: &mut Shared,
    out: &mut dyn RecordOut,
) -> bool {
    let Some(p) = conn.parked.take_if(|p| all || Some(p.dir) == dir) else {
        return conn.parked.is_some();
    };
    let [src, dst] = match p.dir {
        Direction::Forward => conn.endpoints,
        Direction::Back => [conn.endpoints[1], conn.endpoints[0]],
    };
    let at = Location {
        ts: p.ts,
        frame: p.frame,
        stream: Some((conn.stream, src, dst)),
        tunnel: p.tunnel,
    };
    let Conn { halves, app, .. } = conn;
    let syn_seen = halves[p.dir.index()].syn_seen();
    let memory = shared.memory.clone();
    // Each segment with its own packet.
    let mut starts = vec![(0, p.frame, p.ts)];
    starts.extend(p.joined.iter().copied());
    for (i, &(from, frame, ts)) in starts.iter().enumerate() {
        let to = starts.get(i + 1).map_or(p.payload.len(), |n| n.0);
        let at = Location { ts, frame, ..at };
        let origin = Origin { frame, ts };
        let (half, other) = pair_mut(halves, p.dir);
        let peer = Peer::Half(other, Some(SeqNum(p.ack_number)));
        half.segment(
            SeqNum(p.seq).plus(from as u64),
            false,
            false,
            &p.payload[from..to],
            0,
            origin,
            &memory,
            &mut |d| deliver(app, p.dir, syn_seen, d, &at, peer, shared, out),
        );
    }
    false
}

/// Most runs of packets dated far ahead reported as `bad_timestamp` (8).
const MAX_CLOCK_JUMPS: u32 = 8;

/// A payload (`len` bytes at `seq`, from `src` to `dst` in connection space `space`) of a
/// connection of `table` that ended, at `at`: a `gap` the first time its bytes go
/// past what their direction had delivered by the end (sent or captured after it), since they
/// are not read; retransmissions of bytes read before stay unsaid, as do the connection's later
/// bytes once one was said.
#[cold]
#[inline(never)]
fn after_end(
    table: &mut FlowTable<KafkaConn>,
    (src, dst, space, seq, len): (vocab::Endpoint, vocab::Endpoint, u32, u32, usize),
    at: &Location,
    out: &mut dyn RecordOut,
) {
    let Some((stream, bytes, reset)) = table.late_bytes((src, dst, space), SeqNum(seq), len) else {
        return;
    };
    let loc = Location {
        stream: Some((stream, src, dst)),
        ..*at
    };
    let message = format!(
        "{bytes} byte{} came after the connection's end (it was {}) and {} not read: Kafka \
         messages in them are not decoded (a connection reused without its SYN captured, or \
         an RST its peer ignored; said once for the connection: its later bytes are not \
         said)",
        if bytes == 1 { "" } else { "s" },
        if reset { "reset" } else { "closed" },
        if bytes == 1 { "is" } else { "are" },
    );
    push_anomaly(out, loc, Anomaly::new(AnomalyKind::Gap, message));
}

fn push_anomaly(out: &mut dyn RecordOut, loc: Location, a: Anomaly) {
    out.push(Record {
        loc,
        event: Event::Anomaly(Box::new(a)),
    });
}

/// What shows whether the capture lacks bytes of the direction opposite to a delivery that
/// were sent (`Session::data`'s `peer_lacks`), asked only when a response might show its
/// request ended early.
#[derive(Clone, Copy)]
enum Peer<'a> {
    /// That direction's half stream, and a sequence number it is known to have reached
    /// ([`HalfStream::lacking`]).
    Half(&'a HalfStream, Option<SeqNum>),
    /// Not known (bytes flushed at a connection's end): taken as lacking any number of bytes.
    Unknown,
}

/// The half stream of direction `dir`, to change, and the other one, to read.
fn pair_mut(halves: &mut [HalfStream; 2], dir: Direction) -> (&mut HalfStream, &HalfStream) {
    let [forward, back] = halves;
    match dir {
        Direction::Forward => (forward, back),
        Direction::Back => (back, forward),
    }
}

/// Hands one delivery of direction `dir` to the connection's Kafka state; `peer` tells what
/// the capture may lack of the other direction.
#[allow(clippy::too_many_arguments)]
fn deliver(
    app: &mut KafkaConn,
    dir: Direction,
    syn_seen: bool,
    d: Delivery<'_>,
    loc: &Location,
    peer: Peer<'_>,
    shared: &mut Shared,
    out: &mut dyn RecordOut,
) {
    let peer_lacks = || match peer {
        Peer::Half(half, reached) => half.lacking(reached),
        Peer::Unknown => u64::MAX,
    };
    match d {
        // Released bytes complete with the packet at hand; `--write-pcap` still names the one
        // that carried them.
        Delivery::Data(b) | Delivery::Released(b, _) => {
            if let (Delivery::Released(_, origin), true) = (&d, shared.write_pcap) {
                app.carried_by(dir, origin.frame);
            }
            app.data(dir, syn_seen, b, loc, &peer_lacks, shared, out)
        }
        // Held bytes belong to the packet that carried them, not to the one that released them.
        Delivery::Held(b, origin) => {
            let held = Location {
                frame: origin.frame,
                ts: origin.ts,
                ..*loc
            };
            app.data(dir, syn_seen, b, &held, &peer_lacks, shared, out)
        }
        Delivery::Gap(len) => app.gap(
            dir,
            syn_seen,
            Lost::new(len, Missing::Gap),
            loc,
            shared,
            out,
        ),
        Delivery::GivenUp { len, memory } => {
            let lost = Lost::new(len, Missing::GivenUp { memory });
            app.gap(dir, syn_seen, lost, loc, shared, out)
        }
        Delivery::Cut(len) => {
            let why = if shared.file_end {
                Missing::FileEnd
            } else {
                Missing::Cut
            };
            app.gap(dir, syn_seen, Lost::new(len, why), loc, shared, out)
        }
        Delivery::HeldCut(len) => {
            let lost = Lost::new(len, Missing::HeldCut);
            app.gap(dir, syn_seen, lost, loc, shared, out)
        }
        Delivery::OverlapMismatch { at, len } => app.overlap_mismatch(at, len, loc, out),
    }
}

/// Flushes both directions of `conn` (held segments become deliveries, holes gaps) and tells
/// the application the connection ended.
fn finish_conn(
    conn: &mut Conn<KafkaConn>,
    at: &Location,
    end: End,
    shared: &mut Shared,
    out: &mut dyn RecordOut,
) {
    // A close or reset put off (`flow::Closing`) ends as it would have at its FIN's or RST's
    // packet, whatever ends it now (its bytes came, its wait, an RST after it, idleness, the
    // capture's end).
    let fin_at;
    let (at, end) = match conn.closing.take() {
        Some(c) => {
            fin_at = c.at;
            (&fin_at, c.end)
        }
        None => (at, end),
    };
    if conn.parked.is_some() && !conn.app.is_ignored() {
        // Held back for a packet that never came.
        take_parked(conn, None, true, shared, out);
    }
    let why = conn.end_reason(end);
    let Conn {
        halves,
        app,
        endpoints,
        stream,
        ..
    } = conn;
    let locs = [
        Location {
            stream: Some((*stream, endpoints[0], endpoints[1])),
            ..*at
        },
        Location {
            stream: Some((*stream, endpoints[1], endpoints[0])),
            ..*at
        },
    ];
    if !app.is_ignored() {
        let released = matches!(end, End::Evicted | End::MemoryLimit);
        if !released {
            // Bytes the peer acknowledged and the capture never gave are lost now (the sender
            // sent nothing past them, say its last packets were lost too): responses to
            // requests they held may still be taken as such.
            for (dir, half) in Direction::BOTH.into_iter().zip(halves.iter_mut()) {
                if let Some((len, origin)) = half.take_unseen() {
                    let lost = Location {
                        frame: origin.frame,
                        ts: origin.ts,
                        ..locs[dir.index()]
                    };
                    app.lost_at_end(dir, len, &lost, out);
                }
            }
        }
        for (dir, half) in Direction::BOTH.into_iter().zip(halves.iter_mut()) {
            let syn_seen = half.syn_seen();
            half.flush(&mut |d| {
                deliver(
                    app,
                    dir,
                    syn_seen,
                    d,
                    &locs[dir.index()],
                    Peer::Unknown,
                    shared,
                    out,
                )
            });
        }
        let seen = (!released).then(|| [halves[0].seen(), halves[1].seen()]);
        app.finish([&locs[0], &locs[1]], seen, &why, shared, out);
    }
}

/// Reads one capture from `input` and writes its records to `sink`.
///
/// Errors: [`Error::NotACapture`] when the input is not pcap or pcapng, [`Error::Read`] on an
/// I/O error while reading, [`Error::Write`] when the sink fails. Damage inside the capture is
/// not an error: it becomes anomaly records.
pub fn run<R: Read + Send>(input: R, config: &Config, sink: &mut dyn Sink) -> Result<Stats, Error> {
    drive(config, sink, Stream(input, config.read_ahead))
}

/// Like [`run`], on a capture held in memory (for fuzzing, or a library user's bytes).
pub fn run_slice(data: &[u8], config: &Config, sink: &mut dyn Sink) -> Result<Stats, Error> {
    drive(config, sink, InMemory(data))
}

/// A capture reader that hands each item to a callback: statically dispatched, so that the
/// pipeline's per-packet work is compiled into the reading loop (no indirect call per packet).
trait ReadCapture {
    fn read<F>(self, on_item: F) -> Result<(), CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>;
}

/// A capture streamed from a reader, read ahead on a thread of its own or not
/// (`Config::read_ahead`).
struct Stream<R>(R, bool);

impl<R: Read + Send> ReadCapture for Stream<R> {
    fn read<F>(self, on_item: F) -> Result<(), CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        capture::read_capture_with(self.0, self.1, on_item)
    }
}

/// A capture held in memory.
struct InMemory<'a>(&'a [u8]);

impl ReadCapture for InMemory<'_> {
    fn read<F>(self, on_item: F) -> Result<(), CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        capture::read_capture_slice(self.0, on_item)
    }
}

/// Connects a capture reader (which hands each item to its callback) to a pipeline.
fn drive<C: ReadCapture>(config: &Config, sink: &mut dyn Sink, capture: C) -> Result<Stats, Error> {
    let mut pipeline = Pipeline::new(config);
    let mut write_error: Option<io::Error> = None;
    let mut counted = false;
    let r = capture.read(|item| {
        if config
            .max_packets
            .is_some_and(|n| pipeline.stats.packets >= n)
        {
            // `-c N`: the reading stops here, as at the end of the input.
            counted = true;
            return Err(io::Error::other("packet count reached"));
        }
        pipeline.item(item, sink).map_err(|e| {
            let kind = e.kind();
            write_error = Some(e);
            io::Error::new(kind, "output failed")
        })
    });
    if let Some(e) = write_error {
        return Err(Error::Write(e));
    }
    match r {
        Ok(()) => {}
        Err(_) if counted => {}
        Err(CaptureError::NotACapture(m)) => return Err(Error::NotACapture(m)),
        Err(CaptureError::Io(e)) => return Err(Error::Read(e)),
    }
    pipeline.finish(sink).map_err(Error::Write)
}
