//! `--format text`: one line per record, for reading in a terminal, like tshark's summary
//! line.
//!
//! Input: records. Output: lines such as
//! `10  21:22:01.228381  127.0.0.1:41392 -> 127.0.0.1:9092  WriteTxnMarkers v1 request corr=2  COMMIT pid=4000 epoch=3 coordinator_epoch=5 orders[0,1] payments[7]`
//! (frame, time of day UTC, sender -> receiver, API and version, request/response, correlation
//! id, a compact body; responses add the request's frame and the latency, and name errors;
//! version 2 markers add `tv=N`, their transaction version).

use super::Sink;
use crate::kafka::apis::write_txn_markers::TransactionResult;
use crate::kafka::apis::Body;
use crate::kafka::event::{Event, MessageKind, Record};
use crate::kafka::tree;
use crate::txn::{human_us, EndedBy, Joined, TransactionRecord};
use std::io::{self, Write};

/// Writes records as text lines.
pub struct TextWriter<W: Write> {
    out: W,
    capture: Option<String>,
    /// `--format tree`: after each WriteTxnMarkers line, its object tree.
    tree: bool,
    /// `-x`: after the tree, a hex dump of the frame.
    hex: bool,
    /// Flush after every record (live input).
    line_buffered: bool,
}

impl<W: Write> TextWriter<W> {
    /// A writer on `out`.
    pub fn new(out: W) -> Self {
        TextWriter {
            out,
            capture: None,
            tree: false,
            hex: false,
            line_buffered: false,
        }
    }

    /// `--format tree`: a writer that follows each WriteTxnMarkers line with the frame's object
    /// tree (every field with its offset and size, [`crate::kafka::tree`]) and, with `hex`, a
    /// hex dump of the frame. The records must carry their frames (`Config::keep_frames`).
    pub fn tree(out: W, hex: bool) -> Self {
        TextWriter {
            out,
            capture: None,
            tree: true,
            hex,
            line_buffered: false,
        }
    }

    /// Names the input of the lines that follow (several inputs).
    pub fn set_capture(&mut self, capture: Option<String>) {
        self.capture = capture;
    }

    /// Flushes the inner writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Flushes after every record (for live input such as `tcpdump -U -w - | kafka-pcap -`).
    pub fn set_line_buffered(&mut self, on: bool) {
        self.line_buffered = on;
    }

    /// Writes one line as it is.
    pub fn write_line(&mut self, line: &str) -> io::Result<()> {
        writeln!(self.out, "{line}")?;
        self.out.flush()
    }

    /// Flushes and returns the inner writer (its bytes, for a `Vec`).
    pub fn into_inner(mut self) -> W {
        let _ = self.out.flush();
        self.out
    }
}

impl<W: Write> TextWriter<W> {
    /// The tree (and hex dump) of a record's frame, then an empty line; nothing for a record
    /// without a kept frame.
    fn write_tree(&mut self, rec: &Record) -> io::Result<()> {
        let k = match &rec.event {
            Event::Kafka(k) => k,
            Event::Unanswered(..) => return Ok(()),
            // A frame that did not decode: its bytes (as kept in the anomaly) with -x.
            Event::Anomaly(a) => {
                if let (true, Some(data)) = (self.hex, &a.data) {
                    if let Ok(bytes) = hex::decode(data) {
                        write!(self.out, "{}", hex_dump(&bytes))?;
                        writeln!(self.out)?;
                    }
                }
                return Ok(());
            }
        };
        let Some(frame) = &k.frame_bytes else {
            return Ok(());
        };
        if k.captured_bytes.is_some_and(|c| frame.len() < c as usize) {
            // A Produce request or Fetch response cut short: walked as its bytes streamed by,
            // none of them kept (a tree of none would call them all cut off).
            writeln!(
                self.out,
                "(no tree: walked as its bytes streamed by, none kept; the record has the \
                 fields read from the {} bytes captured)",
                k.captured_bytes.unwrap_or(0)
            )?;
            return writeln!(self.out);
        }
        let mut whole = Vec::with_capacity(frame.len() + 4);
        // A truncated message's prefix gives its size on the wire, beyond the bytes captured.
        whole.extend_from_slice(&k.size.max(frame.len() as u32).to_be_bytes());
        whole.extend_from_slice(frame);
        let tree = match k.message {
            MessageKind::Request => tree::request_tree(&whole),
            MessageKind::Response => tree::response_tree(&whole, k.api_key, k.api_version),
        };
        match tree {
            Ok(t) => write!(self.out, "{}", terminal_safe(&tree::render(&t)))?,
            Err(e) => writeln!(
                self.out,
                "(no tree: {} at offset {})",
                e.kind.as_str(),
                whole.len() - e.remaining
            )?,
        }
        if self.hex {
            write!(self.out, "{}", hex_dump(&whole))?;
        }
        writeln!(self.out)
    }
}

/// A hex dump like tshark's `-x`: 16 bytes a row, the offset in hex, the bytes, then the
/// printable ASCII (`.` for the rest).
pub fn hex_dump(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (row, chunk) in bytes.chunks(16).enumerate() {
        out.push_str(&format!("{:04x}  ", row * 16));
        for i in 0..16 {
            match chunk.get(i) {
                Some(b) => out.push_str(&format!("{b:02x} ")),
                None => out.push_str("   "),
            }
            if i == 7 {
                out.push(' ');
            }
        }
        out.push(' ');
        out.extend(chunk.iter().map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        }));
        out.push('\n');
    }
    out
}

/// A name from the capture as it can be shown on a terminal: as it is, or quoted and escaped
/// (`"a\nb"`) when it holds control characters (a newline would fake a line, an escape
/// sequence would reach the terminal) or any other character Rust's `Debug` escapes: format
/// characters such as U+202E RIGHT-TO-LEFT OVERRIDE (which would show the rest of the line
/// reversed), U+2028 LINE SEPARATOR, unassigned ones.
fn shown(name: &str) -> std::borrow::Cow<'_, str> {
    if name.chars().any(hidden) {
        format!("{name:?}").into()
    } else {
        name.into()
    }
}

/// Whether `c` would hide or turn text on a terminal: a control character, one Rust's
/// `Debug` escapes (format characters such as U+202E RIGHT-TO-LEFT OVERRIDE, U+2028, zero
/// width and unassigned ones), or a blank that is a letter (the Hangul fillers, U+2800).
fn hidden(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    c.is_control()
        || matches!(
            c,
            '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' | '\u{2800}'
        )
        || (!matches!(c, '"' | '\'' | '\\') && c.escape_debug().count() > 1)
}

