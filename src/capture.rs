//! Capture reading: classic pcap and pcapng files, streamed (the only user of pcap-parser).
//!
//! Input: any [`Read`] (a file or standard input); the format is chosen by the magic number,
//! never by the file's name.
//! Output: [`CapturePacket`]s in file order, each with its 1-based frame number, link type,
//! timestamp and borrowed bytes, handed to a callback; and [`CaptureProblem`]s for damage that
//! ends the reading of the file early (a truncated last record, a damaged block).
//!
//! Formats: classic pcap (both byte orders, microsecond magic `a1b2c3d4` and nanosecond magic
//! `a1b23c4d`, and the little-endian "modified" `a1b2cd34`), and pcapng (IETF draft-ietf-opsawg-pcapng) with
//! any number of sections, of either byte order, and interfaces each with its own link type,
//! `if_tsresol` and `if_tsoffset`. Memory is a fixed read buffer ([`READ_BUFFER_SIZE`]) that
//! grows only to hold one record larger than it, up to [`MAX_RECORD_SIZE`]; a classic pcap
//! file read ahead on a thread of its own ([`read_capture_with`]) has at most five chunks of
//! [`READ_BUFFER_SIZE`] and [`CHUNK_FRONT`] bytes.
//!
//! Either format may come compressed ([`Compression`]: gzip through flate2's zlib-rs backend,
//! zstd, lz4 frames through lz4_flex, xz through liblzma): told apart by the magic number,
//! decompressed as it streams, each decompressor held to [`MAX_DECOMPRESSION_MEMORY`]. This
//! module is the only user of those crates.

use crate::vocab::{AnomalyKind, Timestamp};
use nom::IResult;
use pcap_parser::pcapng::Block;
use pcap_parser::traits::PcapReaderIterator;
use pcap_parser::{LegacyPcapBlock, PcapBlockOwned, PcapError, PcapNGReader};
use std::io::{self, Cursor, Read};
use std::sync::{Arc, Mutex};

/// Initial size of the read buffer (1 MiB).
pub const READ_BUFFER_SIZE: usize = 1 << 20;
/// Largest capture record (pcap record or pcapng block) read (64 MiB); a larger one is a
/// `record_too_large` problem, and the reading goes on at the next plausible record or block
/// after it (`Legacy::next_plausible`, `next_plausible_block`).
pub const MAX_RECORD_SIZE: usize = 64 << 20;

/// One packet of the capture.
#[derive(Debug, Clone, Copy)]
pub struct CapturePacket<'a> {
    /// Frame number, 1-based over the file (as Wireshark numbers frames).
    pub frame: u64,
    /// Link type (`LINKTYPE_` value) of the packet's interface.
    pub linktype: i32,
    /// When the packet was captured.
    pub ts: Timestamp,
    /// The captured bytes.
    pub data: &'a [u8],
    /// The packet's length on the wire (at least `data.len()` unless the file is inconsistent).
    pub orig_len: u32,
    /// Whether the file ends inside this packet's record (the capture was cut while being
    /// written): the bytes past `data` are missing from the file, not cut by the snapshot
    /// length. Only the file's last packet can be so.
    pub cut_by_file_end: bool,
}

/// Damage in the capture file itself. `unknown_interface` is reported and reading goes on;
/// after a `bad_block` or `record_too_large` the reading goes on at the next plausible record
/// or block, when there is one (the message says how many bytes were passed over);
/// `truncated_capture` is the file's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureProblem {
    /// Stable anomaly kind: `truncated_capture`, `bad_block`, `record_too_large`,
    /// `unknown_interface`.
    pub kind: AnomalyKind,
    /// One human sentence.
    pub message: String,
    /// Frame number of the last packet read before the problem (0 if none).
    pub after_frame: u64,
}

/// Errors that make a file unusable.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The input is not a pcap or pcapng file.
    #[error("not a pcap or pcapng capture: {0}")]
    NotACapture(String),
    /// Reading failed.
    #[error("read error: {0}")]
    Io(#[from] io::Error),
}

/// The file's format, from its magic number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Classic pcap.
    Pcap,
    /// pcapng.
    PcapNg,
}

/// A reader that keeps the last I/O error, which pcap-parser would otherwise reduce to
/// "read error", and retries interrupted reads.
struct Recording<R> {
    inner: R,
    error: Arc<Mutex<Option<io::Error>>>,
}

impl<R: Read> Read for Recording<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.inner.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let copy = io::Error::new(e.kind(), e.to_string());
                    if let Ok(mut slot) = self.error.lock() {
                        *slot = Some(e);
                    }
                    return Err(copy);
                }
                ok => return ok,
            }
        }
    }
}

fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// What to say of an input whose first four bytes (`magic`) are no capture's: a tar archive
/// (its `ustar` at byte 257) or text (a log, a README, JSON) are named as such, from the first
/// 512 bytes. Errors: reading them.
fn unknown_magic<R: Read>(magic: [u8; 4], r: &mut R) -> Result<String, CaptureError> {
    let mut more = [0u8; 508];
    let n = read_full(r, &mut more)?;
    let mut first = magic.to_vec();
    first.extend_from_slice(&more[..n]);
    let what = if first.get(257..262) == Some(&b"ustar"[..]) {
        "a tar archive: extract it first, tar xf FILE, then read the capture inside"
    } else if first
        .iter()
        .all(|&b| b.is_ascii_graphic() || b.is_ascii_whitespace() || b >= 0x80)
        // UTF-8, but for a character the 512 bytes cut.
        && std::str::from_utf8(&first).map_or_else(|e| e.error_len().is_none(), |_| true)
    {
        "it is text, not a capture: write one with tcpdump -w FILE"
    } else {
        "not pcap, pcapng, or a compressed capture"
    };
    Ok(format!(
        "unknown magic number 0x{} ({what})",
        hex::encode(magic)
    ))
}

/// Reads the file header (the pcap global header, or the first pcapng section header block)
/// and says which format the input is.
fn read_header<R: Read>(r: &mut R) -> Result<(Format, Vec<u8>), CaptureError> {
    let mut head = vec![0u8; 4];
    let n = read_full(r, &mut head)?;
    if n == 0 {
        return Err(CaptureError::NotACapture("it is empty (0 bytes)".into()));
    }
    if n < 4 {
        return Err(CaptureError::NotACapture(format!(
            "the input is only {n} bytes long"
        )));
    }
    let magic = [head[0], head[1], head[2], head[3]];
    let format = match magic {
        [0xa1, 0xb2, 0xc3, 0xd4]
        | [0xd4, 0xc3, 0xb2, 0xa1]
        | [0xa1, 0xb2, 0x3c, 0x4d]
        | [0x4d, 0x3c, 0xb2, 0xa1]
        | [0x34, 0xcd, 0xb2, 0xa1] => Format::Pcap,
        [0xa1, 0xb2, 0xcd, 0x34] => {
            return Err(CaptureError::NotACapture(
                "it is a big-endian \"modified\" (Kuznetzov) pcap, which is not supported".into(),
            ))
        }
        [0x0a, 0x0d, 0x0d, 0x0a] => Format::PcapNg,
        _ if Compression::of(&head).is_some() => {
            let inner = Compression::of(&head).unwrap_or(Compression::Gzip);
            return Err(CaptureError::NotACapture(format!(
                "it is {}-compressed inside its compression (compressed twice?): pipe it \
                 through `{}` too",
                inner.name(),
                inner.cat()
            )));
        }
        [0x42, 0x5a, 0x68, _] => {
            return Err(CaptureError::NotACapture(
                "it is bzip2-compressed, which is not read directly; try: bzcat FILE | \
                 kafka-pcap -"
                    .into(),
            ))
        }
        [0x50, 0x4b, 0x03, 0x04] => {
            return Err(CaptureError::NotACapture(
                "it is a zip archive; unzip it first, then read the capture inside".into(),
            ))
        }
        _ => return Err(CaptureError::NotACapture(unknown_magic(magic, r)?)),
    };
    match format {
        Format::Pcap => {
            head.resize(24, 0);
            let n = read_full(r, &mut head[4..])?;
            if n < 20 {
                return Err(CaptureError::NotACapture(
                    "the pcap file header is cut short".into(),
                ));
            }
        }
        Format::PcapNg => {
            head.resize(12, 0);
            let n = read_full(r, &mut head[4..])?;
            if n < 8 {
                return Err(CaptureError::NotACapture(
                    "the pcapng section header is cut short".into(),
                ));
            }
            let len_bytes = [head[4], head[5], head[6], head[7]];
            let len = match [head[8], head[9], head[10], head[11]] {
                [0x4d, 0x3c, 0x2b, 0x1a] => u32::from_le_bytes(len_bytes),
                [0x1a, 0x2b, 0x3c, 0x4d] => u32::from_be_bytes(len_bytes),
                _ => {
                    return Err(CaptureError::NotACapture(
                        "the pcapng section header has no byte-order magic".into(),
                    ))
                }
            } as usize;
            if !(28..=READ_BUFFER_SIZE).contains(&len) || len % 4 != 0 {
                // A damaged length: the reader passes the block over (its byte order taken
                // from the mark), to the file's next plausible block.
                return Ok((format, head));
            }
            head.resize(len, 0);
            let n = read_full(r, &mut head[12..])?;
            if n < len - 12 {
                return Err(CaptureError::NotACapture(
                    "the pcapng section header is cut short".into(),
                ));
            }
        }
    }
    Ok((format, head))
}

/// An interface of a pcapng section.
#[derive(Debug, Clone, Copy)]
struct Interface {
    linktype: i32,
    /// Timestamp units per second.
    units_per_sec: u64,
    /// Seconds added to every timestamp (`if_tsoffset`).
    offset_secs: i64,
}

/// Timestamp units per second for a pcapng `if_tsresol` byte: 10^r, or 2^(r & 0x7f) when the
/// high bit is set (draft-ietf-opsawg-pcapng, section 4.2). An impossible value (10^20 and
/// above, 2^64 and above) falls back to microseconds.
fn units_per_sec(tsresol: u8) -> u64 {
    if tsresol & 0x80 == 0 {
        10u64.checked_pow(u32::from(tsresol)).unwrap_or(1_000_000)
    } else {
        1u64.checked_shl(u32::from(tsresol & 0x7f))
            .unwrap_or(1_000_000)
    }
}

fn ts_from_units(units: u64, per_sec: u64, offset_secs: i64) -> Timestamp {
    let per_sec = per_sec.max(1);
    // In 128 bits: a far-future count plus a negative offset must not saturate first.
    let secs = i128::from(units / per_sec) + i128::from(offset_secs);
    let secs = i64::try_from(secs).unwrap_or(if secs < 0 { i64::MIN } else { i64::MAX });
    let frac = units % per_sec;
    // Microseconds and nanoseconds (nearly every capture) without a 128-bit division.
    let nanos = if 1_000_000_000 % per_sec == 0 {
        (frac * (1_000_000_000 / per_sec)) as u32
    } else {
        (u128::from(frac) * 1_000_000_000 / u128::from(per_sec)) as u32
    };
    Timestamp {
        secs,
        nanos,
        digits: if per_sec > 1_000_000 { 9 } else { 6 },
    }
}

/// What the reader hands on.
#[derive(Debug, Clone, Copy)]
pub enum CaptureItem<'a, 'b> {
    /// The next packet.
    Packet(&'b CapturePacket<'a>),
    /// Damage in the file.
    Problem(&'b CaptureProblem),
}

/// Largest memory a decompressor may hold (128 MiB): zstd's own default window limit
/// (`zstd -d` reads every file within it without flags), and every xz preset (`-9e` needs
/// 65 MiB). A file that needs more ends its reading with an error naming the fix. This memory
/// is beside the run's budget, as the read buffer is: it is fixed by the file's header, not by
/// what the capture carries.
pub const MAX_DECOMPRESSION_MEMORY: u64 = 128 << 20;

/// How a capture file is compressed, from its magic number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// gzip (RFC 1952), any number of members (`.pcap.gz`).
    Gzip,
    /// Zstandard (RFC 8878), any number of frames.
    Zstd,
    /// LZ4 frame format (`lz4` and `lz4 -d`).
    Lz4,
    /// xz (`.xz`), any number of streams.
    Xz,
}

impl Compression {
    /// The compression whose magic number `head` (the first bytes of the input) starts with.
    pub fn of(head: &[u8]) -> Option<Compression> {
        match head {
            [0x1f, 0x8b, ..] => Some(Compression::Gzip),
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(Compression::Zstd),
            // A skippable frame (as `pzstd` writes first): read by the zstd decoder.
            [0x50..=0x5f, 0x2a, 0x4d, 0x18, ..] => Some(Compression::Zstd),
            [0x04, 0x22, 0x4d, 0x18, ..] => Some(Compression::Lz4),
            [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, ..] => Some(Compression::Xz),
            // The first 4 bytes of xz's magic, all a capture's header reader sees.
            [0xfd, 0x37, 0x7a, 0x58] => Some(Compression::Xz),
            _ => None,
        }
    }

    /// The name people call it by (`gzip`, `zstd`, `lz4`, `xz`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Lz4 => "lz4",
            Compression::Xz => "xz",
        }
    }

    /// The command that decompresses it to standard output.
    fn cat(self) -> &'static str {
        match self {
            Compression::Gzip => "zcat",
            Compression::Zstd => "zstdcat",
            Compression::Lz4 => "lz4cat",
            Compression::Xz => "xzcat",
        }
    }
}

/// A decompressor's output as the capture reader reads it. Damage in the compressed data (a
/// corrupt or cut stream) ends the decompressed input there, as the end of a truncated file
/// would, and is kept in `damage` to be reported; an I/O error of the input underneath (kept
/// in `io_error` by its [`Recording`]) stays an error.
struct Decompressed<'a> {
    decoder: Box<dyn Read + Send + 'a>,
    compression: Compression,
    io_error: Arc<Mutex<Option<io::Error>>>,
    damage: Arc<Mutex<Option<String>>>,
    /// Decompressed bytes so far.
    out: u64,
}

