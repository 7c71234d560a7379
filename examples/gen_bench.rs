//! Writes a reproducible benchmark capture: Kafka broker traffic as a busy broker sees it.
//!
//! Usage: `cargo run --release --example gen_bench -- [--size-mb 200] [--seed 1] [--out target/bench.pcap]`
//!
//! Classic pcap (microseconds, Ethernet), 50 client connections to three brokers
//! (127.0.0.1:9092, :9093, :9094) opened with a handshake, carrying Produce v9 requests of 1 KB
//! to 1 MB (and their small responses) and Fetch v12 requests (and responses of 1 KB to 1 MB),
//! cut into 1448-byte segments; every few hundred packets a broker connection carries a
//! WriteTxnMarkers v1 exchange; about one segment in 2000 is sent twice (a retransmission).
//! The same seed gives the same file, byte for byte.

use std::io::{BufWriter, Write};

/// xorshift64*: small, deterministic, good enough for choosing sizes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }
    /// Log-uniform size between 1 KB and 1 MB.
    fn size(&mut self) -> usize {
        let exp = self.range(0, 1000) as f64 / 1000.0 * 10.0;
        (1024.0 * 2f64.powf(exp)) as usize
    }
}

struct Conn {
    client_port: u16,
    broker_port: u16,
    seq: [u32; 2],
    corr: i32,
}

struct Writer<W: Write> {
    out: W,
    ts_us: u64,
    written: u64,
    packets: u64,
}

impl<W: Write> Writer<W> {
    fn packet(
        &mut self,
        conn: &Conn,
        dir: usize,
        flags: u8,
        payload: &[u8],
    ) -> std::io::Result<()> {
        let (sp, dp) = if dir == 0 {
            (conn.client_port, conn.broker_port)
        } else {
            (conn.broker_port, conn.client_port)
        };
        let seq = conn.seq[dir];
        let ack = conn.seq[1 - dir];
        let ip_len = 20 + 20 + payload.len();
        let mut h = Vec::with_capacity(54);
        h.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x08, 0x00]);
        h.extend_from_slice(&[
            0x45,
            0,
            (ip_len >> 8) as u8,
            ip_len as u8,
            0,
            0,
            0x40,
            0,
            64,
            6,
            0,
            0,
        ]);
        h.extend_from_slice(&[127, 0, 0, 1, 127, 0, 0, 1]);
        h.extend_from_slice(&sp.to_be_bytes());
        h.extend_from_slice(&dp.to_be_bytes());
        h.extend_from_slice(&seq.to_be_bytes());
        h.extend_from_slice(&ack.to_be_bytes());
        h.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
        let len = (h.len() + payload.len()) as u32;
        self.ts_us += 7;
        let mut rec = Vec::with_capacity(16);
        rec.extend_from_slice(&((self.ts_us / 1_000_000) as u32).to_le_bytes());
        rec.extend_from_slice(&((self.ts_us % 1_000_000) as u32).to_le_bytes());
        rec.extend_from_slice(&len.to_le_bytes());
        rec.extend_from_slice(&len.to_le_bytes());
        self.out.write_all(&rec)?;
        self.out.write_all(&h)?;
        self.out.write_all(payload)?;
        self.written += 16 + u64::from(len);
        self.packets += 1;
        Ok(())
    }

    /// Sends `bytes` in 1448-byte segments, retransmitting one now and then.
    fn send(
        &mut self,
        conn: &mut Conn,
        dir: usize,
        bytes: &[u8],
        rng: &mut Rng,
    ) -> std::io::Result<()> {
        for chunk in bytes.chunks(1448) {
            self.packet(conn, dir, 0x18, chunk)?;
            if rng.range(0, 2000) == 0 {
                self.packet(conn, dir, 0x18, chunk)?;
            }
            conn.seq[dir] = conn.seq[dir].wrapping_add(chunk.len() as u32);
        }
        Ok(())
    }
}

fn frame(body: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0];
    body(&mut f);
    let size = (f.len() - 4) as u32;
    f[..4].copy_from_slice(&size.to_be_bytes());
    f
}

/// A request header v2 (flexible): key, version, correlation id, client id, no tags.
fn header(f: &mut Vec<u8>, key: i16, version: i16, corr: i32, client: &str) {
    f.extend_from_slice(&key.to_be_bytes());
    f.extend_from_slice(&version.to_be_bytes());
    f.extend_from_slice(&corr.to_be_bytes());
    f.extend_from_slice(&(client.len() as i16).to_be_bytes());
    f.extend_from_slice(client.as_bytes());
    f.push(0);
}

