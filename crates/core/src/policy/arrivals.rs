//! The arrivals the policy looks at: tasks submitted per 1 ms bucket over
//! the last [`HISTORY_MS`] milliseconds. The demand rule sizes the pool by
//! their rate over the last [`WINDOW_MS`] (or [`RECENT_MS`] while tasks
//! queue beyond the threads); retirement by use replays the
//! last `idle_timeout` of them ([`super::threads_needed`]). Recording is
//! O(1) under the lock `submit` already holds; the counts are exact
//! whatever the supervisor was doing meanwhile (it may have slept for
//! seconds).

/// Milliseconds the rate is measured over. 8 ms followed the noise of
/// Poisson arrivals and of stalled JS timers catching up, and the pool
/// ratcheted up to it (threads that keep getting work never retire); 32 ms
/// cut the ramp's extra thread-seconds from 1.46× to 1.25× the oracle's at
/// 16 threads (BENCHMARKS.md, "Autoscaling on many cores"; the 8 ms run in
/// docs/benchmarks-history.md). A step is still seen at once: the queue it
/// builds is the other half of the demand.
pub const WINDOW_MS: u64 = 32;

/// Milliseconds of the recent rate ([`ArrivalWindow::recent_rate`]), which
/// the demand rule takes instead when it is higher while tasks queue beyond
/// the threads: a rise in load is then sized within milliseconds, not over
/// [`WINDOW_MS`] of a queue building. Only then: at other times, a window
/// this short follows the noise (see [`WINDOW_MS`]).
pub const RECENT_MS: u64 = 8;

/// Milliseconds of arrivals kept: the longest stretch retirement by use
/// replays (a longer `idle_timeout` replays the last this many).
pub const HISTORY_MS: u64 = 1024;

/// Arrival counts per millisecond, in a ring of [`HISTORY_MS`] buckets.
#[derive(Debug, Clone)]
pub struct ArrivalWindow {
    /// Per bucket: (the millisecond it counts, how many arrived in it).
    buckets: Box<[(u64, u32)]>,
}

impl Default for ArrivalWindow {
    fn default() -> Self {
        ArrivalWindow { buckets: vec![(u64::MAX, 0); HISTORY_MS as usize].into_boxed_slice() }
    }
}

impl ArrivalWindow {
    /// Counts one arrival at `now_ms` (milliseconds since any fixed epoch).
    pub fn record(&mut self, now_ms: u64) {
        self.record_many(now_ms, 1);
    }

    /// Counts `count` submissions at `now_ms` (a batch queued in one call).
    pub fn record_many(&mut self, now_ms: u64, count: usize) {
        let bucket = &mut self.buckets[(now_ms % HISTORY_MS) as usize];
        if bucket.0 != now_ms {
            *bucket = (now_ms, 0);
        }
        bucket.1 = bucket.1.saturating_add(u32::try_from(count).unwrap_or(u32::MAX));
    }

    /// Arrivals per second over the last [`WINDOW_MS`] milliseconds up to `now_ms`.
    pub fn rate(&self, now_ms: u64) -> f64 {
        let count: u64 = self.counts(now_ms, WINDOW_MS).map(u64::from).sum();
        count as f64 * 1000.0 / WINDOW_MS as f64
    }

    /// Arrivals per second over the last [`RECENT_MS`] milliseconds up to `now_ms`.
    pub fn recent_rate(&self, now_ms: u64) -> f64 {
        let count: u64 = self.counts(now_ms, RECENT_MS).map(u64::from).sum();
        count as f64 * 1000.0 / RECENT_MS as f64
    }

    /// The arrivals of each of the last `len` milliseconds up to `now_ms`
    /// (at most [`HISTORY_MS`]), oldest first.
    pub fn counts(&self, now_ms: u64, len: u64) -> impl Iterator<Item = u32> + '_ {
        let len = len.min(HISTORY_MS).min(now_ms + 1);
        (now_ms + 1 - len..=now_ms).map(move |ms| {
            let (at, n) = self.buckets[(ms % HISTORY_MS) as usize];
            if at == ms {
                n
            } else {
                0
            }
        })
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
        assert_eq!(
            w.rate(99 + WINDOW_MS / 2),
            2500.0,
            "half the window has passed with no arrival"
        );
        assert_eq!(w.rate(99 + WINDOW_MS), 0.0, "a whole quiet window later");
        assert_eq!(w.rate(10_000), 0.0, "long after: stale buckets do not count");
        let last: Vec<u32> = w.counts(100, 4).collect();
        assert_eq!(last, [5, 5, 5, 0], "oldest first, a quiet millisecond as 0");
        assert_eq!(w.counts(3, 100).count(), 4, "no millisecond before 0");
        assert_eq!(w.counts(5000, 5000).count(), HISTORY_MS as usize);
        assert!(w.counts(99 + HISTORY_MS, HISTORY_MS).all(|n| n == 0), "overwritten or stale");
    }
}