/// Most bytes asked of the xz decompressor at once (4 KiB): what it has decoded in the call
/// that meets damage is lost with it, and it decodes far ahead (up to 1 MiB, the read
/// buffer). The others are asked for what the reader wants: smaller calls cost gzip a third
/// more time.
const XZ_CHUNK: usize = 4 << 10;

impl Read for Decompressed<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = if self.compression == Compression::Xz {
            buf.len().min(XZ_CHUNK)
        } else {
            buf.len()
        };
        match self.decoder.read(&mut buf[..n]) {
            Ok(n) => {
                self.out += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                if self.io_error.lock().is_ok_and(|slot| slot.is_some()) {
                    return Err(e);
                }
                let text = e.to_string().to_ascii_lowercase();
                let what = if text.contains("memory") {
                    let how = match self.compression {
                        Compression::Zstd => {
                            "it was compressed with a large window (`zstd --long`); decompress \
                             it first: `zstdcat --long=31 FILE | kafka-pcap -`"
                        }
                        _ => {
                            "it was compressed with a large dictionary; decompress it first: \
                             `xzcat FILE | kafka-pcap -`"
                        }
                    };
                    format!(
                        "decompressing it needs more memory than the {} MiB this tool allows a \
                         decompressor: {how}",
                        MAX_DECOMPRESSION_MEMORY >> 20
                    )
                } else if e.kind() == io::ErrorKind::UnexpectedEof {
                    "the file ends inside the compressed data (cut short?)".to_string()
                } else {
                    format!("the compressed data is damaged ({e})")
                };
                // A cut or damaged stream keeps what it decoded before; only the first
                // damage is told.
                if let Ok(mut slot) = self.damage.lock() {
                    slot.get_or_insert(format!(
                        "{}-compressed capture: {what} (after {} decompressed bytes)",
                        self.compression.name(),
                        self.out
                    ));
                }
                Ok(0)
            }
        }
    }
}

/// LZ4 frames one after another, as `cat a.lz4 b.lz4` makes them (lz4_flex's decoder reads
/// one frame).
struct Lz4Frames<R: Read> {
    decoder: Option<lz4_flex::frame::FrameDecoder<io::BufReader<R>>>,
}

impl<R: Read> Read for Lz4Frames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use io::BufRead;
        loop {
            let Some(d) = self.decoder.as_mut() else {
                return Ok(0);
            };
            let n = d.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // This frame ended: another follows if bytes are left.
            let Some(d) = self.decoder.take() else {
                return Ok(0);
            };
            let mut inner = d.into_inner();
            if inner.fill_buf()?.is_empty() {
                return Ok(0);
            }
            self.decoder = Some(lz4_flex::frame::FrameDecoder::new(inner));
        }
    }
}

/// The decompressor of `compression` reading `src`. Errors: the decoder could not be set up.
fn decompressor<'a, R: Read + Send + 'a>(
    compression: Compression,
    src: R,
) -> io::Result<Box<dyn Read + Send + 'a>> {
    Ok(match compression {
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(src)),
        Compression::Zstd => {
            let mut d = zstd::stream::read::Decoder::new(src)?;
            d.window_log_max(MAX_DECOMPRESSION_MEMORY.trailing_zeros())?;
            Box::new(d)
        }
        Compression::Lz4 => Box::new(Lz4Frames {
            decoder: Some(lz4_flex::frame::FrameDecoder::new(io::BufReader::new(src))),
        }),
        Compression::Xz => {
            let stream = liblzma::stream::Stream::new_stream_decoder(
                MAX_DECOMPRESSION_MEMORY,
                liblzma::stream::CONCATENATED,
            )
            .map_err(io::Error::other)?;
            Box::new(liblzma::read::XzDecoder::new_stream(src, stream))
        }
    })
}

/// Reads a whole capture, calling `on_item` for each packet and each problem, in file order.
/// An input that is not a capture, or an I/O error, is an `Err`; damage inside the file is a
/// [`CaptureItem::Problem`] and then `Ok(())`. An error from `on_item` (for example a closed
/// output) stops the reading and is returned as [`CaptureError::Io`].
///
/// A capture compressed with gzip, zstd, lz4 (frame format) or xz ([`Compression`]) is
/// decompressed as it streams, on files and pipes alike; damage in its compressed data ends
/// the reading there with a `truncated_capture` problem.
pub fn read_capture<R, F>(input: R, on_item: F) -> Result<(), CaptureError>
where
    R: Read + Send,
    F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
{
    read_capture_with(input, false, on_item)
}

/// [`read_capture`], reading ahead on a thread of its own when `read_ahead` (a classic pcap
/// file not compressed: its reads, most of a busy capture's cost in the kernel, then overlap
/// the decoding). The records and problems are the same either way.
pub fn read_capture_with<R, F>(
    input: R,
    read_ahead: bool,
    mut on_item: F,
) -> Result<(), CaptureError>
where
    R: Read + Send,
    F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
{
    let error = Arc::new(Mutex::new(None));
    let mut src = Recording {
        inner: input,
        error: error.clone(),
    };
    let mut magic = [0u8; 6];
    let n = read_full(&mut src, &mut magic)?;
    let head = Cursor::new(magic[..n].to_vec()).chain(src);
    let Some(compression) = Compression::of(&magic[..n]) else {
        return read_plain(head, error, read_ahead, on_item);
    };
    let damage = Arc::new(Mutex::new(None));
    let decompressed = Decompressed {
        decoder: decompressor(compression, head)?,
        compression,
        io_error: error,
        damage: damage.clone(),
        out: 0,
    };
    let (mut last_frame, mut last_cut) = (0, false);
    let inner_error = Arc::new(Mutex::new(None));
    let src = Recording {
        inner: decompressed,
        error: inner_error.clone(),
    };
    let damaged = || damage.lock().ok().and_then(|d| d.clone());
    let r = read_plain(src, inner_error, false, |item| {
        match item {
            CaptureItem::Packet(p) => {
                last_frame = p.frame;
                last_cut = p.cut_by_file_end;
            }
            // A record cut by damage in the compressed data: the damage is reported instead.
            CaptureItem::Problem(p)
                if p.kind == AnomalyKind::TruncatedCapture && damaged().is_some() =>
            {
                return Ok(())
            }
            CaptureItem::Problem(_) => {}
        }
        on_item(item)
    });
    match (r, damaged()) {
        (Err(CaptureError::NotACapture(_)), Some(message)) => {
            Err(CaptureError::Io(io::Error::other(message)))
        }
        (Err(CaptureError::NotACapture(m)), None) => Err(CaptureError::NotACapture(format!(
            "{m} (after {} decompression; `{} FILE | kafka-pcap -` shows the same)",
            compression.name(),
            compression.cat()
        ))),
        (Err(e), _) => Err(e),
        (Ok(()), None) => Ok(()),
        (Ok(()), Some(message)) => {
            let message = if last_frame == 0 {
                format!("{message}; no whole packet came before it")
            } else if last_cut {
                format!(
                    "{message}; everything before it was read, to frame {last_frame}, whose \
                     record it cuts short (the bytes of it there were decoded as a packet cut \
                     short)"
                )
            } else {
                format!("{message}; everything before it was read, to frame {last_frame}")
            };
            report(
                &mut on_item,
                AnomalyKind::TruncatedCapture,
                message,
                last_frame,
            )
        }
    }
}

/// [`read_capture`] on an uncompressed capture whose reader's I/O errors are kept in `error`.
fn read_plain<R, F>(
    mut src: R,
    error: Arc<Mutex<Option<io::Error>>>,
    read_ahead: bool,
    mut on_item: F,
) -> Result<(), CaptureError>
where
    R: Read + Send,
    F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
{
    let (format, header) = read_header(&mut src)?;
    if format == Format::Pcap {
        return if read_ahead {
            read_legacy_ahead(src, &header, on_item)
        } else {
            read_legacy(src, &header, on_item)
        };
    }
    // pcapng, through pcap-parser's streaming reader's buffer. A first Section Header Block
    // whose lengths are damaged (which that reader refuses) comes after a whole one of its
    // byte order made here, so that the reading starts, then passes it over.
    let first_damaged = header.len() < 28
        || section_order(&header).is_some_and(|be| trailing_differs(&header, be).is_some());
    let prefix = match section_order(&header) {
        Some(be) if first_damaged => empty_section(be),
        _ => Vec::new(),
    };
    let chained = Cursor::new(prefix).chain(Cursor::new(header)).chain(src);
    let parse_err = |e: PcapError<&'static [u8]>| CaptureError::NotACapture(e.to_string());
    let mut reader = PcapNGReader::new(READ_BUFFER_SIZE, chained).map_err(parse_err)?;
    let take_io_error = || -> CaptureError {
        match error.lock().ok().and_then(|mut e| e.take()) {
            Some(e) => CaptureError::Io(e),
            None => CaptureError::Io(io::Error::other("read failed")),
        }
    };

    let mut blocks = Blocks::default();
    let mut capacity = READ_BUFFER_SIZE;
    // Past a damaged block: the search for the next plausible one.
    let mut skip: Option<BlockSkip> = None;
    loop {
        if let Some(s) = &mut skip {
            if !s.repair_tried {
                // First, as the in-memory reader does, the damaged block read after all when
                // its bytes and the next block's show its length: the window held whole.
                s.repair_tried = true;
                while reader.data().len() <= REPAIR_WINDOW && !reader.reader_exhausted() {
                    if reader.refill().is_err() {
                        return Err(take_io_error());
                    }
                }
                let data = reader.data();
                let at_end = reader.reader_exhausted() && data.len() <= REPAIR_WINDOW;
                if let Some(len) = blocks.take_repaired(s, data, at_end, &mut on_item)? {
                    reader.consume_noshift(len);
                    skip = None;
                    continue;
                }
            }
            let at_end = reader.reader_exhausted();
            let held = reader.data().len();
            match next_plausible_block(reader.data(), s.from(), blocks.big_endian, at_end) {
                Ok(at) => {
                    s.skipped += at as u64;
                    reader.consume_noshift(at);
                    s.report(true, &mut on_item)?;
                    skip = None;
                }
                Err(_) if at_end => {
                    s.skipped += held as u64;
                    s.report(false, &mut on_item)?;
                    return blocks.report_unknown_blocks(&mut on_item);
                }
                Err(keep) => {
                    s.skipped += keep as u64;
                    s.at_damage &= keep == 0;
                    reader.consume_noshift(keep);
                    if reader.refill().is_err() {
                        return Err(take_io_error());
                    }
                }
            }
            continue;
        }
        if let Some(what) = trailing_differs(reader.data(), blocks.big_endian) {
            skip = Some(blocks.skip_at(reader.data(), AnomalyKind::BadBlock, what));
            continue;
        }
        // Parsed here in the section's byte order as this reader knows it (not as
        // pcap-parser's reader does: past a damaged Section Header Block it would keep the
        // order of the section before).
        let parsed = {
            let data = reader.data();
            let parsed = parse_block(data, blocks.big_endian);
            match parsed {
                Ok((rest, block)) => {
                    let offset = data.len() - rest.len();
                    Ok((blocks.take(PcapBlockOwned::NG(block), &mut on_item), offset))
                }
                Err(nom::Err::Incomplete(n)) => Err(if reader.reader_exhausted() {
                    if data.is_empty() {
                        None
                    } else {
                        Some(Step::Truncated)
                    }
                } else {
                    let needed = match n {
                        nom::Needed::Size(n) => n.get(),
                        nom::Needed::Unknown => 1,
                    };
                    Some(if data.len() + needed >= capacity {
                        Step::TooSmall
                    } else {
                        Step::Incomplete
                    })
                }),
                Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => {
                    Err(Some(Step::Bad(parse_error_text(&e))))
                }
            }
        };
        let step = match parsed {
            Ok((result, offset)) => {
                reader.consume_noshift(offset);
                result?;
                continue;
            }
            Err(None) => return blocks.report_unknown_blocks(&mut on_item),
            Err(Some(step)) => step,
        };
        // A pcapng block whose length fits in the bytes at hand but that does not parse is
        // damaged: report it and go on after it.
        if let Some(len) = damaged_block_len(reader.data(), blocks.big_endian) {
            report(
                &mut on_item,
                AnomalyKind::BadBlock,
                format!(
                    "a damaged {len}-byte block after frame {} was skipped",
                    blocks.frame
                ),
                blocks.frame,
            )?;
            reader.consume_noshift(len);
            continue;
        }
        let declared = pcapng_block_len(reader.data(), blocks.big_endian);
        if let Some(len) = declared.filter(|&len| len > MAX_RECORD_SIZE as u64) {
            // Passed over unread, as the in-memory reader does.
            let what = too_large_block(len);
            skip = Some(blocks.skip_at(reader.data(), AnomalyKind::RecordTooLarge, what));
            continue;
        }
        let mut step = step;
        if matches!(step, Step::Incomplete | Step::TooSmall | Step::Truncated) {
            if let Some(len) = declared {
                if whole_block(reader.data(), blocks.big_endian) {
                    // The whole block is here, yet pcap-parser's reader asks for more: parse
                    // it as the in-memory reader does, and report what that says.
                    let data = reader.data();
                    let parsed = parse_block(data, blocks.big_endian);
                    let what = match parsed {
                        Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => {
                            block_damage(data, blocks.big_endian)
                                .unwrap_or_else(|| parse_error_text(&e))
                        }
                        _ => INCONSISTENT_BLOCK.to_string(),
                    };
                    skip = Some(blocks.skip_at(reader.data(), AnomalyKind::BadBlock, what));
                    continue;
                }
                if matches!(step, Step::TooSmall) && len + 4096 <= capacity as u64 {
                    // Room enough for the block it declares: read on to its end first.
                    step = Step::Incomplete;
                }
            }
        }
        match step {
            Step::Incomplete => {
                if reader.refill().is_err() {
                    return Err(take_io_error());
                }
            }
            Step::TooSmall => {
                // pcap-parser wants room beyond the block itself: a block of exactly
                // MAX_RECORD_SIZE bytes (allowed, as in the other readers) needs a little more.
                if capacity > MAX_RECORD_SIZE {
                    return report_too_large(&mut on_item, blocks.frame, None);
                }
                capacity = (capacity * 2).min(MAX_RECORD_SIZE + 4096);
                if !reader.grow(capacity) {
                    return report(
                        &mut on_item,
                        AnomalyKind::RecordTooLarge,
                        "a capture record could not be buffered; reading stopped there".into(),
                        blocks.frame,
                    );
                }
                if reader.refill().is_err() {
                    return Err(take_io_error());
                }
            }
            Step::Truncated => {
                let data = reader.data();
                if data.is_empty() {
                    // The file ends between blocks (read to its end by a search, the buffer
                    // not shifted since).
                    return blocks.report_unknown_blocks(&mut on_item);
                }
                // The rest of the file is at hand: a block declaring more than it holds
                // had its length damaged when its other end and the block after it show
                // another (read with that), or when a whole plausible block is inside it.
                let s = beyond_the_file(data, blocks.big_endian, blocks.frame);
                let at_end = data.len() <= REPAIR_WINDOW;
                if let Some(len) = blocks.take_repaired(&s, data, at_end, &mut on_item)? {
                    reader.consume_noshift(len);
                    continue;
                }
                let data = reader.data();
                if let Some(what) = longer_than_the_file(data, blocks.big_endian) {
                    skip = Some(blocks.skip_at(reader.data(), AnomalyKind::BadBlock, what));
                    continue;
                }
                let last = LastRecord::PcapNg(blocks.big_endian);
                return blocks.file_ends_inside(last, data, &mut on_item);
            }
            Step::Bad(what) => {
                let held = reader.data().len() as u64;
                if let Some(len) = declared.filter(|&n| n >= 12 && n > held) {
                    if !reader.reader_exhausted() {
                        // Judged whole, as the in-memory reader judges it (its trailing
                        // length): read on to its end first.
                        let before = capacity;
                        while (capacity as u64) < len + 4096 && capacity <= MAX_RECORD_SIZE {
                            capacity = (capacity * 2).min(MAX_RECORD_SIZE + 4096);
                        }
                        if capacity > before && !reader.grow(capacity) {
                            return report(
                                &mut on_item,
                                AnomalyKind::RecordTooLarge,
                                "a capture record could not be buffered; reading stopped there"
                                    .into(),
                                blocks.frame,
                            );
                        }
                        if reader.refill().is_err() {
                            return Err(take_io_error());
                        }
                        continue;
                    }
                }
                let what = block_damage(reader.data(), blocks.big_endian).unwrap_or(what);
                skip = Some(blocks.skip_at(reader.data(), AnomalyKind::BadBlock, what));
            }
        }
    }
}

