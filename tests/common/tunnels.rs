//! Encapsulation headers written byte by byte from their specifications, around the IP
//! packets of a [`super::Conversation`]: outer IPv4 (RFC 791) and IPv6 (RFC 8200), UDP
//! (RFC 768), VXLAN (RFC 7348), Geneve (RFC 8926), GRE (RFC 2784, RFC 2890), ERSPAN types II
//! and III (draft-foschiano-erspan-03), MPLS (RFC 3032), PPPoE sessions (RFC 2516). Nothing here
//! uses kafka-pcap's decoder or etherparse, so a capture written with it is an independent input.

#![allow(dead_code)]

use std::net::IpAddr;

/// EtherType of an IP packet.
pub fn ip_ether_type(ip: &[u8]) -> u16 {
    if ip[0] >> 4 == 6 {
        0x86dd
    } else {
        0x0800
    }
}

/// An Ethernet II frame (fixed MAC addresses) of `ether_type` around `payload`, with 802.1Q
/// tags `vlans` (outermost first).
pub fn eth(ether_type: u16, vlans: &[u16], payload: &[u8]) -> Vec<u8> {
    let mut v = vec![0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01];
    for vid in vlans {
        v.extend_from_slice(&0x8100u16.to_be_bytes());
        v.extend_from_slice(&(vid & 0x0fff).to_be_bytes());
    }
    v.extend_from_slice(&ether_type.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// An Ethernet frame around the IP packet `ip`.
pub fn eth_ip(vlans: &[u16], ip: &[u8]) -> Vec<u8> {
    eth(ip_ether_type(ip), vlans, ip)
}

fn checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for pair in header.chunks(2) {
        sum += u32::from(u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]));
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An outer IP packet from `src` to `dst` (both IPv4 or both IPv6) with protocol / next header
/// `protocol`, around `payload`.
pub fn outer_ip(src: IpAddr, dst: IpAddr, protocol: u8, payload: &[u8]) -> Vec<u8> {
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let total = (20 + payload.len()) as u16;
            let mut h = vec![0x45, 0];
            h.extend_from_slice(&total.to_be_bytes());
            h.extend_from_slice(&[0x12, 0x34, 0x40, 0x00, 64, protocol, 0, 0]);
            h.extend_from_slice(&s.octets());
            h.extend_from_slice(&d.octets());
            let c = checksum(&h);
            h[10..12].copy_from_slice(&c.to_be_bytes());
            h.extend_from_slice(payload);
            h
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            let mut h = vec![0x60, 0, 0, 0];
            h.extend_from_slice(&(payload.len() as u16).to_be_bytes());
            h.extend_from_slice(&[protocol, 64]);
            h.extend_from_slice(&s.octets());
            h.extend_from_slice(&d.octets());
            h.extend_from_slice(payload);
            h
        }
        _ => panic!("outer addresses of two families"),
    }
}

/// A UDP datagram (checksum 0: none) from `sport` to `dport` around `payload`.
pub fn udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&sport.to_be_bytes());
    v.extend_from_slice(&dport.to_be_bytes());
    v.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(payload);
    v
}

/// A VXLAN header (I flag, `vni`) around the Ethernet frame `inner`.
pub fn vxlan(vni: u32, inner: &[u8]) -> Vec<u8> {
    let mut v = vec![0x08, 0, 0, 0];
    v.extend_from_slice(&(vni << 8).to_be_bytes());
    v.extend_from_slice(inner);
    v
}

/// A Geneve header (version 0, `protocol`, `vni`) with `options` (a multiple of 4 bytes)
/// around `inner`.
pub fn geneve(vni: u32, protocol: u16, options: &[u8], inner: &[u8]) -> Vec<u8> {
    assert_eq!(options.len() % 4, 0);
    let mut v = vec![(options.len() / 4) as u8, 0];
    v.extend_from_slice(&protocol.to_be_bytes());
    v.extend_from_slice(&(vni << 8).to_be_bytes());
    v.extend_from_slice(options);
    v.extend_from_slice(inner);
    v
}

/// A GRE header (version 0) of `protocol` with the optional checksum, key and sequence number
/// fields, around `payload`.
pub fn gre(
    protocol: u16,
    checksum: bool,
    key: Option<u32>,
    seq: Option<u32>,
    payload: &[u8],
) -> Vec<u8> {
    let mut flags = 0u16;
    if checksum {
        flags |= 0x8000;
    }
    if key.is_some() {
        flags |= 0x2000;
    }
    if seq.is_some() {
        flags |= 0x1000;
    }
    let mut v = Vec::new();
    v.extend_from_slice(&flags.to_be_bytes());
    v.extend_from_slice(&protocol.to_be_bytes());
    if checksum {
        v.extend_from_slice(&[0, 0, 0, 0]); // checksum (not checked), reserved
    }
    if let Some(k) = key {
        v.extend_from_slice(&k.to_be_bytes());
    }
    if let Some(s) = seq {
        v.extend_from_slice(&s.to_be_bytes());
    }
    v.extend_from_slice(payload);
    v
}

/// An ERSPAN type II header (version 1, `session`, index 0) around the mirrored Ethernet frame.
pub fn erspan2(session: u16, frame: &[u8]) -> Vec<u8> {
    let mut v = vec![0x10, 0x00];
    v.extend_from_slice(&(session & 0x3ff).to_be_bytes());
    v.extend_from_slice(&[0, 0, 0, 0]);
    v.extend_from_slice(frame);
    v
}

