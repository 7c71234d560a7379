//! Regressions from a hostile-input review, at a size that runs in milliseconds. Each once cost
//! time or memory out of proportion to its input (quadratic resynchronisation, a scan of every
//! pending request per byte, millions of decoded empty topics, a damaged pcapng block that
//! stopped the reading, a record claiming a 4 GiB snaplen cut); here each asserts the records
//! that must come out. Speed and memory are measured, not asserted: see the README's limits.

mod common;

use common::*;
use kafka_pcap::{kafka::event::Event, output::VecSink};
use kafka_pcap::{run, stats::Stats, Config};
use std::net::{IpAddr, Ipv4Addr};

const C: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
const S: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));

fn seg(to_server: bool, seq: u32, flags: Flags, payload: &[u8]) -> Vec<u8> {
    if to_server {
        tcp_packet(C, 40000, S, 9092, seq, 1, flags, payload)
    } else {
        tcp_packet(S, 9092, C, 40000, seq, 1, flags, payload)
    }
}

/// A raw-IP pcap of `packets` (IP bytes, and orig_len when it differs from the captured length).
fn pcap(packets: &[(Vec<u8>, Option<u32>)]) -> Vec<u8> {
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 101, 262_144);
    for (i, (ip, orig)) in packets.iter().enumerate() {
        w.record(1_700_000_000, i as u32, ip, orig.unwrap_or(ip.len() as u32));
    }
    w.into_bytes()
}

fn handshake() -> Vec<(Vec<u8>, Option<u32>)> {
    vec![
        (seg(true, 999, Flags::SYN, &[]), None),
        (seg(false, 4999, Flags::SYN_ACK, &[]), None),
    ]
}

fn run_it(bytes: &[u8]) -> (Stats, Vec<String>) {
    let mut sink = VecSink::default();
    let s = run(bytes, &Config::default(), &mut sink).unwrap();
    let kinds = sink
        .0
        .iter()
        .map(|r| match &r.event {
            Event::Kafka(k) => format!("{:?} {}", k.message, k.correlation_id),
            Event::Anomaly(a) => a.kind.to_string(),
            Event::Unanswered(..) => "unanswered".to_string(),
        })
        .collect();
    (s, kinds)
}

/// ControlledShutdown v0 request (header v0, no body): 12 bytes with its size prefix.
fn shutdown(corr: i32) -> Vec<u8> {
    let mut f = 8i32.to_be_bytes().to_vec();
    f.extend_from_slice(&7i16.to_be_bytes());
    f.extend_from_slice(&0i16.to_be_bytes());
    f.extend_from_slice(&corr.to_be_bytes());
    f
}

/// One segment whose IPv4 total length is 0 (as with TCP segmentation offload), so the whole
/// record is its payload: 2,500 times a stray byte, then two requests. Every stray byte forces
/// a resynchronisation inside the same segment (where a candidate must chain into the next
/// frame); all 5,000 requests are still framed.
#[test]
fn resync_inside_one_large_segment() {
    let mut payload = Vec::new();
    for i in 0..2500 {
        payload.push(0x80);
        payload.extend(shutdown(2 * i));
        payload.extend(shutdown(2 * i + 1));
    }
    let mut ip = seg(true, 1000, Flags::PSH_ACK, &payload);
    ip[2] = 0;
    ip[3] = 0;
    let mut p = handshake();
    p.push((ip, None));
    let (s, kinds) = run_it(&pcap(&p));
    assert_eq!(s.frames.requests.get(&7), Some(&5000));
    assert_eq!(
        kinds.iter().filter(|k| *k == "frame_too_small").count(),
        2500
    );
    assert_eq!(kinds.iter().filter(|k| *k == "resync").count(), 2500);
}