/// A classic pcap file's record layout and its reader state, once its header was read.
struct Legacy {
    parse: FrameParser,
    big_endian: bool,
    header_len: usize,
    blocks: Blocks,
    /// Units of a timestamp's fraction per second (10^6, or 10^9 for nanosecond files).
    per_sec: u64,
    /// The largest captured length a plausible record has ([`Legacy::plausible_len`]): the
    /// file's snapshot length, at least 262,144 (tcpdump's default).
    max_caplen: u32,
    /// The file's snapshot length as its header gives it (0: none given).
    snaplen: u32,
    /// The seconds of the last record read, which a plausible record's are near.
    last_secs: Option<u32>,
    /// The seconds of the last record read within a day of the one before it (or the
    /// first): a record read after damage with a time far from them all (a header inside
    /// another record's bytes that read as one) does not take the time a search looks near.
    anchor_secs: Option<u32>,
    /// The last record's fraction, captured length and length on the wire: what is odd in a
    /// header a day away is odd only where the record before it was not so too (some writers
    /// put more captured than on the wire, or 0 on the wire, in every record).
    last_fields: (u32, u32, u32),
    /// Past a damaged record header ([`Damage`]): looking for the next plausible record
    /// ([`Legacy::next_plausible`]).
    skipping: Option<Skipping>,
    /// A record read in its time had a fraction of a second or more: the writer puts
    /// nanoseconds in a microsecond file (Wireshark reads them), so such a fraction is odd
    /// nowhere in this file.
    wide_fractions: bool,
    /// The most bytes captured over the length on the wire a plausible record declares:
    /// [`OVERCOUNT`], or more where records read in their time declared more (their header
    /// after them reading as one: a writer that pads its records).
    overcount: u32,
}

/// The search for the next plausible record after a damaged record header.
#[derive(Debug, Clone, Copy)]
struct Skipping {
    /// The frame number of the last record read before it.
    after_frame: u64,
    /// What was wrong with the header.
    damage: Damage,
    /// Bytes passed over so far.
    skipped: u64,
    /// Whether the bytes at hand start with the damaged header (passed over), or with a
    /// candidate kept for more bytes (looked at again).
    at_damage: bool,
    /// The seconds of a damaged header that only its time put in doubt, near which a record
    /// counts as plausible too (the clock may have jumped there).
    around: Option<u32>,
}

/// How many more bytes captured than on the wire a plausible record may declare (a writer of
/// Linux "cooked" captures counted its 16-byte header, or SLL2's 20, in the one and not the
/// other).
const OVERCOUNT: u32 = 64;

/// A day, in seconds: how far from the last records' a plausible record's time is.
const DAY_SECS: u32 = 86_400;

/// Whether `secs` is within a day of `of` (pcap's seconds are unsigned 32-bit: the
/// difference is taken around the circle, as one subtraction and one compare).
#[inline(always)]
fn near(secs: u32, of: u32) -> bool {
    secs.wrapping_sub(of).wrapping_add(DAY_SECS) <= 2 * DAY_SECS
}

/// What is wrong with a classic pcap record header that starts a search for the next
/// plausible record.
#[derive(Debug, Clone, Copy)]
enum Damage {
    /// It declares this many bytes captured (when its length fields are there): more than
    /// 64 MiB, or more than both the file's snapshot length (at least 262,144) and its length
    /// on the wire.
    Declares(Option<u64>),
    /// It declares this many bytes captured (`.0`), more than the snapshot length (at least
    /// 262,144), and more than 16 MiB on the wire (`.1`).
    HugeOnTheWire(u64, u32),
    /// Sixteen zero bytes (time 0, nothing captured, nothing on the wire): a file not written
    /// to its end, or zeros written over it, as after a crash.
    Zeros,
    /// Its seconds (`secs`) are more than a day from the last record's, and something else
    /// is odd too (`odd`). A record before it whose length was damaged (one within the
    /// snapshot length) ended inside another's bytes, most likely.
    FarAndOdd { secs: u32, odd: Odd },
    /// It declares this many bytes captured (`.0`), more than [`OVERCOUNT`] bytes over its
    /// length on the wire (`.1`), and the header after its record does not read as one: its
    /// captured length was damaged (within the snapshot length), most likely.
    CapturedOverWire(u32, u32),
}

/// Why a record is read with fewer bytes than it declares ([`Legacy::take_repaired`]).
#[derive(Clone, Copy)]
enum Repaired {
    /// The file's end cuts it as declared.
    Cut,
    /// The header after it does not read as one.
    AfterDoesNotRead,
    /// The header after it reads as one, but no record before it declared as much excess.
    NotLikeTheLast,
}

/// What the look-ahead past a record declaring more captured than on the wire finds
/// ([`Legacy::look_ahead`]).
enum Ahead {
    /// The record is read: the header after it reads as one (`writer`: the writer wrote it
    /// so, most likely), or is zeros, or is not to be looked at (the file's end, or past the
    /// most a reader buffers), or the file's records declared as much before.
    Read { writer: bool },
    /// The header after it is not in the bytes at hand: this many more bytes are needed.
    More(usize),
    /// The header after its first `c` captured bytes (its length on the wire, or the
    /// snapshot length if less) reads as one, and the one at its declared end does not
    /// (`after_reads` false) or no record before it declared as much excess: it is read
    /// with `c`.
    Repair { c: u32, after_reads: bool },
    /// Neither: a damaged header, passed over.
    Damaged(Damage),
}

/// What besides its time is odd in a header [`Damage::FarAndOdd`].
#[derive(Debug, Clone, Copy)]
enum Odd {
    /// A fraction of a second or more (this many units), where no record read in its time
    /// had one.
    Fraction(u32),
    /// Nothing captured.
    NothingCaptured,
    /// More bytes captured (`.0`) than on the wire (`.1`), or than the snapshot length.
    Captured(u32, u32),
    /// More than 16 MiB on the wire.
    OnTheWire(u32),
    /// Nothing on the wire (some writers write 0 there in every record).
    NothingOnTheWire,
}

/// More bytes a search for a plausible record asks for at a time: a record of the largest
/// plausible length and the header after it.
const SKIP_WANT: usize = 262_144 + 64;

