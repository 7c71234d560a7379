//! Every capture format and link type reaches the Kafka decoder.
//!
//! The files are written by `tests/common` from the format specifications (not by kafka-pcap),
//! carrying the seed's smallest WriteTxnMarkers v1 exchange on port 9092. Each test checks the
//! complete output: exactly the request and the response, with their frame numbers,
//! timestamps (6 or 9 fractional digits), stream, endpoints, sizes and bodies.

mod common;

use common::*;
use serde_json::{json, Value};

/// 2023-11-14T22:13:20Z.
const SECS: u32 = 1_700_000_000;
/// Frame `n` of a microsecond capture is at `SECS` + (`FRAC_US` + n) microseconds.
const FRAC_US: u32 = 123_450;
/// Frame `n` of a nanosecond capture is at `SECS` + (`FRAC_NS` + n) nanoseconds.
const FRAC_NS: u32 = 123_456_780;

/// The fraction of frame `frame`'s timestamp, in units of `res`.
fn frac(res: Resolution, frame: u64) -> u32 {
    match res {
        Resolution::Micro => FRAC_US + frame as u32,
        Resolution::Nano => FRAC_NS + frame as u32,
    }
}

/// The `ts` kafka-pcap must print for frame `frame` of a capture of resolution `res`.
fn ts(res: Resolution, frame: u64) -> String {
    match res {
        Resolution::Micro => format!("2023-11-14T22:13:20.{:06}Z", frac(res, frame)),
        Resolution::Nano => format!("2023-11-14T22:13:20.{:09}Z", frac(res, frame)),
    }
}

/// The seed exchange on port 9092 (8 packets: handshake, request at frame 4, response at
/// frame 5, FIN/ACKs).
fn seed_conversation(ipv6: bool) -> Conversation {
    Conversation::new(ipv6, 9092)
        .client(&seed_request())
        .server(&seed_response())
}

fn seed_packets(ipv6: bool) -> Vec<Packet> {
    let p = seed_conversation(ipv6).packets();
    assert_eq!(p.len(), 8);
    assert_eq!(p[3].payload, seed_request());
    assert_eq!(p[4].payload, seed_response());
    p
}

/// A classic pcap of `packets` on `link`, frame `n` timestamped as [`ts`] says.
fn classic(link: Link, endian: Endian, res: Resolution, packets: &[Packet]) -> Vec<u8> {
    let mut w = PcapWriter::new(endian, res, u32::from(link.linktype()), 262_144);
    for (i, p) in packets.iter().enumerate() {
        w.packet(SECS, frac(res, i as u64 + 1), &link.wrap(&p.ip));
    }
    w.into_bytes()
}

/// What the two records of the seed exchange must say.
struct Expect {
    ipv6: bool,
    request_frame: u64,
    response_frame: u64,
    request_ts: String,
    response_ts: String,
    latency_us: i64,
}

impl Expect {
    /// The plain conversation of [`seed_packets`] in one file of resolution `res`.
    fn plain(ipv6: bool, res: Resolution) -> Self {
        Expect {
            ipv6,
            request_frame: 4,
            response_frame: 5,
            request_ts: ts(res, 4),
            response_ts: ts(res, 5),
            latency_us: match res {
                Resolution::Micro => 1,
                Resolution::Nano => 0,
            },
        }
    }
}

fn request_body() -> Value {
    json!({"markers":[{"producer_id":0,"producer_epoch":0,"transaction_result":"ABORT",
        "topics":[{"name":"","partition_indexes":[0]}],"coordinator_epoch":0}]})
}

fn response_body() -> Value {
    json!({"markers":[{"producer_id":0,"topics":[{"name":"",
        "partitions":[{"partition_index":0,"error_code":0,"error":"NONE"}]}]}]})
}

/// The Community ID v1 of the seed's connection (127.0.0.1 or ::1, ports 40000 and 9092), as
/// Python's hashlib and base64 computed it from the specification.
fn community_id(ipv6: bool) -> &'static str {
    if ipv6 {
        "1:chQWThT+atS+BHb1fM1a1LCs+4o="
    } else {
        "1:coc1A4PdMYhIcvGhao5+xNBWRuI="
    }
}

fn dump(out: &[Value]) -> String {
    out.iter().map(|v| format!("  {v}\n")).collect()
}

/// Checks one decoded seed request record.
fn check_request(case: &str, r: &Value, e: &Expect) {
    let ip = if e.ipv6 { "::1" } else { "127.0.0.1" };
    let want = json!({
        "ts": e.request_ts,
        "frame": e.request_frame,
        "stream": 0,
        "src_ip": ip, "src_port": CLIENT_PORT,
        "dest_ip": ip, "dest_port": 9092,
        "community_id": community_id(e.ipv6),
        "event_type": "kafka",
        "kafka": {
            "message": "request", "api_key": 27, "api_name": "WriteTxnMarkers",
            "api_version": 1, "header_version": 2, "correlation_id": 0, "client_id": "",
            "size": 37, "body": request_body()
        }
    });
    assert_eq!(r, &want, "{case}: request record");
}

/// Checks one decoded seed response record.
fn check_response(case: &str, r: &Value, e: &Expect) {
    let ip = if e.ipv6 { "::1" } else { "127.0.0.1" };
    let want = json!({
        "ts": e.response_ts,
        "frame": e.response_frame,
        "stream": 0,
        "src_ip": ip, "src_port": 9092,
        "dest_ip": ip, "dest_port": CLIENT_PORT,
        "community_id": community_id(e.ipv6),
        "event_type": "kafka",
        "kafka": {
            "message": "response", "api_key": 27, "api_name": "WriteTxnMarkers",
            "api_version": 1, "header_version": 1, "correlation_id": 0,
            "size": 27, "request_frame": e.request_frame, "latency_us": e.latency_us,
            "body": response_body()
        }
    });
    assert_eq!(r, &want, "{case}: response record");
}

/// The output is exactly the seed request and its response, as `e` says.
fn check_seed_pair(case: &str, out: &[Value], e: &Expect) {
    assert_eq!(
        out.len(),
        2,
        "{case}: expected 2 records, got:\n{}",
        dump(out)
    );
    check_request(case, &out[0], e);
    check_response(case, &out[1], e);
    assert_eq!(
        out[1]["kafka"]["request_frame"], out[0]["frame"],
        "{case}: the response names its request's frame"
    );
}

/// Runs one link type (IPv4 or IPv6) in a little-endian microsecond pcap.
fn check_link(link: Link, ipv6: bool) {
    let case = format!("{link:?} ipv6={ipv6}");
    let bytes = classic(link, Endian::Little, Resolution::Micro, &seed_packets(ipv6));
    check_seed_pair(
        &case,
        &run_capture(&bytes),
        &Expect::plain(ipv6, Resolution::Micro),
    );
}

// ---------------------------------------------------------------------------------------------
// Classic pcap: byte orders and resolutions
// ---------------------------------------------------------------------------------------------

#[test]
fn classic_pcap_le_and_be_usec_and_nsec() {
    for endian in [Endian::Little, Endian::Big] {
        for res in [Resolution::Micro, Resolution::Nano] {
            let case = format!("{endian:?} {res:?}");
            let bytes = classic(Link::Ethernet, endian, res, &seed_packets(false));
            let magic: [u8; 4] = match (endian, res) {
                (Endian::Little, Resolution::Micro) => [0xd4, 0xc3, 0xb2, 0xa1],
                (Endian::Big, Resolution::Micro) => [0xa1, 0xb2, 0xc3, 0xd4],
                (Endian::Little, Resolution::Nano) => [0x4d, 0x3c, 0xb2, 0xa1],
                (Endian::Big, Resolution::Nano) => [0xa1, 0xb2, 0x3c, 0x4d],
            };
            assert_eq!(bytes[..4], magic, "{case}: writer magic");
            let out = run_capture(&bytes);
            check_seed_pair(&case, &out, &Expect::plain(false, res));
        }
    }
}

#[test]
fn timestamps_are_exact_strings() {
    let us = run_capture(&classic(
        Link::Ethernet,
        Endian::Big,
        Resolution::Micro,
        &seed_packets(false),
    ));
    assert_eq!(us.len(), 2, "{}", dump(&us));
    assert_eq!(us[0]["ts"], "2023-11-14T22:13:20.123454Z");
    assert_eq!(us[1]["ts"], "2023-11-14T22:13:20.123455Z");
    let ns = run_capture(&classic(
        Link::Ethernet,
        Endian::Little,
        Resolution::Nano,
        &seed_packets(false),
    ));
    assert_eq!(ns.len(), 2, "{}", dump(&ns));
    assert_eq!(ns[0]["ts"], "2023-11-14T22:13:20.123456784Z");
    assert_eq!(ns[1]["ts"], "2023-11-14T22:13:20.123456785Z");

    // A whole-second-plus-one-microsecond timestamp keeps its leading zeros.
    let pk = seed_packets(false);
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 65_535);
    for p in &pk {
        w.packet(SECS, 1, &ethernet(&p.ip));
    }
    let out = run_capture(w.bytes());
    assert_eq!(out.len(), 2, "{}", dump(&out));
    assert_eq!(out[0]["ts"], "2023-11-14T22:13:20.000001Z");
    assert_eq!(out[1]["kafka"]["latency_us"], 0);
}

