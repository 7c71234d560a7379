//! The streaming reader (`kafka_pcap::run`, a read buffer refilled from any `Read`) and the
//! in-memory reader (`kafka_pcap::run_slice`) give the same records for the same bytes, however
//! the input arrives (reads of any size) and however the file is damaged (cut anywhere, bytes
//! overwritten, record lengths forged): they buffer differently but must read alike.

mod common;

use common::*;
use kafka_pcap::output::NdjsonWriter;
use kafka_pcap::{run, run_slice, Config};
use proptest::prelude::*;
use std::io::{self, Read};

/// A reader that hands out at most `chunk` bytes per call.
struct Trickle<'a> {
    data: &'a [u8],
    chunk: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.chunk.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// NDJSON output and packet count, or the error's text.
fn streamed(data: &[u8], chunk: usize) -> Result<(String, u64), String> {
    streamed_with(data, chunk, false)
}

/// [`streamed`], read ahead on a thread of its own (`Config::read_ahead`) or not.
fn streamed_with(data: &[u8], chunk: usize, read_ahead: bool) -> Result<(String, u64), String> {
    let mut sink = NdjsonWriter::new(Vec::<u8>::new(), None);
    let config = Config {
        read_ahead,
        ..Config::default()
    };
    let s = run(Trickle { data, chunk }, &config, &mut sink).map_err(|e| e.to_string())?;
    let out = String::from_utf8(sink.into_inner().unwrap()).unwrap();
    Ok((out, s.packets))
}

fn in_memory(data: &[u8]) -> Result<(String, u64), String> {
    let mut sink = NdjsonWriter::new(Vec::<u8>::new(), None);
    let s = run_slice(data, &Config::default(), &mut sink).map_err(|e| e.to_string())?;
    let out = String::from_utf8(sink.into_inner().unwrap()).unwrap();
    Ok((out, s.packets))
}

/// The seed exchange (8 packets) in classic pcap of either byte order and resolution, or in
/// pcapng of either byte order.
fn capture(kind: u8) -> Vec<u8> {
    let packets = Conversation::new(false, 9092)
        .client(&seed_request())
        .server(&seed_response())
        .packets();
    match kind % 6 {
        k @ 0..=3 => {
            let endian = if k % 2 == 0 {
                Endian::Little
            } else {
                Endian::Big
            };
            let res = if k < 2 {
                Resolution::Micro
            } else {
                Resolution::Nano
            };
            let mut w = PcapWriter::new(endian, res, 1, 262_144);
            for (i, p) in packets.iter().enumerate() {
                w.packet(1_700_000_000, i as u32, &ethernet(&p.ip));
            }
            w.into_bytes()
        }
        k => {
            let mut w = PcapngWriter::new();
            w.section(if k == 4 { Endian::Little } else { Endian::Big });
            let eth = w.interface(1, 65_535, None);
            for (i, p) in packets.iter().enumerate() {
                w.packet_at(eth, 1_700_000_000, i as u64, &ethernet(&p.ip));
            }
            w.into_bytes()
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn streamed_and_in_memory_readers_agree(
        kind in 0u8..6,
        cut in any::<prop::sample::Index>(),
        writes in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        forge in prop::option::of((any::<prop::sample::Index>(), any::<u32>())),
        chunk in prop_oneof![1usize..64, 1usize..5000, Just(1usize << 20)],
    ) {
        let mut data = capture(kind);
        // Overwrite bytes past the file header (a damaged header is a fatal error for both,
        // which the CLI tests cover).
        let header = if kind < 4 { 24 } else { 28 };
        for (at, byte) in writes {
            let at = header + at.index(data.len() - header);
            data[at] = byte;
        }
        // Forge a 32-bit length somewhere (a record's caplen, a block's length, ...).
        if let Some((at, value)) = forge {
            let at = header + at.index(data.len() - header - 4);
            data[at..at + 4].copy_from_slice(&value.to_le_bytes());
        }
        data.truncate(header + cut.index(data.len() - header + 1));
        prop_assert_eq!(streamed(&data, chunk), in_memory(&data));
        // Read ahead on a thread of its own: the same.
        prop_assert_eq!(streamed_with(&data, chunk, true), in_memory(&data));
    }
}

/// A classic pcap file far larger than the read-ahead chunks, with records of every size up
/// to 256 KiB and over the room kept in front of each chunk (so that records straddle chunk
/// ends, and some are gathered by copying): read ahead or not, the same records.
#[test]
fn read_ahead_gives_the_same_records_across_chunks() {
    let packets = Conversation::new(false, 9092)
        .client(&seed_request())
        .server(&seed_response())
        .packets();
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 1 << 20);
    let mut i = 0u32;
    // About 6 MiB: the seed exchange again and again, with records of filler in between
    // (Ethernet frames of no IP, skipped), of sizes that cross the chunk boundaries.
    for round in 0..60u32 {
        for p in &packets {
            w.packet(1_700_000_000, i, &ethernet(&p.ip));
            i += 1;
        }
        let size = [100usize, 70_000, 262_144, 300_000][round as usize % 4];
        w.packet(1_700_000_000, i, &vec![0xaa; size]);
        i += 1;
    }
    let data = w.into_bytes();
    assert!(data.len() > 5 << 20, "{}", data.len());
    let (whole, packets_read) = in_memory(&data).unwrap();
    assert_eq!(packets_read, u64::from(i));
    for chunk in [1usize << 20, 4096, 777] {
        assert_eq!(
            streamed_with(&data, chunk, true).unwrap(),
            (whole.clone(), packets_read)
        );
    }
}

/// A reader whose reads fail (an I/O error) after `ok` bytes.
struct FailsAfter<'a> {
    data: &'a [u8],
    ok: usize,
}

