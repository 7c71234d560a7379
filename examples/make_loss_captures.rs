//! Writes the synthetic TCP-loss captures `captures/tcp-*.pcap`: one imperfect capture per case
//! of TCP reassembly and recovery (out of order, retransmissions, gaps, mid-stream starts,
//! snaplen cuts, wraparound, port reuse), each carrying the seed's WriteTxnMarkers v1 frames
//! (see `captures/README.md`). Deterministic: the same files every run.
//!
//! Usage: `cargo run --example make_loss_captures`, then
//! `KAFKA_PCAP_BLESS=1 cargo test --test captures` to regenerate their golden outputs on purpose.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;

fn request(corr: u8) -> Vec<u8> {
    request_with_corr(corr)
}

fn response(corr: u8) -> Vec<u8> {
    response_with_corr(corr)
}

/// Packets as (IP bytes, original length when a snaplen cut them).
type Out = Vec<(Vec<u8>, Option<u32>)>;

fn whole(p: &[Packet]) -> Out {
    p.iter().map(|p| (p.ip.clone(), None)).collect()
}

fn write(name: &str, packets: &Out) {
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
    for (i, (ip, orig)) in packets.iter().enumerate() {
        let frame = ethernet(ip);
        let orig_len = orig.map_or(frame.len() as u32, |o| o + 14);
        w.record(
            1_767_225_600 + (i as u32) / 1000,
            (i as u32 % 1000) * 1000,
            &frame,
            orig_len,
        );
    }
    let path = format!("{}/captures/{name}.pcap", env!("CARGO_MANIFEST_DIR"));
    std::fs::write(&path, w.bytes()).expect("write capture");
    println!("{path}: {} packets", packets.len());
}

/// Three exchanges (correlation ids 1, 2, 3), the requests cut into `mss`-byte segments.
fn three(mss: usize) -> Conversation {
    Conversation::new(false, 9092)
        .mss(mss)
        .client(&request(1))
        .server(&response(1))
        .client(&request(2))
        .server(&response(2))
        .client(&request(3))
        .server(&response(3))
}

/// Index of the `n`th packet (0-based) carrying payload in direction `dir`.
fn data_packet(p: &[Packet], dir: Dir, n: usize) -> usize {
    p.iter()
        .enumerate()
        .filter(|(_, p)| p.dir == dir && !p.payload.is_empty())
        .nth(n)
        .map(|(i, _)| i)
        .expect("packet")
}

fn main() {
    // Out of order: within each request (five 10-byte segments), segments 1-2 and 3-4 swapped.
    let p = three(10).packets();
    let mut out = whole(&p);
    let idx: Vec<usize> = (0..15).map(|n| data_packet(&p, Dir::ToServer, n)).collect();
    for request in idx.chunks(5) {
        out.swap(request[0], request[1]);
        out.swap(request[2], request[3]);
    }
    write("tcp-out-of-order", &out);

    // Retransmission with new boundaries: request 2 sent in 16-byte segments, then sent again
    // in 7-byte segments.
    let p = three(16).packets();
    let mut out = whole(&p);
    let c = Conversation::new(false, 9092);
    let r2_first = data_packet(&p, Dir::ToServer, 3);
    let seq = p[r2_first].seq;
    let ack = p[r2_first + 2].seq; // the server's next sequence number
    let r2 = request(2);
    for (k, chunk) in r2.chunks(7).enumerate() {
        let (s, sp, d, dp) = c.endpoints(Dir::ToServer);
        let ip = tcp_packet(s, sp, d, dp, seq + 7 * k as u32, ack, Flags::PSH_ACK, chunk);
        out.insert(r2_first + 3 + k, (ip, None));
    }
    write("tcp-retransmit-new-boundaries", &out);

    // Overlap with other bytes: request 2's second and third segments arrive first, then the
    // second again with one byte changed, then the first; the first copy wins.
    let p = three(16).packets();
    let mut out = whole(&p);
    let s1 = data_packet(&p, Dir::ToServer, 3);
    let (first, second, third) = (out[s1].clone(), out[s1 + 1].clone(), out[s1 + 2].clone());
    let mut changed = p[s1 + 1].clone();
    changed.payload[5] ^= 0xff;
    let (s, sp, d, dp) = c.endpoints(Dir::ToServer);
    let ack = tcp_ack(&p[s1 + 1].ip);
    let changed_ip = tcp_packet(
        s,
        sp,
        d,
        dp,
        changed.seq,
        ack,
        Flags::PSH_ACK,
        &changed.payload,
    );
    out.splice(s1..s1 + 3, [second, third, (changed_ip, None), first]);
    write("tcp-overlap-mismatch", &out);

    // Gap over a whole frame: request 2 (one segment) never captured; its response is inferred.
    let p = three(100).packets();
    let mut out = whole(&p);
    out.remove(data_packet(&p, Dir::ToServer, 1));
    write("tcp-gap-whole-frame", &out);

    // Gap inside a frame: the second of request 2's 10-byte segments never captured.
    let p = three(10).packets();
    let mut out = whole(&p);
    out.remove(data_packet(&p, Dir::ToServer, 6));
    write("tcp-gap-inside-frame", &out);

    // Gap at a size prefix: 3-byte segments, so request 2's size prefix spans two segments;
    // the segment holding its first three bytes never captured.
    let p = three(3).packets();
    let mut out = whole(&p);
    out.remove(data_packet(&p, Dir::ToServer, 14));
    write("tcp-gap-at-size-prefix", &out);

    // Mid-stream start inside a request: the capture begins at request 1's third segment.
    let p = three(16).packets();
    let out = whole(&p[data_packet(&p, Dir::ToServer, 2)..]);
    write("tcp-mid-stream-request-side", &out);

    // Mid-stream start inside a response: responses of 31 bytes in 10-byte segments; the
    // capture begins at response 1's second segment.
    let p = Conversation::new(false, 9092)
        .mss(10)
        .client(&request(1))
        .server(&response(1))
        .client(&request(2))
        .server(&response(2))
        .packets();
    let out = whole(&p[data_packet(&p, Dir::ToClient, 1)..]);
    write("tcp-mid-stream-response-side", &out);

    // Snaplen cut: request 1's single segment captured with only 20 bytes of payload.
    let p = three(100).packets();
    let mut out = whole(&p);
    let i = data_packet(&p, Dir::ToServer, 0);
    out[i] = (p[i].ip[..60].to_vec(), Some(p[i].ip.len() as u32));
    write("tcp-snaplen-cut", &out);

    // Sequence numbers wrapping at 2^32 inside request 2 and response 2.
    let mut c = three(16);
    c.client_isn = u32::MAX - 60;
    c.server_isn = u32::MAX - 40;
    write("tcp-seq-wraparound", &whole(&c.packets()));

    // Port reuse: the same 4-tuple opens a second connection after the first closed.
    let a = Conversation::new(false, 9092)
        .client(&request(1))
        .server(&response(1))
        .packets();
    let mut b = Conversation::new(false, 9092)
        .client(&request(1))
        .server(&response(1));
    b.client_isn = 77_777;
    b.server_isn = 88_888;
    let mut out = whole(&a);
    out.extend(whole(&b.packets()));
    write("tcp-port-reuse", &out);
}

/// The acknowledgment number of a raw IPv4 TCP packet.
fn tcp_ack(ip: &[u8]) -> u32 {
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    u32::from_be_bytes([ip[ihl + 8], ip[ihl + 9], ip[ihl + 10], ip[ihl + 11]])
}
