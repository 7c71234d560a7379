//! Packet decoding: link layer, tunnels, IP and TCP headers (the only user of etherparse).
//!
//! Input: one captured packet: its link type (the pcap `LINKTYPE_` value), its captured bytes
//! and its original length on the wire.
//! Output: [`Decoded::Tcp`] with the segment's endpoints, flags, sequence number, borrowed
//! payload (no copy) and connection space, [`Decoded::Other`] for anything that is not TCP,
//! [`Decoded::Reassembled`] when a fragment made its IP datagram whole, or
//! [`Decoded::Anomaly`] for a packet whose headers are broken or whose link type is unknown.
//!
//! Two passes: [`decode`], the plain pass every packet takes (no state, no tunnels, no
//! fragments: the hot path), and for a packet it finds no TCP in,
//! [`PacketDecoder::decode_tunnelled`], which goes into tunnels and reassembles fragments
//! ([`defrag`]).
//!
//! Link types (tcpdump.org "Link-layer header types"): Ethernet II (1) with 802.1Q and QinQ
//! tags, Linux cooked SLL (113) and SLL2 (276), BSD loopback NULL (0, host byte order) and LOOP
//! (108, network byte order) with address family 2 (IPv4) or 10, 24, 28, 30 (IPv6), and raw IP
//! (101, 228, 229, and the historic 12 and 14). IPv4 (RFC 791) and IPv6 (RFC 8200) with
//! extension headers skipped; TCP (RFC 9293).
//!
//! Tunnels, as deep as they nest up to [`MAX_TUNNEL_DEPTH`] layers: VXLAN (RFC 7348, UDP 4789
//! and 8472, or the ports of [`PacketDecoder::new`]), Geneve (RFC 8926, UDP 6081), GRE (RFC 2784
//! and 2890: IPv4, IPv6 and transparent Ethernet bridging payloads, ERSPAN types I, II and
//! III), IP-in-IP, 6in4, 4in6 and IPv6-in-IPv6 (IP protocols 4 and 41), MPLS label stacks
//! (RFC 3032, with IPv4, IPv6 or an Ethernet pseudowire with its control word inside), PPPoE
//! sessions (RFC 2516), and 802.1Q tags at every Ethernet layer. A segment found inside tunnels
//! carries a connection space (two connections with the same inner endpoints in different
//! tunnels are in different spaces), and [`PacketDecoder::tunnel_of_last`] gives the tunnel's
//! description ([`Tunnel`]).

pub mod defrag;

use crate::memory::Memory;
use crate::vocab::{AnomalyKind, Endpoint, Tunnel, TunnelKind, TunnelLayer};
use std::collections::HashMap;
use std::net::IpAddr;

/// Most tunnel layers one packet is unwrapped through (8); a packet nested deeper is reported
/// as `tunnel_limit` and skipped.
pub const MAX_TUNNEL_DEPTH: usize = 8;

/// Most distinct tunnels (by identity, and by exact description: a tunnel's two directions are
/// usually two descriptions) remembered in one capture (16,384 of each, a few MB at most). Past it, the packets of further tunnels are kept apart from
/// plain traffic but share one space among them, and their records carry no tunnel; the
/// capture reports it once as `tunnel_limit`.
pub const MAX_TUNNELS: usize = 16_384;

/// The UDP destination ports read as VXLAN by default: IANA's 4789 and Linux's 8472 (the
/// kernel default, used by flannel).
pub const DEFAULT_VXLAN_PORTS: [u16; 2] = [4789, 8472];

/// Geneve's UDP destination port (RFC 8926).
const GENEVE_PORT: u16 = 6081;

/// A TCP segment, borrowing its payload from the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpSegment<'a> {
    /// Sender.
    pub src: Endpoint,
    /// Receiver.
    pub dst: Endpoint,
    /// Sequence number of the first payload byte (of the SYN, when `syn`).
    pub seq: u32,
    /// Acknowledgment number (meaningful when `ack`).
    pub ack_number: u32,
    /// SYN flag.
    pub syn: bool,
    /// ACK flag.
    pub ack: bool,
    /// FIN flag.
    pub fin: bool,
    /// RST flag.
    pub rst: bool,
    /// The captured payload.
    pub payload: &'a [u8],
    /// Payload bytes that were on the wire after `payload` but cut off by the snaplen.
    pub cut: u64,
    /// The connection space: 0 for a packet found in no tunnel, otherwise one number per
    /// tunnel identity (its kinds, VNIs, keys and sessions, and its outer addresses in either
    /// order; not MPLS labels, which differ by direction). When it is not 0,
    /// [`PacketDecoder::tunnel_of_last`] describes the tunnel.
    pub space: u32,
}

/// What a packet turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded<'a> {
    /// A TCP segment.
    Tcp(TcpSegment<'a>),
    /// Not TCP over IP (ARP, UDP, ICMP, an IP fragment of a datagram not yet whole, ...): not
    /// of interest.
    Other,
    /// An IP fragment made its datagram whole: take it with
    /// [`PacketDecoder::take_reassembled`] and decode it with
    /// [`PacketDecoder::decode_reassembled`].
    Reassembled,
    /// Broken headers or an unknown link type: `kind` is the anomaly kind
    /// (`unsupported_link_type`, `truncated_packet`, `bad_ip_header`, `tunnel_limit`),
    /// `message` a sentence.
    Anomaly {
        /// Stable anomaly kind.
        kind: AnomalyKind,
        /// One human sentence.
        message: String,
    },
}

/// Link types this decoder reads.
pub fn is_supported_link_type(linktype: i32) -> bool {
    matches!(
        linktype,
        0 | 1 | 12 | 14 | 101 | 108 | 113 | 228 | 229 | 276
    )
}

fn anomaly(kind: AnomalyKind, message: String) -> Decoded<'static> {
    Decoded::Anomaly { kind, message }
}

