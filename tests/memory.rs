//! The memory budget (`--memory-limit`, `kafka_pcap::memory`): each kind of holding given up
//! at a small budget says so with a `memory_limit` anomaly, what comes before and after it
//! still decodes, and every charge is released by the end of the run. Also faults of the
//! environment that the memory issue lists beside it (a clock that goes back).

mod common;

use common::{
    request_with_corr, response_with_corr, Conversation, Endian, Packet, PcapWriter, PcapngWriter,
    Resolution,
};
use kafka_pcap::memory::Memory;
use kafka_pcap::Config;
use serde_json::Value;

/// A WriteTxnMarkers v0 request (request header v1, client id "m"): one COMMIT marker for
/// producer 1000 with `topics` topics of `name_len`-byte names and no partitions.
fn wtm_v0(corr: i32, topics: i32, name_len: usize) -> Vec<u8> {
    let mut f = vec![0; 4];
    f.extend_from_slice(&27i16.to_be_bytes());
    f.extend_from_slice(&0i16.to_be_bytes());
    f.extend_from_slice(&corr.to_be_bytes());
    f.extend_from_slice(&1i16.to_be_bytes());
    f.push(b'm');
    f.extend_from_slice(&1i32.to_be_bytes());
    f.extend_from_slice(&1000i64.to_be_bytes());
    f.extend_from_slice(&0i16.to_be_bytes());
    f.push(1);
    f.extend_from_slice(&topics.to_be_bytes());
    for _ in 0..topics {
        f.extend_from_slice(&(name_len as i16).to_be_bytes());
        f.extend(std::iter::repeat_n(b't', name_len));
        f.extend_from_slice(&0i32.to_be_bytes());
    }
    f.extend_from_slice(&5i32.to_be_bytes());
    let size = (f.len() - 4) as u32;
    f[..4].copy_from_slice(&size.to_be_bytes());
    f
}

/// The response to [`wtm_v0`] with correlation id `corr`: producer 1000, one topic "ttt"
/// without partitions.
fn wtm_v0_response(corr: i32) -> Vec<u8> {
    let mut resp = vec![0; 4];
    resp.extend_from_slice(&corr.to_be_bytes());
    resp.extend_from_slice(&1i32.to_be_bytes());
    resp.extend_from_slice(&1000i64.to_be_bytes());
    resp.extend_from_slice(&1i32.to_be_bytes());
    resp.extend_from_slice(&3i16.to_be_bytes());
    resp.extend_from_slice(b"ttt");
    resp.extend_from_slice(&0i32.to_be_bytes());
    let size = (resp.len() - 4) as u32;
    resp[..4].copy_from_slice(&size.to_be_bytes());
    resp
}

fn pcap(packets: &[Packet]) -> Vec<u8> {
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 101, 262_144);
    for (i, p) in packets.iter().enumerate() {
        w.packet(1_700_000_000, i as u32, &p.ip);
    }
    w.into_bytes()
}

fn config(limit: usize) -> Config {
    Config {
        memory: Memory::new(limit),
        ..Config::default()
    }
}

/// Every record must match the project's JSON Schema (the new anomaly kinds, the `memory`
/// layer, clamped timestamps).
fn schema_checked(records: Vec<Value>) -> Vec<Value> {
    static V: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let v = V.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/records.schema.json");
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap()
    });
    for r in &records {
        let errors: Vec<String> = v.iter_errors(r).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{r}: {errors:?}");
    }
    records
}

fn run_capture_with(bytes: &[u8], config: &Config) -> Vec<Value> {
    schema_checked(common::run_capture_with(bytes, config))
}

fn run_capture(bytes: &[u8]) -> Vec<Value> {
    schema_checked(common::run_capture(bytes))
}

fn kinds(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .map(|r| match r["event_type"].as_str() {
            Some("kafka") => format!(
                "{} {}",
                r["kafka"]["message"].as_str().unwrap(),
                r["kafka"]["correlation_id"]
            ),
            Some("anomaly") => r["anomaly"]["kind"].as_str().unwrap().to_string(),
            other => panic!("unexpected record {other:?}"),
        })
        .collect()
}