/// 4,096 requests (correlation ids 10,000 to 14,095) wait for answers when the response
/// direction turns to garbage whose every offset has a plausible size: the one real response
/// after it is still found and paired. (Every offset is checked against the pending
/// correlation ids; that check is one lookup, not a scan of the queue.)
#[test]
fn response_resync_with_many_pending_requests() {
    let mut p = handshake();
    let reqs: Vec<u8> = (10_000..14_096).flat_map(shutdown).collect();
    let mut seq = 1000u32;
    for chunk in reqs.chunks(60_000) {
        p.push((seg(true, seq, Flags::PSH_ACK, chunk), None));
        seq += chunk.len() as u32;
    }
    let mut resp = vec![0xff; 4];
    resp.extend(vec![0x01; 200_000]);
    // A response (header v0) to the last request, with two bytes of body.
    resp.extend_from_slice(&6i32.to_be_bytes());
    resp.extend_from_slice(&14_095i32.to_be_bytes());
    resp.extend_from_slice(&[0, 0]);
    let mut rseq = 5000u32;
    for chunk in resp.chunks(60_000) {
        p.push((seg(false, rseq, Flags::PSH_ACK, chunk), None));
        rseq += chunk.len() as u32;
    }
    let (s, kinds) = run_it(&pcap(&p));
    assert_eq!(s.frames.requests.get(&7), Some(&4096));
    assert_eq!(s.frames.responses.get(&7), Some(&1), "{kinds:?}");
    assert_eq!(kinds, ["frame_too_small", "resync"]);
}

/// A WriteTxnMarkers v1 request whose marker holds 200,000 empty topics (3 bytes each): the
/// element budget stops it with `too_many_elements` at `markers[0].topics`.
#[test]
fn too_many_empty_topics() {
    let n = 200_000u32;
    let mut body = vec![2u8]; // one marker
    body.extend_from_slice(&7i64.to_be_bytes());
    body.extend_from_slice(&0i16.to_be_bytes());
    body.push(1);
    let mut v = n + 1;
    while v >= 0x80 {
        body.push((v as u8) | 0x80);
        v >>= 7;
    }
    body.push(v as u8);
    for _ in 0..n {
        body.extend_from_slice(&[1, 1, 0]); // name "", no partitions, no tags
    }
    body.extend_from_slice(&0i32.to_be_bytes());
    body.extend_from_slice(&[0, 0]);
    let mut frame = Vec::new();
    frame.extend_from_slice(&((11 + body.len()) as i32).to_be_bytes());
    frame.extend_from_slice(&[0, 27, 0, 1, 0, 0, 0, 1, 0, 0, 0]);
    frame.extend(body);
    let mut p = handshake();
    let mut seq = 1000u32;
    for chunk in frame.chunks(60_000) {
        p.push((seg(true, seq, Flags::PSH_ACK, chunk), None));
        seq += chunk.len() as u32;
    }
    let mut sink = VecSink::default();
    run(&pcap(&p)[..], &Config::default(), &mut sink).unwrap();
    let a = match &sink.0[0].event {
        Event::Anomaly(a) => a,
        other => panic!("{other:?}"),
    };
    assert_eq!(a.kind, "too_many_elements");
    assert_eq!(a.field.as_deref(), Some("markers[0].topics"));
}

/// A pcapng Name Resolution Block whose record claims more bytes than its (consistent) block
/// holds is reported as `bad_block` and skipped; the packets after it still decode.
#[test]
fn damaged_pcapng_block_is_skipped() {
    let conv = Conversation::new(false, 9092)
        .client(&seed_request())
        .server(&seed_response());
    let packets = conv.packets();
    for endian in [Endian::Little, Endian::Big] {
        let mut w = PcapngWriter::new();
        w.section(endian);
        let ifc = w.interface(101, 262_144, None);
        for (i, p) in packets.iter().enumerate() {
            if i == 4 {
                // NRB record: type 1 (IPv4), claimed length 0xffff, in a 16-byte block.
                let body = match endian {
                    Endian::Little => [1, 0, 0xff, 0xff],
                    Endian::Big => [0, 1, 0xff, 0xff],
                };
                w.block(4, &body);
            }
            w.packet(ifc, i as u64, &p.ip, p.ip.len() as u32);
        }
        let (_, kinds) = run_it(w.bytes());
        assert_eq!(
            kinds,
            ["Request 0", "bad_block", "Response 0"],
            "{endian:?}"
        );
    }
}

