//! Test support: builds TCP packets, wraps them in every link layer kafka-pcap reads, and writes
//! them into classic pcap and pcapng files, byte by byte from the format specifications
//! (tcpdump.org "pcap" and "Link-layer header types", draft-ietf-opsawg-pcapng). Nothing here
//! uses kafka-pcap's own reader, so a file written here is an independent input.
//!
//! Also: [`run_capture`], which runs the library on a capture and returns the NDJSON lines as
//! JSON values, and [`Conversation`], a whole TCP connection (handshake, payloads, FINs) with
//! consistent sequence and acknowledgement numbers.

#![allow(dead_code)]

pub mod enc;
pub mod frames;
pub mod tunnels;

use etherparse::PacketBuilder;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

// ---------------------------------------------------------------------------------------------
// TCP/IP packets
// ---------------------------------------------------------------------------------------------

/// TCP flags of a built segment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags {
    pub syn: bool,
    pub ack: bool,
    pub fin: bool,
    pub rst: bool,
    pub psh: bool,
}

impl Flags {
    pub const SYN: Flags = Flags {
        syn: true,
        ack: false,
        fin: false,
        rst: false,
        psh: false,
    };
    pub const SYN_ACK: Flags = Flags {
        syn: true,
        ack: true,
        fin: false,
        rst: false,
        psh: false,
    };
    pub const ACK: Flags = Flags {
        syn: false,
        ack: true,
        fin: false,
        rst: false,
        psh: false,
    };
    pub const PSH_ACK: Flags = Flags {
        syn: false,
        ack: true,
        fin: false,
        rst: false,
        psh: true,
    };
    pub const FIN_ACK: Flags = Flags {
        syn: false,
        ack: true,
        fin: true,
        rst: false,
        psh: false,
    };
    pub const RST: Flags = Flags {
        syn: false,
        ack: false,
        fin: false,
        rst: true,
        psh: false,
    };
}

/// A raw IPv4 or IPv6 packet carrying one TCP segment (no link-layer header). `ack` is written
/// only when `flags.ack` is set. Both addresses must be of the same IP version.
#[allow(clippy::too_many_arguments)]
pub fn tcp_packet(
    src: IpAddr,
    src_port: u16,
    dst: IpAddr,
    dst_port: u16,
    seq: u32,
    ack: u32,
    flags: Flags,
    payload: &[u8],
) -> Vec<u8> {
    let ip = match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => PacketBuilder::ipv4(s.octets(), d.octets(), 64),
        (IpAddr::V6(s), IpAddr::V6(d)) => PacketBuilder::ipv6(s.octets(), d.octets(), 64),
        _ => panic!("tcp_packet: {src} and {dst} are of different IP versions"),
    };
    let mut b = ip.tcp(src_port, dst_port, seq, 65535);
    if flags.syn {
        b = b.syn();
    }
    if flags.ack {
        b = b.ack(ack);
    }
    if flags.fin {
        b = b.fin();
    }
    if flags.rst {
        b = b.rst();
    }
    if flags.psh {
        b = b.psh();
    }
    let mut out = Vec::with_capacity(b.size(payload.len()));
    b.write(&mut out, payload)
        .expect("etherparse writes the packet");
    out
}

/// The EtherType of a raw IP packet, from its version nibble.
pub fn ether_type_of(ip: &[u8]) -> u16 {
    match ip.first().map(|b| b >> 4) {
        Some(4) => 0x0800,
        Some(6) => 0x86dd,
        other => panic!("not an IP packet (version {other:?})"),
    }
}

/// Whether a raw IP packet is IPv6.
pub fn is_ipv6(ip: &[u8]) -> bool {
    ether_type_of(ip) == 0x86dd
}

// ---------------------------------------------------------------------------------------------
// Link layers
// ---------------------------------------------------------------------------------------------

/// `AF_INET` on every system.
pub const AF_INET: u32 = 2;
/// `AF_INET6` on Linux.
pub const AF_INET6_LINUX: u32 = 10;
/// `AF_INET6` on NetBSD, OpenBSD and BSD/OS (and the value Wireshark writes).
pub const AF_INET6_BSD: u32 = 24;
/// `AF_INET6` on FreeBSD and DragonFly.
pub const AF_INET6_FREEBSD: u32 = 28;
/// `AF_INET6` on macOS / Darwin.
pub const AF_INET6_DARWIN: u32 = 30;
/// Every IPv6 address family value seen in NULL / LOOP headers.
pub const AF_INET6_ALL: [u32; 4] = [
    AF_INET6_BSD,
    AF_INET6_FREEBSD,
    AF_INET6_DARWIN,
    AF_INET6_LINUX,
];