fn messages_of<'a>(records: &'a [Value], kind: &str) -> Vec<&'a str> {
    records
        .iter()
        .filter(|r| r["anomaly"]["kind"] == kind)
        .map(|r| r["anomaly"]["message"].as_str().unwrap())
        .collect()
}

/// A WriteTxnMarkers request larger than the budget is not decoded: a `memory_limit` anomaly
/// names it (API, correlation id, size), and the exchanges before and after it on the same
/// connection decode and pair; nothing stays charged.
#[test]
fn a_frame_larger_than_the_budget_is_passed_over_with_its_neighbours_decoded() {
    let big = wtm_v0(2, 8, 20_000);
    let conv = Conversation::new(false, 9092)
        .mss(1448)
        .client(&request_with_corr(1))
        .server(&response_with_corr(1))
        .client(&big)
        .server(&wtm_v0_response(2))
        .client(&request_with_corr(3))
        .server(&response_with_corr(3));
    let cfg = config(100_000);
    let records = run_capture_with(&pcap(&conv.packets()), &cfg);
    assert_eq!(
        kinds(&records),
        [
            "request 1",
            "response 1",
            "memory_limit",
            "response 2",
            "request 3",
            "response 3"
        ]
    );
    let m = messages_of(&records, "memory_limit")[0];
    let size = big.len() as u64 - 4;
    assert!(
        m.starts_with(&format!(
            "the WriteTxnMarkers request v0 (correlation_id 2) of {size} bytes at stream offset 41 \
             was not decoded: holding it would pass the memory budget"
        )) && m.contains("--memory-limit"),
        "{m}"
    );
    let a = &records[2]["anomaly"];
    assert_eq!(
        (a["api_key"].as_i64(), a["bytes"].as_u64()),
        (Some(27), Some(size))
    );
    // The response to the request not decoded still pairs with it (not decoded).
    assert_eq!(records[3]["kafka"]["request_not_decoded"], true);
    assert_eq!(cfg.memory.used(), 0, "every charge is released");
    // With the default budget the same frame decodes.
    let records = run_capture(&pcap(&conv.packets()));
    assert!(messages_of(&records, "memory_limit").is_empty());
    assert_eq!(
        records[2]["kafka"]["body"]["markers"][0]["topics"]
            .as_array()
            .map(Vec::len),
        Some(8)
    );
}

/// Requests that are never answered fill the budget; the oldest are forgotten to make room
/// (one `memory_limit` anomaly for the connection), and a response to a recent request still
/// pairs with it.
#[test]
fn waiting_requests_past_the_budget_forget_the_oldest() {
    let mut conv = Conversation::new(false, 9092).mss(1448);
    let mut reqs = Vec::new();
    for corr in 0..3000i32 {
        // ApiVersions v0 (header v1, null client id): 14 bytes.
        reqs.extend_from_slice(&10u32.to_be_bytes());
        reqs.extend_from_slice(&[0, 18, 0, 0]);
        reqs.extend_from_slice(&corr.to_be_bytes());
        reqs.extend_from_slice(&[0xff, 0xff]);
    }
    conv = conv
        .client(&reqs)
        .client(&wtm_v0(5000, 1, 3))
        .server(&wtm_v0_response(5000));
    let cfg = config(60_000);
    let records = run_capture_with(&pcap(&conv.packets()), &cfg);
    let m = messages_of(&records, "memory_limit");
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].starts_with("the oldest request waiting on this connection"),
        "{}",
        m[0]
    );
    let exchange: Vec<String> = kinds(&records)
        .into_iter()
        .filter(|k| !k.starts_with("memory"))
        .collect();
    assert_eq!(exchange, ["request 5000", "response 5000"]);
    let response = records
        .iter()
        .find(|r| r["kafka"]["message"] == "response")
        .unwrap();
    assert!(response["kafka"]["request_frame"].as_u64().is_some());
    assert_eq!(cfg.memory.used(), 0);
}

