//! The Kafka framer on arbitrary bytes cut into arbitrary chunks, with gaps: the first byte
//! says how to cut (chunk size), the second whether to start mid-stream and which role.
#![no_main]
use kafka_pcap::kafka::framing::{Decision, FrameHandler, Framer, GapEffect, ProbeAt, Role};
use kafka_pcap::kafka::header::{probe_request, Probe};
use libfuzzer_sys::fuzz_target;

struct H;

impl FrameHandler for H {
    fn on_head(&mut self, _: Role, _: u32, head: &[u8]) -> Decision {
        if head.first().copied().unwrap_or(0) % 2 == 0 {
            Decision::Keep
        } else {
            Decision::Skip
        }
    }
    fn on_frame(&mut self, _: Role, _: u64, _: &[u8]) {}
    fn on_skipped(&mut self, _: Role, _: u64, _: u32, _: &[u8], _: bool) {}
    fn on_bad_size(&mut self, _: Role, _: u64, _: i32, _: &[u8]) {}
    fn on_gap(&mut self, _: Role, _: u64, _: u64, _: GapEffect) {}
    fn on_head_lost(&mut self, _: Role, _: u32, _: &[u8]) {}
    fn on_resync(&mut self, _: Role, _: u64, _: u64) {}
    fn on_truncated(&mut self, _: Role, _: u64, _: u32, _: &[u8]) {}
    fn probe(&mut self, role: Role, bytes: &[u8], at: ProbeAt) -> Probe {
        match role {
            Role::Requests => probe_request(bytes, 1 << 20),
            Role::Responses if bytes.len() < 8 => Probe::NeedMore,
            Role::Responses => {
                if at.stream_start || at.segment_start || bytes[7] % 3 == 0 {
                    Probe::Yes
                } else {
                    Probe::No
                }
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [cut, mode, rest @ ..] = data else { return };
    let role = if mode & 1 == 0 { Role::Requests } else { Role::Responses };
    let mut f = if mode & 2 == 0 {
        Framer::new(role, 1 << 20)
    } else {
        Framer::new_mid_stream(role, 1 << 20)
    };
    let step = usize::from(*cut).max(1);
    for (i, chunk) in rest.chunks(step).enumerate() {
        f.push(chunk, &mut H);
        if mode & 4 != 0 && i % 3 == 1 {
            f.gap(u64::from(chunk[0]), &mut H);
        }
    }
    f.finish(&mut H);
});
