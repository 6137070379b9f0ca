//! A model of Kubernetes' Horizontal Pod Autoscaler, from its replica
//! calculator and its scaling behaviour (autoscaling/v2), as pure
//! functions of what it reads and a fake clock. KEDA's ScaledObject drives
//! the same controller: its Prometheus triggers are External metrics.

use std::time::Duration;

/// Kubernetes' default tolerance: no change while the usage ratio is
/// within 10 % of 1.
pub const TOLERANCE: f64 = 0.1;

/// Replicas asked for by an External metric with `target.type: Value`:
/// the usage ratio times the ready pods.
pub fn external_value(value: f64, target: f64, current: u32, ready: u32) -> u32 {
    let ratio = value / target;
    if (1.0 - ratio).abs() <= TOLERANCE {
        return current;
    }
    (ratio * f64::from(ready)).ceil() as u32
}

/// Replicas asked for by an External metric with `target.type:
/// AverageValue`: the total over the target per pod.
pub fn external_average(value: f64, per_pod: f64, current: u32) -> u32 {
    let ratio = value / (per_pod * f64::from(current));
    if (1.0 - ratio).abs() <= TOLERANCE {
        return current;
    }
    (value / per_pod).ceil() as u32
}

/// What the HPA knows of one pod's CPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PodCpu {
    /// Ready, with a utilization (of its request, 1.0 = 100 %) measured
    /// while it was ready.
    Measured(f64),
    /// Not ready yet, or ready for less than a metrics window: left out,
    /// and counted as 0 % when the others ask to scale up.
    Ignored,
    /// Ready, but metrics-server has no value for it yet: 0 % on a scale-up,
    /// 100 % on a scale-down.
    Missing,
}

/// Replicas asked for by a `Resource` metric (CPU) with `target.type:
/// Utilization`, as the replica calculator's resource path computes them.
pub fn cpu_utilization(pods: &[PodCpu], target: f64, current: u32) -> Option<u32> {
    let measured: Vec<f64> = pods
        .iter()
        .filter_map(|p| if let PodCpu::Measured(u) = p { Some(*u) } else { None })
        .collect();
    if measured.is_empty() {
        return None; // "did not receive metrics for any ready pods": no change
    }
    let ratio = measured.iter().sum::<f64>() / measured.len() as f64 / target;
    let ignored = pods.iter().filter(|p| **p == PodCpu::Ignored).count();
    let missing = pods.iter().filter(|p| **p == PodCpu::Missing).count();
    let rebalance = ignored > 0 && ratio > 1.0;
    if !rebalance && missing == 0 {
        if (1.0 - ratio).abs() <= TOLERANCE {
            return Some(current);
        }
        return Some((ratio * measured.len() as f64).ceil() as u32);
    }
    let mut usage: Vec<f64> = measured.clone();
    if ratio < 1.0 {
        usage.extend(std::iter::repeat_n(1.0, missing));
    } else if ratio > 1.0 {
        usage.extend(std::iter::repeat_n(0.0, missing));
    }
    if rebalance {
        usage.extend(std::iter::repeat_n(0.0, ignored));
    }
    let new_ratio = usage.iter().sum::<f64>() / usage.len() as f64 / target;
    if (1.0 - new_ratio).abs() <= TOLERANCE
        || (ratio < 1.0 && new_ratio > 1.0)
        || (ratio > 1.0 && new_ratio < 1.0)
    {
        return Some(current);
    }
    let replicas = (new_ratio * usage.len() as f64).ceil() as u32;
    if (new_ratio < 1.0 && replicas > current) || (new_ratio > 1.0 && replicas < current) {
        return Some(current);
    }
    Some(replicas)
}

/// One scaling policy of a direction: at most this change per period.
#[derive(Clone, Copy, Debug)]
pub enum Policy {
    Pods(u32, Duration),
    Percent(u32, Duration),
}

/// One direction of `spec.behavior` (`selectPolicy: Max`: the policy that
/// allows the larger change wins).
#[derive(Clone, Debug)]
pub struct Rules {
    pub stabilization: Duration,
    pub policies: Vec<Policy>,
}

#[derive(Clone, Debug)]
pub struct Behavior {
    pub up: Rules,
    pub down: Rules,
}