/// `text` (lines of the text or tree output, or of standard error) with every character
/// that would hide or turn text on a terminal (a control character but the line break, a
/// format, zero-width, unassigned or blank-letter character: U+202E RIGHT-TO-LEFT OVERRIDE,
/// ESC) written as its escape (`\u{202e}`): the last guard for names that reach a line
/// inside JSON fragments, tree fields or file names, which are not quoted. Borrowed when
/// nothing needs it.
pub fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    if plain_ascii(text.as_bytes()) || !text.chars().any(|c| c != '\n' && hidden(c)) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c != '\n' && hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// Whether `b` is printable ASCII and line breaks only (the common case of a line), looked
/// at eight bytes at a time.
fn plain_ascii(b: &[u8]) -> bool {
    const L: u64 = 0x0101_0101_0101_0101;
    const H: u64 = 0x8080_8080_8080_8080;
    let plain = |b: &u8| (0x20..0x7f).contains(b) || *b == b'\n';
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        let x = u64::from_le_bytes(a);
        // A byte of 0x80 or more; one below 0x20 (then looked at: a line break is plain);
        // a 0x7f (DEL): the usual tests of each byte of a word.
        let below = x.wrapping_sub(0x20 * L) & !x & H != 0;
        let y = x ^ (0x7f * L);
        if x & H != 0 || y.wrapping_sub(L) & !y & H != 0 || (below && !c.iter().all(plain)) {
            return false;
        }
    }
    chunks.remainder().iter().all(plain)
}

/// The text line of one record (without the newline).
pub fn line(rec: &Record) -> String {
    let time = time_of_day(rec);
    let endpoints = endpoints(rec);
    let what = match &rec.event {
        Event::Unanswered(_, r) => return line(r),
        Event::Anomaly(a) => format!("ANOMALY {}: {}", a.kind, shown(&a.message)),
        Event::Kafka(k) => {
            let kind = format!("{:?}", k.message).to_lowercase();
            let mut head = format!(
                "{} v{} {kind} corr={}",
                k.api_name, k.api_version, k.correlation_id
            );
            if let Some(f) = k.request_frame {
                let not_decoded = if k.request_not_decoded {
                    " not decoded"
                } else {
                    ""
                };
                // Without a latency when the response's end came in an earlier packet.
                let latency = k.latency_us.map_or(String::new(), |us| format!(", {us}us"));
                head.push_str(&format!(" (request {f}{not_decoded}{latency})"));
            }
            match (k.inferred, k.request_lost) {
                (true, Some(l)) => head.push_str(&format!(
                    " (inferred, request lost in the gap at frame {}, {} bytes)",
                    l.frame, l.bytes
                )),
                (true, None) => head.push_str(" (inferred, request not captured)"),
                _ => {}
            }
            head.push_str(&cut_note(k));
            let body = body_text(&k.body);
            if body.is_empty() {
                head
            } else {
                format!("{head}  {body}")
            }
        }
    };
    format!("{}  {time}  {endpoints}  {what}", rec.loc.frame)
}

/// ` (truncated: N of M bytes captured, stopped in PATH)` for a message decoded in part,
/// ` (N bytes after the schema's last field)` for one with trailing bytes, else empty.
fn cut_note(k: &crate::kafka::event::KafkaMessage) -> String {
    match (k.truncated, k.captured_bytes, k.trailing_bytes) {
        (true, Some(have), _) => format!(
            " (truncated: {have} of {} bytes captured, stopped in {})",
            k.size,
            shown(k.truncated_field.as_deref().unwrap_or("?"))
        ),
        (_, _, Some(n)) => format!(
            " ({n} byte{} after the schema's last field)",
            if n == 1 { "" } else { "s" }
        ),
        _ => String::new(),
    }
}