impl Legacy {
    /// The reader of the file whose 24-byte header is `header`, with that header taken.
    fn start<F>(header: &[u8], on_item: &mut F) -> Result<Legacy, CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        let header = match pcap_parser::parse_pcap_header(header) {
            Ok((_, h)) => h,
            Err(e) => return Err(CaptureError::NotACapture(format!("{e:?}"))),
        };
        let (parse, big_endian, header_len) = legacy_layout(&header);
        let per_sec = if header.is_nanosecond_precision() {
            1_000_000_000
        } else {
            1_000_000
        };
        let max_caplen = header.snaplen.clamp(262_144, MAX_RECORD_SIZE as u32);
        let snaplen = header.snaplen;
        let mut blocks = Blocks::default();
        blocks.take(PcapBlockOwned::LegacyHeader(header), on_item)?;
        Ok(Legacy {
            parse,
            big_endian,
            header_len,
            blocks,
            per_sec,
            max_caplen,
            snaplen,
            last_secs: None,
            last_fields: (0, 1, 1),
            anchor_secs: None,
            skipping: None,
            wide_fractions: false,
            overcount: OVERCOUNT,
        })
    }

    /// The whole length of the record at the start of `data` when its header reads as one a
    /// capture holds: a captured length from 1 to `max_caplen` and no more than its length
    /// on the wire (at most 16 MiB) and `overcount` bytes (a length on the wire of 0, which
    /// some writers write, counts too), and seconds within a day of the last record's or of
    /// the last one read in its time (`anchor_secs`), its fraction of a second then not
    /// looked at (a writer may put nanoseconds in a microsecond file; Wireshark reads it), or
    /// within a day of the damaged header's own (`around`: the clock may have jumped there)
    /// with a fraction under a second (any, where the file's records have shown wider ones).
    /// `None` otherwise, or when the header is not all there.
    fn plausible_len(&self, data: &[u8], around: Option<u32>) -> Option<usize> {
        self.plausible_with(data, around, self.overcount)
    }

    /// [`Legacy::plausible_len`] with `overcount` bytes captured over the length on the wire
    /// allowed.
    fn plausible_with(&self, data: &[u8], around: Option<u32>, overcount: u32) -> Option<usize> {
        let word = |at| word_at(data, at, self.big_endian);
        let (secs, frac, caplen, origlen) = (word(0)?, word(4)?, word(8)?, word(12)?);
        let near_to = |t: Option<u32>| t.is_some_and(|t| near(secs, t));
        let near = self.last_secs.is_none()
            || near_to(self.last_secs)
            || near_to(self.anchor_secs)
            || (near_to(around) && (u64::from(frac) < self.per_sec || self.wide_fractions));
        let fits = (1..=self.max_caplen).contains(&caplen)
            && origlen <= 1 << 24
            && (origlen == 0 || caplen <= origlen.saturating_add(overcount));
        (fits && near && data.len() >= self.header_len).then(|| self.header_len + caplen as usize)
    }

    /// Whether `after`, the header after a candidate record, confirms it: a plausible header
    /// ([`Legacy::plausible_len`]), or sixteen zeros (a file not written to its end).
    fn followed(&self, after: &[u8], around: Option<u32>) -> bool {
        self.plausible_len(after, around).is_some() || after.iter().all(|&b| b == 0)
    }

    /// Takes a record that is read (`far`: its time more than a day from the last record's),
    /// and keeps its time and fields for the records after it.
    #[inline(always)]
    fn read<F>(
        &mut self,
        block: LegacyPcapBlock<'_>,
        far: bool,
        on_item: &mut F,
    ) -> Result<(), CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        if !far {
            self.anchor_secs = Some(block.ts_sec);
        }
        self.last_secs = Some(block.ts_sec);
        self.last_fields = (block.ts_usec, block.caplen, block.origlen);
        self.blocks.take(PcapBlockOwned::Legacy(block), on_item)
    }

    /// Where in `data` the next plausible record starts, looking from `from`: the first
    /// offset whose header is plausible and whose record is followed by another plausible
    /// header, or ends where `data` ends when `at_end` (the file's end; a record the end
    /// cuts counts); a record whose header after it lies past the most a reader buffers
    /// ([`MAX_RECORD_SIZE`] from its start) does not. `Err(keep)`: none before `keep`, from
    /// where more bytes may show one.
    fn next_plausible(
        &self,
        data: &[u8],
        from: usize,
        at_end: bool,
        around: Option<u32>,
    ) -> Result<usize, usize> {
        let h = self.header_len;
        scan(data, from, h, at_end, |d| {
            let len = self.plausible_len(d, around)?;
            // Past the most a reader buffers, what follows it cannot confirm it: refuted, by
            // the in-memory reader too.
            if len + h > MAX_RECORD_SIZE {
                return Some((len, Some(false)));
            }
            // Followed by another, or by zeros (a file not written to its end).
            Some((
                len,
                d.get(len..len + h)
                    .map(|after| self.followed(after, around)),
            ))
        })
    }

    /// The end of a search: a `record_too_large` problem saying how many bytes were passed
    /// over, and whether the reading went on.
    fn skipped<F>(
        &mut self,
        s: Skipping,
        resumed: bool,
        on_item: &mut F,
    ) -> Result<(), CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        let then = passed_over("record", resumed);
        let size = |declared: Option<u64>| {
            declared.map_or(String::new(), |n| format!(" (it declares {n} bytes)"))
        };
        let (kind, what) = match s.damage {
            Damage::Declares(declared) if declared.is_some_and(|n| n > MAX_RECORD_SIZE as u64) => (
                AnomalyKind::RecordTooLarge,
                format!(
                    "a capture record is larger than {MAX_RECORD_SIZE} bytes{}: a damaged record \
                     header, most likely",
                    size(declared)
                ),
            ),
            Damage::Declares(declared) => (
                AnomalyKind::RecordTooLarge,
                format!(
                    "a capture record declares more bytes captured than its snapshot length and \
                     its length on the wire{}: a damaged record header, most likely",
                    size(declared)
                ),
            ),
            Damage::HugeOnTheWire(c, o) => (
                AnomalyKind::RecordTooLarge,
                format!(
                    "a capture record declares {c} bytes captured, more than its snapshot \
                     length, and {o} bytes on the wire, more than 16 MiB: a damaged record \
                     header, most likely"
                ),
            ),
            Damage::Zeros => (
                AnomalyKind::BadBlock,
                "a capture record header of zero bytes (time 0, nothing captured): a file not \
                 written to its end, or zeros written over it, as after a crash, most likely"
                    .to_string(),
            ),
            Damage::CapturedOverWire(c, o) => (
                AnomalyKind::RecordTooLarge,
                format!(
                    "a capture record declares {c} bytes captured, more than its length on the \
                     wire ({o}), and the header after it does not read as one: a damaged \
                     captured length, most likely"
                ),
            ),
            Damage::FarAndOdd { secs, odd } => {
                let odd = match odd {
                    Odd::Fraction(f) => format!("a fraction of a second of {f}, a second or more"),
                    Odd::NothingCaptured => "nothing captured".to_string(),
                    Odd::Captured(c, o) => format!(
                        "{c} bytes captured, more than its length on the wire ({o}) or the \
                         snapshot length"
                    ),
                    Odd::OnTheWire(o) => format!("{o} bytes on the wire, more than 16 MiB"),
                    Odd::NothingOnTheWire => "nothing on the wire".to_string(),
                };
                (
                    AnomalyKind::BadBlock,
                    format!(
                        "a capture record header whose time ({secs} seconds) is more than a day \
                         from the last record's, with {odd}: the record before it had its length \
                         damaged, most likely, and ended inside another's bytes"
                    ),
                )
            }
        };
        report(
            on_item,
            kind,
            format!("{what}; {} bytes {then}", s.skipped),
            s.after_frame,
        )
    }

    /// Goes on with the search for a plausible record in `buf`: `Ok(at)` once found (the
    /// bytes before it passed over, reported), `Err(keep)` when `buf` holds none yet (its
    /// bytes before `keep` passed over, those after kept for a candidate).
    #[cold]
    #[inline(never)]
    fn skip<F>(
        &mut self,
        buf: &[u8],
        at_end: bool,
        on_item: &mut F,
    ) -> Result<Result<usize, usize>, CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        let Some(mut s) = self.skipping else {
            return Ok(Ok(0));
        };
        let from = usize::from(s.at_damage);
        match self.next_plausible(buf, from, at_end, s.around) {
            Ok(at) => {
                s.skipped += at as u64;
                self.skipping = None;
                // The record found is read in its time (the one it was found near, or a time
                // the clock jumped to), not judged far from the last again.
                if let Some(secs) = word_at(&buf[at..], 0, self.big_endian) {
                    self.last_secs = Some(secs);
                }
                self.skipped(s, true, on_item)?;
                Ok(Ok(at))
            }
            Err(keep) => {
                s.skipped += keep as u64;
                s.at_damage = s.at_damage && keep == 0;
                self.skipping = Some(s);
                Ok(Err(keep))
            }
        }
    }

    /// Takes every whole record at the start of `buf`: `Ok(Ok((used, needed)))`, the bytes
    /// taken and how many more the record after them needs (at least 1), or `Ok(Err(()))`
    /// when a record stopped the reading (reported). `at_end`: `buf` ends where the file
    /// ends (a record is not held back for a look at the header after it).
    #[inline(always)]
    fn records<F>(
        &mut self,
        buf: &[u8],
        at_end: bool,
        on_item: &mut F,
    ) -> Result<Result<(usize, usize), ()>, CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        let mut used = 0;
        loop {
            if self.skipping.is_some() {
                match self.skip(&buf[used..], at_end, on_item)? {
                    Ok(at) => used += at,
                    Err(keep) => return Ok(Ok((used + keep, SKIP_WANT))),
                }
            }
            match (self.parse)(&buf[used..]) {
                Ok((rest, block)) => {
                    let len = buf.len() - used - rest.len();
                    // (Three compares on the way of every record: past 64 MiB is past the
                    // plausible most too, and nothing captured wraps past it.)
                    let far = self.last_secs.is_some_and(|last| !near(block.ts_sec, last));
                    if block.caplen.wrapping_sub(1) >= self.max_caplen
                        || u64::from(block.ts_usec) >= self.per_sec
                        || far
                    {
                        if let Some(damage) = self.damage(&block, len, far) {
                            // (Past 64 MiB read whole only from memory: as a stream would, it
                            // is passed over.)
                            self.start_skipping(damage);
                            continue;
                        }
                        if !far && u64::from(block.ts_usec) >= self.per_sec {
                            self.wide_fractions = true;
                        }
                    }
                    // (One more compare: more captured than on the wire, beyond what some
                    // writers add, is looked at with the header after it.)
                    if u64::from(block.caplen) > u64::from(block.origlen) + u64::from(OVERCOUNT) {
                        match self.look_ahead(&buf[used..], &block, at_end) {
                            Ahead::Read { writer } => {
                                if writer && !far {
                                    self.overcount =
                                        self.overcount.max(block.caplen - block.origlen);
                                }
                            }
                            Ahead::More(n) => return Ok(Ok((used, n))),
                            Ahead::Damaged(damage) => {
                                self.start_skipping(damage);
                                continue;
                            }
                            Ahead::Repair { c, after_reads } => {
                                let why = if after_reads {
                                    Repaired::NotLikeTheLast
                                } else {
                                    Repaired::AfterDoesNotRead
                                };
                                used += self.take_repaired(block, c, why, on_item)?;
                                continue;
                            }
                        }
                    }
                    self.read(block, far, on_item)?;
                    used += len;
                }
                Err(nom::Err::Incomplete(n)) => {
                    let needed = match n {
                        nom::Needed::Size(n) => n.get(),
                        nom::Needed::Unknown => 1,
                    };
                    // A record claiming more than the most any reader buffers: a damaged
                    // header; the reading goes on at the next plausible record.
                    let declared =
                        legacy_record_len(&buf[used..], self.big_endian, self.header_len);
                    let origlen = word_at(&buf[used..], 12, self.big_endian);
                    let caplen = declared.map(|n| n - self.header_len as u64);
                    if declared.is_some_and(|len| len > MAX_RECORD_SIZE as u64)
                        || caplen.zip(origlen).is_some_and(|(c, o)| {
                            c > u64::from(self.max_caplen) && c > u64::from(o)
                        })
                    {
                        self.start_skipping(Damage::Declares(caplen));
                        continue;
                    }
                    if let Some((c, o)) = caplen.zip(origlen) {
                        if c > u64::from(self.max_caplen) && o > 1 << 24 {
                            self.start_skipping(Damage::HugeOnTheWire(c, o));
                            continue;
                        }
                    }
                    // A record the file's end cuts that declares more captured than on the
                    // wire: its captured length damaged, when the header after its length on
                    // the wire reads as one.
                    if at_end {
                        if let Some((block, c)) = self.cut_but_repaired(&buf[used..]) {
                            used += self.take_repaired(block, c, Repaired::Cut, on_item)?;
                            continue;
                        }
                    }
                    return Ok(Ok((used, needed)));
                }
                // The frame parsers ask only for more bytes; kept for safety.
                Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => {
                    let what = parse_error_text(&e);
                    let message = format!(
                        "a damaged record after frame {} stopped the reading: {what}",
                        self.blocks.frame
                    );
                    report(on_item, AnomalyKind::BadBlock, message, self.blocks.frame)?;
                    return Ok(Err(()));
                }
            }
        }
    }

    /// What is wrong with a record's header (of `len` bytes with its record), if anything,
    /// though it parsed: more than 64 MiB (read whole only from memory), or more bytes
    /// captured than the plausible most (the snapshot length, at least 262,144) and than its
    /// length on the wire or with more than 16 MiB on the wire, which no capture writes (a
    /// high bit flipped in its captured length, most likely); sixteen zero bytes; or a time
    /// more than a day from the last record's (`far`) with something else odd
    /// ([`Damage::FarAndOdd`]). Each odd thing alone is read: a fraction of a second or more
    /// is a `bad_timestamp` (read as Wireshark reads it), a jump of the clock is a jump.
    #[cold]
    #[inline(never)]
    fn damage(&self, b: &LegacyPcapBlock<'_>, len: usize, far: bool) -> Option<Damage> {
        if b.caplen > self.max_caplen
            && (len > MAX_RECORD_SIZE + self.header_len || b.caplen > b.origlen)
        {
            return Some(Damage::Declares(Some(u64::from(b.caplen))));
        }
        if b.caplen > self.max_caplen && b.origlen > 1 << 24 {
            return Some(Damage::HugeOnTheWire(u64::from(b.caplen), b.origlen));
        }
        if (b.ts_sec, b.ts_usec, b.caplen, b.origlen) == (0, 0, 0, 0) {
            return Some(Damage::Zeros);
        }
        if !far {
            return None;
        }
        let (frac, caplen, origlen) = self.last_fields;
        let odd = if u64::from(b.ts_usec) >= self.per_sec
            && u64::from(frac) < self.per_sec
            && !self.wide_fractions
        {
            Odd::Fraction(b.ts_usec)
        } else if b.caplen == 0 && caplen != 0 {
            Odd::NothingCaptured
        } else if b.caplen > self.max_caplen || (b.caplen > b.origlen && caplen <= origlen) {
            Odd::Captured(b.caplen, b.origlen)
        } else if b.origlen > 1 << 24 {
            Odd::OnTheWire(b.origlen)
        } else if b.origlen == 0 && origlen != 0 {
            Odd::NothingOnTheWire
        } else {
            return None;
        };
        Some(Damage::FarAndOdd {
            secs: b.ts_sec,
            odd,
        })
    }

    /// A record (`b`, at the start of `data`) declaring more bytes captured than
    /// [`OVERCOUNT`] over its length on the wire. Read as it is when it declares no more than
    /// records read before it did (`overcount`: a writer that pads its records), or when the
    /// header after it is past the file's end (`at_end`) or past the most a reader buffers,
    /// or reads as one (as [`Legacy::plausible_len`] judges, any overcount allowed) and it is
    /// the file's first; else read with its length on the wire (or the snapshot length, if
    /// less) when the header there reads as one and the one after that too (where at hand);
    /// else read as it is when the header after it reads as one or is sixteen zeros (a file
    /// not written to its end); else damaged. A length on the wire of 0 says nothing.
    /// `Ahead::More`: more bytes must be at hand to judge it.
    #[cold]
    #[inline(never)]
    fn look_ahead(&self, data: &[u8], b: &LegacyPcapBlock<'_>, at_end: bool) -> Ahead {
        let h = self.header_len;
        if b.origlen == 0 || b.caplen.saturating_sub(b.origlen) <= self.overcount {
            return Ahead::Read { writer: false };
        }
        let len = h + b.caplen as usize;
        // (Nothing past the most a reader buffers is looked at: the stream could not hold it.)
        let end = len + h;
        let after = match data.get(len..end).filter(|_| end <= MAX_RECORD_SIZE) {
            Some(after) => after,
            None if at_end || end > MAX_RECORD_SIZE => return Ahead::Read { writer: false },
            None => return Ahead::More(end - data.len()),
        };
        // (Its captured length over its length on the wire as this one's may be.)
        let reads = self.plausible_with(after, None, u32::MAX).is_some();
        // (The file's first record: read, but its excess not learned, as its length may be
        // damaged all the same.)
        if reads && self.last_secs.is_none() {
            return Ahead::Read { writer: false };
        }
        // A header that reads as one after its length on the wire wins over the one at its
        // declared end (which a damaged length may put on another record's start): no record
        // before it declared as much excess.
        match self.repair_len(data, b.origlen, at_end) {
            Err(more) => Ahead::More(more),
            Ok(Some(c)) => Ahead::Repair {
                c,
                after_reads: reads,
            },
            Ok(None) if reads => Ahead::Read { writer: true },
            // Zeros after it count only now: packet bytes hold runs of zeros.
            Ok(None) if after.iter().all(|&x| x == 0) => Ahead::Read { writer: false },
            Ok(None) => Ahead::Damaged(Damage::CapturedOverWire(b.caplen, b.origlen)),
        }
    }

    /// The captured length a record at the start of `data` declaring more than
    /// [`OVERCOUNT`] over its length on the wire (`origlen`, not 0) is read with: its length
    /// on the wire, or the snapshot length if less, when the header after that many bytes
    /// reads as one and the one after it too (or is sixteen zeros, or past the file's end
    /// when `at_end`). `Ok(None)` otherwise; `Err(more)`: `data` does not reach that second
    /// header, `more` bytes more would.
    fn repair_len(&self, data: &[u8], origlen: u32, at_end: bool) -> Result<Option<u32>, usize> {
        let h = self.header_len;
        let c = self.wire_len(origlen);
        let at = h + c as usize;
        let Some(next) = data.get(at..).and_then(|d| self.plausible_len(d, None)) else {
            return Ok(None);
        };
        let end = at + next + h;
        match data.get(at + next..end).filter(|_| end <= MAX_RECORD_SIZE) {
            Some(after) => Ok(self.followed(after, None).then_some(c)),
            None if at_end || end > MAX_RECORD_SIZE => Ok(Some(c)),
            None => Err(end - data.len()),
        }
    }

    /// The bytes a record of `origlen` on the wire holds: that many, or the snapshot length
    /// if less.
    fn wire_len(&self, origlen: u32) -> u32 {
        match self.snaplen {
            0 => origlen,
            s => origlen.min(s),
        }
    }

    /// A record at the start of `data` that `data` (the file's last bytes) does not hold
    /// whole (and not passed over as [`Damage::Declares`] or [`Damage::HugeOnTheWire`]),
    /// declaring more captured than [`OVERCOUNT`] over its length on the wire, with the
    /// captured bytes at hand, and the length it is read with ([`Legacy::repair_len`], or
    /// its length on the wire, or the snapshot length if less, where the file ends right
    /// after that many), if any.
    #[cold]
    #[inline(never)]
    fn cut_but_repaired<'a>(&self, data: &'a [u8]) -> Option<(LegacyPcapBlock<'a>, u32)> {
        let word = |at| word_at(data, at, self.big_endian);
        let (ts_sec, ts_usec, caplen, origlen) = (word(0)?, word(4)?, word(8)?, word(12)?);
        if origlen == 0 || caplen <= origlen.saturating_add(self.overcount) {
            return None;
        }
        let wire = self.wire_len(origlen);
        // (Or the file ends right after that many.)
        let c = match self.repair_len(data, origlen, true) {
            Ok(Some(c)) => c,
            _ if data.len() == self.header_len + wire as usize => wire,
            _ => return None,
        };
        let block = LegacyPcapBlock {
            ts_sec,
            ts_usec,
            caplen,
            origlen,
            data: data.get(self.header_len..self.header_len + c as usize)?,
        };
        Some((block, c))
    }

    /// Takes a record read with fewer bytes than it declares ([`Ahead::Repair`], or cut by the
    /// file's end): `c` of its captured bytes; then reports it, saying `why`, at its frame;
    /// the bytes it took with its header.
    #[cold]
    #[inline(never)]
    fn take_repaired<F>(
        &mut self,
        b: LegacyPcapBlock<'_>,
        c: u32,
        why: Repaired,
        on_item: &mut F,
    ) -> Result<usize, CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        let (caplen, origlen) = (b.caplen, b.origlen);
        let block = LegacyPcapBlock {
            caplen: c,
            data: &b.data[..(c as usize).min(b.data.len())],
            ..b
        };
        let far = self.last_secs.is_some_and(|last| !near(block.ts_sec, last));
        self.read(block, far, on_item)?;
        let frame = self.blocks.frame;
        let what = if c < origlen {
            format!("the snapshot length, {c}")
        } else {
            format!("its length on the wire, {c}")
        };
        let after = match why {
            Repaired::Cut => "and the file ends inside it, while the header",
            Repaired::AfterDoesNotRead => {
                "and the header after it does not read as one, while the header"
            }
            Repaired::NotLikeTheLast => {
                "more over it than any record before it declared (the header after it may \
                 start a later record), and the header"
            }
        };
        report(
            on_item,
            AnomalyKind::RecordTooLarge,
            format!(
                "frame {frame} declares {caplen} bytes captured, more than its length on the \
                 wire ({origlen}), {after} after its first {c} bytes reads as one: a damaged \
                 captured length, most likely; read with {what}"
            ),
            frame,
        )?;
        Ok(self.header_len + c as usize)
    }

    /// Starts passing over a damaged record header (at the start of the bytes at hand).
    #[cold]
    fn start_skipping(&mut self, damage: Damage) {
        let around = match damage {
            Damage::FarAndOdd { secs, .. } => Some(secs),
            _ => None,
        };
        self.skipping = Some(Skipping {
            after_frame: self.blocks.frame,
            damage,
            skipped: 0,
            at_damage: true,
            around,
        });
    }

    /// The end of the file, with `tail` the bytes of a record it ends inside (none: the
    /// reading ended between records), or of a search for a plausible record.
    fn end<F>(&mut self, mut tail: &[u8], on_item: &mut F) -> Result<(), CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        loop {
            if let Some(s) = self.skipping {
                match self.skip(tail, true, on_item)? {
                    Ok(at) => tail = &tail[at..],
                    Err(_) => {
                        let s = Skipping {
                            skipped: s.skipped + tail.len() as u64,
                            ..s
                        };
                        self.skipping = None;
                        return self.skipped(s, false, on_item);
                    }
                }
            }
            // Records held back for a look at the header after them, or after a search.
            match self.records(tail, true, on_item)? {
                Ok((used, _)) => tail = &tail[used..],
                Err(()) => return Ok(()),
            }
            if self.skipping.is_none() {
                break;
            }
        }
        if tail.is_empty() {
            return Ok(());
        }
        let last = LastRecord::Pcap {
            big_endian: self.big_endian,
            header_len: self.header_len,
        };
        self.blocks.file_ends_inside(last, tail, on_item)
    }
}

