//! `--write-pcap FILE`: the packets that carried the records written, copied byte for byte
//! with their link type and timestamps, open again to the same message records.
//!
//! Each test runs the binary twice: once on a capture of `captures/` with `--write-pcap`, then
//! on the file it wrote. The message records of the second run equal those of the first but
//! for what a new file renumbers (`frame`, `stream`, `request_frame`). The packets written are
//! compared with the input's, read by the library's capture reader.

mod common;

use assert_cmd::Command;
use common::tunnels::{eth_ip, fragment_v4};
use common::{request_with_corr, response_with_corr, Conversation, Endian, PcapWriter, Resolution};
use kafka_pcap::capture::{read_capture_slice, CaptureItem};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn captures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("captures")
}

fn bin() -> Command {
    Command::cargo_bin("kafka-pcap").unwrap()
}

/// Runs the binary; (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = bin().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The message records of an NDJSON output (exchanges' two sides as they are), without the
/// fields a new file renumbers.
fn messages(ndjson: &str) -> Vec<Value> {
    fn strip(v: &mut Value) {
        if let Some(o) = v.as_object_mut() {
            o.remove("frame");
            o.remove("stream");
            if let Some(k) = o.get_mut("kafka").and_then(Value::as_object_mut) {
                k.remove("request_frame");
            }
            if let Some(x) = o.get_mut("exchange").and_then(Value::as_object_mut) {
                x.remove("request_frame");
                x.remove("response_frame");
            }
        }
    }
    ndjson
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event_type"] != "anomaly")
        .map(|mut v| {
            strip(&mut v);
            v
        })
        .collect()
}

/// Every packet of a capture file: (frame, link type, seconds, nanoseconds, bytes, length).
type Packet = (u64, i32, i64, u32, Vec<u8>, u32);

fn packets(path: &Path) -> Vec<Packet> {
    let data = std::fs::read(path).unwrap();
    let mut v = Vec::new();
    read_capture_slice(&data, |item| {
        if let CaptureItem::Packet(p) = item {
            v.push((
                p.frame,
                p.linktype,
                p.ts.secs,
                p.ts.nanos,
                p.data.to_vec(),
                p.orig_len,
            ));
        }
        Ok(())
    })
    .unwrap();
    v
}

/// Runs `args` on `capture` with `--write-pcap` into a temporary file named `name`; checks
/// that the file opens again to the same message records (with `again` added), that every
/// packet in it is the input's packet, unchanged, in capture order; returns the input's frame
/// numbers of the packets written, and the first run's output.
fn round_trip(capture: &Path, args: &[&str], again: &[&str], name: &str) -> (Vec<u64>, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(name);
    let (out_s, capture_s) = (out.to_str().unwrap(), capture.to_str().unwrap());
    let mut first: Vec<&str> = args.to_vec();
    first.extend(["--write-pcap", out_s, capture_s]);
    let (code, stdout, stderr) = run(&first);
    assert_eq!(code, 0, "{stderr}");
    let mut second: Vec<&str> = again.to_vec();
    second.push(out_s);
    let (code, stdout2, stderr2) = run(&second);
    assert_eq!(code, 0, "{stderr2}");
    let (a, b) = (messages(&stdout), messages(&stdout2));
    assert!(!a.is_empty(), "no message records in {stdout}");
    assert_eq!(a, b, "records differ after --write-pcap");

    let input = packets(capture);
    let written = packets(&out);
    assert!(
        stderr.contains(&format!("wrote {} packets to {out_s}", written.len())),
        "{stderr}"
    );
    let mut frames = Vec::new();
    let mut at = 0;
    let mut cut = 0;
    for (i, w) in written.iter().enumerate() {
        assert_eq!(w.0, i as u64 + 1, "the new file numbers its own frames");
        // The input's packet, or (an acknowledgment carrying another message's bytes) its
        // first bytes, its length on the wire kept.
        let found = input[at..]
            .iter()
            .position(|p| {
                (p.1, p.2, p.3, p.5) == (w.1, w.2, w.3, w.5)
                    && (p.4 == w.4 || (w.4.len() >= 40 && p.4.starts_with(&w.4)))
            })
            .unwrap_or_else(|| panic!("written packet {} is no packet of the input", w.0));
        at += found;
        if input[at].4 != w.4 {
            cut += 1;
        }
        frames.push(input[at].0);
        at += 1;
    }
    if cut > 0 {
        assert!(
            stderr.contains(&format!("({cut} cut after their TCP header")),
            "{stderr}"
        );
    } else {
        assert!(!stderr.contains("cut after their TCP header"), "{stderr}");
    }
    (frames, stdout)
}

