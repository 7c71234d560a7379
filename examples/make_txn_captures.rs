//! Writes `captures/txn-*.pcap`: synthetic captures of whole Kafka transactions, as a capture
//! on the brokers' loopback would see them, across every connection they take (producer to
//! the coordinator and to the partition leaders, coordinator to the leaders, a leader to the
//! coordinator under transaction version 2, consumers and admin clients), merged in time order
//! into one Ethernet pcap with microsecond timestamps, and beside each
//! `<name>.transactions.json`: the transactions the scenario contains and what is wrong with them,
//! written from the scenario's own values (never by running kafka-pcap).
//!
//! The cluster: node 0 at 127.0.0.1:9092 (the transaction coordinator, and the group
//! coordinator), node 1 at 127.0.0.1:9093 (leader of the data partitions), node 2 at
//! 127.0.0.1:9094. Every connection has its own client port (40000 + n, in order of first use);
//! a client keeps one connection per broker and sends its requests on it one after the other.
//! Frames are encoded by the `kafka-protocol` crate (an implementation other than ours), except
//! WriteTxnMarkers v2, which it does not know: written by hand from the schema (KIP-1228).
//! Each scenario is a time-ordered list of exchanges (time from the scenario's start, client,
//! broker, request, response and its latency); every packet carries the time of its exchange,
//! so that the scenario's timing (a timeout, a retry, 20 s of silence) is the capture's.
//! Deterministic: the same files every run.
//!
//! Usage: `cargo run --example make_txn_captures`.
//!
//! `cargo run --release --example make_txn_captures -- --many N [--out FILE]` writes instead
//! one capture of N transactions (default `target/txn-many.pcap`, and beside it
//! `<FILE stem>.transactions.json`), for the `--report` page at scale and for timing the
//! transaction view: 50 producers (`app-many-0` ...) take turns, a transaction beginning every
//! 4 ms, each on one partition of `orders`; of every 20, 14 commit, 3 are aborted by their
//! client, one has its COMMIT marker answered NOT_LEADER_OR_FOLLOWER and retried, one is left
//! hanging (its commit accepted, no marker ever sent; a producer of its own,
//! `app-hanging-<n>`), and one is aborted by the coordinator on its timeout (a producer of its
//! own, `app-timeout-<n>`, with a 20 ms timeout); 20 s after the last, another client's
//! ApiVersions ends the capture (the hanging ones' markers had time to come). With
//! `--id-pad N`, every transactional id ends in N `"` (long ids that HTML escapes to six
//! times their size).

#[path = "../tests/common/mod.rs"]
mod common;

use bytes::Bytes;
use common::enc::Enc;
use common::frames::{req, resp};
use common::*;
use kafka_protocol::messages::{ApiKey, BrokerId, GroupId, ProducerId, TopicName, TransactionalId};
use kafka_protocol::protocol::StrBytes;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The capture's clock at each scenario's start: 2026-01-01T00:00:00Z.
const T0_SECS: u64 = 1_767_225_600;
/// Node 0: the transaction (and group) coordinator.
const NODE0: u16 = 9092;
/// Node 1: leader of the data partitions.
const NODE1: u16 = 9093;
/// Node 2.
const NODE2: u16 = 9094;
/// Client id of the coordinator's marker channel.
const MARKER_SENDER: &str = "broker-0-txn-marker-sender";
/// The coordinator epoch of node 0's `__transaction_state` partitions, unless a scenario says.
const COORDINATOR_EPOCH: i32 = 7;
/// Partitions of the topic `orders` (all led by node 1 unless a scenario moves one).
const ORDERS_PARTITIONS: i32 = 10;
/// Java's `String.hashCode` (over UTF-16 code units, wrapping), as Kafka's group
/// coordinator hashes a group id onto a `__consumer_offsets` partition.
fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)))
}

/// Partitions of `__consumer_offsets`.
const OFFSETS_PARTITIONS: i32 = 50;

/// Microseconds in `x` milliseconds.
const fn ms(x: u64) -> u64 {
    x * 1000
}

/// A request frame and its response frame (none when the broker never answers).
type Frames = (Vec<u8>, Option<Vec<u8>>);

fn s(x: &str) -> StrBytes {
    StrBytes::from_string(x.to_string())
}

fn topic(x: &str) -> TopicName {
    TopicName(s(x))
}

fn txn_id(x: &str) -> TransactionalId {
    TransactionalId(s(x))
}

/// The node id listening on `port`.
fn node_of(port: u16) -> i32 {
    i32::from(port - NODE0)
}

/// The port of node `node`.
fn port_of(node: i32) -> u16 {
    NODE0 + node as u16
}

/// A topic id for the captures: 16 bytes of `n`.
fn uuid_of(n: u8) -> uuid::Uuid {
    uuid::Uuid::from_bytes([n; 16])
}

// ---------------------------------------------------------------------------------------------
// The scenario: connections, exchanges, the pcap and the expected transactions
// ---------------------------------------------------------------------------------------------

/// One request and its response on a connection.
struct Exchange {
    /// Microseconds from the scenario's start to the request's first packet.
    at: u64,
    /// Microseconds from the request to its response.
    latency: u64,
    request: Vec<u8>,
    response: Option<Vec<u8>>,
}

/// One TCP connection: a client (by client id) to a broker.
struct Conn {
    client_id: String,
    server_port: u16,
    client_port: u16,
    exchanges: Vec<Exchange>,
}

struct Scenario {
    name: &'static str,
    description: &'static str,
    conns: Vec<Conn>,
    /// The next correlation id of each client id (a client numbers its requests across all
    /// its connections, as Kafka's NetworkClient does).
    corr: BTreeMap<String, i32>,
    /// Exchanges so far, to vary the default latency.
    count: u64,
    transactions: Vec<Value>,
    verdicts: Vec<Value>,
}

impl Scenario {
    fn new(name: &'static str, description: &'static str) -> Self {
        Scenario {
            name,
            description,
            conns: Vec::new(),
            corr: BTreeMap::new(),
            count: 0,
            transactions: Vec::new(),
            verdicts: Vec::new(),
        }
    }

    /// The connection of `client_id` to `server_port`, opened at its first exchange.
    fn conn(&mut self, client_id: &str, server_port: u16) -> usize {
        if let Some(i) = self
            .conns
            .iter()
            .position(|c| c.client_id == client_id && c.server_port == server_port)
        {
            return i;
        }
        self.conns.push(Conn {
            client_id: client_id.to_string(),
            server_port,
            client_port: 40000 + self.conns.len() as u16,
            exchanges: Vec::new(),
        });
        self.conns.len() - 1
    }

    /// An exchange at `at` (microseconds from the start) from `client_id` to the broker on
    /// `server_port`, answered after a latency of 200 to 2,000 us that varies from exchange to
    /// exchange; `build` encodes it with the correlation id and client id it is given.
    fn ex(
        &mut self,
        at: u64,
        client_id: &str,
        server_port: u16,
        build: impl FnOnce(i32, &str) -> Frames,
    ) {
        let latency = 250 + (self.count * 389) % 1500;
        self.ex_after(at, latency, client_id, server_port, build)
    }

    /// [`Scenario::ex`] answered `latency` microseconds after the request.
    fn ex_after(
        &mut self,
        at: u64,
        latency: u64,
        client_id: &str,
        server_port: u16,
        build: impl FnOnce(i32, &str) -> Frames,
    ) {
        assert!((200..=2000).contains(&latency), "latency {latency} us");
        self.count += 1;
        let corr = self.corr.entry(client_id.to_string()).or_insert(0);
        *corr += 1;
        let (request, response) = build(*corr, client_id);
        let i = self.conn(client_id, server_port);
        if let Some(last) = self.conns[i].exchanges.last() {
            assert!(
                at > last.at + last.latency,
                "{}: {client_id} sends at {at} us before its answer at {} us",
                self.name,
                last.at + last.latency
            );
        }
        self.conns[i].exchanges.push(Exchange {
            at,
            latency,
            request,
            response,
        });
    }

    /// Adds a transaction to the expected file.
    fn txn(&mut self, t: Value) {
        self.transactions.push(t);
    }

    /// Adds a verdict to the expected file.
    fn verdict(&mut self, kind: &str, producer_id: i64) {
        self.verdicts
            .push(json!({"kind": kind, "producer_id": producer_id}));
    }

    /// Writes `captures/<name>.pcap` and `captures/<name>.transactions.json`.
    fn write(self) {
        let dir = format!("{}/captures", env!("CARGO_MANIFEST_DIR"));
        let pcap = format!("{dir}/{}.pcap", self.name);
        let json = format!("{dir}/{}.transactions.json", self.name);
        self.write_to(&pcap, &json);
    }

