//! The `--format tree` path: the field trace recorded while the header and body decoders of
//! every API in the decoder table read arbitrary bytes. The first byte picks the API (of the
//! table) and the version; the rest is a frame with its size prefix. Checks that a tree, when
//! there is one, tiles its frame: each node's children lie inside it, in order, without gaps
//! or overlaps, and the root covers the whole frame; and that a response the decoder accepts
//! always has a tree.
#![no_main]
use kafka_pcap::kafka::apis::{self, KEYS};
use kafka_pcap::kafka::primitives::Budget;
use kafka_pcap::kafka::header::decode_response_header;
use kafka_pcap::kafka::tree::{request_tree, response_tree};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, frame)) = data.split_first() else { return };
    let key = KEYS[usize::from(pick) % KEYS.len()];
    let d = apis::decoder(key).unwrap();
    let span = (d.versions.end() - d.versions.start() + 1) as u8;
    let version = d.versions.start() + i16::from((pick / 16) % span);
    if let Ok(t) = request_tree(frame) {
        assert_eq!(t.size, frame.len());
        assert_eq!(t.untiled(), None);
    }
    let tree = response_tree(frame, key, version);
    if let Ok(t) = &tree {
        assert_eq!(t.size, frame.len());
        assert_eq!(t.untiled(), None);
    }
    // A frame whose response decodes whole has a tree.
    if frame.len() >= 4 {
        let hv = kafka_pcap::kafka::api::response_header_version(key, version);
        let b = Budget::default();
        if let Ok(h) = decode_response_header(&frame[4..], hv, &b) {
            if (d.decode_response)(&frame[4 + h.len..], version, &b).is_ok() {
                assert!(tree.is_ok());
            }
        }
    }
});