/// Bytes held ahead of a hole past the budget: the hole is given up (a `gap` that says the
/// memory limit, not "not captured"), the held bytes are delivered, and the request after
/// the hole decodes.
#[test]
fn out_of_order_bytes_past_the_budget_give_up_their_hole() {
    let conv = Conversation::new(false, 9092)
        .mss(1000)
        .client(&wtm_v0(1, 1, 5000))
        .client(&request_with_corr(2))
        .server(&response_with_corr(2));
    let mut packets = conv.packets();
    // Hold back the first data segment to the very end: its successors are held out of order.
    let first = packets.remove(3);
    packets.push(first);
    let cfg = config(4_000);
    let records = run_capture_with(&pcap(&packets), &cfg);
    let gaps = messages_of(&records, "gap");
    assert!(
        gaps.iter()
            .any(|g| g.contains("reached the memory limit, and are taken as lost")),
        "{gaps:?}"
    );
    assert!(messages_of(&records, "gap")
        .iter()
        .all(|g| !g.contains("were not captured")));
    assert!(!messages_of(&records, "memory_limit").is_empty());
    let k = kinds(&records);
    assert!(
        k.contains(&"request 2".to_string()) && k.contains(&"response 2".to_string()),
        "{k:?}"
    );
    assert_eq!(cfg.memory.used(), 0);
}

/// Many connections at a small budget: the least recently seen half is finished (one
/// `memory_limit` anomaly per eviction), and an exchange on a connection opened after them
/// decodes.
#[test]
fn connections_past_the_budget_are_finished_least_recent_first() {
    let mut packets = Vec::new();
    let mut conv = Conversation::new(false, 9092);
    // The first connection sends a second request at the very end, long after it was
    // finished for the budget.
    conv.client_port = 20_000;
    let first = conv
        .clone()
        .client(&request_with_corr(1))
        .client(&request_with_corr(2))
        .packets();
    packets.extend_from_slice(&first[..4]);
    for i in 1..400u16 {
        conv.client_port = 20_000 + i;
        // The handshake and one request each, never closed.
        let p = conv.clone().client(&request_with_corr(1)).packets();
        packets.extend_from_slice(&p[..4]);
    }
    conv.client_port = 30_000;
    let last = conv
        .client(&request_with_corr(7))
        .server(&response_with_corr(7));
    packets.extend(last.packets());
    packets.push(first[4].clone());
    let cfg = config(150_000);
    let records = run_capture_with(&pcap(&packets), &cfg);
    let m = messages_of(&records, "memory_limit");
    assert!(!m.is_empty());
    assert!(
        m[0].contains("least recently seen connections were finished"),
        "{}",
        m[0]
    );
    // The evicted connections' requests are reported as unanswered, with the reason.
    let evicted = records
        .iter()
        .filter(|r| r["anomaly"]["kind"] == "no_response")
        .filter(|r| {
            r["anomaly"]["message"]
                .as_str()
                .unwrap()
                .contains("the memory limit was reached")
        })
        .count();
    assert!(evicted > 0);
    let k = kinds(&records);
    let at = k
        .iter()
        .position(|x| x == "request 7")
        .expect("request 7 decoded");
    // Its response follows, paired (an eviction round's reports may come between them).
    assert!(k[at + 1..].contains(&"response 7".to_string()), "{k:?}");
    let request = records
        .iter()
        .find(|r| r["kafka"]["correlation_id"] == 7 && r["kafka"]["message"] == "request")
        .unwrap();
    let response = records
        .iter()
        .find(|r| r["kafka"]["correlation_id"] == 7 && r["kafka"]["message"] == "response")
        .unwrap();
    assert_eq!(response["kafka"]["request_frame"], request["frame"]);
    // The first connection's late request resumes its stream (0), as Wireshark numbers it.
    let late = records
        .iter()
        .find(|r| r["kafka"]["correlation_id"] == 2)
        .expect("the late request is decoded");
    assert_eq!(late["stream"], 0);
    // Rounds of eviction are reported at 1, 2, 4, 8, ...: far fewer than the rounds.
    let rounds = m
        .iter()
        .filter(|x| x.contains("least recently seen"))
        .count();
    assert!((1..=9).contains(&rounds), "{rounds}: {m:?}");
    assert_eq!(cfg.memory.used(), 0);
}