/// EtherTypes of 802.1Q, 802.1ad (QinQ) and the older QinQ value: a 4-byte tag follows
/// (matched as patterns: a slice's `contains` cost 2% of a busy capture's instructions).
const ETHERTYPE_VLAN: u16 = 0x8100;
const ETHERTYPE_QINQ: u16 = 0x88a8;
const ETHERTYPE_QINQ_OLD: u16 = 0x9100;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
/// MPLS unicast and multicast.
const ETHERTYPE_MPLS: u16 = 0x8847;
const ETHERTYPE_MPLS_MULTICAST: u16 = 0x8848;
const ETHERTYPE_PPPOE_SESSION: u16 = 0x8864;
/// Transparent Ethernet bridging: an Ethernet frame inside GRE or Geneve.
const ETHERTYPE_TEB: u16 = 0x6558;
const ETHERTYPE_ERSPAN_2: u16 = 0x88be;
const ETHERTYPE_ERSPAN_3: u16 = 0x22eb;
/// Most MPLS labels read in one stack.
const MAX_MPLS_LABELS: usize = 16;

/// Where the IP header starts after the link layer, or why there is none.
enum Link {
    /// The IP header starts at this offset.
    Ip(usize),
    /// Not IP (ARP, LLDP, another address family ...).
    Other,
    /// The link header is cut short.
    Truncated(&'static str),
    /// Too many layers.
    TooDeep,
}

fn be16(data: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*data.get(at)?, *data.get(at + 1)?]))
}

