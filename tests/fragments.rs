//! IP fragments are reassembled: IPv4 and IPv6 datagrams cut into fragments (by
//! `tests/common/tunnels.rs`, from RFC 791 and RFC 8200), in order, reversed, duplicated,
//! overlapping and missing, plain and inside a tunnel, give the records of the unfragmented
//! capture, or say what was lost.

mod common;

use common::tunnels::*;
use common::*;
use serde_json::Value;
use std::net::{IpAddr, Ipv4Addr};

fn v4(a: u8, b: u8, c: u8, d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(a, b, c, d))
}

/// The seed's exchange (correlation id 1) between 10.0.0.1 and 10.0.0.2, or their IPv6 pair.
fn packets(ipv6: bool) -> Vec<Packet> {
    if ipv6 {
        exchange(
            "2001:db8::1".parse().unwrap(),
            "2001:db8::2".parse().unwrap(),
        )
        .packets()
    } else {
        exchange(v4(10, 0, 0, 1), v4(10, 0, 0, 2)).packets()
    }
}

/// A capture of Ethernet frames, one every millisecond.
fn capture(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
    for (i, f) in frames.iter().enumerate() {
        w.packet(1_767_225_600, 1000 * i as u32, f);
    }
    w.into_bytes()
}

/// The records without the fields that name packets (frame, ts, latency): what must not
/// change when packets become fragments.
fn content(records: &[Value]) -> Vec<Value> {
    records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            let o = r.as_object_mut().unwrap();
            o.remove("frame");
            o.remove("ts");
            if let Some(k) = o.get_mut("kafka").and_then(Value::as_object_mut) {
                k.remove("request_frame");
                k.remove("latency_us");
            }
            r
        })
        .collect()
}

/// Every data packet cut into 16-byte fragments, arranged by `arrange`.
fn fragmented(ipv6: bool, mut arrange: impl FnMut(Vec<Vec<u8>>) -> Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    for (n, p) in packets(ipv6).iter().enumerate() {
        if p.payload.is_empty() {
            frames.push(eth_ip(&[], &p.ip));
            continue;
        }
        let parts = if ipv6 {
            fragment_v6(&p.ip, 100 + n as u32, 16)
        } else {
            fragment_v4(&p.ip, 100 + n as u16, 16)
        };
        assert!(parts.len() >= 3);
        frames.extend(arrange(parts).iter().map(|f| eth_ip(&[], f)));
    }
    frames
}

fn plain(ipv6: bool) -> Vec<Value> {
    let frames: Vec<Vec<u8>> = packets(ipv6).iter().map(|p| eth_ip(&[], &p.ip)).collect();
    run_capture(&capture(&frames))
}

#[test]
fn fragments_in_order_reversed_and_duplicated_give_the_plain_records() {
    for ipv6 in [false, true] {
        let want = plain(ipv6);
        assert_eq!(want.len(), 2);
        let in_order = run_capture(&capture(&fragmented(ipv6, |v| v)));
        assert_eq!(content(&in_order), content(&want), "ipv6 {ipv6}");
        let reversed = run_capture(&capture(&fragmented(ipv6, |mut v| {
            v.reverse();
            v
        })));
        assert_eq!(content(&reversed), content(&want), "ipv6 {ipv6}");
        // Every fragment twice, as `tcpdump -i any` sees them on two interfaces.
        let twice = run_capture(&capture(&fragmented(ipv6, |v| {
            v.into_iter().flat_map(|f| [f.clone(), f]).collect()
        })));
        assert_eq!(content(&twice), content(&want), "ipv6 {ipv6}");
        // The request record names the packet of its datagram's last fragment.
        assert_eq!(in_order[1]["kafka"]["request_frame"], in_order[0]["frame"]);
    }
}