const DST_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x02];
const SRC_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];

/// Ethernet II (linktype 1).
pub fn ethernet(ip: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(14 + ip.len());
    v.extend_from_slice(&DST_MAC);
    v.extend_from_slice(&SRC_MAC);
    v.extend_from_slice(&ether_type_of(ip).to_be_bytes());
    v.extend_from_slice(ip);
    v
}

/// Ethernet II with one 802.1Q tag (TPID 0x8100, VLAN `vid`) (linktype 1).
pub fn vlan(vid: u16, ip: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(18 + ip.len());
    v.extend_from_slice(&DST_MAC);
    v.extend_from_slice(&SRC_MAC);
    v.extend_from_slice(&0x8100u16.to_be_bytes());
    v.extend_from_slice(&(vid & 0x0fff).to_be_bytes());
    v.extend_from_slice(&ether_type_of(ip).to_be_bytes());
    v.extend_from_slice(ip);
    v
}

/// Ethernet II with 802.1ad QinQ tags: outer TPID 0x88a8 (VLAN `outer`), inner TPID 0x8100
/// (VLAN `inner`) (linktype 1).
pub fn qinq(outer: u16, inner: u16, ip: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(22 + ip.len());
    v.extend_from_slice(&DST_MAC);
    v.extend_from_slice(&SRC_MAC);
    v.extend_from_slice(&0x88a8u16.to_be_bytes());
    v.extend_from_slice(&(outer & 0x0fff).to_be_bytes());
    v.extend_from_slice(&0x8100u16.to_be_bytes());
    v.extend_from_slice(&(inner & 0x0fff).to_be_bytes());
    v.extend_from_slice(&ether_type_of(ip).to_be_bytes());
    v.extend_from_slice(ip);
    v
}

/// Linux cooked capture v1 (linktype 113): packet type, ARPHRD type, address length, 8 bytes
/// of address, protocol (an EtherType) at offset 14; 16 bytes in all.
pub fn sll(ip: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(16 + ip.len());
    v.extend_from_slice(&0u16.to_be_bytes()); // packet type: to us
    v.extend_from_slice(&1u16.to_be_bytes()); // ARPHRD_ETHER
    v.extend_from_slice(&6u16.to_be_bytes()); // address length
    v.extend_from_slice(&SRC_MAC);
    v.extend_from_slice(&[0, 0]); // address padding to 8 bytes
    v.extend_from_slice(&ether_type_of(ip).to_be_bytes());
    assert_eq!(v.len(), 16);
    v.extend_from_slice(ip);
    v
}

/// Linux cooked capture v2 (linktype 276): protocol (an EtherType) at offset 0, reserved,
/// interface index, ARPHRD type, packet type, address length, 8 bytes of address; 20 bytes.
pub fn sll2(ip: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(20 + ip.len());
    v.extend_from_slice(&ether_type_of(ip).to_be_bytes());
    v.extend_from_slice(&0u16.to_be_bytes()); // reserved
    v.extend_from_slice(&1u32.to_be_bytes()); // interface index
    v.extend_from_slice(&1u16.to_be_bytes()); // ARPHRD_ETHER
    v.push(4); // packet type: outgoing
    v.push(6); // address length
    v.extend_from_slice(&SRC_MAC);
    v.extend_from_slice(&[0, 0]);
    assert_eq!(v.len(), 20);
    v.extend_from_slice(ip);
    v
}

/// BSD loopback NULL (linktype 0) as written by a little-endian host: the address family as a
/// 4-byte little-endian integer.
pub fn null_le(family: u32, ip: &[u8]) -> Vec<u8> {
    let mut v = family.to_le_bytes().to_vec();
    v.extend_from_slice(ip);
    v
}

/// BSD loopback NULL (linktype 0) as written by a big-endian host.
pub fn null_be(family: u32, ip: &[u8]) -> Vec<u8> {
    let mut v = family.to_be_bytes().to_vec();
    v.extend_from_slice(ip);
    v
}

