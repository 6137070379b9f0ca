//! A small lock-free latency histogram for `stats()`: queue wait and run time.
//!
//! Log-linear buckets: exact below 8 ns, then 8 buckets per power of two, so
//! any percentile is reported within 12.5 % of the true value (the exact
//! maximum is kept aside). Each worker seat owns its histograms and is their
//! only writer, so recording is two uncontended relaxed atomic adds; readers
//! (`stats()`) merge all seats.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const SUB_BITS: u32 = 3;
const SUB: u64 = 1 << SUB_BITS;
/// Enough buckets for any u64 nanosecond value.
const BUCKETS: usize = ((64 - SUB_BITS as usize) * SUB as usize) + SUB as usize;

fn index(ns: u64) -> usize {
    if ns < SUB {
        return ns as usize;
    }
    let k = 63 - ns.leading_zeros(); // position of the leading bit, >= SUB_BITS
    let sub = (ns >> (k - SUB_BITS)) & (SUB - 1);
    ((k - SUB_BITS + 1) as u64 * SUB + sub) as usize
}

/// The middle of bucket `i`, in nanoseconds.
fn value(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i;
    }
    let k = i / SUB + SUB_BITS as u64 - 1;
    let sub = i % SUB;
    let width = 1u64 << (k - SUB_BITS as u64);
    ((SUB + sub) << (k - SUB_BITS as u64)) + width / 2
}

/// Durations recorded by one writer, read by anyone.
pub struct Histogram {
    counts: Box<[AtomicU64]>,
    max: AtomicU64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(), max: AtomicU64::new(0) }
    }
}

impl Histogram {
    /// Records one duration.
    #[inline]
    pub fn record(&self, d: Duration) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.counts[index(ns)].fetch_add(1, Ordering::Relaxed);
        self.max.fetch_max(ns, Ordering::Relaxed);
    }

    /// Adds this histogram's counts to `into`.
    pub fn merge_into(&self, into: &mut Summary) {
        if into.counts.is_empty() {
            into.counts = vec![0; BUCKETS];
        }
        for (acc, c) in into.counts.iter_mut().zip(self.counts.iter()) {
            *acc += c.load(Ordering::Relaxed);
        }
        into.max = into.max.max(self.max.load(Ordering::Relaxed));
    }

    /// Forgets everything recorded so far.
    pub fn reset(&self) {
        for c in self.counts.iter() {
            c.store(0, Ordering::Relaxed);
        }
        self.max.store(0, Ordering::Relaxed);
    }
}

/// Merged counts of one or more histograms.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    counts: Vec<u64>,
    max: u64,
}

impl Summary {
    /// Number of recorded durations.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The `q`-quantile (0..=1), within 12.5 %; zero when empty.
    pub fn quantile(&self, q: f64) -> Duration {
        let total = self.count();
        if total == 0 {
            return Duration::ZERO;
        }
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Duration::from_nanos(value(i).min(self.max));
            }
        }
        Duration::from_nanos(self.max)
    }

    /// The largest recorded duration (exact).
    pub fn max(&self) -> Duration {
        Duration::from_nanos(self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_within_an_eighth() {
        let mut values: Vec<u64> = (0..20).chain((5..64).map(|s| 1u64 << s)).chain([12_345, 999_999, u64::MAX]).collect();
        values.sort();
        let mut last = 0;
        for ns in values {
            let i = index(ns);
            assert!(i < BUCKETS);
            assert!(i >= last, "{ns}");
            last = i;
            let v = value(i) as f64;
            assert!((v - ns as f64).abs() <= ns as f64 / 8.0 + 1.0, "{ns} -> bucket value {v}");
        }
    }

    #[test]
    fn quantiles_of_a_known_distribution() {
        let h = Histogram::default();
        for us in 1..=1000u64 {
            h.record(Duration::from_micros(us));
        }
        let mut s = Summary::default();
        h.merge_into(&mut s);
        assert_eq!(s.count(), 1000);
        let p50 = s.quantile(0.5).as_secs_f64() * 1e6;
        let p99 = s.quantile(0.99).as_secs_f64() * 1e6;
        assert!((p50 - 500.0).abs() < 500.0 / 8.0, "p50 {p50}");
        assert!((p99 - 990.0).abs() < 990.0 / 8.0, "p99 {p99}");
        assert_eq!(s.max(), Duration::from_micros(1000));
        h.reset();
        let mut empty = Summary::default();
        h.merge_into(&mut empty);
        assert_eq!(empty.count(), 0);
        assert_eq!(empty.quantile(0.99), Duration::ZERO);
    }
}
