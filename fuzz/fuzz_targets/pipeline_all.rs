//! The whole pipeline on arbitrary capture bytes, with every API decoded (`--all-apis`: the
//! walks of Produce and Fetch as the session feeds them, Metadata, the transaction APIs) and
//! the transaction view on (`--transactions`, requests held for their responses).
//! Inputs starting with a pcap or pcapng magic number are read as they are; others get a
//! classic pcap header (raw IPv4/IPv6, link type 101) prepended so that the fuzzer reaches
//! packets, TCP and Kafka quickly.
#![no_main]
use kafka_pcap::output::VecSink;
use kafka_pcap::{run_slice, Config};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let magic = data.get(..4);
    let is_capture = matches!(
        magic,
        Some([0xd4, 0xc3, 0xb2, 0xa1] | [0xa1, 0xb2, 0xc3, 0xd4] | [0x4d, 0x3c, 0xb2, 0xa1] | [0x0a, 0x0d, 0x0d, 0x0a])
    );
    let config = Config { all_apis: true, transactions: true, hold_requests: true, ..Config::default() };
    let mut sink = VecSink::default();
    if is_capture {
        let _ = run_slice(data, &config, &mut sink);
    } else {
        let mut file = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        file.extend_from_slice(&65535u32.to_le_bytes());
        file.extend_from_slice(&101u32.to_le_bytes());
        file.extend_from_slice(data);
        let _ = run_slice(&file, &config, &mut sink);
    }
});