/// The compact text of a body with no text of its own: its top-level fields as `name=value`
/// (strings unquoted, nested values as compact JSON, nulls left out), in schema order, e.g.
/// `transactional_id=txn-1 producer_id=7 producer_epoch=0 committed=true` for EndTxn.
fn fields_text(body: &Body) -> String {
    let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(body) else {
        return String::new();
    };
    fields
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={}", shown(s)),
            v => format!("{k}={v}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Most bytes of a body's text in one line (64 KiB): past it the line ends with a note that
/// `--format ndjson` has the rest, so that a huge frame costs no more than this to show.
pub const TEXT_BODY_LIMIT: usize = 64 * 1024;

/// A body's text being written, bounded by [`TEXT_BODY_LIMIT`].
struct BodyText {
    out: String,
    cut: bool,
}

impl BodyText {
    fn new() -> Self {
        BodyText {
            out: String::new(),
            cut: false,
        }
    }

    /// Whether more may be written.
    fn room(&self) -> bool {
        !self.cut
    }

    /// Appends `s`, or notes the cut once the limit is passed.
    fn push(&mut self, s: &str) {
        if self.cut {
            return;
        }
        if self.out.len() + s.len() > TEXT_BODY_LIMIT {
            let mut end = TEXT_BODY_LIMIT.saturating_sub(self.out.len()).min(s.len());
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            self.out.push_str(&s[..end]);
            self.cut = true;
            return;
        }
        self.out.push_str(s);
    }

    /// Appends a name from the capture, escaped as [`shown`] does.
    fn name(&mut self, name: &str) {
        if self.cut {
            return;
        }
        if name.len() > TEXT_BODY_LIMIT {
            // Escaping can multiply it: escape only what can be shown.
            let mut end = TEXT_BODY_LIMIT;
            while !name.is_char_boundary(end) {
                end -= 1;
            }
            self.push(&shown(&name[..end]));
            self.cut = true;
        } else {
            self.push(&shown(name));
        }
    }

    fn finish(mut self) -> String {
        if self.cut {
            self.out.push_str(&format!(
                " ... (the text stops at {} KiB; --format ndjson has all of it)",
                TEXT_BODY_LIMIT / 1024
            ));
        }
        self.out
    }
}

/// The compact text of a body: `COMMIT pid=4000 epoch=3 coordinator_epoch=5 orders[0,1]` for a
/// request marker (`coordinator_epoch` left out when it was not captured), `pid=4000
/// orders[0:NONE,1:NOT_LEADER_OR_FOLLOWER]` for a response marker, markers joined by `; `;
/// empty for a body not decoded. At most [`TEXT_BODY_LIMIT`] bytes and a note.
fn body_text(body: &Body) -> String {
    let mut t = BodyText::new();
    match body {
        Body::WriteTxnMarkersRequest(b) => {
            for (i, m) in b.markers.iter().enumerate() {
                if !t.room() {
                    break;
                }
                let result = match m.transaction_result {
                    TransactionResult::Commit => "COMMIT",
                    TransactionResult::Abort => "ABORT",
                };
                // Version 2 markers carry the transaction version (KIP-1228).
                let tv = m
                    .transaction_version
                    .map_or_else(String::new, |v| format!(" tv={v}"));
                // The coordinator's epoch, which tells a deposed coordinator's markers from
                // its successor's (absent: not captured).
                let ce = Some(m.coordinator_epoch)
                    .filter(|&e| {
                        e != crate::kafka::apis::write_txn_markers::UNKNOWN_COORDINATOR_EPOCH
                    })
                    .map_or_else(String::new, |e| format!(" coordinator_epoch={e}"));
                let sep = if i > 0 { "; " } else { "" };
                t.push(&format!(
                    "{sep}{result} pid={} epoch={}{tv}{ce} ",
                    m.producer_id, m.producer_epoch
                ));
                for (k, tp) in m.topics.iter().enumerate() {
                    if !t.room() {
                        break;
                    }
                    if k > 0 {
                        t.push(" ");
                    }
                    t.name(&tp.name);
                    t.push("[");
                    for (j, p) in tp.partition_indexes.iter().enumerate() {
                        if !t.room() {
                            break;
                        }
                        t.push(&format!("{}{p}", if j > 0 { "," } else { "" }));
                    }
                    t.push("]");
                }
            }
        }
        Body::NotDecoded => {}
        Body::WriteTxnMarkersResponse(b) => {
            for (i, m) in b.markers.iter().enumerate() {
                if !t.room() {
                    break;
                }
                let sep = if i > 0 { "; " } else { "" };
                t.push(&format!("{sep}pid={} ", m.producer_id));
                for (k, tp) in m.topics.iter().enumerate() {
                    if !t.room() {
                        break;
                    }
                    if k > 0 {
                        t.push(" ");
                    }
                    t.name(&tp.name);
                    t.push("[");
                    for (j, p) in tp.partitions.iter().enumerate() {
                        if !t.room() {
                            break;
                        }
                        let err = p
                            .error
                            .map_or_else(|| p.error_code.to_string(), str::to_string);
                        let sep = if j > 0 { "," } else { "" };
                        t.push(&format!("{sep}{}:{err}", p.partition_index));
                    }
                    t.push("]");
                }
            }
        }
        Body::ProduceRequest(b) => produce_request_text(&mut t, b),
        Body::ProduceResponse(b) => {
            for (k, tp) in b.responses.iter().enumerate() {
                topic_head(&mut t, k, tp.name.as_deref(), tp.topic_id.as_deref());
                for (j, p) in tp.partition_responses.iter().enumerate() {
                    if !t.room() {
                        break;
                    }
                    let sep = if j > 0 { "," } else { "" };
                    let err = error_text(p.error, p.error_code);
                    t.push(&format!("{sep}{}:{err}@{}", p.index, p.base_offset));
                }
                t.push("]");
            }
        }
        Body::FetchRequest(b) => {
            t.push(b.isolation);
            for tp in &b.topics {
                t.push(" ");
                topic_head(&mut t, 0, tp.topic.as_deref(), tp.topic_id.as_deref());
                for (j, p) in tp.partitions.iter().enumerate() {
                    if !t.room() {
                        break;
                    }
                    let sep = if j > 0 { "," } else { "" };
                    t.push(&format!("{sep}{}@{}", p.partition, p.fetch_offset));
                }
                t.push("]");
            }
        }
        Body::FetchResponse(b) => fetch_response_text(&mut t, b),
        Body::MetadataRequest(b) if b.topics.is_none() => {
            // A null topic list asks for every topic.
            let rest = fields_text(body);
            let sep = if rest.is_empty() { "" } else { " " };
            t.push(&format!("topics=all{sep}{rest}"));
        }
        Body::MetadataResponse(b) => {
            t.push("brokers=");
            for (i, br) in b.brokers.iter().enumerate() {
                if !t.room() {
                    break;
                }
                t.push(&format!("{}{}=", if i > 0 { "," } else { "" }, br.node_id));
                t.name(&br.host);
                t.push(&format!(":{}", br.port));
            }
            if let Some(c) = b.controller_id {
                t.push(&format!(" controller={c}"));
            }
            for tp in &b.topics {
                if !t.room() {
                    break;
                }
                t.push(" ");
                t.name(tp.name.as_deref().unwrap_or("-"));
                if let Some(id) = &tp.topic_id {
                    t.push(&format!("({id})"));
                }
                if tp.error_code != 0 {
                    t.push(&format!(":{}", error_text(tp.error, tp.error_code)));
                }
                t.push("[");
                for (j, p) in tp.partitions.iter().enumerate() {
                    if !t.room() {
                        break;
                    }
                    let sep = if j > 0 { "," } else { "" };
                    t.push(&format!("{sep}{}>{}", p.partition_index, p.leader_id));
                    if p.error_code != 0 {
                        t.push(&format!(":{}", error_text(p.error, p.error_code)));
                    }
                }
                t.push("]");
            }
        }
        other => return fields_text(other),
    }
    t.finish()
}

/// An error's Kafka name, or its code when Kafka's table lacks it.
fn error_text(name: Option<&str>, code: i16) -> String {
    name.map_or_else(|| code.to_string(), str::to_string)
}

/// `name[` (or the topic id when there is no name), after a space for all but the first.
fn topic_head(t: &mut BodyText, k: usize, name: Option<&str>, id: Option<&str>) {
    if k > 0 {
        t.push(" ");
    }
    t.name(name.or(id).unwrap_or("-"));
    t.push("[");
}

/// A batch header: `pid=4000/3 txn n=5 gzip` (producer id / epoch, transactional, control,
/// records, compression when any).
fn batch_text(h: &crate::kafka::walk::BatchHeader) -> String {
    let mut s = match (h.producer_id, h.producer_epoch) {
        (Some(p), Some(e)) => format!("pid={p}/{e}"),
        _ => format!("magic={}", h.magic),
    };
    if h.is_transactional == Some(true) {
        s.push_str(" txn");
    }
    if let Some(c) = &h.control {
        s.push_str(&format!(" {}", c.control_type));
        if let Some(ce) = c.coordinator_epoch {
            s.push_str(&format!(" coordinator_epoch={ce}"));
        }
        s.push_str(&format!(" @{}", h.base_offset));
    } else if h.is_control == Some(true) {
        s.push_str(" control");
    }
    if let Some(n) = h.records_count {
        if h.control.is_none() {
            s.push_str(&format!(" n={n}"));
        }
    }
    match h.compression {
        Some("none") | None => {}
        Some(c) => s.push_str(&format!(" {c}")),
    }
    s
}

/// `transactional_id=orders-tx acks=-1 orders[0:pid=4000/3 txn n=3; 1:...]`.
fn produce_request_text(t: &mut BodyText, b: &crate::kafka::apis::produce::ProduceRequest) {
    if let Some(id) = &b.transactional_id {
        t.push("transactional_id=");
        t.name(id);
        t.push(" ");
    }
    t.push(&format!("acks={}", b.acks));
    for tp in &b.topic_data {
        t.push(" ");
        topic_head(t, 0, tp.name.as_deref(), tp.topic_id.as_deref());
        for (j, p) in tp.partition_data.iter().enumerate() {
            if !t.room() {
                break;
            }
            let sep = if j > 0 { "; " } else { "" };
            t.push(&format!("{sep}{}:", p.index));
            match &p.records {
                None => t.push("null"),
                Some(r) => {
                    let mut parts: Vec<String> = r.batches.iter().map(batch_text).collect();
                    if r.partial_batch_bytes > 0 {
                        parts.push(format!("partial={}", r.partial_batch_bytes));
                    }
                    if r.damaged_batch_bytes > 0 {
                        parts.push(format!("damaged={}", r.damaged_batch_bytes));
                    }
                    if parts.is_empty() {
                        parts.push("empty".to_string());
                    }
                    t.push(&parts.join(" + "));
                }
            }
        }
        t.push("]");
    }
}

/// `orders[0:NONE hw=4 lso=4 aborted=4001@4 data=1/3 COMMIT coordinator_epoch=5 @3]`.
fn fetch_response_text(t: &mut BodyText, b: &crate::kafka::apis::fetch::FetchResponse) {
    if let Some(Some(e)) = b.error {
        if e != "NONE" {
            t.push(&format!("error={e} "));
        }
    }
    for (k, tp) in b.responses.iter().enumerate() {
        topic_head(t, k, tp.topic.as_deref(), tp.topic_id.as_deref());
        for (j, p) in tp.partitions.iter().enumerate() {
            if !t.room() {
                break;
            }
            let sep = if j > 0 { "; " } else { "" };
            let err = error_text(p.error, p.error_code);
            t.push(&format!(
                "{sep}{}:{err} hw={} lso={}",
                p.partition_index, p.high_watermark, p.last_stable_offset
            ));
            if let Some(a) = &p.aborted_transactions {
                if !a.is_empty() {
                    let list: Vec<String> = a
                        .iter()
                        .map(|x| format!("{}@{}", x.producer_id, x.first_offset))
                        .collect();
                    t.push(&format!(" aborted={}", list.join(",")));
                }
            }
            if let Some(Some(r)) = p.records.get() {
                if r.data_batches > 0 {
                    t.push(&format!(" data={}/{}", r.data_batches, r.data_records));
                }
                for c in &r.control_batches {
                    t.push(&format!(" {}", batch_text(c)));
                }
                if r.partial_batch_bytes > 0 {
                    t.push(&format!(" partial={}", r.partial_batch_bytes));
                }
                if r.damaged_batch_bytes > 0 {
                    t.push(&format!(" damaged={}", r.damaged_batch_bytes));
                }
            }
        }
        t.push("]");
    }
}

/// The time of day (UTC) of a record, with the capture's precision.
fn time_of_day(rec: &Record) -> String {
    clock(&rec.loc.ts)
}

/// The time of day of `ts` (UTC), with its fraction.
fn clock(ts: &crate::vocab::Timestamp) -> String {
    let ts = ts.to_rfc3339();
    ts.split('T')
        .nth(1)
        .unwrap_or(&ts)
        .trim_end_matches('Z')
        .to_string()
}

/// `#stream sender:port -> receiver:port` (IPv6 addresses in brackets), then the tunnel when
/// there is one (`[vxlan vni=42 192.168.10.1>192.168.10.2]`, outermost layer first); `-`
/// without a stream.
fn endpoints(rec: &Record) -> String {
    let ends = match rec.loc.stream {
        Some((stream, a, b)) => format!("#{stream} {} -> {}", ip_port(&a), ip_port(&b)),
        None => "-".to_string(),
    };
    match rec.loc.tunnel {
        Some(t) => format!("{ends} [{}]", tunnel_text(&t.layers())),
        None => ends,
    }
}

/// `ip:port`, or `[ip]:port` for IPv6.
fn ip_port(e: &crate::vocab::Endpoint) -> String {
    match e.ip {
        std::net::IpAddr::V6(ip) => format!("[{ip}]:{}", e.port),
        std::net::IpAddr::V4(ip) => format!("{ip}:{}", e.port),
    }
}

/// The layers of a tunnel, outermost first: `gre key=9 10.0.0.1>10.0.0.2, vxlan vni=5 ...`.
fn tunnel_text(layers: &[crate::vocab::TunnelLayer]) -> String {
    let one = |l: &crate::vocab::TunnelLayer| {
        let mut t = l.kind.as_str().to_string();
        if let Some(id) = l.id {
            t.push_str(&format!(" {}={id}", l.kind.id_name()));
        }
        if let Some((a, b)) = l.outer {
            t.push_str(&format!(" {a}>{b}"));
        }
        t
    };
    layers.iter().map(one).collect::<Vec<_>>().join(", ")
}

/// The text line of one `--pair` exchange (without the newline): the response's frame and
/// time (the request's when unanswered), the request's endpoints, API, version, correlation
/// id, the request's frame and the latency in microseconds, then the request body and, after
/// `=>`, the response body.
pub fn exchange_line(request: &Record, response: Option<&Record>) -> String {
    let Event::Kafka(q) = &request.event else {
        return line(request);
    };
    let at = response.unwrap_or(request);
    let (status, answer) = match response.map(|r| &r.event) {
        Some(Event::Kafka(r)) => (
            match r.latency_us {
                Some(us) => format!("(request {}, {us}us)", request.loc.frame),
                None => format!("(request {})", request.loc.frame),
            },
            match (body_text(&r.body), cut_note(r)) {
                (b, note) if b.is_empty() && note.is_empty() => String::new(),
                (b, note) if b.is_empty() => format!("  =>{note}"),
                (b, note) => format!("  =>{note}  {b}"),
            },
        ),
        _ => (
            format!(
                "(request {}, {})",
                request.loc.frame,
                match super::response_missing(q) {
                    "lost" => "response lost",
                    "not_decoded" => "response not decoded",
                    "not_held" => "response, if any, written alone",
                    _ => "no response",
                }
            ),
            String::new(),
        ),
    };
    let note = cut_note(q);
    let body = format!("{}{}", note.trim_start(), {
        let b = body_text(&q.body);
        if b.is_empty() || note.is_empty() {
            b
        } else {
            format!("  {b}")
        }
    });
    let sep = if body.is_empty() { "" } else { "  " };
    format!(
        "{}  {}  {}  {} v{} exchange corr={} {status}{sep}{body}{answer}",
        at.loc.frame,
        time_of_day(at),
        endpoints(request),
        q.api_name,
        q.api_version,
        q.correlation_id
    )
}

/// The text line of one transaction (without the newline): the frame and time of the message
/// that finished it, transactional id, producer id and epoch, the outcome and who ended it
/// and why (`IN PART: N partitions ABORTED by an admin client` for a partial commit), how long
/// it took, its partitions and its markers (`N markers written`, or how many were `NOT WRITTEN`
/// and why: their errors, or unanswered), and `HANGING` for one hanging at the capture's end
/// (`whether it hangs not judged` for one `markers_not_captured`, with the
/// `kafka-transactions.sh describe` command that tells, as for one whose outcome is unknown);
/// `(markers at epoch N)` gives the epoch its markers carry when it differs from its own
/// (transaction version 2, a coordinator's abort); `(bumped to epoch N at its end)` the one
/// its EndTxn response returned when no marker was seen.
pub fn transaction_line(r: &TransactionRecord) -> String {
    let t = &r.transaction;
    let mut s = format!(
        "{}  {}  txn {} pid {} epoch {}",
        r.loc.frame,
        clock(&r.loc.ts),
        shown(t.transactional_id.as_deref().unwrap_or("-")),
        t.producer_id,
        t.producer_epoch
    );
    if let Some(e) = t.marker_producer_epoch {
        // Told by its markers, or only by its EndTxn v5 response (no marker seen).
        if t.markers_sent.is_some() {
            s.push_str(&format!(" (markers at epoch {e})"));
        } else {
            s.push_str(&format!(" (bumped to epoch {e} at its end)"));
        }
    }
    s.push(' ');
    s.push_str(&t.outcome.as_str().to_uppercase());
    let contrary = matches!(
        (t.requested, t.outcome),
        (Some("commit"), crate::txn::Outcome::Aborted)
            | (Some("abort"), crate::txn::Outcome::Committed)
    );
    match t.ended_by {
        Some(EndedBy::Client) if !contrary => s.push_str(" by client"),
        Some(EndedBy::Client) => {}
        Some(EndedBy::Coordinator) => s.push_str(" by coordinator"),
        Some(EndedBy::Admin) => s.push_str(" by an admin client"),
        None => {}
    }
    let requests_lost = t.partitions.iter().any(|p| p.marker_request_lost);
    // Partitions its coordinator leads: their markers need no message.
    let local = t.partitions.iter().filter(|p| p.marker_local).count();
    if t.outcome_from == Some(crate::txn::OutcomeFrom::EndTxn) {
        if requests_lost {
            s.push_str(" (as EndTxn accepted; the marker requests not captured)");
        } else if local > 0 && local == t.partitions.len() {
            s.push_str(" (as EndTxn accepted)");
        } else {
            s.push_str(" (as EndTxn accepted; no marker seen)");
        }
    } else if requests_lost {
        // Its markers answered by responses whose requests were not captured: written or
        // not, their result unknown.
        s.push_str(" (the marker requests not captured)");
    }
    if t.end_not_captured {
        s.push_str(" (its end not captured: bytes were lost after its last message)");
    } else if t.ended_unseen_before_timeout() {
        s.push_str(
            " (ended unseen before its timeout: its EndTxn not captured, or a new instance of \
             its producer fenced it)",
        );
    } else if t.ended_unseen() {
        s.push_str(
            " (ended unseen: aborted by its coordinator past its timeout, or its EndTxn not \
             captured)",
        );
    }
    // Known from markers alone: none of its client's messages (AddPartitionsToTxn, Produce,
    // EndTxn) was captured, or they went to another cluster's brokers.
    let markers_only = t.end_requested.is_none()
        && !t.partitions.is_empty()
        && t.partitions.iter().all(|p| p.joined == Joined::Marker);
    if markers_only {
        s.push_str(" (markers only: none of its client's messages captured)");
    }
    if t.partial_commit {
        let n = t
            .partitions
            .iter()
            .filter(|p| p.marker == Some("ABORT"))
            .count();
        s.push_str(&format!(
            " IN PART: {n} partition{} ABORTED by an admin client",
            if n == 1 { "" } else { "s" }
        ));
    }
    if let Some(reason) = t.reason {
        s.push_str(&format!(" ({})", reason.as_str()));
    }
    if let Some(c) = t
        .markers_client_id
        .as_deref()
        .filter(|c| crate::txn::is_admin_client(c))
    {
        s.push_str(&format!(" (markers sent by {})", shown(c)));
    }
    if contrary {
        // Set off by commas: the duration that follows is the transaction's.
        s.push_str(&format!(
            ", though the client asked to {},",
            t.requested.unwrap_or("?")
        ));
    }
    let open = t.outcome == crate::txn::Outcome::Open;
    if t.timed_out && t.reason != Some(crate::txn::Reason::Timeout) && !open {
        s.push_str(" past its timeout");
    }
    if open && t.given_up {
        // Written before its end, for the budget: open so far, not known after.
        s.push_str(&format!(
            " for {} when written early (memory budget or transaction limit: not known after)",
            human_us(t.duration_us)
        ));
    } else if t.outcome == crate::txn::Outcome::Open {
        // Not ended: how long it stayed open, to the capture's end.
        s.push_str(&format!(
            " for {} till the capture's end",
            human_us(t.duration_us)
        ));
    } else {
        s.push_str(&format!(" in {}", human_us(t.duration_us)));
    }
    if !t.begun_in_capture && !markers_only {
        // Its duration and partitions are those of its messages captured.
        s.push_str(" (begun before the capture: counted from its first message captured)");
    }
    if open && t.timed_out {
        // How far past its timeout it stayed open (the whole time open is said above).
        let past = t.transaction_timeout_ms.map(|ms| {
            t.duration_us
                .saturating_sub(i64::from(ms).saturating_mul(1000))
        });
        match (past, t.transaction_timeout_ms) {
            (Some(p), Some(ms)) if p > 0 => s.push_str(&format!(
                ", {} past its timeout of {}",
                human_us(p),
                human_us(i64::from(ms).saturating_mul(1000))
            )),
            _ => s.push_str(", past its timeout"),
        }
    }
    let n = t.partitions.len() as u64 + t.partitions_not_listed;
    s.push_str(&format!(", {n} partition{}", if n == 1 { "" } else { "s" }));
    let marked: Vec<&crate::txn::TxnPartition> = t
        .partitions
        .iter()
        .filter(|p| p.marker.is_some() || p.marker_request_lost)
        .collect();
    if marked.is_empty() && local > 0 {
        // Said below.
    } else if marked.is_empty() {
        s.push_str(", no markers seen");
        if t.markers_written_later {
            // Proved written by its producer's next message, the record's frame.
            s.push_str(&format!(
                " (written: its producer's next message, accepted in frame {}, proves it)",
                r.loc.frame
            ));
        }
        let past = t
            .partitions
            .iter()
            .filter(|p| p.stable_past_frame.is_some())
            .count();
        if past > 0 {
            s.push_str(&format!(
                " ({past} written unseen: a read_committed consumer's last stable offset \
                 passed {})",
                if past == 1 { "it" } else { "them" }
            ));
        }
    } else {
        // Errors of markers not written in the end; those written after a retried error
        // are said apart.
        let mut errors: Vec<&str> = marked
            .iter()
            .filter(|p| !p.marker_written)
            .filter_map(|p| p.marker_error.as_deref())
            .collect();
        errors.sort_unstable();
        errors.dedup();
        let mut retried: Vec<&str> = marked
            .iter()
            .filter(|p| p.marker_written)
            .filter_map(|p| p.marker_error.as_deref())
            .collect();
        retried.sort_unstable();
        retried.dedup();
        // Unanswered markers a later accepted message proves written count as written.
        let later = marked.iter().filter(|p| p.marker_written_later).count();
        // Answered by a response cut before its error code: neither written nor not.
        let cut = marked
            .iter()
            .filter(|p| p.marker_answer_cut && !p.marker_written && !p.marker_written_later)
            .count();
        // Left out of the response to their request.
        let left_out = marked
            .iter()
            .filter(|p| {
                p.marker_left_out
                    && !p.marker_written
                    && !p.marker_written_later
                    && !p.marker_answer_cut
                    && p.marker_error.is_none()
            })
            .count();
        let unanswered = marked
            .iter()
            .filter(|p| !p.marker_written && p.marker_error.is_none())
            .count()
            - later
            - cut
            - left_out;
        s.push_str(&format!(
            ", {} marker{}",
            marked.len(),
            if marked.len() == 1 { "" } else { "s" }
        ));
        if errors.is_empty() && unanswered == 0 && left_out == 0 && cut > 0 {
            let written = marked.len() - cut;
            let whose = if cut == 1 {
                "its error code"
            } else {
                "their error codes"
            };
            if written > 0 {
                s.push_str(&format!(
                    ": {written} written, {cut} answered, cut off before {whose}"
                ));
            } else {
                s.push_str(&format!(" answered, cut off before {whose}"));
            }
        } else if errors.is_empty() && unanswered == 0 && left_out == 0 {
            s.push_str(" written");
            if !retried.is_empty() {
                s.push_str(&format!(" (after {})", retried.join(",")));
            }
            if later > 0 {
                s.push_str(&format!(
                    " ({later} unanswered, written: a later message of the producer was \
                     accepted)"
                ));
            }
        } else {
            // Said plainly: a committed transaction whose marker was refused for good or
            // never answered has records no read_committed consumer can read past yet.
            let not_written = marked
                .iter()
                .filter(|p| !p.marker_written && !p.marker_written_later && !p.marker_answer_cut)
                .count();
            if not_written < marked.len() {
                s.push_str(&format!(", {not_written}"));
            }
            s.push_str(" NOT WRITTEN (");
            s.push_str(&errors.join(","));
            if unanswered > 0 {
                if !errors.is_empty() {
                    s.push_str(", ");
                }
                s.push_str(&format!("{unanswered} unanswered"));
            }
            if left_out > 0 {
                if !errors.is_empty() || unanswered > 0 {
                    s.push_str(", ");
                }
                s.push_str(&format!("{left_out} left out of its response"));
            }
            s.push(')');
            if cut > 0 {
                s.push_str(&format!(", {cut} answered, cut off"));
            }
        }
    }
    if local > 0 {
        s.push_str(&format!(
            ", {local} local (led by the coordinator: no marker message)"
        ));
    }
    // Where markers came for some partitions, those with data that got none (no Metadata
    // may have told whether their leader is the coordinator, whose markers need no message):
    // a read_committed consumer may be stuck there.
    let unmarked: Vec<&crate::txn::TxnPartition> = t
        .partitions
        .iter()
        .filter(|p| {
            p.holds_data() && p.marker.is_none() && !p.marker_request_lost && !p.marker_local
        })
        .collect();
    // Those known by a topic id alone (Produce v13+, no Metadata in the capture), where
    // markers named partitions the transaction's messages did not: theirs, not told apart.
    let by_id = unmarked.iter().filter(|p| p.topic.is_none()).count();
    let by_marker = t
        .partitions
        .iter()
        .any(|p| p.joined == crate::txn::Joined::Marker);
    let (by_id, unmarked) = if by_marker {
        (by_id, unmarked.len() - by_id)
    } else {
        (0, unmarked.len())
    };
    if !marked.is_empty() && unmarked > 0 {
        s.push_str(&format!(", {unmarked} with data and no marker seen"));
    }
    if !marked.is_empty() && by_id > 0 {
        s.push_str(&format!(
            ", {by_id} with data known by topic id only (no Metadata in the capture names \
             {}: {} markers may be among those seen)",
            if by_id == 1 { "it" } else { "them" },
            if by_id == 1 { "its" } else { "their" }
        ));
    }
    if !t.errors.is_empty() {
        let mut names: Vec<String> = t
            .errors
            .iter()
            .map(|e| format!("{} {}", e.api_name, e.error))
            .collect();
        names.dedup();
        s.push_str(&format!(", errors: {}", names.join(", ")));
    }
    if t.hanging {
        s.push_str(", HANGING at the capture's end");
    }
    if t.markers_not_captured {
        s.push_str(
            ", whether it hangs not judged: the capture holds no WriteTxnMarkers from its \
             coordinator (as on a client's host: markers go broker to broker)",
        );
    }
    if !t.hanging && (t.outcome == crate::txn::Outcome::Unknown || t.markers_not_captured) {
        // Where to learn its result (the coordinator keeps its id's latest transaction's).
        let what = if t.outcome == crate::txn::Outcome::Unknown {
            "its result"
        } else {
            "its state"
        };
        // Asked of any broker; its coordinator's address where the capture gave it.
        let broker = t
            .coordinator
            .as_ref()
            .map_or("BROKER:PORT".to_string(), |b| {
                crate::txn::address_text(b.endpoint())
            });
        match t.transactional_id.as_deref().map(shell_word) {
            Some(Some(id)) => s.push_str(&format!(
                "; {what}: kafka-transactions.sh --bootstrap-server {broker} describe \
                 --transactional-id {id} (it shows the id's latest transaction only)"
            )),
            Some(None) => s.push_str(&format!(
                "; {what}: kafka-transactions.sh --bootstrap-server {broker} describe with its \
                 transactional id (it shows the id's latest transaction only; the id holds \
                 characters a terminal hides: its exact bytes are in the JSON record)",
            )),
            None => {}
        }
    }
    s
}

/// `s` as one word of a POSIX shell command: bare when it holds only letters, digits and
/// `-_.:@/+=,`, else in single quotes (nothing inside them is expanded; a `'` written
/// `'\''`). `None` for one holding characters a terminal would hide or turn ([`hidden`]):
/// no command is written for it (one escaped for the terminal is not the id, and double
/// quotes would run a `$(...)` inside it).
fn shell_word(s: &str) -> Option<String> {
    if s.chars().any(hidden) {
        return None;
    }
    let bare = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:@/+=,".contains(c));
    Some(if bare {
        s.to_string()
    } else {
        crate::txn::shell_quoted(s)
    })
}

/// The `--format tree` view of a transaction: its coordinator, the InitProducerId that fenced
/// it (if one did), its partitions (how each joined, its data, its marker), its offsets and
/// errors, then the timeline of its messages with their frames and times relative to its
/// first message; indented under its line, each line ending in `\n`.
pub fn transaction_tree(r: &TransactionRecord) -> String {
    let t = &r.transaction;
    let mut s = String::new();
    if let Some(c) = &t.coordinator {
        let node = c.node_id.map_or(String::new(), |n| format!(" (node {n})"));
        s.push_str(&format!("    coordinator {}:{}{node}", c.ip, c.port));
        if let Some(ms) = t.transaction_timeout_ms {
            s.push_str(&format!(", transaction_timeout_ms {ms}"));
        }
        s.push('\n');
    } else if let Some(m) = &t.markers_from {
        // No coordinator known: who sent its markers.
        let by = t
            .markers_client_id
            .as_deref()
            .map_or(String::new(), |c| format!(" ({})", shown(c)));
        s.push_str(&format!(
            "    coordinator not known; markers sent from {}{by}\n",
            m.ip
        ));
    }
    if let Some(f) = t.fenced_by_frame {
        // Not one of its own messages, so not in the timeline below.
        s.push_str(&format!(
            "    fenced by the InitProducerId for its transactional id in frame {f} (a new \
             instance of its producer)\n"
        ));
    }
    for p in &t.partitions {
        let topic = p.topic.as_deref().or(p.topic_id.as_deref()).unwrap_or("?");
        let leader = p.leader.map_or(String::new(), |l| format!(" (leader {l})"));
        let joined = match p.joined {
            crate::txn::Joined::AddPartitionsToTxn => "joined by AddPartitionsToTxn",
            crate::txn::Joined::Verify => "joined by a leader's verifying AddPartitionsToTxn",
            crate::txn::Joined::Implicit => "joined implicitly by its first Produce",
            crate::txn::Joined::Offsets => "joined by AddOffsetsToTxn (the group's offsets)",
            crate::txn::Joined::Marker => "known from its marker",
        };
        let mut line = format!(
            "    {topic} {}{leader}: {joined} (frame {})",
            p.partition, p.joined_frame
        );
        if p.batches > 0 {
            line.push_str(&format!(
                ", {} record{} in {} batch{}",
                p.records,
                if p.records == 1 { "" } else { "s" },
                p.batches,
                if p.batches == 1 { "" } else { "es" }
            ));
        }
        if let (Some(a), Some(b)) = (p.first_offset, p.last_offset) {
            line.push_str(&format!(", offsets {a}-{b}"));
        }
        if p.offsets_committed {
            line.push_str(", the group's offsets committed into it");
        }
        match p
            .marker
            .or(p.marker_request_lost.then_some("result unknown:"))
        {
            Some(m) => {
                let state = match (p.marker_written, &p.marker_error, p.marker_error_handling) {
                    (true, Some(e), _) => format!("written after {e}"),
                    (true, None, _) => "written".to_string(),
                    (false, Some(e), Some(h)) => format!("{e} ({})", h.as_str()),
                    (false, Some(e), None) => e.clone(),
                    (false, None, _) if p.marker_answer_cut => {
                        "answered, cut off before its error code".to_string()
                    }
                    (false, None, _) if p.marker_left_out => {
                        "left out of its response (never sent again)".to_string()
                    }
                    (false, None, _) => "unanswered".to_string(),
                };
                line.push_str(&format!(", {m} marker {state}"));
                if p.marker_request_lost {
                    line.push_str(" (its request not captured, response inferred");
                    if let Some(g) = p.marker_response_frame {
                        line.push_str(&format!(", frame {g}"));
                    }
                    line.push(')');
                }
                if let Some(f) = p.marker_frame {
                    line.push_str(&format!(" (frame {f}"));
                    if let Some(g) = p.marker_response_frame {
                        line.push_str(&format!(" -> {g}"));
                    }
                    if let Some(us) = p.marker_latency_us {
                        line.push_str(&format!(", {}", human_us(us)));
                    }
                    // Its coordinator's epoch (of the last marker sent): a failover shows.
                    if let Some(e) = p.coordinator_epoch {
                        line.push_str(&format!(", coordinator_epoch {e}"));
                    }
                    if p.marker_attempts > 1 {
                        line.push_str(&format!(", {} attempts", p.marker_attempts));
                        // The brokers its attempts went to, when more than one (a retry after
                        // NOT_LEADER_OR_FOLLOWER goes to the new leader).
                        let mut to: Vec<String> = Vec::new();
                        for b in p
                            .marker_round_trips
                            .iter()
                            .filter_map(|r| r.broker.as_ref())
                        {
                            let name = match b.node_id {
                                Some(n) => format!("node {n}"),
                                None => format!("{}:{}", b.ip, b.port),
                            };
                            if !to.contains(&name) {
                                to.push(name);
                            }
                        }
                        if to.len() > 1 {
                            line.push_str(&format!(" to {}", to.join(" then ")));
                        }
                    }
                    line.push(')');
                }
            }
            None if p.marker_local => {
                // Kafka's coordinator writes the markers of the partitions it leads itself,
                // with no message on the wire.
                line.push_str(", no marker on the wire (its leader is the coordinator, which writes it locally)")
            }
            None => match p.stable_past_frame {
                Some(f) => line.push_str(&format!(
                    ", no marker seen, but written: a read_committed Fetch response in frame \
                     {f} gave a last_stable_offset past its batches"
                )),
                None => line.push_str(", no marker seen"),
            },
        }
        if let Some(old) = &p.replaced_marker {
            // The marker of the other result sent before (a COMMIT never written, then an
            // admin's ABORT).
            let state = match (&old.marker_error, old.marker_response_frame) {
                (Some(e), _) => e.clone(),
                (None, Some(_)) => "answered".to_string(),
                (None, None) => "unanswered".to_string(),
            };
            line.push_str(&format!(", after a {} marker {state}", old.marker));
            if let Some(f) = old.marker_frame {
                line.push_str(&format!(" (frame {f}"));
                if let Some(g) = old.marker_response_frame {
                    line.push_str(&format!(" -> {g}"));
                }
                line.push(')');
            }
        }
        s.push_str(&line);
        s.push('\n');
    }
    for o in &t.offsets {
        let pos: Vec<String> = o
            .positions
            .iter()
            .map(|p| format!("{} {}@{}", p.topic, p.partition, p.committed_offset))
            .collect();
        s.push_str(&format!(
            "    offsets of group {}: {}\n",
            o.group_id,
            pos.join(" ")
        ));
    }
    for e in &t.errors {
        let at = match (&e.topic, e.partition) {
            (Some(t), Some(p)) => format!(" for {t} {p}"),
            _ => String::new(),
        };
        s.push_str(&format!(
            "    error {} {}{at} (frame {})\n",
            e.api_name, e.error, e.frame
        ));
    }
    for step in &t.timeline {
        let kind = match step.message {
            MessageKind::Request => "request",
            MessageKind::Response => "response",
        };
        s.push_str(&format!(
            "      +{:<10}  frame {:<8} {} {kind}\n",
            human_us(t.begin.micros_to(&step.at)),
            step.at.frame,
            step.api_name
        ));
    }
    if t.frames_not_listed > 0 {
        s.push_str(&format!(
            "      ... and {} more messages\n",
            t.frames_not_listed
        ));
    }
    s
}

impl<W: Write + Send> Sink for TextWriter<W> {
    fn transaction(&mut self, t: &TransactionRecord) -> io::Result<()> {
        if let Some(c) = &self.capture {
            write!(self.out, "{c}: ")?;
        }
        writeln!(self.out, "{}", terminal_safe(&transaction_line(t)))?;
        if self.tree {
            self.out
                .write_all(terminal_safe(&transaction_tree(t)).as_bytes())?;
        }
        if self.line_buffered {
            self.out.flush()?;
        }
        Ok(())
    }

    fn record(&mut self, rec: &Record) -> io::Result<()> {
        if matches!(rec.event, Event::Unanswered(..)) {
            return Ok(()); // not a record of its own (see `PairSink`)
        }
        if let Some(c) = &self.capture {
            write!(self.out, "{c}: ")?;
        }
        writeln!(self.out, "{}", terminal_safe(&line(rec)))?;
        if self.tree {
            self.write_tree(rec)?;
        }
        if self.line_buffered {
            self.out.flush()?;
        }
        Ok(())
    }

    fn exchange(&mut self, request: &Record, response: Option<&Record>) -> io::Result<()> {
        if let Some(c) = &self.capture {
            write!(self.out, "{c}: ")?;
        }
        writeln!(
            self.out,
            "{}",
            terminal_safe(&exchange_line(request, response))
        )?;
        if self.tree {
            self.write_tree(request)?;
            if let Some(r) = response {
                self.write_tree(r)?;
            }
        }
        if self.line_buffered {
            self.out.flush()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    /// Names shown as they are, or quoted and escaped where a character would deceive a
    /// terminal (from a hostile review: U+202E showed the rest of the line reversed).
    #[test]
    fn shell_word_is_one_word_of_a_shell_command() {
        let word = |s: &str| super::shell_word(s);
        assert_eq!(word("app-1_x.y").as_deref(), Some("app-1_x.y"));
        assert_eq!(word("my app").as_deref(), Some("'my app'"));
        assert_eq!(word("it's").as_deref(), Some("'it'\\''s'"));
        assert_eq!(word("$(rm -rf /)").as_deref(), Some("'$(rm -rf /)'"));
        assert_eq!(word("a`id`\"$x\"").as_deref(), Some("'a`id`\"$x\"'"));
        assert_eq!(word("").as_deref(), Some("''"));
        // (From a hostile review: written escaped in double quotes, a `$(...)` in the id ran.)
        assert_eq!(word("ab\t$(touch x)"), None);
        assert_eq!(word("app\u{200b}-1`id`"), None);
    }

    #[test]
    fn shown_escapes_what_a_terminal_would_hide_or_turn() {
        assert_eq!(super::shown("orders-ü_1.2"), "orders-ü_1.2");
        assert_eq!(super::shown("it's \"q\""), "it's \"q\"");
        assert_eq!(super::shown("a\nb"), "\"a\\nb\"");
        assert_eq!(super::shown("ab\u{202e}cd"), "\"ab\\u{202e}cd\"");
        assert_eq!(super::shown("a\u{2028}b"), "\"a\\u{2028}b\"");
        assert_eq!(super::shown("x\u{200b}"), "\"x\\u{200b}\"");
        assert_eq!(super::shown("a\u{3164}"), "\"a\u{3164}\"");
        for text in [
            "",
            "abc",
            "0123456789abcdef\n",
            "tab\there",
            "del\u{7f}x",
            "ü",
            "a\u{1b}",
        ] {
            let slow = text
                .bytes()
                .all(|b| (0x20..0x7f).contains(&b) || b == b'\n');
            for pad in 0..9 {
                let t = format!("{}{text}", "x".repeat(pad));
                assert_eq!(super::plain_ascii(t.as_bytes()), slow, "{t:?}");
            }
        }
        // The guard over whole lines: only the hiding characters change, line breaks stay.
        assert_eq!(super::terminal_safe("ok ü\nnext"), "ok ü\nnext");
        assert_eq!(
            super::terminal_safe("topics=[{\"name\":\"a\u{202e}b\u{1b}[31m\"}]\n"),
            "topics=[{\"name\":\"a\\u{202e}b\\u{1b}[31m\"}]\n"
        );
    }

    use super::*;
    use crate::kafka::apis::write_txn_markers::{
        WritableTxnMarker, WritableTxnMarkerTopic, WriteTxnMarkersRequest,
    };

    #[test]
    fn names_with_control_characters_are_escaped() {
        let topic = |name: &str| WritableTxnMarkerTopic {
            name: name.to_string(),
            partition_indexes: vec![0],
            unknown_tagged_fields: vec![],
        };
        let body = Body::WriteTxnMarkersRequest(WriteTxnMarkersRequest {
            markers: vec![WritableTxnMarker {
                producer_id: 1,
                producer_epoch: 2,
                transaction_result: TransactionResult::Commit,
                topics: vec![topic("orders"), topic("a\n99  fake\u{1b}[31m")],
                coordinator_epoch: 0,
                transaction_version: None,
                unknown_tagged_fields: vec![],
            }],
            unknown_tagged_fields: vec![],
        });
        let text = body_text(&body);
        assert_eq!(
            text,
            "COMMIT pid=1 epoch=2 coordinator_epoch=0 orders[0] \"a\\n99  fake\\u{1b}[31m\"[0]"
        );
        assert!(!text.contains('\n') && !text.contains('\u{1b}'));
    }

    #[test]
    fn a_huge_body_is_cut_with_a_note() {
        let topic = WritableTxnMarkerTopic {
            name: "\u{1}".repeat(200_000),
            partition_indexes: vec![0],
            unknown_tagged_fields: vec![],
        };
        let body = Body::WriteTxnMarkersRequest(WriteTxnMarkersRequest {
            markers: vec![WritableTxnMarker {
                producer_id: 1,
                producer_epoch: 2,
                transaction_result: TransactionResult::Abort,
                topics: vec![topic.clone(), topic],
                coordinator_epoch: 0,
                transaction_version: None,
                unknown_tagged_fields: vec![],
            }],
            unknown_tagged_fields: vec![],
        });
        let text = body_text(&body);
        assert!(
            text.starts_with("ABORT pid=1 epoch=2 coordinator_epoch=0 \"\\u{1}"),
            "{}",
            &text[..40]
        );
        assert!(text.len() < TEXT_BODY_LIMIT + 100, "{}", text.len());
        assert!(text.ends_with("(the text stops at 64 KiB; --format ndjson has all of it)"));
    }

    #[test]
    fn hex_dump_rows() {
        let d = hex_dump(b"0123456789abcdef\x00\xff");
        assert_eq!(
            d,
            "0000  30 31 32 33 34 35 36 37  38 39 61 62 63 64 65 66  0123456789abcdef\n\
             0010  00 ff                                             ..\n"
        );
    }
}