// ---------------------------------------------------------------------------------------------
// Classic pcap: link types
// ---------------------------------------------------------------------------------------------

#[test]
fn link_ethernet_vlan_qinq() {
    for link in [Link::Ethernet, Link::Vlan, Link::QinQ] {
        for ipv6 in [false, true] {
            check_link(link, ipv6);
        }
    }
}

#[test]
fn link_linux_sll_and_sll2() {
    assert_eq!(sll(&seed_packets(false)[0].ip)[14..16], [0x08, 0x00]);
    assert_eq!(sll2(&seed_packets(true)[0].ip)[0..2], [0x86, 0xdd]);
    for link in [Link::Sll, Link::Sll2] {
        for ipv6 in [false, true] {
            check_link(link, ipv6);
        }
    }
}

#[test]
fn link_bsd_null_both_host_byte_orders() {
    check_link(Link::NullLe(AF_INET), false);
    check_link(Link::NullBe(AF_INET), false);
    for family in AF_INET6_ALL {
        check_link(Link::NullLe(family), true);
        check_link(Link::NullBe(family), true);
    }
}

#[test]
fn link_openbsd_loop() {
    check_link(Link::Loop(AF_INET), false);
    for family in AF_INET6_ALL {
        check_link(Link::Loop(family), true);
    }
}

#[test]
fn link_raw_ip() {
    check_link(Link::Raw, false);
    check_link(Link::Raw, true);
    check_link(Link::Ipv4, false);
    check_link(Link::Ipv6, true);
}

// ---------------------------------------------------------------------------------------------
// pcapng
// ---------------------------------------------------------------------------------------------

#[test]
fn pcapng_one_little_endian_section() {
    // No if_tsresol: microseconds by default.
    let mut w = PcapngWriter::new();
    w.section(Endian::Little);
    let eth = w.interface(1, 262_144, None);
    for (i, p) in seed_packets(false).iter().enumerate() {
        let frame = i as u64 + 1;
        let f = u64::from(frac(Resolution::Micro, frame));
        w.packet_at(eth, u64::from(SECS), f, &ethernet(&p.ip));
    }
    let bytes = w.into_bytes();
    assert_eq!(
        bytes[8..12],
        [0x4d, 0x3c, 0x2b, 0x1a],
        "LE byte-order magic"
    );
    check_seed_pair(
        "pcapng LE",
        &run_capture(&bytes),
        &Expect::plain(false, Resolution::Micro),
    );
}

#[test]
fn pcapng_one_big_endian_section() {
    for (ipv6, link) in [(true, Link::Ipv6), (false, Link::Vlan)] {
        let mut w = PcapngWriter::new();
        w.section(Endian::Big);
        let id = w.interface(link.linktype(), 65_535, Some(9));
        for (i, p) in seed_packets(ipv6).iter().enumerate() {
            let f = u64::from(frac(Resolution::Nano, i as u64 + 1));
            w.packet_at(id, u64::from(SECS), f, &link.wrap(&p.ip));
        }
        let bytes = w.into_bytes();
        assert_eq!(
            bytes[8..12],
            [0x1a, 0x2b, 0x3c, 0x4d],
            "BE byte-order magic"
        );
        check_seed_pair(
            &format!("pcapng BE {link:?}"),
            &run_capture(&bytes),
            &Expect::plain(ipv6, Resolution::Nano),
        );
    }
}

#[test]
fn pcapng_two_sections_of_different_byte_order() {
    // The request is in section 1 on its interface 0 (Ethernet, microseconds); the response in
    // section 2, whose interface 0 is a different one (raw IP, nanoseconds): interfaces are
    // numbered again in each section.
    for (first, second) in [(Endian::Little, Endian::Big), (Endian::Big, Endian::Little)] {
        let case = format!("sections {first:?} then {second:?}");
        let pk = seed_packets(false);
        let mut w = PcapngWriter::new();
        w.section(first);
        let eth = w.interface(1, 262_144, Some(6));
        for (i, p) in pk[..4].iter().enumerate() {
            let f = u64::from(frac(Resolution::Micro, i as u64 + 1));
            w.packet_at(eth, u64::from(SECS), f, &ethernet(&p.ip));
        }
        w.section(second);
        let raw = w.interface(101, 262_144, Some(9));
        assert_eq!(raw, 0);
        for (i, p) in pk[4..].iter().enumerate() {
            let f = u64::from(frac(Resolution::Nano, i as u64 + 5));
            w.packet_at(raw, u64::from(SECS), f, &p.ip);
        }
        let out = run_capture(w.bytes());
        check_seed_pair(
            &case,
            &out,
            &Expect {
                ipv6: false,
                request_frame: 4,
                response_frame: 5,
                request_ts: "2023-11-14T22:13:20.123454Z".into(),
                response_ts: "2023-11-14T22:13:20.123456785Z".into(),
                latency_us: 2,
            },
        );
    }
}

#[test]
fn pcapng_two_interfaces_with_different_link_types_and_resolutions() {
    // Client packets on interface 0 (Ethernet, if_tsresol 6), server packets on interface 1
    // (Linux SLL2, if_tsresol 9), in one section.
    for endian in [Endian::Little, Endian::Big] {
        for ipv6 in [false, true] {
            let case = format!("{endian:?} ipv6={ipv6}");
            let mut w = PcapngWriter::new();
            w.section(endian);
            let eth = w.interface(1, 262_144, Some(6));
            let cooked = w.interface(276, 262_144, Some(9));
            assert_eq!((eth, cooked), (0, 1));
            for (i, p) in seed_packets(ipv6).iter().enumerate() {
                let frame = i as u64 + 1;
                match p.dir {
                    Dir::ToServer => {
                        let f = u64::from(frac(Resolution::Micro, frame));
                        w.packet_at(eth, u64::from(SECS), f, &ethernet(&p.ip))
                    }
                    Dir::ToClient => {
                        let f = u64::from(frac(Resolution::Nano, frame));
                        w.packet_at(cooked, u64::from(SECS), f, &sll2(&p.ip))
                    }
                };
            }
            let out = run_capture(w.bytes());
            check_seed_pair(
                &case,
                &out,
                &Expect {
                    ipv6,
                    request_frame: 4,
                    response_frame: 5,
                    request_ts: "2023-11-14T22:13:20.123454Z".into(),
                    response_ts: "2023-11-14T22:13:20.123456785Z".into(),
                    // 123454 us to 123456785 ns: 2785 ns.
                    latency_us: 2,
                },
            );
        }
    }
}

/// `if_tsresol` with its high bit set is a negative power of two: 0x94 is 2^-20 seconds.
#[test]
fn pcapng_binary_if_tsresol() {
    let mut w = PcapngWriter::new();
    w.section(Endian::Little);
    let id = w.interface(1, 65_535, Some(0x94));
    for (i, p) in seed_packets(false).iter().enumerate() {
        w.packet_at(
            id,
            u64::from(SECS),
            (1 << 19) + i as u64 + 1,
            &ethernet(&p.ip),
        );
    }
    let out = run_capture(w.bytes());
    check_seed_pair(
        "if_tsresol 2^-20",
        &out,
        &Expect {
            ipv6: false,
            request_frame: 4,
            response_frame: 5,
            // (2^19 + 4) / 2^20 s and (2^19 + 5) / 2^20 s, truncated to nanoseconds.
            request_ts: "2023-11-14T22:13:20.500003814Z".into(),
            response_ts: "2023-11-14T22:13:20.500004768Z".into(),
            latency_us: 0,
        },
    );
}

// ---------------------------------------------------------------------------------------------
// Capture-level damage and oddities
// ---------------------------------------------------------------------------------------------

