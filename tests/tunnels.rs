//! Traffic inside tunnels decodes as if captured plain.
//!
//! `captures/tunnel-*.pcap` (written by `examples/make_tunnel_captures.rs` with the headers of
//! `tests/common/tunnels.rs`, each from its specification) carry one WriteTxnMarkers v1 exchange
//! inside one encapsulation each. Their goldens are checked with every capture by
//! `tests/captures.rs`; here, each capture's records equal those of the same packets captured
//! plain once `tunnel` is taken out, `tunnel` says exactly which layers were there, and
//! connections in different tunnels stay apart.

mod common;

use common::tunnels::*;
use common::*;
use serde_json::{json, Value};
use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;

fn capture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("captures/{name}.pcap"));
    std::fs::read(p).unwrap()
}

fn v4(a: u8, b: u8, c: u8, d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(a, b, c, d))
}

/// The generator's conversation (pod 10.244.1.5:40000 to broker 10.244.2.7:9092, or the IPv6
/// pair of the 6in4 capture), captured plain on Ethernet at the same times.
fn plain(ipv6: bool) -> Vec<Value> {
    let c = pod_exchange(ipv6);
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
    for (i, p) in c.packets().iter().enumerate() {
        w.packet(1_767_225_600, 1000 * i as u32, &eth_ip(&[], &p.ip));
    }
    run_capture(w.bytes())
}

/// The records with their `tunnel` taken out, and the tunnels one by one.
fn split(records: Vec<Value>) -> (Vec<Value>, Vec<Value>) {
    let mut tunnels = Vec::new();
    let rest = records
        .into_iter()
        .map(|mut r| {
            tunnels.push(
                r.as_object_mut()
                    .unwrap()
                    .remove("tunnel")
                    .unwrap_or(Value::Null),
            );
            r
        })
        .collect();
    (rest, tunnels)
}

