//! Writes captures built to make a dissector hold memory, one shape per case, for
//! `tools/memory.sh` (which runs kafka-pcap on each and reports its peak resident memory):
//!
//! - `pending`: CONNS connections, each with 4,096 pipelined 14-byte ApiVersions requests
//!   that are never answered (a capture of the request direction only);
//! - `big-frames`: CONNS connections, each a WriteTxnMarkers request whose size prefix says
//!   100,000,000 bytes, of which 1 MB is sent;
//! - `inference`: CONNS connections picked up mid-stream whose broker sends 60 KB of a
//!   65,000-byte response (kept to be inferred as WriteTxnMarkers);
//! - `pair-names`: CONNS unanswered WriteTxnMarkers requests with 1 MB of topic names each
//!   (32 of 31,250 bytes; for `--pair`);
//! - `producers`: WriteTxnMarkers requests carrying CONNS * 1,000 markers of distinct producer
//!   ids;
//! - `out-of-order`: CONNS connections, each with 1,000 bytes far ahead of a hole that is
//!   never filled;
//! - `tiny-segments`: CONNS connections, each with 100 one-byte segments ahead of a hole.
//!
//! The connections of a case are interleaved, so that all are open at once.
//!
//! Usage: `cargo run --release --example gen_memory -- CASE CONNS OUT.pcap`

#[path = "../tests/common/mod.rs"]
mod common;

use common::{ethernet, tcp_packet, Flags};
use std::io::{BufWriter, Write};
use std::net::{IpAddr, Ipv4Addr};

struct Pcap<W: Write> {
    out: W,
    ts_us: u64,
}

impl<W: Write> Pcap<W> {
    fn new(mut out: W) -> std::io::Result<Self> {
        out.write_all(&0xa1b2c3d4u32.to_le_bytes())?;
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&[0; 8])?;
        out.write_all(&262_144u32.to_le_bytes())?;
        out.write_all(&1u32.to_le_bytes())?; // Ethernet
        Ok(Pcap {
            out,
            ts_us: 1_700_000_000_000_000,
        })
    }

    /// One IPv4/TCP packet from client `conn` to the broker at port 9092, or back.
    fn packet(
        &mut self,
        conn: u32,
        to_broker: bool,
        seq: u32,
        flags: u8,
        payload: &[u8],
    ) -> std::io::Result<()> {
        let client = IpAddr::V4(Ipv4Addr::new(
            10,
            (conn >> 16) as u8,
            (conn >> 8) as u8,
            conn as u8,
        ));
        let broker = IpAddr::V4(Ipv4Addr::new(10, 255, 0, 1));
        let cport = 40_000 + (conn % 20_000) as u16;
        let flags = if flags == SYN {
            Flags::SYN
        } else {
            Flags::PSH_ACK
        };
        let ip = if to_broker {
            tcp_packet(client, cport, broker, 9092, seq, 0, flags, payload)
        } else {
            tcp_packet(broker, 9092, client, cport, seq, 0, flags, payload)
        };
        let frame = ethernet(&ip);
        self.ts_us += 3;
        let len = frame.len() as u32;
        self.out
            .write_all(&((self.ts_us / 1_000_000) as u32).to_le_bytes())?;
        self.out
            .write_all(&((self.ts_us % 1_000_000) as u32).to_le_bytes())?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(&len.to_le_bytes())?;
        self.out.write_all(&frame)
    }
}

const ISN: u32 = 1_000;
const PSH_ACK: u8 = 0x18;
const SYN: u8 = 0x02;