/// OpenBSD loopback LOOP (linktype 108): the address family in network byte order.
pub fn loop_header(family: u32, ip: &[u8]) -> Vec<u8> {
    null_be(family, ip)
}

/// A link layer and the linktype value a capture file names it with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// Ethernet II, linktype 1.
    Ethernet,
    /// Ethernet II with one 802.1Q tag, linktype 1.
    Vlan,
    /// Ethernet II with QinQ (0x88a8 + 0x8100) tags, linktype 1.
    QinQ,
    /// Linux SLL, linktype 113.
    Sll,
    /// Linux SLL2, linktype 276.
    Sll2,
    /// BSD NULL with this family, little-endian host, linktype 0.
    NullLe(u32),
    /// BSD NULL with this family, big-endian host, linktype 0.
    NullBe(u32),
    /// LOOP with this family, linktype 108.
    Loop(u32),
    /// Raw IP, linktype 101 (IPv4 or IPv6).
    Raw,
    /// Raw IPv4, linktype 228.
    Ipv4,
    /// Raw IPv6, linktype 229.
    Ipv6,
}

impl Link {
    /// The `LINKTYPE_` value.
    pub fn linktype(self) -> u16 {
        match self {
            Link::Ethernet | Link::Vlan | Link::QinQ => 1,
            Link::Sll => 113,
            Link::Sll2 => 276,
            Link::NullLe(_) | Link::NullBe(_) => 0,
            Link::Loop(_) => 108,
            Link::Raw => 101,
            Link::Ipv4 => 228,
            Link::Ipv6 => 229,
        }
    }