/// Every tunnel capture: exactly the plain records (the request and the response, paired),
/// and each record's tunnel as the packet carrying it was wrapped.
#[test]
fn every_encapsulation_decodes_as_if_captured_plain() {
    let a = "192.168.10.1";
    let b = "192.168.10.2";
    let vx = |s: &str, d: &str, vni: u32| json!({"type": "vxlan", "outer_src_ip": s, "outer_dest_ip": d, "vni": vni});
    let cases: Vec<(&str, bool, Value, Value)> = vec![
        (
            "tunnel-vxlan",
            false,
            json!([vx(a, b, 42)]),
            json!([vx(b, a, 42)]),
        ),
        (
            "tunnel-vxlan6-vlan",
            false,
            json!([vx("2001:db8::a", "2001:db8::b", 7)]),
            json!([vx("2001:db8::b", "2001:db8::a", 7)]),
        ),
        (
            "tunnel-vxlan-mirror",
            false,
            json!([vx("172.31.5.9", "172.31.8.20", 1234)]),
            json!([vx("172.31.5.9", "172.31.8.20", 1234)]),
        ),
        (
            "tunnel-geneve",
            false,
            json!([{"type": "geneve", "outer_src_ip": a, "outer_dest_ip": b, "vni": 99}]),
            json!([{"type": "geneve", "outer_src_ip": b, "outer_dest_ip": a, "vni": 99}]),
        ),
        (
            "tunnel-gre-ip",
            false,
            json!([{"type": "gre", "outer_src_ip": a, "outer_dest_ip": b, "key": 77}]),
            json!([{"type": "gre", "outer_src_ip": b, "outer_dest_ip": a, "key": 77}]),
        ),
        (
            "tunnel-gre-eth",
            false,
            json!([{"type": "gre", "outer_src_ip": a, "outer_dest_ip": b}]),
            json!([{"type": "gre", "outer_src_ip": b, "outer_dest_ip": a}]),
        ),
        (
            "tunnel-erspan2",
            false,
            json!([{"type": "gre", "outer_src_ip": "10.9.9.1", "outer_dest_ip": "10.9.9.200"}, {"type": "erspan_2", "session_id": 100}]),
            json!([{"type": "gre", "outer_src_ip": "10.9.9.1", "outer_dest_ip": "10.9.9.200"}, {"type": "erspan_2", "session_id": 100}]),
        ),
        (
            "tunnel-erspan3",
            false,
            json!([{"type": "gre", "outer_src_ip": "10.9.9.1", "outer_dest_ip": "10.9.9.200"}, {"type": "erspan_3", "session_id": 513}]),
            json!([{"type": "gre", "outer_src_ip": "10.9.9.1", "outer_dest_ip": "10.9.9.200"}, {"type": "erspan_3", "session_id": 513}]),
        ),
        (
            "tunnel-ipip",
            false,
            json!([{"type": "ip_in_ip", "outer_src_ip": a, "outer_dest_ip": b}]),
            json!([{"type": "ip_in_ip", "outer_src_ip": b, "outer_dest_ip": a}]),
        ),
        (
            "tunnel-6in4",
            true,
            json!([{"type": "ip_in_ip", "outer_src_ip": a, "outer_dest_ip": b}]),
            json!([{"type": "ip_in_ip", "outer_src_ip": b, "outer_dest_ip": a}]),
        ),
        (
            "tunnel-mpls",
            false,
            json!([{"type": "mpls", "label": 1000, "labels": 1}]),
            json!([{"type": "mpls", "label": 1000, "labels": 1}]),
        ),
        (
            "tunnel-mpls2",
            false,
            json!([{"type": "mpls", "label": 3001, "labels": 2}]),
            json!([{"type": "mpls", "label": 3002, "labels": 2}]),
        ),
        (
            "tunnel-pppoe",
            false,
            json!([{"type": "pppoe", "session_id": 0x1234}]),
            json!([{"type": "pppoe", "session_id": 0x1234}]),
        ),
        (
            "tunnel-nested",
            false,
            json!([{"type": "gre", "outer_src_ip": a, "outer_dest_ip": b, "key": 9}, vx("10.0.0.1", "10.0.0.2", 5)]),
            json!([{"type": "gre", "outer_src_ip": b, "outer_dest_ip": a, "key": 9}, vx("10.0.0.1", "10.0.0.2", 5)]),
        ),
    ];
    for (name, ipv6, request_tunnel, response_tunnel) in cases {
        let (records, tunnels) = split(run_capture(&capture(name)));
        assert_eq!(records, plain(ipv6), "{name}");
        assert_eq!(records.len(), 2, "{name}");
        assert_eq!(records[1]["kafka"]["request_frame"], 4, "{name}");
        assert_eq!(tunnels, vec![request_tunnel, response_tunnel], "{name}");
    }
}