impl Read for FailsAfter<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.ok == 0 {
            return Err(io::Error::other("the disk said no"));
        }
        let n = buf.len().min(self.data.len()).min(self.ok).min(4096);
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        self.ok -= n;
        Ok(n)
    }
}

/// From a hostile review: an I/O error in the middle of a file ends the run with the error,
/// after the records of every byte read before it, read ahead or not (the bytes of the chunk
/// being read ahead were dropped).
#[test]
fn an_io_error_keeps_the_records_read_before_it() {
    let packets = Conversation::new(false, 9092)
        .client(&seed_request())
        .server(&seed_response())
        .packets();
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
    let mut i = 0u32;
    while w.bytes().len() < 3 << 20 {
        for p in &packets {
            w.packet(1_700_000_000, i, &ethernet(&p.ip));
            i += 1;
        }
    }
    let data = w.into_bytes();
    for ok in [1usize << 19, 3 << 19, (1 << 20) + 12345] {
        let out = |read_ahead: bool| {
            let mut sink = NdjsonWriter::new(Vec::<u8>::new(), None);
            let config = Config {
                read_ahead,
                ..Config::default()
            };
            let r = run(FailsAfter { data: &data, ok }, &config, &mut sink);
            assert!(r.is_err(), "{ok}: the error is the run's");
            String::from_utf8(sink.into_inner().unwrap()).unwrap()
        };
        let plain = out(false);
        assert!(plain.lines().count() > 100, "{ok}");
        assert_eq!(out(true), plain, "{ok}: read ahead");
    }
}

/// The `readers` fuzz target's input `name` in tests/fuzz_regressions (byte 0 picks the
/// target's read size, the rest is the capture), read in memory and streamed in reads of
/// several sizes, which must agree: the in-memory output and packet count.
fn fuzz_input_read_alike(name: &str) -> (String, u64) {
    let data = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fuzz_regressions")
            .join(name),
    )
    .unwrap();
    let file = &data[1..];
    let memory = in_memory(file);
    for chunk in [1, 7, 64, 1500, 1 << 20] {
        assert_eq!(
            streamed(file, chunk),
            memory,
            "{name}: reads of {chunk} bytes"
        );
    }
    memory.unwrap()
}

/// A fuzz input (`readers` target, byte 0 picking reads of 7 bytes): a pcapng block whose
/// trailing length differs from its leading one did not parse before the stream had read
/// it whole, and the streaming reader described it by pcap-parser's error while the
/// in-memory reader, which had it whole, named the two lengths. A block is now read to its
/// declared end before it is judged.
#[test]
fn a_damaged_block_is_judged_whole_by_both_readers() {
    let (out, _) = fuzz_input_read_alike("readers-damaged-block-judged-whole.bin");
    assert!(
        out.contains(
            "the block's trailing length 0 differs from its leading length 96; 688 bytes were \
             passed over to the next plausible block"
        ),
        "{out}"
    );
}

/// A fuzz input (`readers` target): the file's first Section Header Block, big-endian,
/// declares 33,554,460 bytes, more than the file holds, with whole blocks inside. The stream
/// (which starts a damaged first section in the order of its mark) found them; in memory the
/// search ran in little-endian order, found none and called the file cut.
#[test]
fn a_first_section_header_longer_than_the_file_is_searched_in_its_order() {
    let (out, packets) = fuzz_input_read_alike("readers-first-section-header-longer-than-file.bin");
    assert!(
        out.contains("the block declares 33554460 bytes, more than the 354 left in the file"),
        "{out}"
    );
    assert_eq!(packets, 1, "{out}");
}

/// A fuzz input (`readers` target, byte 0 picking reads of 1 byte): a record declaring 64 MiB
/// captured (the file's snapshot length) and 256 on the wire, which the file's end cuts. As
/// the reading of such records with their length on the wire was first written, the
/// in-memory reader read it so (the header after 256 bytes reads as one) while the stream,
/// which cannot hold 64 MiB and a header, passed it over as declaring more than the most
/// any reader buffers. Both pass it over first, as the stream must.
#[test]
fn a_cut_record_past_the_most_a_reader_buffers_is_passed_over_by_both_readers() {
    let (out, _) = fuzz_input_read_alike("readers-cut-record-of-64-mib-repaired-in-memory.bin");
    assert!(
        out.contains(
            "a capture record declares more bytes captured than its snapshot length and its \
             length on the wire (it declares 67108864 bytes)"
        ),
        "{out}"
    );
    assert!(!out.contains("read with its length on the wire"), "{out}");
}

/// A fuzz input (`readers` target): a record declaring 160 bytes captured and 95 on the wire,
/// the header after its 95 bytes reading as one. As first written, the record after that
/// header was confirmed only where the bytes at hand held its successor's header: the stream,
/// holding fewer, read the record with 95 bytes; in memory, the successor did not read as a
/// header and the record was passed over. The stream now reads on until it holds it.
#[test]
fn a_damaged_captured_length_is_judged_on_the_same_bytes_by_both_readers() {
    let (out, _) = fuzz_input_read_alike("readers-repair-judged-beyond-the-stream-buffer.bin");
    assert!(
        out.contains(
            "a capture record declares 160 bytes captured, more than its length on the wire \
             (95), and the header after it does not read as one"
        ),
        "{out}"
    );
}