fn be32(data: &[u8], at: usize) -> Option<u32> {
    let b = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// Where the link layer's tunnel layers (MPLS, PPPoE) go: nowhere on the first, plain pass
/// over a packet ([`NoTunnels`], which does not go into them), or onto the stack of the
/// tunnel pass ([`PacketDecoder`]). One description of each layout, two instantiations.
trait Layers {
    /// Whether tunnel layers are gone into.
    const TUNNELS: bool;
    /// Layers so far.
    fn depth(&self) -> usize;
    /// Notes one more layer.
    fn push(&mut self, layer: TunnelLayer);
}

/// The plain pass: tunnels are left for the tunnel pass.
struct NoTunnels;

impl Layers for NoTunnels {
    const TUNNELS: bool = false;
    fn depth(&self) -> usize {
        0
    }
    fn push(&mut self, _: TunnelLayer) {}
}

impl Layers for Vec<TunnelLayer> {
    const TUNNELS: bool = true;
    fn depth(&self) -> usize {
        self.len()
    }
    fn push(&mut self, layer: TunnelLayer) {
        Vec::push(self, layer)
    }
}

fn layer(kind: TunnelKind, outer: Option<(IpAddr, IpAddr)>, id: Option<u32>) -> TunnelLayer {
    TunnelLayer {
        kind,
        outer,
        id,
        depth: 0,
    }
}

/// Skips VLAN tags after an EtherType at `at` (the EtherType's own offset) and says where the
/// IP header starts, if the innermost EtherType is IPv4 or IPv6, going through MPLS label
/// stacks and PPPoE sessions (each noted in `stack`).
#[inline(always)]
fn after_ether_type<S: Layers>(data: &[u8], at: usize, stack: &mut S) -> Link {
    match be16(data, at) {
        Some(ether_type) => ether_payload(data, ether_type, at + 2, stack),
        None => Link::Truncated("link header cut short"),
    }
}

/// Where the IP header starts in `data` for a payload of `ether_type` at `payload` (VLAN tags
/// skipped, MPLS and PPPoE gone through).
#[inline(always)]
fn ether_payload<S: Layers>(
    data: &[u8],
    mut ether_type: u16,
    mut payload: usize,
    stack: &mut S,
) -> Link {
    loop {
        if matches!(
            ether_type,
            ETHERTYPE_VLAN | ETHERTYPE_QINQ | ETHERTYPE_QINQ_OLD
        ) {
            // A tag: 2 bytes of TCI, then the next EtherType.
            match be16(data, payload + 2) {
                Some(next) => {
                    ether_type = next;
                    payload += 4;
                }
                None => return Link::Truncated("VLAN tag cut short"),
            }
            continue;
        }
        return match ether_type {
            ETHERTYPE_IPV4 | ETHERTYPE_IPV6 => Link::Ip(payload),
            _ if S::TUNNELS => ether_tunnel(data, payload, ether_type, stack),
            _ => Link::Other,
        };
    }
}

/// [`ether_payload`] for an EtherType other than a VLAN tag, IPv4 or IPv6, its payload at
/// `at`: MPLS and PPPoE sessions, or nothing of interest.
#[cold]
#[inline(never)]
fn ether_tunnel<S: Layers>(data: &[u8], at: usize, ether_type: u16, stack: &mut S) -> Link {
    match ether_type {
        ETHERTYPE_MPLS | ETHERTYPE_MPLS_MULTICAST => {
            if stack.depth() >= MAX_TUNNEL_DEPTH {
                return Link::TooDeep;
            }
            let mut p = at;
            let mut labels = 0usize;
            let bottom = loop {
                let Some(entry) = be32(data, p) else {
                    return Link::Truncated("MPLS label stack cut short");
                };
                p += 4;
                labels += 1;
                if entry & 0x100 != 0 {
                    break entry >> 12;
                }
                if labels >= MAX_MPLS_LABELS {
                    return Link::TooDeep;
                }
            };
            stack.push(TunnelLayer {
                kind: TunnelKind::Mpls,
                outer: None,
                id: Some(bottom),
                depth: labels as u8,
            });
            match data.get(p).map(|b| b >> 4) {
                Some(4 | 6) => Link::Ip(p),
                // An Ethernet pseudowire (RFC 4448) after its 4-byte control word.
                Some(0) => match data.get(p + 4..) {
                    Some(frame) => match ethernet(frame, stack) {
                        Link::Ip(off) => Link::Ip(p + 4 + off),
                        other => other,
                    },
                    None => Link::Truncated("MPLS payload cut short"),
                },
                Some(_) => Link::Other,
                None => Link::Truncated("MPLS payload cut short"),
            }
        }
        ETHERTYPE_PPPOE_SESSION => {
            if stack.depth() >= MAX_TUNNEL_DEPTH {
                return Link::TooDeep;
            }
            // Version and type (0x11), code (0), session id, length; then PPP's protocol.
            let (Some(session), Some(protocol)) = (be16(data, at + 2), be16(data, at + 6)) else {
                return Link::Truncated("PPPoE header cut short");
            };
            if data[at] != 0x11 || data[at + 1] != 0 {
                return Link::Other;
            }
            stack.push(layer(TunnelKind::Pppoe, None, Some(u32::from(session))));
            match protocol {
                0x0021 | 0x0057 => Link::Ip(at + 8),
                _ => Link::Other,
            }
        }
        _ => Link::Other,
    }
}

/// [`after_ether_type`] on a whole Ethernet frame (destination, source, EtherType).
#[inline(always)]
fn ethernet<S: Layers>(data: &[u8], stack: &mut S) -> Link {
    match etherparse::Ethernet2HeaderSlice::from_slice(data) {
        Ok(_) => after_ether_type(data, 12, stack),
        Err(_) => Link::Truncated("Ethernet header cut short"),
    }
}

#[inline(always)]
fn link<S: Layers>(linktype: i32, data: &[u8], stack: &mut S) -> Link {
    match linktype {
        1 => ethernet(data, stack),
        // Linux cooked v1: 16-byte header, protocol type (an EtherType) at offset 14.
        113 if data.len() < 16 => Link::Truncated("Linux SLL header cut short"),
        113 => after_ether_type(data, 14, stack),
        // Linux cooked v2: 20-byte header, protocol type (an EtherType) at offset 0.
        276 if data.len() < 20 => Link::Truncated("Linux SLL2 header cut short"),
        276 => ether_payload(data, u16::from_be_bytes([data[0], data[1]]), 20, stack),
        0 | 108 => {
            let Some(raw) = data.get(..4) else {
                return Link::Truncated("loopback header cut short");
            };
            let raw = [raw[0], raw[1], raw[2], raw[3]];
            // NULL stores the family in the capturing host's byte order, LOOP in network order.
            let family = if linktype == 108 {
                u32::from_be_bytes(raw)
            } else {
                let le = u32::from_le_bytes(raw);
                if le <= 0xffff {
                    le
                } else {
                    u32::from_be_bytes(raw)
                }
            };
            match family {
                2 | 10 | 24 | 28 | 30 => Link::Ip(4),
                _ => Link::Other,
            }
        }
        12 | 14 | 101 | 228 | 229 => Link::Ip(0),
        _ => Link::Other,
    }
}

/// What comes after one tunnel header.
enum Inner<'a> {
    /// An IP packet.
    Ip(&'a [u8]),
    /// An Ethernet frame.
    Ethernet(&'a [u8]),
    /// Nothing this decoder reads.
    Other,
    /// The tunnel header is cut short.
    Truncated(&'static str),
}

/// The GRE packet `gre` (RFC 2784 and 2890) sent from `outer`: its layers pushed on `stack`
/// and what it carries.
fn gre<'a>(gre: &'a [u8], outer: (IpAddr, IpAddr), stack: &mut Vec<TunnelLayer>) -> Inner<'a> {
    let (Some(flags), Some(protocol)) = (be16(gre, 0), be16(gre, 2)) else {
        return Inner::Truncated("GRE header cut short");
    };
    // Version 0 only (1 is PPTP's enhanced GRE); no source routing (RFC 1701).
    if flags & 0x7 != 0 || flags & 0x4000 != 0 {
        return Inner::Other;
    }
    let mut at = 4;
    if flags & 0x8000 != 0 {
        at += 4; // checksum and reserved
    }
    let key = if flags & 0x2000 != 0 {
        let k = be32(gre, at);
        at += 4;
        match k {
            Some(k) => Some(k),
            None => return Inner::Truncated("GRE header cut short"),
        }
    } else {
        None
    };
    let sequenced = flags & 0x1000 != 0;
    if sequenced {
        at += 4;
    }
    let Some(payload) = gre.get(at..) else {
        return Inner::Truncated("GRE header cut short");
    };
    stack.push(layer(TunnelKind::Gre, Some(outer), key));
    match protocol {
        ETHERTYPE_IPV4 | ETHERTYPE_IPV6 => Inner::Ip(payload),
        ETHERTYPE_TEB => Inner::Ethernet(payload),
        t @ (ETHERTYPE_MPLS | ETHERTYPE_MPLS_MULTICAST) => {
            match ether_payload(payload, t, 0, stack) {
                Link::Ip(at) => Inner::Ip(&payload[at..]),
                Link::Truncated(what) => Inner::Truncated(what),
                Link::Other | Link::TooDeep => Inner::Other,
            }
        }
        ETHERTYPE_ERSPAN_2 if !sequenced => {
            stack.push(layer(TunnelKind::Erspan1, None, None));
            Inner::Ethernet(payload)
        }
        ETHERTYPE_ERSPAN_2 | ETHERTYPE_ERSPAN_3 => {
            // Type II: version 1, VLAN, COS, encapsulation, truncation, session id (10 bits),
            // index: 8 bytes. Type III: version 2, VLAN, COS, BSO, T, session id, timestamp,
            // SGT, flags ending in O (an 8-byte platform-specific subheader follows): 12 bytes.
            let (kind, version) = if protocol == ETHERTYPE_ERSPAN_2 {
                (TunnelKind::Erspan2, 1)
            } else {
                (TunnelKind::Erspan3, 2)
            };
            let len = match (kind, payload.get(11)) {
                (TunnelKind::Erspan2, _) => Some(8),
                (_, Some(flags)) if flags & 1 != 0 => Some(20),
                (_, Some(_)) => Some(12),
                (_, None) => None,
            };
            match (
                payload.first(),
                be16(payload, 2),
                len.and_then(|n| payload.get(n..)),
            ) {
                (Some(v), Some(session), Some(frame)) if v >> 4 == version => {
                    stack.push(layer(kind, None, Some(u32::from(session & 0x3ff))));
                    Inner::Ethernet(frame)
                }
                (Some(v), Some(_), _) if v >> 4 != version => Inner::Other,
                _ => Inner::Truncated("ERSPAN header cut short"),
            }
        }
        _ => Inner::Other,
    }
}

/// The UDP datagram `udp` (header and payload) sent from `outer`, read as VXLAN or Geneve when
/// its destination port says so: its layer pushed on `stack` and what it carries.
fn udp_tunnel<'a>(
    udp: &'a [u8],
    outer: (IpAddr, IpAddr),
    vxlan_ports: &[u16],
    stack: &mut Vec<TunnelLayer>,
) -> Inner<'a> {
    let Some(dst_port) = be16(udp, 2) else {
        return Inner::Other;
    };
    let Some(payload) = udp.get(8..) else {
        return Inner::Other;
    };
    if vxlan_ports.contains(&dst_port) {
        // Flags (the I flag, 0x08, says the VNI is valid), reserved, VNI (24 bits), reserved.
        let (Some(flags), Some(vni)) = (payload.first(), be32(payload, 4)) else {
            return Inner::Truncated("VXLAN header cut short");
        };
        if flags & 0x08 == 0 {
            return Inner::Other;
        }
        stack.push(layer(TunnelKind::Vxlan, Some(outer), Some(vni >> 8)));
        return Inner::Ethernet(&payload[8..]);
    }
    if dst_port == GENEVE_PORT {
        // Version (2 bits, 0) and options length (6 bits, in 4-byte words), flags, protocol
        // type (an EtherType), VNI (24 bits), reserved; then the options.
        let (Some(first), Some(protocol), Some(vni)) =
            (payload.first(), be16(payload, 2), be32(payload, 4))
        else {
            return Inner::Truncated("Geneve header cut short");
        };
        if first >> 6 != 0 {
            return Inner::Other;
        }
        let len = 8 + usize::from(first & 0x3f) * 4;
        let Some(inner) = payload.get(len..) else {
            return Inner::Truncated("Geneve options cut short");
        };
        stack.push(layer(TunnelKind::Geneve, Some(outer), Some(vni >> 8)));
        return match protocol {
            ETHERTYPE_TEB => Inner::Ethernet(inner),
            ETHERTYPE_IPV4 | ETHERTYPE_IPV6 => Inner::Ip(inner),
            _ => Inner::Other,
        };
    }
    Inner::Other
}