fn check_capture_anomaly(case: &str, r: &Value, kind: &str, frame: u64) {
    assert_eq!(r["event_type"], "anomaly", "{case}: {r}");
    assert_eq!(r["anomaly"]["kind"], kind, "{case}: {r}");
    assert_eq!(r["anomaly"]["layer"], "capture", "{case}: {r}");
    assert_eq!(r["frame"], frame, "{case}: {r}");
    for absent in [
        "stream",
        "src_ip",
        "src_port",
        "dest_ip",
        "dest_port",
        "kafka",
    ] {
        assert!(r.get(absent).is_none(), "{case}: `{absent}` in {r}");
    }
}

#[test]
fn unsupported_link_type_is_reported_once_and_reading_goes_on() {
    // Classic pcap: every packet on link type 147; one anomaly, at the first.
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 147, 65_535);
    for p in seed_packets(false) {
        w.packet(SECS, 7, &ethernet(&p.ip));
    }
    let out = run_capture(w.bytes());
    assert_eq!(out.len(), 1, "{}", dump(&out));
    check_capture_anomaly("pcap 147", &out[0], "unsupported_link_type", 1);
    assert_eq!(out[0]["ts"], "2023-11-14T22:13:20.000007Z");
    let msg = out[0]["anomaly"]["message"].as_str().unwrap();
    assert!(msg.contains("147"), "{msg}");

    // pcapng: interface 0 is link type 147 (a packet on it before and after every packet of
    // the conversation), interface 1 Ethernet with the seed exchange.
    let mut w = PcapngWriter::new();
    w.section(Endian::Little);
    let odd = w.interface(147, 65_535, None);
    let eth = w.interface(1, 65_535, None);
    let mut frame = 0u64;
    let mut next = || {
        frame += 1;
        u64::from(frac(Resolution::Micro, frame))
    };
    w.packet_at(odd, u64::from(SECS), next(), &[0xde, 0xad, 0xbe, 0xef]);
    for p in seed_packets(false) {
        w.packet_at(eth, u64::from(SECS), next(), &ethernet(&p.ip));
        w.packet_at(odd, u64::from(SECS), next(), &ethernet(&p.ip));
    }
    let out = run_capture(w.bytes());
    assert_eq!(out.len(), 3, "{}", dump(&out));
    check_capture_anomaly("pcapng 147", &out[0], "unsupported_link_type", 1);
    // Conversation packet k (0-based) is frame 2 + 2k: the request (k = 3) frame 8, the
    // response (k = 4) frame 10.
    let e = Expect {
        ipv6: false,
        request_frame: 8,
        response_frame: 10,
        request_ts: ts(Resolution::Micro, 8),
        response_ts: ts(Resolution::Micro, 10),
        latency_us: 2,
    };
    check_request("pcapng 147", &out[1], &e);
    check_response("pcapng 147", &out[2], &e);
}

#[test]
fn truncated_last_record_is_reported_after_earlier_records() {
    let pk = seed_packets(false);
    let whole = classic(Link::Ethernet, Endian::Little, Resolution::Micro, &pk);
    // The last record is the final ACK: cut it inside its data, and inside its header.
    let last_len = 16 + ethernet(&pk[7].ip).len();
    // Cut inside its data, the bytes there are read as frame 8 cut short (an ACK: nothing
    // to show), and the anomaly names it; cut inside its header, it is not a packet.
    for (what, keep, frame) in [("data", last_len - 10, 8), ("header", 9, 7)] {
        let case = format!("pcap cut inside the last record's {what}");
        let cut = &whole[..whole.len() - last_len + keep];
        let out = run_capture(cut);
        assert_eq!(out.len(), 3, "{case}:\n{}", dump(&out));
        let e = Expect::plain(false, Resolution::Micro);
        check_request(&case, &out[0], &e);
        check_response(&case, &out[1], &e);
        check_capture_anomaly(&case, &out[2], "truncated_capture", frame);
    }

    // The same in pcapng: the last Enhanced Packet Block is cut short.
    let mut w = PcapngWriter::new();
    w.section(Endian::Big);
    let eth = w.interface(1, 65_535, None);
    for (i, p) in pk.iter().enumerate() {
        let f = u64::from(frac(Resolution::Micro, i as u64 + 1));
        w.packet_at(eth, u64::from(SECS), f, &ethernet(&p.ip));
    }
    let bytes = w.into_bytes();
    let out = run_capture(&bytes[..bytes.len() - 20]);
    assert_eq!(out.len(), 3, "pcapng:\n{}", dump(&out));
    let e = Expect::plain(false, Resolution::Micro);
    check_request("pcapng cut", &out[0], &e);
    check_response("pcapng cut", &out[1], &e);
    check_capture_anomaly("pcapng cut", &out[2], "truncated_capture", 8);
}

/// A record larger than the 1 MiB read buffer is read whole (the buffer grows for it), and
/// the records after it are read as usual; a record claiming more than 64 MiB with nothing
/// plausible after it ends the reading with `record_too_large` after everything before it.
#[test]
fn records_larger_than_the_read_buffer() {
    let pk = seed_packets(false);
    for endian in [Endian::Little, Endian::Big] {
        let mut w = PcapWriter::new(endian, Resolution::Micro, 1, 262_144);
        let mut frame = 0u64;
        for (i, p) in pk.iter().enumerate() {
            if i == 3 {
                // Before the request: 3 MiB of an Ethernet frame that is not IP (EtherType
                // 0x88b5, local experimental).
                let mut big = vec![0u8; 3 << 20];
                big[12..14].copy_from_slice(&[0x88, 0xb5]);
                frame += 1;
                w.record(SECS, frac(Resolution::Micro, frame), &big, big.len() as u32);
            }
            frame += 1;
            w.packet(SECS, frac(Resolution::Micro, frame), &ethernet(&p.ip));
        }
        let out = run_capture(w.bytes());
        let case = format!("{endian:?}");
        assert_eq!(out.len(), 2, "{case}:\n{}", dump(&out));
        assert_eq!(
            (out[0]["frame"].as_u64(), out[1]["frame"].as_u64()),
            (Some(5), Some(6))
        );
        assert_eq!(out[0]["kafka"]["body"], request_body(), "{case}");
        assert_eq!(out[1]["kafka"]["body"], response_body(), "{case}");

        // The same file, then a record header claiming 64 MiB + 1 bytes.
        let mut bytes = w.into_bytes();
        let claim = (64u32 << 20) + 1;
        for v in [SECS, 0, claim, claim] {
            bytes.extend_from_slice(&match endian {
                Endian::Little => v.to_le_bytes(),
                Endian::Big => v.to_be_bytes(),
            });
        }
        bytes.extend_from_slice(&[0; 100]);
        let out = run_capture(&bytes);
        assert_eq!(out.len(), 3, "{case}:\n{}", dump(&out));
        check_capture_anomaly(&case, &out[2], "record_too_large", 9);
    }
}

/// A record header damaged to declare more than 64 MiB (a flipped length), or more bytes
/// captured than the snapshot length and its length on the wire, is passed over to the next
/// plausible record (a header whose time, lengths and successor read as a
/// capture's): the records after it are read, the same streamed, read ahead or in memory, and
/// a `record_too_large` problem says how many bytes were passed over.
#[test]
fn a_damaged_record_header_is_passed_over_to_the_next_plausible_record() {
    let pk = seed_packets(false);
    // Lengths flipped past 64 MiB; and a captured length of 1 MiB, more than the snapshot
    // length and than its length on the wire (37 bytes), which no capture writes.
    let damages: [(&[usize], u32, &str); 2] = [
        (&[8, 12], 0xffff_fff0, "a capture record is larger than 67108864 bytes (it declares 4294967280 bytes)"),
        (&[8], 1 << 20, "a capture record declares more bytes captured than its snapshot length and its length on the wire (it declares 1048576 bytes)"),
    ];
    for (endian, (fields, v, what)) in [Endian::Little, Endian::Big]
        .into_iter()
        .flat_map(|e| damages.iter().map(move |d| (e, *d)))
    {
        for res in [Resolution::Micro, Resolution::Nano] {
            let mut w = PcapWriter::new(endian, res, 1, 262_144);
            for (i, p) in pk.iter().enumerate() {
                if i == 3 {
                    // Before the request: a header whose lengths were damaged, and 37 bytes
                    // of the packet it was for.
                    w.record(SECS, frac(res, 4), &[0xab; 37], 37);
                }
                w.packet(SECS, frac(res, i as u64 + 1), &ethernet(&p.ip));
            }
            let mut bytes = w.into_bytes();
            // The damaged record's header: its captured and original lengths.
            let at = 24 + (0..3).map(|i| 16 + 14 + pk[i].ip.len()).sum::<usize>();
            for field in fields.iter().map(|f| at + f) {
                bytes[field..field + 4].copy_from_slice(&match endian {
                    Endian::Little => v.to_le_bytes(),
                    Endian::Big => v.to_be_bytes(),
                });
            }
            let case = format!("{endian:?} {res:?} {v}");
            let out = run_capture(&bytes);
            assert_eq!(out.len(), 3, "{case}:\n{}", dump(&out));
            check_capture_anomaly(&case, &out[0], "record_too_large", 3);
            let message = out[0]["anomaly"]["message"].as_str().unwrap();
            assert!(
                message.starts_with(what)
                    && message.contains("53 bytes were passed over to the next plausible record"),
                "{case}: {message}"
            );
            // The records after it, numbered as read.
            assert_eq!(out[1]["kafka"]["body"], request_body(), "{case}");
            assert_eq!(out[2]["kafka"]["body"], response_body(), "{case}");
            assert_eq!((&out[1]["frame"], &out[2]["frame"]), (&json!(4), &json!(5)));
            // The same read ahead, and from memory.
            let ahead = kafka_pcap::Config {
                read_ahead: true,
                ..Default::default()
            };
            assert_eq!(run_capture_with(&bytes, &ahead), out, "{case}");
            assert_eq!(run_in_memory(&bytes), out, "{case}");
        }
    }
}