    /// Writes the capture to `pcap` and the expected transactions to `json`.
    fn write_to(self, pcap: &str, json: &str) {
        // (time, connection, packet index, frame bytes)
        let mut all: Vec<(u64, usize, usize, Vec<u8>)> = Vec::new();
        for (n, conn) in self.conns.iter().enumerate() {
            let mut c = Conversation::new(false, conn.server_port);
            c.client_port = conn.client_port;
            // (Wrapping: a capture of thousands of connections goes round the sequence space.)
            c.client_isn = (n as u32).wrapping_mul(7_777_777).wrapping_add(1_000_000);
            c.server_isn = (n as u32)
                .wrapping_mul(5_555_555)
                .wrapping_add(3_000_000_000);
            // When each message's first segment goes out.
            let mut times = Vec::new();
            for e in &conn.exchanges {
                c = c.client(&e.request);
                times.push((e.at, e.request.len()));
                if let Some(r) = &e.response {
                    c = c.server(r);
                    times.push((e.at + e.latency, r.len()));
                }
            }
            let first = conn.exchanges[0].at;
            let last = conn
                .exchanges
                .last()
                .map(|e| e.at + e.latency)
                .expect("a connection has an exchange");
            assert!(first >= 200, "the handshake needs time before {first} us");
            let mut ts = vec![first - 150, first - 100, first - 50];
            for (t, len) in times {
                for k in 0..len.div_ceil(c.mss) {
                    ts.push(t + 10 * k as u64);
                }
            }
            ts.extend([last + 1000, last + 1040, last + 1080]);
            let packets = c.packets();
            assert_eq!(packets.len(), ts.len(), "{}: packets and times", self.name);
            for (i, (p, t)) in packets.iter().zip(ts).enumerate() {
                all.push((t, n, i, ethernet(&p.ip)));
            }
        }
        all.sort_by_key(|(t, n, i, _)| (*t, *n, *i));
        let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
        for (t, _, _, frame) in &all {
            w.packet(
                (T0_SECS + t / 1_000_000) as u32,
                (t % 1_000_000) as u32,
                frame,
            );
        }
        std::fs::write(pcap, w.bytes()).expect("write capture");
        let expected = json!({
            "capture": format!("{}.pcap", self.name),
            "description": self.description,
            "transactions": self.transactions,
            "verdicts": self.verdicts,
        });
        let text = serde_json::to_string_pretty(&expected).expect("json");
        std::fs::write(json, text + "\n").expect("write json");
        println!(
            "{pcap}: {} connections, {} exchanges, {} packets",
            self.conns.len(),
            self.conns.iter().map(|c| c.exchanges.len()).sum::<usize>(),
            all.len()
        );
    }
}

/// A partition of an expected transaction: `records` its Produce batches carried.
fn part(
    topic: &str,
    partition: i32,
    records: usize,
    marker: Option<&str>,
    error: Option<&str>,
) -> Value {
    json!({"topic": topic, "partition": partition, "records": records, "marker": marker,
        "marker_error": error})
}

/// How an expected transaction ended.
struct End {
    outcome: &'static str,
    requested: Option<&'static str>,
    ended_by: Option<&'static str>,
    reason: Option<&'static str>,
}

const COMMITTED_BY_CLIENT: End = End {
    outcome: "committed",
    requested: Some("commit"),
    ended_by: Some("client"),
    reason: None,
};

const ABORTED_BY_CLIENT: End = End {
    outcome: "aborted",
    requested: Some("abort"),
    ended_by: Some("client"),
    reason: None,
};

/// An expected transaction.
fn expected_txn(
    p: Option<&Producer>,
    pid: i64,
    epoch: i16,
    end: End,
    partitions: Vec<Value>,
) -> Value {
    json!({"transactional_id": p.map(|p| p.tid), "producer_id": pid, "producer_epoch": epoch,
        "outcome": end.outcome, "requested": end.requested, "ended_by": end.ended_by,
        "reason": end.reason, "partitions": partitions})
}

// ---------------------------------------------------------------------------------------------
// Frames
// ---------------------------------------------------------------------------------------------

/// A transactional producer: its transactional id, producer id and epoch.
#[derive(Clone, Copy)]
struct Producer {
    tid: &'static str,
    pid: i64,
    epoch: i16,
}

/// The layout the Metadata responses give: `orders` (10 partitions, leader node 1, replicas
/// on nodes 1 and 2) with `moved` partitions led by other nodes (partition, leader, leader
/// epoch), and `__consumer_offsets` (50 partitions, partition p led by node (p + 1) % 3, so
/// partition 12 by node 1) when `all_topics` (a request for every topic).
fn metadata(corr: i32, client: &str, all_topics: bool, moved: &[(i32, i32, i32)]) -> Frames {
    use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
    use kafka_protocol::messages::metadata_response::{
        MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
    };
    use kafka_protocol::messages::{MetadataRequest, MetadataResponse};
    let q = MetadataRequest::default()
        .with_topics((!all_topics).then(|| {
            vec![MetadataRequestTopic::default()
                .with_name(Some(topic("orders")))
                .with_topic_id(uuid::Uuid::nil())]
        }))
        .with_allow_auto_topic_creation(true)
        .with_include_topic_authorized_operations(false);
    let brokers = (0..3)
        .map(|n| {
            MetadataResponseBroker::default()
                .with_node_id(BrokerId(n))
                .with_host(s("127.0.0.1"))
                .with_port(i32::from(port_of(n)))
        })
        .collect();
    let partition = |i: i32, leader: i32, epoch: i32, replicas: Vec<i32>, isr: Vec<i32>| {
        MetadataResponsePartition::default()
            .with_error_code(0)
            .with_partition_index(i)
            .with_leader_id(BrokerId(leader))
            .with_leader_epoch(epoch)
            .with_replica_nodes(replicas.into_iter().map(BrokerId).collect())
            .with_isr_nodes(isr.into_iter().map(BrokerId).collect())
            .with_offline_replicas(vec![])
    };
    let orders = (0..ORDERS_PARTITIONS)
        .map(|i| match moved.iter().find(|m| m.0 == i) {
            Some(&(_, leader, epoch)) => partition(i, leader, epoch, vec![1, 2], vec![leader]),
            None => partition(i, 1, 0, vec![1, 2], vec![1, 2]),
        })
        .collect();
    let mut topics = vec![MetadataResponseTopic::default()
        .with_error_code(0)
        .with_name(Some(topic("orders")))
        .with_topic_id(uuid_of(7))
        .with_is_internal(false)
        .with_partitions(orders)
        .with_topic_authorized_operations(i32::MIN)];
    if all_topics {
        topics.push(
            MetadataResponseTopic::default()
                .with_error_code(0)
                .with_name(Some(topic("__consumer_offsets")))
                .with_topic_id(uuid_of(9))
                .with_is_internal(true)
                .with_partitions(
                    (0..OFFSETS_PARTITIONS)
                        .map(|i| {
                            let leader = (i + 1) % 3;
                            partition(i, leader, 0, vec![leader], vec![leader])
                        })
                        .collect(),
                )
                .with_topic_authorized_operations(i32::MIN),
        );
    }
    let r = MetadataResponse::default()
        .with_throttle_time_ms(0)
        .with_brokers(brokers)
        .with_cluster_id(Some(s("Jg0Ny2mSQn-1kZ1s9a3Ybw")))
        .with_controller_id(BrokerId(0))
        .with_topics(topics);
    (
        req(ApiKey::Metadata, 12, corr, client, &q),
        Some(resp(ApiKey::Metadata, 12, corr, &r)),
    )
}

/// FindCoordinator v4 for one key of `key_type` (0 group, 1 transaction), answered `node`.
fn find_coordinator(corr: i32, client: &str, key: &str, key_type: i8, node: i32) -> Frames {
    use kafka_protocol::messages::find_coordinator_response::Coordinator;
    use kafka_protocol::messages::{FindCoordinatorRequest, FindCoordinatorResponse};
    let q = FindCoordinatorRequest::default()
        .with_key_type(key_type)
        .with_coordinator_keys(vec![s(key)]);
    let r = FindCoordinatorResponse::default()
        .with_throttle_time_ms(0)
        .with_coordinators(vec![Coordinator::default()
            .with_key(s(key))
            .with_node_id(BrokerId(node))
            .with_host(s("127.0.0.1"))
            .with_port(i32::from(port_of(node)))
            .with_error_code(0)
            .with_error_message(None)]);
    (
        req(ApiKey::FindCoordinator, 4, corr, client, &q),
        Some(resp(ApiKey::FindCoordinator, 4, corr, &r)),
    )
}

