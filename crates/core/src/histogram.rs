//! A small lock-free latency histogram for `stats()`: queue wait and run time.
//!
//! Log-linear buckets: exact below 8 ns, then 8 buckets per power of two, so
//! any percentile is reported within 12.5 % of the true value (the exact
//! maximum is kept aside). Each worker seat owns its histograms and is their
//! only writer, so recording is three uncontended relaxed atomic operations;
//! readers (`stats()`) merge all seats.
//!
//! Counts and the running sum only grow, from the pool's creation: a
//! Prometheus histogram is cumulative, and must never go down. `stats({
//! reset })` is a baseline the pool subtracts ([`Summary::since`]); only
//! the maximum is reset in place.

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
    /// Nanoseconds recorded in all (wraps after 584 years of run time).
    sum: AtomicU64,
    max: AtomicU64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            sum: AtomicU64::new(0),
            max: AtomicU64::new(0),
        }
    }
}

/// The first nanosecond past bucket `i` (its values are below it).
fn upper(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i + 1;
    }
    let k = i / SUB + SUB_BITS as u64 - 1;
    let sub = i % SUB;
    let shift = k - SUB_BITS as u64;
    // The last bucket ends past u64::MAX: saturate.
    ((SUB + sub + 1) as u128)
        .checked_shl(shift as u32)
        .map_or(u64::MAX, |v| v.min(u64::MAX as u128) as u64)
}

impl Histogram {
    /// Records one duration.
    #[inline]
    pub fn record(&self, d: Duration) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.counts[index(ns)].fetch_add(1, Ordering::Relaxed);
        self.sum.fetch_add(ns, Ordering::Relaxed);
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
        into.sum = into.sum.wrapping_add(self.sum.load(Ordering::Relaxed));
        into.max = into.max.max(self.max.load(Ordering::Relaxed));
    }

    /// Forgets the maximum (the counts and the sum only grow).
    pub fn reset_max(&self) {
        self.max.store(0, Ordering::Relaxed);
    }
}

/// Merged counts of one or more histograms.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    counts: Vec<u64>,
    sum: u64,
    max: u64,
}

impl Summary {
    /// What was recorded after `earlier` (a summary of the same histograms,
    /// read before): counts and sum subtracted, this summary's maximum.
    pub fn since(&self, earlier: &Summary) -> Summary {
        let counts = if earlier.counts.is_empty() {
            self.counts.clone()
        } else {
            self.counts
                .iter()
                .zip(earlier.counts.iter())
                .map(|(now, then)| now.saturating_sub(*then))
                .collect()
        };
        Summary { counts, sum: self.sum.wrapping_sub(earlier.sum), max: self.max }
    }

    /// The total of the recorded durations.
    pub fn sum(&self) -> Duration {
        Duration::from_nanos(self.sum)
    }

    /// For each of `bounds` (ascending), how many recorded durations were
    /// at most that long: a Prometheus histogram's cumulative buckets. A
    /// bucket counts once all of it lies at or below the bound, so a bound
    /// one below a power of two of nanoseconds (a bucket edge) is exact,
    /// and any other undercounts by the bucket it cuts (within 12.5 %).
    pub fn cumulative(&self, bounds: &[Duration]) -> Vec<u64> {
        let mut out = Vec::with_capacity(bounds.len());
        let mut i = 0;
        let mut seen = 0u64;
        for bound in bounds {
            let ns = u64::try_from(bound.as_nanos()).unwrap_or(u64::MAX);
            while i < self.counts.len() && upper(i) - 1 <= ns {
                seen += self.counts[i];
                i += 1;
            }
            out.push(seen);
        }
        out
    }

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
        let mut values: Vec<u64> =
            (0..20).chain((5..64).map(|s| 1u64 << s)).chain([12_345, 999_999, u64::MAX]).collect();
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
        assert_eq!(s.sum(), Duration::from_micros(1000 * 1001 / 2));
        // Counts grow from creation; a later summary minus an earlier one
        // is what came between.
        h.reset_max();
        let mut same = Summary::default();
        h.merge_into(&mut same);
        let nothing = same.since(&s);
        assert_eq!(nothing.count(), 0);
        assert_eq!(nothing.quantile(0.99), Duration::ZERO);
        assert_eq!(nothing.sum(), Duration::ZERO);
        h.record(Duration::from_millis(5));
        let mut later = Summary::default();
        h.merge_into(&mut later);
        let one = later.since(&s);
        assert_eq!(
            (one.count(), one.sum(), one.max()),
            (1, Duration::from_millis(5), Duration::from_millis(5))
        );
        assert_eq!(later.count(), 1001);
    }

    #[test]
    fn cumulative_counts_at_bucket_edges_are_exact() {
        let h = Histogram::default();
        let ns = [0u64, 1, 7, 8, 1023, 1024, 1025, 65_535, 65_536, 1 << 30, u64::MAX];
        for &n in &ns {
            h.record(Duration::from_nanos(n));
        }
        let mut s = Summary::default();
        h.merge_into(&mut s);
        // Bounds one below powers of two are bucket edges: exact.
        let bounds: Vec<u64> = vec![0, 7, 1023, 65_535, (1 << 30) - 1, u64::MAX];
        let got =
            s.cumulative(&bounds.iter().map(|&b| Duration::from_nanos(b)).collect::<Vec<_>>());
        let want: Vec<u64> =
            bounds.iter().map(|&b| ns.iter().filter(|&&n| n <= b).count() as u64).collect();
        assert_eq!(got, want);
        // Every bucket's values lie below its upper edge, and at or past the previous one's.
        for i in 1..BUCKETS {
            assert!(index(upper(i - 1)) >= i || upper(i - 1) == u64::MAX, "bucket {i}");
            assert_eq!(index(upper(i - 1) - 1), i - 1, "bucket {}", i - 1);
        }
    }
}
