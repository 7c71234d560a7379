//! The `kafka-pcap` command as a user runs it: exit codes, standard input, unreadable and
//! non-capture inputs, several inputs, and a reader that closes the pipe early.

mod common;

use assert_cmd::Command;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;

fn cap(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("captures")
        .join(name)
}

fn bin() -> Command {
    Command::cargo_bin("kafka-pcap").unwrap()
}

/// Runs `cmd`, which must succeed; returns its output.
fn succeeds(cmd: &mut Command) -> std::process::Output {
    cmd.assert().success().get_output().clone()
}

/// Runs `cmd`, which must exit with status 2; returns its output and standard error.
fn exits_2(cmd: &mut Command) -> (std::process::Output, String) {
    let out = cmd.assert().code(2).get_output().clone();
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    (out, err)
}

#[test]
fn decodes_a_capture() {
    let out = succeeds(bin().arg(cap("seed-9092.pcap")));
    let text = String::from_utf8(out.stdout).unwrap();
    let golden = std::fs::read_to_string(cap("seed-9092.ndjson")).unwrap();
    assert_eq!(text, golden);
    assert!(out.stderr.is_empty());
}

#[test]
fn reads_standard_input() {
    let bytes = std::fs::read(cap("v1-9092.pcap")).unwrap();
    let out = succeeds(bin().arg("-").write_stdin(bytes));
    let golden = std::fs::read_to_string(cap("v1-9092.ndjson")).unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), golden);
}

#[test]
fn missing_file_exits_2_naming_it() {
    let (out, err) = exits_2(bin().arg("no/such/file.pcap"));
    assert!(out.stdout.is_empty());
    assert!(
        err.starts_with("kafka-pcap: no/such/file.pcap: cannot open:"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn not_a_capture_exits_2() {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let out = bin().arg(&readme).assert().code(2).get_output().clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(
            "README.md: not a pcap or pcapng capture: unknown magic number 0x23206b61 (it is \
             text, not a capture: write one with tcpdump -w FILE)"
        ),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

/// An empty file, a tar archive and bytes of no known kind are each named for what they are.
#[test]
fn not_a_capture_says_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pcap");
    std::fs::write(&empty, b"").unwrap();
    // A tar header: the member's name first, `ustar` at byte 257.
    let mut tar = vec![0u8; 1024];
    tar[..10].copy_from_slice(b"broker.pca");
    tar[257..263].copy_from_slice(b"ustar\0");
    let tarred = dir.path().join("capture.tar");
    std::fs::write(&tarred, &tar).unwrap();
    let other = dir.path().join("other.bin");
    std::fs::write(&other, [0x00, 0x01, 0x02, 0x03, 0xff, 0xfe]).unwrap();
    for (f, want) in [
        (
            &empty,
            "empty.pcap: not a pcap or pcapng capture: it is empty (0 bytes)",
        ),
        (
            &tarred,
            "capture.tar: not a pcap or pcapng capture: unknown magic number 0x62726f6b (a tar \
             archive: extract it first, tar xf FILE, then read the capture inside)",
        ),
        (
            &other,
            "other.bin: not a pcap or pcapng capture: unknown magic number 0x00010203 (not \
             pcap, pcapng, or a compressed capture)",
        ),
    ] {
        let out = bin().arg(f).assert().code(2).get_output().clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(want), "{err}");
    }
}

#[test]
fn unreadable_input_exits_2() {
    // A directory opens but cannot be read: its captures are what was meant.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
    let out = bin().arg(&dir).assert().code(2).get_output().clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(&format!(
            "captures: is a directory; name the captures in it ({}/*.pcap)",
            dir.display()
        )),
        "{err}"
    );
}

#[test]
fn standard_input_twice_and_port_0_are_refused() {
    // Two readers of one standard input would each get part of the file (both broken).
    let capture = std::fs::read(cap("v1-9092.pcap")).unwrap();
    let (out, err) = exits_2(bin().args(["-", "-"]).write_stdin(capture));
    assert!(
        err.contains("standard input (-) can be read only once"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    let (out, err) = exits_2(bin().args(["--port", "0"]).arg(cap("v1-9092.pcap")));
    assert!(out.stdout.is_empty());
    assert!(err.contains("0 is not in 1..=65535"), "{err}");
}

#[test]
fn empty_standard_input_is_not_a_capture() {
    let (out, err) = exits_2(bin().arg("-").write_stdin(Vec::new()));
    assert!(out.stdout.is_empty());
    assert!(
        err.contains("standard input: not a pcap or pcapng capture"),
        "{err}"
    );
}

#[test]
fn several_inputs_are_named_and_a_bad_one_does_not_stop_the_rest() {
    let out = bin()
        .arg(cap("seed-9092.pcap"))
        .arg("missing.pcap")
        .arg(cap("v1-9092.pcap"))
        .assert()
        .code(2)
        .get_output()
        .clone();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2 + 6);
    assert!(lines[0]["capture"]
        .as_str()
        .unwrap()
        .ends_with("seed-9092.pcap"));
    assert!(lines[2]["capture"]
        .as_str()
        .unwrap()
        .ends_with("v1-9092.pcap"));
    // Frame numbers restart with each file.
    assert_eq!(lines[0]["frame"], 4);
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("missing.pcap: cannot open"));
}

/// Live input (`tcpdump -U -w - | kafka-pcap -`): each record is written as it completes, in
/// every format, not when the input ends. The input stays open (all but its last byte sent)
/// while the first record is read; the wait is bounded only so that a regression fails rather
/// than hangs.
#[test]
fn standard_input_records_are_written_as_they_complete() {
    use std::io::{BufRead, Write};
    let capture = std::fs::read(cap("v1-9092.pcap")).unwrap();
    for format in ["ndjson", "text"] {
        let exe = assert_cmd::cargo::cargo_bin("kafka-pcap");
        let mut child = std::process::Command::new(exe)
            .args(["--format", format, "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&capture[..capture.len() - 1]).unwrap();
        stdin.flush().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = std::io::BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let first = rx.recv_timeout(std::time::Duration::from_secs(60));
        drop(stdin);
        child.wait().unwrap();
        let first = first.unwrap_or_else(|_| panic!("{format}: no record before the input ended"));
        // The first record: the request in frame 10.
        let expected = match format {
            "text" => "10  21:22:01.228381  #0 127.0.0.1:41392 -> 127.0.0.1:9092  WriteTxnMarkers v1 request corr=2",
            _ => "{\"ts\":\"2026-11-29T21:22:01.228381Z\",\"frame\":10,",
        };
        assert!(first.starts_with(expected), "{format}: {first}");
    }
}

#[test]
fn closed_pipe_is_not_an_error() {
    let many: Vec<PathBuf> = (0..400).map(|_| cap("v1-9092.pcap")).collect();
    let (code, err) = closed_early(&many, 100);
    assert_eq!(code, Some(0), "stderr: {err}");
    assert!(err.is_empty(), "{err}");
}

/// Runs the command with `args`, its standard output read for `first` bytes and then closed;
/// its exit code and standard error.
fn closed_early<S: AsRef<std::ffi::OsStr>>(args: &[S], first: usize) -> (Option<i32>, String) {
    let exe = assert_cmd::cargo::cargo_bin("kafka-pcap");
    let mut child = std::process::Command::new(exe)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = vec![0u8; first];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut head)
        .unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status.code(), err)
}

#[test]
fn help_shows_examples_and_exit_codes() {
    let out = bin().arg("--help").assert().success().get_output().clone();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("kafka-pcap --port 9093"));
    assert!(text.contains("Exit codes"));
}