#[test]
fn one_exchange_is_its_segments_and_the_handshake() {
    let cap = captures().join("v1-9092.pcap");
    let (frames, stdout) = round_trip(
        &cap,
        &["--producer-id", "4003"],
        &["--producer-id", "4003"],
        "one.pcap",
    );
    // The handshake (1-3), the segment with the request (22, which carries two other
    // requests too) and the one with its response (24), each followed by the packet that
    // acknowledges it (23, 25).
    assert_eq!(frames, vec![1, 2, 3, 22, 23, 24, 25]);
    assert_eq!(stdout.lines().count(), 2);
}

#[test]
fn a_frame_of_many_segments_gives_all_of_them() {
    // The Produce request of v1-9092 (200,052 bytes) spans frames 12 to 19; its response is
    // in 21.
    let cap = captures().join("v1-9092.pcap");
    let (frames, _) = round_trip(&cap, &["--api", "Produce"], &["--api", "Produce"], "p.pcap");
    // Its segments, the broker's acknowledgments between them (14, 16, 20), and the
    // client's of the response (22, a segment of other requests).
    let want: Vec<u64> = (1..=3).chain(12..=22).collect();
    assert_eq!(frames, want);
}

#[test]
fn every_api_and_every_connection_round_trips() {
    for name in ["txn-v2-flow.pcap", "txn-v1-flow.pcap", "txn-fenced.pcap"] {
        let cap = captures().join(name);
        round_trip(&cap, &["--all-apis"], &["--all-apis"], "all.pcap");
    }
}

#[test]
fn pairs_out_of_order_segments_and_retransmissions_round_trip() {
    for name in [
        "tcp-out-of-order.pcap",
        "tcp-retransmit-new-boundaries.pcap",
        "tcp-seq-wraparound.pcap",
        "tcp-port-reuse.pcap",
    ] {
        let cap = captures().join(name);
        round_trip(&cap, &["--pair"], &["--pair"], "pairs.pcap");
        round_trip(&cap, &[], &[], "plain.pcap");
    }
}