/// A record whose captured length was damaged within the snapshot length is read with the
/// wrong length; the "header" after it is inside another's bytes, its time no time (seconds
/// far from the last record's and a fraction of a second or more), and is passed over to
/// the next plausible record. A run of zero bytes where a record should be (a file not
/// written to its end, as after a crash) is passed over too, not read as thousands of empty
/// packets. Both the same streamed, read ahead and in memory.
#[test]
fn a_header_inside_another_record_or_of_zeros_is_passed_over() {
    let pk = seed_packets(false);
    for endian in [Endian::Little, Endian::Big] {
        for res in [Resolution::Micro, Resolution::Nano] {
            // An extra record of 37 bytes; 20 into them, what reads as a record header (no
            // time, 5 bytes captured).
            let mut extra = vec![0xab; 20];
            for v in [0xabab_abab_u32, 0xabab_abab, 5, 5] {
                extra.extend_from_slice(&match endian {
                    Endian::Little => v.to_le_bytes(),
                    Endian::Big => v.to_be_bytes(),
                });
            }
            extra.push(0xab);
            let mut w = PcapWriter::new(endian, res, 1, 262_144);
            for (i, p) in pk.iter().enumerate() {
                if i == 3 {
                    w.record(SECS, frac(res, 4), &extra, 37);
                }
                w.packet(SECS, frac(res, i as u64 + 1), &ethernet(&p.ip));
            }
            let whole = w.into_bytes();
            let at = 24 + (0..3).map(|i| 16 + 14 + pk[i].ip.len()).sum::<usize>();
            let put = |b: &mut Vec<u8>, field: usize, v: u32| {
                b[at + field..at + field + 4].copy_from_slice(&match endian {
                    Endian::Little => v.to_le_bytes(),
                    Endian::Big => v.to_be_bytes(),
                })
            };
            // The extra record's captured length 37 damaged to 20: read as frame 4 of 20
            // bytes, then the "header" in its bytes, 17 bytes passed over.
            let mut short = whole.clone();
            put(&mut short, 8, 20);
            // The extra record overwritten by zeros, 53 of them.
            let mut zeros = whole.clone();
            zeros[at..at + 53].fill(0);
            let no_time = format!(
                "a capture record header whose time ({} seconds) is more than a day from the \
                 last record's, with a fraction of a second of {}, a second or more",
                0xabab_abab_u32, 0xabab_abab_u32
            );
            // The "header" inside the extra record with a fraction under a second but nothing
            // on the wire (a writer's 0 there is read, but not with a time a day away).
            let mut no_wire = short.clone();
            put(&mut no_wire, 16 + 20 + 4, 100);
            put(&mut no_wire, 16 + 20 + 12, 0);
            let no_wire_head = format!(
                "a capture record header whose time ({} seconds) is more than a day from the \
                 last record's, with 5 bytes captured, more than its length on the wire (0)",
                0xabab_abab_u32
            );
            // The extra record's lengths: 16,780,544 captured, 301,989,888 on the wire.
            let mut huge = whole.clone();
            put(&mut huge, 8, 16_780_544);
            put(&mut huge, 12, 301_989_888);
            let huge_head = "a capture record declares 16780544 bytes captured, more than its \
                             snapshot length, and 301989888 bytes on the wire, more than 16 MiB";
            let zero = "a capture record header of zero bytes (time 0, nothing captured)";
            for (what, bytes, after, passed, head, kind) in [
                ("short", &short, 4, 17, no_time.as_str(), "bad_block"),
                (
                    "no wire",
                    &no_wire,
                    4,
                    17,
                    no_wire_head.as_str(),
                    "bad_block",
                ),
                ("huge", &huge, 3, 53, huge_head, "record_too_large"),
                ("zeros", &zeros, 3, 53, zero, "bad_block"),
            ] {
                let case = format!("{endian:?} {res:?} {what}");
                let out = run_capture(bytes);
                assert_eq!(out.len(), 3, "{case}:\n{}", dump(&out));
                check_capture_anomaly(&case, &out[0], kind, after);
                let message = out[0]["anomaly"]["message"].as_str().unwrap();
                let tail =
                    format!("; {passed} bytes were passed over to the next plausible record");
                assert!(
                    message.starts_with(head) && message.contains(&tail),
                    "{case}: {message}"
                );
                assert_eq!(out[1]["kafka"]["body"], request_body(), "{case}");
                assert_eq!(out[2]["kafka"]["body"], response_body(), "{case}");
                assert_eq!(out[1]["frame"], json!(after + 1), "{case}");
                let ahead = kafka_pcap::Config {
                    read_ahead: true,
                    ..Default::default()
                };
                assert_eq!(run_capture_with(bytes, &ahead), out, "{case}");
                assert_eq!(run_in_memory(bytes), out, "{case}");
            }
            // Zeros to the file's end: passed over, and said so once.
            let mut tail = whole[..at].to_vec();
            tail.resize(at + 65_536, 0);
            let out = run_capture(&tail);
            assert_eq!(
                out.len(),
                1,
                "{endian:?} {res:?} zero tail:\n{}",
                dump(&out)
            );
            let message = out[0]["anomaly"]["message"].as_str().unwrap();
            assert!(
                message.starts_with(zero)
                    && message.ends_with(
                        "65536 bytes were passed over, and no plausible record followed before \
                         the file's end"
                    ),
                "{message}"
            );
        }
    }
}

/// `out` is one capture anomaly of `kind` at frame `frame`, then the seed's request and
/// response.
fn anomaly_then_the_seed_exchange(case: &str, out: &[Value], kind: &str, frame: u64) {
    assert_eq!(out.len(), 3, "{case}:\n{}", dump(out));
    check_capture_anomaly(case, &out[0], kind, frame);
    assert_eq!(out[1]["kafka"]["body"], request_body(), "{case}");
    assert_eq!(out[2]["kafka"]["body"], response_body(), "{case}");
}