/// `--pair` at a small budget: a request record that cannot be held is written as never
/// answered at once (with a `memory_limit` anomaly); its response is written alone (a `kafka`
/// record); smaller
/// exchanges around it pair.
#[test]
fn held_records_past_the_budget_are_written_at_once() {
    let conv = Conversation::new(false, 9092)
        .mss(1448)
        .client(&request_with_corr(1))
        .server(&response_with_corr(1))
        .client(&wtm_v0(2, 4, 10_000))
        .server(&wtm_v0_response(2));
    let dir = std::env::temp_dir().join(format!("kafka-pcap-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("held.pcap");
    std::fs::write(&path, pcap(&conv.packets())).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kafka-pcap"))
        .args(["--pair", "--memory-limit", "100K"])
        .arg(&path)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(out.status.code(), Some(0));
    let lines = schema_checked(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    );
    let types: Vec<String> = lines
        .iter()
        .map(|r| {
            let t = r["event_type"].as_str().unwrap().to_string();
            match t.as_str() {
                "anomaly" => r["anomaly"]["kind"].as_str().unwrap().to_string(),
                "exchange" => format!(
                    "exchange {} {}",
                    r["exchange"]["request"].is_object(),
                    r["exchange"]["response"].is_object()
                ),
                _ => t,
            }
        })
        .collect();
    assert_eq!(
        types,
        [
            "exchange true true",
            "memory_limit",
            "exchange true false",
            "exchange false true"
        ],
        "{lines:?}"
    );
    assert_eq!(lines[3]["exchange"]["request_missing"], "not_held");
    assert_eq!(
        lines[3]["exchange"]["request_frame"],
        lines[2]["exchange"]["request_frame"]
    );
}

/// `--memory-limit` takes sizes with units and refuses nonsense with a message.
#[test]
fn memory_limit_option_parses_sizes() {
    let bin = env!("CARGO_BIN_EXE_kafka-pcap");
    let out = std::process::Command::new(bin)
        .args(["--memory-limit", "lots", "x.pcap"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a size"), "{err}");
}

/// A capture whose clock goes back between a request and its response: no negative
/// `latency_us` (in records, `--pair` and `--stats`), `clock_went_back` says why there is none.
#[test]
fn a_clock_that_goes_back_gives_no_negative_latency() {
    let conv = Conversation::new(false, 9092)
        .client(&request_with_corr(1))
        .server(&response_with_corr(1));
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 101, 262_144);
    for (i, p) in conv.packets().iter().enumerate() {
        // The response (packet 5) is stamped 0.8 s before the request (packet 4).
        let (secs, us) = if i >= 4 {
            (1_700_000_000, 200_000)
        } else {
            (1_700_000_001, i as u32)
        };
        w.packet(secs, us, &p.ip);
    }
    let bytes = w.into_bytes();
    let records = run_capture(&bytes);
    let resp = records
        .iter()
        .find(|r| r["kafka"]["message"] == "response")
        .expect("the response decodes");
    assert_eq!(resp["kafka"]["request_frame"], 4);
    assert!(resp["kafka"].get("latency_us").is_none());
    assert_eq!(resp["kafka"]["clock_went_back"], true);
    let mut sink = kafka_pcap::output::NdjsonWriter::new(Vec::new(), None);
    let stats = kafka_pcap::run(&bytes[..], &Config::default(), &mut sink).unwrap();
    assert!(
        stats.frames.latencies.values().all(|s| s.count == 0),
        "{:?}",
        stats.frames.latencies
    );
}

/// Timestamps a capture cannot mean: a pcap microsecond field of a second or more (carried
/// into the seconds) and a pcapng time past the year 9999 (written as the last second RFC 3339
/// can write). Each is reported once, and every `ts` stays RFC 3339.
#[test]
fn invalid_timestamps_are_reported_once_and_stay_rfc3339() {
    let conv = Conversation::new(false, 9092)
        .client(&request_with_corr(1))
        .server(&response_with_corr(1));
    let packets = conv.packets();
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 101, 262_144);
    for p in &packets {
        w.packet(1_700_000_000, 1_500_000, &p.ip);
    }
    let records = run_capture(w.bytes());
    let bad = messages_of(&records, "bad_timestamp");
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(
        bad[0].starts_with("frame 1's microsecond field is 1500000"),
        "{}",
        bad[0]
    );
    let request = records
        .iter()
        .find(|r| r["kafka"]["message"] == "request")
        .unwrap();
    assert_eq!(request["ts"], "2023-11-14T22:13:21.500000Z");

    let mut w = PcapngWriter::new();
    w.section(Endian::Little);
    let ifc = w.interface(101, 262_144, None);
    for p in &packets {
        w.packet(ifc, u64::MAX - 5, &p.ip, p.ip.len() as u32);
    }
    let records = run_capture(w.bytes());
    let bad = messages_of(&records, "bad_timestamp");
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].contains("is after the year 9999"), "{}", bad[0]);
    for r in &records {
        assert_eq!(r["ts"], "9999-12-31T23:59:59.999999Z", "{r}");
    }
    // The exchange still pairs, with its latency (the raw times are kept).
    let response = records
        .iter()
        .find(|r| r["kafka"]["message"] == "response")
        .unwrap();
    assert_eq!(response["kafka"]["request_frame"], 4);
}