/// The streaming reader for classic pcap: the records are parsed by pcap-parser's frame
/// parsers straight from a read buffer of [`READ_BUFFER_SIZE`] bytes (grown only for a larger
/// record, up to [`MAX_RECORD_SIZE`]), without `LegacyPcapReader`'s per-record dynamic calls
/// and block enum (a tenth of the time of a run on the benchmark capture). `header` holds the
/// 24-byte file header already read from `src`.
fn read_legacy<R, F>(mut src: R, header: &[u8], mut on_item: F) -> Result<(), CaptureError>
where
    R: Read,
    F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
{
    let mut legacy = Legacy::start(header, &mut on_item)?;
    let mut buf = vec![0u8; READ_BUFFER_SIZE];
    let (mut start, mut end) = (0usize, 0usize);
    loop {
        let needed = match legacy.records(&buf[start..end], false, &mut on_item)? {
            Ok((used, needed)) => {
                start += used;
                needed
            }
            Err(()) => return Ok(()),
        };
        // Keep the partial record, and make room for the whole of it.
        buf.copy_within(start..end, 0);
        end -= start;
        start = 0;
        let wanted = end.saturating_add(needed);
        if wanted > buf.len() {
            let mut capacity = buf.len();
            // (At most the most a record takes: nothing asks for more.)
            while capacity < wanted && capacity < MAX_RECORD_SIZE {
                capacity = (capacity * 2).min(MAX_RECORD_SIZE);
            }
            buf.resize(capacity, 0);
        }
        let n = loop {
            match src.read(&mut buf[end..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(CaptureError::Io(e)),
                Ok(n) => break n,
            }
        };
        if n == 0 {
            return legacy.end(&buf[..end], &mut on_item);
        }
        end += n;
    }
}

/// Bytes kept free at the front of each read-ahead chunk ([`read_capture_with`]): a record
/// that a chunk's end cut is moved there, before the next chunk's bytes, so that the chunk is
/// parsed where it was read (a longer record is gathered by copying).
pub const CHUNK_FRONT: usize = 256 * 1024 + 64;

/// [`read_legacy`] with the file read on a thread of its own, [`READ_BUFFER_SIZE`] bytes at a
/// time into chunks handed over (at most two waiting, two spare for reuse: about 6 MiB in
/// all), each parsed where it was read: the reads, which on a busy capture in the page cache
/// cost the kernel more than the decoding costs, overlap it. The records and problems are
/// those of [`read_legacy`]. The thread stops at the end of the file, on an I/O error, or
/// when the reading stops early.
fn read_legacy_ahead<R, F>(mut src: R, header: &[u8], mut on_item: F) -> Result<(), CaptureError>
where
    R: Read + Send,
    F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
{
    let mut legacy = Legacy::start(header, &mut on_item)?;
    let chunk_len = CHUNK_FRONT + READ_BUFFER_SIZE;
    std::thread::scope(|scope| {
        let (full_tx, full) = std::sync::mpsc::sync_channel::<io::Result<(Vec<u8>, usize)>>(2);
        let (spare, spare_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(2);
        scope.spawn(move || loop {
            let mut chunk = spare_rx.try_recv().unwrap_or_else(|_| vec![0u8; chunk_len]);
            let mut n = 0;
            let result = loop {
                match src.read(&mut chunk[CHUNK_FRONT + n..]) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => break Err(e),
                    Ok(0) => break Ok(()),
                    Ok(k) => {
                        n += k;
                        if CHUNK_FRONT + n == chunk.len() {
                            break Ok(());
                        }
                    }
                }
            };
            let last = n == 0 || result.is_err();
            // The bytes read before an error are records too: they go first.
            let mut sent = if n > 0 || result.is_ok() {
                full_tx.send(Ok((chunk, n)))
            } else {
                Ok(())
            };
            if let (Ok(()), Err(e)) = (&sent, result) {
                sent = full_tx.send(Err(e));
            }
            if sent.is_err() || last {
                return;
            }
        });
        let mut cur: Vec<u8> = Vec::new();
        let (mut start, mut end) = (0usize, 0usize);
        loop {
            match legacy.records(&cur[start..end], false, &mut on_item)? {
                Ok((used, _)) => start += used,
                Err(()) => return Ok(()),
            }
            let (next, n) = match full.recv() {
                Ok(Ok(got)) => got,
                Ok(Err(e)) => return Err(CaptureError::Io(e)),
                Err(_) => (Vec::new(), 0),
            };
            if n == 0 {
                return legacy.end(&cur[start..end], &mut on_item);
            }
            let tail = end - start;
            if tail <= CHUNK_FRONT {
                // The record the last chunk's end cut goes before this chunk's bytes.
                let mut next = next;
                next[CHUNK_FRONT - tail..CHUNK_FRONT].copy_from_slice(&cur[start..end]);
                let old = std::mem::replace(&mut cur, next);
                if old.len() == chunk_len {
                    let _ = spare.try_send(old);
                }
                start = CHUNK_FRONT - tail;
                end = CHUNK_FRONT + n;
            } else {
                // A record longer than the room in front: gathered by copying.
                cur.copy_within(start..end, 0);
                cur.truncate(tail);
                cur.extend_from_slice(&next[CHUNK_FRONT..CHUNK_FRONT + n]);
                let _ = spare.try_send(next);
                start = 0;
                end = cur.len();
            }
        }
    })
}

/// pcap-parser's parser of one record of a classic pcap file.
type FrameParser = fn(&[u8]) -> IResult<&[u8], LegacyPcapBlock<'_>, PcapError<&[u8]>>;

/// How the records of a classic pcap file with this header are laid out: their parser, their
/// byte order (big-endian or not), and their header's length in bytes (16, or 24 for the
/// "modified" format).
fn legacy_layout(header: &pcap_parser::PcapHeader) -> (FrameParser, bool, usize) {
    if header.is_modified_format() {
        (pcap_parser::parse_pcap_frame_modified, false, 24)
    } else if header.is_bigendian() {
        (pcap_parser::parse_pcap_frame_be, true, 16)
    } else {
        (pcap_parser::parse_pcap_frame, false, 16)
    }
}

/// The whole length in bytes that the classic pcap record at the start of `data` declares
/// (its `header_len`-byte header and captured length), once the header's length field is there.
fn legacy_record_len(data: &[u8], big_endian: bool, header_len: usize) -> Option<u64> {
    let b: [u8; 4] = data.get(8..12)?.try_into().ok()?;
    let caplen = if big_endian {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    };
    Some(u64::from(caplen) + header_len as u64)
}

/// The 32-bit word at `at` of the pcapng block that `data` starts with, in the section's byte
/// order (`big_endian`), or for a section header block in the order of its own magic.
/// The 32-bit word at `at` in `data`, big-endian or not, when the four bytes are there.
fn word_at(data: &[u8], at: usize, big_endian: bool) -> Option<u32> {
    let b: [u8; 4] = data.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(if big_endian {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    })
}

fn pcapng_word(data: &[u8], at: usize, big_endian: bool) -> Option<u32> {
    let be = if data.get(..4) == Some(&[0x0a, 0x0d, 0x0d, 0x0a]) {
        data.get(8..12)? == [0x1a, 0x2b, 0x3c, 0x4d]
    } else {
        big_endian
    };
    let b: [u8; 4] = data.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(if be {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    })
}

/// The total length that the pcapng block at the start of `data` declares, once it is there.
fn pcapng_block_len(data: &[u8], big_endian: bool) -> Option<u64> {
    pcapng_word(data, 4, big_endian).map(u64::from)
}

/// Reports a record or block declaring more than [`MAX_RECORD_SIZE`] bytes. Every reader
/// decides on the declared length alone, before looking for the bytes, so that a stream and a
/// file in memory read alike whatever follows.
/// `declared` is the length its header declares, when read.
fn report_too_large<F>(
    on_item: &mut F,
    frame: u64,
    declared: Option<u64>,
) -> Result<(), CaptureError>
where
    F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
{
    let size = declared.map_or(String::new(), |n| format!(" (it declares {n} bytes)"));
    report(
        on_item,
        AnomalyKind::RecordTooLarge,
        format!(
            "a capture record is larger than {MAX_RECORD_SIZE} bytes{size}; reading stopped \
             there: a damaged record header, most likely, and whatever the file holds after \
             it is not read"
        ),
        frame,
    )
}

/// What a pcap-parser error says, without the input bytes it may carry (which differ with
/// how much of the file was buffered, and mean nothing to a reader).
fn parse_error_text<I>(e: &PcapError<I>) -> String
where
    PcapError<I>: std::fmt::Display,
{
    match e {
        PcapError::NomError(_, kind) | PcapError::OwnedNomError(_, kind) => {
            format!("the block does not parse ({kind:?})")
        }
        other => other.to_string().chars().take(200).collect(),
    }
}

/// Whether `data` holds the whole pcapng block it starts with (a plausible declared length
/// of at least 12 bytes, and at least 32 bytes, the largest fixed header pcap-parser reads
/// before the length): then its parse cannot depend on bytes that follow it.
fn whole_block(data: &[u8], big_endian: bool) -> bool {
    pcapng_block_len(data, big_endian)
        .is_some_and(|len| len >= 12 && data.len() as u64 >= len.max(32))
}

/// What is wrong with the pcapng block at the start of `data`, when its length fields tell:
/// a length below the 12 bytes of an empty block or not a multiple of 4, or (the whole block
/// being there) a trailing length that differs from the leading one.
fn block_damage(data: &[u8], big_endian: bool) -> Option<String> {
    let len = pcapng_block_len(data, big_endian)?;
    if len < 12 {
        return Some(format!(
            "the block declares {len} bytes, fewer than the 12 of an empty block"
        ));
    }
    if len % 4 != 0 {
        return Some(format!(
            "the block declares {len} bytes, not a multiple of 4"
        ));
    }
    let trailing = pcapng_word(data, usize::try_from(len).ok()? - 4, big_endian)?;
    (u64::from(trailing) != len).then(|| {
        format!("the block's trailing length {trailing} differs from its leading length {len}")
    })
}

/// The layout of the record a file ends inside ([`Blocks::file_ends_inside`]).
#[derive(Clone, Copy)]
enum LastRecord {
    /// A classic pcap record: its byte order, and its header's length (16, or 24 in the
    /// "modified" format).
    Pcap { big_endian: bool, header_len: usize },
    /// A pcapng block, in its section's byte order (big-endian or not).
    PcapNg(bool),
}

/// The packet record that `data`, the file's last bytes, begin but do not hold whole (the
/// file ends inside it), with the captured bytes that are there: a classic pcap record whose
/// header is whole, or a pcapng Enhanced Packet Block whose fixed fields are (its `caplen`
/// and `origlen` as declared, its options and trailing length absent). `None` when the
/// header itself is cut, no byte of the packet is there, or (pcapng) the block is of another
/// type. A pcapng block that holds all its captured bytes is returned with them all (only its
/// options or trailing length were cut).
fn partial_record(last: LastRecord, data: &[u8]) -> Option<PcapBlockOwned<'_>> {
    let big_endian = match last {
        LastRecord::Pcap { big_endian, .. } | LastRecord::PcapNg(big_endian) => big_endian,
    };
    let word = |at: usize| word_at(data, at, big_endian);
    match last {
        LastRecord::Pcap { header_len, .. } => {
            let (ts_sec, ts_usec, caplen, origlen) = (word(0)?, word(4)?, word(8)?, word(12)?);
            let body = data.get(header_len..)?;
            let declared = (caplen as usize).min(MAX_RECORD_SIZE);
            (!body.is_empty() && body.len() < declared).then_some(PcapBlockOwned::Legacy(
                LegacyPcapBlock {
                    ts_sec,
                    ts_usec,
                    caplen,
                    // On the wire it was at least what the record says was captured.
                    origlen: origlen.max(caplen),
                    data: body,
                },
            ))
        }
        LastRecord::PcapNg(_) => {
            // Block type, block length, interface id, timestamp (high, low), captured
            // length, packet length, then the packet data (RFC draft-ietf-opsawg-pcapng 4.3).
            const ENHANCED_PACKET_BLOCK: u32 = 6;
            if word(0)? != ENHANCED_PACKET_BLOCK {
                return None;
            }
            let (block_len1, if_id) = (word(4)?, word(8)?);
            let (ts_high, ts_low, caplen, origlen) = (word(12)?, word(16)?, word(20)?, word(24)?);
            let body = data.get(28..)?;
            let body = &body[..body.len().min(caplen as usize)];
            (!body.is_empty()).then_some(PcapBlockOwned::NG(Block::EnhancedPacket(
                pcap_parser::pcapng::EnhancedPacketBlock {
                    block_type: ENHANCED_PACKET_BLOCK,
                    block_len1,
                    if_id,
                    ts_high,
                    ts_low,
                    caplen,
                    origlen: origlen.max(caplen),
                    data: body,
                    options: Vec::new(),
                    block_len2: block_len1,
                },
            )))
        }
    }
}