/// What is odd in a valid file is read, and damage next to it loses no more than itself: a
/// clock jump of two days whose first record's fraction is a second or more (that record
/// alone is passed over; the search takes the records at the new time; where the file's
/// records had such fractions before, nothing is passed over), and a writer that
/// puts 0 for every length on the wire, with one record header zeroed (the next record is
/// found though its length on the wire is 0).
#[test]
fn damage_beside_what_is_odd_but_valid_loses_only_itself() {
    let pk = seed_packets(false);
    let jump = 2 * 86_400;
    for endian in [Endian::Little, Endian::Big] {
        // The clock jumps two days at the extra record, whose fraction is 1,000,000.
        let mut w = PcapWriter::new(endian, Resolution::Micro, 1, 262_144);
        for (i, p) in pk.iter().enumerate() {
            let secs = if i < 3 { SECS } else { SECS + jump };
            if i == 3 {
                w.record(secs, 1_000_000, &[0xab; 37], 37);
            }
            w.packet(secs, i as u32 + 1, &ethernet(&p.ip));
        }
        let out = run_capture(w.bytes());
        let case = format!("{endian:?} jump");
        anomaly_then_the_seed_exchange(&case, &out, "bad_block", 3);

        // Every length on the wire 0; the extra record's header zeroed.
        let mut w = PcapWriter::new(endian, Resolution::Micro, 1, 262_144);
        let mut at = 0;
        for (i, p) in pk.iter().enumerate() {
            if i == 3 {
                at = w.bytes().len();
                w.record(SECS, 4, &[0xab; 37], 0);
            }
            let data = ethernet(&p.ip);
            w.record(SECS, i as u32 + 1, &data, 0);
        }
        let mut bytes = w.into_bytes();
        bytes[at..at + 16].fill(0);
        let out = run_capture(&bytes);
        let case = format!("{endian:?} no lengths on the wire");
        anomaly_then_the_seed_exchange(&case, &out, "bad_block", 3);

        // A writer that puts nanoseconds in a microsecond file (fractions of a second or
        // more, read as Wireshark reads them), its clock jumping two days before the
        // request, the record before the jump's fraction under a second: nothing odd, all
        // read (the file's records have shown wide fractions before).
        let mut w = PcapWriter::new(endian, Resolution::Micro, 1, 262_144);
        for (i, p) in pk.iter().enumerate() {
            let secs = if i < 3 { SECS } else { SECS + jump };
            let frac = if i == 2 { 5 } else { 123_456_789 + i as u32 };
            w.packet(secs, frac, &ethernet(&p.ip));
        }
        let out = run_capture(w.bytes());
        let case = format!("{endian:?} nanoseconds in microseconds, jump");
        anomaly_then_the_seed_exchange(&case, &out, "bad_timestamp", 1);
        assert_eq!(out[1]["frame"], 4, "{case}");

        // A writer that counts 16 bytes more captured than on the wire in every record (as
        // some Linux "cooked" captures do), its clock jumping two days before the request:
        // nothing odd, all read.
        let mut w = PcapWriter::new(endian, Resolution::Micro, 1, 262_144);
        for (i, p) in pk.iter().enumerate() {
            let secs = if i < 3 { SECS } else { SECS + jump };
            let data = ethernet(&p.ip);
            w.record(secs, i as u32 + 1, &data, data.len() as u32 - 16);
        }
        let out = run_capture(w.bytes());
        let case = format!("{endian:?} overcounted, jump");
        assert_eq!(out.len(), 2, "{case}:\n{}", dump(&out));
        assert_eq!(out[0]["kafka"]["body"], request_body(), "{case}");
        assert_eq!(out[1]["kafka"]["body"], response_body(), "{case}");
    }
}

/// A record whose captured length was damaged within the snapshot length (a bit flipped,
/// making it more than its length on the wire) no longer takes the records after it with it:
/// when the header after its length on the wire reads as one it is read with that length
/// (or the snapshot length, if less; also when the file's end cuts it as declared), else it
/// alone is passed over. A captured length damaged by less than writers overcount puts the
/// next "header" inside another's bytes: one a day away with nothing on the wire is passed
/// over. A writer that counts more captured than on the wire in every record is read as it
/// is. Streamed, read ahead and in memory alike.
#[test]
fn a_captured_length_damaged_within_the_snapshot_length_loses_no_other_record() {
    let pk = seed_packets(false);
    let split = |out: Vec<Value>| -> (Vec<Value>, Vec<Value>) {
        out.into_iter().partition(|r| r["event_type"] == "anomaly")
    };
    let same_everywhere = |case: &str, bytes: &[u8]| -> Vec<Value> {
        let out = run_capture(bytes);
        let ahead = kafka_pcap::Config {
            read_ahead: true,
            ..Default::default()
        };
        assert_eq!(run_capture_with(bytes, &ahead), out, "{case}: read ahead");
        assert_eq!(run_in_memory(bytes), out, "{case}: in memory");
        out
    };
    for endian in [Endian::Little, Endian::Big] {
        let put = |b: &mut Vec<u8>, at: usize, v: u32| {
            b[at..at + 4].copy_from_slice(&match endian {
                Endian::Little => v.to_le_bytes(),
                Endian::Big => v.to_be_bytes(),
            })
        };
        // Where each record starts.
        let starts = |snap: usize| -> Vec<usize> {
            let mut at = 24;
            pk.iter()
                .map(|p| {
                    let here = at;
                    at += 16 + (14 + p.ip.len()).min(snap);
                    here
                })
                .collect()
        };
        let whole = classic(Link::Ethernet, endian, Resolution::Micro, &pk);
        let expected = run_capture(&whole);
        assert_eq!(expected.len(), 2, "{endian:?}:\n{}", dump(&expected));
        let at = starts(usize::MAX);
        let request_len = (14 + pk[3].ip.len()) as u32;
        let repaired = |frame: u64, declared: u32, wire: u32, after: &str, with: &str| {
            format!(
                "frame {frame} declares {declared} bytes captured, more than its length on the \
                 wire ({wire}), and {after}, while the header after its first {} bytes reads \
                 as one: a damaged captured length, most likely; read with {with}",
                with.rsplit(", ").next().unwrap()
            )
        };

        // The request's captured length 128 more: read with its length on the wire; the last
        // record's 65,536 more: the file's end cuts it as declared.
        for (index, more, after) in [
            (3, 128, "the header after it does not read as one"),
            (7, 65_536, "the file ends inside it"),
        ] {
            let mut bytes = whole.clone();
            let len = (14 + pk[index].ip.len()) as u32;
            put(&mut bytes, at[index] + 8, len + more);
            let case = format!("{endian:?} record {index} +{more}");
            let (anomalies, records) = split(same_everywhere(&case, &bytes));
            assert_eq!(records, expected, "{case}");
            assert_eq!(anomalies.len(), 1, "{case}:\n{}", dump(&anomalies));
            let frame = index as u64 + 1;
            check_capture_anomaly(&case, &anomalies[0], "record_too_large", frame);
            assert_eq!(
                anomalies[0]["anomaly"]["message"],
                repaired(
                    frame,
                    len + more,
                    len,
                    after,
                    &format!("its length on the wire, {len}")
                ),
                "{case}"
            );
        }

        // Its length on the wire damaged too (50): nothing reads after 50 bytes, so the
        // request alone is passed over; the response is read, as frame 4 (its API inferred),
        // and the request's bytes are a gap in the client's stream.
        let mut bytes = whole.clone();
        put(&mut bytes, at[3] + 8, request_len + 128);
        put(&mut bytes, at[3] + 12, 50);
        let case = format!("{endian:?} request +128, 50 on the wire");
        let out = same_everywhere(&case, &bytes);
        assert_eq!(out.len(), 3, "{case}:\n{}", dump(&out));
        check_capture_anomaly(&case, &out[0], "record_too_large", 3);
        let message = out[0]["anomaly"]["message"].as_str().unwrap();
        let head = format!(
            "a capture record declares {} bytes captured, more than its length on the wire \
             (50), and the header after it does not read as one: a damaged captured length, \
             most likely; {} bytes were passed over to the next plausible record",
            request_len + 128,
            16 + request_len
        );
        assert!(message.starts_with(&head), "{case}: {message}");
        assert_eq!(out[1]["frame"], 4, "{case}");
        assert_eq!(out[1]["kafka"]["message"], "response", "{case}");
        assert_eq!(out[1]["kafka"]["inferred"], true, "{case}");
        assert_eq!(out[1]["kafka"]["body"], response_body(), "{case}");
        assert_eq!(out[2]["anomaly"]["kind"], "gap", "{case}");
        assert_eq!(out[2]["anomaly"]["bytes"], 41, "{case}");

        // A snapshot length of 80: the request's 80 of 95 bytes, its captured length 128
        // more; read with the snapshot length.
        let mut w = PcapWriter::new(endian, Resolution::Micro, 1, 80);
        for (i, p) in pk.iter().enumerate() {
            let data = ethernet(&p.ip);
            let captured = &data[..data.len().min(80)];
            w.record(
                SECS,
                frac(Resolution::Micro, i as u64 + 1),
                captured,
                data.len() as u32,
            );
        }
        let snapped = w.into_bytes();
        let expected_snapped = run_capture(&snapped);
        let at80 = starts(80);
        let mut bytes = snapped.clone();
        put(&mut bytes, at80[3] + 8, 80 + 128);
        let case = format!("{endian:?} snapshot length 80, request +128");
        let (anomalies, records) = split(same_everywhere(&case, &bytes));
        let (_, expected_records) = split(expected_snapped);
        assert_eq!(records, expected_records, "{case}");
        let repaired_anomalies: Vec<&Value> = anomalies
            .iter()
            .filter(|a| a["anomaly"]["layer"] == "capture")
            .collect();
        assert_eq!(repaired_anomalies.len(), 1, "{case}:\n{}", dump(&anomalies));
        assert_eq!(
            repaired_anomalies[0]["anomaly"]["message"],
            repaired(
                4,
                80 + 128,
                request_len,
                "the header after it does not read as one",
                "the snapshot length, 80"
            ),
            "{case}"
        );

        // Before the request, an extra record declaring 41 bytes captured and 37 on the wire
        // (a captured length damaged by 4, within what writers overcount), and after its 41
        // bytes a "header" with a time two days away and nothing on the wire, which the
        // record before it had, and 23 bytes: passed over (39 bytes) to the request.
        let mut fake = Vec::new();
        for v in [SECS + 2 * 86_400, 100, 23, 0] {
            fake.extend_from_slice(&match endian {
                Endian::Little => v.to_le_bytes(),
                Endian::Big => v.to_be_bytes(),
            });
        }
        fake.extend_from_slice(&[0xab; 23]);
        let mut w = PcapWriter::new(endian, Resolution::Micro, 1, 262_144);
        for (i, p) in pk.iter().enumerate() {
            if i == 3 {
                w.record(SECS, frac(Resolution::Micro, 4), &[0xab; 41], 37);
                w.raw(&fake);
            }
            w.packet(
                SECS,
                frac(Resolution::Micro, i as u64 + 1),
                &ethernet(&p.ip),
            );
        }
        let case = format!("{endian:?} overcount by 4, then nothing on the wire");
        let out = same_everywhere(&case, w.bytes());
        assert_eq!(out.len(), 3, "{case}:\n{}", dump(&out));
        check_capture_anomaly(&case, &out[0], "bad_block", 4);
        let message = out[0]["anomaly"]["message"].as_str().unwrap();
        let head = format!(
            "a capture record header whose time ({} seconds) is more than a day from the last \
             record's, with nothing on the wire: the record before it had its length damaged, \
             most likely, and ended inside another's bytes; 39 bytes were passed over to the \
             next plausible record",
            SECS + 2 * 86_400
        );
        assert!(message.starts_with(&head), "{case}: {message}");
        assert_eq!(out[1]["kafka"]["body"], request_body(), "{case}");
        assert_eq!(out[2]["kafka"]["body"], response_body(), "{case}");
        assert_eq!(out[1]["frame"], 5, "{case}");

        // A writer that counts 100 bytes more captured than on the wire in every record:
        // read as it is.
        let mut w = PcapWriter::new(endian, Resolution::Micro, 1, 262_144);
        for (i, p) in pk.iter().enumerate() {
            let mut data = ethernet(&p.ip);
            let wire = data.len() as u32;
            data.extend_from_slice(&[0; 100]);
            w.record(SECS, frac(Resolution::Micro, i as u64 + 1), &data, wire);
        }
        let case = format!("{endian:?} overcounted by 100");
        let out = same_everywhere(&case, w.bytes());
        assert_eq!(out, expected, "{case}:\n{}", dump(&out));
    }
}