#[test]
fn link_types_tunnels_and_nanosecond_timestamps_are_kept() {
    for name in [
        "tunnel-vxlan.pcap",
        "tunnel-nested.pcap",
        "tunnel-pppoe.pcap",
        "tunnel-two-vnis.pcap",
    ] {
        round_trip(&captures().join(name), &[], &[], "t.pcap");
    }
    let ns = captures().join("v0-v2-19092-nanosec.pcap");
    let dir = tempfile::tempdir().unwrap();
    for out in ["ns.pcap", "ns.pcapng"] {
        let p = dir.path().join(out);
        let (code, _, stderr) = run(&[
            "--port",
            "19092",
            "--write-pcap",
            p.to_str().unwrap(),
            ns.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{stderr}");
        let data = std::fs::read(&p).unwrap();
        let magic: &[u8] = if out.ends_with("ng") {
            &[0x0a, 0x0d, 0x0d, 0x0a]
        } else {
            &[0x4d, 0x3c, 0xb2, 0xa1]
        };
        assert_eq!(&data[..4], magic, "{out}");
        let input = packets(&ns);
        let written = packets(&p);
        assert!(!written.is_empty());
        for w in &written {
            assert!(
                input
                    .iter()
                    .any(|i| (i.1, i.2, i.3, &i.4) == (w.1, w.2, w.3, &w.4)),
                "{out}: packet {} changed",
                w.0
            );
        }
        assert!(written.iter().any(|w| w.3 % 1000 != 0), "nanoseconds kept");
    }
    round_trip(&ns, &["--port", "19092"], &["--port", "19092"], "n.pcapng");
    // A microsecond capture stays one in pcapng: the same `ts` strings, 6 digits.
    let (_, out) = round_trip(&captures().join("v1-9092.pcap"), &[], &[], "us.pcapng");
    assert!(
        out.contains(r#""ts":"2026-11-29T21:22:01.228381Z""#),
        "{out}"
    );
}

#[test]
fn a_compressed_capture_is_read_again_and_written_plain() {
    let (frames, _) = round_trip(
        &captures().join("v1-9092.pcap.zst"),
        &["--producer-id", "4003"],
        &["--producer-id", "4003"],
        "z.pcap",
    );
    assert_eq!(frames, vec![1, 2, 3, 22, 23, 24, 25]);
}

#[test]
fn nothing_kept_is_an_empty_capture() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("none.pcap");
    let cap = captures().join("v1-9092.pcap");
    let (code, _, stderr) = run(&[
        "--producer-id",
        "1",
        "--write-pcap",
        p.to_str().unwrap(),
        cap.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("wrote 0 packets"), "{stderr}");
    assert_eq!(std::fs::read(&p).unwrap().len(), 24);
    assert!(packets(&p).is_empty());
}

#[test]
fn standard_input_several_captures_and_the_input_itself_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("o.pcap");
    let cap = captures().join("v1-9092.pcap");
    let (o, c) = (p.to_str().unwrap(), cap.to_str().unwrap());
    let out = bin()
        .args(["--write-pcap", o, "-"])
        .write_stdin(std::fs::read(&cap).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("standard input cannot be read again"), "{err}");
    let (code, _, err) = run(&["--write-pcap", o, c, c]);
    assert_eq!(code, 2);
    assert!(err.contains("one capture; 2 were given"), "{err}");
    let copy = dir.path().join("copy.pcap");
    std::fs::copy(&cap, &copy).unwrap();
    let copy_s = copy.to_str().unwrap();
    let (code, _, err) = run(&["--write-pcap", copy_s, copy_s]);
    assert_eq!(code, 2);
    assert!(
        err.contains("would overwrite the capture being read"),
        "{err}"
    );
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&cap).unwrap());
    let (code, _, err) = run(&["--write-pcap", "/nonexistent-dir/o.pcap", c]);
    assert_eq!(code, 2);
    assert!(
        err.contains("/nonexistent-dir/o.pcap: cannot create"),
        "{err}"
    );
}

#[test]
fn a_real_broker_capture_round_trips() {
    let Some(Ok(dir)) = common::shared("captures/real-broker").map(std::fs::read_dir) else {
        return;
    };
    let mut caps: Vec<PathBuf> = dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    caps.sort();
    assert!(!caps.is_empty());
    for cap in caps {
        round_trip(&cap, &["--pair"], &["--pair"], "rb.pcap");
    }
}

