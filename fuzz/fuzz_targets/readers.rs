//! The streaming reader (`run`, refilled from a `Read` that hands out a few bytes at a time)
//! and the in-memory reader (`run_slice`) must give the same output for the same bytes. The
//! first input byte picks the read size; the rest is the capture (inputs without a pcap or
//! pcapng magic number get a classic pcap header).
#![no_main]
use kafka_pcap::output::NdjsonWriter;
use kafka_pcap::{run, run_slice, Config};
use libfuzzer_sys::fuzz_target;
use std::io::Read;

struct Trickle<'a> {
    data: &'a [u8],
    chunk: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.chunk.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, data)) = data.split_first() else {
        return;
    };
    let chunk = [1, 7, 64, 1500, 65536, 1 << 20][usize::from(first) % 6];
    let is_capture = matches!(
        data.get(..4),
        Some([0xd4, 0xc3, 0xb2, 0xa1] | [0xa1, 0xb2, 0xc3, 0xd4] | [0x4d, 0x3c, 0xb2, 0xa1] | [0x0a, 0x0d, 0x0d, 0x0a])
    );
    let file = if is_capture {
        data.to_vec()
    } else {
        let mut file = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        file.extend_from_slice(&65535u32.to_le_bytes());
        file.extend_from_slice(&101u32.to_le_bytes());
        file.extend_from_slice(data);
        file
    };
    let config = Config::default();
    let mut a = NdjsonWriter::new(Vec::<u8>::new(), None);
    let ra = run(Trickle { data: &file, chunk }, &config, &mut a).map(|s| s.packets);
    let mut b = NdjsonWriter::new(Vec::<u8>::new(), None);
    let rb = run_slice(&file, &config, &mut b).map(|s| s.packets);
    let (a, b) = (a.into_inner().unwrap(), b.into_inner().unwrap());
    assert_eq!(
        (ra.map_err(|e| e.to_string()), String::from_utf8_lossy(&a)),
        (rb.map_err(|e| e.to_string()), String::from_utf8_lossy(&b))
    );
});