/// A look at the header after a record (one declaring more captured than on the wire) never
/// asks the stream for more than the most a reader buffers: a file with a 64 MiB snapshot
/// length whose record's first 100 bytes are followed by a header declaring 64 MiB made the
/// streaming reader grow its buffer forever (a hostile review's file). Read streamed, in reads
/// of one byte, read ahead and in memory alike, and ended.
#[test]
fn a_look_ahead_past_the_most_a_reader_buffers_ends() {
    let le = |v: u32| v.to_le_bytes();
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 64 << 20);
    w.packet(SECS, 0, &[0; 60]);
    let mut data = vec![0u8; 200];
    for (i, v) in [SECS, 1, 64 << 20, 0].into_iter().enumerate() {
        data[100 + 4 * i..104 + 4 * i].copy_from_slice(&le(v));
    }
    w.record(SECS, 2, &data, 100);
    w.raw(&[0xff; 16]).raw(&[0; 100]);
    let bytes = w.into_bytes();
    let out = run_capture(&bytes);
    let ahead = kafka_pcap::Config {
        read_ahead: true,
        ..Default::default()
    };
    assert_eq!(run_capture_with(&bytes, &ahead), out);
    assert_eq!(run_in_memory(&bytes), out);
    let mut sink = kafka_pcap::output::NdjsonWriter::new(Vec::<u8>::new(), None);
    kafka_pcap::run(OneByte(&bytes), &Default::default(), &mut sink).unwrap();
    let text = String::from_utf8(sink.into_inner().unwrap()).unwrap();
    let one_byte: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(one_byte, out);
}

/// After a damaged header, the search for the next plausible record refutes a candidate
/// whose header after it lies past the most a reader buffers (64 MiB from its start): the
/// stream, which could not hold it, took its full buffer for the file's end and lost the rest
/// (a hostile review's file: a "header" declaring 64 MiB less 8 bytes 20 bytes into the
/// damage, then 70 records of 1 MB), while the in-memory reader read on.
#[test]
fn the_search_refutes_a_candidate_past_the_most_a_reader_buffers() {
    let pk = seed_packets(false);
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 64 << 20);
    let filler = {
        let mut f = vec![0xff; 6];
        f.extend_from_slice(&[0; 6]);
        f.extend_from_slice(&[0x88, 0xb5]);
        f.resize(1_000_014, 0xee);
        f
    };
    for (i, p) in pk.iter().enumerate() {
        if i == 3 {
            let le = |v: u32| v.to_le_bytes();
            for (caplen, origlen) in [(0x7fff_ffff, 100), ((64 << 20) - 8, 0)] {
                for v in [SECS, 1, caplen, origlen] {
                    w.raw(&le(v));
                }
                w.raw(&[0xee; 20]);
            }
            for _ in 0..70 {
                w.packet(SECS, frac(Resolution::Micro, 3), &filler);
            }
        }
        w.packet(
            SECS,
            frac(Resolution::Micro, i as u64 + 1),
            &ethernet(&p.ip),
        );
    }
    let bytes = w.into_bytes();
    let out = run_capture(&bytes);
    let records: Vec<&Value> = out.iter().filter(|r| r["event_type"] == "kafka").collect();
    assert_eq!(records.len(), 2, "{}", dump(&out));
    assert_eq!(records[0]["kafka"]["body"], request_body());
    assert_eq!(records[1]["kafka"]["body"], response_body());
    assert_eq!(run_in_memory(&bytes), out);
}

/// The file's first record is read as it declares even with more captured than on the wire
/// (there is no record before it to judge it by), but the excess is not learned as the
/// writer's padding: here its length takes the next two records (the handshake's), and the
/// request's captured length, 128 more, is still read with its length on the wire.
#[test]
fn the_first_records_excess_is_not_learned_as_padding() {
    let pk = seed_packets(false);
    let mut bytes = classic(Link::Ethernet, Endian::Little, Resolution::Micro, &pk);
    let lens: Vec<u32> = pk.iter().map(|p| (14 + p.ip.len()) as u32).collect();
    let swallowed = 16 * 2 + lens[1] + lens[2];
    let at_request = 24 + (0..3).map(|i| 16 + lens[i] as usize).sum::<usize>();
    bytes[24 + 8..24 + 12].copy_from_slice(&(lens[0] + swallowed).to_le_bytes());
    bytes[at_request + 8..at_request + 12].copy_from_slice(&(lens[3] + 128).to_le_bytes());
    let out = run_capture(&bytes);
    let repaired: Vec<&Value> = out
        .iter()
        .filter(|r| r["anomaly"]["kind"] == "record_too_large")
        .collect();
    assert_eq!(repaired.len(), 1, "{}", dump(&out));
    assert_eq!(repaired[0]["frame"], 2, "{}", dump(&out));
    let kafka: Vec<&Value> = out.iter().filter(|r| r["event_type"] == "kafka").collect();
    assert_eq!(kafka.len(), 2, "{}", dump(&out));
    assert_eq!(kafka[0]["kafka"]["body"], request_body());
    assert_eq!(kafka[1]["kafka"]["body"], response_body());
    assert_eq!(run_in_memory(&bytes), out);
}

/// A reader handing out one byte a read.
struct OneByte<'a>(&'a [u8]);

impl std::io::Read for OneByte<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.len().min(buf.len()).min(1);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// A writer that pads every record with 100 bytes (more captured than on the wire by more
/// than others add), its clock jumping two days before the request: all read. The record
/// before the jump is followed by a header a day away; the padding the file's records
/// declared before reads it as it is (a hostile review found every record after the jump
/// passed over).
#[test]
fn a_padding_writer_across_a_clock_jump_loses_nothing() {
    let pk = seed_packets(false);
    for endian in [Endian::Little, Endian::Big] {
        let mut w = PcapWriter::new(endian, Resolution::Micro, 1, 262_144);
        for (i, p) in pk.iter().enumerate() {
            let secs = if i < 3 { SECS } else { SECS + 2 * 86_400 };
            let mut data = ethernet(&p.ip);
            let wire = data.len() as u32;
            data.extend_from_slice(&[0; 100]);
            w.record(secs, frac(Resolution::Micro, i as u64 + 1), &data, wire);
        }
        let out = run_capture(w.bytes());
        let case = format!("{endian:?}");
        assert_eq!(out.len(), 2, "{case}:\n{}", dump(&out));
        assert_eq!(out[0]["kafka"]["body"], request_body(), "{case}");
        assert_eq!(out[1]["kafka"]["body"], response_body(), "{case}");
        assert_eq!(run_in_memory(w.bytes()), out, "{case}");
    }
}

