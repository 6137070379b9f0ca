//! Compares the spawn rules on a modelled machine with more cores than the
//! development box has (the policy is a pure function, so a fake clock and a
//! model of the threads are enough): the article's queue-age rule, the
//! backlog rule and the demand rule.
//!
//!   cargo run --release -p tidepool-core --example policy_sim
//!   cargo run --release -p tidepool-core --example policy_sim -- --replay <posts.txt> <max threads> <run µs> [idle timeout ms]
//!
//! `--replay` plays a real run's arrivals (one posting time in ms per line,
//! as `bench/autoscale-many.js --dump <dir>` writes them) with that run's
//! median run time, through every rule, so the model can be checked against
//! the real pool on the same arrivals (at the pool's default `idleTimeoutMs`,
//! 100 ms, unless given).
//!
//! Scenarios (1 ms tasks, 8 threads at most, spawnDelay 1 ms):
//! * ramp: load rises slowly from 0 to 7.5 threads' worth over 6 s, so each
//!   new thread is needed under a slight overload;
//! * step: load jumps from 0.5 to 6.5 threads' worth.

use std::time::Duration;

use tidepool_core::policy::sim::Sim;
use tidepool_core::policy::{PolicyConfig, SpawnRule};

fn arrivals(load: impl Fn(f64) -> f64, end_ms: f64) -> Vec<Duration> {
    // Deterministic: integrate the rate (tasks/ms = load for 1 ms tasks).
    let mut out = Vec::new();
    let mut acc = 0.0;
    let mut t = 0.0;
    while t < end_ms {
        acc += load(t) * 0.05;
        while acc >= 1.0 {
            out.push(Duration::from_secs_f64(t / 1000.0));
            acc -= 1.0;
        }
        t += 0.05;
    }
    out
}

fn quantile(waits: &[Duration], q: f64) -> f64 {
    let mut w: Vec<f64> = waits.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    w.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if w.is_empty() {
        return 0.0;
    }
    w[((q * w.len() as f64).ceil() as usize).clamp(1, w.len()) - 1]
}

/// A load profile: its name, threads' worth of load at each ms, and its end (ms).
type Scenario = (&'static str, Box<dyn Fn(f64) -> f64>, f64);

fn rules() -> [SpawnRule; 3] {
    [SpawnRule::QueueAge, SpawnRule::Backlog, SpawnRule::Demand]
}

fn report(scenario: &str, rule: SpawnRule, sim: &Sim) {
    println!(
        "| {scenario} | {rule:?} | {:.2} | {:.2} | {:.1} | {:.2} | {} |",
        quantile(&sim.waits, 0.5),
        quantile(&sim.waits, 0.99),
        sim.max_wait.as_secs_f64() * 1000.0,
        sim.thread_seconds,
        sim.spawns.len()
    );
}

fn config(max_threads: usize, idle_timeout: Duration, rule: SpawnRule) -> PolicyConfig {
    PolicyConfig {
        min_threads: 1,
        max_threads,
        spawn_delay: Duration::from_millis(1),
        idle_timeout,
        check_interval: Duration::from_millis(1),
        rule,
    }
}

/// `--replay file max run_us [idle_ms]`: a real run's arrivals through every rule.
fn replay(args: &[String]) {
    let (file, max, run_us, idle_ms) = match args {
        [file, max, run_us] => (file, max, run_us, "100"),
        [file, max, run_us, idle_ms] => (file, max, run_us, idle_ms.as_str()),
        _ => panic!("usage: --replay <posts.txt> <max threads> <run µs> [idle timeout ms]"),
    };
    let idle = Duration::from_millis(idle_ms.parse().expect("idle timeout ms"));
    let text = std::fs::read_to_string(file).expect("readable posts file");
    let times: Vec<Duration> = text
        .lines()
        .filter_map(|l| l.trim().parse::<f64>().ok())
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .collect();
    let max: usize = max.parse().expect("max threads");
    let cost = Duration::from_micros(run_us.parse().expect("run µs"));
    let end = times.last().copied().unwrap_or_default() + Duration::from_millis(1500);
    println!("| arrivals | rule | p50 wait (ms) | p99 wait (ms) | max wait (ms) | thread-seconds | spawns |");
    println!("|---|---|---|---|---|---|---|");
    for rule in rules() {
        let mut sim = Sim::new(config(max, idle, rule));
        sim.run(&times, cost, end);
        report(file, rule, &sim);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "--replay") {
        return replay(&args[1..]);
    }
    let scenarios: Vec<Scenario> = vec![
        ("ramp 0 -> 7.5 over 6 s", Box::new(|t: f64| 7.5 * (t / 6000.0).min(1.0)), 6500.0),
        ("step 0.5 -> 6.5 at 0.5 s", Box::new(|t: f64| if t < 500.0 { 0.5 } else { 6.5 }), 3000.0),
    ];
    println!("| scenario | rule | p50 wait (ms) | p99 wait (ms) | max wait (ms) | thread-seconds | spawns |");
    println!("|---|---|---|---|---|---|---|");
    for (name, load, end) in &scenarios {
        let times = arrivals(load, *end);
        for rule in rules() {
            let mut sim = Sim::new(config(8, Duration::from_millis(1000), rule));
            sim.run(&times, Duration::from_millis(1), Duration::from_secs_f64(end / 1000.0));
            report(name, rule, &sim);
        }
    }
}
