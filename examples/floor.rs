//! The read floor of a capture: read(2) the file in 1 MiB blocks and walk every pcap record
//! header, touching each (its lengths are read and summed), and nothing more. No program that
//! reads every packet of the file can be much faster; `bench/run.sh` runs it beside kafka-pcap,
//! `cat`, `tcpdump -w /dev/null` and tshark, and reports kafka-pcap's time as a multiple of it.
//!
//! Usage: `cargo run --release --example floor -- CAPTURE` (classic pcap, either byte order,
//! microsecond or nanosecond); prints `packets bytes_captured checksum` on one line. A pcapng
//! file is walked block by block instead (block type and length), which is the same work.

use std::fs::File;
use std::io::{self, Read, Write};
use std::process::ExitCode;

/// Size of each read(2).
const BLOCK: usize = 1 << 20;

/// What the walk counts.
#[derive(Default)]
struct Walked {
    packets: u64,
    captured: u64,
    /// A sum over every header's timestamp, so that no read can be optimised away.
    checksum: u64,
}

/// Walks the records of the stream `input`: `header` bytes of file header, then records
/// whose header of `record` bytes gives the length of what follows with `len_of`.
fn walk(
    mut input: impl Read,
    header: usize,
    record: usize,
    len_of: impl Fn(&[u8]) -> (usize, u64),
) -> io::Result<Walked> {
    let mut buf = vec![0u8; BLOCK];
    let mut w = Walked::default();
    // Bytes of the stream still to skip before the next record header, and a header split
    // between two blocks.
    let mut skip = header;
    let mut partial: Vec<u8> = Vec::with_capacity(record);
    loop {
        let n = input.read(&mut buf)?;
        if n == 0 {
            return Ok(w);
        }
        let mut at = 0;
        while at < n {
            if skip > 0 {
                let s = skip.min(n - at);
                skip -= s;
                at += s;
                continue;
            }
            let take = (record - partial.len()).min(n - at);
            let whole = partial.is_empty() && take == record;
            let h: &[u8] = if whole {
                &buf[at..at + record]
            } else {
                partial.extend_from_slice(&buf[at..at + take]);
                if partial.len() < record {
                    at += take;
                    continue;
                }
                &partial
            };
            let (len, stamp) = len_of(h);
            w.packets += 1;
            w.captured += len as u64;
            w.checksum = w.checksum.wrapping_add(stamp);
            at += take;
            partial.clear();
            skip = len;
        }
    }
}

fn run(path: &str) -> io::Result<Walked> {
    let mut f = File::open(path)?;
    let mut head = [0u8; 24];
    f.read_exact(&mut head)?;
    let magic = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    let rest = std::io::Cursor::new(head).chain(f);
    let u32_at = |b: &[u8], i: usize, le: bool| {
        let a = [b[i], b[i + 1], b[i + 2], b[i + 3]];
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    match magic {
        0xa1b2_c3d4 | 0xa1b2_3c4d | 0xd4c3_b2a1 | 0x4d3c_b2a1 => {
            let le = matches!(magic, 0xa1b2_c3d4 | 0xa1b2_3c4d);
            walk(rest, 24, 16, |h| {
                let stamp = u64::from(u32_at(h, 0, le)) << 32 | u64::from(u32_at(h, 4, le));
                (u32_at(h, 8, le) as usize, stamp)
            })
        }
        0x0a0d_0d0a => {
            // pcapng: each block's type and total length; the byte order of the first section.
            let le = head[8..12] == [0x4d, 0x3c, 0x2b, 0x1a];
            walk(rest, 0, 8, |h| {
                let len = u32_at(h, 4, le) as usize;
                (len.saturating_sub(8), u64::from(u32_at(h, 0, le)))
            })
        }
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a pcap or pcapng capture",
        )),
    }
}

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: floor CAPTURE");
        return ExitCode::from(2);
    };
    match run(&path) {
        Ok(w) => {
            let line = format!("{} {} {}\n", w.packets, w.captured, w.checksum);
            let _ = io::stdout().write_all(line.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("floor: {path}: {e}");
            ExitCode::from(2)
        }
    }
}
