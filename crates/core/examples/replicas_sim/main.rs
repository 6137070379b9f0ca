//! Two levels of scaling, simulated: N replicas behind a load balancer,
//! each running a tidepool (the pool's own policy, `policy::sim::Sim`,
//! starting and retiring its threads), with replicas added and removed by
//! Kubernetes' HPA (modelled in `hpa.rs`) on one of three signals:
//!
//! * `queue-age+busy`: what deploy/kubernetes/ sets up (KEDA, or HPA with
//!   prometheus-adapter): `max(tidepool_queue_oldest_age_seconds)` against
//!   0.5 s (`Value`) to scale up, and the busy threads
//!   `sum(rate(tidepool_task_run_seconds_sum[40s]))` against 1.4 per pod
//!   (`AverageValue`, 70 % of 2 threads) as the floor that scale-down
//!   follows;
//! * `queue-age`: the queue-age trigger alone (why the second one exists);
//! * `cpu`: HPA's usual rule, CPU utilization against 70 % of the request.
//!
//! Kubernetes' delays are parameters: how often Prometheus scrapes
//! (`--scrape`, 10 s, with rates over `--rate-window`, 40 s), how often
//! metrics-server samples CPU (`--resolution`, 15 s), the HPA's sync period (`--sync`), and
//! how long a new pod takes to become ready (`--pod-start`). Both rules get
//! the same scaling behaviour (`hpa::Behavior::manifests`), so only the
//! signal differs.
//!
//!   cargo run --release -p tidepool-core --example replicas_sim
//!   cargo run --release -p tidepool-core --example replicas_sim -- --pod-start 60 --svg docs/scaling-out.svg
//!
//! Model: tasks of 10 ms (a 2 MiB SHA-256 here) arrive as a Poisson process;
//! each goes to a ready, non-terminating pod picked at random (kube-proxy's
//! iptables mode). A pod has 2 threads (its CPU limit) and its event loop
//! spends 0.5 ms of CPU per request; CPU is capped at the limit. A pod the
//! HPA removes leaves the load balancer at once, finishes its queue, and
//! counts until then. Left out: network time, the cluster autoscaler
//! (nodes are assumed free), Prometheus' rate() extrapolation, and the HPA's
//! 5-minute CPU initialization period beyond its first window.

mod figures;
mod hpa;
mod params;
mod svg;

use std::time::Duration;

use figures::{figures, quantile, sorted, spread, Figures};
use hpa::{Behavior, Controller, PodCpu};
use params::{parse_args, Params, Rule};
use tidepool_core::policy::sim::Sim;
use tidepool_core::policy::{PolicyConfig, SpawnRule};

/// Milliseconds: the model's clock ticks once per millisecond.
type Ms = u64;

/// A load profile: threads' worth of work at each second, and its length.
pub struct Scenario {
    pub name: &'static str,
    pub load: fn(f64) -> f64,
    pub end_s: u64,
}

pub fn scenarios() -> [Scenario; 2] {
    [
        // 1 → 24 threads' worth (12 pods at 100 %) over 15 minutes, then held.
        Scenario { name: "ramp", load: |t| 1.0 + 23.0 * (t / 900.0).min(1.0), end_s: 1200 },
        // 3 threads' worth, then 20 from minute 2 to minute 12, then 3 again.
        Scenario {
            name: "step",
            load: |t| {
                if (120.0..720.0).contains(&t) {
                    20.0
                } else {
                    3.0
                }
            },
            end_s: 1200,
        },
    ]
}

/// splitmix64: a small, good-enough generator with a seed, so every run of
/// a scenario sees the same arrivals.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.unit() * n as f64) as usize % n
    }
    /// A Poisson count of mean `mean` (small means: Knuth's method).
    fn poisson(&mut self, mean: f64) -> u32 {
        let limit = (-mean).exp();
        let (mut k, mut p) = (0, self.unit());
        while p > limit {
            k += 1;
            p *= self.unit();
        }
        k
    }
}

struct Pod {
    pool: Sim,
    ready_at: Ms,
    terminating: bool,
    /// Prometheus' samples: (when, queue age in s, busy thread-seconds).
    samples: Vec<(Ms, f64, f64)>,
    /// CPU seconds used, and metrics-server's last two readings of it.
    cpu_seconds: f64,
    cpu_readings: [Option<(Ms, f64)>; 2],
    /// The Prometheus scrape's phase within the interval.
    phase: Ms,
}