/// An IP datagram rebuilt from its fragments, and the tunnels its last fragment was found
/// inside.
#[derive(Debug)]
pub struct Reassembled {
    /// The datagram.
    pub datagram: defrag::Whole,
    stack: Vec<TunnelLayer>,
}

/// A tunnel's identity: what keeps its connections apart from those of another tunnel. The
/// outer addresses in either order (both directions of a connection share it), no MPLS label.
type Identity = Vec<(TunnelKind, Option<u32>, Option<(IpAddr, IpAddr)>)>;

fn identity(stack: &[TunnelLayer]) -> Identity {
    stack
        .iter()
        .map(|l| {
            let id = if l.kind == TunnelKind::Mpls {
                None
            } else {
                l.id
            };
            let outer = l.outer.map(|(a, b)| if a <= b { (a, b) } else { (b, a) });
            (l.kind, id, outer)
        })
        .collect()
}

/// The packet decoder of one capture: its VXLAN ports and the tunnels seen so far (each
/// tunnel identity's connection space, each exact description shared by the records of the
/// packets that carried it), both bounded by [`MAX_TUNNELS`].
#[derive(Debug)]
pub struct PacketDecoder {
    vxlan_ports: Vec<u16>,
    /// The current packet's layers, outermost first.
    stack: Vec<TunnelLayer>,
    spaces: HashMap<Identity, u32>,
    descriptions: HashMap<Vec<TunnelLayer>, Option<Tunnel>>,
    /// The last packet's tunnel: its layers, space and description.
    last: Option<(Vec<TunnelLayer>, u32, Option<Tunnel>)>,
    /// Whether [`MAX_TUNNELS`] was reported.
    limit_reported: bool,
    /// IP datagrams in reassembly.
    defrag: defrag::Defrag,
    /// The datagram the last fragment made whole.
    reassembled: Option<Reassembled>,
    /// Capture time (seconds) and frame of the packet being decoded.
    now: i64,
    frame: u64,
}

impl Default for PacketDecoder {
    fn default() -> Self {
        PacketDecoder::new(&DEFAULT_VXLAN_PORTS, &Memory::default())
    }
}

impl PacketDecoder {
    /// A decoder that reads UDP datagrams to `vxlan_ports` as VXLAN and charges the datagrams
    /// it reassembles to `memory`.
    pub fn new(vxlan_ports: &[u16], memory: &Memory) -> Self {
        PacketDecoder {
            vxlan_ports: vxlan_ports.to_vec(),
            stack: Vec::new(),
            spaces: HashMap::new(),
            descriptions: HashMap::new(),
            last: None,
            limit_reported: false,
            defrag: defrag::Defrag::new(memory),
            reassembled: None,
            now: 0,
            frame: 0,
        }
    }