/// The message for a file that ends inside the record of frame `frame`, which holds `held` of
/// the `declared` captured bytes its header gives.
fn truncated_in(frame: u64, held: usize, declared: u32) -> String {
    format!(
        "the file ends inside the record of frame {frame}, after {held} of its {declared} \
         captured bytes (the capture was cut while being written); those bytes were decoded as a \
         packet cut short, everything before them was read"
    )
}

/// The message for a file that ends inside a record, after frame `frame`.
fn truncated(frame: u64) -> String {
    format!("the file ends inside a record after frame {frame}; everything before it was read")
}

/// What is wrong with the pcapng block at the start of `data` when `data` holds it whole and
/// its trailing length differs from its leading one ([`block_damage`]). Checked before a block
/// is parsed: pcap-parser compares the two only for some block types (not for unknown ones,
/// Simple Packet Blocks or Section Header Blocks), and a block whose type word was damaged
/// or shifted by bytes gone missing would otherwise be skipped by whatever length it declares.
fn trailing_differs(data: &[u8], big_endian: bool) -> Option<String> {
    let len = usize::try_from(pcapng_block_len(data, big_endian)?).ok()?;
    if len < 12 || len > data.len() {
        return None;
    }
    block_damage(data, big_endian)
}

/// What is wrong with a pcapng block whose contents run past the length it declares.
const INCONSISTENT_BLOCK: &str = "a length inside the block runs past its end";

/// When the pcapng block at the start of `data`, the file's last bytes, declares more bytes
/// than `data` holds yet a whole plausible block ([`next_plausible_block`]) starts inside it:
/// what is wrong with it (its length was damaged; the file was not cut inside it).
fn longer_than_the_file(data: &[u8], big_endian: bool) -> Option<String> {
    // (A Section Header Block's section is in the order of its mark.)
    let big_endian = section_order(data).unwrap_or(big_endian);
    next_plausible_block(data, 1, big_endian, false).ok()?;
    let len = pcapng_block_len(data, big_endian)?;
    Some(format!(
        "the block declares {len} bytes, more than the {} left in the file, yet a whole block \
         starts inside them (a damaged length, most likely)",
        data.len()
    ))
}

/// The problem of the pcapng block at the start of `data`, the file's last bytes, declaring
/// more bytes than they hold, after frame `after_frame`: for [`Blocks::take_repaired`].
fn beyond_the_file(data: &[u8], big_endian: bool, after_frame: u64) -> BlockSkip {
    let big_endian = section_order(data).unwrap_or(big_endian);
    let len = pcapng_block_len(data, big_endian).unwrap_or(0);
    let what = format!(
        "the block declares {len} bytes, more than the {} left in the file",
        data.len()
    );
    BlockSkip::new(AnomalyKind::BadBlock, what, after_frame)
}

/// The pcapng block at the start of `data`, parsed by pcap-parser in byte order `big_endian`
/// (the section's as this reader knows it).
fn parse_block(data: &[u8], big_endian: bool) -> nom::IResult<&[u8], Block<'_>, PcapError<&[u8]>> {
    if big_endian {
        pcap_parser::pcapng::parse_block_be(data)
    } else {
        pcap_parser::pcapng::parse_block_le(data)
    }
}

/// What the streaming reader does after a block did not parse.
enum Step {
    Incomplete,
    TooSmall,
    Truncated,
    Bad(String),
}

/// The length of the pcapng block at the start of `data` when that length is plausible
/// (at least 12, a multiple of 4, repeated at the block's end) and the whole block is in
/// `data`: such a block that does not parse is damaged, and reading can resume after it.
fn damaged_block_len(data: &[u8], big_endian: bool) -> Option<usize> {
    let big_endian = section_order(data).unwrap_or(big_endian);
    let word = |at: usize| word_at(data, at, big_endian);
    let len = word(4)? as usize;
    if len < 12 || len % 4 != 0 || len > data.len() || word(len - 4)? as usize != len {
        return None;
    }
    Some(len)
}

/// The largest pcapng block that a search past a damaged block takes as plausible: a packet
/// of tcpdump's default snapshot length (262,144 bytes) with its block's fields and 4 KiB of
/// options. A larger block right after the damage is passed over with it.
const PLAUSIBLE_BLOCK_MAX: usize = 262_144 + 4096;

/// The pcapng block types a search past damage stops at (draft-ietf-opsawg-pcapng: Interface
/// Description, the obsolete Packet Block, Simple Packet, Name Resolution, Interface
/// Statistics, Enhanced Packet, systemd Journal Export, Decryption Secrets, and the two Custom
/// Blocks), besides the Section Header Block.
const PLAUSIBLE_BLOCK_TYPES: [u32; 10] = [1, 2, 3, 4, 5, 6, 9, 0xa, 0xbad, 0x4000_0bad];

/// The Section Header Block's type, the same in both byte orders.
const SHB_TYPE: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

/// Where in `data` the next plausible pcapng block starts, looking from `from` (a byte at a
/// time: damage may have cut bytes out): the first offset holding a known block type
/// ([`PLAUSIBLE_BLOCK_TYPES`], or a Section Header Block with its byte-order mark, in either
/// order) and a total length of 12 to [`PLAUSIBLE_BLOCK_MAX`] bytes, a multiple of 4, that
/// the block's last 4 bytes repeat (an Enhanced Packet Block's captured length within it).
/// Other blocks are read in the section's byte order, `big_endian`. A block that `data`
/// does not hold whole counts when `at_end` (the file's end cuts it; the reader reports
/// that); otherwise `Err(keep)` says no plausible block starts before `keep`, from where
/// more bytes may show one.
fn next_plausible_block(
    data: &[u8],
    from: usize,
    big_endian: bool,
    at_end: bool,
) -> Result<usize, usize> {
    scan(data, from, 12, at_end, |d| {
        let be = match section_order(d) {
            Some(be) => be,
            None if d.get(..4) == Some(&SHB_TYPE[..]) => return None,
            None => word_at(d, 0, big_endian)
                .filter(|t| PLAUSIBLE_BLOCK_TYPES.contains(t))
                .map(|_| big_endian)?,
        };
        let len = word_at(d, 4, be)? as usize;
        let fits = (12..=PLAUSIBLE_BLOCK_MAX).contains(&len)
            && len % 4 == 0
            && (word_at(d, 0, be) != Some(6)
                || word_at(d, 20, be).is_none_or(|caplen| caplen as usize + 32 <= len));
        fits.then(|| {
            (
                len,
                (len <= d.len()).then(|| word_at(d, len - 4, be) == Some(len as u32)),
            )
        })
    })
}

/// The search that both readers' searches past damage share: the first offset of `data`
/// from `from` where `candidate` (given the bytes from there, at least `head` of them) sees
/// a plausible record or block of some length and `Some(true)`, what follows it confirming
/// it (`Some(false)`: refuting it; `None`: not in `data`, which then counts only when
/// `at_end`, the file's end). `Err(keep)`: none before `keep`, from where more bytes may
/// show one.
fn scan(
    data: &[u8],
    from: usize,
    head: usize,
    at_end: bool,
    candidate: impl Fn(&[u8]) -> Option<(usize, Option<bool>)>,
) -> Result<usize, usize> {
    let mut p = from;
    while p + head <= data.len() {
        match candidate(&data[p..]) {
            Some((_, Some(true))) => return Ok(p),
            Some((_, None)) if at_end => return Ok(p),
            Some((_, None)) => return Err(p),
            _ => {}
        }
        p += 1;
    }
    Err(p.min(data.len()))
}

/// The most bytes from a damaged pcapng block's start that [`repair_block`] looks at: the
/// block and the block after it that confirms its end, each at most [`PLAUSIBLE_BLOCK_MAX`]
/// (less than [`READ_BUFFER_SIZE`], so a stream holds them as the file in memory does).
const REPAIR_WINDOW: usize = 2 * PLAUSIBLE_BLOCK_MAX;

/// A pcapng block at the start of `window` whose leading or trailing length alone was damaged
/// (a bit flipped), read with the length the rest of the file gives it: `window` holds the
/// file's bytes from the block on, at most [`REPAIR_WINDOW`] of them (`at_end` when they run
/// to the file's end), in the section's byte order `big_endian`. Returns the block's length
/// `len` and its bytes with both lengths set to it, when: its type is a known one other than
/// a Section Header Block's ([`PLAUSIBLE_BLOCK_TYPES`]); `len` is its leading length (the
/// trailing one differing), or else the first length of 12 to [`PLAUSIBLE_BLOCK_MAX`] bytes,
/// a multiple of 4, that the four bytes before it repeat; a plausible block starts right
/// after it ([`next_plausible_block`]), or the file ends there; and the bytes so mended parse
/// as a block of that type, whole. `None` otherwise: the block is passed over as before.
/// Both readers judge the same bytes: the stream holds the window before judging.
fn repair_block(window: &[u8], big_endian: bool, at_end: bool) -> Option<(usize, Vec<u8>)> {
    let word = |at: usize| word_at(window, at, big_endian);
    if section_order(window).is_some() || !PLAUSIBLE_BLOCK_TYPES.contains(&word(0)?) {
        return None;
    }
    let leading = word(4)? as usize;
    let ends_at = |len: usize| {
        len == window.len() && at_end
            || next_plausible_block(&window[len..], 0, big_endian, at_end) == Ok(0)
    };
    let mended = |len: usize| {
        let mut b = window[..len].to_vec();
        let bytes = if big_endian {
            (len as u32).to_be_bytes()
        } else {
            (len as u32).to_le_bytes()
        };
        b[4..8].copy_from_slice(&bytes);
        b[len - 4..len].copy_from_slice(&bytes);
        let parsed = parse_block(&b, big_endian);
        matches!(parsed, Ok((rest, _)) if rest.is_empty()).then_some((len, b))
    };
    let plausible = |len: usize| len >= 12 && len % 4 == 0 && len <= PLAUSIBLE_BLOCK_MAX;
    if plausible(leading)
        && leading <= window.len()
        && word(leading - 4) != Some(leading as u32)
        && ends_at(leading)
    {
        // The trailing length damaged.
        if let Some(m) = mended(leading) {
            return Some(m);
        }
    }
    // The leading length damaged: the first end its trailing length confirms.
    (12..=window.len().min(PLAUSIBLE_BLOCK_MAX))
        .step_by(4)
        .filter(|&len| len != leading && word(len - 4) == Some(len as u32) && ends_at(len))
        .find_map(mended)
}