/// A Section Header Block whose lengths are damaged, first in the file (which pcap-parser's
/// reader refuses) or starting a section of the other byte order, is passed over with its
/// byte order taken from its byte-order mark: the section's packets are read, streamed and
/// in memory alike.
#[test]
fn a_damaged_section_header_keeps_its_byte_order() {
    let pk = seed_packets(false);
    let put = |b: &mut Vec<u8>, at: usize, endian: Endian, v: u32| {
        b[at..at + 4].copy_from_slice(&match endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        })
    };
    for endian in [Endian::Big, Endian::Little] {
        let other = [Endian::Big, Endian::Little][usize::from(endian == Endian::Big)];
        // The first section header's length damaged to 12.
        let mut w = PcapngWriter::new();
        w.section(endian);
        let eth = w.interface(1, 262_144, None);
        for (i, p) in pk.iter().enumerate() {
            w.packet_at(eth, u64::from(SECS), i as u64 + 1, &ethernet(&p.ip));
        }
        let mut first = w.into_bytes();
        put(&mut first, 4, endian, 12);
        // Two sections, the second of the other byte order with its trailing length damaged.
        let mut w = PcapngWriter::new();
        w.section(endian);
        let eth = w.interface(1, 262_144, None);
        let mut at = 0;
        for (i, p) in pk.iter().enumerate() {
            let eth = if i == 3 {
                at = w.bytes().len();
                w.section(other);
                w.interface(1, 262_144, None)
            } else if i > 3 {
                0
            } else {
                eth
            };
            w.packet_at(eth, u64::from(SECS), i as u64 + 1, &ethernet(&p.ip));
        }
        let mut second = w.into_bytes();
        put(&mut second, at + 24, other, 24);
        for (what, bytes, after) in [("first", &first, 0), ("second", &second, 3)] {
            let case = format!("{endian:?} {what} section header damaged");
            let out = run_capture(bytes);
            assert_eq!(out.len(), 3, "{case}:\n{}", dump(&out));
            check_capture_anomaly(&case, &out[0], "bad_block", after);
            assert_eq!(out[1]["kafka"]["body"], request_body(), "{case}");
            assert_eq!(out[2]["kafka"]["body"], response_body(), "{case}");
            assert_eq!(run_in_memory(bytes), out, "{case}");
        }
    }
}