/// InitProducerId `v` (3+) for `tid`: answered the producer id and epoch, or an error code
/// (with producer id and epoch -1).
fn init_producer_id(
    v: i16,
    corr: i32,
    client: &str,
    tid: &str,
    timeout_ms: i32,
    answer: Result<(i64, i16), i16>,
) -> Frames {
    use kafka_protocol::messages::{InitProducerIdRequest, InitProducerIdResponse};
    let q = InitProducerIdRequest::default()
        .with_transactional_id(Some(txn_id(tid)))
        .with_transaction_timeout_ms(timeout_ms)
        .with_producer_id(ProducerId(-1))
        .with_producer_epoch(-1);
    let (code, pid, epoch) = match answer {
        Ok((pid, epoch)) => (0, pid, epoch),
        Err(code) => (code, -1, -1),
    };
    let r = InitProducerIdResponse::default()
        .with_throttle_time_ms(0)
        .with_error_code(code)
        .with_producer_id(ProducerId(pid))
        .with_producer_epoch(epoch);
    (
        req(ApiKey::InitProducerId, v, corr, client, &q),
        Some(resp(ApiKey::InitProducerId, v, corr, &r)),
    )
}

/// AddPartitionsToTxn v3 (a client, transaction version 1): partitions of `orders`, all
/// answered NONE.
fn add_partitions(corr: i32, client: &str, p: Producer, partitions: &[i32]) -> Frames {
    use kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
    use kafka_protocol::messages::add_partitions_to_txn_response::{
        AddPartitionsToTxnPartitionResult, AddPartitionsToTxnTopicResult,
    };
    use kafka_protocol::messages::{AddPartitionsToTxnRequest, AddPartitionsToTxnResponse};
    let q = AddPartitionsToTxnRequest::default()
        .with_v3_and_below_transactional_id(txn_id(p.tid))
        .with_v3_and_below_producer_id(ProducerId(p.pid))
        .with_v3_and_below_producer_epoch(p.epoch)
        .with_v3_and_below_topics(vec![AddPartitionsToTxnTopic::default()
            .with_name(topic("orders"))
            .with_partitions(partitions.to_vec())]);
    let r = AddPartitionsToTxnResponse::default()
        .with_throttle_time_ms(0)
        .with_results_by_topic_v3_and_below(vec![AddPartitionsToTxnTopicResult::default()
            .with_name(topic("orders"))
            .with_results_by_partition(
                partitions
                    .iter()
                    .map(|&i| {
                        AddPartitionsToTxnPartitionResult::default()
                            .with_partition_index(i)
                            .with_partition_error_code(0)
                    })
                    .collect(),
            )]);
    (
        req(ApiKey::AddPartitionsToTxn, 3, corr, client, &q),
        Some(resp(ApiKey::AddPartitionsToTxn, 3, corr, &r)),
    )
}

/// AddPartitionsToTxn v5 (a partition leader, transaction version 2): one transaction adding
/// partitions of `orders` (VerifyOnly false), answered NONE.
fn add_partitions_v5(corr: i32, client: &str, p: Producer, partitions: &[i32]) -> Frames {
    use kafka_protocol::messages::add_partitions_to_txn_request::{
        AddPartitionsToTxnTopic, AddPartitionsToTxnTransaction,
    };
    use kafka_protocol::messages::add_partitions_to_txn_response::{
        AddPartitionsToTxnPartitionResult, AddPartitionsToTxnResult, AddPartitionsToTxnTopicResult,
    };
    use kafka_protocol::messages::{AddPartitionsToTxnRequest, AddPartitionsToTxnResponse};
    let q = AddPartitionsToTxnRequest::default().with_transactions(vec![
        AddPartitionsToTxnTransaction::default()
            .with_transactional_id(txn_id(p.tid))
            .with_producer_id(ProducerId(p.pid))
            .with_producer_epoch(p.epoch)
            .with_verify_only(false)
            .with_topics(vec![AddPartitionsToTxnTopic::default()
                .with_name(topic("orders"))
                .with_partitions(partitions.to_vec())]),
    ]);
    let r = AddPartitionsToTxnResponse::default()
        .with_throttle_time_ms(0)
        .with_error_code(0)
        .with_results_by_transaction(vec![AddPartitionsToTxnResult::default()
            .with_transactional_id(txn_id(p.tid))
            .with_topic_results(vec![AddPartitionsToTxnTopicResult::default()
                .with_name(topic("orders"))
                .with_results_by_partition(
                    partitions
                        .iter()
                        .map(|&i| {
                            AddPartitionsToTxnPartitionResult::default()
                                .with_partition_index(i)
                                .with_partition_error_code(0)
                        })
                        .collect(),
                )])]);
    (
        req(ApiKey::AddPartitionsToTxn, 5, corr, client, &q),
        Some(resp(ApiKey::AddPartitionsToTxn, 5, corr, &r)),
    )
}

/// One partition's data in a Produce request: a transactional batch of `records` records from
/// sequence `sequence`, created at `ts_ms`, appended at `base_offset`.
struct Data {
    partition: i32,
    records: usize,
    sequence: i32,
    base_offset: i64,
    ts_ms: i64,
}

/// The transactional record batch of `d`, encoded by kafka-protocol's `RecordBatchEncoder`
/// (base offset 0, as producers send it).
fn batch(p: Producer, d: &Data) -> Vec<u8> {
    use kafka_protocol::records::{
        Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
    };
    let records: Vec<Record> = (0..d.records)
        .map(|i| Record {
            transactional: true,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: -1,
            producer_id: p.pid,
            producer_epoch: p.epoch,
            timestamp_type: TimestampType::Creation,
            offset: i as i64,
            sequence: d.sequence + i as i32,
            timestamp: d.ts_ms,
            key: Some(Bytes::from(format!(
                "order-{}-{}",
                d.partition,
                d.sequence + i as i32
            ))),
            value: Some(Bytes::from(format!(
                "{{\"order\":{},\"amount\":{}}}",
                d.sequence + i as i32,
                100 + i
            ))),
            headers: Default::default(),
        })
        .collect();
    let mut buf = bytes::BytesMut::new();
    let options = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    RecordBatchEncoder::encode(&mut buf, &records, &options).expect("batch");
    buf.to_vec()
}

/// Produce `v` (acks -1) of `p`'s transactional batches to partitions of `orders`, each
/// answered NONE at its base offset.
fn produce(v: i16, corr: i32, client: &str, p: Producer, data: &[Data]) -> Frames {
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use kafka_protocol::messages::produce_response::{
        PartitionProduceResponse, TopicProduceResponse,
    };
    use kafka_protocol::messages::{ProduceRequest, ProduceResponse};
    let q = ProduceRequest::default()
        .with_transactional_id(Some(txn_id(p.tid)))
        .with_acks(-1)
        .with_timeout_ms(30_000)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name(topic("orders"))
            .with_partition_data(
                data.iter()
                    .map(|d| {
                        PartitionProduceData::default()
                            .with_index(d.partition)
                            .with_records(Some(Bytes::from(batch(p, d))))
                    })
                    .collect(),
            )]);
    let r = ProduceResponse::default()
        .with_responses(vec![TopicProduceResponse::default()
            .with_name(topic("orders"))
            .with_partition_responses(
                data.iter()
                    .map(|d| {
                        PartitionProduceResponse::default()
                            .with_index(d.partition)
                            .with_error_code(0)
                            .with_base_offset(d.base_offset)
                            .with_log_append_time_ms(-1)
                            .with_log_start_offset(0)
                    })
                    .collect(),
            )])
        .with_throttle_time_ms(0);
    (
        req(ApiKey::Produce, v, corr, client, &q),
        Some(resp(ApiKey::Produce, v, corr, &r)),
    )
}

/// AddOffsetsToTxn v3 of `group`, answered NONE.
fn add_offsets(corr: i32, client: &str, p: Producer, group: &str) -> Frames {
    use kafka_protocol::messages::{AddOffsetsToTxnRequest, AddOffsetsToTxnResponse};
    let q = AddOffsetsToTxnRequest::default()
        .with_transactional_id(txn_id(p.tid))
        .with_producer_id(ProducerId(p.pid))
        .with_producer_epoch(p.epoch)
        .with_group_id(GroupId(s(group)));
    let r = AddOffsetsToTxnResponse::default()
        .with_throttle_time_ms(0)
        .with_error_code(0);
    (
        req(ApiKey::AddOffsetsToTxn, 3, corr, client, &q),
        Some(resp(ApiKey::AddOffsetsToTxn, 3, corr, &r)),
    )
}