/// The same inner connection in VNI 1 and VNI 2, packets interleaved: two streams, each pairing
/// its own request; plain traffic of the same 4-tuple would be a third.
#[test]
fn the_same_connection_in_two_tunnels_is_two_streams() {
    let out = run_capture(&capture("tunnel-two-vnis"));
    let summary: Vec<(i64, i64, &str, i64)> = out
        .iter()
        .map(|r| {
            (
                r["stream"].as_i64().unwrap(),
                r["tunnel"][0]["vni"].as_i64().unwrap(),
                r["kafka"]["message"].as_str().unwrap(),
                r["frame"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (0, 1, "request", 7),
            (1, 2, "request", 8),
            (0, 1, "response", 9),
            (1, 2, "response", 10),
        ]
    );
    assert_eq!(out[2]["kafka"]["request_frame"], 7);
    assert_eq!(out[3]["kafka"]["request_frame"], 8);
}

/// A compressed capture of tunnelled traffic: the records of the plain file.
#[test]
fn a_compressed_tunnel_capture_reads_as_the_plain_file() {
    use std::io::Write;
    let raw = capture("tunnel-nested");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&raw).unwrap();
    assert_eq!(run_capture(&e.finish().unwrap()), run_capture(&raw));
}

fn one_packet(frame: &[u8]) -> Vec<Value> {
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
    w.packet(1_767_225_600, 0, frame);
    run_capture(w.bytes())
}

fn syn() -> Vec<u8> {
    tcp_packet(
        v4(10, 0, 0, 1),
        40000,
        v4(10, 0, 0, 2),
        9092,
        1,
        0,
        Flags::SYN,
        &[],
    )
}

/// Nine IP-in-IP layers: past the eight unwrapped, one `tunnel_limit` anomaly; a cut tunnel
/// header is a `truncated_packet` that names the tunnels it was inside.
#[test]
fn too_deep_and_cut_tunnels_are_anomalies() {
    let mut ip = syn();
    for _ in 0..9 {
        ip = outer_ip(v4(1, 1, 1, 1), v4(2, 2, 2, 2), 4, &ip);
    }
    let out = one_packet(&eth_ip(&[], &ip));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["anomaly"]["kind"], "tunnel_limit");
    assert_eq!(out[0]["anomaly"]["layer"], "packet");
    assert_eq!(
        out[0]["anomaly"]["message"],
        "a packet nested more than 8 tunnel layers deep (or an MPLS stack of more than 16 \
         labels) was skipped"
    );
    // Eight layers are unwrapped: no anomaly (the lone SYN makes no record).
    let mut ip = syn();
    for _ in 0..8 {
        ip = outer_ip(v4(1, 1, 1, 1), v4(2, 2, 2, 2), 4, &ip);
    }
    assert_eq!(one_packet(&eth_ip(&[], &ip)), Vec::<Value>::new());
    // GRE inside VXLAN, the GRE header cut after its first two bytes.
    let gre_cut = outer_ip(v4(3, 3, 3, 3), v4(4, 4, 4, 4), 47, &[0x20, 0x00]);
    let frame = eth_ip(
        &[],
        &outer_ip(
            v4(1, 1, 1, 1),
            v4(2, 2, 2, 2),
            17,
            &udp(1, 4789, &vxlan(3, &eth_ip(&[], &gre_cut))),
        ),
    );
    let out = one_packet(&frame);
    assert_eq!(out[0]["anomaly"]["kind"], "truncated_packet");
    assert_eq!(
        out[0]["anomaly"]["message"],
        "GRE header cut short (inside vxlan)"
    );
}

/// VXLAN without its I flag, Geneve of another version, GRE version 1 (PPTP) and UDP to other
/// ports are not tunnels: nothing is made of them.
#[test]
fn lookalikes_are_not_tunnels() {
    let inner = eth_ip(&[], &syn());
    let mut no_i_flag = vxlan(1, &inner);
    no_i_flag[0] = 0;
    let mut geneve_v1 = geneve(1, 0x6558, &[], &inner);
    geneve_v1[0] |= 0x40;
    let mut pptp = gre(0x880b, false, Some(1), None, &inner);
    pptp[1] |= 1;
    for payload in [
        outer_ip(
            v4(1, 1, 1, 1),
            v4(2, 2, 2, 2),
            17,
            &udp(1, 4789, &no_i_flag),
        ),
        outer_ip(
            v4(1, 1, 1, 1),
            v4(2, 2, 2, 2),
            17,
            &udp(1, 6081, &geneve_v1),
        ),
        outer_ip(v4(1, 1, 1, 1), v4(2, 2, 2, 2), 47, &pptp),
        outer_ip(
            v4(1, 1, 1, 1),
            v4(2, 2, 2, 2),
            17,
            &udp(1, 4790, &vxlan(1, &inner)),
        ),
    ] {
        assert_eq!(one_packet(&eth_ip(&[], &payload)), Vec::<Value>::new());
    }
}