fn filler(f: &mut Vec<u8>, n: usize) {
    f.extend((0..n).map(|i| (i % 253) as u8));
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let mut size_mb = 200u64;
    let mut seed = 1u64;
    let mut out = String::from("target/bench.pcap");
    let mut i = 1;
    while i + 1 < args.len() {
        match args[i].as_str() {
            "--size-mb" => size_mb = args[i + 1].parse().expect("--size-mb N"),
            "--seed" => seed = args[i + 1].parse().expect("--seed N"),
            "--out" => out = args[i + 1].clone(),
            other => panic!("unknown option {other}"),
        }
        i += 2;
    }
    let target = size_mb * 1024 * 1024;
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let file = std::fs::File::create(&out)?;
    let mut w = Writer {
        out: BufWriter::with_capacity(1 << 20, file),
        ts_us: 1_767_225_600_000_000,
        written: 24,
        packets: 0,
    };
    // pcap header: LE, microseconds, v2.4, snaplen 262144, Ethernet.
    let mut hdr = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    hdr.extend_from_slice(&262_144u32.to_le_bytes());
    hdr.extend_from_slice(&1u32.to_le_bytes());
    w.out.write_all(&hdr)?;

    let mut conns: Vec<Conn> = (0..50)
        .map(|n| Conn {
            client_port: 40_000 + n as u16,
            broker_port: 9092 + (n % 3) as u16,
            seq: [rng.next() as u32, rng.next() as u32],
            corr: 0,
        })
        .collect();
    for c in &mut conns {
        w.packet(c, 0, 0x02, &[])?;
        c.seq[0] = c.seq[0].wrapping_add(1);
        w.packet(c, 1, 0x12, &[])?;
        c.seq[1] = c.seq[1].wrapping_add(1);
        w.packet(c, 0, 0x10, &[])?;
    }
    let mut next_wtm = 300u64;
    let mut wtm = 0i64;
    while w.written < target {
        let n = rng.range(0, conns.len() as u64) as usize;
        let c = &mut conns[n];
        c.corr += 1;
        let corr = c.corr;
        if w.packets >= next_wtm {
            next_wtm = w.packets + rng.range(200, 600);
            wtm += 1;
            let commit = rng.range(0, 4) != 0;
            let req = frame(|f| {
                header(f, 27, 1, corr, "broker-1-txn");
                f.push(2); // one marker
                f.extend_from_slice(&(10_000 + wtm).to_be_bytes());
                f.extend_from_slice(&1i16.to_be_bytes());
                f.push(u8::from(commit));
                f.push(2); // one topic
                f.extend_from_slice(&[7]);
                f.extend_from_slice(b"orders");
                f.push(3); // two partitions
                f.extend_from_slice(&0i32.to_be_bytes());
                f.extend_from_slice(&1i32.to_be_bytes());
                f.push(0);
                f.extend_from_slice(&3i32.to_be_bytes());
                f.push(0);
                f.push(0);
            });
            let resp = frame(|f| {
                f.extend_from_slice(&corr.to_be_bytes());
                f.push(0);
                f.push(2);
                f.extend_from_slice(&(10_000 + wtm).to_be_bytes());
                f.push(2);
                f.push(7);
                f.extend_from_slice(b"orders");
                f.push(3);
                for p in 0..2i32 {
                    f.extend_from_slice(&p.to_be_bytes());
                    let err: i16 = if rng.range(0, 10) == 0 { 6 } else { 0 };
                    f.extend_from_slice(&err.to_be_bytes());
                    f.push(0);
                }
                f.push(0);
                f.push(0);
                f.push(0);
            });
            w.send(c, 0, &req, &mut rng)?;
            w.send(c, 1, &resp, &mut rng)?;
        } else if rng.range(0, 2) == 0 {
            let n = rng.size();
            let req = frame(|f| {
                header(f, 0, 9, corr, "producer-1");
                filler(f, n);
            });
            let resp = frame(|f| {
                f.extend_from_slice(&corr.to_be_bytes());
                f.push(0);
                filler(f, 40);
            });
            w.send(c, 0, &req, &mut rng)?;
            w.send(c, 1, &resp, &mut rng)?;
        } else {
            let n = rng.size();
            let req = frame(|f| {
                header(f, 1, 12, corr, "consumer-1");
                filler(f, 60);
            });
            let resp = frame(|f| {
                f.extend_from_slice(&corr.to_be_bytes());
                f.push(0);
                filler(f, n);
            });
            w.send(c, 0, &req, &mut rng)?;
            w.send(c, 1, &resp, &mut rng)?;
        }
    }
    w.out.flush()?;
    eprintln!(
        "{out}: {} bytes, {} packets, {wtm} WriteTxnMarkers exchanges",
        w.written, w.packets
    );
    Ok(())
}