impl Behavior {
    /// What deploy/kubernetes/ sets: Kubernetes' default scale-up (no
    /// stabilization; +100 % or +4 pods per 15 s), and a scale-down that
    /// waits 5 minutes and then sheds at most half the pods per minute.
    pub fn manifests() -> Behavior {
        let s = Duration::from_secs;
        Behavior {
            up: Rules {
                stabilization: s(0),
                policies: vec![Policy::Percent(100, s(15)), Policy::Pods(4, s(15))],
            },
            down: Rules { stabilization: s(300), policies: vec![Policy::Percent(50, s(60))] },
        }
    }

    /// The same, with the scale-up policies' period set to `period`.
    pub fn with_up_period(mut self, period: Duration) -> Behavior {
        for policy in &mut self.up.policies {
            match policy {
                Policy::Pods(_, p) | Policy::Percent(_, p) => *p = period,
            }
        }
        self
    }
}

/// The controller's memory for one HPA: past recommendations (for the
/// stabilization windows) and past scale events (for the rate policies),
/// as `horizontal.go` keeps them.
pub struct Controller {
    pub behavior: Behavior,
    pub min: u32,
    pub max: u32,
    /// (when, the replica count the metrics asked for).
    recommendations: Vec<(Duration, u32)>,
    /// (when, pods added), and (when, pods removed): kept apart.
    ups: Vec<(Duration, u32)>,
    downs: Vec<(Duration, u32)>,
}

/// Whether `at` lies within the `window` that ends at `now` (strictly
/// after its start, as Go's `After(cutoff)`; a window reaching back before
/// time 0 holds everything).
fn within(at: Duration, now: Duration, window: Duration) -> bool {
    now.checked_sub(window).is_none_or(|cutoff| at > cutoff)
}

impl Controller {
    pub fn new(behavior: Behavior, min: u32, max: u32) -> Controller {
        Controller {
            behavior,
            min,
            max,
            recommendations: Vec::new(),
            ups: Vec::new(),
            downs: Vec::new(),
        }
    }

    /// The replica count to set at `now`, from `current` and the largest
    /// count any metric asked for. `None` (no metric could be read): the
    /// HPA keeps the count and records nothing.
    pub fn reconcile(&mut self, now: Duration, current: u32, asked: Option<u32>) -> u32 {
        let Some(desired) = asked else { return current };
        // Stabilize over one window, picked by the direction of the raw
        // recommendation: asking for more takes the lowest of the scale-up
        // window; asking for fewer takes the highest of the scale-down
        // window. The latter can exceed `current`, and then scales up: a
        // recommendation stays in force for the whole scale-down window
        // (kubernetes/kubernetes#96671).
        let up = desired >= current;
        let window =
            if up { self.behavior.up.stabilization } else { self.behavior.down.stabilization };
        let mut stabilized = desired;
        for &(at, r) in &self.recommendations {
            if within(at, now, window) {
                stabilized = if up { stabilized.min(r) } else { stabilized.max(r) };
            }
        }
        let keep = self.behavior.up.stabilization.max(self.behavior.down.stabilization);
        self.recommendations.retain(|&(at, _)| within(at, now, keep));
        self.recommendations.push((now, desired));
        // The rate policies, then the bounds (max on the way up, min on the way down).
        let next = if stabilized > current {
            let limit = self.limit(now, current, true).max(current);
            stabilized.min(limit.min(self.max))
        } else if stabilized < current {
            let limit = self.limit(now, current, false).min(current);
            stabilized.max(limit.max(self.min))
        } else {
            current
        };
        let longest =
            |rules: &Rules| rules.policies.iter().map(|p| period(*p)).max().unwrap_or_default();
        let (up_keep, down_keep) = (longest(&self.behavior.up), longest(&self.behavior.down));
        self.ups.retain(|&(at, _)| within(at, now, up_keep));
        self.downs.retain(|&(at, _)| within(at, now, down_keep));
        if next > current {
            self.ups.push((now, next - current));
        } else if next < current {
            self.downs.push((now, current - next));
        }
        next
    }

