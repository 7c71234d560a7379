//! The Community ID flow hash, version 1 (corelight/community-id-spec), as Zeek, Suricata and
//! Elastic write it: `1:` and the base64 of the SHA-1 of the seed (0), the two addresses and
//! ports in a fixed order (the lower address first, or the lower port when the addresses are
//! equal), protocol 6 (TCP) and a padding byte. The only user of sha1 and base64.

use crate::vocab::Endpoint;
use base64::Engine;
use sha1::{Digest, Sha1};
use std::net::IpAddr;
use std::sync::Arc;

fn octets(ip: &IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(a) => a.octets().to_vec(),
        IpAddr::V6(a) => a.octets().to_vec(),
    }
}

/// The Community ID v1 (seed 0) of the TCP connection between `a` and `b`, either way round:
/// `1:LQU9qZlK+B5F3KDmev6m5PMibrg=` for 128.232.110.120:34855 and 66.35.250.204:80.
pub fn community_id(a: &Endpoint, b: &Endpoint) -> String {
    let (ia, ib) = (octets(&a.ip), octets(&b.ip));
    let (first, second) = if (&ia, a.port) <= (&ib, b.port) {
        ((ia, a.port), (ib, b.port))
    } else {
        ((ib, b.port), (ia, a.port))
    };
    let mut h = Sha1::new();
    h.update(0u16.to_be_bytes());
    h.update(&first.0);
    h.update(&second.0);
    h.update([6u8, 0]);
    h.update(first.1.to_be_bytes());
    h.update(second.1.to_be_bytes());
    format!(
        "1:{}",
        base64::engine::general_purpose::STANDARD.encode(h.finalize())
    )
}

/// Entries of [`CommunityIds`].
const SLOTS: usize = 1024;

/// The Community IDs of the last connections asked for, by stream index (direct-mapped, 1,024
/// entries, under 100 KB): the same connection's records hash once, and share its text.
#[derive(Debug, Default)]
pub struct CommunityIds {
    slots: Vec<Option<Slot>>,
}

/// A stream index, its two endpoints and their Community ID.
type Slot = (u64, Endpoint, Endpoint, Arc<str>);

impl CommunityIds {
    /// The Community ID of stream `stream` between `a` and `b` (shared, not copied).
    pub fn of(&mut self, stream: u64, a: &Endpoint, b: &Endpoint) -> Arc<str> {
        if self.slots.is_empty() {
            self.slots.resize(SLOTS, None);
        }
        let i = (stream % SLOTS as u64) as usize;
        let hit = matches!(&self.slots[i], Some((s, x, y, _)) if *s == stream
            && ((x == a && y == b) || (x == b && y == a)));
        if !hit {
            self.slots[i] = Some((stream, *a, *b, community_id(a, b).into()));
        }
        match &self.slots[i] {
            Some((_, _, _, id)) => Arc::clone(id),
            None => Arc::from(""),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(ip: &str, port: u16) -> Endpoint {
        Endpoint {
            ip: ip.parse().unwrap(),
            port,
        }
    }

    /// The specification's own example (c-community-id's README, Suricata's and Elastic's
    /// tests), both ways round; and IPv6.
    #[test]
    fn the_specification_example() {
        let a = ep("128.232.110.120", 34855);
        let b = ep("66.35.250.204", 80);
        assert_eq!(community_id(&a, &b), "1:LQU9qZlK+B5F3KDmev6m5PMibrg=");
        assert_eq!(community_id(&b, &a), "1:LQU9qZlK+B5F3KDmev6m5PMibrg=");
        let mut c = CommunityIds::default();
        assert_eq!(&*c.of(3, &b, &a), "1:LQU9qZlK+B5F3KDmev6m5PMibrg=");
        assert_eq!(&*c.of(1027, &a, &b), "1:LQU9qZlK+B5F3KDmev6m5PMibrg=");
        let v6 = community_id(&ep("::1", 40000), &ep("::1", 9092));
        assert_eq!(v6, community_id(&ep("::1", 9092), &ep("::1", 40000)));
        assert!(v6.starts_with("1:") && v6.len() == 30, "{v6}");
    }
}