impl Pod {
    fn new(cfg: PolicyConfig, ready_at: Ms, phase: Ms) -> Pod {
        Pod {
            pool: Sim::new(cfg),
            ready_at,
            terminating: false,
            samples: Vec::new(),
            cpu_seconds: 0.0,
            cpu_readings: [None, None],
            phase,
        }
    }
    fn serving(&self, now: Ms) -> bool {
        !self.terminating && now >= self.ready_at
    }
}

/// Pods at each second (the timeline), and every task's wait.
#[derive(Default)]
pub struct Outcome {
    /// Per second: the pods, ready or not.
    pub replicas: Vec<u32>,
    /// Per 10-second window: the waits of the tasks that started in it (ms).
    pub waits: Vec<Vec<f32>>,
    pub replica_seconds: f64,
    pub peak_replicas: u32,
    pub tasks: usize,
    /// Requests answered 503 because their pod's queue was full.
    pub shed: usize,
}

fn pool_config(p: &Params) -> PolicyConfig {
    // The pool's defaults when docs/scaling-out.md's traces were made
    // (`idleTimeoutMs` was 250 ms then, 100 ms now), with maxThreads = the
    // CPU limit.
    PolicyConfig {
        min_threads: 1,
        max_threads: p.pod_threads,
        spawn_delay: Duration::from_millis(1),
        idle_timeout: Duration::from_millis(250),
        check_interval: Duration::from_millis(1),
        rule: SpawnRule::Demand,
    }
}