    /// The farthest the rules of one direction let the count go from
    /// `current` now (`selectPolicy: Max`: the policy allowing the larger
    /// change), counted from the count at the start of each policy's period.
    fn limit(&self, now: Duration, current: u32, up: bool) -> u32 {
        let (rules, events) =
            if up { (&self.behavior.up, &self.ups) } else { (&self.behavior.down, &self.downs) };
        let mut best: Option<i64> = None;
        for &policy in &rules.policies {
            let changed: i64 = events
                .iter()
                .filter(|&&(at, _)| within(at, now, period(policy)))
                .map(|&(_, n)| i64::from(n))
                .sum();
            let start =
                if up { i64::from(current) - changed } else { i64::from(current) + changed };
            let proposed = match (policy, up) {
                (Policy::Pods(n, _), true) => start + i64::from(n),
                (Policy::Pods(n, _), false) => start - i64::from(n),
                (Policy::Percent(p, _), true) => {
                    (start as f64 * (1.0 + f64::from(p) / 100.0)).ceil() as i64
                }
                (Policy::Percent(p, _), false) => {
                    (start as f64 * (1.0 - f64::from(p) / 100.0)) as i64
                }
            };
            best = Some(match best {
                None => proposed,
                Some(b) if up => b.max(proposed),
                Some(b) => b.min(proposed),
            });
        }
        best.unwrap_or(i64::from(current)).clamp(0, i64::from(u32::MAX)) as u32
    }
}

fn period(policy: Policy) -> Duration {
    match policy {
        Policy::Pods(_, p) | Policy::Percent(_, p) => p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_formula() {
        // Kubernetes' docs: 200m against a 100m target doubles the replicas;
        // 50m halves them; within 10 % nothing changes.
        assert_eq!(external_value(0.2, 0.1, 3, 3), 6);
        assert_eq!(external_value(0.05, 0.1, 4, 4), 2);
        assert_eq!(external_value(0.105, 0.1, 4, 4), 4);
        // Value counts ready pods only: 2 of 4 ready, twice the target: 4.
        assert_eq!(external_value(0.2, 0.1, 4, 2), 4);
        assert_eq!(external_average(7.0, 1.4, 2), 5);
        assert_eq!(external_average(2.9, 1.4, 2), 2, "within the tolerance");
    }

    #[test]
    fn cpu_counts_starting_pods_as_idle_on_a_scale_up() {
        let full = PodCpu::Measured(1.0);
        assert_eq!(cpu_utilization(&[full, full], 0.7, 2), Some(3));
        // Two starting pods dilute the ratio: 2 × 1.0 over 4 pods = 0.5 < 0.7: hold.
        assert_eq!(
            cpu_utilization(&[full, full, PodCpu::Ignored, PodCpu::Ignored], 0.7, 4),
            Some(4)
        );
        assert_eq!(cpu_utilization(&[PodCpu::Ignored], 0.7, 1), None);
    }

    #[test]
    fn behavior_limits_and_stabilizes() {
        let s = Duration::from_secs;
        let mut c = Controller::new(Behavior::manifests(), 2, 20);
        assert_eq!(c.reconcile(s(0), 2, Some(50)), 6, "+4 pods beats +100 % from 2");
        assert_eq!(c.reconcile(s(5), 6, Some(50)), 6, "the period's budget is spent");
        assert_eq!(c.reconcile(s(15), 6, Some(50)), 12, "+100 % of 6");
        assert_eq!(c.reconcile(s(20), 12, None), 12, "no metric: no change, nothing recorded");
        assert_eq!(c.reconcile(s(30), 12, Some(12)), 12);
        // Asked for 2 with 50 in the window: the highest recommendation
        // of the scale-down window wins, and it scales *up* to the maximum.
        assert_eq!(
            c.reconcile(s(45), 12, Some(2)),
            20,
            "kubernetes#96671: a past recommendation still in force"
        );
        assert_eq!(c.reconcile(s(310), 20, Some(2)), 20, "50 at 15 s is still within 5 minutes");
        // At 330 s the window is (30 s, 330 s]: 50 (15 s) and 12 (30 s) have
        // left it, 2 is the highest; at most half the pods per minute.
        assert_eq!(c.reconcile(s(330), 20, Some(2)), 10);
        assert_eq!(c.reconcile(s(346), 10, Some(2)), 10, "the minute's budget is spent");
        assert_eq!(c.reconcile(s(400), 10, Some(2)), 5);
        assert_eq!(c.reconcile(s(460), 5, Some(1)), 2, "never below min");
    }

    #[test]
    fn a_recommendation_at_time_zero_counts() {
        let s = Duration::from_secs;
        let mut c = Controller::new(Behavior::manifests(), 2, 20);
        assert_eq!(c.reconcile(s(0), 4, Some(4)), 4);
        assert_eq!(c.reconcile(s(15), 4, Some(2)), 4, "4 at 0 s is within the scale-down window");
    }
}
