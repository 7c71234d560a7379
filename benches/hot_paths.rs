//! criterion benchmarks of the hot units:
//! - the WriteTxnMarkers decoders on the seed (41/31 bytes) and on a 100-marker v1 request,
//!   beside the `kafka-protocol` crate's decoder on the same v1 bytes (messages/s);
//! - the framer on a large in-memory stream of Produce frames with a WriteTxnMarkers frame now
//!   and then (bytes/s);
//! - the reassembler, in order and out of order (bytes/s);
//! - the connection table, 53 connections, in runs of one connection's segments (as a large
//!   frame's) and with every packet on another connection than the last (packets/s);
//! - the session's per-frame path through the whole pipeline: an in-memory capture of small
//!   Produce exchanges (one frame per segment, 100 B to 1.4 KB) on 200 interleaved
//!   connections, read in the default mode (frames skipped by their size prefix, paired by
//!   correlation id; Kafka frames/s).
//!
//! Run: `cargo bench --bench hot_paths`. Numbers belong in BENCHMARKS.md, never in tests.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kafka_pcap::flow::reassembly::{Delivery, HalfStream, Origin};
use kafka_pcap::flow::seq::SeqNum;
use kafka_pcap::flow::{FlowTable, Found, Syn};
use kafka_pcap::kafka::apis::write_txn_markers::{decode_request, decode_response};
use kafka_pcap::kafka::framing::{Decision, FrameHandler, Framer, GapEffect, ProbeAt, Role};
use kafka_pcap::kafka::header::Probe;
use kafka_pcap::kafka::primitives::Budget;
use kafka_pcap::memory::Memory;
use kafka_pcap::vocab::Endpoint;
use kafka_protocol::protocol::Decodable;
use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    hex::decode(s).unwrap()
}

/// A v1 request body with `n` markers, each with two topics of three partitions.
fn big_request(n: usize) -> Vec<u8> {
    let mut b = vec![(n + 1) as u8];
    assert!(n < 127);
    for i in 0..n {
        b.extend_from_slice(&(4000 + i as i64).to_be_bytes());
        b.extend_from_slice(&3i16.to_be_bytes());
        b.push((i % 2) as u8);
        b.push(3);
        for t in ["orders", "payments"] {
            b.push(t.len() as u8 + 1);
            b.extend_from_slice(t.as_bytes());
            b.push(4);
            for p in 0..3i32 {
                b.extend_from_slice(&p.to_be_bytes());
            }
            b.push(0);
        }
        b.extend_from_slice(&7i32.to_be_bytes());
        b.push(0);
    }
    b.push(0);
    b
}

fn decoders(c: &mut Criterion) {
    let req = hex("02 0000000000000000 0000 00 02 01 02 00000000 00 00000000 00 00");
    let resp = hex("02 0000000000000000 02 01 02 00000000 0000 00 00 00 00");
    let big = big_request(100);
    let mut g = c.benchmark_group("write_txn_markers");
    g.throughput(Throughput::Elements(1));
    g.bench_function("seed request v1 (kafka-pcap)", |b| {
        b.iter(|| decode_request(black_box(&req), 1, &Budget::default()).unwrap())
    });
    g.bench_function("seed response v1 (kafka-pcap)", |b| {
        b.iter(|| decode_response(black_box(&resp), 1, &Budget::default()).unwrap())
    });
    g.bench_function("seed request v1 (kafka-protocol)", |b| {
        b.iter(|| {
            let mut buf = Bytes::from(req.clone());
            kafka_protocol::messages::WriteTxnMarkersRequest::decode(&mut buf, 1).unwrap()
        })
    });
    g.bench_function("100-marker request v1 (kafka-pcap)", |b| {
        b.iter(|| decode_request(black_box(&big), 1, &Budget::default()).unwrap())
    });
    g.bench_function("100-marker request v1 (kafka-protocol)", |b| {
        b.iter(|| {
            let mut buf = Bytes::from(big.clone());
            kafka_protocol::messages::WriteTxnMarkersRequest::decode(&mut buf, 1).unwrap()
        })
    });
    g.finish();
}

struct Count(u64);

impl FrameHandler for Count {
    fn on_head(&mut self, _: Role, _: u64, _: u32, head: &[u8]) -> Decision {
        if head[1] == 27 {
            Decision::Keep
        } else {
            Decision::Skip
        }
    }
    fn on_frame(&mut self, _: Role, _: u64, f: &[u8]) {
        self.0 += f.len() as u64;
    }
    fn on_skipped(&mut self, _: Role, _: u64, size: u32, _: &[u8], _: bool) {
        self.0 += u64::from(size);
    }
    fn on_bad_size(&mut self, _: Role, _: u64, _: i32, _: &[u8]) {}
    fn on_gap(&mut self, _: Role, _: u64, _: u64, _: GapEffect) {}
    fn on_head_lost(&mut self, _: Role, _: u32, _: &[u8]) {}
    fn on_resync(&mut self, _: Role, _: u64, _: u64) {}
    fn on_truncated(&mut self, _: Role, _: u64, _: u32, _: &[u8]) {}
    fn probe(&mut self, _: Role, _: &[u8], _: ProbeAt) -> Probe {
        Probe::Yes
    }
}