pub fn simulate(p: &Params, scenario: &Scenario, rule: Rule) -> Outcome {
    let cfg = pool_config(p);
    let mut rng = Rng(p.seed);
    let mut lb = Rng(p.seed ^ 0x5eed);
    let scrape = p.scrape_s * 1000;
    let sync = p.sync_s * 1000;
    let cost = Duration::from_millis(p.cost_ms);
    let dt = Duration::from_millis(1);
    let mut pods: Vec<Pod> =
        (0..p.min_replicas).map(|_| Pod::new(cfg.clone(), 0, lb.next() % scrape)).collect();
    let mut hpa = Controller::new(
        Behavior::manifests().with_up_period(Duration::from_secs(p.up_period_s)),
        p.min_replicas,
        p.max_replicas,
    );
    let sync_phase = lb.next() % sync;
    let resolution = p.resolution_s * 1000;
    let metrics_server_phase = lb.next() % resolution;
    let mut out = Outcome {
        waits: vec![Vec::new(); (scenario.end_s / 10 + 1) as usize],
        ..Default::default()
    };
    let end = scenario.end_s * 1000;
    let per_ms = |t: Ms| (scenario.load)(t as f64 / 1000.0) / p.cost_ms as f64;
    for now in 0..end {
        let at = Duration::from_millis(now);
        // Arrivals, each to a random serving pod.
        let arrivals = rng.poisson(per_ms(now));
        let serving: Vec<usize> = (0..pods.len()).filter(|&i| pods[i].serving(now)).collect();
        assert!(!serving.is_empty() || arrivals == 0, "no pod to serve at {now} ms");
        let mut loop_cpu = vec![0u32; pods.len()];
        for _ in 0..arrivals {
            let i = serving[lb.below(serving.len())];
            loop_cpu[i] += 1;
            if pods[i].pool.queue.len() >= p.max_queue {
                out.shed += 1;
                continue;
            }
            pods[i].pool.arrive(at);
        }
        out.tasks += arrivals as usize;
        // Every pool steps; terminating pods leave once drained.
        for (i, pod) in pods.iter_mut().enumerate() {
            pod.pool.step(at, dt, cost);
            let busy =
                pod.pool.busy() as f64 * 0.001 + f64::from(loop_cpu[i]) * p.loop_cost_ms / 1000.0;
            pod.cpu_seconds += busy.min(p.pod_threads as f64 * 0.001);
            for wait in pod.pool.waits.drain(..) {
                out.waits[(now / 10_000) as usize].push(wait.as_secs_f32() * 1000.0);
            }
        }
        pods.retain(|pod| !(pod.terminating && pod.pool.queue.is_empty() && pod.pool.busy() == 0));
        // Prometheus scrapes each ready pod on its own phase; metrics-server
        // samples every pod's CPU at once.
        for pod in pods.iter_mut().filter(|pod| now >= pod.ready_at) {
            if now % scrape == pod.phase {
                pod.samples.push((
                    now,
                    pod.pool.oldest_age(at).as_secs_f64(),
                    pod.pool.busy_seconds,
                ));
                pod.samples.retain(|s| now - s.0 <= p.rate_window_s * 1000);
            }
            if now % resolution == metrics_server_phase {
                pod.cpu_readings = [pod.cpu_readings[1], Some((now, pod.cpu_seconds))];
            }
        }
        if now % sync == sync_phase {
            let current = pods.iter().filter(|pod| !pod.terminating).count() as u32;
            let asked = ask(p, rule, &pods, now, current);
            let next = hpa.reconcile(at, current, asked);
            if next > current {
                for _ in current..next {
                    pods.push(Pod::new(
                        cfg.clone(),
                        now + p.pod_start_s * 1000,
                        lb.next() % scrape,
                    ));
                }
            } else if next < current {
                // The ReplicaSet removes pods not yet ready first, then
                // those ready for the shortest time.
                let mut live: Vec<usize> =
                    (0..pods.len()).filter(|&i| !pods[i].terminating).collect();
                live.sort_by_key(|&i| std::cmp::Reverse(pods[i].ready_at));
                for &i in live.iter().take((current - next) as usize) {
                    pods[i].terminating = true;
                }
            }
        }
        let n = pods.len() as u32;
        out.peak_replicas = out.peak_replicas.max(n);
        out.replica_seconds += f64::from(n) / 1000.0;
        if now % 1000 == 999 {
            out.replicas.push(n);
        }
        if now % 15_000 == 14_999
            && p.trace.as_ref().is_some_and(|(sc, r)| sc == scenario.name && r == rule.name())
        {
            let ready = pods.iter().filter(|pod| pod.serving(now)).count();
            let threads: usize = pods.iter().map(|pod| pod.pool.threads.len()).sum();
            let age =
                pods.iter().map(|pod| pod.pool.oldest_age(at).as_secs_f64()).fold(0.0, f64::max);
            let queued: usize = pods.iter().map(|pod| pod.pool.queue.len()).sum();
            eprintln!("{:>5} s  load {:>5.1}  pods {n:>2} (ready {ready:>2})  threads {threads:>2}  queued {queued:>5}  oldest {age:>6.2} s  shed {}", now / 1000 + 1, (scenario.load)(now as f64 / 1000.0), out.shed);
        }
    }
    out
}

/// The replica count the rule's metrics ask for, as the HPA reads them at `now`.
fn ask(p: &Params, rule: Rule, pods: &[Pod], now: Ms, current: u32) -> Option<u32> {
    let ready = pods.iter().filter(|pod| pod.serving(now)).count() as u32;
    // max(tidepool_queue_oldest_age_seconds): each pod's last sample.
    let age = || {
        pods.iter()
            .filter_map(|pod| pod.samples.last())
            .map(|s| s.1)
            .fold(None, |m: Option<f64>, a| Some(m.map_or(a, |m| m.max(a))))
    };
    // sum(rate(tidepool_task_run_seconds_sum[40s])) (`--rate-window`): pods with two samples in the window.
    let busy = || {
        let rates: Vec<f64> = pods
            .iter()
            .filter(|pod| pod.samples.len() >= 2)
            .map(|pod| {
                let (first, last) = (pod.samples[0], pod.samples[pod.samples.len() - 1]);
                (last.2 - first.2) / ((last.0 - first.0) as f64 / 1000.0)
            })
            .collect();
        (!rates.is_empty()).then(|| rates.iter().sum::<f64>())
    };
    let by_age = || age().map(|a| hpa::external_value(a, p.age_target_s, current, ready));
    match rule {
        Rule::QueueAge => by_age(),
        Rule::QueueAgeBusy => {
            let by_busy = busy().map(|b| hpa::external_average(b, p.busy_target, current));
            by_age().max(by_busy)
        }
        Rule::Cpu => {
            let window = p.resolution_s * 1000;
            let cpus: Vec<PodCpu> = pods
                .iter()
                .filter(|pod| !pod.terminating)
                .map(|pod| match pod.cpu_readings {
                    _ if !pod.serving(now) => PodCpu::Ignored,
                    // A window that began before the pod was ready is left out.
                    [Some((t0, c0)), Some((t1, c1))] if t0 >= pod.ready_at => PodCpu::Measured(
                        (c1 - c0) / ((t1 - t0) as f64 / 1000.0) / p.pod_threads as f64,
                    ),
                    [_, Some((t1, _))] if t1 >= pod.ready_at + window => PodCpu::Missing,
                    _ => PodCpu::Ignored,
                })
                .collect();
            hpa::cpu_utilization(&cpus, p.cpu_target, current)
        }
    }
}

