//! What the C ABI costs per task: the built-in `sha256` against the same
//! computation (the same sha2 crate) written with the kernel SDK and
//! registered through its descriptor, exactly as a loaded library's kernel
//! is, both run the way a worker runs a task (`AnyKernel::run` into a
//! `Sink`), alternating, on one thread. No pool, no JavaScript.
//!
//!   cargo run --release -p tidepool-core --example abi_cost -- [tasks] [bytes] [rounds]
//!
//! Prints one JSON line per round: ns per task for each, and their ratio.

use std::ffi::CStr;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use sha2::Digest;
use tidepool_core::kernels::{self, AnyKernel, Params, RunContext, Sink};
use tidepool_core::Input;
use tidepool_kernel_sdk::{export_kernels, Context, Error, Kernel, Output, Transform, Values};

struct Sha256;
struct Hashing(sha2::Sha256);

impl Kernel for Sha256 {
    const NAME: &'static CStr = c"probe/sha256";
    type Params = ();
    type State = Hashing;
    fn params(_: &Values<'_>) -> Result<(), Error> {
        Ok(())
    }
    fn start(_: &(), _: Option<u64>) -> Result<Hashing, Error> {
        Ok(Hashing(sha2::Sha256::new()))
    }
}

impl Transform for Hashing {
    fn update(&mut self, chunk: &[u8], _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        self.0.update(chunk);
        Ok(())
    }
    fn finish(&mut self, out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        out.write(&std::mem::take(&mut self.0).finalize())
    }
}

export_kernels!(Sha256);

fn time(kernel: &dyn AnyKernel, inputs: &[Input], ctx: &RunContext<'_>) -> (f64, u8) {
    let t = Instant::now();
    let mut check = 0u8;
    for input in inputs {
        let mut sink = Sink::new(usize::MAX);
        kernel.run(&Params::NONE, input, ctx, &mut sink).unwrap();
        check ^= sink.into_output().as_bytes()[0];
    }
    (t.elapsed().as_nanos() as f64 / inputs.len() as f64, check)
}

fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(default)
    };
    let (tasks, bytes, rounds) = (arg(1, 200_000), arg(2, 64), arg(3, 5));
    // SAFETY: this binary's own entry point; it stays loaded.
    unsafe { kernels::register(tidepool_kernels_v1()) }.unwrap();
    let builtin = kernels::get(kernels::find("sha256").unwrap()).unwrap();
    let loaded = kernels::get(kernels::find("probe/sha256").unwrap()).unwrap();
    let inputs: Vec<Input> = (0..tasks)
        .map(|i| Input::Owned((0..bytes).map(|j| (i * 31 + j) as u8).collect()))
        .collect();
    let flag = AtomicBool::new(false);
    let ctx = RunContext::new(&flag);
    for _ in 0..rounds {
        let (b, cb) = time(builtin, &inputs, &ctx);
        let (l, cl) = time(loaded, &inputs, &ctx);
        assert_eq!(cb, cl, "the same digests");
        println!("{{\"bytes\":{bytes},\"builtin_ns\":{b:.0},\"loaded_ns\":{l:.0},\"loaded_over_builtin\":{:.3}}}", l / b);
    }
}