#[test]
fn a_failed_run_leaves_file_as_it_was_and_a_hard_link_to_the_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let keep = dir.path().join("keep.pcap");
    std::fs::write(&keep, b"what was there").unwrap();
    let k = keep.to_str().unwrap();
    let (code, _, err) = run(&["--write-pcap", k, "/nonexistent/input.pcap"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = run(&["--write-pcap", k, "Cargo.toml"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(std::fs::read(&keep).unwrap(), b"what was there");
    // Nothing else was left in the directory.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    let cap = dir.path().join("in.pcap");
    std::fs::copy(captures().join("v1-9092.pcap"), &cap).unwrap();
    let link = dir.path().join("link.pcap");
    std::fs::hard_link(&cap, &link).unwrap();
    let (code, _, err) = run(&[
        "--write-pcap",
        link.to_str().unwrap(),
        cap.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("would overwrite the capture being read"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&cap).unwrap(),
        std::fs::read(captures().join("v1-9092.pcap")).unwrap()
    );
    // A device is written to, not replaced: /dev/full refuses the bytes.
    use std::os::unix::fs::FileTypeExt;
    if std::fs::metadata("/dev/full").is_ok_and(|m| m.file_type().is_char_device()) {
        let (code, _, err) = run(&["--write-pcap", "/dev/full", cap.to_str().unwrap()]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("writing: No space left on device"), "{err}");
        assert!(std::fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device());
    }
    // Both thrown away: --write-pcap /dev/null with standard output on /dev/null is no mix.
    if std::fs::metadata("/dev/null").is_ok_and(|m| m.file_type().is_char_device()) {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kafka-pcap"))
            .args(["--write-pcap", "/dev/null"])
            .arg(&cap)
            .stdout(std::fs::File::create("/dev/null").unwrap())
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(err.contains("packets to /dev/null"), "{err}");
    }
    let d = dir.path().to_str().unwrap();
    let (code, _, err) = run(&["--write-pcap", d, cap.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!(
            "kafka-pcap: --write-pcap {d}: names a directory; name a file in it ({d}/out.pcap)"
        )),
        "{err}"
    );
}

/// What a transaction record says of itself, times and frame numbers aside (a file of its
/// packets numbers its own frames, and its record is written at another moment).
fn transaction_facts(ndjson: &str) -> Vec<Value> {
    ndjson
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event_type"] == "transaction")
        .map(|v| {
            let t = &v["transaction"];
            let parts: Vec<Value> = t["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    serde_json::json!([
                        p["topic"],
                        p["partition"],
                        p["records"],
                        p["marker"],
                        p["marker_written"],
                        p["marker_error"]
                    ])
                })
                .collect();
            serde_json::json!([
                t["transactional_id"],
                t["producer_id"],
                t["producer_epoch"],
                t["outcome"],
                t["ended_by"],
                t["requested"],
                parts,
                t["errors"]
                    .as_array()
                    .map(|e| e.iter().map(|e| e["error"].clone()).collect::<Vec<_>>())
            ])
        })
        .collect()
}

/// `--transactions --write-pcap`: each transaction record written brings the packets of its
/// messages (every segment and its connection's handshake), so that the file read again
/// gives the same transaction, and its messages are those the record lists.
#[test]
fn transactions_write_the_packets_of_their_messages() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.pcap");
    let (p_s, cap) = (p.to_str().unwrap(), captures().join("txn-v1-flow.pcap"));
    let cap_s = cap.to_str().unwrap();
    let (code, first, err) = run(&["--transactions", "--write-pcap", p_s, cap_s]);
    assert_eq!(code, 0, "{err}");
    assert!(!packets(&p).is_empty());
    assert!(err.contains("those of the 2 records written"), "{err}");
    let (_, again, _) = run(&["--transactions", p_s]);
    assert_eq!(transaction_facts(&first).len(), 2);
    assert_eq!(transaction_facts(&again), transaction_facts(&first));
    // Every message the records list is in the file, whole: (API, correlation id, request or
    // response) of each frame listed, as the input's records give them.
    let key = |v: &Value| {
        (
            v["kafka"]["api_name"].clone(),
            v["kafka"]["correlation_id"].clone(),
            v["kafka"]["message"].clone(),
        )
    };
    let of = |args: &[&str]| -> Vec<Value> {
        run(args)
            .1
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["event_type"] == "kafka" && v["kafka"]["truncated"].is_null())
            .collect()
    };
    let input = of(&["--all-apis", cap_s]);
    let read = of(&["--all-apis", p_s]);
    let read: Vec<_> = read.iter().map(key).collect();
    let mut listed = 0;
    for t in first
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
    {
        for f in t["transaction"]["frames"].as_array().unwrap() {
            let m = input.iter().find(|v| v["frame"] == *f).unwrap();
            assert!(read.contains(&key(m)), "frame {f}: {m}");
            listed += 1;
        }
    }
    assert_eq!(listed, 20);
    // Its producer's InitProducerId exchange too (which transactional id it is, its
    // timeout), but not the whole capture: not the Metadata exchange before it.
    assert_eq!(
        read.iter().filter(|k| k.0 == "InitProducerId").count(),
        2,
        "{read:?}"
    );
    assert!(!read.iter().any(|k| k.0 == "Metadata"), "{read:?}");
}