/// A search past a damaged pcapng block ([`next_plausible_block`]), and what it reports.
#[derive(Debug)]
struct BlockSkip {
    /// `bad_block`, or `record_too_large` for a block declaring more than 64 MiB.
    kind: AnomalyKind,
    /// What was wrong, for the problem's message.
    what: String,
    /// The frame number of the last packet read before it.
    after_frame: u64,
    /// Bytes passed over so far.
    skipped: u64,
    /// Whether the bytes at hand start with the damaged block (passed over from its second
    /// byte), or with a candidate kept for more bytes (looked at again).
    at_damage: bool,
    /// Whether [`repair_block`] was tried on the damaged block (by the stream, once).
    repair_tried: bool,
}

impl BlockSkip {
    /// A search starting at a damaged block after frame `after_frame`.
    fn new(kind: AnomalyKind, what: String, after_frame: u64) -> Self {
        BlockSkip {
            kind,
            what,
            after_frame,
            skipped: 0,
            at_damage: true,
            repair_tried: false,
        }
    }

    /// Where the search looks from in the bytes at hand.
    fn from(&self) -> usize {
        usize::from(self.at_damage)
    }

    /// The end of the search: the problem saying how many bytes were passed over, and
    /// whether the reading went on.
    fn report<F>(&self, resumed: bool, on_item: &mut F) -> Result<(), CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        let then = passed_over("block", resumed);
        let message = format!(
            "a damaged record after frame {}: {}; {} bytes {then}",
            self.after_frame, self.what, self.skipped
        );
        report(on_item, self.kind, message, self.after_frame)
    }

    /// The problem of a block read after all ([`repair_block`]), `len` bytes long.
    fn report_repaired<F>(&self, len: usize, on_item: &mut F) -> Result<(), CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        let message = format!(
            "a damaged record after frame {}: {}; read as a block of {len} bytes, the length \
             its other end repeats and where the next block (or the file's end) is",
            self.after_frame, self.what
        );
        report(on_item, self.kind, message, self.after_frame)
    }
}

/// The byte order that a Section Header Block at the start of `data` gives by its byte-order
/// mark, whatever its lengths say.
fn section_order(data: &[u8]) -> Option<bool> {
    if data.get(..4)? != SHB_TYPE {
        return None;
    }
    match data.get(8..12)? {
        [0x1a, 0x2b, 0x3c, 0x4d] => Some(true),
        [0x4d, 0x3c, 0x2b, 0x1a] => Some(false),
        _ => None,
    }
}

/// A Section Header Block of 28 bytes (version 1.0, section length unknown, no options) in
/// the byte order `big_endian`.
fn empty_section(big_endian: bool) -> Vec<u8> {
    let word = |v: u32| {
        if big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let mut b = SHB_TYPE.to_vec();
    b.extend_from_slice(&word(28));
    b.extend_from_slice(&word(0x1a2b_3c4d));
    b.extend_from_slice(&word(1)); // major 1, minor 0 (as two 16-bit words)
    b.extend_from_slice(&[0xff; 8]);
    b.extend_from_slice(&word(28));
    if big_endian {
        b[12..16].copy_from_slice(&[0, 1, 0, 0]);
    } else {
        b[12..16].copy_from_slice(&[1, 0, 0, 0]);
    }
    b
}

/// How a search past damage ended, for its message: "were passed over to the next plausible
/// `unit`, ..." when the reading `resumed`, else "... no plausible `unit` followed ...".
fn passed_over(unit: &str, resumed: bool) -> String {
    if resumed {
        format!(
            "were passed over to the next plausible {unit}, where the reading goes on (frame \
             numbers after it count the {}s read, not those the damaged bytes held)",
            if unit == "block" { "packet" } else { unit }
        )
    } else {
        format!("were passed over, and no plausible {unit} followed before the file's end")
    }
}

/// What a pcapng block declaring more than [`MAX_RECORD_SIZE`] bytes is, for a search's
/// message.
fn too_large_block(declared: u64) -> String {
    format!(
        "a block declares {declared} bytes, more than the {MAX_RECORD_SIZE} of the largest \
         capture record read (a damaged block header, most likely)"
    )
}

/// Most interfaces kept per pcapng section (65,536, about 1.5 MB): past them an interface
/// description is counted, not kept, and its packets are `unknown_interface` (a section that
/// describes millions of interfaces would otherwise hold memory for each).
pub const MAX_INTERFACES: usize = 65_536;

/// The state that interprets blocks, shared by the streaming and the in-memory readers:
/// frame numbering, the pcap header's link type and resolution, pcapng interfaces.
#[derive(Debug)]
struct Blocks {
    frame: u64,
    /// Byte order of the current pcapng section.
    big_endian: bool,
    legacy_linktype: i32,
    legacy_per_sec: u64,
    interfaces: Vec<Interface>,
    /// Whether a `bad_timestamp` was reported for a fraction of a second or more, and for a
    /// time outside the years 0000-9999 (the first of each is).
    bad_ts_reported: [bool; 2],
    /// Whether the current section described more than [`MAX_INTERFACES`] interfaces.
    interfaces_dropped: bool,
    /// pcapng block types this reader does not know, with how many of each were skipped
    /// (at most [`MAX_UNKNOWN_BLOCK_TYPES`] types).
    unknown_blocks: Vec<(u32, u64)>,
    /// Whether the block being taken is the file's last, which the file ends inside
    /// ([`CapturePacket::cut_by_file_end`]).
    file_end: bool,
}

/// Most unknown pcapng block types counted one by one (64); further types are counted
/// together.
const MAX_UNKNOWN_BLOCK_TYPES: usize = 64;

/// The obsolete Packet Block (draft-ietf-opsawg-pcapng, appendix A).
const OBSOLETE_PACKET_BLOCK: u32 = 2;

impl Default for Blocks {
    fn default() -> Self {
        Blocks {
            frame: 0,
            big_endian: false,
            legacy_linktype: 1,
            legacy_per_sec: 1_000_000,
            interfaces: Vec::new(),
            bad_ts_reported: [false; 2],
            interfaces_dropped: false,
            unknown_blocks: Vec::new(),
            file_end: false,
        }
    }
}

impl Blocks {
    /// The file ends inside a record, whose bytes in the file are `data` (tcpdump stopped
    /// while writing it): its packet's captured bytes that are there are handed on as a packet
    /// cut short (decoded as far as they go; [`CapturePacket::cut_by_file_end`]), then a
    /// `truncated_capture` problem says so. A record whose packet bytes are not reached gives
    /// the problem alone.
    fn file_ends_inside<F>(
        &mut self,
        last: LastRecord,
        data: &[u8],
        on_item: &mut F,
    ) -> Result<(), CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        let Some(block) = partial_record(last, data) else {
            let frame = self.frame;
            return report(
                on_item,
                AnomalyKind::TruncatedCapture,
                truncated(frame),
                frame,
            );
        };
        let (held, declared) = match &block {
            PcapBlockOwned::Legacy(b) => (b.data.len(), b.caplen),
            PcapBlockOwned::NG(Block::EnhancedPacket(b)) => (b.data.len(), b.caplen),
            _ => (0, 0),
        };
        let before = self.frame;
        self.file_end = (held as u64) < u64::from(declared);
        let taken = self.take(block, on_item);
        self.file_end = false;
        taken?;
        let frame = self.frame;
        let message = if frame == before {
            // Not a packet after all (an unknown interface, already reported).
            truncated(frame)
        } else if (held as u64) < u64::from(declared) {
            truncated_in(frame, held, declared)
        } else {
            format!(
                "the file ends inside the record of frame {frame}, after its {held} captured \
                 bytes (the capture was cut while being written); the packet was read whole, \
                 everything before it was read"
            )
        };
        report(on_item, AnomalyKind::TruncatedCapture, message, frame)
    }

    /// Starts a search past the damaged pcapng block at the start of `data`: when it is a
    /// Section Header Block whose byte-order mark is whole, its section starts (its byte
    /// order taken, the interfaces of the section before forgotten), its lengths aside.
    fn skip_at(&mut self, data: &[u8], kind: AnomalyKind, what: String) -> BlockSkip {
        if let Some(big_endian) = section_order(data) {
            self.interfaces.clear();
            self.interfaces_dropped = false;
            self.big_endian = big_endian;
        }
        BlockSkip::new(kind, what, self.frame)
    }

    /// The damaged block at the start of `window` (the search `skip` starts at it) read after
    /// all when [`repair_block`] mends it: its problem reported, then the block taken; its
    /// length, or `None` (nothing done).
    fn take_repaired<F>(
        &mut self,
        skip: &BlockSkip,
        window: &[u8],
        at_end: bool,
        on_item: &mut F,
    ) -> Result<Option<usize>, CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        let window = &window[..window.len().min(REPAIR_WINDOW)];
        let Some((len, mended)) = repair_block(window, self.big_endian, at_end) else {
            return Ok(None);
        };
        let parsed = parse_block(&mended, self.big_endian);
        let Ok((_, block)) = parsed else {
            return Ok(None);
        };
        skip.report_repaired(len, on_item)?;
        self.take(PcapBlockOwned::NG(block), on_item)?;
        Ok(Some(len))
    }

    /// Interprets one block, handing packets and problems to `on_item`.
    #[inline(always)]
    fn take<F>(&mut self, block: PcapBlockOwned<'_>, on_item: &mut F) -> Result<(), CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        let mut packet: Option<CapturePacket<'_>> = None;
        let mut bad_interface = None;
        let mut bad_fraction = None;
        let mut too_many_interfaces = false;
        match block {
            PcapBlockOwned::LegacyHeader(h) => {
                // The upper bits of the field carry FCS length and flags.
                self.legacy_linktype = h.network.0 & 0x03ff_ffff;
                self.legacy_per_sec = if h.is_nanosecond_precision() {
                    1_000_000_000
                } else {
                    1_000_000
                };
            }
            PcapBlockOwned::Legacy(b) => {
                self.frame += 1;
                let per_sec = self.legacy_per_sec;
                let ts = if u64::from(b.ts_usec) < per_sec {
                    Timestamp {
                        secs: i64::from(b.ts_sec),
                        nanos: b.ts_usec * (1_000_000_000 / per_sec) as u32,
                        digits: if per_sec > 1_000_000 { 9 } else { 6 },
                    }
                } else {
                    // An invalid fraction (>= one second) is carried into the seconds.
                    bad_fraction = Some(b.ts_usec);
                    let units = u64::from(b.ts_sec) * per_sec + u64::from(b.ts_usec);
                    ts_from_units(units, per_sec, 0)
                };
                packet = Some(CapturePacket {
                    frame: self.frame,
                    linktype: self.legacy_linktype,
                    ts,
                    data: b.data,
                    orig_len: b.origlen,
                    cut_by_file_end: self.file_end,
                });
            }
            PcapBlockOwned::NG(Block::SectionHeader(shb)) => {
                self.interfaces.clear();
                self.interfaces_dropped = false;
                self.big_endian = shb.big_endian();
            }
            PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
                if self.interfaces.len() < MAX_INTERFACES {
                    self.interfaces.push(Interface {
                        linktype: idb.linktype.0,
                        units_per_sec: units_per_sec(idb.if_tsresol),
                        offset_secs: idb.ts_offset(),
                    });
                } else {
                    too_many_interfaces = !self.interfaces_dropped;
                    self.interfaces_dropped = true;
                }
            }
            PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
                self.frame += 1;
                match self.interfaces.get(epb.if_id as usize) {
                    Some(i) => {
                        let units = (u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low);
                        let data = &epb.data[..(epb.caplen as usize).min(epb.data.len())];
                        packet = Some(CapturePacket {
                            frame: self.frame,
                            linktype: i.linktype,
                            ts: ts_from_units(units, i.units_per_sec, i.offset_secs),
                            data,
                            orig_len: epb.origlen,
                            cut_by_file_end: self.file_end,
                        });
                    }
                    None => bad_interface = Some(epb.if_id),
                }
            }
            PcapBlockOwned::NG(Block::SimplePacket(spb)) => {
                self.frame += 1;
                match self.interfaces.first() {
                    Some(i) => {
                        packet = Some(CapturePacket {
                            frame: self.frame,
                            linktype: i.linktype,
                            // Simple packet blocks carry no timestamp.
                            ts: ts_from_units(0, i.units_per_sec, 0),
                            data: spb.data,
                            orig_len: spb.origlen,
                            cut_by_file_end: self.file_end,
                        });
                    }
                    None => bad_interface = Some(0),
                }
            }
            // pcap-parser gives an unknown block's type as read little-endian.
            PcapBlockOwned::NG(Block::Unknown(u))
                if self.block_type(u.block_type) == OBSOLETE_PACKET_BLOCK =>
            {
                // Interface id (16 bits), drops count (16), timestamp high and low, captured
                // length, packet length, then the packet data (and options).
                self.frame += 1;
                let word = |at: usize| -> Option<u32> {
                    let b: [u8; 4] = u.data.get(at..at + 4)?.try_into().ok()?;
                    Some(if self.big_endian {
                        u32::from_be_bytes(b)
                    } else {
                        u32::from_le_bytes(b)
                    })
                };
                let if_id = u.data.get(0..2).map(|b| {
                    if self.big_endian {
                        u16::from_be_bytes([b[0], b[1]])
                    } else {
                        u16::from_le_bytes([b[0], b[1]])
                    }
                });
                match (if_id, word(4), word(8), word(12), word(16)) {
                    (Some(if_id), Some(hi), Some(lo), Some(caplen), Some(len)) => {
                        match self.interfaces.get(usize::from(if_id)) {
                            Some(i) => {
                                let units = (u64::from(hi) << 32) | u64::from(lo);
                                let body = &u.data[20..];
                                let data = &body[..(caplen as usize).min(body.len())];
                                packet = Some(CapturePacket {
                                    frame: self.frame,
                                    linktype: i.linktype,
                                    ts: ts_from_units(units, i.units_per_sec, i.offset_secs),
                                    data,
                                    orig_len: len,
                                    cut_by_file_end: self.file_end,
                                });
                            }
                            None => bad_interface = Some(u32::from(if_id)),
                        }
                    }
                    _ => {
                        let frame = self.frame;
                        report(
                            on_item,
                            AnomalyKind::BadBlock,
                            format!(
                                "an obsolete Packet Block (frame {frame}) is too short for its \
                                 header; skipped"
                            ),
                            frame,
                        )?;
                    }
                }
            }
            PcapBlockOwned::NG(Block::Unknown(u)) => {
                let t = self.block_type(u.block_type);
                self.unknown_block(t, on_item)?
            }
            PcapBlockOwned::NG(_) => {}
        }
        if let Some(p) = packet {
            on_item(CaptureItem::Packet(&p))?;
            if bad_fraction.is_some() || !p.ts.in_range() {
                self.bad_timestamp(&p, bad_fraction, on_item)?;
            }
        }
        if too_many_interfaces {
            let frame = self.frame;
            report(
                on_item,
                AnomalyKind::UnknownInterface,
                format!(
                    "this pcapng section describes more than {MAX_INTERFACES} interfaces; the \
                     later ones are not kept, and their packets are reported as naming an \
                     interface the section did not describe"
                ),
                frame,
            )?;
        }
        if let Some(id) = bad_interface {
            let frame = self.frame;
            report(
                on_item,
                AnomalyKind::UnknownInterface,
                format!("frame {frame} names interface {id}, which its section did not describe; skipped"),
                frame,
            )?;
        }
        Ok(())
    }
}

