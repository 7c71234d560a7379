//! The WriteTxnMarkers request and response decoders, and the headers, on arbitrary bytes; the
//! first byte picks the version (0, 1 or 2).
#![no_main]
use kafka_pcap::kafka::header::{decode_request_header, decode_response_header};
use kafka_pcap::kafka::primitives::Budget;
use kafka_pcap::kafka::apis::write_txn_markers::{decode_request, decode_response};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&v, body)) = data.split_first() else { return };
    let version = i16::from(v % 3);
    let _ = decode_request(body, version, &Budget::default());
    let _ = decode_response(body, version, &Budget::default());
    let _ = decode_request_header(body, v % 3, &Budget::default());
    let _ = decode_response_header(body, v % 2, &Budget::default());
});