    /// The tunnel pass over a packet that [`decode`] found no TCP in (`Decoded::Other`):
    /// decodes it again, going into every tunnel. A TCP segment found inside one comes with its
    /// `space`; a packet with no tunnel, or nothing of interest inside, is `Decoded::Other`.
    #[inline(never)]
    /// `now` and `frame` are the packet's capture time (seconds) and frame number, for
    /// fragments.
    pub fn decode_tunnelled<'a>(
        &mut self,
        linktype: i32,
        data: &'a [u8],
        orig_len: u32,
        now: i64,
        frame: u64,
    ) -> Decoded<'a> {
        self.now = now;
        self.frame = frame;
        self.stack.clear();
        let ip_bytes = match link(linktype, data, &mut self.stack) {
            Link::Ip(at) => &data[at..],
            Link::Other => return Decoded::Other,
            Link::Truncated(what) => {
                return anomaly(AnomalyKind::TruncatedPacket, self.inside(what))
            }
            Link::TooDeep => return self.too_deep(),
        };
        self.decode_ip(ip_bytes, data.len(), orig_len)
    }

    /// The rest of [`PacketDecoder::decode_tunnelled`] from the IP header `ip_bytes` on (of a
    /// packet of `captured` bytes and `orig_len` on the wire), through every tunnel.
    fn decode_ip<'a>(&mut self, ip_bytes: &'a [u8], captured: usize, orig_len: u32) -> Decoded<'a> {
        let first = ip(ip_bytes, captured, orig_len);
        self.decode_from(first, false)
    }

    /// Decodes on from what an IP header said (`next`), through every tunnel; `reassembled`
    /// when it is a datagram rebuilt from fragments (then plain TCP is decoded here too).
    fn decode_from<'a>(&mut self, mut next: Ip<'a>, reassembled: bool) -> Decoded<'a> {
        let (captured, orig_len) = (0, 0);
        loop {
            let ip_bytes: &'a [u8];
            let (src, dst, payload, cut) = match next {
                Ip::Tcp {
                    src,
                    dst,
                    payload,
                    cut,
                } => (src, dst, payload, cut),
                Ip::Carries {
                    src,
                    dst,
                    protocol,
                    payload,
                } => {
                    if self.stack.len() >= MAX_TUNNEL_DEPTH {
                        return self.too_deep();
                    }
                    let inner = match protocol {
                        etherparse::IpNumber::UDP => {
                            udp_tunnel(payload, (src, dst), &self.vxlan_ports, &mut self.stack)
                        }
                        etherparse::IpNumber::GRE => gre(payload, (src, dst), &mut self.stack),
                        etherparse::IpNumber::IPV4 | etherparse::IpNumber::IPV6 => {
                            self.stack
                                .push(layer(TunnelKind::IpInIp, Some((src, dst)), None));
                            Inner::Ip(payload)
                        }
                        _ => Inner::Other,
                    };
                    ip_bytes = match inner {
                        Inner::Ip(p) => p,
                        Inner::Ethernet(frame) => match ethernet(frame, &mut self.stack) {
                            Link::Ip(at) => &frame[at..],
                            Link::Other => return Decoded::Other,
                            Link::Truncated(what) => {
                                return anomaly(AnomalyKind::TruncatedPacket, self.inside(what))
                            }
                            Link::TooDeep => return self.too_deep(),
                        },
                        Inner::Other => return Decoded::Other,
                        Inner::Truncated(what) => {
                            return anomaly(AnomalyKind::TruncatedPacket, self.inside(what))
                        }
                    };
                    if self.stack.len() > MAX_TUNNEL_DEPTH {
                        return self.too_deep();
                    }
                    // Inner packets: their lengths are the outer payload's, never a snaplen's.
                    next = ip(ip_bytes, captured, orig_len);
                    continue;
                }
                Ip::Fragment(mut f) => {
                    if !self.stack.is_empty() {
                        f.space = self.tunnel();
                    }
                    return match self.defrag.add(&f, self.now, self.frame) {
                        defrag::Added::Waiting | defrag::Added::Duplicate => Decoded::Other,
                        defrag::Added::Bad(kind, message) => anomaly(kind, self.inside(&message)),
                        defrag::Added::Complete(datagram) => {
                            self.reassembled = Some(Reassembled {
                                datagram,
                                stack: self.stack.clone(),
                            });
                            Decoded::Reassembled
                        }
                    };
                }
                Ip::Other => return Decoded::Other,
                // The plain pass reported a broken outermost header already.
                Ip::Bad(_) if self.stack.is_empty() => return Decoded::Other,
                Ip::Bad(message) => {
                    return anomaly(AnomalyKind::BadIpHeader, self.inside(&message))
                }
            };
            if self.stack.is_empty() && !reassembled {
                // Plain TCP: the plain pass has decided on it already.
                return Decoded::Other;
            }
            return match tcp(src, dst, payload, cut) {
                Decoded::Tcp(mut seg) => {
                    if !self.stack.is_empty() {
                        seg.space = self.tunnel();
                    }
                    Decoded::Tcp(seg)
                }
                Decoded::Anomaly { kind, message } => anomaly(kind, self.inside(&message)),
                other => other,
            };
        }
    }

    /// The datagram the last [`Decoded::Reassembled`] made whole.
    pub fn take_reassembled(&mut self) -> Option<Reassembled> {
        self.reassembled.take()
    }

    /// Decodes a datagram rebuilt from fragments, inside the tunnels its last fragment was
    /// found in: a TCP segment (borrowing the datagram), a tunnel's inner TCP segment, or
    /// `Other`. A fragment inside it is not reassembled again (nothing is made of it).
    pub fn decode_reassembled<'b>(&mut self, r: &'b Reassembled) -> Decoded<'b> {
        self.stack.clone_from(&r.stack);
        let d = &r.datagram;
        let first = if d.protocol == etherparse::IpNumber::TCP {
            Ip::Tcp {
                src: d.src,
                dst: d.dst,
                payload: &d.payload,
                cut: 0,
            }
        } else {
            Ip::Carries {
                src: d.src,
                dst: d.dst,
                protocol: d.protocol,
                payload: &d.payload,
            }
        };
        match self.decode_from(first, true) {
            Decoded::Reassembled => {
                self.reassembled = None;
                Decoded::Other
            }
            other => other,
        }
    }

    /// Gives back a datagram's buffer for reuse.
    pub fn recycle(&mut self, r: Reassembled) {
        self.defrag.recycle(r.datagram.payload);
    }

    /// The datagrams given up with fragments missing since the last call (`fragment_missing`
    /// anomalies), after giving up those that waited past their timeout at capture time
    /// `now`; with `end`, every one still in reassembly.
    pub fn take_missing(&mut self, now: i64, end: bool) -> Vec<String> {
        if end {
            self.defrag.finish();
        } else {
            self.defrag.expire(now);
        }
        self.defrag
            .take_given_up()
            .into_iter()
            .map(|g| g.message)
            .collect()
    }

    /// Whether datagrams were given up since the last [`PacketDecoder::take_missing`].
    pub fn has_missing(&self) -> bool {
        self.defrag.has_given_up()
    }

    /// `what`, saying which tunnel the packet was found inside when it was in one.
    fn inside(&self, what: &str) -> String {
        if self.stack.is_empty() {
            return what.to_string();
        }
        let kinds: Vec<&str> = self.stack.iter().map(|l| l.kind.as_str()).collect();
        format!("{what} (inside {})", kinds.join(" > "))
    }

    fn too_deep(&self) -> Decoded<'static> {
        anomaly(
            AnomalyKind::TunnelLimit,
            format!(
                "a packet nested more than {MAX_TUNNEL_DEPTH} tunnel layers deep (or an MPLS \
                 stack of more than {MAX_MPLS_LABELS} labels) was skipped"
            ),
        )
    }

    /// The connection space of the current packet's tunnel stack, its description kept for
    /// [`PacketDecoder::tunnel_of_last`].
    fn tunnel(&mut self) -> u32 {
        if let Some((stack, space, _)) = &self.last {
            if *stack == self.stack {
                return *space;
            }
        }
        let full = self.spaces.len() >= MAX_TUNNELS;
        let key = identity(&self.stack);
        let space = match self.spaces.get(&key) {
            Some(s) => *s,
            None if full => u32::MAX,
            None => {
                let s = self.spaces.len() as u32 + 1;
                self.spaces.insert(key, s);
                s
            }
        };
        let tunnel = match self.descriptions.get(&self.stack) {
            Some(t) => *t,
            None if self.descriptions.len() >= MAX_TUNNELS => None,
            None => {
                let t = Tunnel::intern(&self.stack);
                self.descriptions.insert(self.stack.clone(), t);
                t
            }
        };
        self.last = Some((self.stack.clone(), space, tunnel));
        space
    }

    /// The tunnel the last [`Decoded::Tcp`] with a `space` other than 0 was found inside
    /// (`None` past [`MAX_TUNNELS`] descriptions).
    pub fn tunnel_of_last(&self) -> Option<Tunnel> {
        self.last.as_ref().and_then(|(_, _, t)| *t)
    }

    /// Whether the tunnel tables filled up since the last call (reported once per capture as
    /// `tunnel_limit`).
    pub fn take_tunnel_limit(&mut self) -> bool {
        let full = self.spaces.len() >= MAX_TUNNELS || self.descriptions.len() >= MAX_TUNNELS;
        if full && !self.limit_reported {
            self.limit_reported = true;
            return true;
        }
        false
    }
}