fn main() {
    let (p, seeds, svg_path) = parse_args();
    println!(
        "pods of {} threads, {} ms tasks; Prometheus scrapes every {} s (rate over {} s), metrics-server every {} s, HPA sync every {} s, pods ready {} s after the HPA asks; seeds {}..={}\n",
        p.pod_threads, p.cost_ms, p.scrape_s, p.rate_window_s, p.resolution_s, p.sync_s, p.pod_start_s, p.seed, p.seed + seeds - 1
    );
    let scenarios = scenarios();
    // Every (scenario, rule, seed) on its own thread, two at a time (they share nothing).
    let jobs: Vec<(usize, Rule, u64)> = (0..scenarios.len())
        .flat_map(|s| Rule::ALL.map(|rule| (s, rule)))
        .flat_map(|(s, rule)| (0..seeds).map(move |k| (s, rule, p.seed + k)))
        .collect();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<(usize, Rule, u64, Outcome)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    while let Some(&(s, rule, seed)) =
                        jobs.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        let params = Params { seed, ..p.clone() };
                        done.push((s, rule, seed, simulate(&params, &scenarios[s], rule)));
                    }
                    done
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a simulation panicked")).collect()
    });
    // In a fixed order, whichever thread ran what: the SVG is the same on every run.
    let rank = |rule: Rule| Rule::ALL.iter().position(|&r| r == rule);
    results.sort_by_key(|r| (r.0, rank(r.1), r.2));
    println!("| load | rule | p50 wait (ms) | p99 wait (ms) | max wait (s) | late: 503 or > 1 s (%) | replica-seconds | peak replicas |");
    println!("|---|---|---|---|---|---|---|---|");
    for (s, scenario) in scenarios.iter().enumerate() {
        for rule in Rule::ALL {
            let f: Vec<Figures> =
                results.iter().filter(|r| r.0 == s && r.1 == rule).map(|r| figures(&r.3)).collect();
            let col =
                |get: fn(&Figures) -> f64, d| spread(&f.iter().map(get).collect::<Vec<_>>(), d);
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                scenario.name,
                rule.name(),
                col(|f| f.p50_ms, 1),
                col(|f| f.p99_ms, 0),
                col(|f| f.max_s, 1),
                col(|f| f.late_pct, 2),
                col(|f| f.replica_seconds, 0),
                col(|f| f.peak, 0)
            );
        }
    }
    if let Some(path) = svg_path {
        // The timeline of the first seed.
        let drawn: Vec<svg::Series> = results
            .iter()
            .filter(|r| r.2 == p.seed)
            .map(|(s, rule, _, out)| svg::Series {
                scenario: *s,
                rule: rule.name(),
                replicas: out.replicas.clone(),
                p99: out.waits.iter().map(|w| quantile(&sorted(w.iter().copied()), 0.99)).collect(),
            })
            .collect();
        let loads: Vec<(&str, Vec<f64>)> = scenarios
            .iter()
            .map(|sc| {
                (
                    sc.name,
                    (0..sc.end_s).map(|t| (sc.load)(t as f64) / p.pod_threads as f64).collect(),
                )
            })
            .collect();
        std::fs::write(&path, svg::draw(&p, &loads, &drawn)).expect("writing the SVG");
        println!("\nwrote {path} (seed {})", p.seed);
    }
}
