//! Packet decoding: link layer, IP and TCP headers (the only user of etherparse).
//!
//! Input: one captured packet: its link type (the pcap `LINKTYPE_` value), its captured bytes
//! and its original length on the wire.
//! Output: [`Decoded::Tcp`] with the segment's endpoints, flags, sequence number and borrowed
//! payload (no copy), [`Decoded::Other`] for anything that is not TCP, or
//! [`Decoded::Anomaly`] for a packet whose headers are broken or whose link type is unknown.
//!
//! Link types (tcpdump.org "Link-layer header types"): Ethernet II (1) with 802.1Q and QinQ
//! tags, Linux cooked SLL (113) and SLL2 (276), BSD loopback NULL (0, host byte order) and LOOP
//! (108, network byte order) with address family 2 (IPv4) or 10, 24, 28, 30 (IPv6), and raw IP
//! (101, 228, 229, and the historic 12 and 14). IPv4 (RFC 791) and IPv6 (RFC 8200) with
//! extension headers skipped; TCP (RFC 9293).

use crate::vocab::{AnomalyKind, Endpoint};

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
}

/// What a packet turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded<'a> {
    /// A TCP segment.
    Tcp(TcpSegment<'a>),
    /// Not TCP over IP (ARP, UDP, ICMP, an IP fragment after the first, ...): not of interest.
    Other,
    /// Broken headers or an unknown link type: `kind` is the anomaly kind
    /// (`unsupported_link_type`, `truncated_packet`, `bad_ip_header`), `message` a sentence.
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

/// EtherTypes of 802.1Q, 802.1ad (QinQ) and the older QinQ value: a 4-byte tag follows.
const VLAN_TAGS: [u16; 3] = [0x8100, 0x88a8, 0x9100];
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;

/// Where the IP header starts after the link layer, or why there is none.
enum Link {
    /// The IP header starts at this offset.
    Ip(usize),
    /// Not IP (ARP, LLDP, another address family ...).
    Other,
    /// The link header is cut short.
    Truncated(&'static str),
}

/// Skips VLAN tags after an EtherType at `at` (the EtherType's own offset) and says where the
/// IP header starts, if the innermost EtherType is IPv4 or IPv6.
fn after_ether_type(data: &[u8], mut at: usize) -> Link {
    loop {
        if data.len() < at + 2 {
            return Link::Truncated("link header cut short");
        }
        let ether_type = u16::from_be_bytes([data[at], data[at + 1]]);
        if VLAN_TAGS.contains(&ether_type) {
            // A tag: 2 bytes of TCI, then the next EtherType.
            match etherparse::SingleVlanHeaderSlice::from_slice(&data[at + 2..]) {
                Ok(_) => at += 4,
                Err(_) => return Link::Truncated("VLAN tag cut short"),
            }
            continue;
        }
        return match ether_type {
            ETHERTYPE_IPV4 | ETHERTYPE_IPV6 => Link::Ip(at + 2),
            _ => Link::Other,
        };
    }
}

fn link(linktype: i32, data: &[u8]) -> Link {
    match linktype {
        1 => match etherparse::Ethernet2HeaderSlice::from_slice(data) {
            Ok(_) => after_ether_type(data, 12),
            Err(_) => Link::Truncated("Ethernet header cut short"),
        },
        // Linux cooked v1: 16-byte header, protocol type (an EtherType) at offset 14.
        113 if data.len() < 16 => Link::Truncated("Linux SLL header cut short"),
        113 => after_ether_type(data, 14),
        // Linux cooked v2: 20-byte header, protocol type (an EtherType) at offset 0.
        276 if data.len() < 20 => Link::Truncated("Linux SLL2 header cut short"),
        276 => match u16::from_be_bytes([data[0], data[1]]) {
            ETHERTYPE_IPV4 | ETHERTYPE_IPV6 => Link::Ip(20),
            _ => Link::Other,
        },
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

/// Decodes one packet of link type `linktype` whose captured bytes are `data` and whose
/// length on the wire was `orig_len` bytes.
#[inline(always)]
pub fn decode(linktype: i32, data: &[u8], orig_len: u32) -> Decoded<'_> {
    if !is_supported_link_type(linktype) {
        return anomaly(
            AnomalyKind::UnsupportedLinkType,
            format!("link type {linktype} is not one this tool decodes"),
        );
    }
    let ip_bytes = match link(linktype, data) {
        Link::Ip(at) => &data[at..],
        Link::Other => return Decoded::Other,
        Link::Truncated(what) => return anomaly(AnomalyKind::TruncatedPacket, what.to_string()),
    };
    // The common case first: a complete IPv4 packet carrying TCP, read with the plain header
    // slice (the lax slice below returns a far larger value, a measurable cost per packet).
    // Anything else (IPv6, extension or authentication headers, a total length that
    // disagrees with the bytes) takes the lax path, which decides the same for this case.
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
    let (ip, _ext_err) = match etherparse::LaxIpSlice::from_slice(ip_bytes) {
        Ok(x) => x,
        Err(e) => {
            return anomaly(
                AnomalyKind::BadIpHeader,
                format!("IP header could not be read: {e}"),
            )
        }
    };
    let payload = ip.payload();
    if payload.ip_number != etherparse::IpNumber::TCP || payload.fragmented {
        // Fragments are not reassembled; a lost TCP payload shows up as a gap later.
        return Decoded::Other;
    }
    // Bytes a snaplen cut off: what the record says was on the wire beyond what was
    // captured, but never more than the IP header's own length says is missing.
    let cut = if payload.incomplete {
        let ip_len = match &ip {
            etherparse::LaxIpSlice::Ipv4(v4) => u64::from(v4.header().total_len()),
            etherparse::LaxIpSlice::Ipv6(v6) => 40 + u64::from(v6.header().payload_length()),
        };
        let by_ip = ip_len.saturating_sub(ip_bytes.len() as u64);
        let by_record = u64::from(orig_len).saturating_sub(data.len() as u64);
        by_ip.min(by_record)
    } else {
        0
    };
    tcp(
        ip.source_addr(),
        ip.destination_addr(),
        payload.payload,
        cut,
    )
}

/// The TCP segment in `ip_payload`, sent from `src` to `dst`, followed by `cut` bytes that
/// were not captured.
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
    })
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