/// One packet stamped 10 hours ahead (a flipped bit) amid open connections does not make them
/// idle: no connection splits, every exchange still pairs. A real jump (many packets) moves
/// the clock.
#[test]
fn one_packet_far_ahead_does_not_expire_every_connection() {
    let mut conv = Conversation::new(false, 9092);
    let mut convs = Vec::new();
    for i in 0..5u16 {
        conv.client_port = 20_000 + i;
        convs.push(
            conv.clone()
                .client(&request_with_corr(1))
                .server(&response_with_corr(1))
                .packets(),
        );
    }
    // Interleave: every connection's handshake and request, then every response.
    let mut order: Vec<(usize, usize)> = Vec::new();
    for c in 0..convs.len() {
        for i in 0..4 {
            order.push((c, i));
        }
    }
    for (c, p) in convs.iter().enumerate() {
        for i in 4..p.len() {
            order.push((c, i));
        }
    }
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 101, 262_144);
    for (n, &(c, i)) in order.iter().enumerate() {
        // The last request (all five connections open) is stamped 10 hours ahead.
        let secs = 1_700_000_000 + if n == 19 { 36_000 } else { 0 };
        w.packet(secs, n as u32, &convs[c][i].ip);
    }
    let records = run_capture(w.bytes());
    let k = kinds(&records);
    let responses = k.iter().filter(|x| *x == "response 1").count();
    assert_eq!(responses, 5, "{k:?}");
    assert!(messages_of(&records, "response_without_request").is_empty());
    assert!(messages_of(&records, "no_response").is_empty(), "{k:?}");
    for r in records
        .iter()
        .filter(|r| r["kafka"]["message"] == "response")
    {
        assert!(
            r["kafka"]["request_frame"].is_u64() && r["kafka"].get("inferred").is_none(),
            "{r}"
        );
    }
    let streams: std::collections::BTreeSet<u64> = records
        .iter()
        .filter_map(|r| r["stream"].as_u64())
        .collect();
    assert_eq!(streams.len(), 5, "{streams:?}");
}

