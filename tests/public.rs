//! The real public Kafka captures in ../shared/captures/public (deepflow, go-sniffer, arkime,
//! nDPI): each runs without error, and its Kafka frames of every API are framed and paired as
//! the capture's description (../shared/captures/public/SOURCES.md, from tshark) says.
//! Skipped, with a message, where ../shared is absent (a fresh clone).

mod common;

use kafka_pcap::output::VecSink;
use kafka_pcap::{run, stats::Stats, Config};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn shared_dir() -> Option<PathBuf> {
    common::shared("captures/public")
}

fn summary(rel: &str, config: &Config) -> Option<(Stats, VecSink)> {
    let d = shared_dir()?;
    let f = std::fs::File::open(d.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let mut sink = VecSink::default();
    let s = run(f, config, &mut sink).unwrap_or_else(|e| panic!("{rel}: {e}"));
    Some((s, sink))
}

fn map(pairs: &[(i16, u64)]) -> BTreeMap<i16, u64> {
    pairs.iter().copied().collect()
}

/// (file, --port, requests by key, paired responses by key, unpaired responses)
type Case = (
    &'static str,
    u16,
    &'static [(i16, u64)],
    &'static [(i16, u64)],
    u64,
);

// Requests by key match SOURCES.md's `req[...]` exactly. Responses match its `resp[...]`, plus
// the ones tshark 4.0 could not pair because it does not know the version (Produce v9,
// Fetch v12/v13). The nDPI captures start mid-connection: three responses there have no
// request (one on a connection whose request went uncaptured, two at the start of a
// connection picked up mid-way).
const CASES: &[Case] = &[
    ("arkime/kafka.pcap", 9092, &[(2, 1)], &[], 0),
    (
        "deepflow/00-produce-v2.pcap",
        36333,
        &[(0, 1)],
        &[(0, 1)],
        0,
    ),
    (
        "deepflow/00-produce-v7-sw8.pcap",
        36333,
        &[(0, 1)],
        &[(0, 1)],
        0,
    ),
    (
        "deepflow/00-produce-v9.pcap",
        36333,
        &[(0, 1)],
        &[(0, 1)],
        0,
    ),
    (
        "deepflow/01-fetch-v12-ok.pcap",
        36333,
        &[(1, 1)],
        &[(1, 1)],
        0,
    ),
    (
        "deepflow/01-fetch-v12-perf.pcap",
        36333,
        &[(1, 1)],
        &[(1, 1)],
        0,
    ),
    (
        "deepflow/01-fetch-v12-unknown.pcap",
        36333,
        &[(1, 1)],
        &[(1, 1)],
        0,
    ),
    (
        "deepflow/11-join-group-v7.pcap",
        36333,
        &[(11, 1)],
        &[(11, 1)],
        0,
    ),
    (
        "deepflow/13-leave-group-v4.pcap",
        36333,
        &[(13, 1)],
        &[(13, 1)],
        0,
    ),
    (
        "deepflow/14-sync-group-v5.pcap",
        36333,
        &[(14, 1)],
        &[(14, 1)],
        0,
    ),
    (
        "deepflow/18-api-versions-v3.pcap",
        36333,
        &[(18, 1)],
        &[(18, 1)],
        0,
    ),
    (
        "deepflow/mixed-with-unsupported.pcap",
        36333,
        &[(1, 1), (8, 1), (12, 1)],
        &[(1, 1), (8, 1), (12, 1)],
        0,
    ),
    (
        "deepflow/produce-v9.old-b3b9b60.pcap",
        36333,
        &[(0, 1)],
        &[],
        0,
    ),
    (
        "go-sniffer/kafka.pcap",
        9092,
        &[(0, 1), (3, 1)],
        &[(0, 1), (3, 1)],
        0,
    ),
    (
        "nDPI/kafka.old-5eb468d.pcapng",
        9092,
        &[(0, 1), (3, 1), (18, 1), (22, 1)],
        &[(0, 1), (3, 1), (18, 1), (22, 1)],
        0,
    ),
    (
        "nDPI/kafka.pcap",
        9092,
        &[(0, 2), (3, 4), (18, 4)],
        &[(0, 2), (3, 3), (18, 2)],
        3,
    ),
    (
        "nDPI/kafka.pcapng",
        9092,
        &[(0, 3), (3, 5), (18, 5), (22, 1)],
        &[(0, 3), (3, 4), (18, 3), (22, 1)],
        3,
    ),
];

#[test]
fn public_kafka_captures_are_framed() {
    for (file, port, req, resp, unpaired) in CASES {
        let config = Config {
            kafka_ports: vec![9092, *port],
            ..Config::default()
        };
        let Some((s, sink)) = summary(file, &config) else {
            return;
        };
        eprintln!("{file}: {:?} records={}", s.frames, sink.0.len());
        assert_eq!(s.frames.requests, map(req), "{file}: requests");
        assert_eq!(s.frames.responses, map(resp), "{file}: responses");
        assert_eq!(s.frames.unpaired_responses, *unpaired, "{file}: unpaired");
    }
}

/// The same files with no `--port`: deepflow's broker listens on 36333, which must be found from
/// the bytes because those captures begin with the connection's first request.
#[test]
fn public_kafka_found_without_port_option() {
    for (file, _, req, _, _) in CASES.iter().filter(|c| c.0.starts_with("deepflow/")) {
        let Some((s, _)) = summary(file, &Config::default()) else {
            return;
        };
        assert_eq!(s.frames.requests, map(req), "{file}: requests");
    }
}

/// The nDPI capture starts mid-stream. On one connection a Metadata response arrives whose
/// request was not captured; another connection is picked up with two responses in flight
/// (correlation ids 140 and 141, 470 bytes in all). Each is framed and reported as
/// `response_without_request` with its bytes; none decodes as WriteTxnMarkers, so nothing is
/// invented.
#[test]
fn ndpi_mid_stream_is_reported_not_invented() {
    let Some((_, sink)) = summary("nDPI/kafka.pcapng", &Config::default()) else {
        return;
    };
    let kinds: Vec<&str> = sink
        .0
        .iter()
        .map(|r| match &r.event {
            kafka_pcap::kafka::event::Event::Anomaly(a) => a.kind.as_str(),
            kafka_pcap::kafka::event::Event::Kafka(_) => "kafka",
            kafka_pcap::kafka::event::Event::Unanswered(..) => "unanswered",
        })
        .collect();
    // The response of 131 acknowledges 44 client bytes the capture never gave, and nothing
    // of the client came after: at the connection's end they are a gap (43 bytes: the
    // acknowledgment's last sequence number may be a FIN).
    assert_eq!(
        kinds,
        vec![
            "response_without_request",
            "response_without_request",
            "response_without_request",
            "gap"
        ]
    );
    let corr: Vec<i32> = sink
        .0
        .iter()
        .filter_map(|r| match &r.event {
            kafka_pcap::kafka::event::Event::Anomaly(a) => a.correlation_id,
            _ => None,
        })
        .collect();
    // 131's packet acknowledges client bytes the capture never gave: it is held back for the
    // next packet of its connection (there is none: it comes at the capture's end).
    assert_eq!(corr, vec![140, 141, 131]);
}

/// Every file under ../shared/captures/public, odd and damaged ones included, runs through the
/// pipeline without a panic: either it is read (damage becomes anomaly records) or it is
/// rejected as not a capture (snoop, a headerless fragment).
#[test]
fn every_public_file_runs_without_panic() {
    let Some(d) = shared_dir() else { return };
    let mut files = Vec::new();
    let mut stack = vec![d];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if !matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("md" | "txt") | None
            ) {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() > 100, "{} files", files.len());
    let mut rejected = Vec::new();
    for f in &files {
        let mut sink = VecSink::default();
        match run(
            std::fs::File::open(f).unwrap(),
            &Config::default(),
            &mut sink,
        ) {
            Ok(_) => {}
            Err(kafka_pcap::Error::NotACapture(_)) => {
                rejected.push(f.file_name().unwrap().to_string_lossy().into_owned())
            }
            Err(e) => panic!("{}: {e}", f.display()),
        }
    }
    rejected.sort();
    assert_eq!(rejected, vec!["err-eof.bin", "solaris.snoop"]);
}

