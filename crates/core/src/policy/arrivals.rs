//! The arrival rate the demand rule sizes the pool by: tasks submitted per
//! 1 ms bucket over the last [`WINDOW_MS`] milliseconds. Recording is O(1)
//! under the lock `submit` already holds; the rate is exact whatever the
//! supervisor was doing meanwhile (it may have slept for seconds).

/// Milliseconds the rate is measured over: short enough to see a step
/// within a few milliseconds, long enough to smooth the posting of a JS
/// timer tick (all its tasks arrive at once).
pub const WINDOW_MS: u64 = 8;

/// Arrival counts per millisecond, in a ring of [`WINDOW_MS`] buckets.
#[derive(Debug, Clone, Default)]
pub struct ArrivalWindow {
    /// Per bucket: (the millisecond it counts, how many arrived in it).
    buckets: [(u64, u32); WINDOW_MS as usize],
}

impl ArrivalWindow {
    /// Counts one arrival at `now_ms` (milliseconds since any fixed epoch).
    pub fn record(&mut self, now_ms: u64) {
        let bucket = &mut self.buckets[(now_ms % WINDOW_MS) as usize];
        if bucket.0 != now_ms {
            *bucket = (now_ms, 0);
        }
        bucket.1 = bucket.1.saturating_add(1);
    }

    /// Arrivals per second over the last [`WINDOW_MS`] milliseconds up to `now_ms`.
    pub fn rate(&self, now_ms: u64) -> f64 {
        let count: u64 = self.buckets.iter().filter(|(ms, _)| *ms <= now_ms && ms + WINDOW_MS > now_ms).map(|&(_, n)| u64::from(n)).sum();
        count as f64 * 1000.0 / WINDOW_MS as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_last_window_only() {
        let mut w = ArrivalWindow::default();
        for ms in 0..100u64 {
            for _ in 0..5 {
                w.record(ms); // 5 per ms = 5000 per second
            }
        }
        assert_eq!(w.rate(99), 5000.0);
        assert_eq!(w.rate(99 + WINDOW_MS / 2), 2500.0, "half the window has passed with no arrival");
        assert_eq!(w.rate(99 + WINDOW_MS), 0.0, "a whole quiet window later");
        assert_eq!(w.rate(10_000), 0.0, "long after: stale buckets do not count");
    }
}