/// `--transactional-id` and `--outcome` choose the transactions whose packets are written:
/// rb2-01's aborted transactions of mt-k, and nothing else.
#[test]
fn transaction_filters_choose_the_packets_written() {
    let Some(f) = common::shared("captures/real-broker-2/rb2-01-many-txn-lo.pcap") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.pcapng");
    let p_s = p.to_str().unwrap();
    let args = [
        "--transactions",
        "--transactional-id",
        "mt-k",
        "--outcome",
        "aborted",
    ];
    let mut first_args = args.to_vec();
    first_args.extend(["--write-pcap", p_s, f.to_str().unwrap()]);
    let (code, first, err) = run(&first_args);
    assert_eq!(code, 0, "{err}");
    let (_, again, _) = run(&["--transactions", p_s]);
    let (a, b) = (transaction_facts(&first), transaction_facts(&again));
    assert_eq!(a.len(), 10);
    assert_eq!(b, a);
    assert!(
        b.iter().all(|t| t[0] == "mt-k" && t[3] == "aborted"),
        "{b:?}"
    );
}

/// Ethernet frames as a microsecond capture, one every millisecond.
fn capture_of(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
    for (i, f) in frames.iter().enumerate() {
        w.packet(1_767_225_600, 1000 * i as u32, f);
    }
    w.into_bytes()
}

/// Writes `frames` as a capture, runs `--write-pcap` with `args` on it; the input's frame
/// numbers of the packets written, and the first run's stdout.
fn written_frames(frames: &[Vec<u8>], args: &[&str]) -> (Vec<u64>, String) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.pcap");
    std::fs::write(&input, capture_of(frames)).unwrap();
    round_trip(&input, args, args, "out.pcap")
}

#[test]
fn an_anomaly_at_the_capture_end_writes_no_packet_of_another_connection() {
    // A request never answered (its `no_response` comes at the end of the capture, at the
    // capture's last packet), then an HTTP connection.
    let kafka = Conversation::new(false, 9092).client(&request_with_corr(1));
    let mut http = Conversation::new(false, 80).client(b"GET / HTTP/1.1\r\n\r\n");
    http.client_port = 50000;
    let mut frames: Vec<Vec<u8>> = Vec::new();
    let k = kafka.packets();
    // Without its closing packets: the connection is still open at the end.
    frames.extend(k[..k.len() - 3].iter().map(|p| eth_ip(&[], &p.ip)));
    let n = frames.len() as u64;
    frames.extend(http.packets().iter().map(|p| eth_ip(&[], &p.ip)));
    let (written, out) = written_frames(&frames, &[]);
    assert!(out.contains("no_response"), "{out}");
    assert!(
        written.iter().all(|&f| f <= n),
        "{written:?} (HTTP from {})",
        n + 1
    );
}

#[test]
fn fragments_of_a_segment_held_out_of_order_are_all_written() {
    // Two requests; the second, in three IP fragments, arrives before the first.
    let c = Conversation::new(false, 9092)
        .client(&request_with_corr(1))
        .client(&request_with_corr(2))
        .server(&response_with_corr(1))
        .server(&response_with_corr(2));
    let p = c.packets();
    let data: Vec<usize> = (0..p.len()).filter(|&i| !p[i].payload.is_empty()).collect();
    let (first, second) = (data[0], data[1]);
    let mut frames: Vec<Vec<u8>> = p[..first].iter().map(|q| eth_ip(&[], &q.ip)).collect();
    let parts = fragment_v4(&p[second].ip, 7, 16);
    assert!(parts.len() >= 3);
    frames.extend(parts.iter().map(|f| eth_ip(&[], f)));
    frames.push(eth_ip(&[], &p[first].ip));
    frames.extend(p[second + 1..].iter().map(|q| eth_ip(&[], &q.ip)));
    let (written, _) = written_frames(&frames, &["--pair"]);
    let fragments: Vec<u64> = (first as u64 + 1..=(first + parts.len()) as u64).collect();
    for f in &fragments {
        assert!(written.contains(f), "fragment {f} missing from {written:?}");
    }
    assert!(written.contains(&(first as u64 + parts.len() as u64 + 1)));
}