/// A pcapng section that describes more interfaces than are kept ([`MAX_INTERFACES`]): one
/// anomaly says so; packets on the interfaces kept still decode.
#[test]
fn a_section_with_too_many_interfaces_keeps_the_first() {
    use kafka_pcap::capture::MAX_INTERFACES;
    let conv = Conversation::new(false, 9092)
        .client(&request_with_corr(1))
        .server(&response_with_corr(1));
    let mut w = PcapngWriter::new();
    w.section(Endian::Little);
    let first = w.interface(101, 262_144, None);
    for _ in 0..MAX_INTERFACES + 10 {
        w.interface(101, 262_144, None);
    }
    for (i, p) in conv.packets().iter().enumerate() {
        w.packet(first, i as u64, &p.ip, p.ip.len() as u32);
    }
    w.packet(MAX_INTERFACES as u32 + 5, 99, &conv.packets()[0].ip, 60);
    let records = run_capture(w.bytes());
    let m = messages_of(&records, "unknown_interface");
    assert_eq!(m.len(), 2, "{m:?}");
    assert!(
        m[0].contains("describes more than 65536 interfaces"),
        "{}",
        m[0]
    );
    assert!(m[1].contains("names interface 65541"), "{}", m[1]);
    assert_eq!(
        kinds(&records).iter().filter(|k| k.ends_with(" 1")).count(),
        2
    );
}

/// A walked frame's header is charged by the bytes gathered, not by its vector's capacity,
/// which depends on how the segments came: a Produce request with a client id of the most
/// bytes a client id has (32,767) decodes under a 64 KiB budget whatever the segment size
/// (with the capacity charged, its 32,778-byte header took 65,536 bytes of capacity when it
/// came 11 bytes a segment, and was refused; a hostile review).
#[test]
fn a_walked_header_is_charged_alike_however_it_is_segmented() {
    use kafka_protocol::messages::{ApiKey, ProduceRequest, ProduceResponse};
    let client = "x".repeat(32_767);
    let body = ProduceRequest::default().with_acks(1).with_timeout_ms(100);
    let request = common::frames::req(ApiKey::Produce, 9, 1, &client, &body);
    let response = common::frames::resp(ApiKey::Produce, 9, 1, &ProduceResponse::default());
    for mss in [11, 64, 1000, 1460] {
        let packets = Conversation::new(false, 9092)
            .mss(mss)
            .client(&request)
            .server(&response)
            .packets();
        let config = Config {
            all_apis: true,
            ..config(64 << 10)
        };
        let out = common::run_capture_with(&pcap(&packets), &config);
        let kinds: Vec<String> = out
            .iter()
            .map(|r| match r["event_type"].as_str() {
                Some("kafka") => format!("{} {}", r["kafka"]["api_name"], r["kafka"]["message"]),
                _ => r["anomaly"]["kind"].to_string(),
            })
            .collect();
        assert_eq!(
            kinds,
            ["\"Produce\" \"request\"", "\"Produce\" \"response\""],
            "segments of {mss} bytes"
        );
        assert_eq!(
            out[0]["kafka"]["client_id"].as_str().map(str::len),
            Some(32_767)
        );
    }
}

/// A walked frame's header is read alike whether it is whole in the frame's first segment
/// (read from a copy of its first 256 bytes on the stack) or not (gathered as segments come):
/// Produce requests whose client ids put the header's end on both sides of those 256 bytes,
/// one segment per frame against segments of 7 and 13 bytes, give the same records.
#[test]
fn a_walked_header_reads_alike_from_one_segment_and_from_many() {
    use kafka_protocol::messages::{ApiKey, ProduceRequest, ProduceResponse, TransactionalId};
    use kafka_protocol::protocol::StrBytes;
    let strip = |r: &serde_json::Value| {
        let mut r = r.clone();
        let o = r.as_object_mut().unwrap();
        for k in ["frame", "ts"] {
            o.remove(k);
        }
        if let Some(k) = o.get_mut("kafka").and_then(|k| k.as_object_mut()) {
            k.remove("request_frame");
            k.remove("latency_us");
        }
        r
    };
    for len in [0, 5, 200, 240, 241, 242, 243, 244, 245, 246, 300] {
        let client = "c".repeat(len);
        let body = ProduceRequest::default()
            .with_transactional_id(Some(TransactionalId(StrBytes::from_static_str("txn-a"))))
            .with_acks(-1)
            .with_timeout_ms(1500);
        let request = common::frames::req(ApiKey::Produce, 9, 7, &client, &body);
        let response = common::frames::resp(ApiKey::Produce, 9, 7, &ProduceResponse::default());
        let config = Config {
            all_apis: true,
            ..config(40 << 20)
        };
        let mut seen = Vec::new();
        for mss in [1460, 7, 13] {
            let packets = Conversation::new(false, 9092)
                .mss(mss)
                .client(&request)
                .server(&response)
                .packets();
            let out = common::run_capture_with(&pcap(&packets), &config);
            assert_eq!(
                out.len(),
                2,
                "client id of {len}, segments of {mss}: {out:?}"
            );
            assert_eq!(
                out[0]["kafka"]["client_id"].as_str().map(str::len),
                Some(len)
            );
            assert_eq!(out[0]["kafka"]["body"]["transactional_id"], "txn-a");
            assert_eq!(out[0]["kafka"]["body"]["timeout_ms"], 1500);
            seen.push(out.iter().map(strip).collect::<Vec<_>>());
        }
        assert_eq!(seen[0], seen[1], "client id of {len}");
        assert_eq!(seen[0], seen[2], "client id of {len}");
    }
}

