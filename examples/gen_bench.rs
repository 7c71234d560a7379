//! Writes a reproducible benchmark capture: Kafka broker traffic as a busy broker sees it.
//!
//! Usage: `cargo run --release --example gen_bench -- [--size-mb 200] [--seed 1]
//! [--out target/bench.pcap] [--payload records|filler] [--produce-version 9]
//! [--fetch-version 12] [--profile large|busy]` (`--help` says more; sizes are MiB).
//!
//! Classic pcap (microseconds, Ethernet), 50 client connections to three brokers, opened with a
//! handshake, carrying Produce v9 requests of 1 KB to 1 MB (and their responses) and Fetch v12
//! requests (and responses of 1 KB to 1 MB), cut into 1448-byte segments; every few hundred
//! packets a broker connection carries a WriteTxnMarkers v1 exchange; about one segment in 2000
//! is sent twice (a retransmission). The same seed gives the same file, byte for byte.
//! `--profile busy` is closer to a busy broker: 600 client connections whose packets
//! interleave, and Produce and Fetch frames of 100 B to 4 KB.
//!
//! `--payload records` (the default) is what a broker really carries: the brokers are
//! 127.0.0.1, .2 and .3, all on port 9092; Produce and Fetch frames are encoded by the
//! `kafka-protocol` crate, with 1 to 3 topics of 1 to 4 partitions, each partition holding
//! record batches (magic 2, CRC-32C) of JSON-like records of 60 bytes to 1 KB with a key and a
//! header; a third of the batches are uncompressed, the others gzip or snappy. Fetch responses
//! carry batches as a broker's log holds them (offsets, log-append times). Half the producers
//! are transactional.
//!
//! `--payload filler` is the first version of this generator: brokers on 127.0.0.1:9092, :9093
//! and :9094, Produce and Fetch bodies of filler bytes that no dissector can read past the
//! header (tshark stops at the first bad field, which flatters it).

use bytes::{Bytes, BytesMut};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::produce_response::{PartitionProduceResponse, TopicProduceResponse};
use kafka_protocol::messages::{
    ApiKey, FetchRequest, FetchResponse, ProduceRequest, ProduceResponse, RequestHeader,
    ResponseHeader, TopicName, TransactionalId,
};
use kafka_protocol::protocol::{Encodable, StrBytes};
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
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
    /// 100 B to about 4 KB, log-uniform (the busy profile's frames).
    fn small_size(&mut self) -> usize {
        let exp = self.range(0, 1000) as f64 / 1000.0 * 5.3;
        (100.0 * 2f64.powf(exp)) as usize
    }

    /// Log-uniform size between 1 KB and 1 MB.
    fn size(&mut self) -> usize {
        let exp = self.range(0, 1000) as f64 / 1000.0 * 10.0;
        (1024.0 * 2f64.powf(exp)) as usize
    }
}

