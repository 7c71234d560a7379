//! pcapng blocks beyond the usual: the obsolete Packet Block (type 2) is read as a packet,
//! and a block of an unknown type is skipped, reported once, and counted at the end. The files
//! are written byte by byte by `tests/common` from draft-ietf-opsawg-pcapng.

mod common;

use common::tunnels::eth_ip;
use common::*;
use serde_json::Value;

/// The body of an obsolete Packet Block (appendix A): interface 0, no drops, the timestamp in
/// microseconds, captured and original lengths, the packet padded to 32 bits.
fn obsolete_packet(big: bool, ts_us: u64, data: &[u8]) -> Vec<u8> {
    let w32 = |v: u32| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let mut b = Vec::new();
    b.extend_from_slice(&[0, 0, 0, 0]); // interface 0, no drops
    b.extend_from_slice(&w32((ts_us >> 32) as u32));
    b.extend_from_slice(&w32(ts_us as u32));
    b.extend_from_slice(&w32(data.len() as u32));
    b.extend_from_slice(&w32(data.len() as u32));
    b.extend_from_slice(data);
    while b.len() % 4 != 0 {
        b.push(0);
    }
    b
}

fn frames() -> Vec<Vec<u8>> {
    Conversation::new(false, 9092)
        .client(&seed_request())
        .server(&seed_response())
        .packets()
        .iter()
        .map(|p| eth_ip(&[], &p.ip))
        .collect()
}

fn without_anomalies(v: &[Value]) -> Vec<Value> {
    v.iter()
        .filter(|r| r["event_type"] != "anomaly")
        .cloned()
        .collect()
}

/// In sections of either byte order.
#[test]
fn obsolete_packet_blocks_are_packets() {
    for (endian, big) in [(Endian::Little, false), (Endian::Big, true)] {
        let mut epb = PcapngWriter::new();
        epb.section(endian);
        let i = epb.interface(1, 65535, None);
        let mut old = PcapngWriter::new();
        old.section(endian);
        old.interface(1, 65535, None);
        for (n, f) in frames().iter().enumerate() {
            let ts = 1_700_000_000_000_000 + n as u64;
            epb.packet(i, ts, f, f.len() as u32);
            old.block(2, &obsolete_packet(big, ts, f));
        }
        let want = run_capture(epb.bytes());
        assert_eq!(want.len(), 2, "big-endian {big}");
        assert_eq!(run_capture(old.bytes()), want, "big-endian {big}");
    }
}

#[test]
fn unknown_blocks_are_reported_once_and_counted() {
    let mut w = PcapngWriter::new();
    w.section(Endian::Little);
    let i = w.interface(1, 65535, None);
    for (n, f) in frames().iter().enumerate() {
        w.block(0x0bad_0001, &[1, 2, 3, 4]);
        w.packet(i, 1_700_000_000_000_000 + n as u64, f, f.len() as u32);
    }
    w.block(0x0bad_0002, &[]);
    let out = run_capture(w.bytes());
    assert_eq!(without_anomalies(&out).len(), 2);
    let anomalies: Vec<(&str, &str)> = out
        .iter()
        .filter(|r| r["event_type"] == "anomaly")
        .map(|r| {
            (
                r["anomaly"]["kind"].as_str().unwrap(),
                r["anomaly"]["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        anomalies,
        vec![
            (
                "unknown_block",
                "a pcapng block of type 0x0bad0001, which this tool does not know, was skipped \
                 after frame 0; blocks of this type are reported once (their count at the end \
                 of the capture)"
            ),
            (
                "unknown_block",
                "a pcapng block of type 0x0bad0002, which this tool does not know, was skipped \
                 after frame 8; blocks of this type are reported once (their count at the end \
                 of the capture)"
            ),
            (
                "unknown_block",
                "8 pcapng blocks of type 0x0bad0001 were skipped in all"
            ),
        ]
    );
}