#[test]
fn on_a_port_found_by_probing_held_segments_name_their_packets() {
    // captures/tcp-out-of-order.pcap moved from port 9092 to 19092 (found by its bytes).
    let mut data = std::fs::read(captures().join("tcp-out-of-order.pcap")).unwrap();
    let mut at = 24;
    while at + 16 <= data.len() {
        let len = u32::from_le_bytes(data[at + 8..at + 12].try_into().unwrap()) as usize;
        let tcp = at + 16 + 14 + 20;
        for port in [tcp, tcp + 2] {
            if data[port..port + 2] == 9092u16.to_be_bytes() {
                data[port..port + 2].copy_from_slice(&19092u16.to_be_bytes());
            }
        }
        at += 16 + len;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("p.pcap");
    std::fs::write(&input, &data).unwrap();
    let (written, out) = round_trip(&input, &["--pair"], &["--pair"], "p-out.pcap");
    assert_eq!(out.lines().count(), 3, "{out}");
    // The request's first segment (frame 4, held until frame 5) is there.
    assert!(written.contains(&4) && written.contains(&5), "{written:?}");
}

/// Two names swapped (`--write-pcap big.pcap small.pcap`) would replace a capture with an
/// extract of another: refused, as is a read-only file (replaced by a rename, which its mode
/// would not stop) and a compressed-looking name; a rerun that replaces an earlier extract is
/// not.
#[test]
fn swapped_names_read_only_files_and_compressed_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.pcap");
    std::fs::copy(captures().join("v1-9092.pcap"), &big).unwrap();
    let small = dir.path().join("small.pcapng");
    let (b, s) = (big.to_str().unwrap(), small.to_str().unwrap());
    let (code, _, err) = run(&[
        "--transactions",
        "--outcome",
        "aborted",
        "--write-pcap",
        s,
        b,
    ]);
    assert_eq!(code, 0, "{err}");
    let extract = std::fs::read(&small).unwrap();
    assert!(extract.len() < std::fs::metadata(&big).unwrap().len() as usize);
    let before = std::fs::read(&big).unwrap();
    let (code, _, err) = run(&["--transactions", "--write-pcap", b, s]);
    assert_eq!(code, 2);
    assert!(err.contains("were the two names swapped?"), "{err}");
    assert_eq!(std::fs::read(&big).unwrap(), before);
    // Run again: the extract is replaced (by every message's packets this time).
    let (code, _, err) = run(&["--all-apis", "--write-pcap", s, b]);
    assert_eq!(code, 0, "{err}");
    let again = std::fs::read(&small).unwrap();
    assert!(
        again.len() > extract.len(),
        "{} {}",
        again.len(),
        extract.len()
    );
    // Read-only.
    let mut perms = std::fs::metadata(&small).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&small, perms).unwrap();
    let kept = std::fs::read(&small).unwrap();
    let (code, _, err) = run(&["--transactions", "--write-pcap", s, b]);
    assert_eq!(code, 2);
    assert!(err.contains("the file is read-only"), "{err}");
    assert!(std::fs::read(&small).unwrap() == kept);
    let gz = dir.path().join("x.pcap.GZ");
    let (code, _, err) = run(&["--write-pcap", gz.to_str().unwrap(), b]);
    assert_eq!(code, 2);
    assert!(err.contains("ending in .GZ would mislead"), "{err}");
    assert!(!gz.exists());
}