    /// The packet `ip` (raw IPv4 or IPv6) with this link-layer header in front.
    pub fn wrap(self, ip: &[u8]) -> Vec<u8> {
        match self {
            Link::Ethernet => ethernet(ip),
            Link::Vlan => vlan(100, ip),
            Link::QinQ => qinq(200, 300, ip),
            Link::Sll => sll(ip),
            Link::Sll2 => sll2(ip),
            Link::NullLe(f) => null_le(f, ip),
            Link::NullBe(f) => null_be(f, ip),
            Link::Loop(f) => loop_header(f, ip),
            Link::Raw => ip.to_vec(),
            Link::Ipv4 => {
                assert!(!is_ipv6(ip), "linktype 228 carries IPv4 only");
                ip.to_vec()
            }
            Link::Ipv6 => {
                assert!(is_ipv6(ip), "linktype 229 carries IPv6 only");
                ip.to_vec()
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Byte order
// ---------------------------------------------------------------------------------------------

/// Byte order of a capture file (or a pcapng section).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    Little,
    Big,
}

fn put_u16(v: &mut Vec<u8>, e: Endian, x: u16) {
    match e {
        Endian::Little => v.extend_from_slice(&x.to_le_bytes()),
        Endian::Big => v.extend_from_slice(&x.to_be_bytes()),
    }
}

fn put_u32(v: &mut Vec<u8>, e: Endian, x: u32) {
    match e {
        Endian::Little => v.extend_from_slice(&x.to_le_bytes()),
        Endian::Big => v.extend_from_slice(&x.to_be_bytes()),
    }
}

fn put_u64(v: &mut Vec<u8>, e: Endian, x: u64) {
    match e {
        Endian::Little => v.extend_from_slice(&x.to_le_bytes()),
        Endian::Big => v.extend_from_slice(&x.to_be_bytes()),
    }
}

fn pad4(v: &mut Vec<u8>) {
    while v.len() % 4 != 0 {
        v.push(0);
    }
}

// ---------------------------------------------------------------------------------------------
// Classic pcap
// ---------------------------------------------------------------------------------------------

/// Timestamp resolution of a classic pcap file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// Magic `a1b2c3d4`: the fraction is in microseconds.
    Micro,
    /// Magic `a1b23c4d`: the fraction is in nanoseconds.
    Nano,
}

/// Writes a classic pcap file in memory: the 24-byte global header, then 16-byte record
/// headers (ts_sec, ts_frac, incl_len, orig_len) each followed by the captured bytes.
#[derive(Debug, Clone)]
pub struct PcapWriter {
    buf: Vec<u8>,
    endian: Endian,
}

impl PcapWriter {
    /// The global header: magic, version 2.4, thiszone 0, sigfigs 0, `snaplen`, `linktype`.
    pub fn new(endian: Endian, resolution: Resolution, linktype: u32, snaplen: u32) -> Self {
        let mut buf = Vec::new();
        let magic = match resolution {
            Resolution::Micro => 0xa1b2_c3d4,
            Resolution::Nano => 0xa1b2_3c4d,
        };
        put_u32(&mut buf, endian, magic);
        put_u16(&mut buf, endian, 2);
        put_u16(&mut buf, endian, 4);
        put_u32(&mut buf, endian, 0); // thiszone
        put_u32(&mut buf, endian, 0); // sigfigs
        put_u32(&mut buf, endian, snaplen);
        put_u32(&mut buf, endian, linktype);
        assert_eq!(buf.len(), 24);
        PcapWriter { buf, endian }
    }

    /// One record: `ts_frac` is in the file's unit (microseconds or nanoseconds); `data` the
    /// captured bytes; `orig_len` the length on the wire.
    pub fn record(&mut self, ts_sec: u32, ts_frac: u32, data: &[u8], orig_len: u32) -> &mut Self {
        let e = self.endian;
        put_u32(&mut self.buf, e, ts_sec);
        put_u32(&mut self.buf, e, ts_frac);
        put_u32(&mut self.buf, e, data.len() as u32);
        put_u32(&mut self.buf, e, orig_len);
        self.buf.extend_from_slice(data);
        self
    }

    /// One record captured whole (`orig_len` = `data.len()`).
    pub fn packet(&mut self, ts_sec: u32, ts_frac: u32, data: &[u8]) -> &mut Self {
        self.record(ts_sec, ts_frac, data, data.len() as u32)
    }

    /// Appends arbitrary bytes (to damage the file on purpose).
    pub fn raw(&mut self, bytes: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(bytes);
        self
    }

    /// The file so far.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The file.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

// ---------------------------------------------------------------------------------------------
// pcapng
// ---------------------------------------------------------------------------------------------

/// Section Header Block type.
pub const SHB_TYPE: u32 = 0x0a0d_0d0a;
/// Interface Description Block type.
pub const IDB_TYPE: u32 = 0x0000_0001;
/// Enhanced Packet Block type.
pub const EPB_TYPE: u32 = 0x0000_0006;
/// Byte-order magic of the Section Header Block.
pub const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;
/// `opt_endofopt`.
pub const OPT_ENDOFOPT: u16 = 0;
/// `if_tsresol`.
pub const IF_TSRESOL: u16 = 9;

/// Writes a pcapng file in memory, block by block. Each [`PcapngWriter::section`] starts a
/// new section (its own byte order, its interfaces numbered from 0 again).
#[derive(Debug, Clone, Default)]
pub struct PcapngWriter {
    buf: Vec<u8>,
    endian: Option<Endian>,
    /// Units per second of each interface of the current section.
    interfaces: Vec<u64>,
}

impl PcapngWriter {
    /// An empty file; call [`PcapngWriter::section`] first.
    pub fn new() -> Self {
        Self::default()
    }

    fn endian(&self) -> Endian {
        self.endian.expect("pcapng: write a section header first")
    }

    /// A generic block: type, total length, `body` (padded to 32 bits), total length again.
    pub fn block(&mut self, block_type: u32, body: &[u8]) -> &mut Self {
        let e = self.endian();
        let mut body = body.to_vec();
        pad4(&mut body);
        let total = 12 + body.len() as u32;
        put_u32(&mut self.buf, e, block_type);
        put_u32(&mut self.buf, e, total);
        self.buf.extend_from_slice(&body);
        put_u32(&mut self.buf, e, total);
        self
    }

    /// A Section Header Block of byte order `endian`: byte-order magic, version 1.0, section
    /// length -1 (unknown), no options.
    pub fn section(&mut self, endian: Endian) -> &mut Self {
        self.endian = Some(endian);
        self.interfaces.clear();
        let mut body = Vec::new();
        put_u32(&mut body, endian, BYTE_ORDER_MAGIC);
        put_u16(&mut body, endian, 1);
        put_u16(&mut body, endian, 0);
        put_u64(&mut body, endian, u64::MAX); // -1
        self.block(SHB_TYPE, &body)
    }

    /// An Interface Description Block; `tsresol` is the `if_tsresol` option value (absent:
    /// microseconds). Returns the interface's id within the section.
    pub fn interface(&mut self, linktype: u16, snaplen: u32, tsresol: Option<u8>) -> u32 {
        let e = self.endian();
        let mut body = Vec::new();
        put_u16(&mut body, e, linktype);
        put_u16(&mut body, e, 0); // reserved
        put_u32(&mut body, e, snaplen);
        if let Some(r) = tsresol {
            put_u16(&mut body, e, IF_TSRESOL);
            put_u16(&mut body, e, 1);
            body.push(r);
            pad4(&mut body);
            put_u16(&mut body, e, OPT_ENDOFOPT);
            put_u16(&mut body, e, 0);
        }
        self.block(IDB_TYPE, &body);
        let per_sec = match tsresol {
            None => 1_000_000,
            Some(r) if r & 0x80 == 0 => 10u64.pow(u32::from(r)),
            Some(r) => 1u64 << (r & 0x7f),
        };
        self.interfaces.push(per_sec);
        (self.interfaces.len() - 1) as u32
    }

    /// An Enhanced Packet Block: interface id, 64-bit timestamp `ts` in the interface's units,
    /// captured length, `orig_len`, the bytes padded to 32 bits, no options.
    pub fn packet(&mut self, interface: u32, ts: u64, data: &[u8], orig_len: u32) -> &mut Self {
        let e = self.endian();
        let mut body = Vec::new();
        put_u32(&mut body, e, interface);
        put_u32(&mut body, e, (ts >> 32) as u32);
        put_u32(&mut body, e, ts as u32);
        put_u32(&mut body, e, data.len() as u32);
        put_u32(&mut body, e, orig_len);
        body.extend_from_slice(data);
        self.block(EPB_TYPE, &body)
    }

    /// An Enhanced Packet Block captured whole, at `secs` plus `frac` units of the interface's
    /// resolution (the interface must have been described by this writer).
    pub fn packet_at(&mut self, interface: u32, secs: u64, frac: u64, data: &[u8]) -> &mut Self {
        let per_sec = *self
            .interfaces
            .get(interface as usize)
            .expect("pcapng: packet_at on an interface this section did not describe");
        assert!(frac < per_sec, "fraction beyond one second");
        self.packet(interface, secs * per_sec + frac, data, data.len() as u32)
    }

    /// The file so far.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The file.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

// ---------------------------------------------------------------------------------------------
// Running the library
// ---------------------------------------------------------------------------------------------

/// Runs kafka-pcap with the default configuration on `bytes` and returns every output line
/// parsed as JSON.
pub fn run_capture(bytes: &[u8]) -> Vec<serde_json::Value> {
    run_capture_with(bytes, &kafka_pcap::Config::default())
}

/// [`run_capture`] with a configuration.
pub fn run_capture_with(bytes: &[u8], config: &kafka_pcap::Config) -> Vec<serde_json::Value> {
    let mut sink = kafka_pcap::output::NdjsonWriter::new(Vec::<u8>::new(), None);
    kafka_pcap::run(bytes, config, &mut sink).expect("kafka_pcap::run failed");
    let out = sink.into_inner().expect("flushing a Vec cannot fail");
    let text = String::from_utf8(out).expect("the output is UTF-8");
    text.lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("output line is not JSON ({e}): {l}"))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// TCP conversations
// ---------------------------------------------------------------------------------------------

/// Direction of a packet in a [`Conversation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Client to server.
    ToServer,
    /// Server to client.
    ToClient,
}

/// One packet of a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// Who sent it.
    pub dir: Dir,
    /// Its flags.
    pub flags: Flags,
    /// Its sequence number.
    pub seq: u32,
    /// Its TCP payload.
    pub payload: Vec<u8>,
    /// The whole raw IP packet (no link layer).
    pub ip: Vec<u8>,
}

/// The client port of every [`Conversation`].
pub const CLIENT_PORT: u16 = 40000;

/// A TCP connection from 127.0.0.1:40000 (or [::1]:40000) to the same address on a server
/// port: SYN, SYN-ACK, ACK, then the application messages in order (each cut into segments
/// of at most `mss` bytes, pushed and acknowledging everything the peer sent), then FIN-ACK
/// from the client, FIN-ACK from the server and the client's last ACK.
#[derive(Debug, Clone)]
pub struct Conversation {
    pub client_ip: IpAddr,
    pub server_ip: IpAddr,
    pub client_port: u16,
    pub server_port: u16,
    /// Initial sequence number of the client (its SYN's).
    pub client_isn: u32,
    /// Initial sequence number of the server.
    pub server_isn: u32,
    /// Largest payload per segment.
    pub mss: usize,
    messages: Vec<(Dir, Vec<u8>)>,
}

impl Conversation {
    /// A conversation on loopback (IPv4 or IPv6) to `server_port`, with no messages yet.
    pub fn new(ipv6: bool, server_port: u16) -> Self {
        let ip = if ipv6 {
            IpAddr::V6(Ipv6Addr::LOCALHOST)
        } else {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        };
        Conversation {
            client_ip: ip,
            server_ip: ip,
            client_port: CLIENT_PORT,
            server_port,
            client_isn: 1_000_000,
            server_isn: 3_000_000_000,
            mss: 65_000,
            messages: Vec::new(),
        }
    }

    /// Adds bytes the client sends.
    pub fn client(mut self, bytes: &[u8]) -> Self {
        self.messages.push((Dir::ToServer, bytes.to_vec()));
        self
    }

    /// Adds bytes the server sends.
    pub fn server(mut self, bytes: &[u8]) -> Self {
        self.messages.push((Dir::ToClient, bytes.to_vec()));
        self
    }

    /// Sets the largest payload per segment.
    pub fn mss(mut self, mss: usize) -> Self {
        assert!(mss > 0);
        self.mss = mss;
        self
    }

    /// The endpoints of a packet going `dir`: (src ip, src port, dst ip, dst port).
    pub fn endpoints(&self, dir: Dir) -> (IpAddr, u16, IpAddr, u16) {
        match dir {
            Dir::ToServer => (
                self.client_ip,
                self.client_port,
                self.server_ip,
                self.server_port,
            ),
            Dir::ToClient => (
                self.server_ip,
                self.server_port,
                self.client_ip,
                self.client_port,
            ),
        }
    }

    fn make(&self, dir: Dir, seq: u32, ack: u32, flags: Flags, payload: &[u8]) -> Packet {
        let (s, sp, d, dp) = self.endpoints(dir);
        Packet {
            dir,
            flags,
            seq,
            payload: payload.to_vec(),
            ip: tcp_packet(s, sp, d, dp, seq, ack, flags, payload),
        }
    }

    /// Every packet of the connection, in order.
    pub fn packets(&self) -> Vec<Packet> {
        // Next sequence number each side sends.
        let mut c = self.client_isn;
        let mut s = self.server_isn;
        let mut v = vec![self.make(Dir::ToServer, c, 0, Flags::SYN, &[])];
        c = c.wrapping_add(1);
        v.push(self.make(Dir::ToClient, s, c, Flags::SYN_ACK, &[]));
        s = s.wrapping_add(1);
        v.push(self.make(Dir::ToServer, c, s, Flags::ACK, &[]));
        for (dir, bytes) in &self.messages {
            for chunk in bytes.chunks(self.mss) {
                match dir {
                    Dir::ToServer => {
                        v.push(self.make(*dir, c, s, Flags::PSH_ACK, chunk));
                        c = c.wrapping_add(chunk.len() as u32);
                    }
                    Dir::ToClient => {
                        v.push(self.make(*dir, s, c, Flags::PSH_ACK, chunk));
                        s = s.wrapping_add(chunk.len() as u32);
                    }
                }
            }
        }
        v.push(self.make(Dir::ToServer, c, s, Flags::FIN_ACK, &[]));
        c = c.wrapping_add(1);
        v.push(self.make(Dir::ToClient, s, c, Flags::FIN_ACK, &[]));
        s = s.wrapping_add(1);
        v.push(self.make(Dir::ToServer, c, s, Flags::ACK, &[]));
        v
    }
}

// ---------------------------------------------------------------------------------------------
// Seed vectors
// ---------------------------------------------------------------------------------------------

/// The seed's smallest WriteTxnMarkers v1 request, size prefix included (41 bytes): size 37,
/// api key 27, version 1, correlation id 0, client id "", no tagged fields; one ABORT marker
/// for producer 0 epoch 0, topic "" partition 0, coordinator epoch 0.
pub const SEED_REQUEST_HEX: &str = concat!(
    "00000025",
    "001b",
    "0001",
    "00000000",
    "0000",
    "00", // size, header v2
    "02",
    "0000000000000000",
    "0000",
    "00", // markers[1]: producer id, epoch, ABORT
    "02",
    "01",
    "02",
    "00000000",
    "00", // topics[1]: name "", partitions [0], tags
    "00000000",
    "00",
    "00", // coordinator epoch, marker tags, body tags
);

/// The seed's response to it, size prefix included (31 bytes): size 27, correlation id 0, no
/// header tags; producer 0, topic "", partition 0 error 0.
pub const SEED_RESPONSE_HEX: &str = concat!(
    "0000001b",
    "00000000",
    "00", // size, header v1
    "02",
    "0000000000000000", // markers[1]: producer id
    "02",
    "01", // topics[1]: name ""
    "02",
    "00000000",
    "0000",
    "00", // partitions[1]: index 0, error NONE, tags
    "00",
    "00",
    "00", // topic tags, marker tags, body tags
);

/// [`SEED_REQUEST_HEX`] as bytes.
pub fn seed_request() -> Vec<u8> {
    let b = hex::decode(SEED_REQUEST_HEX).expect("hex");
    assert_eq!(b.len(), 41);
    b
}

/// [`SEED_RESPONSE_HEX`] as bytes.
pub fn seed_response() -> Vec<u8> {
    let b = hex::decode(SEED_RESPONSE_HEX).expect("hex");
    assert_eq!(b.len(), 31);
    b
}

/// The seed request with correlation id `corr` (41 bytes with its size prefix).
pub fn request_with_corr(corr: u8) -> Vec<u8> {
    let mut r = seed_request();
    r[11] = corr;
    r
}

/// The seed response with correlation id `corr` (31 bytes with its size prefix).
pub fn response_with_corr(corr: u8) -> Vec<u8> {
    let mut r = seed_response();
    r[7] = corr;
    r
}

/// Compares `got` with the golden file `golden` line by line, or writes it when blessing
/// (`KAFKA_PCAP_BLESS=1`).
pub fn check_golden(golden: &std::path::Path, got: &str) {
    if std::env::var_os("KAFKA_PCAP_BLESS").is_some() {
        std::fs::write(golden, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(golden)
        .unwrap_or_else(|e| panic!("{}: {e} (bless to create it)", golden.display()));
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "{}: line {}", golden.display(), i + 1);
    }
    assert_eq!(
        got.lines().count(),
        want.lines().count(),
        "{}",
        golden.display()
    );
}

/// A little-endian classic pcap with every packet cut to `snap` bytes, as `tcpdump -s SNAP`
/// would have taken it (the records' original lengths kept).
pub fn snaplen_cut(pcap: &[u8], snap: u32) -> Vec<u8> {
    let mut out = cut_records(pcap, |_, caplen| caplen.min(snap as usize));
    out[16..20].copy_from_slice(&snap.to_le_bytes());
    out
}

/// A little-endian classic pcap with each record's captured bytes cut to what `keep` says of
/// its frame number (1-based) and captured length (the records' original lengths kept).
fn cut_records(pcap: &[u8], keep: impl Fn(u64, usize) -> usize) -> Vec<u8> {
    let mut out = pcap[..24].to_vec();
    let (mut i, mut n) = (24, 0u64);
    while i + 16 <= pcap.len() {
        n += 1;
        let caplen = u32::from_le_bytes(pcap[i + 8..i + 12].try_into().unwrap()) as usize;
        let kept = keep(n, caplen).min(caplen);
        out.extend_from_slice(&pcap[i..i + 8]);
        out.extend_from_slice(&(kept as u32).to_le_bytes());
        out.extend_from_slice(&pcap[i + 12..i + 16]);
        out.extend_from_slice(&pcap[i + 16..i + 16 + kept]);
        i += 16 + caplen;
    }
    out
}

/// A little-endian classic pcap without the records of the given frames (1-based), as if the
/// capture had lost those packets.
pub fn drop_frames(pcap: &[u8], frames: &[u64]) -> Vec<u8> {
    let mut out = pcap[..24].to_vec();
    let (mut i, mut frame) = (24, 0u64);
    while i + 16 <= pcap.len() {
        frame += 1;
        let caplen = u32::from_le_bytes(pcap[i + 8..i + 12].try_into().unwrap()) as usize;
        if !frames.contains(&frame) {
            out.extend_from_slice(&pcap[i..i + 16 + caplen]);
        }
        i += 16 + caplen;
    }
    out
}

/// A little-endian classic pcap with the record of `frame` (1-based) cut to `snap` bytes, as
/// a snapshot length would have cut that packet alone (its original length kept).
pub fn cut_frame(pcap: &[u8], frame: u64, snap: u32) -> Vec<u8> {
    cut_records(pcap, |n, caplen| {
        if n == frame {
            caplen.min(snap as usize)
        } else {
            caplen
        }
    })
}

/// Whether `part` is what a decoder that stopped early could have read of `whole`: objects
/// with a subset of the keys, each value agreeing; arrays no longer, each element agreeing
/// (only the last may be partial); scalars equal.
pub fn agrees(part: &serde_json::Value, whole: &serde_json::Value) -> Result<(), String> {
    use serde_json::Value;
    match (part, whole) {
        (Value::Object(p), Value::Object(w)) => {
            for (k, v) in p {
                let Some(wv) = w.get(k) else {
                    return Err(format!("{k} is not in the whole body"));
                };
                agrees(v, wv).map_err(|e| format!("{k}.{e}"))?;
            }
            // Fields come in wire order: those present are the whole body's first ones, all
            // but the last wholly.
            let order: Vec<&String> = w.keys().filter(|k| p.contains_key(*k)).collect();
            let first: Vec<&String> = w.keys().take(order.len()).collect();
            if order != first {
                return Err(format!("fields {order:?} are not the first of {first:?}"));
            }
            Ok(())
        }
        (Value::Array(p), Value::Array(w)) => {
            if p.len() > w.len() {
                return Err(format!("{} elements, the whole has {}", p.len(), w.len()));
            }
            for (i, (a, b)) in p.iter().zip(w).enumerate() {
                if i + 1 < p.len() && a != b {
                    return Err(format!("[{i}] is not whole: {a} vs {b}"));
                }
                agrees(a, b).map_err(|e| format!("[{i}].{e}"))?;
            }
            Ok(())
        }
        (p, w) if p == w => Ok(()),
        (p, w) => Err(format!("{p} where the whole has {w}")),
    }
}

/// `pcap` (classic, any byte order) as `tcpdump -s snaplen` would have captured it: each
/// record's captured bytes cut to `snaplen`, the header's snapshot length set to it.
pub fn snapped(pcap: &[u8], snaplen: u32) -> Vec<u8> {
    let le = pcap[..4] == [0xd4, 0xc3, 0xb2, 0xa1] || pcap[..4] == [0x4d, 0x3c, 0xb2, 0xa1];
    let u32_at = |b: &[u8], i: usize| {
        let w = [b[i], b[i + 1], b[i + 2], b[i + 3]];
        if le {
            u32::from_le_bytes(w)
        } else {
            u32::from_be_bytes(w)
        }
    };
    let put = |v: u32| if le { v.to_le_bytes() } else { v.to_be_bytes() };
    let mut out = pcap[..24].to_vec();
    out[16..20].copy_from_slice(&put(snaplen));
    let mut at = 24;
    while at + 16 <= pcap.len() {
        let incl = u32_at(pcap, at + 8) as usize;
        let keep = incl.min(snaplen as usize);
        out.extend_from_slice(&pcap[at..at + 8]);
        out.extend_from_slice(&put(keep as u32));
        out.extend_from_slice(&pcap[at + 12..at + 16]);
        out.extend_from_slice(&pcap[at + 16..at + 16 + keep]);
        at += 16 + incl;
    }
    out
}

/// `rel` (a path under `../shared`, beside the project), or `None` with a note on standard
/// error where it is absent: a fresh clone has no `../shared`, and its tests skip.
pub fn shared(rel: &str) -> Option<std::path::PathBuf> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!(
            "SKIPPED: {} is absent (fresh clone without ../shared)",
            p.display()
        );
        None
    }
}