/// A WriteTxnMarkers v0 request header (request header v1, client id "m").
fn wtm_header(size: u32, corr: i32) -> Vec<u8> {
    let mut f = size.to_be_bytes().to_vec();
    f.extend_from_slice(&27i16.to_be_bytes());
    f.extend_from_slice(&0i16.to_be_bytes());
    f.extend_from_slice(&corr.to_be_bytes());
    f.extend_from_slice(&1i16.to_be_bytes());
    f.push(b'm');
    f
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, case, conns, out] = &args[..] else {
        eprintln!("usage: gen_memory CASE CONNS OUT.pcap");
        std::process::exit(2);
    };
    let conns: u32 = conns.parse().expect("CONNS is a number");
    let mut w = Pcap::new(BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(out)?,
    ))?;
    let mut seq = vec![ISN + 1; conns as usize];
    match case.as_str() {
        "pending" => {
            for c in 0..conns {
                w.packet(c, true, ISN, SYN, &[])?;
            }
            let mut corr = 0i32;
            for _round in 0..41 {
                for c in 0..conns {
                    let mut p = Vec::with_capacity(1400);
                    for _ in 0..100 {
                        p.extend_from_slice(&10u32.to_be_bytes());
                        p.extend_from_slice(&18i16.to_be_bytes());
                        p.extend_from_slice(&0i16.to_be_bytes());
                        p.extend_from_slice(&corr.to_be_bytes());
                        p.extend_from_slice(&(-1i16).to_be_bytes());
                        corr = corr.wrapping_add(1);
                    }
                    w.packet(c, true, seq[c as usize], PSH_ACK, &p)?;
                    seq[c as usize] += p.len() as u32;
                }
            }
        }
        "big-frames" => {
            for c in 0..conns {
                w.packet(c, true, ISN, SYN, &[])?;
                let h = wtm_header(100_000_000, 1);
                w.packet(c, true, seq[c as usize], PSH_ACK, &h)?;
                seq[c as usize] += h.len() as u32;
            }
            let filler = vec![0u8; 1448];
            for _round in 0..(1_000_000 / 1448) {
                for c in 0..conns {
                    w.packet(c, true, seq[c as usize], PSH_ACK, &filler)?;
                    seq[c as usize] += filler.len() as u32;
                }
            }
        }
        "inference" => {
            for c in 0..conns {
                let mut p = 65_000u32.to_be_bytes().to_vec();
                p.extend_from_slice(&(c as i32).to_be_bytes());
                p.extend_from_slice(&[0; 1440]);
                w.packet(c, false, seq[c as usize], PSH_ACK, &p)?;
                seq[c as usize] += p.len() as u32;
            }
            let filler = vec![0u8; 1448];
            for _round in 0..(60_000 / 1448) {
                for c in 0..conns {
                    w.packet(c, false, seq[c as usize], PSH_ACK, &filler)?;
                    seq[c as usize] += filler.len() as u32;
                }
            }
        }
        "pair-names" => {
            let name = vec![b'n'; 31_250];
            for c in 0..conns {
                w.packet(c, true, ISN, SYN, &[])?;
                // markers[1]: producer id, epoch, COMMIT, topics[1] of the long name, no
                // partitions, coordinator epoch.
                let mut body = Vec::new();
                body.extend_from_slice(&1i32.to_be_bytes());
                body.extend_from_slice(&(i64::from(c) + 1000).to_be_bytes());
                body.extend_from_slice(&0i16.to_be_bytes());
                body.push(1);
                body.extend_from_slice(&32i32.to_be_bytes());
                for _ in 0..32 {
                    body.extend_from_slice(&(name.len() as i16).to_be_bytes());
                    body.extend_from_slice(&name);
                    body.extend_from_slice(&0i32.to_be_bytes());
                }
                body.extend_from_slice(&0i32.to_be_bytes());
                let mut f = wtm_header(0, 1);
                f.extend_from_slice(&body);
                let size = (f.len() - 4) as u32;
                f[..4].copy_from_slice(&size.to_be_bytes());
                for chunk in f.chunks(1448) {
                    w.packet(c, true, seq[c as usize], PSH_ACK, chunk)?;
                    seq[c as usize] += chunk.len() as u32;
                }
            }
        }
        "producers" => {
            w.packet(0, true, ISN, SYN, &[])?;
            let mut pid = 0i64;
            for corr in 0..conns as i32 {
                let mut body = 1000i32.to_be_bytes().to_vec();
                for _ in 0..1000 {
                    body.extend_from_slice(&pid.to_be_bytes());
                    body.extend_from_slice(&0i16.to_be_bytes());
                    body.push(0);
                    body.extend_from_slice(&0i32.to_be_bytes());
                    body.extend_from_slice(&0i32.to_be_bytes());
                    pid += 1;
                }
                let mut f = wtm_header(0, corr);
                f.extend_from_slice(&body);
                let size = (f.len() - 4) as u32;
                f[..4].copy_from_slice(&size.to_be_bytes());
                for chunk in f.chunks(1448) {
                    w.packet(0, true, seq[0], PSH_ACK, chunk)?;
                    seq[0] += chunk.len() as u32;
                }
            }
        }
        "out-of-order" => {
            let data = vec![7u8; 1000];
            for c in 0..conns {
                w.packet(c, true, ISN, SYN, &[])?;
                w.packet(c, true, ISN + 1 + 1_000_000, PSH_ACK, &data)?;
            }
        }
        "tiny-segments" => {
            for c in 0..conns {
                w.packet(c, true, ISN, SYN, &[])?;
            }
            for i in 0..100u32 {
                for c in 0..conns {
                    w.packet(c, true, ISN + 1 + 10 + 2 * i, PSH_ACK, &[i as u8])?;
                }
            }
        }
        other => {
            eprintln!("unknown case {other}");
            std::process::exit(2);
        }
    }
    w.out.flush()
}