#[test]
fn an_overlap_with_other_bytes_is_reported() {
    let frames = fragmented(false, |v| {
        let mut bad = v[0].clone();
        let last = bad.len() - 1;
        bad[last] ^= 0xff;
        let mut out = vec![v[0].clone(), bad];
        out.extend(v.into_iter().skip(1));
        out
    });
    let out = run_capture(&capture(&frames));
    let kinds: Vec<&str> = out
        .iter()
        .filter_map(|r| r["anomaly"]["kind"].as_str())
        .collect();
    // One in each data packet's datagram (the request's, id 103, and the response's, id 104);
    // the flipped byte lies in the TCP header's window, so both still decode.
    assert_eq!(
        kinds,
        vec!["fragment_overlap", "fragment_overlap"],
        "{out:?}"
    );
    assert_eq!(out.len(), 4);
    let a = out
        .iter()
        .find(|r| r["anomaly"]["kind"] == "fragment_overlap")
        .unwrap();
    assert_eq!(a["anomaly"]["layer"], "packet");
    assert_eq!(
        a["anomaly"]["message"],
        "a fragment from 10.0.0.1 to 10.0.0.2 (id 103) overlaps 16 bytes already held at offset \
         0, with other bytes; the later copy is kept"
    );
}

#[test]
fn a_missing_fragment_is_reported_at_the_end() {
    // The request's middle fragment never captured.
    let mut dropped = false;
    let frames = fragmented(false, |mut v| {
        if !dropped {
            dropped = true;
            v.remove(1);
        }
        v
    });
    let out = run_capture(&capture(&frames));
    let missing: Vec<&Value> = out
        .iter()
        .filter(|r| r["anomaly"]["kind"] == "fragment_missing")
        .collect();
    assert_eq!(missing.len(), 1, "{out:#?}");
    let m = missing[0]["anomaly"]["message"].as_str().unwrap();
    assert!(
        m.starts_with("an IP datagram from 10.0.0.1 to 10.0.0.2 (id 103, first fragment in frame 4) was never whole: 3 fragments gave "),
        "{m}"
    );
    assert!(m.ends_with("; the capture ended first"), "{m}");
}

#[test]
fn a_fragmented_vxlan_packet_is_reassembled_then_unwrapped() {
    // The outer UDP datagram of each VXLAN packet cut into 24-byte fragments.
    let mut frames = Vec::new();
    for (n, p) in packets(false).iter().enumerate() {
        let outer = outer_ip(
            v4(192, 168, 0, 1),
            v4(192, 168, 0, 2),
            17,
            &udp(5000, 4789, &vxlan(9, &eth_ip(&[], &p.ip))),
        );
        for f in fragment_v4(&outer, 500 + n as u16, 24) {
            frames.push(eth_ip(&[], &f));
        }
    }
    let out = run_capture(&capture(&frames));
    assert_eq!(out.len(), 2, "{out:#?}");
    assert_eq!(out[0]["tunnel"][0]["vni"], 9);
    let mut want = content(&plain(false));
    for w in &mut want {
        w.as_object_mut().unwrap().insert(
            "tunnel".into(),
            serde_json::json!([{"type": "vxlan", "outer_src_ip": "192.168.0.1", "outer_dest_ip": "192.168.0.2", "vni": 9}]),
        );
    }
    let got = content(&out);
    assert_eq!(got[0], want[0]);
    assert_eq!(got[1]["kafka"], want[1]["kafka"]);
}

#[test]
fn write_pcap_writes_every_fragment_of_a_kept_segment() {
    for ipv6 in [false, true] {
        let frames = fragmented(ipv6, |mut v| {
            v.reverse();
            v
        });
        let dir = tempfile::tempdir().unwrap();
        let (input, out) = (dir.path().join("in.pcap"), dir.path().join("out.pcap"));
        std::fs::write(&input, capture(&frames)).unwrap();
        let run = assert_cmd::Command::cargo_bin("kafka-pcap")
            .unwrap()
            .args([
                "--write-pcap",
                out.to_str().unwrap(),
                input.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(run.status.success());
        let written = std::fs::read(&out).unwrap();
        // The handshake (3 packets) and every fragment of the request and of the response:
        // every packet but the closing ones.
        let data_fragments = packets(ipv6)
            .iter()
            .filter(|p| !p.payload.is_empty())
            .map(|p| {
                if ipv6 {
                    fragment_v6(&p.ip, 0, 16).len()
                } else {
                    fragment_v4(&p.ip, 0, 16).len()
                }
            })
            .sum::<usize>();
        let stderr = String::from_utf8(run.stderr).unwrap();
        assert!(
            stderr.contains(&format!("wrote {} packets", 3 + data_fragments)),
            "ipv6 {ipv6}: {stderr}"
        );
        assert_eq!(
            content(&run_capture(&written)),
            content(&plain(ipv6)),
            "ipv6 {ipv6}"
        );
    }
}