/// A `--write-pcap` file of `--transactions` reads back to the same transactions (from a
/// hostile review): the packet acknowledging a kept response may carry a client's next
/// request (a zombie's late Produce, a fenced zombie's EndTxn), which read back was a request
/// without its answer and a phantom open transaction; it is written cut after its TCP
/// header now. And a transaction fenced by a new instance's InitProducerId brings that
/// exchange (and its refused retries), so that read back it is still `fenced`.
#[test]
fn transactions_read_back_the_same() {
    let summary = |out: &str| -> Vec<String> {
        out.lines()
            .filter_map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).ok()?;
                let t = v.get("transaction")?;
                Some(format!(
                    "{} {} {} {} {}",
                    t["producer_id"],
                    t["producer_epoch"],
                    t["outcome"],
                    t["reason"],
                    t["partitions"].as_array().map_or(0, Vec::len)
                ))
            })
            .collect()
    };
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile");
    for cap in [
        data.join("produce_retry.pcap"),
        data.join("two_pids.pcap"),
        data.join("late_produce_verified.pcap"),
        captures().join("txn-fenced.pcap"),
    ] {
        let out = dir.path().join("t.pcap");
        let _ = std::fs::remove_file(&out);
        let (c, o) = (cap.to_str().unwrap(), out.to_str().unwrap());
        let (code, first, err) = run(&["--transactions", "--write-pcap", o, c]);
        assert_eq!(code, 0, "{err}");
        let (code, again, err) = run(&["--transactions", o]);
        assert_eq!(code, 0, "{err}");
        let (a, b) = (summary(&first), summary(&again));
        assert!(!a.is_empty(), "{c}");
        assert_eq!(a, b, "{c}");
    }
}

#[test]
fn a_fenced_transaction_s_extract_holds_the_answer_that_closed_it_whole() {
    // txn-fenced: the new instance's InitProducerId (frame 28, refused CONCURRENT_TRANSACTIONS)
    // fenced app-zombie; its retry (38) was accepted in 39, the message that closed the
    // transaction. The extract held the retry whole and its answer cut after its TCP header:
    // read back, a `gap` said a snapshot length cut it and a `no_response` followed.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fenced.pcap");
    let cap = captures().join("txn-fenced.pcap");
    let (code, _, err) = run(&[
        "--transactions",
        "--write-pcap",
        out.to_str().unwrap(),
        cap.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("wrote 28 packets"), "{err}");
    let (code, again, err) = run(&["--all-apis", "--format", "text", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // (Gaps where messages of no record were are expected: the extract leaves them out.)
    assert!(
        !again.contains("no_response") && !again.contains("snapshot length"),
        "{again}"
    );
    assert!(
        again.contains("InitProducerId v4 response corr=3")
            && again.contains("error=NONE producer_id=8000 producer_epoch=6"),
        "{again}"
    );
}

/// From a hostile review: a `refused_request` (a zombie's AddPartitionsToTxn and EndTxn, of a
/// transaction the capture does not hold) is written with its request's packet, not only its
/// response's: read back, the extract tells the same two verdicts (it held the responses
/// alone, answering no request).
#[test]
fn a_refused_request_is_written_with_its_request() {
    let two_pids =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/txn-hostile/two_pids.pcap");
    let dir = tempfile::tempdir().unwrap();
    let late = dir.path().join("late.pcap");
    let frames: Vec<u64> = (1..15).collect();
    std::fs::write(
        &late,
        common::drop_frames(&std::fs::read(&two_pids).unwrap(), &frames),
    )
    .unwrap();
    let out = dir.path().join("out.pcap");
    let (out_s, late_s) = (out.to_str().unwrap(), late.to_str().unwrap());
    let (code, first, stderr) = run(&["--transactions", "--errors", "--write-pcap", out_s, late_s]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("wrote 4 packets"), "{stderr}");
    let (code, again, stderr) = run(&["--transactions", "--errors", out_s]);
    assert_eq!(code, 0, "{stderr}");
    let kinds = |s: &str| -> Vec<String> {
        s.lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                format!("{} {}", v["anomaly"]["kind"], v["anomaly"]["request_frame"])
            })
            .collect()
    };
    assert_eq!(
        kinds(&first),
        ["\"refused_request\" 1", "\"refused_request\" 5"]
    );
    assert_eq!(
        kinds(&again),
        ["\"refused_request\" 1", "\"refused_request\" 3"]
    );
}