/// TxnOffsetCommit v3 of `group`'s positions in `orders` (partition, offset), answered NONE.
fn txn_offset_commit(
    corr: i32,
    client: &str,
    p: Producer,
    group: &str,
    positions: &[(i32, i64)],
) -> Frames {
    use kafka_protocol::messages::txn_offset_commit_request::{
        TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
    };
    use kafka_protocol::messages::txn_offset_commit_response::{
        TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
    };
    use kafka_protocol::messages::{TxnOffsetCommitRequest, TxnOffsetCommitResponse};
    let q = TxnOffsetCommitRequest::default()
        .with_transactional_id(txn_id(p.tid))
        .with_group_id(GroupId(s(group)))
        .with_producer_id(ProducerId(p.pid))
        .with_producer_epoch(p.epoch)
        .with_generation_id(1)
        .with_member_id(s(&format!("consumer-{group}-1-8c2b0f1e")))
        .with_group_instance_id(None)
        .with_topics(vec![TxnOffsetCommitRequestTopic::default()
            .with_name(topic("orders"))
            .with_partitions(
                positions
                    .iter()
                    .map(|&(i, offset)| {
                        TxnOffsetCommitRequestPartition::default()
                            .with_partition_index(i)
                            .with_committed_offset(offset)
                            .with_committed_leader_epoch(0)
                            .with_committed_metadata(Some(s("")))
                    })
                    .collect(),
            )]);
    let r = TxnOffsetCommitResponse::default()
        .with_throttle_time_ms(0)
        .with_topics(vec![TxnOffsetCommitResponseTopic::default()
            .with_name(topic("orders"))
            .with_partitions(
                positions
                    .iter()
                    .map(|&(i, _)| {
                        TxnOffsetCommitResponsePartition::default()
                            .with_partition_index(i)
                            .with_error_code(0)
                    })
                    .collect(),
            )]);
    (
        req(ApiKey::TxnOffsetCommit, 3, corr, client, &q),
        Some(resp(ApiKey::TxnOffsetCommit, 3, corr, &r)),
    )
}

/// EndTxn `v` (commit or abort) answered `error`; v5+ answers the producer id and the bumped
/// epoch `bumped`.
fn end_txn(
    v: i16,
    corr: i32,
    client: &str,
    p: Producer,
    committed: bool,
    error: i16,
    bumped: Option<i16>,
) -> Frames {
    use kafka_protocol::messages::{EndTxnRequest, EndTxnResponse};
    let q = EndTxnRequest::default()
        .with_transactional_id(txn_id(p.tid))
        .with_producer_id(ProducerId(p.pid))
        .with_producer_epoch(p.epoch)
        .with_committed(committed);
    let mut r = EndTxnResponse::default()
        .with_throttle_time_ms(0)
        .with_error_code(error);
    if let Some(epoch) = bumped {
        assert!(v >= 5);
        r = r
            .with_producer_id(ProducerId(p.pid))
            .with_producer_epoch(epoch);
    }
    (
        req(ApiKey::EndTxn, v, corr, client, &q),
        Some(resp(ApiKey::EndTxn, v, corr, &r)),
    )
}

/// One marker of a WriteTxnMarkers request.
struct Marker<'a> {
    pid: i64,
    epoch: i16,
    commit: bool,
    topics: &'a [(&'a str, &'a [i32])],
    coordinator_epoch: i32,
    /// TransactionVersion (v2 only).
    tv: i8,
}

/// A WriteTxnMarkers v1 exchange of one marker of `pid` at `epoch` (coordinator epoch
/// [`COORDINATOR_EPOCH`]) for `topics`, every partition answered NONE.
fn one_marker(
    c: i32,
    id: &str,
    pid: i64,
    epoch: i16,
    commit: bool,
    topics: &[(&str, &[i32])],
) -> Frames {
    let m = Marker {
        pid,
        epoch,
        commit,
        topics,
        coordinator_epoch: COORDINATOR_EPOCH,
        tv: 0,
    };
    write_txn_markers(1, c, id, &[m], &all_none)
}

