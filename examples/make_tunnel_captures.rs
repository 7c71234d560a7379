//! Writes the synthetic tunnel captures `captures/tunnel-*.pcap`: one WriteTxnMarkers v1
//! exchange (the seed's frames, correlation id 1) on a whole TCP connection, inside one
//! encapsulation per capture, its headers written byte by byte from the specifications by
//! `tests/common/tunnels.rs` (see `captures/README.md`). Deterministic: the same files every
//! run.
//!
//! Usage: `cargo run --example make_tunnel_captures`, then
//! `KAFKA_PCAP_BLESS=1 cargo test --test tunnels` to regenerate their golden outputs on purpose.

#[path = "../tests/common/mod.rs"]
mod common;

use common::tunnels::*;
use common::*;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

fn v4(a: u8, b: u8, c: u8, d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(a, b, c, d))
}

fn v6(last: u16) -> IpAddr {
    IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, last))
}

/// The exchange between pod 10.244.1.5:40000 and broker 10.244.2.7:9092 (or 6in4's IPv6
/// addresses), every packet of it.
fn conversation(ipv6: bool) -> Vec<Packet> {
    pod_exchange(ipv6).packets()
}

/// The outer addresses of a packet going `dir` between two tunnel ends `a` (the client's) and
/// `b` (the broker's).
fn ends(dir: Dir, a: IpAddr, b: IpAddr) -> (IpAddr, IpAddr) {
    match dir {
        Dir::ToServer => (a, b),
        Dir::ToClient => (b, a),
    }
}

/// The capture `name`: each packet of `packets` as `wrap` frames it (Ethernet).
fn write(name: &str, packets: &[Packet], wrap: impl Fn(&Packet) -> Vec<u8>) {
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
    for (i, p) in packets.iter().enumerate() {
        w.packet(1_767_225_600, 1000 * i as u32, &wrap(p));
    }
    let path = format!("{}/captures/{name}.pcap", env!("CARGO_MANIFEST_DIR"));
    std::fs::write(&path, w.bytes()).expect("write capture");
    println!("{path}: {} packets", packets.len());
}