#[test]
fn port_option_accepts_kafka_elsewhere() {
    // 19092 is found from the bytes anyway; naming it changes nothing in the output.
    let a = bin()
        .arg(cap("v0-v2-19092-nanosec.pcap"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let b = bin()
        .args(["--port", "19092"])
        .arg(cap("v0-v2-19092-nanosec.pcap"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(a, b);
    assert_eq!(String::from_utf8(a).unwrap().lines().count(), 6);
}

/// `--api` without WriteTxnMarkers counts its frames but decodes none: `--stats` says so,
/// not "COMMIT markers 0"; with it, the markers are counted.
#[test]
fn stats_say_when_write_txn_markers_were_not_decoded() {
    let stats = |args: &[&str]| {
        let out = bin()
            .args(args)
            .arg("--stats")
            .arg(cap("txn-v2-flow.pcap"))
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stderr).unwrap()
    };
    let without = stats(&["--api", "Produce"]);
    assert!(
        without.contains(
            "WriteTxnMarkers not decoded (1 request framed; --api without WriteTxnMarkers"
        ),
        "{without}"
    );
    assert!(!without.contains("COMMIT markers"), "{without}");
    let with = stats(&["--api", "Produce", "--api", "WriteTxnMarkers"]);
    assert!(with.contains("COMMIT markers 1, ABORT markers 0"), "{with}");
    // Markers decoded but no transaction followed: the anomaly line says the view's are not
    // among them; with --transactions it does not.
    let plain = stats(&[]);
    assert!(
        plain.contains(
            "anomalies: none (transactions not followed: --transactions also decodes the \
             transaction APIs, Produce and Fetch, with their own anomalies, and adds each \
             transaction's outcome and the view's anomalies, such as hanging_transaction and \
             stale_coordinator_epoch)\n"
        ),
        "{plain}"
    );
    let followed = stats(&["--transactions"]);
    assert!(followed.contains("\nanomalies: none\n"), "{followed}");
    // The JSON form: `decoded`.
    for (args, decoded) in [(&["--api", "Produce"][..], false), (&[][..], true)] {
        let out = bin()
            .args(args)
            .arg("--stats=json")
            .arg(cap("txn-v2-flow.pcap"))
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(
            last["stats"]["write_txn_markers"]["decoded"],
            serde_json::json!(decoded),
            "{args:?}"
        );
    }
}

/// With --all-apis or --api Produce/Fetch, one capture's records are written on a second
/// core where there is one (the transaction view reads each record first, and what it gives
/// out follows the record): the output is that of one core (`-j 1`), byte for byte.
#[test]
fn records_written_on_a_second_core_are_those_of_one_core() {
    let modes: [&[&str]; 5] = [
        &["--all-apis"],
        &["--all-apis", "--pair", "--format", "text"],
        &["--transactions", "--all-apis"],
        &["--api", "Produce", "--api", "Fetch", "--format", "json"],
        &["--transactions", "--api", "Fetch", "--stats=json"],
    ];
    let files = [
        "txn-v2-flow.pcap",
        "txn-fenced.pcap",
        "txn-lso-stuck.pcap",
        "api-fetch.pcap",
        "loss-fetch-record-like-pending-response.pcap",
    ];
    for file in files {
        for mode in modes {
            let one = bin().arg("-j1").args(mode).arg(cap(file)).output().unwrap();
            let two = bin().args(mode).arg(cap(file)).output().unwrap();
            assert_eq!(one.status.code(), two.status.code(), "{file} {mode:?}");
            assert_eq!(one.stdout, two.stdout, "{file} {mode:?}");
            assert_eq!(one.stderr, two.stderr, "{file} {mode:?}");
            assert!(!one.stdout.is_empty(), "{file} {mode:?} wrote nothing");
        }
    }
}

#[test]
fn parallel_output_equals_sequential_and_keeps_input_order() {
    let files = [
        cap("v1-9092.pcap"),
        cap("seed-9092.pcap"),
        PathBuf::from("missing.pcap"),
        cap("v0-v2-19092-nanosec.pcap"),
        cap("v1-9092.pcap"),
    ];
    let seq = bin()
        .arg("-j1")
        .args(&files)
        .assert()
        .code(2)
        .get_output()
        .clone();
    let par = bin()
        .arg("-j3")
        .args(&files)
        .assert()
        .code(2)
        .get_output()
        .clone();
    assert_eq!(seq.stdout, par.stdout);
    assert_eq!(seq.stderr, par.stderr);
    let text = String::from_utf8(par.stdout).unwrap();
    let names: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["capture"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let short: Vec<&str> = names
        .iter()
        .map(|n| n.rsplit('/').next().unwrap())
        .collect();
    let mut want = vec!["v1-9092.pcap"; 6];
    want.extend(["seed-9092.pcap"; 2]);
    want.extend(["v0-v2-19092-nanosec.pcap"; 6]);
    want.extend(["v1-9092.pcap"; 6]);
    assert_eq!(short, want);
}

/// Every project capture cut at every 97th byte, through the binary: exit code 0 (or 2, with
/// one line naming the problem, when too little is left to be a capture), never a panic, and
/// every output line valid JSON.
#[test]
fn truncated_captures_never_panic() {
    let dir = std::env::temp_dir().join(format!("kafka-pcap-trunc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut runs = 0;
    for name in ["seed-9092.pcap", "v0-v2-19092-nanosec.pcap", "v1-9092.pcap"] {
        let bytes = std::fs::read(cap(name)).unwrap();
        // Files are cut every 97 bytes; the 200 KB capture is cut every 97th of those.
        let step = if bytes.len() > 20_000 { 97 * 97 } else { 97 };
        let mut cut = 0;
        while cut < bytes.len() {
            let f = dir.join(format!("{name}.{cut}"));
            std::fs::write(&f, &bytes[..cut]).unwrap();
            let out = bin().arg(&f).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!err.contains("panicked"), "{name} cut at {cut}: {err}");
            match out.status.code() {
                // A cut before the first WriteTxnMarkers message leaves the note saying so.
                Some(0) => assert!(
                    err.lines()
                        .all(|l| l.contains(": no WriteTxnMarkers message; ")
                            || l.contains(": no Kafka traffic recognised in ")),
                    "{name} cut at {cut}: {err}"
                ),
                Some(2) => {
                    assert!(cut < 60, "{name} cut at {cut} rejected: {err}");
                    assert_eq!(err.lines().count(), 1, "{err}");
                    assert!(err.contains("not a pcap or pcapng capture"), "{err}");
                }
                other => panic!("{name} cut at {cut}: exit {other:?}: {err}"),
            }
            for line in String::from_utf8(out.stdout).unwrap().lines() {
                serde_json::from_str::<serde_json::Value>(line)
                    .unwrap_or_else(|e| panic!("{name} cut at {cut}: {e}: {line}"));
            }
            std::fs::remove_file(&f).unwrap();
            runs += 1;
            cut += step;
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(runs > 30, "{runs}");
}

#[test]
fn stats_json_is_a_last_record_with_known_counts() {
    let out = succeeds(bin().arg("--stats=json").arg(cap("v1-9092.pcap")));
    let text = String::from_utf8(out.stdout).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["event_type"], "stats");
    let s = &last["stats"];
    assert_eq!(s["packets"], 28);
    assert_eq!(s["tcp_streams"], 1);
    // The capture's first and last packets.
    assert_eq!(last["ts"], "2026-11-29T21:22:01.197708Z");
    assert_eq!(last["ts_end"], "2026-11-29T21:22:01.289332Z");
    // Arrays of objects: what is counted is a value, never a key.
    let apis: Vec<(i64, &str, u64, u64, u64)> = s["apis"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["api_key"].as_i64().unwrap(),
                a["api_name"].as_str().unwrap(),
                a["requests"].as_u64().unwrap(),
                a["responses"].as_u64().unwrap(),
                a["latency_us"]["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        apis,
        vec![
            (0, "Produce", 1, 1, 1),
            (3, "Metadata", 2, 2, 2),
            (18, "ApiVersions", 1, 1, 1),
            (27, "WriteTxnMarkers", 3, 3, 3)
        ]
    );
    let w = &s["write_txn_markers"];
    assert_eq!(
        (w["commit_markers"].as_u64(), w["abort_markers"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(
        w["by_version"],
        serde_json::json!([{"api_version": 1, "requests": 3, "responses": 3}])
    );
    assert_eq!(
        w["partition_errors"],
        serde_json::json!([
            {"error": "INVALID_PRODUCER_EPOCH", "count": 3},
            {"error": "NONE", "count": 4},
            {"error": "NOT_LEADER_OR_FOLLOWER", "count": 1},
            {"error": "TRANSACTION_COORDINATOR_FENCED", "count": 1}
        ])
    );
    assert_eq!(s["anomalies"], serde_json::json!([]));
    // The records before it are unchanged.
    let golden = std::fs::read_to_string(cap("v1-9092.ndjson")).unwrap();
    assert_eq!(text.lines().count(), golden.lines().count() + 1);
    assert!(out.stderr.is_empty());
    assert_eq!(s["cut_packets"], 0);
    // One packet of this capture lost 21 of its bytes to a snapshot length.
    let out = succeeds(bin().arg("--stats=json").arg(cap("tcp-snaplen-cut.pcap")));
    let text = String::from_utf8(out.stdout).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["stats"]["cut_packets"], 1);
    // (Its 20 payload bytes behind 14 + 20 + 20 bytes of Ethernet, IPv4 and TCP headers.)
    assert_eq!(last["stats"]["snapshot_length"], 74);
    let out = succeeds(bin().arg("--stats").arg(cap("tcp-snaplen-cut.pcap")));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("\n  packets cut by the capture's snapshot length (74 bytes): 1 (capture with `tcpdump -s 0` to keep whole packets; in a kafka-pcap --write-pcap extract, the acknowledgments it cut after their TCP header)\n"),
        "{err}"
    );
}

#[test]
fn stats_text_goes_to_standard_error() {
    let out = succeeds(bin().arg("--stats").arg(cap("v0-v2-19092-nanosec.pcap")));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("Kafka recognised from the bytes on port 19092\n"),
        "{err}"
    );
    assert!(err.contains("requests by version v0:1 v2:2,"), "{err}");
    assert!(err.contains("UNKNOWN_TOPIC_OR_PARTITION"), "{err}");
    let golden = std::fs::read_to_string(cap("v0-v2-19092-nanosec.ndjson")).unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), golden);
}

fn lines_of(args: &[&str], file: &str) -> Vec<String> {
    let out = succeeds(bin().args(args).arg(cap(file)));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn text_format_one_line_per_record() {
    let l = lines_of(&["--format", "text"], "v1-9092.pcap");
    assert_eq!(l.len(), 6);
    assert!(
        l[0].starts_with("10  21:22:01.228381  #0 127.0.0.1:"),
        "{}",
        l[0]
    );
    assert!(l[0].ends_with("WriteTxnMarkers v1 request corr=2  COMMIT pid=4000 epoch=3 coordinator_epoch=5 orders[0,1] payments[7]; ABORT pid=4001 epoch=0 coordinator_epoch=5 orders[2]"), "{}", l[0]);
    assert!(l[1].contains("response corr=2 (request 10, 18us)  pid=4000 orders[0:NONE,1:NOT_LEADER_OR_FOLLOWER] payments[7:NONE]"), "{}", l[1]);
}

#[test]
fn text_says_when_a_request_was_cut_short() {
    // The request of correlation id 1 lost bytes to a snaplen: its line says so and what it
    // still holds (its header, the marker count), and its response pairs with it.
    let l = lines_of(&["--format", "text"], "tcp-snaplen-cut.pcap");
    assert_eq!(l.len(), 8, "{l:#?}");
    assert!(l[1].ends_with("WriteTxnMarkers v1 request corr=1 (truncated: 16 of 37 bytes captured, stopped in markers[0].producer_id)"), "{}", l[1]);
    assert!(l[2].ends_with("ANOMALY frame_lost: WriteTxnMarkers request (correlation_id 1, 37 bytes) was decoded only in part: 16 bytes of it were captured (its record says \"truncated\": true)"), "{}", l[2]);
    assert!(
        l[3].ends_with("response corr=1 (request 4, 1000us)  pid=0 [0:NONE]"),
        "{}",
        l[3]
    );
    assert!(
        l[5].ends_with("response corr=2 (request 6, 1000us)  pid=0 [0:NONE]"),
        "{}",
        l[5]
    );
}

#[test]
fn text_shows_v2_transaction_version_and_json_stats() {
    let l = lines_of(
        &["--format", "text", "--stats=json"],
        "v0-v2-19092-nanosec.pcap",
    );
    let v2: Vec<&String> = l
        .iter()
        .filter(|l| l.contains("WriteTxnMarkers v2 request"))
        .collect();
    assert_eq!(v2.len(), 2);
    assert!(v2.iter().all(|l| l.contains(" tv=")), "{v2:?}");
    assert!(l
        .iter()
        .filter(|l| l.contains("v0 request"))
        .all(|l| !l.contains(" tv=")));
    let last: serde_json::Value = serde_json::from_str(l.last().unwrap()).unwrap();
    assert_eq!(last["event_type"], "stats");
    assert_eq!(last["stats"]["packets"], 17);
}

#[test]
fn pair_text_is_one_line_per_exchange() {
    let l = lines_of(&["--pair", "--format", "text"], "v1-9092.pcap");
    assert_eq!(l, [
        "11  21:22:01.228399  #0 127.0.0.1:41392 -> 127.0.0.1:9092  WriteTxnMarkers v1 exchange corr=2 (request 10, 18us)  COMMIT pid=4000 epoch=3 coordinator_epoch=5 orders[0,1] payments[7]; ABORT pid=4001 epoch=0 coordinator_epoch=5 orders[2]  =>  pid=4000 orders[0:NONE,1:NOT_LEADER_OR_FOLLOWER] payments[7:NONE]; pid=4001 orders[2:NONE]",
        "24  21:22:01.238974  #0 127.0.0.1:41392 -> 127.0.0.1:9092  WriteTxnMarkers v1 exchange corr=4 (request 22, 23us)  ABORT pid=4002 epoch=1 coordinator_epoch=6 txn-audit[0,1,2]  =>  pid=4002 txn-audit[0:INVALID_PRODUCER_EPOCH,1:INVALID_PRODUCER_EPOCH,2:INVALID_PRODUCER_EPOCH]",
        "24  21:22:01.238974  #0 127.0.0.1:41392 -> 127.0.0.1:9092  WriteTxnMarkers v1 exchange corr=6 (request 22, 23us)  COMMIT pid=4003 epoch=7 coordinator_epoch=6 payments[0,3]  =>  pid=4003 payments[0:NONE,3:TRANSACTION_COORDINATOR_FENCED]",
    ]);
    // The capture cut right after the first request (frame 10, ending at byte 1137): the
    // request is written at the end, unanswered, after its no_response anomaly.
    let bytes = std::fs::read(cap("v1-9092.pcap")).unwrap();
    let out = succeeds(
        bin()
            .args(["--pair", "--format", "text", "-"])
            .write_stdin(bytes[..1137].to_vec()),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let l: Vec<&str> = text.lines().collect();
    assert_eq!(l.len(), 2, "{text}");
    assert!(l[0].contains("ANOMALY no_response"), "{text}");
    assert_eq!(l[1], "10  21:22:01.228381  #0 127.0.0.1:41392 -> 127.0.0.1:9092  WriteTxnMarkers v1 exchange corr=2 (request 10, no response)  COMMIT pid=4000 epoch=3 coordinator_epoch=5 orders[0,1] payments[7]; ABORT pid=4001 epoch=0 coordinator_epoch=5 orders[2]");
}

#[test]
fn result_filter_takes_any_case() {
    let lower = lines_of(&["--result", "abort"], "v1-9092.pcap");
    assert_eq!(lines_of(&["--result", "ABORT"], "v1-9092.pcap"), lower);
    assert_eq!(lines_of(&["--result", "Abort"], "v1-9092.pcap"), lower);
    // Requests 2 (one ABORT marker among two) and 4, with their responses.
    assert_eq!(lower.len(), 4);
}

/// `--stats json` is refused before any capture is read (a script gets no output, then exit 2).
#[test]
fn stats_without_equals_names_the_fix() {
    for format in ["json", "text", "JSON"] {
        let out = bin()
            .args(["--stats", format])
            .arg(cap("v1-9092.pcap"))
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains(&format!(
                "`--stats {format}` reads `{format}` as a capture, and there is no such file: \
                 give the format with `=`: --stats={}",
                format.to_lowercase()
            )),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
    // `--stats=text json`: a capture named json, which there is not (not the `=` advice).
    let (_, err) = exits_2(bin().args(["--stats=text", "json"]));
    assert!(err.contains("kafka-pcap: json: cannot open:"), "{err}");
}

/// Options that would do nothing with the others given are refused, saying what would work.
#[test]
fn options_that_would_do_nothing_are_refused() {
    for (args, want) in [
        (
            &["--transactions", "--pair"][..],
            "--pair pairs message records, which --transactions (and --report) leave out: add \
             --api NAME or --all-apis",
        ),
        (
            &["--transactions", "--format", "tree", "-x"],
            "-x dumps the frames of message records, which --transactions (and --report) leave \
             out",
        ),
        (
            &["--since", "+10s", "--until", "+5s"],
            "--since is after --until: no record could match; swap them",
        ),
        (
            &[
                "--since",
                "2026-12-01T10:00:01Z",
                "--until",
                "2026-12-01T10:00:00Z",
            ],
            "--since is after --until",
        ),
    ] {
        let (_, err) = exits_2(bin().args(args).arg(cap("v1-9092.pcap")));
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // With message records they do something.
    let out = succeeds(
        bin()
            .args([
                "--transactions",
                "--api",
                "27",
                "--pair",
                "--format",
                "text",
            ])
            .arg(cap("v1-9092.pcap")),
    );
    assert!(String::from_utf8(out.stdout).unwrap().contains("exchange"));
}

/// A time of day against an offset or a time is known backwards only from the capture's
/// start: nothing matches, not even a transaction whose span meets both ends, and standard
/// error says why. An `--until` time of day is the first at or after `--since`: a window
/// from 00:00:01 to 00:00:00.5 runs to the next day's.
#[test]
fn a_window_that_ends_before_it_begins_holds_nothing() {
    for (since, until) in [
        ("00:00:02", "+1s"),
        ("00:00:02", "2026-01-01T00:00:01Z"),
        ("+3s", "2026-01-01T00:00:01Z"),
    ] {
        let out = bin()
            .args(["--transactions", "--since", since, "--until", until])
            .arg(cap("txn-fenced.pcap"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stdout.is_empty(), "{since} {until}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains("no transaction matched the filters (1 transaction read); --since falls after --until for this capture"),
            "{err}"
        );
    }
    // A window that misses the capture says where its packets lie (from a README-only trial:
    // an empty --since window did not say why).
    let out = bin()
        .args(["--transactions", "--since", "10:00:00"])
        .arg(cap("txn-fenced.pcap"))
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.ends_with(
            "no transaction matched the filters (1 transaction read); the capture's packets run \
             from 2026-01-01T00:00:00.000850Z to 2026-01-01T00:00:02.103442Z\n"
        ),
        "{err}"
    );
    // The right way round, the transaction (from 0.01 s to 2.10 s) meets it; an --until time
    // of day before --since's is the next day's.
    for until in ["00:00:02", "00:00:00.5"] {
        let kept = lines_of(
            &["--transactions", "--since", "00:00:01", "--until", until],
            "txn-fenced.pcap",
        );
        assert_eq!(kept.len(), 2, "{until}: {kept:?}");
    }
}

/// The values of --format, --stats, --anomalies and --generate take any case, as --result's.
#[test]
fn option_values_take_any_case() {
    let lower = lines_of(&["--format", "text", "--anomalies", "all"], "v1-9092.pcap");
    let upper = lines_of(&["--format", "TEXT", "--anomalies", "ALL"], "v1-9092.pcap");
    assert_eq!(upper, lower);
    assert!(!lower.is_empty());
    let out = succeeds(bin().arg("--stats=JSON").arg(cap("v1-9092.pcap")));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text
        .lines()
        .last()
        .unwrap()
        .contains(r#""event_type":"stats""#));
}

#[test]
fn filters_matching_nothing_say_so() {
    for (args, hint) in [
        (
            &["--topic", "nosuch"][..],
            // The partitions a coordinator leads have no marker message.
            "; if the topic's partitions are led by the transactions' coordinator, their \
             markers need no message: --transactions --topic NAME shows the transactions that \
             wrote to it",
        ),
        (&["--stream", "5000", "--pair"], ""),
        // With another filter the topic may not be why.
        (&["--topic", "nosuch", "--producer-id", "4000"], ""),
        (&["--producer-id", "1"], ""),
    ] {
        let out = succeeds(bin().args(args).arg(cap("v1-9092.pcap")));
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.ends_with(&format!(
                "v1-9092.pcap: no message matched the filters (6 WriteTxnMarkers messages \
                 read){hint}\n"
            )),
            "{args:?}: {err}"
        );
    }
    // Responses inferred without their request count as read (4 decoded with their request,
    // one inferred from the capture's first bytes).
    let out = succeeds(
        bin()
            .args(["--result", "commit"])
            .arg(cap("tcp-mid-stream-request-side.pcap")),
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.ends_with("no message matched the filters (5 WriteTxnMarkers messages read)\n"),
        "{err}"
    );
    // With --transactions it counts transactions, singular where there is one.
    let out = succeeds(
        bin()
            .args(["--transactions", "--transactional-id", "nosuch"])
            .arg(cap("txn-v2-flow.pcap")),
    );
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.ends_with(
            "no transaction matched the filters (1 transaction read); transactional ids read: \
             app-v2 (matched exactly, case included)\n"
        ),
        "{err}"
    );
    // The id matched and another filter left it out: no list of ids.
    let out = succeeds(
        bin()
            .args([
                "--transactions",
                "--transactional-id",
                "app-v2",
                "--outcome",
                "open",
            ])
            .arg(cap("txn-v2-flow.pcap")),
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.ends_with("no transaction matched the filters (1 transaction read)\n"),
        "{err}"
    );
    // A filter that matches, and no filter at all, are silent on standard error.
    for args in [&["--topic", "orders"][..], &[]] {
        let out = succeeds(bin().args(args).arg(cap("v1-9092.pcap")));
        assert!(!out.stdout.is_empty() && out.stderr.is_empty(), "{args:?}");
    }
}

/// `--format tree` (with `-x`): the golden files were checked against the seed's object trees
/// (tests/tree.rs pins the offsets); here the whole view is pinned, v0, v1 and v2.
#[test]
fn tree_format_matches_goldens() {
    for (args, file, golden) in [
        (
            &["--format", "tree", "-x"][..],
            "seed-9092.pcap",
            "seed-9092.tree-x.txt",
        ),
        (
            &["--format", "tree"][..],
            "v0-v2-19092-nanosec.pcap",
            "v0-v2-19092-nanosec.tree.txt",
        ),
        // Cut by the snapshot length: the trees of what was captured, then the bytes cut off.
        (
            &["--format", "tree", "-x"][..],
            "snaplen-128-v0-v2-19092-nanosec.pcap",
            "snaplen-128-v0-v2-19092-nanosec.tree-x.txt",
        ),
        // Every decoded API has a tree, from the field trace of its own decoder; the walked
        // sides (Produce requests, Fetch responses) are never held, so they have their line only.
        (
            &["--all-apis", "--format", "tree", "-x"][..],
            "api-produce.pcap",
            "api-produce.all-apis.tree-x.txt",
        ),
        (
            &["--all-apis", "--format", "tree", "-x"][..],
            "api-fetch.pcap",
            "api-fetch.all-apis.tree-x.txt",
        ),
        (
            &["--all-apis", "--format", "tree", "-x"][..],
            "api-metadata.pcap",
            "api-metadata.all-apis.tree-x.txt",
        ),
        (
            &["--all-apis", "--format", "tree", "-x"][..],
            "api-end-txn.pcap",
            "api-end-txn.all-apis.tree-x.txt",
        ),
        (
            &["--all-apis", "--format", "tree", "-x"][..],
            "api-init-producer-id.pcap",
            "api-init-producer-id.all-apis.tree-x.txt",
        ),
        (
            &["--all-apis", "--format", "tree", "-x"][..],
            "api-add-offsets-to-txn.pcap",
            "api-add-offsets-to-txn.all-apis.tree-x.txt",
        ),
        (
            &["--all-apis", "--format", "tree", "-x"][..],
            "api-find-coordinator.pcap",
            "api-find-coordinator.all-apis.tree-x.txt",
        ),
        (
            &["--all-apis", "--format", "tree", "-x"][..],
            "api-add-partitions-to-txn.pcap",
            "api-add-partitions-to-txn.all-apis.tree-x.txt",
        ),
        (
            &["--all-apis", "--format", "tree", "-x"][..],
            "api-txn-offset-commit.pcap",
            "api-txn-offset-commit.all-apis.tree-x.txt",
        ),
        (
            &["--all-apis", "--format", "tree", "-x"][..],
            "api-describe-transactions.pcap",
            "api-describe-transactions.all-apis.tree-x.txt",
        ),
        (
            &["--all-apis", "--format", "tree", "-x"][..],
            "api-list-transactions.pcap",
            "api-list-transactions.all-apis.tree-x.txt",
        ),
        (
            &["--all-apis", "--format", "tree", "-x"][..],
            "api-describe-producers.pcap",
            "api-describe-producers.all-apis.tree-x.txt",
        ),
    ] {
        let out = succeeds(bin().args(args).arg(cap(file)));
        let want = std::fs::read_to_string(cap(golden)).unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), want, "{file}");
    }
    // -x alone would be silently ignored: it is an error naming the fix.
    let (out, err) = exits_2(bin().arg("-x").arg(cap("seed-9092.pcap")));
    assert!(
        err.contains("-x (hex dump) goes with --format tree"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    let seed = std::fs::read_to_string(cap("seed-9092.tree-x.txt")).unwrap();
    assert!(seed.contains("|       +-- ProducerId int64 = 0 [0x0010, 8B]\n"));
    assert!(
        seed.contains("0000  00 00 00 25 00 1b 00 01  00 00 00 00 00 00 00 02  ...%............\n")
    );
    let v2 = std::fs::read_to_string(cap("v0-v2-19092-nanosec.tree.txt")).unwrap();
    assert!(v2.contains("+-- TransactionVersion int8 = "), "{v2}");
    assert!(v2.contains(
        "+-- client_id nullable_string = \"broker-2-txn-coordinator\" (int16 len=24) [0x000c, 26B]"
    ));
    // EndTxn v5's response, by hand from EndTxnResponse.json: header v1 (correlation id,
    // tagged fields), ThrottleTimeMs, ErrorCode, ProducerId, ProducerEpoch, tagged fields.
    let end = std::fs::read_to_string(cap("api-end-txn.all-apis.tree-x.txt")).unwrap();
    assert!(
        end.contains(
            "EndTxnResponse message v5 [0x0000, 26B]\n\
         +-- Frame [0x0000, 4B]\n\
         |   +-- size int32 = 22 [0x0000, 4B]\n\
         +-- ResponseHeader v1 [0x0004, 5B]\n\
         |   +-- correlation_id int32 = 6 [0x0004, 4B]\n\
         |   +-- tagged_fields uvarint = 0 [0x0008, 1B]\n\
         +-- EndTxnResponse struct [0x0009, 17B]\n\
         \x20   +-- ThrottleTimeMs int32 = 50 [0x0009, 4B]\n\
         \x20   +-- ErrorCode int16 = 0 (NONE) [0x000d, 2B]\n\
         \x20   +-- ProducerId int64 = 4002 [0x000f, 8B]\n\
         \x20   +-- ProducerEpoch int16 = 13 [0x0017, 2B]\n\
         \x20   +-- tagged_fields uvarint = 0 [0x0019, 1B]\n"
        ),
        "{end}"
    );
}

#[test]
fn filters_keep_matching_requests_and_their_responses() {
    let corr = |args: &[&str]| -> Vec<(String, i64)> {
        lines_of(args, "v1-9092.pcap")
            .iter()
            .map(|l| {
                let r: serde_json::Value = serde_json::from_str(l).unwrap();
                (
                    r["kafka"]["message"].as_str().unwrap().to_string(),
                    r["kafka"]["correlation_id"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    let pairs = |ids: &[i64]| -> Vec<(String, i64)> {
        let mut v = Vec::new();
        for &i in ids {
            v.push(("request".to_string(), i));
        }
        for &i in ids {
            v.push(("response".to_string(), i));
        }
        v
    };
    // corr 2 holds COMMIT 4000 and ABORT 4001; corr 4 ABORT 4002; corr 6 COMMIT 4003.
    assert_eq!(
        corr(&["--result", "abort"]),
        vec![
            ("request".into(), 2),
            ("response".into(), 2),
            ("request".into(), 4),
            ("response".into(), 4)
        ]
    );
    assert_eq!(corr(&["--producer-id", "4003"]), pairs(&[6]));
    assert_eq!(corr(&["--topic", "txn-audit"]), pairs(&[4]));
    assert_eq!(
        corr(&["--producer-id", "4003", "--result", "abort"]),
        vec![]
    );
    assert_eq!(corr(&["--stream", "1"]), vec![]);
    // --errors: every response of this capture has an error; each request comes just before
    // its response.
    let e = corr(&["--errors"]);
    assert_eq!(
        e,
        vec![
            ("request".into(), 2),
            ("response".into(), 2),
            ("request".into(), 4),
            ("response".into(), 4),
            ("request".into(), 6),
            ("response".into(), 6)
        ]
    );
    assert_eq!(lines_of(&["--errors"], "seed-9092.pcap").len(), 0);
    // With marker filters, --errors looks at the errors of the markers they keep: corr 2's
    // error is producer 4000's (orders[1]); producer 4001's marker there succeeded.
    assert_eq!(corr(&["--producer-id", "4000", "--errors"]), pairs(&[2]));
    assert_eq!(corr(&["--producer-id", "4001", "--errors"]), vec![]);
    // payments failed only in corr 6 (corr 2's payments[7] is NONE).
    assert_eq!(corr(&["--topic", "payments", "--errors"]), pairs(&[6]));
    // corr 2's ABORT marker (4001) succeeded; corr 4's ABORT (4002) failed.
    assert_eq!(corr(&["--result", "abort", "--errors"]), pairs(&[4]));
    assert_eq!(corr(&["--result", "commit", "--errors"]), {
        let mut v = pairs(&[2]);
        v.extend(pairs(&[6]));
        v
    });
}

/// A response whose request was not captured has no known result: `--result` drops it, with
/// `--errors` as without, while `--errors` alone keeps its error.
#[test]
fn errors_with_result_drop_a_response_without_its_request() {
    use common::*;
    use std::net::{IpAddr, Ipv4Addr};
    let (c, s) = (
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
    );
    let mut response = seed_response();
    response[25..27].copy_from_slice(&6i16.to_be_bytes()); // NOT_LEADER_OR_FOLLOWER
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 101, 65_535);
    let ip = tcp_packet(s, 9092, c, 40000, 5000, 1000, Flags::PSH_ACK, &response);
    w.record(1_700_000_000, 0, &ip, ip.len() as u32);
    let file = w.into_bytes();
    let run = |args: &[&str]| -> Vec<String> {
        let out = bin()
            .args(args)
            .arg("-")
            .write_stdin(file.clone())
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    };
    let errors = run(&["--errors"]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("NOT_LEADER_OR_FOLLOWER"),
        "{}",
        errors[0]
    );
    for result in ["commit", "abort"] {
        assert_eq!(run(&["--result", result]), Vec::<String>::new());
        assert_eq!(run(&["--errors", "--result", result]), Vec::<String>::new());
    }
}

#[test]
fn pair_gives_one_record_per_exchange() {
    let l = lines_of(&["--pair"], "v1-9092.pcap");
    assert_eq!(l.len(), 3);
    let r: serde_json::Value = serde_json::from_str(&l[0]).unwrap();
    assert_eq!(r["event_type"], "exchange");
    assert_eq!(r["frame"], 11);
    assert_eq!(r["dest_port"], 9092);
    let e = &r["exchange"];
    assert_eq!(
        (e["correlation_id"].as_i64(), e["request_frame"].as_u64()),
        (Some(2), Some(10))
    );
    assert_eq!(
        (e["response_frame"].as_u64(), e["latency_us"].as_i64()),
        (Some(11), Some(18))
    );
    assert_eq!(e["request"]["markers"][1]["transaction_result"], "ABORT");
    assert_eq!(
        e["response"]["markers"][0]["topics"][0]["partitions"][1]["error"],
        "NOT_LEADER_OR_FOLLOWER"
    );
    // With losses: exchanges where both sides decoded, anomalies as they are.
    let l = lines_of(&["--pair"], "tcp-gap-inside-frame.pcap");
    let recs: Vec<serde_json::Value> = l.iter().map(|x| serde_json::from_str(x).unwrap()).collect();
    let kinds: Vec<&str> = recs
        .iter()
        .map(|r| r["event_type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["exchange", "anomaly", "anomaly", "exchange", "exchange"],
        "{l:?}"
    );
    // The response whose request the gap took is an exchange alone, saying so.
    let alone = &recs[3]["exchange"];
    assert_eq!(alone["request"], serde_json::Value::Null);
    assert_eq!(alone["request_missing"], "lost");
    assert_eq!(alone["request_lost"]["frame"], recs[1]["frame"]);
    assert_eq!(alone["correlation_id"], 2);
    assert!(alone.get("request_frame").is_none());
    assert_eq!(recs[3]["dest_port"], 9092, "the client's endpoints first");
}

#[test]
fn all_apis_shows_every_message() {
    let l = lines_of(&["--all-apis"], "v1-9092.pcap");
    let recs: Vec<serde_json::Value> = l.iter().map(|x| serde_json::from_str(x).unwrap()).collect();
    let names: Vec<(String, String)> = recs
        .iter()
        .map(|r| {
            (
                r["kafka"]["api_name"].as_str().unwrap().to_string(),
                r["kafka"]["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(names.len(), 14);
    assert_eq!(names[0], ("ApiVersions".into(), "request".into()));
    assert_eq!(
        recs[1]["kafka"]["header_version"], 0,
        "ApiVersions responses use header v0"
    );
    assert_eq!(recs[1]["kafka"]["request_frame"], 4);
    assert!(recs[0]["kafka"]["body"].is_null());
    assert_eq!(names.iter().filter(|n| n.0 == "WriteTxnMarkers").count(), 6);
    assert_eq!(names.iter().filter(|n| n.0 == "Produce").count(), 2);
}

#[test]
fn json_format_is_one_array_per_capture() {
    let out = succeeds(bin().args(["--format", "json"]).arg(cap("v1-9092.pcap")));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let golden: Vec<serde_json::Value> = std::fs::read_to_string(cap("v1-9092.ndjson"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v, serde_json::Value::Array(golden));
    let out = succeeds(
        bin()
            .args(["--format", "json", "--errors"])
            .arg(cap("seed-9092.pcap")),
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "[]\n");
}

#[test]
fn completions_and_man_page_are_generated() {
    let bash = bin()
        .args(["--generate", "bash"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let bash = String::from_utf8(bash).unwrap();
    assert!(
        bash.contains("--producer-id") && bash.contains("kafka-pcap"),
        "{bash}"
    );
    let man = bin()
        .args(["--generate", "man"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let man = String::from_utf8(man).unwrap();
    assert!(
        man.starts_with(".ie") && man.contains(".TH kafka-pcap 1"),
        "{man}"
    );
    bin()
        .args(["--generate", "man"])
        .arg(cap("seed-9092.pcap"))
        .assert()
        .code(2);
    // Output that cannot be written is exit code 2 with a message, not a panic (from a
    // README-only trial: a completion script to /dev/full panicked, exit 101).
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        for what in ["bash", "man"] {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_kafka-pcap"))
                .args(["--generate", what])
                .stdout(full.try_clone().unwrap())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{what}: {err}");
            assert!(
                err.contains("No space left on device") && !err.contains("panicked"),
                "{err}"
            );
        }
    }
}

/// Standard error is a pipe here, never a terminal: no progress bar, nothing on it.
#[test]
fn no_progress_bar_when_standard_error_is_not_a_terminal() {
    let out = succeeds(bin().arg(cap("v1-9092.pcap")));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = succeeds(
        bin()
            .arg("-")
            .write_stdin(std::fs::read(cap("v1-9092.pcap")).unwrap()),
    );
    assert!(out.stderr.is_empty());
}

/// An output with no WriteTxnMarkers record says on standard error what was there instead:
/// other Kafka APIs (which `--all-apis` lists), or no Kafka at all.
#[test]
fn an_empty_output_says_what_the_capture_held() {
    // ApiVersions v0 (header v1, client id ""), and its v0 response (error 0, no keys).
    let request = [0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 1, 0, 0];
    let response = [0, 0, 0, 10, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    let kafka = common::Conversation::new(false, 9092)
        .client(&request)
        .server(&response);
    let other = common::Conversation::new(false, 8080).client(b"GET / HTTP/1.0\r\n\r\n");
    let dir = std::env::temp_dir().join(format!("kafka-pcap-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, conv, want) in [
        (
            "apiversions.pcap",
            kafka,
            "no WriteTxnMarkers message; Kafka requests of other APIs read: ApiVersions:1 \
             (--all-apis lists them)",
        ),
        (
            "http.pcap",
            other,
            "no Kafka traffic recognised in 1 TCP stream",
        ),
    ] {
        let mut w = common::PcapWriter::new(
            common::Endian::Little,
            common::Resolution::Micro,
            1,
            262_144,
        );
        for (i, p) in conv.packets().iter().enumerate() {
            w.packet(1_700_000_000, i as u32, &common::ethernet(&p.ip));
        }
        let path = dir.join(name);
        std::fs::write(&path, w.bytes()).unwrap();
        let out = succeeds(bin().arg(&path));
        assert!(out.stdout.is_empty());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(want), "{name}: {err}");
        // With --all-apis the records are the answer: no note.
        let out = succeeds(bin().arg("--all-apis").arg(&path));
        assert!(
            out.stderr.is_empty(),
            "{name}: {:?}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::remove_dir_all(&dir).ok();
    // `editcap -s 80` of a capture on port 19092: 14 bytes of each request, too few to
    // recognise the port by; the note says the snapshot length may be why, and what to do
    // (from a hostile review: it named --port only). With --port, what was kept is decoded.
    let cut = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/loss-s80-port-hidden.pcap");
    let out = succeeds(bin().arg(&cut));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(
            "name it with --port if not; the capture's snapshot length cut 8 of its 17 packets, \
             which may leave too few bytes of each request to recognise: name the broker port \
             with --port to decode what was kept, and capture with `tcpdump -s 0`)"
        ),
        "{err}"
    );
    let out = succeeds(bin().args(["--port", "19092"]).arg(&cut));
    let text = String::from_utf8(out.stdout).unwrap();
    let truncated = text
        .lines()
        .filter(|l| {
            l.contains("\"api_name\":\"WriteTxnMarkers\"") && l.contains("\"truncated\":true")
        })
        .count();
    assert_eq!(truncated, 6, "{text}");
}

/// Faults of the environment: a standard error that cannot be written never panics (exit
/// 101 before) and the run's own exit status stands; `--help` and `--version` to a standard
/// output that cannot be written exit 2 (they exited 0).
#[test]
fn a_full_standard_error_or_output_is_no_panic() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("SKIPPED: no /dev/full on this machine");
        return;
    };
    let exe = || std::process::Command::new(assert_cmd::cargo::cargo_bin("kafka-pcap"));
    let out = exe()
        .arg("--stats")
        .arg(cap("seed-9092.pcap"))
        .stderr(full.try_clone().unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = exe()
        .arg("no-such-file.pcap")
        .stderr(full.try_clone().unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    for arg in ["--help", "--version"] {
        let out = exe()
            .arg(arg)
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{arg}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("writing output"), "{arg}: {err}");
    }
}

/// `-j 2` writes the same bytes as `-j 1`, also when no temporary file can be written (a
/// capture read ahead of its turn is then read again when its turn comes, with one note).
#[test]
fn parallel_output_is_complete_even_without_temporary_files() {
    let caps = [
        cap("seed-9092.pcap"),
        cap("v1-9092.pcap"),
        cap("api-end-txn.pcap"),
        cap("v0-v2-19092-nanosec.pcap"),
    ];
    let one = succeeds(bin().arg("-j").arg("1").args(&caps));
    let two = succeeds(bin().arg("-j").arg("2").args(&caps));
    assert_eq!(one.stdout, two.stdout);
    let none = succeeds(
        bin()
            .env("TMPDIR", "/nonexistent/kafka-pcap-test")
            .arg("-j")
            .arg("2")
            .args(&caps),
    );
    assert_eq!(one.stdout, none.stdout);
    assert!(String::from_utf8_lossy(&one.stdout).lines().count() > 8);
    let err = String::from_utf8_lossy(&none.stderr);
    assert!(
        err.matches("a temporary file could not be written").count() <= 1,
        "{err}"
    );
}

#[test]
fn api_option_selects_records_by_name_or_key() {
    let parse = |l: Vec<String>| -> Vec<serde_json::Value> {
        l.iter().map(|x| serde_json::from_str(x).unwrap()).collect()
    };
    let names = |recs: &[serde_json::Value]| -> Vec<String> {
        recs.iter()
            .map(|r| r["kafka"]["api_name"].as_str().unwrap_or("-").to_string())
            .collect()
    };
    // v1-9092.pcap holds ApiVersions, Produce and WriteTxnMarkers exchanges.
    let produce = parse(lines_of(&["--api", "produce"], "v1-9092.pcap"));
    assert_eq!(names(&produce), ["Produce", "Produce"]);
    assert!(produce.iter().all(|r| r["kafka"]["api_key"] == 0));
    let two = parse(lines_of(
        &["--api", "ApiVersions", "--api", "27"],
        "v1-9092.pcap",
    ));
    let n = names(&two);
    assert_eq!(n.iter().filter(|x| *x == "WriteTxnMarkers").count(), 6);
    assert_eq!(n.iter().filter(|x| *x == "ApiVersions").count(), 2);
    assert_eq!(n.len(), 8, "{n:?}");
    // A decoded API keeps its bodies: the same records as --all-apis gives for it.
    let end_txn = parse(lines_of(&["--api", "26"], "api-end-txn.pcap"));
    let golden: Vec<serde_json::Value> = parse(lines_of(&["--all-apis"], "api-end-txn.pcap"))
        .into_iter()
        .filter(|r| r["kafka"]["api_key"] == 26)
        .collect();
    assert!(!end_txn.is_empty());
    assert_eq!(end_txn, golden);
    assert!(end_txn.iter().all(|r| r["kafka"]["body"].is_object()));
    // --api replaces the default WriteTxnMarkers; an empty result says why on standard error.
    assert!(lines_of(&["--api", "EndTxn"], "v1-9092.pcap").is_empty());
    let out = succeeds(bin().args(["--api", "EndTxn"]).arg(cap("v1-9092.pcap")));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no message of EndTxn; Kafka requests read: Produce:1"),
        "{err}"
    );
    let (_, err) = exits_2(bin().args(["--api", "EndTxns"]).arg(cap("v1-9092.pcap")));
    assert!(
        err.contains("no Kafka API is called or numbered \"EndTxns\""),
        "{err}"
    );
    let (_, err) = exits_2(bin().args(["--api", "93"]).arg(cap("v1-9092.pcap")));
    assert!(err.contains("keys 0-92"), "{err}");
}

#[test]
fn filters_match_the_bodies_of_other_apis() {
    let parse = |l: Vec<String>| -> Vec<serde_json::Value> {
        l.iter().map(|x| serde_json::from_str(x).unwrap()).collect()
    };
    let heads = |recs: &[serde_json::Value]| -> Vec<(String, String, u64)> {
        recs.iter()
            .filter(|r| r["event_type"] == "kafka")
            .map(|r| {
                let k = &r["kafka"];
                (
                    k["api_name"].as_str().unwrap().to_string(),
                    k["message"].as_str().unwrap().to_string(),
                    r["frame"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    // api-produce.pcap: producer 4000's batches are in the v9 and v10 requests (frames 4, 6).
    let got = parse(lines_of(
        &["--api", "Produce", "--producer-id", "4000"],
        "api-produce.pcap",
    ));
    let want = [("Produce", "request", 4), ("Produce", "response", 5)];
    let want: Vec<(String, String, u64)> = want
        .iter()
        .chain(&[("Produce", "request", 6), ("Produce", "response", 7)])
        .map(|(a, m, f)| (a.to_string(), m.to_string(), *f))
        .collect();
    assert_eq!(heads(&got), want);
    // A topic id is a topic for --topic (v13 names the topic by id only).
    let got = parse(lines_of(
        &["--api", "Produce", "--topic", "BwcHBwcHBwcHBwcHBwcHBw"],
        "api-produce.pcap",
    ));
    assert_eq!(heads(&got).len(), 2, "{got:?}");
    // --errors: the EndTxn exchanges whose response has an error, each with its request first.
    let got = parse(lines_of(
        &["--api", "EndTxn", "--errors"],
        "api-end-txn.pcap",
    ));
    let h = heads(&got);
    assert!(!h.is_empty() && h.len() % 2 == 0, "{h:?}");
    for pair in h.chunks(2) {
        assert_eq!(
            (pair[0].1.as_str(), pair[1].1.as_str()),
            ("request", "response")
        );
    }
    for r in got.iter().filter(|r| r["kafka"]["message"] == "response") {
        assert_ne!(r["kafka"]["body"]["error_code"], 0, "{r}");
    }
    // --result ABORT keeps the EndTxn requests that asked to abort, and their responses.
    let got = parse(lines_of(
        &["--api", "EndTxn", "--result", "abort"],
        "api-end-txn.pcap",
    ));
    let requests: Vec<&serde_json::Value> = got
        .iter()
        .filter(|r| r["kafka"]["message"] == "request")
        .collect();
    assert!(!requests.is_empty());
    assert!(requests
        .iter()
        .all(|r| r["kafka"]["body"]["committed"] == false));
    // --errors finds per-partition errors too (AddPartitionsToTxn's partition_error_code): the
    // v2, v4 and v5 exchanges of api-add-partitions-to-txn.pcap.
    let got = parse(lines_of(
        &["--api", "AddPartitionsToTxn", "--errors"],
        "api-add-partitions-to-txn.pcap",
    ));
    let versions: Vec<i64> = got
        .iter()
        .filter(|r| r["kafka"]["message"] == "response")
        .map(|r| r["kafka"]["api_version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions, [2, 4, 5]);
    // An InitProducerId whose response names the producer id comes with its request.
    let got = parse(lines_of(
        &["--api", "InitProducerId", "--producer-id", "4000"],
        "api-init-producer-id.pcap",
    ));
    let h = heads(&got);
    assert!(
        h.iter().any(|x| x.1 == "request") && h.iter().any(|x| x.1 == "response"),
        "{h:?}"
    );
}

/// `captures/NAME` with every packet cut to `snap` bytes (a little-endian classic pcap), as a
/// capture made with `tcpdump -s SNAP` would be, written to a temporary file.
fn snaplen_cut(name: &str, snap: u32) -> PathBuf {
    let out = common::snaplen_cut(&std::fs::read(cap(name)).unwrap(), snap);
    let f = std::env::temp_dir().join(format!(
        "kafka-pcap-snap-{}-{snap}-{name}",
        std::process::id()
    ));
    std::fs::write(&f, out).unwrap();
    f
}

/// `--anomalies`: cut to 120 bytes a packet, api-produce.pcap's Produce frames (not decoded
/// by default) lose bytes in 7 gaps, which lose nothing the default output is about: it
/// shows its two WriteTxnMarkers messages and no anomaly; `--anomalies all` shows the 7 gaps,
/// saying the snapshot length cut them; `--anomalies none` none; `--stats` counts all 7 in
/// every mode.
#[test]
fn anomaly_levels() {
    let f = snaplen_cut("api-produce.pcap", 120);
    let lines = |args: &[&str]| -> Vec<serde_json::Value> {
        let out = succeeds(bin().args(args).arg(&f));
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let kinds = |recs: &[serde_json::Value]| -> Vec<String> {
        recs.iter()
            .map(|r| r["event_type"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(kinds(&lines(&[])), ["kafka", "kafka"]);
    let all = lines(&["--anomalies", "all"]);
    let gaps: Vec<&serde_json::Value> = all
        .iter()
        .filter(|r| r["event_type"] == "anomaly")
        .collect();
    assert_eq!(gaps.len(), 7);
    for g in &gaps {
        let m = g["anomaly"]["message"].as_str().unwrap();
        assert!(
            m.contains("cut off by the capture's snapshot length (capture with `tcpdump -s 0`")
                && m.ends_with("inside a frame that is not decoded; nothing of interest lost"),
            "{m}"
        );
    }
    assert_eq!(kinds(&lines(&["--anomalies", "none"])), ["kafka", "kafka"]);
    for level in ["relevant", "all", "none"] {
        let out = lines(&["--anomalies", level, "--stats=json"]);
        let stats = &out.last().unwrap()["stats"];
        assert_eq!(
            stats["anomalies"],
            serde_json::json!([{"kind": "gap", "layer": "tcp", "count": 7}]),
            "{level}"
        );
    }
    // With --all-apis the output is about Produce too: the gaps are written.
    let recs = lines(&["--all-apis"]);
    assert!(recs.iter().filter(|r| r["event_type"] == "anomaly").count() >= 7);
    std::fs::remove_file(&f).unwrap();
}

/// The program run with `args`, `bytes` written to its standard input, which stays open
/// (the handle returned); a watchdog kills it after 60 s so that a test cannot hang.
fn live(args: &[&str], bytes: &[u8]) -> (std::process::Child, std::process::ChildStdin) {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kafka-pcap"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(60));
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid])
            .status();
    });
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(bytes).unwrap();
    stdin.flush().unwrap();
    (child, stdin)
}

/// SIGINT or SIGTERM while standard input is open and silent: the run finishes as at the end
/// of its input (records, the `--stats=json` record, a closed JSON array), then exits 130 or
/// 143, so that a script can tell an interrupted run.
#[test]
fn a_signal_on_standard_input_finishes_the_run() {
    use std::io::BufRead;
    for (signal, code, args) in [
        ("-INT", 130, vec!["--stats=json", "-"]),
        ("-TERM", 143, vec!["--format", "json", "-"]),
    ] {
        let (mut child, stdin) = live(&args, &std::fs::read(cap("v1-9092.pcap")).unwrap());
        // Every record of the capture is out (as many lines as a run on the file gives,
        // without what only the end writes): the whole capture was read, the pipe stays open.
        let file_args: Vec<&str> = args.iter().copied().filter(|a| *a != "-").collect();
        let whole = succeeds(bin().args(&file_args).arg(cap("v1-9092.pcap"))).stdout;
        // (A JSON array's last element ends its line only when the array is closed.)
        let at_end = if args[0] == "--format" { 2 } else { 1 };
        let before_end = String::from_utf8(whole).unwrap().lines().count() - at_end;
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        for _ in 0..before_end {
            let mut line = String::new();
            out.read_line(&mut line).unwrap();
            assert!(!line.is_empty());
            first.push_str(&line);
        }
        let killed = std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("no exit after {signal}");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let mut rest = String::new();
        out.read_to_string(&mut rest).unwrap();
        drop(stdin);
        assert_eq!(status.code(), Some(code), "{signal}");
        let all = first + &rest;
        if args[0] == "--stats=json" {
            let last: serde_json::Value =
                serde_json::from_str(all.lines().last().unwrap()).unwrap();
            assert_eq!(last["event_type"], "stats");
            assert_eq!(last["stats"]["write_txn_markers"]["commit_markers"], 2);
        } else {
            let array: serde_json::Value = serde_json::from_str(&all).unwrap();
            assert!(!array.as_array().unwrap().is_empty());
        }
    }
}

/// `--pair` on live input: a request never answered goes out as an exchange without response
/// as soon as its connection ends (FIN), while standard input is still open.
#[test]
fn pair_writes_an_unanswered_request_when_its_connection_ends() {
    use std::io::BufRead;
    let c = common::Conversation::new(false, 9092).client(&common::request_with_corr(1));
    let mut w =
        common::PcapWriter::new(common::Endian::Little, common::Resolution::Micro, 1, 65_535);
    for (i, p) in c.packets().iter().enumerate() {
        w.packet(1_767_225_600, i as u32 * 100, &common::ethernet(&p.ip));
    }
    let (mut child, stdin) = live(&["--pair", "-"], w.bytes());
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    // Its no_response anomaly, then its exchange.
    let mut lines = Vec::new();
    let rec = loop {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let rec: serde_json::Value = serde_json::from_str(&line).unwrap();
        lines.push(line);
        if rec["event_type"] != "anomaly" || lines.len() > 3 {
            break rec;
        }
    };
    assert_eq!(rec["event_type"], "exchange", "{lines:?}");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(rec["exchange"]["response"], serde_json::Value::Null);
    assert!(rec["exchange"].get("response_frame").is_none());
    // Still running: standard input is open.
    assert!(child.try_wait().unwrap().is_none());
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// `-c N` (as tshark's): the capture is read no further than N packets, and the run ends as
/// at the end of its input: v1-9092.pcap's WriteTxnMarkers request is frame 10, its response
/// frame 11, so `-c 10` shows the request and its `no_response`, `-c 11` the exchange.
#[test]
fn count_stops_after_n_packets() {
    let run = |n: &str| -> Vec<serde_json::Value> {
        let out = succeeds(
            bin()
                .args(["-c", n, "--stats=json"])
                .arg(cap("v1-9092.pcap")),
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let out = run("10");
    let kinds: Vec<&str> = out
        .iter()
        .map(|r| r["event_type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["kafka", "anomaly", "stats"]);
    assert_eq!(out[1]["anomaly"]["kind"], "no_response");
    assert_eq!(out[2]["stats"]["packets"], 10);
    let out = run("11");
    assert_eq!(out[1]["kafka"]["message"], "response");
    assert_eq!(out.last().unwrap()["stats"]["packets"], 11);
    let out = run("0");
    assert_eq!(out.last().unwrap()["stats"]["packets"], 0);
    assert_eq!(run("1000000").last().unwrap()["stats"]["packets"], 28);
}

/// `--host IP[:PORT]` (repeatable): the records of connections with that end; with
/// `--transactions`, the transactions whose coordinator or marker broker it is.
#[test]
fn host_filter_keeps_connections_with_that_end() {
    let count = |args: &[&str], name: &str| -> usize {
        let out = succeeds(bin().args(args).arg(cap(name)));
        String::from_utf8(out.stdout).unwrap().lines().count()
    };
    let all = count(&[], "v1-9092.pcap");
    assert!(all > 0);
    assert_eq!(count(&["--host", "127.0.0.1"], "v1-9092.pcap"), all);
    assert_eq!(count(&["--host", "127.0.0.1:9092"], "v1-9092.pcap"), all);
    assert_eq!(count(&["--host", "127.0.0.1:9093"], "v1-9092.pcap"), 0);
    assert_eq!(
        count(
            &["--host", "127.0.0.2", "--host", "127.0.0.1:41392"],
            "v1-9092.pcap"
        ),
        all
    );
    // Transactions: app-v1's coordinator is node 0 (9092), its markers went to node 1 (9093).
    let txns = |host: &str| count(&["--transactions", "--host", host], "txn-v1-flow.pcap");
    assert_eq!((txns("127.0.0.1:9092"), txns("127.0.0.1:9093")), (2, 2));
    assert_eq!(txns("127.0.0.1:9094"), 0);
    // A hanging transaction's stuck partition got no marker message: its leader (node 1,
    // 9093, as the capture's Metadata gives it) still chooses it (the record and its verdict),
    // beside app-ok, whose marker went there.
    let hanging = |host: &str| count(&["--transactions", "--host", host], "txn-hanging.pcap");
    assert_eq!(
        (hanging("127.0.0.1:9093"), hanging("127.0.0.1:9094")),
        (3, 0)
    );
    let (_, err) = exits_2(bin().args(["--host", "nope"]).arg(cap("v1-9092.pcap")));
    assert!(err.contains("is not IP or IP:PORT"), "{err}");
}

/// The frames and correlation ids of the records `args` keep from `captures/v1-9092.pcap`
/// (6 records: the exchange of correlation id 2 in frames 10 and 11, those of 4 and 6 in 22
/// and 24; the capture's first packet is at .197708).
fn v1_kept(args: &[&str]) -> Vec<(u64, i64)> {
    let out = bin()
        .args(args)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/v1-9092.pcap"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["frame"].as_u64().unwrap(),
                v["kafka"]["correlation_id"].as_i64().unwrap(),
            )
        })
        .collect()
}

/// Issue 16's habits: topic globs and repeated --topic, ids in hex, repeated --stream, and
/// --since/--until as RFC 3339 times or offsets from the capture's start.
#[test]
fn topic_globs_hex_ids_streams_and_time_bounds() {
    let all = vec![(10, 2), (11, 2), (22, 4), (22, 6), (24, 4), (24, 6)];
    assert_eq!(v1_kept(&[]), all);
    // Correlation id 2 names orders and payments, 4 txn-audit, 6 payments.
    assert_eq!(
        v1_kept(&["--topic", "pay*"]),
        vec![(10, 2), (11, 2), (22, 6), (24, 6)]
    );
    assert_eq!(v1_kept(&["--topic", "txn-?udit"]), vec![(22, 4), (24, 4)]);
    assert_eq!(
        v1_kept(&["--topic", "txn-audit", "--topic", "orders"]),
        vec![(10, 2), (11, 2), (22, 4), (24, 4)]
    );
    assert_eq!(v1_kept(&["--producer-id", "0xFA2"]), vec![(22, 4), (24, 4)]);
    assert_eq!(v1_kept(&["--producer-id", "4002"]), vec![(22, 4), (24, 4)]);
    assert_eq!(v1_kept(&["--stream", "0", "--stream", "7"]), all);
    // Lists given with commas, as the repeated option (from a README-only trial: `--topic
    // txn-a,txn-b` matched nothing).
    assert_eq!(
        v1_kept(&["--topic", "txn-audit,orders"]),
        vec![(10, 2), (11, 2), (22, 4), (24, 4)]
    );
    assert_eq!(v1_kept(&["--stream", "0,7"]), all);
    assert_eq!(
        v1_kept(&["--producer-id", "0xFA2,4002"]),
        vec![(22, 4), (24, 4)]
    );
    assert_eq!(v1_kept(&["--stream", "7"]), vec![]);
    assert_eq!(v1_kept(&["--since", "+35ms"]), all[2..].to_vec());
    assert_eq!(v1_kept(&["--until", "+31ms"]), all[..2].to_vec());
    assert_eq!(
        v1_kept(&[
            "--since",
            "2026-11-29T21:22:01.23Z",
            "--until",
            "2026-11-29T22:22:01.3+01:00"
        ]),
        all[2..].to_vec()
    );
    // Times as the tool prints them (from a README-only trial): without an offset (UTC), with
    // a space, and a time of day (the one nearest the capture's start), as --format text
    // shows it.
    for (since, until) in [
        ("2026-11-29T21:22:01.23", "2026-11-29 21:22:01.3"),
        ("21:22:01.23", "21:22:01.300000"),
    ] {
        assert_eq!(
            v1_kept(&["--since", since, "--until", until]),
            all[2..].to_vec(),
            "{since} {until}"
        );
    }
    assert_eq!(v1_kept(&["--until", "21:22"]), vec![]);
    for (flag, bad, says) in [
        ("--since", "yesterday", "is neither a time"),
        ("--until", "+5 parsecs", "is neither a time"),
        (
            "--since",
            "25:00:00",
            "a time of day (08:41:53, the one nearest the capture's start)",
        ),
        ("--topic", "[ab", "is not a topic name or glob"),
        (
            "--producer-id",
            "0xZZ",
            "is not a producer id in decimal or 0x hex",
        ),
    ] {
        let out = bin().args([flag, bad, "x.pcap"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag} {bad}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{flag} {bad}"
        );
    }
}

/// A capture with no TCP at all (one UDP datagram) says so, that it may be other traffic only
/// (a README-only trial read the tunnel hint alone as the cause), and names --vxlan-port.
#[test]
fn a_capture_without_tcp_names_tunnels_and_vxlan_ports() {
    let mut pcap = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    pcap.extend_from_slice(&65535u32.to_le_bytes());
    pcap.extend_from_slice(&101u32.to_le_bytes());
    pcap.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 28, 0, 0, 0, 28, 0, 0, 0]);
    pcap.extend_from_slice(&[
        0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, 0, 1, 0, 2, 0, 8, 0, 0,
    ]);
    let out = bin().arg("-").write_stdin(pcap).output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "kafka-pcap: standard input: no TCP stream in 1 packet (UDP, ICMP or other traffic \
         only; or traffic inside a tunnel this tool does not unwrap, or VXLAN on a port other \
         than 4789 and 8472: name it with --vxlan-port)\n"
    );
}

#[test]
fn pair_writes_requests_a_connection_end_left_unanswered_in_their_order() {
    // Every response packet dropped (captures/README.md): `--pair` writes the three requests
    // left unanswered at the connection's end as they come, so in the order they were sent;
    // their map's order changed from run to run.
    for _ in 0..6 {
        let l = lines_of(&["--pair"], "loss-every-response.pcap");
        let frames: Vec<(u64, i64)> = l
            .iter()
            .map(|x| serde_json::from_str::<serde_json::Value>(x).unwrap())
            .filter(|r| r["event_type"] == "exchange")
            .map(|r| {
                assert_eq!(r["exchange"]["response"], serde_json::Value::Null, "{r}");
                (
                    r["exchange"]["request_frame"].as_u64().unwrap(),
                    r["exchange"]["correlation_id"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(frames, [(8, 1), (9, 2), (10, 3)], "{l:#?}");
    }
}

/// A message read with bytes left after its schema's last field says so on its text line,
/// alone and in an exchange, set apart from its body by two spaces (a hostile review found
/// the exchange's note run into the body).
#[test]
fn text_says_when_a_body_had_trailing_bytes() {
    let l = lines_of(
        &["--all-apis", "--format", "text"],
        "loss-fetch-record-like-wtm.pcap",
    );
    assert!(
        l[1].ends_with(
            "Fetch v11 request corr=10 (9 bytes after the schema's last field)  READ_UNCOMMITTED"
        ),
        "{}",
        l[1]
    );
    let l = lines_of(
        &["--all-apis", "--pair", "--format", "text"],
        "loss-fetch-record-like-wtm.pcap",
    );
    let exchange = l
        .iter()
        .find(|l| l.contains("exchange corr=10 "))
        .expect("the exchange of corr 10");
    assert!(
        exchange.ends_with("Fetch v11 exchange corr=10 (request 4, response not decoded)  (9 bytes after the schema's last field)  READ_UNCOMMITTED"),
        "{exchange}"
    );
}

/// The mistakes of a tired user get a line that says what to do instead.
#[test]
fn mistakes_get_what_to_do() {
    let (_, err) = exits_2(
        bin()
            .args(["--memory-limit", "40"])
            .arg(cap("v1-9092.pcap")),
    );
    assert!(
        err.contains("not `40` (40 bytes; for 40 megabytes write 40M)"),
        "{err}"
    );
    // No advice where it would be wrong: 0M is no size, 65535M is 64 GB.
    for n in ["0", "65535"] {
        let (_, err) = exits_2(bin().args(["--memory-limit", n]).arg(cap("v1-9092.pcap")));
        assert!(err.contains(&format!("not `{n}`\n")), "{err}");
    }
    // `kafka-pcap < FILE`: no capture named.
    let (_, err) = exits_2(bin().write_stdin(std::fs::read(cap("v1-9092.pcap")).unwrap()));
    assert!(
        err.contains("give - as the capture: kafka-pcap [OPTIONS] - < FILE"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let (_, err) = exits_2(
        bin()
            .arg("--report")
            .arg(dir.path())
            .arg(cap("v1-9092.pcap")),
    );
    assert!(
        err.contains(&format!(
            "--report {}: names a directory; name a file in it",
            dir.path().display()
        )),
        "{err}"
    );
    // A directory that does not exist yet, named as one: refused before reading, not at the
    // end when the file is renamed into place.
    let new_dir = format!("{}/new/", dir.path().display());
    let (_, err) = exits_2(
        bin()
            .args(["--write-pcap", &new_dir])
            .arg(cap("v1-9092.pcap")),
    );
    assert!(
        err.contains(&format!("--write-pcap {new_dir}: names a directory")),
        "{err}"
    );
    // An offset without its `+`, a stream index that is no number.
    let (_, err) = exits_2(bin().args(["--since", "3"]).arg(cap("v1-9092.pcap")));
    assert!(err.contains("for an offset write +3"), "{err}");
    let (_, err) = exits_2(bin().args(["--stream", "abc"]).arg(cap("v1-9092.pcap")));
    assert!(err.contains("`abc` is not a TCP stream index"), "{err}");
    let out = succeeds(bin().args(["-c", "0"]).arg(cap("v1-9092.pcap")));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("v1-9092.pcap: no packet read"), "{err}");
}

/// Under `--producer-id`, `--anomalies relevant` leaves out the anomalies about messages of
/// APIs that never name a producer id (a Metadata request left unanswered), and keeps those of
/// APIs that may (a Fetch request's), and every one of no API; `--anomalies all` keeps all.
#[test]
fn producer_id_filter_leaves_out_anomalies_of_apis_without_producer_ids() {
    let kinds = |args: &[&str]| -> Vec<(String, Option<i64>)> {
        lines_of(args, "loss-fetch-record-like-pending-response.pcap")
            .iter()
            .filter_map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                let a = &v["anomaly"];
                Some((a["kind"].as_str()?.to_string(), a["api_key"].as_i64()))
            })
            .collect()
    };
    let expect = |list: &[(&str, Option<i64>)]| -> Vec<(String, Option<i64>)> {
        list.iter().map(|(k, a)| (k.to_string(), *a)).collect()
    };
    assert_eq!(
        kinds(&["--all-apis", "--producer-id", "5"]),
        expect(&[("gap", None), ("resync", None), ("no_response", Some(1))])
    );
    // Without the filter, and with --anomalies all, the Metadata request's is there.
    for args in [
        &["--all-apis"][..],
        &["--all-apis", "--producer-id", "5", "--anomalies", "all"][..],
    ] {
        let got = kinds(args);
        assert!(
            got.contains(&("no_response".to_string(), Some(3))),
            "{args:?}: {got:?}"
        );
    }
    // --topic keeps it: a Metadata message names topics.
    let got = kinds(&["--all-apis", "--topic", "nosuch"]);
    assert!(
        got.contains(&("no_response".to_string(), Some(3))),
        "{got:?}"
    );
}

/// `--stream` with `--transactions` alone chose nothing (transactions span connections) and
/// was silently ignored: refused, saying what chooses transactions. A `--transactional-id`
/// holding a comma that matches nothing says the comma is part of the id.
#[test]
fn stream_with_transactions_alone_is_refused_and_a_comma_in_an_id_is_named() {
    let (_, err) = exits_2(
        bin()
            .args(["--transactions", "--stream", "0"])
            .arg(cap("txn-v1-flow.pcap")),
    );
    assert!(err.contains("--stream chooses message records"), "{err}");
    assert!(err.contains("--transactional-id"), "{err}");
    // With the stream's messages asked for, it chooses them.
    succeeds(
        bin()
            .args(["--transactions", "--all-apis", "--stream", "0"])
            .arg(cap("txn-v1-flow.pcap")),
    );
    let out = succeeds(
        bin()
            .args(["--transactions", "--transactional-id", "a,b"])
            .arg(cap("txn-v1-flow.pcap")),
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("a comma is part of an id: repeat --transactional-id for each"),
        "{err}"
    );
}

/// `--since`/`--until` keep a transaction whose span meets the window (a README-only trial:
/// txn-hanging's messages are all in its first 30 ms, its record at the capture's end, 20 s;
/// `--until +5s` matched nothing and `--since +1s` kept it by its record's time alone). Its
/// verdict goes with it; a window after the capture's end keeps nothing.
#[test]
fn time_filters_keep_a_transaction_whose_span_meets_the_window() {
    let kinds = |args: &[&str]| -> Vec<String> {
        let args = [&["--transactional-id", "app-hang"], args].concat();
        lines_of(&args, "txn-hanging.pcap")
            .iter()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                match v["event_type"].as_str().unwrap() {
                    "anomaly" => v["anomaly"]["kind"].as_str().unwrap().to_string(),
                    e => e.to_string(),
                }
            })
            .collect()
    };
    let both = vec!["transaction".to_string(), "hanging_transaction".to_string()];
    assert_eq!(kinds(&["--transactions"]), both);
    assert_eq!(kinds(&["--transactions", "--until", "+5s"]), both);
    assert_eq!(
        kinds(&["--transactions", "--since", "+10s", "--until", "+11s"]),
        both
    );
    assert_eq!(
        kinds(&["--transactions", "--since", "+25s"]),
        Vec::<String>::new()
    );
}

/// Under `--anomalies relevant`, an anomaly about a request the body filters left out, whose
/// response could not pass them either, is left out with it (a hostile review: `--result
/// commit` wrote `no_response` for requests of ABORT markers). loss-every-response.pcap: three
/// WriteTxnMarkers requests unanswered, frame 8 with a COMMIT and an ABORT, 9 COMMIT only, 10
/// ABORT only. `--producer-id` keeps them all: a WriteTxnMarkers response names producer ids.
#[test]
fn anomalies_of_requests_the_filters_left_out_go_with_them() {
    let unanswered = |args: &[&str]| -> Vec<u64> {
        lines_of(args, "loss-every-response.pcap")
            .iter()
            .filter_map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (v["anomaly"]["kind"] == "no_response")
                    .then(|| v["anomaly"]["request_frame"].as_u64().unwrap())
            })
            .collect()
    };
    assert_eq!(unanswered(&[]), vec![8, 9, 10]);
    assert_eq!(unanswered(&["--result", "commit"]), vec![8, 9]);
    assert_eq!(unanswered(&["--result", "abort"]), vec![8, 10]);
    assert_eq!(
        unanswered(&["--result", "abort", "--anomalies", "all"]),
        vec![8, 9, 10]
    );
    assert_eq!(unanswered(&["--producer-id", "5003"]), vec![8, 9, 10]);
}

/// Standard error escapes what would hide or turn text on a terminal: a capture named with
/// U+202E RIGHT-TO-LEFT OVERRIDE (a hostile review) is named `a\u{202e}b.pcap`, not raw.
#[test]
fn standard_error_escapes_a_file_name_that_would_turn_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a\u{202e}b.pcap");
    std::fs::copy(cap("v1-9092.pcap"), &f).unwrap();
    let out = succeeds(bin().args(["--topic", "nosuch"]).arg(&f));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("a\\u{202e}b.pcap: no message matched"),
        "{err}"
    );
    assert!(!err.contains('\u{202e}'));
}

/// The README's `--format tree` example is what the tool writes for `txn-marker-retry.pcap`:
/// every line it shows (but its `...`), in order.
#[test]
fn the_readmes_tree_example_is_the_output() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme
        .find("```\n39  00:00:00.140362  txn app-retry")
        .expect("the README's tree example");
    let example = &readme[start + 4..];
    let example = &example[..example.find("```").unwrap()];
    let out = succeeds(
        bin()
            .args(["--transactions", "--format", "tree"])
            .arg(cap("txn-marker-retry.pcap")),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let shown: Vec<&str> = example.lines().filter(|l| l.trim() != "...").collect();
    assert!(shown.len() >= 5, "{example}");
    for l in shown {
        assert!(
            lines.any(|o| o == l),
            "README line not in the output, in order: {l}\n{text}"
        );
    }
}

/// `--report -` whose reader closed standard output before the page came (`| head -c 100`,
/// from a README-only trial: exit 2, "writing: Broken pipe"): exit 0, as for records.
#[test]
fn a_report_page_to_a_closed_pipe_is_not_an_error() {
    let capture = cap("txn-v1-flow.pcap");
    let args = [
        "-q".as_ref(),
        "--report".as_ref(),
        "-".as_ref(),
        capture.as_os_str(),
    ];
    let (code, err) = closed_early(&args, 0);
    assert_eq!(code, Some(0), "stderr: {err}");
    assert!(!err.contains("Broken pipe"), "{err}");
}

/// `--all-apis` with `--api` says that `--api` narrows nothing (from a README-only trial:
/// every API was printed without a word); `--api` alone says nothing of it.
#[test]
fn all_apis_beside_api_says_it_wins() {
    let out = succeeds(
        bin()
            .args(["--all-apis", "--api", "EndTxn"])
            .arg(cap("api-end-txn.pcap")),
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("--all-apis writes every API; --api narrows nothing beside it"),
        "{err}"
    );
    let all = String::from_utf8(out.stdout).unwrap();
    assert!(all.contains("\"api_name\":\"WriteTxnMarkers\""));
    let out = succeeds(bin().args(["--api", "EndTxn"]).arg(cap("api-end-txn.pcap")));
    assert!(!String::from_utf8(out.stderr)
        .unwrap()
        .contains("narrows nothing"));
}