impl Blocks {
    /// A block type as the section's byte order writes it, from pcap-parser's little-endian
    /// reading of an unknown block's type.
    fn block_type(&self, raw: u32) -> u32 {
        if self.big_endian {
            raw.swap_bytes()
        } else {
            raw
        }
    }

    /// Counts a block of a type this reader does not know; the first of each type is reported.
    #[cold]
    fn unknown_block<F>(&mut self, block_type: u32, on_item: &mut F) -> Result<(), CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        if let Some(e) = self
            .unknown_blocks
            .iter_mut()
            .find(|(t, _)| *t == block_type)
        {
            e.1 += 1;
            return Ok(());
        }
        let n = self.unknown_blocks.len();
        if n >= MAX_UNKNOWN_BLOCK_TYPES {
            // Counted with the last type kept, which says so at the end.
            if let Some(e) = self.unknown_blocks.last_mut() {
                e.1 += 1;
            }
            return Ok(());
        }
        self.unknown_blocks.push((block_type, 1));
        let frame = self.frame;
        report(
            on_item,
            AnomalyKind::UnknownBlock,
            format!(
                "a pcapng block of type 0x{block_type:08x}, which this tool does not know, was \
                 skipped after frame {frame}; blocks of this type are reported once (their \
                 count at the end of the capture)"
            ),
            frame,
        )
    }

    /// At the end of a pcapng capture: how many blocks of each unknown type were skipped,
    /// for the types seen more than once.
    fn report_unknown_blocks<F>(&self, on_item: &mut F) -> Result<(), CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        let last = self.unknown_blocks.len().saturating_sub(1);
        for (i, (t, n)) in self.unknown_blocks.iter().enumerate() {
            if *n < 2 {
                continue;
            }
            let others = if i == last && self.unknown_blocks.len() >= MAX_UNKNOWN_BLOCK_TYPES {
                format!(" (with those of types past the first {MAX_UNKNOWN_BLOCK_TYPES})")
            } else {
                String::new()
            };
            report(
                on_item,
                AnomalyKind::UnknownBlock,
                format!("{n} pcapng blocks of type 0x{t:08x}{others} were skipped in all"),
                self.frame,
            )?;
        }
        Ok(())
    }

    /// Reports the first packet of the capture with a fraction field of a second or more,
    /// and the first with a time outside the years 0000-9999.
    #[cold]
    fn bad_timestamp<F>(
        &mut self,
        p: &CapturePacket<'_>,
        bad_fraction: Option<u32>,
        on_item: &mut F,
    ) -> Result<(), CaptureError>
    where
        F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
    {
        let frame = p.frame;
        if let Some(f) = bad_fraction.filter(|_| !self.bad_ts_reported[0]) {
            self.bad_ts_reported[0] = true;
            let unit = if self.legacy_per_sec > 1_000_000 {
                "nanosecond"
            } else {
                "microsecond"
            };
            report(
                on_item,
                AnomalyKind::BadTimestamp,
                format!(
                    "frame {frame}'s {unit} field is {f}, a second or more; it is carried into \
                     the seconds (later such frames are not reported)"
                ),
                frame,
            )?;
        }
        if !p.ts.in_range() && !self.bad_ts_reported[1] {
            self.bad_ts_reported[1] = true;
            let when = if p.ts.secs < 0 {
                "before the year 0000"
            } else {
                "after the year 9999"
            };
            report(
                on_item,
                AnomalyKind::BadTimestamp,
                format!(
                    "frame {frame}'s timestamp ({} s since 1970) is {when}; it is written as \
                     the nearest time RFC 3339 can write (later such frames are not reported)",
                    p.ts.secs
                ),
                frame,
            )?;
        }
        Ok(())
    }
}

/// Reads a whole capture held in memory (for example a memory-mapped file), as
/// [`read_capture`] does for a stream, without copying it through a read buffer.
pub fn read_capture_slice<F>(data: &[u8], mut on_item: F) -> Result<(), CaptureError>
where
    F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
{
    if Compression::of(data).is_some() {
        return read_capture(data, on_item);
    }
    let mut head = data;
    let (format, _) = read_header(&mut head)?;
    let mut blocks = Blocks::default();
    match format {
        Format::Pcap => {
            // As a stream is read (the same records, problems and searches past a damaged
            // record header), without a read buffer.
            let header = data.get(..24).unwrap_or(data);
            let mut legacy = Legacy::start(header, &mut on_item)?;
            let rest = &data[header.len()..];
            return legacy.end(rest, &mut on_item);
        }
        Format::PcapNg => {
            let mut rest = data;
            let mut big_endian = false;
            while !rest.is_empty() {
                let declared = pcapng_block_len(rest, big_endian);
                let damage = if let Some(len) = declared.filter(|&n| n > MAX_RECORD_SIZE as u64) {
                    (AnomalyKind::RecordTooLarge, too_large_block(len))
                } else if let Some(what) = trailing_differs(rest, big_endian) {
                    (AnomalyKind::BadBlock, what)
                } else {
                    let parsed = parse_block(rest, big_endian);
                    match parsed {
                        Ok((r, b)) => {
                            rest = r;
                            if let Block::SectionHeader(ref shb) = b {
                                big_endian = shb.big_endian();
                            }
                            blocks.take(PcapBlockOwned::NG(b), &mut on_item)?;
                            continue;
                        }
                        Err(e) => {
                            if let Some(len) = damaged_block_len(rest, big_endian) {
                                let frame = blocks.frame;
                                let message = format!(
                                    "a damaged {len}-byte block after frame {frame} was skipped"
                                );
                                report(&mut on_item, AnomalyKind::BadBlock, message, frame)?;
                                rest = &rest[len..];
                                continue;
                            }
                            match e {
                                nom::Err::Incomplete(_) if whole_block(rest, big_endian) => {
                                    (AnomalyKind::BadBlock, INCONSISTENT_BLOCK.to_string())
                                }
                                nom::Err::Incomplete(_) => {
                                    let s = beyond_the_file(rest, big_endian, blocks.frame);
                                    let at_end = rest.len() <= REPAIR_WINDOW;
                                    let repaired =
                                        blocks.take_repaired(&s, rest, at_end, &mut on_item)?;
                                    if let Some(len) = repaired {
                                        rest = &rest[len..];
                                        continue;
                                    }
                                    match longer_than_the_file(rest, big_endian) {
                                        Some(what) => (AnomalyKind::BadBlock, what),
                                        None => {
                                            let last = LastRecord::PcapNg(big_endian);
                                            return blocks.file_ends_inside(
                                                last,
                                                rest,
                                                &mut on_item,
                                            );
                                        }
                                    }
                                }
                                nom::Err::Error(e) | nom::Err::Failure(e) => (
                                    AnomalyKind::BadBlock,
                                    block_damage(rest, big_endian)
                                        .unwrap_or_else(|| parse_error_text(&e)),
                                ),
                            }
                        }
                    }
                };
                // Passed over to the next plausible block, as a stream is.
                let (kind, what) = damage;
                let mut s = blocks.skip_at(rest, kind, what);
                big_endian = blocks.big_endian;
                let at_end = rest.len() <= REPAIR_WINDOW;
                if let Some(len) = blocks.take_repaired(&s, rest, at_end, &mut on_item)? {
                    rest = &rest[len..];
                    continue;
                }
                match next_plausible_block(rest, 1, big_endian, true) {
                    Ok(at) => {
                        s.skipped = at as u64;
                        s.report(true, &mut on_item)?;
                        rest = &rest[at..];
                    }
                    Err(_) => {
                        s.skipped = rest.len() as u64;
                        s.report(false, &mut on_item)?;
                        break;
                    }
                }
            }
            blocks.report_unknown_blocks(&mut on_item)?;
        }
    }
    Ok(())
}

fn report<F>(
    on_item: &mut F,
    kind: AnomalyKind,
    message: String,
    frame: u64,
) -> Result<(), CaptureError>
where
    F: FnMut(CaptureItem<'_, '_>) -> io::Result<()>,
{
    let p = CaptureProblem {
        kind,
        message,
        after_frame: frame,
    };
    on_item(CaptureItem::Problem(&p)).map_err(CaptureError::Io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_resolutions() {
        let t = ts_from_units(1_700_000_000_123_456, 1_000_000, 0);
        assert_eq!((t.secs, t.nanos, t.digits), (1_700_000_000, 123_456_000, 6));
        let t = ts_from_units(1_700_000_000_123_456_789, 1_000_000_000, 0);
        assert_eq!((t.secs, t.nanos, t.digits), (1_700_000_000, 123_456_789, 9));
        // 2^-10 seconds resolution.
        let t = ts_from_units(3 * 1024 + 512, 1024, 10);
        assert_eq!((t.secs, t.nanos, t.digits), (13, 500_000_000, 6));
        // Extremes: the offset applies before saturating (2^64 - 1 s - 2^63 s = 2^63 - 1 s).
        assert_eq!(ts_from_units(u64::MAX, 1, i64::MIN).secs, i64::MAX);
        assert_eq!(ts_from_units(0, 1, i64::MIN).secs, i64::MIN);
        assert_eq!(ts_from_units(u64::MAX, 1, 0).secs, i64::MAX);
    }

    #[test]
    fn tsresol_units() {
        assert_eq!(units_per_sec(6), 1_000_000);
        assert_eq!(units_per_sec(9), 1_000_000_000);
        assert_eq!(units_per_sec(0x94), 1 << 20);
        assert_eq!(units_per_sec(0x80), 1);
        assert_eq!(units_per_sec(25), 1_000_000);
        assert_eq!(units_per_sec(0xff), 1_000_000);
    }

    #[test]
    fn not_a_capture() {
        let e = read_capture(&b"hello world, no capture"[..], |_| Ok(())).unwrap_err();
        assert!(
            e.to_string().contains("unknown magic number 0x68656c6c"),
            "{e}"
        );
        let e = read_capture(&[0x28, 0xb5, 0x2f, 0xfd, 0, 0][..], |_| Ok(())).unwrap_err();
        assert!(e.to_string().contains("zstd"), "{e}");
        let e = read_capture(&[0xd4, 0xc3][..], |_| Ok(())).unwrap_err();
        assert!(e.to_string().contains("only 2 bytes"), "{e}");
    }

    #[test]
    fn damaged_pcapng_blocks_are_described() {
        // An Enhanced Packet Block header (type 6) in little-endian order, of `len` bytes,
        // ending with `trailer`.
        let block = |len: u32, trailer: u32| {
            let mut b = 6u32.to_le_bytes().to_vec();
            b.extend_from_slice(&len.to_le_bytes());
            b.resize(28, 0);
            b.extend_from_slice(&trailer.to_le_bytes());
            b
        };
        assert_eq!(
            block_damage(&block(8, 8), false).as_deref(),
            Some("the block declares 8 bytes, fewer than the 12 of an empty block")
        );
        assert_eq!(
            block_damage(&block(30, 30), false).as_deref(),
            Some("the block declares 30 bytes, not a multiple of 4")
        );
        assert_eq!(
            block_damage(&block(32, 64), false).as_deref(),
            Some("the block's trailing length 64 differs from its leading length 32")
        );
        assert_eq!(block_damage(&block(32, 32), false), None);
        // Only part of the block at hand: nothing to say about its end.
        assert_eq!(block_damage(&block(32, 64)[..20], false), None);
    }
}