/// A record whose orig_len claims 4 GiB: the cut is bounded by the IP header's length, so
/// framing stays in step and the next exchange pairs.
#[test]
fn absurd_orig_len_is_bounded_by_the_ip_length() {
    // A 1460-byte Produce v3 request (header v1, no client id), cut after 10 bytes.
    let mut first = 1456i32.to_be_bytes().to_vec();
    first.extend_from_slice(&[0, 0, 0, 3, 0, 0, 0, 1, 0xff, 0xff]);
    first.resize(1460, 0xab);
    let mut second = seed_request();
    second[11] = 2; // correlation id 2
    let mut resp = seed_response();
    resp[7] = 2;
    let mut p = handshake();
    // A 1460-byte segment captured with only 10 bytes of payload, claiming 4 GiB on the wire.
    let full = seg(true, 1000, Flags::PSH_ACK, &first);
    p.push((full[..50].to_vec(), Some(u32::MAX)));
    p.push((seg(true, 2460, Flags::PSH_ACK, &second), None));
    p.push((seg(false, 5000, Flags::PSH_ACK, &resp), None));
    let (_, kinds) = run_it(&pcap(&p));
    assert_eq!(kinds, ["gap", "Request 2", "Response 2"]);
}

/// Sizes of 2 GiB and counts of 2^31-1 cost nothing: `frame_too_large` and
/// `array_count_exceeds_frame`, and the neighbours decode.
#[test]
fn forged_sizes_and_counts() {
    let mut stream = Vec::new();
    stream.extend_from_slice(&0x7fff_ffffi32.to_be_bytes()); // a 2 GiB frame
    let mut v0 = Vec::new();
    v0.extend_from_slice(&[0, 27, 0, 0, 0, 0, 0, 5, 0, 0]); // WriteTxnMarkers v0, corr 5
    v0.extend_from_slice(&0x7fff_ffffi32.to_be_bytes()); // 2^31-1 markers
    v0.extend_from_slice(&[0; 16]);
    stream.extend_from_slice(&(v0.len() as i32).to_be_bytes());
    stream.extend(v0);
    let mut good = seed_request();
    good[11] = 6;
    stream.extend(good);
    let mut p = handshake();
    p.push((seg(true, 1000, Flags::PSH_ACK, &stream), None));
    let (_, kinds) = run_it(&pcap(&p));
    assert_eq!(
        kinds,
        [
            "frame_too_large",
            "resync",
            "array_count_exceeds_frame",
            "Request 6",
            "no_response",
            "no_response"
        ]
    );
}

