//! Writes the malformed-WriteTxnMarkers captures `captures/malformed-*.pcap`: on one connection
//! to 127.0.0.1:9092, a good request and response (correlation id 1), one malformed request
//! (correlation id 2), and another good exchange (correlation id 3), so that the golden output
//! shows the anomaly between correctly decoded neighbours. Deterministic.
//!
//! Usage: `cargo run --example make_malformed_captures`, then
//! `KAFKA_PCAP_BLESS=1 cargo test --test captures` to regenerate the golden outputs on purpose.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;

fn request(corr: u8) -> Vec<u8> {
    request_with_corr(corr)
}

fn response(corr: u8) -> Vec<u8> {
    response_with_corr(corr)
}

/// A frame from the bytes after its size prefix.
fn frame(body: &[u8]) -> Vec<u8> {
    let mut f = (body.len() as i32).to_be_bytes().to_vec();
    f.extend_from_slice(body);
    f
}

/// Request header v2 for WriteTxnMarkers `version`, correlation id 2, empty client id.
fn header(version: u8) -> Vec<u8> {
    if version == 0 {
        vec![0, 27, 0, 0, 0, 0, 0, 2, 0, 0]
    } else {
        vec![0, 27, 0, version, 0, 0, 0, 2, 0, 0, 0]
    }
}

fn write(name: &str, bad: &[u8]) {
    let packets = Conversation::new(false, 9092)
        .client(&request(1))
        .server(&response(1))
        .client(bad)
        .client(&request(3))
        .server(&response(3))
        .packets();
    let mut w = PcapWriter::new(Endian::Little, Resolution::Micro, 1, 262_144);
    for (i, p) in packets.iter().enumerate() {
        w.packet(1_767_225_600, i as u32 * 1000, &ethernet(&p.ip));
    }
    let path = format!("{}/captures/{name}.pcap", env!("CARGO_MANIFEST_DIR"));
    std::fs::write(&path, w.bytes()).expect("write capture");
    println!("{path}: {} packets", packets.len());
}

fn main() {
    // A size prefix of 2^31-1 bytes: frame_too_large, and framing resynchronises.
    let mut oversized = 0x7fff_ffffi32.to_be_bytes().to_vec();
    oversized.extend_from_slice(&header(1));
    write("malformed-oversized-frame", &oversized);

    // The body ends inside the marker, before CoordinatorEpoch: truncated_body.
    let seed = seed_request();
    let mut body = header(1);
    body.extend_from_slice(&seed[15..0x23]);
    write("malformed-truncated-marker", &frame(&body));

    // v0 (classic) with a markers count of 2^31-1: array_count_exceeds_frame.
    let mut body = header(0);
    body.extend_from_slice(&0x7fff_ffffi32.to_be_bytes());
    body.extend_from_slice(&[0; 24]);
    write("malformed-array-count", &frame(&body));

    // A topic name whose compact length (47) runs past the frame: string_length_exceeds_frame.
    let mut body = header(1);
    body.extend_from_slice(&seed[15..0x1c]);
    body.push(0x30);
    body.extend_from_slice(&seed[0x1d..]);
    write("malformed-string-too-long", &frame(&body));

    // The markers count as a 6-byte unsigned varint: varint_overflow.
    let mut body = header(1);
    body.extend_from_slice(&[0x82, 0x80, 0x80, 0x80, 0x80, 0x00]);
    body.extend_from_slice(&seed[16..]);
    write("malformed-bad-varint", &frame(&body));

    // A topic name of two bytes that are not UTF-8: invalid_utf8.
    let mut body = header(1);
    body.extend_from_slice(&seed[15..0x1c]);
    body.extend_from_slice(&[3, 0xff, 0xfe]);
    body.extend_from_slice(&seed[0x1d..]);
    write("malformed-non-utf8-topic", &frame(&body));
}
