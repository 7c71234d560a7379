//! Compressed captures (gzip, zstd, lz4 frame, xz) read directly, on files and on standard
//! input, with the same output as the plain capture.
//!
//! `captures/v1-9092.pcap.{gz,zst,lz4,xz}` were made from `captures/v1-9092.pcap` by the
//! command-line tools (`gzip -9`, `zstd -19`, `lz4`, `xz`), an implementation other than the
//! decoders kafka-pcap reads them with; the expected output is that capture's golden,
//! `captures/v1-9092.ndjson`. Damaged and cut compressed files decode up to the damage and say
//! what happened in one `truncated_capture` anomaly.

use assert_cmd::Command;
use std::io::Write;
use std::path::PathBuf;

fn captures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("captures")
}

fn golden() -> String {
    std::fs::read_to_string(captures().join("v1-9092.ndjson")).unwrap()
}

fn bin() -> Command {
    Command::cargo_bin("kafka-pcap").unwrap()
}

fn run_file(path: &std::path::Path) -> (i32, String, String) {
    let out = bin().arg(path).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn run_stdin(data: Vec<u8>) -> (i32, String, String) {
    let out = bin().arg("-").write_stdin(data).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn temp(name: &str, data: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kafka-pcap-compressed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p
}

#[test]
fn every_compression_gives_the_plain_output_on_files_and_stdin() {
    let want = golden();
    assert_eq!(want.lines().count(), 6);
    for ext in ["gz", "zst", "lz4", "xz"] {
        let path = captures().join(format!("v1-9092.pcap.{ext}"));
        let (rc, out, err) = run_file(&path);
        assert_eq!((rc, err.as_str()), (0, ""), "{ext}");
        assert_eq!(out, want, "{ext} from a file");
        let (rc, out, _) = run_stdin(std::fs::read(&path).unwrap());
        assert_eq!(rc, 0, "{ext}");
        assert_eq!(out, want, "{ext} from standard input");
    }
}

/// Two gzip members (the pcap file header in one, the records in the next), as `cat a.gz b.gz`
/// makes, and two zstd frames: read as one capture.
#[test]
fn concatenated_members_and_frames_are_one_capture() {
    let plain = std::fs::read(captures().join("v1-9092.pcap")).unwrap();
    let (head, rest) = plain.split_at(24);
    let mut gz = Vec::new();
    for part in [head, rest] {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(part).unwrap();
        gz.extend(e.finish().unwrap());
    }
    assert_eq!(run_file(&temp("two.pcap.gz", &gz)).1, golden());
    let mut zst = Vec::new();
    for part in [head, rest] {
        zst.extend(zstd::encode_all(part, 3).unwrap());
    }
    assert_eq!(run_file(&temp("two.pcap.zst", &zst)).1, golden());
    // A skippable frame first, as `pzstd` writes.
    let mut skippable = vec![0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4];
    skippable.extend_from_slice(&zst);
    assert_eq!(run_file(&temp("skip.pcap.zst", &skippable)).1, golden());
    // Two lz4 frames.
    let mut lz4 = Vec::new();
    for part in [head, rest] {
        let mut e = lz4_flex::frame::FrameEncoder::new(Vec::new());
        e.write_all(part).unwrap();
        lz4.extend(e.finish().unwrap());
    }
    assert_eq!(run_file(&temp("two.pcap.lz4", &lz4)).1, golden());
}

/// A gzip file cut at two thirds: the packets before the cut are decoded (the first two of
/// the six records: one exchange), and the captured bytes of the record it cuts, then one
/// anomaly names the compression, the cut and the last frame.
#[test]
fn a_cut_compressed_file_decodes_up_to_the_cut() {
    let gz = std::fs::read(captures().join("v1-9092.pcap.gz")).unwrap();
    let cut = &gz[..gz.len() * 2 / 3];
    let (rc, out, err) = run_file(&temp("cut.pcap.gz", cut));
    assert_eq!((rc, err.as_str()), (0, ""));
    let lines: Vec<&str> = out.lines().collect();
    let golden = golden();
    let want: Vec<&str> = golden.lines().take(2).collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(&lines[..2], &want[..]);
    let last: serde_json::Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    // Frame 16's record is cut by the end of the data: what of it is there is read too (a
    // segment of the 200 KB Produce request, which the default output does not show).
    assert_eq!(last["frame"], 16);
    assert_eq!(last["anomaly"]["kind"], "truncated_capture");
    assert_eq!(
        last["anomaly"]["message"],
        "gzip-compressed capture: the file ends inside the compressed data (cut short?) \
         (after 128688 decompressed bytes); everything before it was read, to frame 16, whose \
         record it cuts short (the bytes of it there were decoded as a packet cut short)"
    );
    // The same from standard input.
    assert_eq!(run_stdin(cut.to_vec()).1, out);
}

/// A zstd file cut inside its first block gives no bytes at all: an error naming the file and
/// the cause, exit code 2, not "not a capture".
#[test]
fn a_compressed_file_cut_before_any_packet_is_an_error_that_says_so() {
    let zst = std::fs::read(captures().join("v1-9092.pcap.zst")).unwrap();
    let path = temp("cut.pcap.zst", &zst[..zst.len() / 2]);
    let (rc, out, err) = run_file(&path);
    assert_eq!((rc, out.as_str()), (2, ""));
    assert_eq!(
        err.trim_end(),
        format!(
            "kafka-pcap: {}: read error: zstd-compressed capture: the file ends inside the \
             compressed data (cut short?) (after 0 decompressed bytes)",
            path.display()
        )
    );
}

/// A zstd frame that declares a 256 MiB window (`zstd --long=28` on a pipe) is refused before
/// anything is allocated for it, with the way round it.
#[test]
fn a_window_beyond_the_decompressor_bound_is_refused() {
    let plain = std::fs::read(captures().join("v1-9092.pcap")).unwrap();
    let mut e = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
    e.long_distance_matching(true).unwrap();
    e.window_log(28).unwrap();
    e.include_contentsize(false).unwrap();
    e.write_all(&plain).unwrap();
    let zst = e.finish().unwrap();
    let (rc, out, err) = run_stdin(zst);
    assert_eq!((rc, out.as_str()), (2, ""));
    assert!(
        err.contains(
            "zstd-compressed capture: decompressing it needs more memory than the 128 MiB this \
             tool allows a decompressor"
        ),
        "{err}"
    );
    assert!(
        err.contains("`zstdcat --long=31 FILE | kafka-pcap -`"),
        "{err}"
    );
}

#[test]
fn damaged_twice_compressed_and_non_captures_are_told_apart() {
    let (rc, _, err) = run_stdin(b"\x1f\x8b\x08\x00garbage-garbage-garbage".to_vec());
    assert_eq!(rc, 2);
    assert!(
        err.contains(
            "gzip-compressed capture: the compressed data is damaged (corrupt deflate stream)"
        ),
        "{err}"
    );
    let gz = std::fs::read(captures().join("v1-9092.pcap.gz")).unwrap();
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&gz).unwrap();
    let (rc, _, err) = run_stdin(e.finish().unwrap());
    assert_eq!(rc, 2);
    assert!(
        err.contains(
            "it is gzip-compressed inside its compression (compressed twice?): pipe it through \
             `zcat` too (after gzip decompression; `zcat FILE | kafka-pcap -` shows the same)"
        ),
        "{err}"
    );
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(b"hello, world\n").unwrap();
    let (rc, _, err) = run_stdin(e.finish().unwrap());
    assert_eq!(rc, 2);
    assert!(
        err.contains(
            "unknown magic number 0x68656c6c (it is text, not a capture: write one with \
             tcpdump -w FILE) (after gzip decompression; `zcat FILE | kafka-pcap -` shows the \
             same)"
        ),
        "{err}"
    );
}

/// bzip2 and zip are named, with what to do.
#[test]
fn bzip2_and_zip_are_named() {
    let (rc, _, err) = run_stdin(b"BZh91AY&SY-not-really".to_vec());
    assert_eq!(rc, 2);
    assert!(
        err.contains(
            "it is bzip2-compressed, which is not read directly; try: bzcat FILE | kafka-pcap -"
        ),
        "{err}"
    );
    let (rc, _, err) = run_stdin(b"PK\x03\x04zip-contents".to_vec());
    assert_eq!(rc, 2);
    assert!(err.contains("it is a zip archive; unzip it first"), "{err}");
}

/// The library reads compressed bytes held in memory too (`run_slice`, used by the fuzzers).
#[test]
fn run_slice_reads_compressed_bytes() {
    let xz = std::fs::read(captures().join("v1-9092.pcap.xz")).unwrap();
    let mut sink = kafka_pcap::output::NdjsonWriter::new(Vec::<u8>::new(), None);
    kafka_pcap::run_slice(&xz, &kafka_pcap::Config::default(), &mut sink).unwrap();
    let out = sink.into_inner().unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), golden());
}