/// A `frame_too_large` names the frame it rejected when the bytes after the prefix are a
/// plausible header: a known API and version on the request side, a waiting request's
/// correlation id on the response side. Garbage after the prefix names nothing.
#[test]
fn frame_too_large_names_the_frame_behind_it() {
    // A Fetch v12 request (header v2: key, version, corr 7, client id "c", no tags; no body).
    let mut fetch = Vec::new();
    fetch.extend_from_slice(&1i16.to_be_bytes());
    fetch.extend_from_slice(&12i16.to_be_bytes());
    fetch.extend_from_slice(&7i32.to_be_bytes());
    fetch.extend_from_slice(&[0, 1, b'c', 0]);
    let mut requests = (fetch.len() as i32).to_be_bytes().to_vec();
    requests.extend_from_slice(&fetch);
    // A 200 MB Produce v9 request, of which the header arrives.
    requests.extend_from_slice(&200_000_000i32.to_be_bytes());
    requests.extend_from_slice(&[0, 0, 0, 9, 0, 0, 0, 8]);
    // Its 150 MB response to the Fetch, of which the correlation id arrives.
    let mut responses = 150_000_000i32.to_be_bytes().to_vec();
    responses.extend_from_slice(&7i32.to_be_bytes());
    let mut p = handshake();
    p.push((seg(true, 1000, Flags::PSH_ACK, &requests), None));
    p.push((seg(false, 5000, Flags::PSH_ACK, &responses), None));
    let too_large = |p: &[(Vec<u8>, Option<u32>)]| {
        let mut sink = VecSink::default();
        run(&pcap(p)[..], &Config::default(), &mut sink).unwrap();
        sink.0
            .iter()
            .filter_map(|r| match &r.event {
                Event::Anomaly(a) if a.kind == "frame_too_large" => Some((
                    r.loc.frame,
                    a.api_key,
                    a.api_version,
                    a.correlation_id,
                    a.request_frame,
                    a.message.clone(),
                )),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let too_large = too_large(&p);
    assert_eq!(too_large.len(), 2, "{too_large:#?}");
    // The named request is the one that got the response: nothing says it went unanswered.
    // Each direction then ends while framing still looks for a frame: the bytes passed over
    // are reported.
    let mut sink = VecSink::default();
    run(&pcap(&p)[..], &Config::default(), &mut sink).unwrap();
    let kinds: Vec<&str> = sink
        .0
        .iter()
        .filter_map(|r| match &r.event {
            Event::Anomaly(a) => Some(a.kind.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "frame_too_large",
            "frame_too_large",
            "no_frame_found",
            "no_frame_found"
        ]
    );
    assert_eq!(
        (
            too_large[0].0,
            too_large[0].1,
            too_large[0].2,
            too_large[0].3,
            too_large[0].4
        ),
        (3, Some(0), Some(9), Some(8), None)
    );
    assert!(
        too_large[0]
            .5
            .contains("(a Produce v9 request, correlation_id 8)"),
        "{}",
        too_large[0].5
    );
    assert_eq!(
        (
            too_large[1].0,
            too_large[1].1,
            too_large[1].2,
            too_large[1].3,
            too_large[1].4
        ),
        (4, Some(1), Some(12), Some(7), Some(3))
    );
    assert!(
        too_large[1]
            .5
            .contains("(the response to the Fetch v12 request in frame 3, correlation_id 7)"),
        "{}",
        too_large[1].5
    );

    // A WriteTxnMarkers request above the limit (the seed's, with --max-frame-size 30): its
    // response is paired with it, not reported as a response without request.
    let mut p = handshake();
    p.push((seg(true, 1000, Flags::PSH_ACK, &seed_request()), None));
    p.push((seg(false, 5000, Flags::PSH_ACK, &seed_response()), None));
    let mut sink = VecSink::default();
    let config = Config {
        max_frame_size: 30,
        ..Config::default()
    };
    run(&pcap(&p)[..], &config, &mut sink).unwrap();
    let seen: Vec<String> = sink
        .0
        .iter()
        .map(|r| match &r.event {
            Event::Kafka(k) => format!("{:?} {:?}", k.message, k.request_frame),
            Event::Anomaly(a) => a.kind.to_string(),
            Event::Unanswered(..) => "unanswered".to_string(),
        })
        .collect();
    // (The request's own bytes are passed over while framing looks for the next frame.)
    assert_eq!(
        seen,
        ["frame_too_large", "Response Some(3)", "no_frame_found"]
    );

    // A 2 GiB prefix before bytes that are no request header (API key 0x7f7f) names nothing.
    let mut garbage = 0x7fff_ffffi32.to_be_bytes().to_vec();
    garbage.extend_from_slice(&[0x7f; 8]);
    let mut p = handshake();
    p.push((seg(true, 1000, Flags::PSH_ACK, &garbage), None));
    let mut sink = VecSink::default();
    run(&pcap(&p)[..], &Config::default(), &mut sink).unwrap();
    let named: Vec<_> = sink
        .0
        .iter()
        .filter_map(|r| match &r.event {
            Event::Anomaly(a) if a.kind == "frame_too_large" => {
                Some((a.api_key, a.correlation_id, a.message.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        named,
        [(
            None,
            None,
            "size prefix 2147483647 at stream offset 0 is above --max-frame-size 104857600; \
             looking for the next frame"
                .to_string()
        )]
    );
}

/// On the response side of a connection whose request direction was not captured at all (a
/// capture filtered on `src port 9092`), no correlation id can be expected: after a bad size
/// or a lost segment, framing takes up again at any response that looks like one.
#[test]
fn response_only_captures_resynchronise_after_a_bad_size_or_a_gap() {
    let response = |corr: u8| {
        let mut r = seed_response();
        r[25..27].copy_from_slice(&6i16.to_be_bytes());
        r[7] = corr;
        r
    };
    let run_kinds = |p: &[(Vec<u8>, Option<u32>)]| -> Vec<(String, Option<u64>)> {
        let mut sink = VecSink::default();
        run(&pcap(p)[..], &Config::default(), &mut sink).unwrap();
        sink.0
            .iter()
            .map(|r| match &r.event {
                Event::Kafka(k) => (format!("{:?} {}", k.message, k.correlation_id), None),
                Event::Anomaly(a) => (a.kind.to_string(), a.bytes),
                Event::Unanswered(..) => ("unanswered".to_string(), None),
            })
            .collect()
    };
    let s = |v: &[(&str, Option<u64>)]| -> Vec<(String, Option<u64>)> {
        v.iter().map(|(k, b)| (k.to_string(), *b)).collect()
    };

    // A bad size prefix and 20 bytes, then three responses, in one segment.
    let mut stream = response(1);
    stream.extend_from_slice(&0x7fff_ffffi32.to_be_bytes());
    stream.extend_from_slice(&[0; 20]);
    for corr in 3..6 {
        stream.extend_from_slice(&response(corr));
    }
    let p = vec![(seg(false, 5000, Flags::PSH_ACK, &stream), None)];
    assert_eq!(
        run_kinds(&p),
        s(&[
            ("Response 1", None),
            ("frame_too_large", None),
            ("resync", Some(24)),
            ("Response 3", None),
            ("Response 4", None),
            ("Response 5", None),
        ])
    );

    // A 3,000-byte response whose first segment is lost, its second starting with bytes that
    // pass for an 80 MiB frame (size 0x05000000, correlation id 0): taking that frame on the
    // evidence of its segment start would swallow the responses after it.
    let mut big = 2996i32.to_be_bytes().to_vec();
    big.extend_from_slice(&99i32.to_be_bytes());
    big.resize(3000, 0x11);
    big[1448..1456].copy_from_slice(&[5, 0, 0, 0, 0, 0, 0, 0]);
    let mut p = vec![(seg(false, 5000, Flags::PSH_ACK, &response(1)), None)];
    let mut seq = 5000 + 31;
    p.push((
        seg(false, seq + 1448, Flags::PSH_ACK, &big[1448..2896]),
        None,
    ));
    p.push((seg(false, seq + 2896, Flags::PSH_ACK, &big[2896..]), None));
    seq += 3000;
    for corr in 3..6 {
        let r = response(corr);
        p.push((seg(false, seq, Flags::PSH_ACK, &r), None));
        seq += r.len() as u32;
    }
    let kinds = run_kinds(&p);
    let messages: Vec<&str> = kinds
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| k.starts_with("Response"))
        .collect();
    assert_eq!(
        messages,
        ["Response 1", "Response 3", "Response 4", "Response 5"],
        "{kinds:?}"
    );

    // Five responses, one segment each, the second never captured.
    let mut p = Vec::new();
    let mut seq = 5000u32;
    for corr in 1..6 {
        let r = response(corr);
        if corr != 2 {
            p.push((seg(false, seq, Flags::PSH_ACK, &r), None));
        }
        seq += r.len() as u32;
    }
    assert_eq!(
        run_kinds(&p),
        s(&[
            ("Response 1", None),
            ("gap", Some(31)),
            ("Response 3", None),
            ("Response 4", None),
            ("Response 5", None),
        ])
    );
}

/// A capture of the response direction only: the first responses without a captured request
/// are reported one by one, the rest counted in one record when the connection ends.
#[test]
fn responses_without_requests_are_reported_then_counted() {
    // 30 responses of 96 bytes after the size prefix (correlation ids 1..=30), none of them
    // WriteTxnMarkers.
    let mut stream = Vec::new();
    for corr in 1..=30i32 {
        stream.extend_from_slice(&96i32.to_be_bytes());
        stream.extend_from_slice(&corr.to_be_bytes());
        stream.extend_from_slice(&[0x7f; 92]);
    }
    let p = vec![(seg(false, 5000, Flags::PSH_ACK, &stream), None)];
    let mut sink = VecSink::default();
    run(&pcap(&p)[..], &Config::default(), &mut sink).unwrap();
    let seen: Vec<(Option<i32>, Option<u64>, bool)> = sink
        .0
        .iter()
        .filter_map(|r| match &r.event {
            Event::Anomaly(a) if a.kind == "response_without_request" => Some((
                a.correlation_id,
                a.bytes,
                a.message.starts_with("22 more responses (2112 bytes)"),
            )),
            _ => None,
        })
        .collect();
    let mut expected: Vec<(Option<i32>, Option<u64>, bool)> =
        (1..=8).map(|c| (Some(c), Some(96), false)).collect();
    expected.push((None, Some(2112), true));
    assert_eq!(seen, expected);
}