fn main() {
    let plain = conversation(false);
    let (node_a, node_b) = (v4(192, 168, 10, 1), v4(192, 168, 10, 2));

    // VXLAN on IANA's port between two nodes, VNI 42; each direction from its sender's node.
    write("tunnel-vxlan", &plain, |p| {
        let (s, d) = ends(p.dir, node_a, node_b);
        eth_ip(
            &[],
            &outer_ip(
                s,
                d,
                17,
                &udp(50_123, 4789, &vxlan(42, &eth_ip(&[], &p.ip))),
            ),
        )
    });
    // VXLAN on Linux's port 8472 (flannel) over IPv6, a VLAN tag inside.
    write("tunnel-vxlan6-vlan", &plain, |p| {
        let (s, d) = ends(p.dir, v6(0xa), v6(0xb));
        eth_ip(
            &[],
            &outer_ip(
                s,
                d,
                17,
                &udp(49_001, 8472, &vxlan(7, &eth_ip(&[30], &p.ip))),
            ),
        )
    });
    // AWS VPC Traffic Mirroring: both directions sent from the mirror source to the target.
    write("tunnel-vxlan-mirror", &plain, |p| {
        let s = v4(172, 31, 5, 9);
        let d = v4(172, 31, 8, 20);
        eth_ip(
            &[],
            &outer_ip(
                s,
                d,
                17,
                &udp(65_000, 4789, &vxlan(1234, &eth_ip(&[], &p.ip))),
            ),
        )
    });
    // Geneve with one 8-byte option, Ethernet inside.
    write("tunnel-geneve", &plain, |p| {
        let (s, d) = ends(p.dir, node_a, node_b);
        let option = [0x01, 0x02, 0x80, 0x01, 0xde, 0xad, 0xbe, 0xef];
        let g = geneve(99, 0x6558, &option, &eth_ip(&[], &p.ip));
        eth_ip(&[], &outer_ip(s, d, 17, &udp(50_000, 6081, &g)))
    });
    // GRE with a key, IPv4 inside.
    write("tunnel-gre-ip", &plain, |p| {
        let (s, d) = ends(p.dir, node_a, node_b);
        eth_ip(
            &[],
            &outer_ip(s, d, 47, &gre(0x0800, false, Some(77), None, &p.ip)),
        )
    });
    // GRE with checksum and sequence numbers, Ethernet inside (transparent bridging).
    write("tunnel-gre-eth", &plain, |p| {
        let (s, d) = ends(p.dir, node_a, node_b);
        let g = gre(0x6558, true, None, Some(5), &eth_ip(&[], &p.ip));
        eth_ip(&[], &outer_ip(s, d, 47, &g))
    });
    // ERSPAN type II from a switch to a collector, session 100.
    write("tunnel-erspan2", &plain, |p| {
        let g = gre(
            0x88be,
            false,
            None,
            Some(1),
            &erspan2(100, &eth_ip(&[], &p.ip)),
        );
        eth_ip(&[], &outer_ip(v4(10, 9, 9, 1), v4(10, 9, 9, 200), 47, &g))
    });
    // ERSPAN type III with its platform subheader, session 513.
    write("tunnel-erspan3", &plain, |p| {
        let g = gre(
            0x22eb,
            false,
            None,
            Some(1),
            &erspan3(513, true, &eth_ip(&[], &p.ip)),
        );
        eth_ip(&[], &outer_ip(v4(10, 9, 9, 1), v4(10, 9, 9, 200), 47, &g))
    });
    // IP-in-IP (Calico).
    write("tunnel-ipip", &plain, |p| {
        let (s, d) = ends(p.dir, node_a, node_b);
        eth_ip(&[], &outer_ip(s, d, 4, &p.ip))
    });
    // 6in4: IPv6 inside IPv4.
    let six = conversation(true);
    write("tunnel-6in4", &six, |p| {
        let (s, d) = ends(p.dir, node_a, node_b);
        eth_ip(&[], &outer_ip(s, d, 41, &p.ip))
    });
    // MPLS: one label; two labels, other labels each way (as label switching gives).
    write("tunnel-mpls", &plain, |p| {
        eth(0x8847, &[], &mpls(&[1000], &p.ip))
    });
    write("tunnel-mpls2", &plain, |p| {
        let labels: &[u32] = match p.dir {
            Dir::ToServer => &[16_001, 3001],
            Dir::ToClient => &[16_002, 3002],
        };
        eth(0x8847, &[], &mpls(labels, &p.ip))
    });
    // PPPoE session 0x1234.
    write("tunnel-pppoe", &plain, |p| {
        eth(0x8864, &[], &pppoe(0x1234, &p.ip))
    });
    // VXLAN inside GRE: two layers.
    write("tunnel-nested", &plain, |p| {
        let (s, d) = ends(p.dir, node_a, node_b);
        let inner = outer_ip(
            v4(10, 0, 0, 1),
            v4(10, 0, 0, 2),
            17,
            &udp(40_000, 4789, &vxlan(5, &eth_ip(&[], &p.ip))),
        );
        eth_ip(
            &[],
            &outer_ip(s, d, 47, &gre(0x0800, false, Some(9), None, &inner)),
        )
    });
    // The same inner connection (same addresses, ports and sequence numbers) in VNI 1 and
    // VNI 2, packets interleaved: two TCP streams, each pairing its own exchange.
    let twice: Vec<(u32, Packet)> = plain
        .iter()
        .flat_map(|p| [(1, p.clone()), (2, p.clone())])
        .collect();
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
    for (i, (vni, p)) in twice.iter().enumerate() {
        let (s, d) = ends(p.dir, node_a, node_b);
        let frame = eth_ip(
            &[],
            &outer_ip(
                s,
                d,
                17,
                &udp(50_123, 4789, &vxlan(*vni, &eth_ip(&[], &p.ip))),
            ),
        );
        w.packet(1_767_225_600, 1000 * i as u32, &frame);
    }
    let path = format!(
        "{}/captures/tunnel-two-vnis.pcap",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::write(&path, w.bytes()).expect("write capture");
    println!("{path}: {} packets", twice.len());
}
