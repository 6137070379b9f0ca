//! The kernels this test binary exports through the SDK, as a library
//! would, and the calls the tests make of them.

use std::ffi::CStr;
use std::sync::atomic::AtomicBool;

use tidepool_core::kernels::{
    self, AnyKernel, KernelError, KernelId, ParamError, Params, RawParams, RawValue, RunContext,
    Sink,
};
use tidepool_core::Input;
use tidepool_kernel_sdk::{
    export_kernels, Context, Error, Kernel, Output, Param, Transform, Values,
};

/// Sums the input's bytes times `scale`: 8 little-endian bytes.
pub(crate) struct Sum;
pub(crate) struct Summing(u64, u64);
impl Kernel for Sum {
    const NAME: &'static CStr = c"test/sum";
    const PARAMS: &'static [Param] = &[Param::integer(c"scale", 1, 1000)];
    type Params = u64;
    type State = Summing;
    fn params(v: &Values<'_>) -> Result<u64, Error> {
        Ok(v.integer("scale").unwrap_or(1) as u64)
    }
    fn start(scale: &u64, _: Option<u64>) -> Result<Summing, Error> {
        Ok(Summing(*scale, 0))
    }
}
impl Transform for Summing {
    fn update(&mut self, chunk: &[u8], _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        self.1 += chunk.iter().map(|&b| u64::from(b)).sum::<u64>();
        Ok(())
    }
    fn finish(&mut self, out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        out.write(&(self.0 * self.1).to_le_bytes())
    }
}

/// Its input `repeat` times, written in place (unfilled/commit).
pub(crate) struct Repeat;
pub(crate) struct Repeating(u32);
impl Kernel for Repeat {
    const NAME: &'static CStr = c"test/repeat";
    const PARAMS: &'static [Param] =
        &[Param::integer(c"repeat", 1, 4).required(), Param::string(c"mode")];
    type Params = u32;
    type State = Repeating;
    fn params(v: &Values<'_>) -> Result<u32, Error> {
        match v.string("mode") {
            None | Some("plain") => Ok(v.integer("repeat").unwrap() as u32),
            Some(other) => {
                Err(Error::new("ERR_TEST_MODE", format!("mode must be 'plain', not '{other}'")))
            }
        }
    }
    fn start(n: &u32, _: Option<u64>) -> Result<Repeating, Error> {
        Ok(Repeating(*n))
    }
}
impl Transform for Repeating {
    fn update(&mut self, chunk: &[u8], out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        for _ in 0..self.0 {
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
    fn finish(&mut self, _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        Ok(())
    }
}

/// A kernel named `$name` without parameters whose state is [`Misbehaving`].
macro_rules! named {
    ($t:ident, $name:literal) => {
        struct $t;
        impl Kernel for $t {
            const NAME: &'static CStr = $name;
            type Params = ();
            type State = Misbehaving;
            fn params(_: &Values<'_>) -> Result<(), Error> {
                Ok(())
            }
            fn start(_: &(), _: Option<u64>) -> Result<Misbehaving, Error> {
                Ok(Misbehaving)
            }
        }
    };
}

// Misbehaves as its first input byte says.
named!(Misbehave, c"test/misbehave");
pub(crate) struct Misbehaving;
impl Transform for Misbehaving {
    fn update(
        &mut self,
        chunk: &[u8],
        out: &mut Output<'_>,
        cx: &Context<'_>,
    ) -> Result<(), Error> {
        match chunk.first() {
            Some(b'p') => panic!("on purpose: {}", chunk.len()),
            Some(b'f') => Err(Error::new("ERR_TEST_BAD", "the input starts with f")),
            Some(b'c') => Err(Error::new("not a code!", "bad code")),
            Some(b'l') => Err(Error::CANCELLED),
            Some(b'o') => {
                out.unfilled(10)?;
                out.commit(1_000_000)
            }
            Some(b's') => loop {
                cx.check()?;
                std::hint::spin_loop();
            },
            _ => Ok(()),
        }
    }
    fn finish(&mut self, out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        out.write(b"done")
    }
}

export_kernels!(Sum, Repeat, Misbehave);

/// Registers this binary's library (once; again returns the same ids).
pub(crate) fn ids() -> Vec<KernelId> {
    // SAFETY: the entry point of this test binary, which stays loaded.
    unsafe { kernels::register(tidepool_kernels_v1()) }.expect("the library registers")
}

pub(crate) fn kernel(name: &str) -> &'static dyn AnyKernel {
    ids();
    kernels::get(kernels::find(name).expect("registered")).unwrap()
}

pub(crate) fn run(
    name: &str,
    params: &Params,
    data: &[u8],
    limit: usize,
) -> Result<Vec<u8>, KernelError> {
    let flag = AtomicBool::new(false);
    let mut out = Sink::new(limit);
    kernel(name).run(params, &Input::Owned(data.to_vec()), &RunContext::new(&flag), &mut out)?;
    Ok(out.into_output().as_bytes().to_vec())
}

pub(crate) fn params(name: &str, raw: Vec<(&str, RawValue<'_>)>) -> Result<Params, ParamError> {
    kernel(name).params(&RawParams::new(raw))
}
