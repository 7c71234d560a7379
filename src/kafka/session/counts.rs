//! Counts of the Kafka frames of a run, of every API: requests, paired responses, responses
//! without a request, and latencies per API (a uniform sample for percentiles). The session
//! counts each frame as it completes; `crate::stats::Stats` carries them.

/// Kafka frames framed during a run, of every API (not only WriteTxnMarkers).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrameCounts {
    /// Complete request frames, by API key.
    pub requests: std::collections::BTreeMap<i16, u64>,
    /// Complete response frames paired with a request, by the request's API key.
    pub responses: std::collections::BTreeMap<i16, u64>,
    /// Complete response frames whose request was not seen.
    pub unpaired_responses: u64,
    /// Latencies of paired exchanges (microseconds), by API key.
    pub latencies: std::collections::BTreeMap<i16, LatencySample>,
}

/// Latencies of one API's exchanges, in microseconds: the count and maximum exactly, and a
/// uniform sample of at most [`LatencySample::CAPACITY`] values for percentiles (reservoir
/// sampling with a fixed seed, so runs repeat).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LatencySample {
    /// Exchanges seen.
    pub count: u64,
    /// The largest latency seen.
    pub max: i64,
    /// The sample.
    pub values: Vec<i64>,
    rng: u64,
}

impl LatencySample {
    /// Most values kept for percentiles.
    pub const CAPACITY: usize = 10_000;

    /// Adds one latency.
    pub fn add(&mut self, us: i64) {
        if self.count == 0 || us > self.max {
            self.max = us;
        }
        self.count += 1;
        if self.values.len() < Self::CAPACITY {
            self.values.push(us);
            return;
        }
        // xorshift64: deterministic, good enough to pick a slot.
        self.rng = if self.rng == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            self.rng
        };
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let slot = self.rng % self.count;
        if (slot as usize) < Self::CAPACITY {
            self.values[slot as usize] = us;
        }
    }

    /// The `p`-th percentile (0 to 100) of the sample, nearest rank; `None` when empty.
    pub fn percentile(&self, p: f64) -> Option<i64> {
        if self.values.is_empty() {
            return None;
        }
        let mut v = self.values.clone();
        v.sort_unstable();
        let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
        Some(v[rank.clamp(1, v.len()) - 1])
    }
}
