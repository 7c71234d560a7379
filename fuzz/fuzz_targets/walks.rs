//! The streaming walks of Produce requests and Fetch responses (`kafka::walk`): arbitrary
//! bodies, fed whole and fed in pieces, must give the same body or the same error (the walk
//! may not depend on how the bytes arrive), and what a walk holds stays bounded. The first
//! byte picks the API (bit 0: Produce or Fetch) and the version; the second the piece size.
#![no_main]
use kafka_pcap::kafka::apis::{fetch, produce};
use kafka_pcap::kafka::walk::{MAX_LISTED, MAX_UNIT};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let Some((&piece, body)) = rest.split_first() else { return };
    let (start, version) = if pick & 1 == 0 {
        (produce::walk_request as kafka_pcap::kafka::apis::WalkFn, 3 + i16::from(pick >> 1) % 11)
    } else {
        (fetch::walk_response as kafka_pcap::kafka::apis::WalkFn, 4 + i16::from(pick >> 1) % 15)
    };
    let len = body.len() as u64;
    let mut whole = start(version, len);
    whole.feed(body);
    // Bytes after the structure: how many (the same however the bytes came).
    let whole = whole
        .finish()
        .map(|f| (f.body, f.trailing.map(|e| e.remaining), f.damage.map(|e| e.remaining)));
    let mut pieces = start(version, len);
    let step = usize::from(piece % 64) + 1;
    let bound = 2 * MAX_UNIT + MAX_LISTED * 512;
    for chunk in body.chunks(step) {
        pieces.feed(chunk);
        assert!(pieces.cost() <= bound, "a walk holds {} bytes", pieces.cost());
    }
    let pieces = pieces
        .finish()
        .map(|f| (f.body, f.trailing.map(|e| e.remaining), f.damage.map(|e| e.remaining)));
    match (&whole, &pieces) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(a), Err(b)) => {
            assert_eq!(a.kind, b.kind);
            assert_eq!(a.offset_in(body.len()), b.offset_in(body.len()));
            assert_eq!(a.path(), b.path());
        }
        _ => panic!("whole {whole:?} != pieces {pieces:?}"),
    }
});