/// A pcapng block whose leading or trailing length alone was damaged, whatever it says (more
/// than 64 MiB, fewer bytes than the block holds, more than the file holds, or past the next
/// blocks), is read with the length its other end repeats where a plausible block (or the
/// file's end) follows it; a block damaged otherwise (both lengths), or stray bytes between
/// blocks, are passed over to the next plausible block (a known type whose length, repeated
/// at its end, holds it). The packets after it are read, the same streamed and in memory, and
/// the problem says what was done.
#[test]
fn a_damaged_pcapng_block_is_read_with_its_length_or_passed_over() {
    let pk = seed_packets(false);
    // (what is done to the extra 37-byte packet's block of 72 bytes, the anomaly's kind, the
    // start of what its message says, the bytes passed over: 0 when it is read after all)
    type Damage = (&'static str, &'static str, &'static str, usize);
    let damages: [Damage; 7] = [
        (
            "length 0xfffffff0",
            "record_too_large",
            "a block declares 4294967280 bytes, more than the 67108864",
            0,
        ),
        ("length 16", "bad_block", "the block's trailing length ", 0),
        (
            "length 1 MiB",
            "bad_block",
            "the block declares 1048576 bytes, more than the",
            0,
        ),
        (
            "length 72 + 256",
            "bad_block",
            "the block's trailing length",
            0,
        ),
        (
            "trailing length 80",
            "bad_block",
            "the block's trailing length 80 differs from its leading length 72",
            0,
        ),
        (
            "lengths 16 and 80",
            "bad_block",
            "the block's trailing length ",
            72,
        ),
        ("6 stray bytes", "bad_block", "", 6),
    ];
    // One byte inserted before the extra block: the "block" read one byte early has a type
    // pcap-parser does not know and would have been skipped by whatever length it declares;
    // its trailing length differs, and the search finds the extra block a byte later.
    for endian in [Endian::Big, Endian::Little] {
        let (mut bytes, at) = pcapng_with_extra_block(endian, &pk);
        bytes.insert(at, 0x5a);
        let case = format!("{endian:?} 1 stray byte");
        let out = run_capture(&bytes);
        assert_eq!(out.len(), 3, "{case}:\n{}", dump(&out));
        // (Big-endian, the length read a byte early is past 64 MiB.)
        let kind = ["record_too_large", "bad_block"][usize::from(endian == Endian::Little)];
        check_capture_anomaly(&case, &out[0], kind, 3);
        let message = out[0]["anomaly"]["message"].as_str().unwrap();
        assert!(
            message.contains("; 1 bytes were passed over to the next plausible block"),
            "{case}: {message}"
        );
        assert_eq!((&out[1]["frame"], &out[2]["frame"]), (&json!(5), &json!(6)));
        assert_eq!(out[1]["kafka"]["body"], request_body(), "{case}");
    }
    let read =
        "; read as a block of 72 bytes, the length its other end repeats and where the next \
                block (or the file's end) is";
    for endian in [Endian::Big, Endian::Little] {
        for (damage, kind, what, passed) in damages {
            let (mut bytes, at) = pcapng_with_extra_block(endian, &pk);
            let put = |b: &mut Vec<u8>, off: usize, v: u32| {
                b[at + off..at + off + 4].copy_from_slice(&match endian {
                    Endian::Little => v.to_le_bytes(),
                    Endian::Big => v.to_be_bytes(),
                })
            };
            match damage {
                "length 0xfffffff0" => put(&mut bytes, 4, 0xffff_fff0),
                "length 16" => put(&mut bytes, 4, 16),
                "length 1 MiB" => put(&mut bytes, 4, 1 << 20),
                "length 72 + 256" => put(&mut bytes, 4, 72 + 256),
                "trailing length 80" => put(&mut bytes, 68, 80),
                "lengths 16 and 80" => {
                    put(&mut bytes, 4, 16);
                    put(&mut bytes, 68, 80);
                }
                _ => {
                    // The extra block replaced by bytes that are no block.
                    bytes.splice(at..at + 72, [0; 6]);
                }
            }
            let case = format!("{endian:?} {damage}");
            let out = run_capture(&bytes);
            assert_eq!(out.len(), 3, "{case}:\n{}", dump(&out));
            check_capture_anomaly(&case, &out[0], kind, 3);
            let message = out[0]["anomaly"]["message"].as_str().unwrap();
            let head = format!("a damaged record after frame 3: {what}");
            let tail = if passed == 0 {
                read.to_string()
            } else {
                format!(
                    "; {passed} bytes were passed over to the next plausible block, where the reading goes on"
                )
            };
            assert!(
                message.starts_with(&head) && message.contains(&tail),
                "{case}: {message}"
            );
            assert_eq!(out[1]["kafka"]["body"], request_body(), "{case}");
            assert_eq!(out[2]["kafka"]["body"], response_body(), "{case}");
            // The extra packet read after all is frame 4.
            let first = if passed == 0 { 5 } else { 4 };
            assert_eq!(
                (&out[1]["frame"], &out[2]["frame"]),
                (&json!(first), &json!(first + 1)),
                "{case}"
            );
            // The same from memory.
            assert_eq!(run_in_memory(&bytes), out, "{case}");

            // With nothing after the damaged block: read after all when its other end says
            // so (the file not cut inside it); otherwise its bytes are passed over and said
            // so, or where they could be a block the file's end cuts, read as that.
            let end = at + if passed == 0 { 72 } else { passed };
            let out = run_capture(&bytes[..end]);
            assert_eq!(run_in_memory(&bytes[..end]), out, "{case}, cut");
            let last = out.last().unwrap();
            let message = last["anomaly"]["message"].as_str().unwrap();
            if passed == 0 {
                check_capture_anomaly(&case, last, kind, 3);
                assert!(message.ends_with(read), "{case}: {message}");
            } else if damage == "lengths 16 and 80" {
                check_capture_anomaly(&case, last, kind, 3);
                assert!(
                    message.ends_with(
                        "72 bytes were passed over, and no plausible block followed before the file's end"
                    ),
                    "{case}: {message}"
                );
            } else {
                assert_eq!(
                    last["anomaly"]["kind"], "truncated_capture",
                    "{case}: {message}"
                );
            }
        }
    }
}

/// An Interface Description Block whose leading or trailing length alone was damaged is read
/// with its other end's length, its options with it (nanoseconds here): the section's packets
/// are read with their interface and their time, not `unknown_interface`, the same streamed
/// and in memory; one `bad_block` problem says so.
#[test]
fn a_damaged_interface_description_is_read_with_its_length() {
    let pk = seed_packets(false);
    for endian in [Endian::Big, Endian::Little] {
        let mut w = PcapngWriter::new();
        w.section(endian);
        let idb = w.bytes().len();
        let eth = w.interface(1, 262_144, Some(9));
        let idb_len = w.bytes().len() - idb;
        for (i, p) in pk.iter().enumerate() {
            w.packet_at(eth, u64::from(SECS), i as u64 * 1_001 + 1, &ethernet(&p.ip));
        }
        let whole = w.into_bytes();
        let expected = run_capture(&whole);
        assert_eq!(expected.len(), 2, "{}", dump(&expected));
        for (off, flip) in [(4, 0x100u32), (4, 0x0200_0000), (4, 4), (idb_len - 4, 0x10)] {
            let mut bytes = whole.clone();
            let at = idb + off;
            let word = |b: &[u8]| match endian {
                Endian::Little => u32::from_le_bytes(b[at..at + 4].try_into().unwrap()),
                Endian::Big => u32::from_be_bytes(b[at..at + 4].try_into().unwrap()),
            };
            let v = word(&bytes) ^ flip;
            bytes[at..at + 4].copy_from_slice(&match endian {
                Endian::Little => v.to_le_bytes(),
                Endian::Big => v.to_be_bytes(),
            });
            let case = format!("{endian:?} word at {off} ^ {flip:#x}");
            let out = run_capture(&bytes);
            assert_eq!(out.len(), 3, "{case}:\n{}", dump(&out));
            assert!(
                ["bad_block", "record_too_large"]
                    .contains(&out[0]["anomaly"]["kind"].as_str().unwrap()),
                "{case}: {}",
                dump(&out)
            );
            let message = out[0]["anomaly"]["message"].as_str().unwrap();
            assert!(
                message.starts_with("a damaged record after frame 0: ")
                    && message.contains(&format!("; read as a block of {idb_len} bytes")),
                "{case}: {message}"
            );
            assert_eq!(&out[1..], &expected[..], "{case}");
            assert_eq!(run_in_memory(&bytes), out, "{case}");
        }
    }
}

/// A pcapng file of one section in `endian` order holding `pk`, with an extra Enhanced
/// Packet Block of 37 bytes before the fourth packet, and where that block starts.
fn pcapng_with_extra_block(endian: Endian, pk: &[Packet]) -> (Vec<u8>, usize) {
    let mut w = PcapngWriter::new();
    w.section(endian);
    let eth = w.interface(1, 262_144, None);
    let mut at = 0;
    for (i, p) in pk.iter().enumerate() {
        if i == 3 {
            at = w.bytes().len();
            w.packet_at(eth, u64::from(SECS), 4, &[0xab; 37]);
        }
        w.packet_at(eth, u64::from(SECS), i as u64 + 1, &ethernet(&p.ip));
    }
    (w.into_bytes(), at)
}

/// The records of `bytes` read by the in-memory reader (`run_slice`), to compare with the
/// streaming reader's.
fn run_in_memory(bytes: &[u8]) -> Vec<Value> {
    let mut sink = kafka_pcap::output::NdjsonWriter::new(Vec::<u8>::new(), None);
    kafka_pcap::run_slice(bytes, &Default::default(), &mut sink).unwrap();
    let text = String::from_utf8(sink.into_inner().unwrap()).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn empty_captures_yield_no_records() {
    for endian in [Endian::Little, Endian::Big] {
        for res in [Resolution::Micro, Resolution::Nano] {
            let w = PcapWriter::new(endian, res, 1, 65_535);
            assert_eq!(w.bytes().len(), 24);
            let out = run_capture(w.bytes());
            assert!(out.is_empty(), "{endian:?} {res:?}: {}", dump(&out));
        }
        let mut ng = PcapngWriter::new();
        ng.section(endian);
        assert_eq!(ng.bytes().len(), 28);
        let out = run_capture(ng.bytes());
        assert!(out.is_empty(), "pcapng {endian:?}: {}", dump(&out));
        ng.interface(1, 65_535, Some(9));
        let out = run_capture(ng.bytes());
        assert!(out.is_empty(), "pcapng {endian:?} + IDB: {}", dump(&out));
    }
}

// ---------------------------------------------------------------------------------------------
// TCP segmentation
// ---------------------------------------------------------------------------------------------

#[test]
fn one_byte_segments_still_decode() {
    for ipv6 in [false, true] {
        let pk = seed_conversation(ipv6).mss(1).packets();
        // Handshake 3, request 41 segments (frames 4..=44), response 31 (45..=75), FINs 3.
        assert_eq!(pk.len(), 3 + 41 + 31 + 3);
        assert!(pk[3..75].iter().all(|p| p.payload.len() == 1));
        let bytes = classic(Link::Ethernet, Endian::Little, Resolution::Micro, &pk);
        let out = run_capture(&bytes);
        check_seed_pair(
            &format!("1-byte segments ipv6={ipv6}"),
            &out,
            &Expect {
                ipv6,
                request_frame: 44,
                response_frame: 75,
                request_ts: ts(Resolution::Micro, 44),
                response_ts: ts(Resolution::Micro, 75),
                latency_us: 31,
            },
        );
    }
}

#[test]
fn out_of_order_and_duplicated_segments_decode_once() {
    for ipv6 in [false, true] {
        let conv = seed_conversation(ipv6).mss(8);
        let pk = conv.packets();
        // Handshake 3; request 41 bytes in 6 segments (pk[3..9]: 8,8,8,8,8,1); response 31
        // bytes in 4 (pk[9..13]: 8,8,8,7); FINs pk[13..16].
        assert_eq!(pk.len(), 16);
        let req: Vec<&Packet> = pk[3..9].iter().collect();
        let resp: Vec<&Packet> = pk[9..13].iter().collect();
        assert!(req.iter().all(|p| p.dir == Dir::ToServer));
        assert!(resp.iter().all(|p| p.dir == Dir::ToClient));

        // A retransmission overlapping segments 0, 1 and 2: request bytes 4..20.
        let (s, sp, d, dp) = conv.endpoints(Dir::ToServer);
        let request = seed_request();
        let overlap = tcp_packet(
            s,
            sp,
            d,
            dp,
            req[0].seq.wrapping_add(4),
            resp[0].seq,
            Flags::PSH_ACK,
            &request[4..20],
        );

        let mut ips: Vec<Vec<u8>> = pk[..3].iter().map(|p| p.ip.clone()).collect();
        // Request: 5, the overlap, 2, 2 again, 0 (bytes 0..24 now contiguous), 4, 1 (already
        // covered), 3 (the last hole: complete here); then 0 and 5 again.
        for ip in [
            &req[5].ip, &overlap, &req[2].ip, &req[2].ip, &req[0].ip, &req[4].ip, &req[1].ip,
            &req[3].ip,
        ] {
            ips.push(ip.clone());
        }
        let request_frame = ips.len() as u64;
        ips.push(req[0].ip.clone());
        ips.push(req[5].ip.clone());
        // Response: 3, 1, 0, 0 again, 2 (complete here), 3 again.
        for p in [resp[3], resp[1], resp[0], resp[0], resp[2]] {
            ips.push(p.ip.clone());
        }
        let response_frame = ips.len() as u64;
        ips.push(resp[3].ip.clone());
        ips.extend(pk[13..].iter().map(|p| p.ip.clone()));
        assert_eq!((request_frame, response_frame), (11, 18));

        let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 65_535);
        for (i, ip) in ips.iter().enumerate() {
            w.packet(SECS, frac(Resolution::Micro, i as u64 + 1), &ethernet(ip));
        }
        let out = run_capture(w.bytes());
        check_seed_pair(
            &format!("reordered ipv6={ipv6}"),
            &out,
            &Expect {
                ipv6,
                request_frame,
                response_frame,
                request_ts: ts(Resolution::Micro, request_frame),
                response_ts: ts(Resolution::Micro, response_frame),
                latency_us: (response_frame - request_frame) as i64,
            },
        );
    }
}