/// From a hostile review: a request dated an hour before the packets around it (a clock
/// stepped back, a merge) gave its response an hour's latency, unsaid: a `bad_timestamp` says
/// so, at the packet that contradicted it.
#[test]
fn a_packet_dated_far_behind_the_others_is_said() {
    let conv = Conversation::new(false, 9092)
        .client(&request_with_corr(1))
        .server(&response_with_corr(1));
    // The request (packet 4) is stamped an hour before the rest.
    let records = stamped(&conv, |i| i == 3);
    let bad: Vec<&Value> = records
        .iter()
        .filter(|r| r["anomaly"]["kind"] == "bad_timestamp")
        .collect();
    assert_eq!(bad.len(), 1, "{records:#?}");
    assert_eq!(bad[0]["frame"], 5);
    assert_eq!(
        bad[0]["anomaly"]["message"],
        "frame 4 is dated 2023-11-14T21:13:20.003000Z: it is 1.00 h behind the packets before \
         and after it, a clock that jumped or a damaged time; latencies and transaction \
         durations measured to or from it are off by as much (idle connections are not timed \
         by it)"
    );
}

/// From a second hostile review: packets of two clocks an hour apart, interleaved (a pcapng
/// of two interfaces, merged captures), were eight `bad_timestamp` warnings that latencies
/// were off where none were: the first run is reported, the second as far off says it is a
/// second clock, and no more are.
#[test]
fn two_clocks_interleaved_are_said_once() {
    let conv = Conversation::new(false, 9092)
        .client(&request_with_corr(1))
        .server(&response_with_corr(1))
        .client(&request_with_corr(2))
        .server(&response_with_corr(2))
        .client(&request_with_corr(3))
        .server(&response_with_corr(3));
    assert!(conv.packets().len() >= 8);
    let records = stamped(&conv, |i| i % 2 == 1);
    let bad: Vec<&str> = records
        .iter()
        .filter(|r| r["anomaly"]["kind"] == "bad_timestamp")
        .map(|r| r["anomaly"]["message"].as_str().unwrap())
        .collect();
    assert_eq!(bad.len(), 2, "{bad:#?}");
    assert!(bad[0].starts_with("frame 2 is dated"), "{}", bad[0]);
    assert!(
        bad[1].starts_with("frame 4 is dated 2023-11-14T21:13:20.003000Z, 1.00 h behind the packets around it, as the packets of an earlier bad_timestamp were: the capture interleaves packets of two clocks"),
        "{}",
        bad[1]
    );
}

/// The records of `conv` captured with its packets 1 ms apart, those `behind` names (by
/// index) stamped an hour before the rest.
fn stamped(conv: &Conversation, behind: impl Fn(usize) -> bool) -> Vec<Value> {
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 101, 262_144);
    for (i, p) in conv.packets().iter().enumerate() {
        let secs = if behind(i) {
            1_700_000_000 - 3_600
        } else {
            1_700_000_000
        };
        w.packet(secs, 1_000 * i as u32, &p.ip);
    }
    run_capture(&w.into_bytes())
}
