//! Recognising Kafka on a connection whose ports say nothing: the first bytes of each direction
//! are held (at most [`super::PROBE_BUFFER_LIMIT`] bytes, [`MAX_ARRIVALS`] arrivals) until one
//! direction looks like requests, then replayed in capture order.

use super::*;

/// Detection state of a connection on a port not known as Kafka.
#[derive(Debug)]
pub(super) struct Probing {
    pub(super) ports: [u16; 2],
    /// The direction that carries requests if this is Kafka, when the handshake told.
    pub(super) client_dir: Option<Direction>,
    pub(super) bufs: [Vec<u8>; 2],
    /// What arrived, in capture order, to replay once decided: direction, delivering packet,
    /// and bytes held in `bufs` or (for a gap, or bytes beyond the probe limit) lost.
    pub(super) arrivals: Vec<(Direction, Location, Arrived)>,
    /// Verdict of [`detect_request`] on each direction's first bytes, once decided.
    pub(super) verdict: [Option<bool>; 2],
    /// Whether each direction was seen from its SYN.
    pub(super) syn: [bool; 2],
    /// What `bufs` and `arrivals` cost (twice the bytes held, for the vectors' growth),
    /// charged to the run's budget; `None` once a charge was refused and reported.
    pub(super) charge: Option<Charge>,
}

/// Most arrivals remembered while probing; reaching it forces a decision on the evidence at
/// hand.
pub(super) const MAX_ARRIVALS: usize = 1024;

impl Probing {
    /// Notes `len` bytes of `dir` that were not held (a gap, or past the probe buffer), merged
    /// with a loss just before it in the same direction.
    pub(super) fn lost(&mut self, dir: Direction, loc: &Location, len: u64) {
        if let Some((d, _, Arrived::Lost(n))) = self.arrivals.last_mut() {
            if *d == dir {
                *n += len;
                return;
            }
        }
        self.arrivals.push((dir, *loc, Arrived::Lost(len)));
    }
}

/// What one arrival brought to a direction being probed (replayed once Kafka is recognised).
#[derive(Debug, Clone, Copy)]
pub(super) enum Arrived {
    /// This many bytes, the next ones of the direction's buffer, and (`--write-pcap`) the
    /// packet that carried them when held before (0: the one delivering them).
    Data(usize, u64),
    /// This many bytes were never captured.
    Lost(u64),
    /// This many bytes were captured past the probing buffer, and not kept.
    NotKept(u64),
}
