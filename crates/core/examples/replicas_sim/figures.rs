//! What the table reports of a run: wait quantiles, late requests, replica
//! seconds, and several seeds' values as median [min–max].

use crate::Outcome;

pub fn quantile(sorted: &[f32], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    f64::from(sorted[((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1])
}

pub fn sorted(waits: impl Iterator<Item = f32>) -> Vec<f32> {
    let mut w: Vec<f32> = waits.collect();
    w.sort_by(|a, b| a.total_cmp(b));
    w
}

/// The figures of one run that the table reports.
pub struct Figures {
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_s: f64,
    /// Requests that got 503 or waited longer than 1 s, in %.
    pub late_pct: f64,
    pub replica_seconds: f64,
    pub peak: f64,
}

pub fn figures(out: &Outcome) -> Figures {
    let all = sorted(out.waits.iter().flatten().copied());
    let slow = all.iter().filter(|&&w| w > 1000.0).count();
    Figures {
        p50_ms: quantile(&all, 0.5),
        p99_ms: quantile(&all, 0.99),
        max_s: quantile(&all, 1.0) / 1000.0,
        late_pct: (slow + out.shed) as f64 * 100.0 / out.tasks as f64,
        replica_seconds: out.replica_seconds,
        peak: f64::from(out.peak_replicas),
    }
}

/// "v" for one seed; "median [min–max]" for several.
pub fn spread(values: &[f64], decimals: usize) -> String {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let median = v[v.len() / 2];
    if v.len() == 1 {
        format!("{median:.decimals$}")
    } else {
        format!("{median:.decimals$} [{:.decimals$}–{:.decimals$}]", v[0], v[v.len() - 1])
    }
}