/// 64 MiB of Produce v9 request frames of 1 KiB to 256 KiB, with a WriteTxnMarkers frame every
/// 50 frames.
fn stream() -> Vec<u8> {
    let mut s = Vec::new();
    let mut n = 0u32;
    while s.len() < 64 << 20 {
        n += 1;
        let (key, body) = if n % 50 == 0 {
            (27i16, 60usize)
        } else {
            (0, 1024 << (n % 9))
        };
        s.extend_from_slice(&((10 + body) as i32).to_be_bytes());
        s.extend_from_slice(&key.to_be_bytes());
        s.extend_from_slice(&1i16.to_be_bytes());
        s.extend_from_slice(&(n as i32).to_be_bytes());
        s.extend_from_slice(&0i16.to_be_bytes());
        s.resize(s.len() + body, 0xab);
    }
    s
}

fn framer(c: &mut Criterion) {
    let s = stream();
    let mut g = c.benchmark_group("framer");
    g.throughput(Throughput::Bytes(s.len() as u64));
    g.sample_size(20);
    g.bench_function("64 MiB in 1448-byte chunks", |b| {
        b.iter(|| {
            let mut f = Framer::new(
                Role::Requests,
                100 << 20,
                &kafka_pcap::memory::Memory::default(),
            );
            let mut h = Count(0);
            for chunk in s.chunks(1448) {
                f.push(chunk, &mut h);
            }
            h.0
        })
    });
    g.finish();
}

fn reassembler(c: &mut Criterion) {
    let data = vec![0x5au8; 16 << 20];
    let segs: Vec<(u32, &[u8])> = data
        .chunks(1448)
        .enumerate()
        .map(|(i, d)| ((1 + i * 1448) as u32, d))
        .collect();
    // Out of order: swap every pair of segments.
    let mut swapped = segs.clone();
    for pair in swapped.chunks_mut(2) {
        pair.reverse();
    }
    let mut g = c.benchmark_group("reassembler");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(20);
    for (name, order) in [("in order", &segs), ("pairs swapped", &swapped)] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut h = HalfStream::default();
                let budget = Memory::default();
                let mut n = 0u64;
                let mut d = |x: Delivery<'_>| {
                    if let Delivery::Data(b) | Delivery::Held(b, _) | Delivery::Released(b, _) = x {
                        n += b.len() as u64
                    }
                };
                h.segment(
                    SeqNum(0),
                    true,
                    false,
                    &[],
                    0,
                    Origin::default(),
                    &budget,
                    &mut d,
                );
                for (seq, p) in order.iter() {
                    h.segment(
                        SeqNum(*seq),
                        false,
                        false,
                        p,
                        0,
                        Origin::default(),
                        &budget,
                        &mut d,
                    );
                }
                n
            })
        });
    }
    g.finish();
}

fn flow_table(c: &mut Criterion) {
    let ep = |a: u8, port: u16| Endpoint {
        ip: IpAddr::V4(Ipv4Addr::new(127, 0, 1, a)),
        port,
    };
    let pairs: Vec<(Endpoint, Endpoint)> = (0..53u8)
        .map(|n| (ep(n, 40_000 + u16::from(n)), ep(200 + n % 3, 9092)))
        .collect();
    let packets = 100_000usize;
    // Runs of 700 packets per connection (a 1 MB frame in 1448-byte segments), alternating
    // direction now and then; and the worst case, every packet on the next connection.
    let runs: Vec<(Endpoint, Endpoint)> = (0..packets)
        .map(|i| {
            let (a, b) = pairs[(i / 700 * 7) % pairs.len()];
            if i % 50 == 0 {
                (b, a)
            } else {
                (a, b)
            }
        })
        .collect();
    let interleaved: Vec<(Endpoint, Endpoint)> =
        (0..packets).map(|i| pairs[(i * 7) % pairs.len()]).collect();
    let mut g = c.benchmark_group("flow_table");
    g.throughput(Throughput::Elements(packets as u64));
    for (name, order) in [
        ("runs of one connection", &runs),
        ("interleaved", &interleaved),
    ] {
        g.bench_function(name, |b| {
            let mut t: FlowTable<u64> = FlowTable::default();
            b.iter(|| {
                let mut sum = 0u64;
                for (src, dst) in order.iter() {
                    if let Found::Conn(c, _) = t.lookup(*src, *dst, 0, Syn::No, SeqNum(1), 0, |s| s)
                    {
                        c.app += 1;
                        sum += c.stream;
                    }
                }
                sum
            })
        });
    }
    g.finish();
}