/// A WriteTxnMarkers `v` (1 or 2) exchange; each marker's partitions are answered
/// `error(producer id, topic, partition)`. v1 is encoded by kafka-protocol, v2 by hand.
fn write_txn_markers(
    v: i16,
    corr: i32,
    client: &str,
    markers: &[Marker],
    error: &dyn Fn(i64, &str, i32) -> i16,
) -> Frames {
    use kafka_protocol::messages::write_txn_markers_request::{
        WritableTxnMarker, WritableTxnMarkerTopic,
    };
    use kafka_protocol::messages::write_txn_markers_response::{
        WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
    };
    use kafka_protocol::messages::{WriteTxnMarkersRequest, WriteTxnMarkersResponse};
    match v {
        1 => {
            let q = WriteTxnMarkersRequest::default().with_markers(
                markers
                    .iter()
                    .map(|m| {
                        WritableTxnMarker::default()
                            .with_producer_id(ProducerId(m.pid))
                            .with_producer_epoch(m.epoch)
                            .with_transaction_result(m.commit)
                            .with_topics(
                                m.topics
                                    .iter()
                                    .map(|(t, ps)| {
                                        WritableTxnMarkerTopic::default()
                                            .with_name(topic(t))
                                            .with_partition_indexes(ps.to_vec())
                                    })
                                    .collect(),
                            )
                            .with_coordinator_epoch(m.coordinator_epoch)
                    })
                    .collect(),
            );
            let r = WriteTxnMarkersResponse::default().with_markers(
                markers
                    .iter()
                    .map(|m| {
                        WritableTxnMarkerResult::default()
                            .with_producer_id(ProducerId(m.pid))
                            .with_topics(
                                m.topics
                                    .iter()
                                    .map(|(t, ps)| {
                                        WritableTxnMarkerTopicResult::default()
                                            .with_name(topic(t))
                                            .with_partitions(
                                                ps.iter()
                                                    .map(|&i| {
                                                        WritableTxnMarkerPartitionResult::default()
                                                            .with_partition_index(i)
                                                            .with_error_code(error(m.pid, t, i))
                                                    })
                                                    .collect(),
                                            )
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            );
            (
                req(ApiKey::WriteTxnMarkers, 1, corr, client, &q),
                Some(resp(ApiKey::WriteTxnMarkers, 1, corr, &r)),
            )
        }
        2 => {
            // Request header v2: api key, version, correlation id, client id (int16 length),
            // no tags. Body: compact arrays and strings, TransactionVersion after the
            // coordinator epoch, empty tag sections.
            let mut q = Enc::default();
            q.i16(27).i16(2).i32(corr).classic_str(client).tags(&[]);
            q.len(true, markers.len());
            for m in markers {
                q.i64(m.pid)
                    .i16(m.epoch)
                    .i8(i8::from(m.commit))
                    .len(true, m.topics.len());
                for (t, ps) in m.topics {
                    q.compact_str(t).len(true, ps.len());
                    for &i in *ps {
                        q.i32(i);
                    }
                    q.tags(&[]);
                }
                q.i32(m.coordinator_epoch).i8(m.tv).tags(&[]);
            }
            q.tags(&[]);
            // Response header v1: correlation id, no tags.
            let mut r = Enc::default();
            r.i32(corr).tags(&[]);
            r.len(true, markers.len());
            for m in markers {
                r.i64(m.pid).len(true, m.topics.len());
                for (t, ps) in m.topics {
                    r.compact_str(t).len(true, ps.len());
                    for &i in *ps {
                        r.i32(i).i16(error(m.pid, t, i)).tags(&[]);
                    }
                    r.tags(&[]);
                }
                r.tags(&[]);
            }
            r.tags(&[]);
            (q.frame(), Some(r.frame()))
        }
        _ => unreachable!("WriteTxnMarkers v{v}"),
    }
}

/// Fetch v11 of one partition of `orders` by a `read_committed` consumer, answered with the
/// high watermark and last stable offset, no aborted transactions and no records (a
/// zero-length record set: nothing is stable past the fetch offset).
fn fetch(corr: i32, client: &str, partition: i32, offset: i64, hw: i64, lso: i64) -> Frames {
    use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
    use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
    use kafka_protocol::messages::{FetchRequest, FetchResponse};
    let q = FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(500)
        .with_min_bytes(1)
        .with_max_bytes(52_428_800)
        .with_isolation_level(1)
        .with_session_id(0)
        .with_session_epoch(-1)
        .with_topics(vec![FetchTopic::default()
            .with_topic(topic("orders"))
            .with_partitions(vec![FetchPartition::default()
                .with_partition(partition)
                .with_current_leader_epoch(0)
                .with_fetch_offset(offset)
                .with_log_start_offset(-1)
                .with_partition_max_bytes(1_048_576)])])
        .with_forgotten_topics_data(vec![])
        .with_rack_id(s(""));
    let r = FetchResponse::default()
        .with_throttle_time_ms(0)
        .with_error_code(0)
        .with_session_id(0)
        .with_responses(vec![FetchableTopicResponse::default()
            .with_topic(topic("orders"))
            .with_partitions(vec![PartitionData::default()
                .with_partition_index(partition)
                .with_error_code(0)
                .with_high_watermark(hw)
                .with_last_stable_offset(lso)
                .with_log_start_offset(0)
                .with_aborted_transactions(Some(vec![]))
                .with_preferred_read_replica(BrokerId(-1))
                .with_records(Some(Bytes::new()))])]);
    (
        req(ApiKey::Fetch, 11, corr, client, &q),
        Some(resp(ApiKey::Fetch, 11, corr, &r)),
    )
}

/// ApiVersions v3, answered with the versions of the APIs these captures use.
fn api_versions(corr: i32, client: &str) -> Frames {
    use kafka_protocol::messages::api_versions_response::ApiVersion;
    use kafka_protocol::messages::{ApiVersionsRequest, ApiVersionsResponse};
    let q = ApiVersionsRequest::default()
        .with_client_software_name(s("apache-kafka-java"))
        .with_client_software_version(s("4.1.0"));
    let keys: [(i16, i16, i16); 12] = [
        (0, 3, 12),
        (1, 4, 17),
        (3, 0, 12),
        (10, 0, 6),
        (18, 0, 4),
        (22, 0, 5),
        (24, 0, 5),
        (25, 0, 4),
        (26, 0, 5),
        (27, 1, 1),
        (28, 0, 5),
        (61, 0, 0),
    ];
    let r = ApiVersionsResponse::default()
        .with_error_code(0)
        .with_api_keys(
            keys.iter()
                .map(|&(k, min, max)| {
                    ApiVersion::default()
                        .with_api_key(k)
                        .with_min_version(min)
                        .with_max_version(max)
                })
                .collect(),
        )
        .with_throttle_time_ms(0);
    (
        req(ApiKey::ApiVersions, 3, corr, client, &q),
        Some(resp(ApiKey::ApiVersions, 3, corr, &r)),
    )
}

/// DescribeProducers v0 of one partition of `orders`, answered with one active producer whose
/// transaction is open since `start_offset`.
fn describe_producers(
    corr: i32,
    client: &str,
    partition: i32,
    p: Producer,
    last_sequence: i32,
    coordinator_epoch: i32,
    start_offset: i64,
) -> Frames {
    use kafka_protocol::messages::describe_producers_request::TopicRequest;
    use kafka_protocol::messages::describe_producers_response::{
        PartitionResponse, ProducerState, TopicResponse,
    };
    use kafka_protocol::messages::{DescribeProducersRequest, DescribeProducersResponse};
    let q = DescribeProducersRequest::default().with_topics(vec![TopicRequest::default()
        .with_name(topic("orders"))
        .with_partition_indexes(vec![partition])]);
    let r = DescribeProducersResponse::default()
        .with_throttle_time_ms(0)
        .with_topics(vec![TopicResponse::default()
            .with_name(topic("orders"))
            .with_partitions(vec![PartitionResponse::default()
                .with_partition_index(partition)
                .with_error_code(0)
                .with_error_message(None)
                .with_active_producers(vec![ProducerState::default()
                    .with_producer_id(ProducerId(p.pid))
                    .with_producer_epoch(i32::from(p.epoch))
                    .with_last_sequence(last_sequence)
                    .with_last_timestamp(T0_SECS as i64 * 1000 + 12)
                    .with_coordinator_epoch(coordinator_epoch)
                    .with_current_txn_start_offset(start_offset)])])]);
    (
        req(ApiKey::DescribeProducers, 0, corr, client, &q),
        Some(resp(ApiKey::DescribeProducers, 0, corr, &r)),
    )
}

/// The capture's clock at `at` microseconds from the start, in milliseconds (record times).
fn ts_ms(at: u64) -> i64 {
    (T0_SECS * 1000 + at / 1000) as i64
}

/// Error code 0 for every marker partition.
fn all_none(_: i64, _: &str, _: i32) -> i16 {
    0
}

/// The beginning every producer's scenario shares: Metadata (orders only, or all topics),
/// FindCoordinator for its transactional id (node 0), InitProducerId `v`, at 1, 3 and 5 ms
/// after `start`.
fn begin(sc: &mut Scenario, start: u64, client: &str, p: Producer, timeout_ms: i32, v: i16) {
    begin_with(sc, start, client, p, timeout_ms, v, false)
}

fn begin_with(
    sc: &mut Scenario,
    start: u64,
    client: &str,
    p: Producer,
    timeout_ms: i32,
    v: i16,
    all_topics: bool,
) {
    sc.ex(start + ms(1), client, NODE0, |c, id| {
        metadata(c, id, all_topics, &[])
    });
    sc.ex(start + ms(3), client, NODE0, |c, id| {
        find_coordinator(c, id, p.tid, 1, node_of(NODE0))
    });
    sc.ex(start + ms(5), client, NODE0, |c, id| {
        init_producer_id(v, c, id, p.tid, timeout_ms, Ok((p.pid, p.epoch)))
    });
}

/// A transaction version 1 transaction of `p` on one partition of `orders` up to its EndTxn
/// (AddPartitionsToTxn at +10 ms, Produce of `records` records at +12 ms, EndTxn at +30 ms
/// answered NONE), starting at `start`.
#[allow(clippy::too_many_arguments)]
fn tv1_until_end(
    sc: &mut Scenario,
    start: u64,
    client: &str,
    p: Producer,
    partition: i32,
    records: usize,
    base_offset: i64,
    commit: bool,
) {
    sc.ex(start + ms(10), client, NODE0, |c, id| {
        add_partitions(c, id, p, &[partition])
    });
    let at = start + ms(12);
    sc.ex(at, client, NODE1, |c, id| {
        let d = Data {
            partition,
            records,
            sequence: 0,
            base_offset,
            ts_ms: ts_ms(at),
        };
        produce(9, c, id, p, &[d])
    });
    sc.ex(start + ms(30), client, NODE0, |c, id| {
        end_txn(3, c, id, p, commit, 0, None)
    });
}

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

/// Transaction version 1: two transactions of one producer epoch, the first with consumer
/// offsets and committed, the second aborted.
fn txn_v1_flow() {
    let mut sc = Scenario::new(
        "txn-v1-flow",
        "Transaction version 1: producer app-v1 (pid 5000, epoch 3) commits a transaction on \
         orders 0 and 1 with consumer offsets of group grp-v1, then aborts a second one on \
         orders 1 in the same epoch.",
    );
    let client = "producer-app-v1";
    let p = Producer {
        tid: "app-v1",
        pid: 5000,
        epoch: 3,
    };
    let group = "grp-v1";
    // The group's __consumer_offsets partition, as Kafka's group coordinator computes it:
    // Utils.abs(Java's String.hashCode of the group id) % 50, Utils.abs its absolute value
    // (0 for i32::MIN): 5 for grp-v1 (hash -1237499805; 43 with the sign bit cleared, as this
    // capture once had it).
    let hash = java_string_hash(group);
    let offsets_partition = if hash == i32::MIN { 0 } else { hash.abs() } % OFFSETS_PARTITIONS;
    begin_with(&mut sc, 0, client, p, 60_000, 4, true);
    // Transaction A.
    sc.ex(ms(10), client, NODE0, |c, id| {
        add_partitions(c, id, p, &[0, 1])
    });
    let a = [
        Data {
            partition: 0,
            records: 4,
            sequence: 0,
            base_offset: 100,
            ts_ms: ts_ms(ms(12)),
        },
        Data {
            partition: 1,
            records: 4,
            sequence: 0,
            base_offset: 200,
            ts_ms: ts_ms(ms(12)),
        },
    ];
    sc.ex(ms(12), client, NODE1, |c, id| produce(9, c, id, p, &a));
    sc.ex(ms(20), client, NODE0, |c, id| add_offsets(c, id, p, group));
    sc.ex(ms(22), client, NODE0, |c, id| {
        find_coordinator(c, id, group, 0, node_of(NODE0))
    });
    sc.ex(ms(24), client, NODE0, |c, id| {
        txn_offset_commit(c, id, p, group, &[(0, 42)])
    });
    sc.ex_after(ms(30), 1500, client, NODE0, |c, id| {
        end_txn(3, c, id, p, true, 0, None)
    });
    let topics_a: &[(&str, &[i32])] = &[
        ("orders", &[0, 1]),
        ("__consumer_offsets", &[offsets_partition]),
    ];
    sc.ex(ms(32), MARKER_SENDER, NODE1, |c, id| {
        one_marker(c, id, p.pid, p.epoch, true, topics_a)
    });
    sc.txn(expected_txn(
        Some(&p),
        p.pid,
        p.epoch,
        COMMITTED_BY_CLIENT,
        vec![
            part("orders", 0, a[0].records, Some("COMMIT"), None),
            part("orders", 1, a[1].records, Some("COMMIT"), None),
            part(
                "__consumer_offsets",
                offsets_partition,
                0,
                Some("COMMIT"),
                None,
            ),
        ],
    ));
    // Transaction B, same epoch: orders 1 continues at sequence 4, after A's 4 records and
    // its COMMIT marker (offsets 200-203, 204).
    sc.ex(ms(100), client, NODE0, |c, id| {
        add_partitions(c, id, p, &[1])
    });
    let b = [Data {
        partition: 1,
        records: 2,
        sequence: 4,
        base_offset: 205,
        ts_ms: ts_ms(ms(102)),
    }];
    sc.ex(ms(102), client, NODE1, |c, id| produce(9, c, id, p, &b));
    sc.ex_after(ms(110), 1200, client, NODE0, |c, id| {
        end_txn(3, c, id, p, false, 0, None)
    });
    sc.ex(ms(112), MARKER_SENDER, NODE1, |c, id| {
        one_marker(c, id, p.pid, p.epoch, false, &[("orders", &[1])])
    });
    sc.txn(expected_txn(
        Some(&p),
        p.pid,
        p.epoch,
        ABORTED_BY_CLIENT,
        vec![part("orders", 1, b[0].records, Some("ABORT"), None)],
    ));
    sc.write();
}

/// Transaction version 2 (KIP-890): the partition joins through the leader's
/// AddPartitionsToTxn v5; EndTxn v5 returns the bumped epoch; markers v2 carry it.
fn txn_v2_flow() {
    let mut sc = Scenario::new(
        "txn-v2-flow",
        "Transaction version 2: producer app-v2 (pid 6000, epoch 10) produces to orders 2 with \
         no AddPartitionsToTxn of its own (node 1 adds the partition), commits, and the \
         coordinator's markers carry the bumped epoch 11.",
    );
    let client = "producer-app-v2";
    let p = Producer {
        tid: "app-v2",
        pid: 6000,
        epoch: 10,
    };
    let bumped = 11;
    begin(&mut sc, 0, client, p, 60_000, 5);
    let d = [Data {
        partition: 2,
        records: 3,
        sequence: 0,
        base_offset: 400,
        ts_ms: ts_ms(ms(10)),
    }];
    // The leader holds the Produce until the coordinator has added the partition.
    sc.ex_after(ms(10), 1800, client, NODE1, |c, id| {
        produce(12, c, id, p, &d)
    });
    sc.ex_after(
        ms(10) + 300,
        900,
        "broker-1-txn-add-partitions",
        NODE0,
        |c, id| add_partitions_v5(c, id, p, &[2]),
    );
    sc.ex_after(ms(30), 1500, client, NODE0, |c, id| {
        end_txn(5, c, id, p, true, 0, Some(bumped))
    });
    sc.ex(ms(32), MARKER_SENDER, NODE1, |c, id| {
        write_txn_markers(
            2,
            c,
            id,
            &[Marker {
                pid: p.pid,
                epoch: bumped,
                commit: true,
                topics: &[("orders", &[2])],
                coordinator_epoch: COORDINATOR_EPOCH,
                tv: 2,
            }],
            &all_none,
        )
    });
    sc.txn(expected_txn(
        Some(&p),
        p.pid,
        p.epoch,
        COMMITTED_BY_CLIENT,
        vec![part("orders", 2, d[0].records, Some("COMMIT"), None)],
    ));
    sc.write();
}

/// A transaction open past its 1 s timeout: the coordinator aborts it with a bumped epoch;
/// the producer's late EndTxn is refused.
fn txn_timeout() {
    let mut sc = Scenario::new(
        "txn-timeout",
        "Producer app-slow (pid 7000, epoch 0, timeout 1000 ms) leaves its transaction on \
         orders 3 open: 3 s later the coordinator aborts it (markers with epoch 1) and the \
         producer's commit 1 s after that gets INVALID_PRODUCER_EPOCH.",
    );
    let client = "producer-app-slow";
    let p = Producer {
        tid: "app-slow",
        pid: 7000,
        epoch: 0,
    };
    begin(&mut sc, 0, client, p, 1000, 4);
    sc.ex(ms(10), client, NODE0, |c, id| {
        add_partitions(c, id, p, &[3])
    });
    let d = [Data {
        partition: 3,
        records: 3,
        sequence: 0,
        base_offset: 500,
        ts_ms: ts_ms(ms(12)),
    }];
    sc.ex(ms(12), client, NODE1, |c, id| produce(9, c, id, p, &d));
    let abort_at = ms(12) + ms(3000);
    sc.ex(abort_at, MARKER_SENDER, NODE1, |c, id| {
        one_marker(c, id, p.pid, p.epoch + 1, false, &[("orders", &[3])])
    });
    sc.ex(abort_at + ms(1000), client, NODE0, |c, id| {
        end_txn(3, c, id, p, true, 47, None)
    });
    sc.txn(expected_txn(
        Some(&p),
        p.pid,
        p.epoch,
        End {
            outcome: "aborted",
            requested: Some("commit"),
            ended_by: Some("coordinator"),
            reason: Some("timeout"),
        },
        vec![part("orders", 3, d[0].records, Some("ABORT"), None)],
    ));
    sc.write();
}

/// A second instance of the same transactional id fences the first mid-transaction.
fn txn_fenced() {
    let mut sc = Scenario::new(
        "txn-fenced",
        "Producer app-zombie (pid 8000, epoch 4) is fenced mid-transaction on orders 4 by a \
         second instance: its InitProducerId gets CONCURRENT_TRANSACTIONS while the coordinator \
         aborts the open transaction (markers with epoch 5), then succeeds with epoch 6.",
    );
    let first = "producer-app-zombie-1";
    let second = "producer-app-zombie-2";
    let p = Producer {
        tid: "app-zombie",
        pid: 8000,
        epoch: 4,
    };
    begin(&mut sc, 0, first, p, 60_000, 4);
    sc.ex(ms(10), first, NODE0, |c, id| add_partitions(c, id, p, &[4]));
    let d = [Data {
        partition: 4,
        records: 2,
        sequence: 0,
        base_offset: 600,
        ts_ms: ts_ms(ms(12)),
    }];
    sc.ex(ms(12), first, NODE1, |c, id| produce(9, c, id, p, &d));
    // The second instance, 2 s later.
    let t = ms(2000);
    sc.ex(t, second, NODE0, |c, id| {
        find_coordinator(c, id, p.tid, 1, node_of(NODE0))
    });
    sc.ex(t + ms(2), second, NODE0, |c, id| {
        init_producer_id(4, c, id, p.tid, 60_000, Err(51))
    });
    sc.ex(t + ms(4), MARKER_SENDER, NODE1, |c, id| {
        one_marker(c, id, p.pid, p.epoch + 1, false, &[("orders", &[4])])
    });
    sc.ex(t + ms(102), second, NODE0, |c, id| {
        init_producer_id(4, c, id, p.tid, 60_000, Ok((p.pid, p.epoch + 2)))
    });
    sc.txn(expected_txn(
        Some(&p),
        p.pid,
        p.epoch,
        End {
            outcome: "aborted",
            requested: None,
            ended_by: Some("coordinator"),
            reason: Some("fenced"),
        },
        vec![part("orders", 4, d[0].records, Some("ABORT"), None)],
    ));
    sc.verdict("fenced_producer", p.pid);
    sc.write();
}

/// A commit the coordinator accepted whose markers never come.
fn txn_hanging() {
    let mut sc = Scenario::new(
        "txn-hanging",
        "Producer app-hang (pid 9000, epoch 0) commits its transaction on orders 5 (EndTxn \
         answered NONE) but no WriteTxnMarkers follows in the 20 s the capture goes on, while \
         app-ok's (pid 9001) commit 5 s later on orders 4 gets its marker.",
    );
    let client = "producer-app-hang";
    let p = Producer {
        tid: "app-hang",
        pid: 9000,
        epoch: 0,
    };
    begin(&mut sc, 0, client, p, 60_000, 4);
    tv1_until_end(&mut sc, 0, client, p, 5, 3, 700, true);
    // Captured on the coordinator's host: another producer's commit 5 s later, whose COMMIT
    // marker node 0 sends node 1 is in the capture (so the missing one is missing).
    let ok_client = "producer-app-ok";
    let ok = Producer {
        tid: "app-ok",
        pid: 9001,
        epoch: 0,
    };
    begin(&mut sc, ms(5_000), ok_client, ok, 60_000, 4);
    tv1_until_end(&mut sc, ms(5_000), ok_client, ok, 4, 2, 300, true);
    sc.ex(ms(5_000) + ms(32), MARKER_SENDER, NODE1, |c, id| {
        one_marker(c, id, ok.pid, ok.epoch, true, &[("orders", &[4])])
    });
    sc.ex(ms(30) + ms(20_000), "consumer-other-1", NODE0, api_versions);
    sc.txn(expected_txn(
        Some(&ok),
        ok.pid,
        ok.epoch,
        COMMITTED_BY_CLIENT,
        vec![part("orders", 4, 2, Some("COMMIT"), None)],
    ));
    sc.txn(expected_txn(
        Some(&p),
        p.pid,
        p.epoch,
        COMMITTED_BY_CLIENT,
        vec![part("orders", 5, 3, None, None)],
    ));
    sc.verdict("hanging_transaction", p.pid);
    sc.write();
}

/// A marker refused by a former leader, sent again to the new one.
fn txn_marker_retry() {
    let mut sc = Scenario::new(
        "txn-marker-retry",
        "Producer app-retry (pid 9100, epoch 0) commits on orders 6; node 1 answers the COMMIT \
         marker NOT_LEADER_OR_FOLLOWER, Metadata then names node 2 the leader, and the marker \
         sent again to node 2 is written.",
    );
    let client = "producer-app-retry";
    let p = Producer {
        tid: "app-retry",
        pid: 9100,
        epoch: 0,
    };
    begin(&mut sc, 0, client, p, 60_000, 4);
    tv1_until_end(&mut sc, 0, client, p, 6, 2, 800, true);
    let marker = |c: i32, id: &str, error: i16| {
        write_txn_markers(
            1,
            c,
            id,
            &[Marker {
                pid: p.pid,
                epoch: p.epoch,
                commit: true,
                topics: &[("orders", &[6])],
                coordinator_epoch: COORDINATOR_EPOCH,
                tv: 0,
            }],
            &|_, _, _| error,
        )
    };
    sc.ex(ms(32), MARKER_SENDER, NODE1, |c, id| marker(c, id, 6));
    sc.ex(ms(40), client, NODE0, |c, id| {
        metadata(c, id, false, &[(6, node_of(NODE2), 1)])
    });
    sc.ex(ms(140), MARKER_SENDER, NODE2, |c, id| marker(c, id, 0));
    sc.txn(expected_txn(
        Some(&p),
        p.pid,
        p.epoch,
        COMMITTED_BY_CLIENT,
        vec![part(
            "orders",
            6,
            2,
            Some("COMMIT"),
            Some("NOT_LEADER_OR_FOLLOWER"),
        )],
    ));
    sc.write();
}

/// Two producers' transactions on one partition; the second's marker carries an older
/// coordinator epoch and is fenced.
fn txn_stale_epoch() {
    let mut sc = Scenario::new(
        "txn-stale-epoch",
        "Producer app-s1 (pid 9200) commits on orders 7 in epoch 0 (its marker, coordinator \
         epoch 9, is written), then again in epoch 1 after a new InitProducerId: that marker \
         carries coordinator epoch 8 (an old coordinator) and is answered \
         TRANSACTION_COORDINATOR_FENCED.",
    );
    let s1 = Producer {
        tid: "app-s1",
        pid: 9200,
        epoch: 0,
    };
    let s2 = Producer {
        tid: "app-s1",
        pid: 9200,
        epoch: 1,
    };
    let marker = |c: i32, id: &str, p: Producer, coordinator_epoch: i32, error: i16| {
        write_txn_markers(
            1,
            c,
            id,
            &[Marker {
                pid: p.pid,
                epoch: p.epoch,
                commit: true,
                topics: &[("orders", &[7])],
                coordinator_epoch,
                tv: 0,
            }],
            &|_, _, _| error,
        )
    };
    begin(&mut sc, 0, "producer-app-s1", s1, 60_000, 4);
    tv1_until_end(&mut sc, 0, "producer-app-s1", s1, 7, 2, 300, true);
    sc.ex(ms(32), MARKER_SENDER, NODE1, |c, id| {
        marker(c, id, s1, 9, 0)
    });
    let t = ms(200);
    sc.ex(t + ms(3), "producer-app-s1", NODE0, |c, id| {
        find_coordinator(c, id, s2.tid, 1, node_of(NODE0))
    });
    sc.ex(t + ms(5), "producer-app-s1", NODE0, |c, id| {
        init_producer_id(4, c, id, s2.tid, 60_000, Ok((s2.pid, s2.epoch)))
    });
    tv1_until_end(&mut sc, t, "producer-app-s1", s2, 7, 2, 303, true);
    sc.ex(t + ms(32), MARKER_SENDER, NODE1, |c, id| {
        marker(c, id, s2, 8, 52)
    });
    sc.txn(expected_txn(
        Some(&s1),
        s1.pid,
        s1.epoch,
        COMMITTED_BY_CLIENT,
        vec![part("orders", 7, 2, Some("COMMIT"), None)],
    ));
    sc.txn(expected_txn(
        Some(&s2),
        s2.pid,
        s2.epoch,
        COMMITTED_BY_CLIENT,
        vec![part(
            "orders",
            7,
            2,
            Some("COMMIT"),
            Some("TRANSACTION_COORDINATOR_FENCED"),
        )],
    ));
    sc.verdict("stale_coordinator_epoch", s2.pid);
    sc.verdict("marker_failed", s2.pid);
    sc.write();
}

/// An open transaction holds the last stable offset while a read_committed consumer polls.
fn txn_lso_stuck() {
    let mut sc = Scenario::new(
        "txn-lso-stuck",
        "Producer app-lso (pid 9300, epoch 0, timeout 2000 ms) leaves a one-record transaction \
         open at offset 50 of orders 8; for 13 s a read_committed consumer sees the high \
         watermark grow while the last stable offset stays at 50 (past the timeout and the \
         coordinator's 10 s sweep for timed-out transactions: hanging).",
    );
    let client = "producer-app-lso";
    let p = Producer {
        tid: "app-lso",
        pid: 9300,
        epoch: 0,
    };
    let lso = 50;
    begin(&mut sc, 0, client, p, 2000, 4);
    sc.ex(ms(10), client, NODE0, |c, id| {
        add_partitions(c, id, p, &[8])
    });
    let d = [Data {
        partition: 8,
        records: 1,
        sequence: 0,
        base_offset: lso,
        ts_ms: ts_ms(ms(12)),
    }];
    sc.ex(ms(12), client, NODE1, |c, id| produce(9, c, id, p, &d));
    for i in 1..=12u64 {
        let hw = if i == 1 {
            lso + 1
        } else {
            50 + 10 * (i as i64 - 1)
        };
        sc.ex(ms(1_100 * i), "consumer-grp-lso-1", NODE1, |c, id| {
            fetch(c, id, 8, lso, hw, lso)
        });
    }
    sc.txn(expected_txn(
        Some(&p),
        p.pid,
        p.epoch,
        End {
            outcome: "open",
            requested: None,
            ended_by: None,
            reason: None,
        },
        vec![part("orders", 8, d[0].records, None, None)],
    ));
    // Open past its 2000 ms timeout with data on node 1 and no marker: hanging too.
    sc.verdict("hanging_transaction", p.pid);
    sc.verdict("lso_stuck", p.pid);
    sc.write();
}

/// A hanging transaction ended by an administrator (`kafka-transactions.sh abort`).
fn txn_admin_abort() {
    let mut sc = Scenario::new(
        "txn-admin-abort",
        "Producer app-adm (pid 9400, epoch 0) commits on orders 9 but no marker follows; 15 s \
         later an admin client aborts it with its own WriteTxnMarkers to node 1.",
    );
    let client = "producer-app-adm";
    let admin = "adminclient-1";
    let p = Producer {
        tid: "app-adm",
        pid: 9400,
        epoch: 0,
    };
    begin(&mut sc, 0, client, p, 60_000, 4);
    tv1_until_end(&mut sc, 0, client, p, 9, 3, 900, true);
    let t = ms(30) + ms(15_000);
    // kafka-transactions.sh abort --topic orders --partition 9 --start-offset 900: the
    // producer's state first, then the marker.
    sc.ex(t, admin, NODE1, |c, id| {
        describe_producers(c, id, 9, p, 2, COORDINATOR_EPOCH, 900)
    });
    sc.ex(t + ms(5), admin, NODE1, |c, id| {
        one_marker(c, id, p.pid, p.epoch, false, &[("orders", &[9])])
    });
    sc.txn(expected_txn(
        Some(&p),
        p.pid,
        p.epoch,
        End {
            outcome: "aborted",
            requested: Some("commit"),
            ended_by: Some("admin"),
            reason: None,
        },
        vec![part("orders", 9, 3, Some("ABORT"), None)],
    ));
    // Its client was told it committed.
    sc.verdict("accepted_commit_aborted", p.pid);
    sc.write();
}

/// Markers only, as a capture of the inter-broker listener alone sees them.
fn txn_inter_broker() {
    let mut sc = Scenario::new(
        "txn-inter-broker",
        "Only the coordinator's WriteTxnMarkers to node 1: one request with three markers \
         (pids 9500, 9501, 9502) and one with a fourth (pid 9503), all written.",
    );
    // (producer id, epoch, commit, partitions of orders)
    let first: [(i64, i16, bool, &[i32]); 3] = [
        (9500, 2, true, &[0]),
        (9501, 0, false, &[1]),
        (9502, 7, true, &[2, 3]),
    ];
    let second: [(i64, i16, bool, &[i32]); 1] = [(9503, 1, true, &[4])];
    let topics: Vec<[(&str, &[i32]); 1]> = first
        .iter()
        .chain(&second)
        .map(|m| [("orders", m.3)])
        .collect();
    let markers: Vec<Marker> = first
        .iter()
        .chain(&second)
        .zip(&topics)
        .map(|(m, t)| Marker {
            pid: m.0,
            epoch: m.1,
            commit: m.2,
            topics: t,
            coordinator_epoch: COORDINATOR_EPOCH,
            tv: 0,
        })
        .collect();
    sc.ex(ms(1), MARKER_SENDER, NODE1, |c, id| {
        write_txn_markers(1, c, id, &markers[..3], &all_none)
    });
    sc.ex(ms(50), MARKER_SENDER, NODE1, |c, id| {
        write_txn_markers(1, c, id, &markers[3..], &all_none)
    });
    for &(pid, epoch, commit, ps) in first.iter().chain(&second) {
        let (outcome, marker) = if commit {
            ("committed", "COMMIT")
        } else {
            ("aborted", "ABORT")
        };
        sc.txn(expected_txn(
            None,
            pid,
            epoch,
            End {
                outcome,
                requested: None,
                ended_by: None,
                reason: None,
            },
            ps.iter()
                .map(|&i| part("orders", i, 0, Some(marker), None))
                .collect(),
        ));
    }
    sc.write();
}

/// `n` transactions, as the module documentation says (`--many N`).
fn txn_many(n: usize, pcap: &str, pad: &str) {
    let mut sc = Scenario::new(
        "txn-many",
        "Many transactions of 50 producers taking turns on orders: of every 20, 14 committed, \
         3 aborted by the client, 1 committed after a retried marker, 1 hanging (commit \
         accepted, no marker), 1 aborted by the coordinator on its timeout.",
    );
    const PRODUCERS: usize = 50;
    const GAP: u64 = 4_000;
    let shared = |i: usize| Producer {
        tid: Box::leak(format!("app-many-{i}{pad}").into_boxed_str()),
        pid: 100_000 + i as i64,
        epoch: 0,
    };
    // Each shared producer begins before its first transaction (transaction i at 20 ms +
    // i * 4 ms).
    for i in 0..PRODUCERS.min(n) {
        let p = shared(i);
        let client: &str = Box::leak(format!("producer-{}", p.tid).into_boxed_str());
        begin(&mut sc, i as u64 * GAP, client, p, 60_000, 4);
    }
    let mut offsets = [0i64; ORDERS_PARTITIONS as usize];
    for t in 0..n {
        let start = ms(20) + t as u64 * GAP;
        let kind = t % 20;
        let (p, client) = if kind >= 18 {
            // A producer of its own: no later transaction of it can begin (a hanging one
            // blocks its producer; a timed-out one's epoch is bumped).
            let (name, pid, timeout) = if kind == 18 {
                ("hanging", 600_000, 60_000)
            } else {
                ("timeout", 500_000, 20)
            };
            let p = Producer {
                tid: Box::leak(format!("app-{name}-{t}{pad}").into_boxed_str()),
                pid: pid + t as i64,
                epoch: 0,
            };
            let client: &str = Box::leak(format!("producer-{}", p.tid).into_boxed_str());
            begin(&mut sc, start - ms(10), client, p, timeout, 4);
            (p, client)
        } else {
            let p = shared(t % PRODUCERS);
            (
                p,
                &*Box::leak(format!("producer-{}", p.tid).into_boxed_str()),
            )
        };
        let partition = ((t + t / 20) % ORDERS_PARTITIONS as usize) as i32;
        let records = 1 + t % 5;
        let base = offsets[partition as usize];
        offsets[partition as usize] += records as i64 + 1; // and its marker
        sc.ex(start, client, NODE0, |c, id| {
            add_partitions(c, id, p, &[partition])
        });
        let at = start + ms(2);
        sc.ex(at, client, NODE1, |c, id| {
            let d = Data {
                partition,
                records,
                sequence: 0,
                base_offset: base,
                ts_ms: ts_ms(at),
            };
            produce(9, c, id, p, &[d])
        });
        let commit = !(14..17).contains(&kind);
        if kind != 19 {
            sc.ex(start + ms(20), client, NODE0, |c, id| {
                end_txn(3, c, id, p, commit, 0, None)
            });
        }
        let marker = |commit: bool, epoch: i16, error: i16| {
            move |c: i32, id: &str| {
                let m = Marker {
                    pid: p.pid,
                    epoch,
                    commit,
                    topics: &[("orders", &[partition])],
                    coordinator_epoch: COORDINATOR_EPOCH,
                    tv: 0,
                };
                let errors = move |_: i64, _: &str, _: i32| error;
                write_txn_markers(1, c, id, &[m], &errors)
            }
        };
        let (end, error) = match kind {
            18 => (COMMITTED_BY_CLIENT, None), // hanging: no marker
            19 => {
                sc.ex(start + ms(22), MARKER_SENDER, NODE1, marker(false, 1, 0));
                (
                    End {
                        outcome: "aborted",
                        requested: None,
                        ended_by: Some("coordinator"),
                        reason: Some("timeout"),
                    },
                    None,
                )
            }
            17 => {
                sc.ex(start + ms(22), MARKER_SENDER, NODE1, marker(true, 0, 6));
                sc.ex(start + ms(24), MARKER_SENDER, NODE1, marker(true, 0, 0));
                (COMMITTED_BY_CLIENT, Some("NOT_LEADER_OR_FOLLOWER"))
            }
            _ => {
                sc.ex(start + ms(22), MARKER_SENDER, NODE1, marker(commit, 0, 0));
                let end = if commit {
                    COMMITTED_BY_CLIENT
                } else {
                    ABORTED_BY_CLIENT
                };
                (end, None)
            }
        };
        let marker = match kind {
            18 => None,
            14..=16 | 19 => Some("ABORT"),
            _ => Some("COMMIT"),
        };
        if kind == 18 {
            sc.verdict("hanging_transaction", p.pid);
        }
        sc.txn(expected_txn(
            Some(&p),
            p.pid,
            p.epoch,
            end,
            vec![part("orders", partition, records, marker, error)],
        ));
    }
    // 20 s later, another client: the capture goes on long enough after the hanging
    // transactions' commits for their markers to have come.
    let last = ms(20) + n as u64 * GAP + ms(30);
    sc.ex(last + ms(20_000), "consumer-other-1", NODE0, api_versions);
    let json = match pcap.strip_suffix(".pcap") {
        Some(stem) => format!("{stem}.transactions.json"),
        None => format!("{pcap}.transactions.json"),
    };
    sc.write_to(pcap, &json);
}

/// What `--help` prints.
const USAGE: &str = "usage: make_txn_captures                 rewrite the ten captures/txn-*.pcap (and their .transactions.json)
       make_txn_captures --many N [--out FILE] [--id-pad N]
                                          N transactions in FILE (default target/txn-many.pcap);
                                          --id-pad N ends every transactional id in N '\"'";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Anything but the options below is refused: with no argument the committed captures are
    // rewritten, which `--help` or a typo must not do.
    let known = ["--many", "--out", "--id-pad"];
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--help" || a == "-h" {
            println!("{USAGE}");
            return;
        }
        if !known.contains(&a.as_str()) {
            eprintln!("make_txn_captures: unknown argument {a:?}\n{USAGE}");
            std::process::exit(2);
        }
        it.next();
    }
    if !args.is_empty() && !args.iter().any(|a| a == "--many") {
        eprintln!("make_txn_captures: --out and --id-pad go with --many\n{USAGE}");
        std::process::exit(2);
    }
    if let Some(i) = args.iter().position(|a| a == "--many") {
        let n: usize = args
            .get(i + 1)
            .and_then(|a| a.parse().ok())
            .expect("--many N: a number of transactions");
        let out = match args.iter().position(|a| a == "--out") {
            Some(j) => args.get(j + 1).expect("--out FILE").clone(),
            None => format!("{}/target/txn-many.pcap", env!("CARGO_MANIFEST_DIR")),
        };
        // `--id-pad N`: every transactional id ends in N `"` (long ids that HTML escapes to
        // six times their size, for the memory of --report).
        let pad = match args.iter().position(|a| a == "--id-pad") {
            Some(j) => {
                let k: usize = args
                    .get(j + 1)
                    .and_then(|a| a.parse().ok())
                    .expect("--id-pad N: a number of bytes");
                "\"".repeat(k)
            }
            None => String::new(),
        };
        txn_many(n, &out, &pad);
        return;
    }
    txn_v1_flow();
    txn_v2_flow();
    txn_timeout();
    txn_fenced();
    txn_hanging();
    txn_marker_retry();
    txn_stale_epoch();
    txn_lso_stuck();
    txn_admin_abort();
    txn_inter_broker();
}
