//! The pipeline where tunnels and fragments are decoded: inputs that are captures are read as
//! they are (the seeds are the tunnel captures of `captures/`); others are split into packets
//! (a 2-byte length before each) and written as Ethernet frames (link type 1), each behind one
//! of a few outer headers chosen by its first byte (VXLAN, Geneve, GRE, IP-in-IP, an IPv4
//! fragment, MPLS, PPPoE, none), so that the fuzzer reaches the tunnel pass and reassembly at
//! once. Inputs of odd length run with `--write-pcap` (the trail of each frame's packets,
//! then the second reading that writes them, as pcap or pcapng).
#![no_main]
use kafka_pcap::output::pcap::{write_packets, PacketCollector, PacketSet, PcapFormat};
use kafka_pcap::output::VecSink;
use kafka_pcap::{run_slice, Config};
use libfuzzer_sys::fuzz_target;

/// Runs the pipeline on `file`; with `write_pcap`, also writes the packets of its records.
fn run(file: &[u8], write_pcap: bool) {
    let mut sink = VecSink::default();
    if !write_pcap {
        let _ = run_slice(file, &Config::default(), &mut sink);
        return;
    }
    let config = Config {
        write_pcap: true,
        all_apis: true,
        hold_requests: true,
        ..Config::default()
    };
    let mut set = PacketSet::new(&config.memory);
    {
        let mut collect = PacketCollector::new(&mut sink, &mut set);
        let _ = run_slice(file, &config, &mut collect);
    }
    let format = if file.len() % 4 == 1 { PcapFormat::PcapNg } else { PcapFormat::Pcap };
    let mut out = Vec::new();
    let _ = write_packets(file, &set, format, &mut out);
}

fn ipv4(protocol: u8, flags_offset: u16, payload: &[u8]) -> Vec<u8> {
    let total = (20 + payload.len()).min(65535) as u16;
    let mut h = vec![0x45, 0];
    h.extend_from_slice(&total.to_be_bytes());
    h.extend_from_slice(&[0x12, 0x34]);
    h.extend_from_slice(&flags_offset.to_be_bytes());
    h.extend_from_slice(&[64, protocol, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
    h.extend_from_slice(payload);
    h
}

fn udp(dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = vec![0x13, 0x88];
    v.extend_from_slice(&dport.to_be_bytes());
    v.extend_from_slice(&((8 + payload.len()).min(65535) as u16).to_be_bytes());
    v.extend_from_slice(&[0, 0]);
    v.extend_from_slice(payload);
    v
}

fn eth(ether_type: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    v.extend_from_slice(&ether_type.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

fn frame(kind: u8, rest: &[u8]) -> Vec<u8> {
    match kind % 8 {
        0 => eth(0x0800, &ipv4(17, 0, &udp(4789, rest))),
        1 => eth(0x0800, &ipv4(17, 0, &udp(6081, rest))),
        2 => eth(0x0800, &ipv4(47, 0, rest)),
        3 => eth(0x0800, &ipv4(4, 0, rest)),
        4 => {
            let (off, more) = (u16::from(rest.first().copied().unwrap_or(0)), kind & 0x80 != 0);
            eth(0x0800, &ipv4(6, off | if more { 0x2000 } else { 0 }, rest.get(1..).unwrap_or(&[])))
        }
        5 => eth(0x8847, rest),
        6 => eth(0x8864, rest),
        _ => rest.to_vec(),
    }
}

fuzz_target!(|data: &[u8]| {
    let is_capture = matches!(
        data.get(..4),
        Some([0xd4, 0xc3, 0xb2, 0xa1] | [0xa1, 0xb2, 0xc3, 0xd4] | [0x4d, 0x3c, 0xb2, 0xa1] | [0x0a, 0x0d, 0x0d, 0x0a])
    );
    let write_pcap = data.len() % 2 == 1;
    if is_capture {
        return run(data, write_pcap);
    }
    let mut file = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    file.extend_from_slice(&262_144u32.to_le_bytes());
    file.extend_from_slice(&1u32.to_le_bytes());
    let mut rest = data;
    let mut n = 0u32;
    while rest.len() >= 3 {
        let len = usize::from(u16::from_le_bytes([rest[0], rest[1]])).min(rest.len() - 2);
        let (packet, after) = rest[2..].split_at(len);
        rest = after;
        let Some((&kind, body)) = packet.split_first() else { continue };
        let f = frame(kind, body);
        file.extend_from_slice(&(n / 1000).to_le_bytes());
        file.extend_from_slice(&((n % 1000) * 1000).to_le_bytes());
        file.extend_from_slice(&(f.len() as u32).to_le_bytes());
        file.extend_from_slice(&(f.len() as u32).to_le_bytes());
        file.extend_from_slice(&f);
        n += 1;
    }
    run(&file, write_pcap);
});