/// What an IP packet carries.
enum Ip<'a> {
    /// A TCP segment (header and payload) followed by `cut` bytes the snapshot length cut off.
    Tcp {
        src: IpAddr,
        dst: IpAddr,
        payload: &'a [u8],
        cut: u64,
    },
    /// Another protocol, whole and unfragmented: perhaps a tunnel.
    Carries {
        src: IpAddr,
        dst: IpAddr,
        protocol: etherparse::IpNumber,
        payload: &'a [u8],
    },
    /// A fragment of a datagram, whole as captured (its `space` still 0: the tunnel pass
    /// sets it).
    Fragment(defrag::Fragment<'a>),
    /// A payload cut by the snapshot length that is not TCP, or a fragment so cut.
    Other,
    /// The IP header could not be read.
    Bad(String),
}

/// Reads the IP header at the start of `ip_bytes`, part of a packet of `captured` bytes that
/// had `orig_len` bytes on the wire, with etherparse's lax slice (IPv4 or IPv6, extension and
/// authentication headers, a total length of 0 from segmentation offload).
fn ip(ip_bytes: &[u8], captured: usize, orig_len: u32) -> Ip<'_> {
    let (ip, _ext_err) = match etherparse::LaxIpSlice::from_slice(ip_bytes) {
        Ok(x) => x,
        Err(e) => return Ip::Bad(format!("IP header could not be read: {e}")),
    };
    let payload = ip.payload();
    if payload.fragmented {
        if payload.incomplete {
            // Cut by the snapshot length: its datagram will be missing this fragment.
            return Ip::Other;
        }
        let fragment = match &ip {
            etherparse::LaxIpSlice::Ipv4(v4) => {
                let h = v4.header();
                Some((
                    u32::from(h.identification()),
                    h.fragments_offset(),
                    h.more_fragments(),
                ))
            }
            etherparse::LaxIpSlice::Ipv6(v6) => {
                v6.extensions()
                    .clone()
                    .into_iter()
                    .find_map(|ext| match ext {
                        etherparse::Ipv6ExtensionSlice::Fragment(f) => {
                            Some((f.identification(), f.fragment_offset(), f.more_fragments()))
                        }
                        _ => None,
                    })
            }
        };
        return match fragment {
            Some((id, offset, more)) => Ip::Fragment(defrag::Fragment {
                space: 0,
                src: ip.source_addr(),
                dst: ip.destination_addr(),
                id,
                protocol: payload.ip_number,
                offset,
                more,
                data: payload.payload,
            }),
            None => Ip::Other,
        };
    }
    if payload.ip_number != etherparse::IpNumber::TCP {
        if payload.incomplete {
            return Ip::Other;
        }
        return Ip::Carries {
            src: ip.source_addr(),
            dst: ip.destination_addr(),
            protocol: payload.ip_number,
            payload: payload.payload,
        };
    }
    // Bytes a snaplen cut off: what the record says was on the wire beyond what was
    // captured, but never more than the IP header's own length says is missing.
    let cut = if payload.incomplete {
        let ip_len = match &ip {
            etherparse::LaxIpSlice::Ipv4(v4) => u64::from(v4.header().total_len()),
            etherparse::LaxIpSlice::Ipv6(v6) => 40 + u64::from(v6.header().payload_length()),
        };
        let by_ip = ip_len.saturating_sub(ip_bytes.len() as u64);
        let by_record = u64::from(orig_len).saturating_sub(captured as u64);
        by_ip.min(by_record)
    } else {
        0
    };
    Ip::Tcp {
        src: ip.source_addr(),
        dst: ip.destination_addr(),
        payload: payload.payload,
        cut,
    }
}