fn sink_len(debug: &str) -> usize {
    debug.matches("Record {").count()
}

/// PcapPlusPlus's zstd-compressed pcapng (159 packets on two interfaces, 15 TCP streams) gives
/// exactly the records and statistics of the uncompressed file beside it.
#[test]
fn a_public_zstd_pcapng_reads_as_its_plain_copy() {
    let Some(d) = shared_dir() else { return };
    let plain = d.join("pcapplusplus/pcapng-example.pcapng");
    let zst = d.join("pcapplusplus/pcapng-example.pcapng.zst");
    let read = |p: &std::path::Path| {
        let mut sink = VecSink::default();
        let stats = run(
            std::fs::File::open(p).unwrap(),
            &Config::default(),
            &mut sink,
        )
        .unwrap();
        (
            format!("{:?}", sink.0),
            (stats.packets, stats.bytes, stats.cut_packets, stats.streams),
        )
    };
    let (want, counts) = read(&plain);
    // Two records: frame 2 dated 2061 between packets of 2014 (a lone packet ahead), and
    // frame 60's timestamp after the year 9999.
    assert_eq!(sink_len(&want), 2);
    assert!(
        want.contains("frame 2 is dated 2061-09-21T12:39:57.938836488Z: it is 17037.1 days"),
        "{want}"
    );
    assert_eq!(counts, (159, 18075, 39, 15));
    assert_eq!(read(&zst), (want, counts));
}