struct Conn {
    client_ip: [u8; 4],
    broker_ip: [u8; 4],
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
        let (sp, dp, sa, da) = if dir == 0 {
            (
                conn.client_port,
                conn.broker_port,
                conn.client_ip,
                conn.broker_ip,
            )
        } else {
            (
                conn.broker_port,
                conn.client_port,
                conn.broker_ip,
                conn.client_ip,
            )
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
        h.extend_from_slice(&sa);
        h.extend_from_slice(&da);
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

const TOPICS: [&str; 6] = [
    "orders",
    "payments",
    "inventory-updates",
    "clickstream",
    "audit-log",
    "shipments",
];

/// A request frame (size prefix, header v1 or v2 as the API's version needs, body), encoded by
/// kafka-protocol.
fn kp_request<T: Encodable>(
    key: ApiKey,
    version: i16,
    corr: i32,
    client: &str,
    body: &T,
) -> Vec<u8> {
    let header = RequestHeader::default()
        .with_request_api_key(key as i16)
        .with_request_api_version(version)
        .with_correlation_id(corr)
        .with_client_id(Some(StrBytes::from_string(client.to_string())));
    let mut b = BytesMut::new();
    b.extend_from_slice(&[0; 4]);
    header
        .encode(&mut b, key.request_header_version(version))
        .expect("request header");
    body.encode(&mut b, version).expect("request body");
    let size = (b.len() - 4) as u32;
    b[..4].copy_from_slice(&size.to_be_bytes());
    b.to_vec()
}

/// A response frame, encoded by kafka-protocol.
fn kp_response<T: Encodable>(key: ApiKey, version: i16, corr: i32, body: &T) -> Vec<u8> {
    let mut b = BytesMut::new();
    b.extend_from_slice(&[0; 4]);
    ResponseHeader::default()
        .with_correlation_id(corr)
        .encode(&mut b, key.response_header_version(version))
        .expect("response header");
    body.encode(&mut b, version).expect("response body");
    let size = (b.len() - 4) as u32;
    b[..4].copy_from_slice(&size.to_be_bytes());
    b.to_vec()
}

/// A JSON-like record value of about `n` bytes (compressible, as real payloads are).
fn value(rng: &mut Rng, n: usize) -> Bytes {
    let mut v = format!(
        "{{\"order_id\":{},\"customer\":\"c-{:05}\",\"amount\":{}.{:02},\"currency\":\"EUR\",\"note\":\"",
        rng.range(1, 1 << 40),
        rng.range(0, 100_000),
        rng.range(1, 10_000),
        rng.range(0, 100)
    )
    .into_bytes();
    const WORDS: [&str; 8] = [
        "express ",
        "gift ",
        "fragile ",
        "return ",
        "priority ",
        "bulk ",
        "standard ",
        "eu ",
    ];
    while v.len() + 2 < n {
        v.extend_from_slice(WORDS[rng.range(0, 8) as usize].as_bytes());
    }
    v.extend_from_slice(b"\"}");
    Bytes::from(v)
}

/// Records of about `bytes` bytes in all, as one producer writes them to one partition.
struct Producer {
    id: i64,
    epoch: i16,
    transactional: bool,
}

fn records(
    rng: &mut Rng,
    bytes: usize,
    producer: &Producer,
    base_offset: i64,
    ts_ms: i64,
) -> Vec<Record> {
    let mut out = Vec::new();
    let mut used = 0;
    while used < bytes.max(60) {
        let n = rng.range(60, 1024) as usize;
        used += n + 40;
        let mut headers = IndexMap::new();
        headers.insert(
            StrBytes::from_static_str("trace-id"),
            Some(Bytes::from(format!("{:016x}", rng.next()))),
        );
        out.push(Record {
            transactional: producer.transactional,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 7,
            producer_id: producer.id,
            producer_epoch: producer.epoch,
            timestamp_type: TimestampType::Creation,
            offset: base_offset + out.len() as i64,
            sequence: (base_offset as i32).wrapping_add(out.len() as i32) & 0x7fff_ffff,
            timestamp: ts_ms + out.len() as i64,
            key: Some(Bytes::from(format!("key-{:08}", rng.range(0, 100_000_000)))),
            value: Some(value(rng, n)),
            headers,
        });
    }
    out
}

/// One record batch (or, for Fetch, several) of about `bytes` bytes before compression.
fn batches(
    rng: &mut Rng,
    bytes: usize,
    producers: &[Producer],
    base_offset: i64,
    ts_ms: i64,
    fetch: bool,
) -> Bytes {
    let mut buf = BytesMut::new();
    let count = if fetch { rng.range(1, 4) as usize } else { 1 };
    let mut offset = base_offset;
    for _ in 0..count {
        let producer = &producers[rng.range(0, producers.len() as u64) as usize];
        let recs = records(rng, bytes / count, producer, offset, ts_ms);
        offset += recs.len() as i64;
        let compression = match rng.range(0, 3) {
            0 => Compression::None,
            1 => Compression::Gzip,
            _ => Compression::Snappy,
        };
        RecordBatchEncoder::encode(
            &mut buf,
            &recs,
            &RecordEncodeOptions {
                version: 2,
                compression,
            },
        )
        .expect("record batch");
    }
    buf.freeze()
}

/// Splits `bytes` over 1-3 topics of 1-4 partitions: (topic, partition, share of bytes).
fn layout(rng: &mut Rng, bytes: usize) -> Vec<(&'static str, Vec<(i32, usize)>)> {
    let topics = rng.range(1, 4) as usize;
    let first = rng.range(0, TOPICS.len() as u64) as usize;
    (0..topics)
        .map(|t| {
            let parts = rng.range(1, 5) as usize;
            let share = bytes / (topics * parts);
            let first_part = rng.range(0, 12) as i32;
            (
                TOPICS[(first + t) % TOPICS.len()],
                (0..parts).map(|p| (first_part + p as i32, share)).collect(),
            )
        })
        .collect()
}

fn topic(name: &str) -> TopicName {
    TopicName(StrBytes::from_string(name.to_string()))
}

/// One value per topic of `lay`, each made by `topic` from one value per partition, made by
/// `part` from (topic position, partition position, partition index, share of bytes), in
/// layout order.
fn per_topic<T, P>(
    lay: &[(&'static str, Vec<(i32, usize)>)],
    mut part: impl FnMut(usize, usize, i32, usize) -> P,
    topic: impl Fn(TopicName, Vec<P>) -> T,
) -> Vec<T> {
    lay.iter()
        .enumerate()
        .map(|(ti, (name, parts))| {
            let parts = parts
                .iter()
                .enumerate()
                .map(|(pi, &(p, share))| part(ti, pi, p, share))
                .collect();
            topic(self::topic(name), parts)
        })
        .collect()
}

/// A Produce exchange carrying about `bytes` bytes of records.
fn produce(
    rng: &mut Rng,
    corr: i32,
    bytes: usize,
    producers: &[Producer],
    ts_ms: i64,
    version: i16,
) -> (Vec<u8>, Vec<u8>) {
    let lay = layout(rng, bytes);
    let producer = &producers[rng.range(0, producers.len() as u64) as usize];
    let txn = producer
        .transactional
        .then(|| TransactionalId(StrBytes::from_string(format!("txn-{}", producer.id))));
    let one = std::slice::from_ref(producer);
    let topic_data = per_topic(
        &lay,
        |_, _, p, share| {
            let records = batches(rng, share, one, 0, ts_ms, false);
            PartitionProduceData::default()
                .with_index(p)
                .with_records(Some(records))
        },
        |name, parts| {
            TopicProduceData::default()
                .with_name(name)
                .with_partition_data(parts)
        },
    );
    let request = ProduceRequest::default()
        .with_transactional_id(txn)
        .with_acks(-1)
        .with_timeout_ms(30_000)
        .with_topic_data(topic_data);
    let responses = per_topic(
        &lay,
        |_, _, p, _| {
            PartitionProduceResponse::default()
                .with_index(p)
                .with_base_offset(rng.range(0, 1 << 32) as i64)
                .with_log_append_time_ms(-1)
                .with_log_start_offset(0)
        },
        |name, parts| {
            TopicProduceResponse::default()
                .with_name(name)
                .with_partition_responses(parts)
        },
    );
    let response = ProduceResponse::default().with_responses(responses);
    let client = "order-service-producer-1";
    (
        kp_request(ApiKey::Produce, version, corr, client, &request),
        kp_response(ApiKey::Produce, version, corr, &response),
    )
}

/// A Fetch exchange whose response carries about `bytes` bytes of records.
fn fetch(
    rng: &mut Rng,
    corr: i32,
    bytes: usize,
    producers: &[Producer],
    ts_ms: i64,
    version: i16,
) -> (Vec<u8>, Vec<u8>) {
    let lay = layout(rng, bytes);
    let offsets: Vec<Vec<i64>> = lay
        .iter()
        .map(|(_, parts)| parts.iter().map(|_| rng.range(0, 1 << 32) as i64).collect())
        .collect();
    let topics = per_topic(
        &lay,
        |ti, pi, p, _| {
            FetchPartition::default()
                .with_partition(p)
                .with_current_leader_epoch(7)
                .with_fetch_offset(offsets[ti][pi])
                .with_last_fetched_epoch(-1)
                .with_log_start_offset(-1)
                .with_partition_max_bytes(1_048_576)
        },
        |name, parts| {
            FetchTopic::default()
                .with_topic(name)
                .with_partitions(parts)
        },
    );
    let request = FetchRequest::default()
        .with_replica_id((-1).into())
        .with_max_wait_ms(500)
        .with_min_bytes(1)
        .with_max_bytes(52_428_800)
        .with_isolation_level(1)
        .with_session_id(0)
        .with_session_epoch(-1)
        .with_topics(topics)
        .with_rack_id(StrBytes::from_static_str(""));
    let responses = per_topic(
        &lay,
        |ti, pi, p, share| {
            let o = offsets[ti][pi];
            PartitionData::default()
                .with_partition_index(p)
                .with_high_watermark(o + 1_000_000)
                .with_last_stable_offset(o + 1_000_000)
                .with_log_start_offset(0)
                .with_preferred_read_replica((-1).into())
                .with_records(Some(batches(rng, share, producers, o, ts_ms, true)))
        },
        |name, parts| {
            FetchableTopicResponse::default()
                .with_topic(name)
                .with_partitions(parts)
        },
    );
    let response = FetchResponse::default()
        .with_session_id(0)
        .with_responses(responses);
    (
        kp_request(
            ApiKey::Fetch,
            version,
            corr,
            "analytics-consumer-1",
            &request,
        ),
        kp_response(ApiKey::Fetch, version, corr, &response),
    )
}

/// What kind of Produce and Fetch bodies to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Payload {
    /// Real record batches, as a broker carries them.
    Records,
    /// The generator's first version: filler bytes after the header.
    Filler,
}

/// The shape of the traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Profile {
    /// 50 client connections, Produce and Fetch frames of 1 KB to 1 MB.
    Large,
    /// A busy broker: 600 client connections whose packets interleave, Produce and Fetch
    /// frames of 100 B to 4 KB (many small frames, as at the read limit).
    Busy,
}

/// Writes a reproducible benchmark capture of busy Kafka broker traffic (classic pcap).
#[derive(Debug, clap::Parser)]
#[command(name = "gen_bench")]
struct Args {
    /// Size to write, in MiB (the file ends after the exchange that passes it).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    size_mb: u64,
    /// Seed: the same seed and options give the same file, byte for byte.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output file.
    #[arg(long, default_value = "target/bench.pcap")]
    out: std::path::PathBuf,
    /// Produce and Fetch bodies.
    #[arg(long, value_enum, default_value_t = Payload::Records)]
    payload: Payload,
    /// Produce request version, for the records payload (3-12, the versions with record
    /// batches v2 and topic names) [default: 9].
    #[arg(long, value_parser = clap::value_parser!(i16).range(3..=12))]
    produce_version: Option<i16>,
    /// Fetch version, for the records payload (4-12, the versions with record batches v2 and
    /// topic names) [default: 12].
    #[arg(long, value_parser = clap::value_parser!(i16).range(4..=12))]
    fetch_version: Option<i16>,
    /// Traffic shape (records payload only).
    #[arg(long, value_enum, default_value_t = Profile::Large)]
    profile: Profile,
}

fn main() {
    let args: Args = clap::Parser::parse();
    if args.payload == Payload::Filler
        && (args.produce_version.is_some() || args.fetch_version.is_some())
    {
        eprintln!("gen_bench: --produce-version and --fetch-version apply to --payload records");
        std::process::exit(2);
    }
    let out = args.out.display().to_string();
    if let Err(e) = generate(args) {
        eprintln!("gen_bench: {out}: {e}");
        std::process::exit(1);
    }
}

fn generate(args: Args) -> std::io::Result<()> {
    let Args {
        size_mb,
        seed,
        out,
        payload,
        produce_version,
        fetch_version,
        profile,
    } = args;
    let busy = profile == Profile::Busy;
    let clients: usize = if busy { 600 } else { 50 };
    let (produce_version, fetch_version) =
        (produce_version.unwrap_or(9), fetch_version.unwrap_or(12));
    let realistic = payload == Payload::Records;
    let out = out.display().to_string();
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

    let mut conns: Vec<Conn> = (0..clients)
        .map(|n| Conn {
            client_ip: if realistic {
                [127, 0, 1 + (n / 250) as u8, 1 + (n % 250) as u8]
            } else {
                [127, 0, 0, 1]
            },
            broker_ip: if realistic {
                [127, 0, 0, 1 + (n % 3) as u8]
            } else {
                [127, 0, 0, 1]
            },
            client_port: 40_000 + n as u16,
            broker_port: if realistic {
                9092
            } else {
                9092 + (n % 3) as u16
            },
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
    let producers: Vec<Producer> = (0..20)
        .map(|n| Producer {
            id: 10_000 + n,
            epoch: 3,
            transactional: n % 2 == 0,
        })
        .collect();
    let mut next_wtm = 300u64;
    let mut wtm = 0i64;
    if realistic {
        // The transaction coordinator (on each broker) talks to the other brokers, which lead
        // the partitions, on inter-broker connections.
        for b in 0..3u8 {
            let mut c = Conn {
                client_ip: [127, 0, 0, 1 + b],
                broker_ip: [127, 0, 0, 1 + (b + 1) % 3],
                client_port: 50_000 + u16::from(b),
                broker_port: 9092,
                seq: [rng.next() as u32, rng.next() as u32],
                corr: 0,
            };
            w.packet(&c, 0, 0x02, &[])?;
            c.seq[0] = c.seq[0].wrapping_add(1);
            w.packet(&c, 1, 0x12, &[])?;
            c.seq[1] = c.seq[1].wrapping_add(1);
            w.packet(&c, 0, 0x10, &[])?;
            conns.push(c);
        }
    }
    while w.written < target {
        let mut n = rng.range(0, clients as u64) as usize;
        let wtm_due = w.packets >= next_wtm;
        if wtm_due && realistic {
            n = clients + (wtm as usize % 3);
        }
        let c = &mut conns[n];
        c.corr += 1;
        let corr = c.corr;
        if wtm_due {
            next_wtm = w.packets + rng.range(200, 600);
            wtm += 1;
            let commit = rng.range(0, 4) != 0;
            let producer_id = if realistic {
                // One of the transactional producers (even ids) whose batches the capture carries.
                producers[2 * rng.range(0, 10) as usize].id
            } else {
                10_000 + wtm
            };
            let client = if realistic {
                format!("broker-{}-txn-marker-sender", n - clients + 1)
            } else {
                String::from("broker-1-txn")
            };
            let req = frame(|f| {
                header(f, 27, 1, corr, &client);
                f.push(2); // one marker
                f.extend_from_slice(&producer_id.to_be_bytes());
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
                f.extend_from_slice(&producer_id.to_be_bytes());
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
        } else if realistic {
            let n = if busy { rng.small_size() } else { rng.size() };
            let ts_ms = (w.ts_us / 1000) as i64;
            let (req, resp) = if rng.range(0, 2) == 0 {
                produce(&mut rng, corr, n, &producers, ts_ms, produce_version)
            } else {
                fetch(&mut rng, corr, n, &producers, ts_ms, fetch_version)
            };
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