/// `--vxlan-port` (here `Config::vxlan_ports`): a VXLAN port of one's own.
#[test]
fn a_vxlan_port_of_ones_own() {
    let c = Conversation::new(false, 9092)
        .client(&request_with_corr(1))
        .server(&response_with_corr(1));
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
    for (i, p) in c.packets().iter().enumerate() {
        let f = eth_ip(
            &[],
            &outer_ip(
                v4(1, 1, 1, 1),
                v4(2, 2, 2, 2),
                17,
                &udp(1, 10_000, &vxlan(8, &eth_ip(&[], &p.ip))),
            ),
        );
        w.packet(1_767_225_600, i as u32, &f);
    }
    assert_eq!(run_capture(w.bytes()), Vec::<Value>::new());
    let config = kafka_pcap::Config {
        vxlan_ports: vec![4789, 8472, 10_000],
        ..kafka_pcap::Config::default()
    };
    let out = run_capture_with(w.bytes(), &config);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0]["tunnel"][0]["vni"], 8);
}

/// Linux cooked v2 (`tcpdump -i any`), whose protocol field is at the start of its 20-byte
/// header, carrying a VLAN tag, MPLS or PPPoE; and MPLS carried in GRE.
#[test]
fn sll2_with_tags_mpls_and_pppoe_and_mpls_in_gre() {
    let c = Conversation::new(false, 9092)
        .client(&request_with_corr(1))
        .server(&response_with_corr(1));
    let sll2 = |protocol: u16, payload: &[u8]| {
        let mut v = protocol.to_be_bytes().to_vec();
        v.extend_from_slice(&[0u8; 18]);
        v.extend_from_slice(payload);
        v
    };
    type Wrap<'a> = Box<dyn Fn(&[u8]) -> Vec<u8> + 'a>;
    let cases: Vec<(&str, Wrap<'_>, u32)> = vec![
        (
            "vlan",
            Box::new(|ip: &[u8]| {
                let mut tag = vec![0x00, 0x1e];
                tag.extend_from_slice(&ip_ether_type(ip).to_be_bytes());
                tag.extend_from_slice(ip);
                sll2(0x8100, &tag)
            }),
            276,
        ),
        (
            "mpls",
            Box::new(|ip: &[u8]| sll2(0x8847, &mpls(&[77], ip))),
            276,
        ),
        (
            "pppoe",
            Box::new(|ip: &[u8]| sll2(0x8864, &pppoe(9, ip))),
            276,
        ),
        (
            "mpls in gre",
            Box::new(|ip: &[u8]| {
                let g = gre(0x8847, false, Some(3), None, &mpls(&[500], ip));
                eth_ip(&[], &outer_ip(v4(1, 1, 1, 1), v4(2, 2, 2, 2), 47, &g))
            }),
            1,
        ),
    ];
    for (name, wrap, linktype) in cases {
        let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, linktype, 262_144);
        for (i, p) in c.packets().iter().enumerate() {
            w.packet(1_767_225_600, i as u32, &wrap(&p.ip));
        }
        let out = run_capture(w.bytes());
        assert_eq!(out.len(), 2, "{name}: {out:?}");
        assert_eq!(out[1]["kafka"]["request_frame"], 4, "{name}");
    }
}

/// `--format text` names the tunnel after the endpoints, and `--host` with a tunnel's outer
/// address keeps its traffic.
#[test]
fn text_names_the_tunnel_and_host_matches_outer_addresses() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("captures/tunnel-nested.pcap");
    let bin = assert_cmd::cargo::cargo_bin("kafka-pcap");
    let text = std::process::Command::new(&bin)
        .args(["--format", "text"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.lines().next().unwrap().contains(
            "#0 10.244.1.5:40000 -> 10.244.2.7:9092 [gre key=9 192.168.10.1>192.168.10.2, \
             vxlan vni=5 10.0.0.1>10.0.0.2]"
        ),
        "{text}"
    );
    for (host, lines) in [
        ("10.0.0.2", 2),
        ("192.168.10.1", 2),
        ("192.168.10.9", 0),
        ("10.0.0.2:4789", 0),
    ] {
        let out = std::process::Command::new(&bin)
            .args(["--host", host])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8(out.stdout).unwrap().lines().count(),
            lines,
            "{host}"
        );
    }
}