/// An ERSPAN type III header (version 2, `session`), with the 8-byte platform-specific
/// subheader when `subheader`, around the mirrored Ethernet frame.
pub fn erspan3(session: u16, subheader: bool, frame: &[u8]) -> Vec<u8> {
    let mut v = vec![0x20, 0x00];
    v.extend_from_slice(&(session & 0x3ff).to_be_bytes());
    v.extend_from_slice(&0x0102_0304u32.to_be_bytes()); // timestamp
    v.extend_from_slice(&[0, 0]); // security group tag
    v.extend_from_slice(&[0, u8::from(subheader)]); // P, FT, HW ID, D, Gra, O
    if subheader {
        v.extend_from_slice(&[0x08, 0, 0, 0, 0, 0, 0, 0]);
    }
    v.extend_from_slice(frame);
    v
}

/// An MPLS label stack (`labels`, outermost first, TTL 64, the last with the bottom-of-stack
/// bit) around `payload`.
pub fn mpls(labels: &[u32], payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    for (i, l) in labels.iter().enumerate() {
        let bottom = u32::from(i + 1 == labels.len());
        v.extend_from_slice(&((l << 12) | (bottom << 8) | 64).to_be_bytes());
    }
    v.extend_from_slice(payload);
    v
}

/// A PPPoE session header (version 1, type 1, code 0, `session`) and the PPP protocol of the IP
/// packet `ip`, around it.
pub fn pppoe(session: u16, ip: &[u8]) -> Vec<u8> {
    let mut v = vec![0x11, 0x00];
    v.extend_from_slice(&session.to_be_bytes());
    v.extend_from_slice(&((ip.len() + 2) as u16).to_be_bytes());
    let protocol: u16 = if ip[0] >> 4 == 6 { 0x0057 } else { 0x0021 };
    v.extend_from_slice(&protocol.to_be_bytes());
    v.extend_from_slice(ip);
    v
}

/// The IPv4 packet `ip` (a 20-byte header, no options) cut into fragments of at most `size`
/// payload bytes (a multiple of 8), each with identification `id`, in order (RFC 791).
pub fn fragment_v4(ip: &[u8], id: u16, size: usize) -> Vec<Vec<u8>> {
    assert_eq!(ip[0], 0x45);
    assert_eq!(size % 8, 0);
    let payload = &ip[20..];
    let mut out = Vec::new();
    let mut at = 0;
    while at < payload.len() {
        let end = (at + size).min(payload.len());
        let more = end < payload.len();
        let mut h = ip[..20].to_vec();
        h[2..4].copy_from_slice(&((20 + end - at) as u16).to_be_bytes());
        h[4..6].copy_from_slice(&id.to_be_bytes());
        let flags_offset = ((at / 8) as u16) | if more { 0x2000 } else { 0 };
        h[6..8].copy_from_slice(&flags_offset.to_be_bytes());
        h[10..12].copy_from_slice(&[0, 0]);
        let c = checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h.extend_from_slice(&payload[at..end]);
        out.push(h);
        at = end;
    }
    out
}

/// The IPv6 packet `ip` (a 40-byte header, no extension headers) cut into fragments of at most
/// `size` payload bytes (a multiple of 8), each with a fragment header of identification `id`
/// (RFC 8200, section 4.5).
pub fn fragment_v6(ip: &[u8], id: u32, size: usize) -> Vec<Vec<u8>> {
    assert_eq!(ip[0] >> 4, 6);
    assert_eq!(size % 8, 0);
    let next = ip[6];
    let payload = &ip[40..];
    let mut out = Vec::new();
    let mut at = 0;
    while at < payload.len() {
        let end = (at + size).min(payload.len());
        let more = end < payload.len();
        let mut h = ip[..40].to_vec();
        h[4..6].copy_from_slice(&((8 + end - at) as u16).to_be_bytes());
        h[6] = 44;
        h.extend_from_slice(&[next, 0]);
        let offset_flags = ((at / 8) as u16) << 3 | u16::from(more);
        h.extend_from_slice(&offset_flags.to_be_bytes());
        h.extend_from_slice(&id.to_be_bytes());
        h.extend_from_slice(&payload[at..end]);
        out.push(h);
        at = end;
    }
    out
}

/// The seed's WriteTxnMarkers exchange (correlation id 1) from `client`:40000 to
/// `server`:9092 (both of one family).
pub fn exchange(client: IpAddr, server: IpAddr) -> super::Conversation {
    let mut c = super::Conversation::new(client.is_ipv6(), 9092)
        .client(&super::request_with_corr(1))
        .server(&super::response_with_corr(1));
    c.client_ip = client;
    c.server_ip = server;
    c
}

/// The exchange the tunnel captures carry: from pod 10.244.1.5 to broker 10.244.2.7, or from
/// 2001:db8::105 to 2001:db8::207 (the 6in4 capture).
pub fn pod_exchange(ipv6: bool) -> super::Conversation {
    if ipv6 {
        exchange(
            "2001:db8::105".parse().unwrap(),
            "2001:db8::207".parse().unwrap(),
        )
    } else {
        exchange(
            IpAddr::V4([10, 244, 1, 5].into()),
            IpAddr::V4([10, 244, 2, 7].into()),
        )
    }
}
