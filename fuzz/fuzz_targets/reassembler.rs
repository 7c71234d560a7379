//! One direction's reassembly on arbitrary segments: each 4-byte record of the input is a
//! segment (sequence offset, length, flags) or, with flag bits 0x30, the peer's
//! acknowledgment; payload bytes come from the input itself.
#![no_main]
use kafka_pcap::flow::reassembly::{Delivery, HalfStream, Origin};
use kafka_pcap::memory::Memory;
use kafka_pcap::flow::seq::SeqNum;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut h = HalfStream::default();
    // A small budget, so that the fuzzer reaches the memory limit too.
    let budget = Memory::new(64 * 1024);
    let mut delivered = 0u64;
    let mut d = |x: Delivery<'_>| match x {
        Delivery::Data(b) | Delivery::Held(b, _) | Delivery::Released(b, _) => {
            delivered += b.len() as u64
        }
        Delivery::Gap(n)
        | Delivery::Cut(n)
        | Delivery::HeldCut(n)
        | Delivery::GivenUp { len: n, .. } => delivered += n,
        Delivery::OverlapMismatch { .. } => {}
    };
    for (i, rec) in data.chunks_exact(4).enumerate() {
        let seq = u32::from(u16::from_be_bytes([rec[0], rec[1]])).wrapping_mul(u32::from(rec[3] | 1));
        let len = usize::from(rec[2]);
        let flags = rec[3];
        let start = (i * 7) % data.len().max(1);
        let payload = &data[start..(start + len).min(data.len())];
        let cut = u64::from(flags & 0x0f);
        if flags & 0x30 == 0x30 {
            // An acknowledgment from the peer instead of a segment.
            h.acked(SeqNum(seq), &mut d);
            continue;
        }
        h.segment(SeqNum(seq), flags & 0x80 != 0, flags & 0x40 != 0, payload, cut, Origin::default(), &budget, &mut d);
    }
    h.flush(&mut d);
    assert_eq!(budget.used(), 0, "every held byte is released");
    assert_eq!(delivered, h.delivered(), "deliveries add up to the stream offset");
});