/// The TCP segment in `ip_payload`, sent from `src` to `dst`, followed by `cut` bytes that
/// were not captured (outside any tunnel: the caller adds its space and description).
#[inline(always)]
fn tcp(src: std::net::IpAddr, dst: std::net::IpAddr, ip_payload: &[u8], cut: u64) -> Decoded<'_> {
    let tcp = match etherparse::TcpSlice::from_slice(ip_payload) {
        Ok(t) => t,
        // The usual cause in a real capture: a small snapshot length (`tcpdump -s 60`).
        Err(_) if cut > 0 => {
            return anomaly(
                AnomalyKind::TruncatedPacket,
                format!(
                    "TCP header could not be read: the capture's snapshot length cut the packet \
                     inside it ({cut} bytes of the packet were not captured; `tcpdump -s 0` \
                     captures whole packets)"
                ),
            )
        }
        Err(e) => {
            return anomaly(
                AnomalyKind::TruncatedPacket,
                format!("TCP header could not be read: {e}"),
            )
        }
    };
    Decoded::Tcp(TcpSegment {
        src: Endpoint {
            ip: src,
            port: tcp.source_port(),
        },
        dst: Endpoint {
            ip: dst,
            port: tcp.destination_port(),
        },
        seq: tcp.sequence_number(),
        ack_number: tcp.acknowledgment_number(),
        syn: tcp.syn(),
        ack: tcp.ack(),
        fin: tcp.fin(),
        rst: tcp.rst(),
        payload: tcp.payload(),
        cut,
        space: 0,
    })
}

