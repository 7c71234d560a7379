//! The Kafka framer on arbitrary bytes cut into arbitrary chunks, with gaps: the first byte
//! says how to cut (chunk size), the second whether to start mid-stream and which role. A
//! second framer takes every chunk it can with `skip_inside` (the pipeline's shortcut) and
//! must report exactly what the first does.
#![no_main]
use kafka_pcap::kafka::framing::{Decision, FrameHandler, Framer, GapEffect, ProbeAt, Role};
use kafka_pcap::kafka::header::{probe_request, Probe};
use libfuzzer_sys::fuzz_target;

/// Records what the framer reports.
#[derive(Default)]
struct H(Vec<String>);

impl FrameHandler for H {
    fn on_head(&mut self, _: Role, _offset: u64, size: u32, head: &[u8]) -> Decision {
        self.0.push(format!("head {size} {head:?}"));
        if head.first().copied().unwrap_or(0) % 2 == 0 {
            Decision::Keep
        } else {
            Decision::Skip
        }
    }
    fn on_frame(&mut self, _: Role, at: u64, f: &[u8]) {
        self.0.push(format!("frame {at} {f:?}"));
    }
    fn on_skipped(&mut self, _: Role, at: u64, size: u32, _: &[u8], damaged: bool) {
        self.0.push(format!("skipped {at} {size} {damaged}"));
    }
    fn on_bad_size(&mut self, _: Role, at: u64, size: i32, _: &[u8]) {
        self.0.push(format!("bad size {at} {size}"));
    }
    fn on_gap(&mut self, _: Role, at: u64, len: u64, e: GapEffect) {
        self.0.push(format!("gap {at} {len} {e:?}"));
    }
    fn on_head_lost(&mut self, _: Role, size: u32, _: &[u8]) {
        self.0.push(format!("head lost {size}"));
    }
    fn on_resync(&mut self, _: Role, at: u64, skipped: u64) {
        self.0.push(format!("resync {at} {skipped}"));
    }
    fn on_truncated(&mut self, _: Role, at: u64, size: u32, _: &[u8]) {
        self.0.push(format!("truncated {at} {size}"));
    }
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
    let new = || {
        // A small budget now and then (one per framer), so that kept frames are refused too.
        let memory = kafka_pcap::memory::Memory::new(if mode & 8 == 0 { 1 << 30 } else { 300 });
        if mode & 2 == 0 {
            Framer::new(role, 1 << 20, &memory)
        } else {
            Framer::new_mid_stream(role, 1 << 20, &memory)
        }
    };
    let (mut f, mut g) = (new(), new());
    let (mut hf, mut hg) = (H::default(), H::default());
    let step = usize::from(*cut).max(1);
    for (i, chunk) in rest.chunks(step).enumerate() {
        f.push(chunk, &mut hf);
        if !g.skip_inside(chunk.len()) {
            g.push(chunk, &mut hg);
        }
        if mode & 4 != 0 && i % 3 == 1 {
            f.gap(u64::from(chunk[0]), &mut hf);
            g.gap(u64::from(chunk[0]), &mut hg);
        }
    }
    f.finish(&mut hf);
    g.finish(&mut hg);
    assert_eq!(hf.0, hg.0, "skip_inside changed what the framer reports");
});
