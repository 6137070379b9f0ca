//! The physical limit the pool is measured against: the same SHA-256 kernel
//! called directly from Rust, with no pool, no queue and no JavaScript, on
//! `threads` threads that split the messages between them.
//!
//!   cargo run --release -p tidepool-core --example direct -- [threads] [messages] [size] [rounds]
//!
//! Prints one JSON line per round: `{"threads":2,"mb_per_s":...}`.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use tidepool_core::kernels::{self, RunContext};
use tidepool_core::Input;

fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(default)
    };
    let threads = arg(1, 2);
    let count = arg(2, 4096);
    let size = arg(3, 64 * 1024);
    let rounds = arg(4, 5);
    let kernel = kernels::get(kernels::find("sha256").unwrap()).unwrap();
    // Pseudo-random bytes (xorshift): the content does not change SHA-256's speed.
    let mut x = 0x9E3779B97F4A7C15u64;
    let messages: Vec<Vec<u8>> = (0..count)
        .map(|_| {
            (0..size)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        })
        .collect();
    let flag = AtomicBool::new(false);
    for _ in 0..rounds {
        let start = Instant::now();
        std::thread::scope(|s| {
            for t in 0..threads {
                let messages = &messages;
                let flag = &flag;
                s.spawn(move || {
                    let ctx = RunContext::new(flag);
                    for m in messages.iter().skip(t).step_by(threads) {
                        // Owned input would copy; borrow the bytes in place like the pool does.
                        // SAFETY: `m` outlives the call and is not mutated during it.
                        let input = Input::One(unsafe {
                            tidepool_core::RawSlice::new(m.as_ptr(), m.len())
                        });
                        std::hint::black_box(kernel.compute(&input, &ctx).unwrap());
                    }
                });
            }
        });
        let secs = start.elapsed().as_secs_f64();
        let mb = (count * size) as f64 / 1e6;
        println!("{{\"threads\":{threads},\"messages\":{count},\"size\":{size},\"ms\":{:.3},\"mb_per_s\":{:.1}}}", secs * 1e3, mb / secs);
    }
}