/// A classic pcap (Ethernet) of `exchanges` request/response pairs of small frames on 200
/// connections whose packets interleave, with filler bodies: Produce v9 requests and their
/// responses, one frame per TCP segment, each response acknowledging its request. Built with
/// etherparse; returns the capture and its number of Kafka frames.
fn small_frames_capture(exchanges: u32) -> (Vec<u8>, u64) {
    let mut pcap = Vec::new();
    for v in [0xa1b2_c3d4u32, 0x0002_0004, 0, 0, 65535, 1] {
        if v == 0x0002_0004 {
            pcap.extend_from_slice(&2u16.to_le_bytes());
            pcap.extend_from_slice(&4u16.to_le_bytes());
        } else {
            pcap.extend_from_slice(&v.to_le_bytes());
        }
    }
    let conns = 200u32;
    // Each connection's next sequence numbers, client and broker.
    let mut seqs = vec![(1u32, 1u32); conns as usize];
    let mut frames = 0u64;
    let mut packet = Vec::new();
    let record = |pcap: &mut Vec<u8>, packet: &[u8], n: u32| {
        pcap.extend_from_slice(&(n / 1000).to_le_bytes());
        pcap.extend_from_slice(&((n % 1000) * 1000).to_le_bytes());
        pcap.extend_from_slice(&(packet.len() as u32).to_le_bytes());
        pcap.extend_from_slice(&(packet.len() as u32).to_le_bytes());
        pcap.extend_from_slice(packet);
    };
    for n in 0..exchanges {
        let c = (n * 7) % conns;
        let client = [10, 0, (c / 250) as u8, (c % 250) as u8 + 1];
        let port = 40000 + c as u16;
        for (request, len) in [
            (true, 100 + (n * 37) % 1300),
            (false, 100 + (n * 53) % 1300),
        ] {
            // The response acknowledges the request before it.
            let (cs, bs) = seqs[c as usize];
            let mut frame = Vec::with_capacity(len as usize + 4);
            frame.extend_from_slice(&(len as i32).to_be_bytes());
            if request {
                // Produce (0) v9, header v2: correlation id, null client id, no tags.
                frame.extend_from_slice(&0i16.to_be_bytes());
                frame.extend_from_slice(&9i16.to_be_bytes());
                frame.extend_from_slice(&(n as i32).to_be_bytes());
                frame.extend_from_slice(&(-1i16).to_be_bytes());
            } else {
                frame.extend_from_slice(&(n as i32).to_be_bytes());
            }
            frame.resize(len as usize + 4, 0);
            packet.clear();
            let b = if request {
                etherparse::PacketBuilder::ethernet2([2; 6], [4; 6])
                    .ipv4(client, [10, 9, 9, 1], 64)
                    .tcp(port, 9092, cs, 65535)
                    .ack(bs)
            } else {
                etherparse::PacketBuilder::ethernet2([4; 6], [2; 6])
                    .ipv4([10, 9, 9, 1], client, 64)
                    .tcp(9092, port, bs, 65535)
                    .ack(cs)
            };
            b.write(&mut packet, &frame).unwrap();
            record(&mut pcap, &packet, 2 * n + u32::from(!request));
            frames += 1;
            let s = &mut seqs[c as usize];
            if request {
                s.0 += frame.len() as u32;
            } else {
                s.1 += frame.len() as u32;
            }
        }
    }
    (pcap, frames)
}

fn session(c: &mut Criterion) {
    let (pcap, frames) = small_frames_capture(50_000);
    let mut g = c.benchmark_group("session");
    g.throughput(Throughput::Elements(frames));
    g.sample_size(20);
    let config = kafka_pcap::Config::default();
    g.bench_function("small frames on 200 interleaved connections", |b| {
        b.iter(|| {
            let mut sink = kafka_pcap::output::VecSink::default();
            let stats = kafka_pcap::run_slice(&pcap, &config, &mut sink).unwrap();
            // Every exchange paired, nothing written (no WriteTxnMarkers, no anomaly).
            assert_eq!(stats.packets, frames);
            assert_eq!(stats.frames.responses.get(&0), Some(&(frames / 2)));
            assert!(sink.0.is_empty());
            black_box(stats.frames.requests.len())
        })
    });
    g.finish();
}

criterion_group!(benches, decoders, framer, reassembler, flow_table, session);
criterion_main!(benches);
