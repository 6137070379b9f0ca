//! What a pool thread costs, to size the autoscaler's defaults:
//! time from `spawn` until the new thread runs, and resident memory per idle
//! (parked) thread.
//!
//!   cargo run --release -p tidepool-core --example thread_cost
//!
//! Prints one JSON line.

use std::sync::{Arc, Barrier, Condvar, Mutex};
use std::time::Instant;

fn rss_kib() -> u64 {
    // Second field of /proc/self/statm: resident pages.
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()))
        .map(|pages| pages * 4)
        .unwrap_or(0)
}

fn main() {
    // Spawn latency: spawn -> first instruction on the new thread.
    let mut samples = Vec::new();
    for _ in 0..200 {
        let start = Instant::now();
        let h = std::thread::spawn(move || start.elapsed());
        samples.push(h.join().unwrap());
    }
    samples.sort();
    let median_us = samples[samples.len() / 2].as_secs_f64() * 1e6;
    let p99_us = samples[samples.len() * 99 / 100].as_secs_f64() * 1e6;

    // Memory: 64 threads that have run a little and then park, like idle workers.
    let n = 64;
    let before = rss_kib();
    let park = Arc::new((Mutex::new(false), Condvar::new()));
    let ready = Arc::new(Barrier::new(n + 1));
    let handles: Vec<_> = (0..n)
        .map(|_| {
            let park = park.clone();
            let ready = ready.clone();
            std::thread::spawn(move || {
                // Touch a little stack, as a kernel call would.
                let buf = std::hint::black_box([1u8; 16 * 1024]);
                std::hint::black_box(buf.iter().map(|&b| b as u64).sum::<u64>());
                ready.wait();
                let (lock, cv) = &*park;
                let mut done = lock.lock().unwrap();
                while !*done {
                    done = cv.wait(done).unwrap();
                }
            })
        })
        .collect();
    ready.wait();
    let after = rss_kib();
    *park.0.lock().unwrap() = true;
    park.1.notify_all();
    for h in handles {
        h.join().unwrap();
    }
    println!(
        "{{\"spawn_to_run_us_median\":{median_us:.1},\"spawn_to_run_us_p99\":{p99_us:.1},\"rss_kib_per_idle_thread\":{:.1}}}",
        (after.saturating_sub(before)) as f64 / n as f64
    );
}
