//! The adapter over an SDK library in this test binary, small enough for
//! Miri (`npm run test:miri`): the unsafe paths (descriptor reads, the host
//! functions' `ctx`, rooms lent into the sink, parameters and states freed
//! by their maker) on real calls.

use std::sync::atomic::AtomicBool;

use tidepool_kernel_sdk::{Context, Error, Kernel, Output, Param, Transform, Values};

use super::{check_library, Foreign};
use crate::input::Input;
use crate::kernels::{AnyKernel, KernelError, Params, RawParams, RawValue, RunContext, Sink};

/// Writes each input chunk back twice, through `unfilled`/`commit`,
/// then `tail` bytes of `b'!'` through `write`.
struct Twice;
struct Doubling(Vec<u8>);
impl Kernel for Twice {
    const NAME: &'static std::ffi::CStr = c"unit/twice";
    const PARAMS: &'static [Param] = &[Param::integer(c"tail", 0, 100), Param::bytes(c"prefix")];
    type Params = (usize, Vec<u8>);
    type State = Doubling;
    fn params(v: &Values<'_>) -> Result<(usize, Vec<u8>), Error> {
        Ok((
            v.integer("tail").unwrap_or(1) as usize,
            v.bytes("prefix").unwrap_or_default().to_vec(),
        ))
    }
    fn start(p: &(usize, Vec<u8>), _: Option<u64>) -> Result<Doubling, Error> {
        let mut tail = p.1.clone();
        tail.extend(std::iter::repeat_n(b'!', p.0));
        Ok(Doubling(tail))
    }
}
impl Transform for Doubling {
    fn update(&mut self, chunk: &[u8], out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        for _ in 0..2 {
            let mut left = chunk;
            while !left.is_empty() {
                let room = out.unfilled(left.len())?;
                let n = room.len().min(left.len());
                room[..n].copy_from_slice(&left[..n]);
                out.commit(n)?;
                left = &left[n..];
            }
        }
        Ok(())
    }
    fn finish(&mut self, out: &mut Output<'_>, cx: &Context<'_>) -> Result<(), Error> {
        cx.check()?;
        if self.0.first() == Some(&b'x') {
            out.unfilled(4)?;
            return out.commit(5);
        }
        out.write(&self.0)
    }
}

tidepool_kernel_sdk::export_kernels!(Twice);

/// The kernel, boxed before its defaults are made (parameters remember
/// their kernel's address), as the registry does.
fn twice() -> Box<Foreign> {
    // SAFETY: this binary's own descriptor, static.
    let mut kernels = unsafe { check_library(tidepool_kernels_v1()) }.unwrap();
    let mut kernel = Box::new(kernels.pop().unwrap());
    kernel.seal();
    kernel
}

fn run(
    kernel: &Foreign,
    params: &Params,
    data: &[u8],
    limit: usize,
) -> Result<Vec<u8>, KernelError> {
    let flag = AtomicBool::new(false);
    let mut sink = Sink::new(limit);
    kernel.run(params, &Input::Owned(data.to_vec()), &RunContext::new(&flag), &mut sink)?;
    Ok(sink.into_output().as_bytes().to_vec())
}

#[test]
fn a_loaded_kernel_writes_in_place_and_frees_what_it_made() {
    let kernel = twice();
    assert_eq!(kernel.name(), "unit/twice");
    assert_eq!(run(&kernel, &Params::NONE, b"ab", 64).unwrap(), b"abab!");
    let raw =
        RawParams::new(vec![("tail", RawValue::Number(3.0)), ("prefix", RawValue::Bytes(b"<"))]);
    let params = kernel.params(&raw).unwrap();
    let long: Vec<u8> = (0..100u8).collect();
    let out = run(&kernel, &params, &long, 1024).unwrap();
    assert_eq!(out, [&long[..], &long[..], b"<!!!"].concat(), "spilled past the inline bytes");
    assert_eq!(run(&kernel, &params, &long, 150), Err(KernelError::TooLarge { limit: 150 }));
    let bad = kernel.params(&RawParams::new(vec![("prefix", RawValue::Bytes(b"x"))])).unwrap();
    let err = run(&kernel, &bad, b"", 64).unwrap_err();
    assert!(
        matches!(err, KernelError::Failed { ref code, .. } if code == "ERR_TIDEPOOL_KERNEL_CONTRACT"),
        "{err:?}"
    );
    let mut state = kernel.start(&params, None).unwrap();
    // Kept for good, as the registry keeps its kernels (their names and
    // schema texts are leaked to be `'static`).
    static KEPT: std::sync::Mutex<Vec<Foreign>> = std::sync::Mutex::new(Vec::new());
    drop(params); // the state keeps its parameters
    let flag = AtomicBool::new(false);
    let mut sink = Sink::new(64);
    state.update(b"z", &mut sink, &RunContext::new(&flag)).unwrap();
    state.finish(&mut sink, &RunContext::new(&flag)).unwrap();
    assert_eq!(sink.into_output().as_bytes(), b"zz<!!!");
    drop(state);
    KEPT.lock().unwrap().push(*kernel);
}