/// The plain pass over one packet of link type `linktype` whose captured bytes are `data` and
/// whose length on the wire was `orig_len` bytes: the TCP segment of a packet in no tunnel
/// (its `space` 0), or `Decoded::Other` for anything else, tunnels included (for
/// [`PacketDecoder::decode_tunnelled`]), or an anomaly.
#[inline(always)]
pub fn decode(linktype: i32, data: &[u8], orig_len: u32) -> Decoded<'_> {
    if !is_supported_link_type(linktype) {
        return anomaly(
            AnomalyKind::UnsupportedLinkType,
            format!("link type {linktype} is not one this tool decodes"),
        );
    }
    let ip_bytes = match link(linktype, data, &mut NoTunnels) {
        Link::Ip(at) => &data[at..],
        Link::Other | Link::TooDeep => return Decoded::Other,
        Link::Truncated(what) => return anomaly(AnomalyKind::TruncatedPacket, what.to_string()),
    };
    // The common case first: a complete IPv4 packet carrying TCP, read with the plain header
    // slice (the lax slice of `ip` returns a far larger value, a measurable cost per packet).
    // `ip` decides the same for this case.
    if ip_bytes.first().is_some_and(|b| b >> 4 == 4) {
        if let Ok(h) = etherparse::Ipv4HeaderSlice::from_slice(ip_bytes) {
            let header_len = h.slice().len();
            let total_len = usize::from(h.total_len());
            if h.protocol() == etherparse::IpNumber::TCP
                && (header_len..=ip_bytes.len()).contains(&total_len)
            {
                if h.is_fragmenting_payload() {
                    return Decoded::Other;
                }
                let (src, dst) = (h.source_addr().into(), h.destination_addr().into());
                return tcp(src, dst, &ip_bytes[header_len..total_len], 0);
            }
        }
    }
    match ip(ip_bytes, data.len(), orig_len) {
        Ip::Tcp {
            src,
            dst,
            payload,
            cut,
        } => tcp(src, dst, payload, cut),
        Ip::Carries { .. } | Ip::Fragment(_) | Ip::Other => Decoded::Other,
        Ip::Bad(message) => anomaly(AnomalyKind::BadIpHeader, message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::PacketBuilder;

    fn tcp_ipv4(payload: &[u8]) -> Vec<u8> {
        let b = PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
            .tcp(40000, 9092, 1000, 65535)
            .psh()
            .ack(1);
        let mut v = Vec::new();
        b.write(&mut v, payload).unwrap();
        v
    }

    fn expect_tcp(d: Decoded<'_>) -> TcpSegment<'_> {
        match d {
            Decoded::Tcp(t) => t,
            other => panic!("not TCP: {other:?}"),
        }
    }

    #[test]
    fn every_link_type_reaches_tcp() {
        let ip = tcp_ipv4(b"hello");
        let mut eth = vec![0u8; 12];
        eth.extend_from_slice(&[0x08, 0x00]);
        eth.extend_from_slice(&ip);
        let mut qinq = vec![0u8; 12];
        qinq.extend_from_slice(&[0x88, 0xa8, 0, 1, 0x81, 0x00, 0, 2, 0x08, 0x00]);
        qinq.extend_from_slice(&ip);
        let mut sll = vec![0u8; 14];
        sll.extend_from_slice(&[0x08, 0x00]);
        sll.extend_from_slice(&ip);
        let mut sll2 = vec![0x08, 0x00];
        sll2.extend_from_slice(&[0u8; 18]);
        sll2.extend_from_slice(&ip);
        let mut null = 2u32.to_le_bytes().to_vec();
        null.extend_from_slice(&ip);
        let mut null_be = 2u32.to_be_bytes().to_vec();
        null_be.extend_from_slice(&ip);
        let mut lo = 2u32.to_be_bytes().to_vec();
        lo.extend_from_slice(&ip);
        for (lt, data) in [
            (1, &eth),
            (1, &qinq),
            (113, &sll),
            (276, &sll2),
            (0, &null),
            (0, &null_be),
            (108, &lo),
            (101, &ip),
            (228, &ip),
            (12, &ip),
        ] {
            let t = expect_tcp(decode(lt, data, data.len() as u32));
            assert_eq!(t.payload, b"hello", "link type {lt}");
            assert_eq!(t.dst.port, 9092);
            assert_eq!(t.seq, 1000);
            assert_eq!(t.cut, 0);
        }
    }

    #[test]
    fn ipv6_families_and_extension_headers() {
        let b = PacketBuilder::ipv6([1; 16], [2; 16], 64).tcp(40000, 9092, 7, 100);
        let mut v6 = Vec::new();
        b.write(&mut v6, b"xy").unwrap();
        for fam in [10u32, 24, 28, 30] {
            let mut d = fam.to_le_bytes().to_vec();
            d.extend_from_slice(&v6);
            assert_eq!(expect_tcp(decode(0, &d, d.len() as u32)).payload, b"xy");
        }
        assert_eq!(expect_tcp(decode(229, &v6, v6.len() as u32)).payload, b"xy");
        // Insert a hop-by-hop header (8 bytes, next header TCP) after the fixed header.
        let mut ext = v6[..40].to_vec();
        ext[6] = 0; // next header: hop-by-hop
        let plen = u16::from_be_bytes([ext[4], ext[5]]) + 8;
        ext[4..6].copy_from_slice(&plen.to_be_bytes());
        ext.extend_from_slice(&[6, 0, 1, 4, 0, 0, 0, 0]);
        ext.extend_from_slice(&v6[40..]);
        assert_eq!(
            expect_tcp(decode(101, &ext, ext.len() as u32)).payload,
            b"xy"
        );
    }

    #[test]
    fn snaplen_cut_is_counted() {
        let ip = tcp_ipv4(&[7u8; 100]);
        let cap = &ip[..ip.len() - 30];
        let t = expect_tcp(decode(101, cap, ip.len() as u32));
        assert_eq!((t.payload.len(), t.cut), (70, 30));
    }

    #[test]
    fn snaplen_cut_is_bounded_by_the_ip_length() {
        let ip = tcp_ipv4(&[7u8; 100]);
        let cap = &ip[..ip.len() - 30];
        // A record claiming 4 GiB on the wire: the IP header says only 30 bytes are missing.
        let t = expect_tcp(decode(101, cap, u32::MAX));
        assert_eq!((t.payload.len(), t.cut), (70, 30));
    }

    #[test]
    fn unknown_link_type_and_broken_headers() {
        assert!(matches!(
            decode(147, &[0; 40], 40),
            Decoded::Anomaly {
                kind: AnomalyKind::UnsupportedLinkType,
                ..
            }
        ));
        let ip = tcp_ipv4(b"x");
        // IPv4 header cut inside the TCP header.
        assert!(matches!(
            decode(101, &ip[..30], ip.len() as u32),
            Decoded::Anomaly {
                kind: AnomalyKind::TruncatedPacket,
                ..
            }
        ));
        assert!(matches!(
            decode(101, &[0x45, 0, 0], 3),
            Decoded::Anomaly {
                kind: AnomalyKind::BadIpHeader,
                ..
            }
        ));
    }

    /// The IPv4 fast path and the lax path agree on what the IP length says: Ethernet padding
    /// after the packet is not payload, a total length of 0 (segmentation offload) or below
    /// the header falls back to the captured bytes, and fragments are not TCP.
    #[test]
    fn ipv4_lengths_padding_offload_and_fragments() {
        let ip = tcp_ipv4(b"abc");
        let mut padded = ip.clone();
        padded.extend_from_slice(&[0; 6]);
        assert_eq!(
            expect_tcp(decode(101, &padded, padded.len() as u32)).payload,
            b"abc"
        );
        for total in [0u16, 10] {
            let mut tso = ip.clone();
            tso[2..4].copy_from_slice(&total.to_be_bytes());
            let t = expect_tcp(decode(101, &tso, tso.len() as u32));
            assert_eq!((t.payload, t.cut), (&b"abc"[..], 0), "total length {total}");
        }
        let mut fragment = ip.clone();
        fragment[6] = 0x20; // more fragments
        assert!(matches!(
            decode(101, &fragment, fragment.len() as u32),
            Decoded::Other
        ));
        let mut udp = ip.clone();
        udp[9] = 17;
        assert!(matches!(
            decode(101, &udp, udp.len() as u32),
            Decoded::Other
        ));
    }

    /// A snapshot length that cuts the TCP header (`tcpdump -s 60` on a packet with options)
    /// is named as the cause, rather than the header parser's error.
    #[test]
    fn snaplen_inside_the_tcp_header_is_named() {
        let ip = tcp_ipv4(b"abc");
        // 20 bytes of IPv4 header and 16 of the 20-byte TCP header captured.
        match decode(101, &ip[..36], ip.len() as u32) {
            Decoded::Anomaly { kind, message } => {
                assert_eq!(kind, AnomalyKind::TruncatedPacket);
                assert_eq!(
                    message,
                    "TCP header could not be read: the capture's snapshot length cut the packet \
                     inside it (7 bytes of the packet were not captured; `tcpdump -s 0` captures \
                     whole packets)"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
