//! Kernels that misbehave on purpose, for tidepool's tests of isolation:
//! `example/panic` panics (its task rejects, the thread lives on);
//! `example/busy` works for as many milliseconds as its input's first four
//! bytes say (little-endian) without ever calling `check`: it cannot be
//! cancelled, and a `destroy()` waits for it; `example/tee` writes each
//! chunk out as it takes it, then a byte when it finishes: a transform
//! that `createHash()` must refuse however the input is cut.

use std::time::{Duration, Instant};
use tidepool_kernel_sdk::{Context, Error, Kernel, Output, Transform, Values};

pub struct Panic;

impl Kernel for Panic {
    const NAME: &'static std::ffi::CStr = c"example/panic";
    type Params = ();
    type State = Panicking;

    fn params(_: &Values<'_>) -> Result<(), Error> {
        Ok(())
    }

    fn start(_: &(), _: Option<u64>) -> Result<Panicking, Error> {
        Ok(Panicking)
    }
}

pub struct Panicking;

impl Transform for Panicking {
    fn update(&mut self, chunk: &[u8], _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        panic!("example/panic: {} bytes, on purpose", chunk.len());
    }

    fn finish(&mut self, _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        panic!("example/panic: no input, on purpose");
    }
}

pub struct Busy;

impl Kernel for Busy {
    const NAME: &'static std::ffi::CStr = c"example/busy";
    type Params = ();
    type State = Working;

    fn params(_: &Values<'_>) -> Result<(), Error> {
        Ok(())
    }

    fn start(_: &(), _: Option<u64>) -> Result<Working, Error> {
        Ok(Working(Vec::new()))
    }
}

pub struct Working(Vec<u8>);

impl Transform for Working {
    fn update(&mut self, chunk: &[u8], _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        self.0.extend_from_slice(&chunk[..chunk.len().min(4 - self.0.len().min(4))]);
        Ok(())
    }

    fn finish(&mut self, out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        let Ok(ms) = <[u8; 4]>::try_from(&self.0[..]) else {
            return Err(Error::new(
                "ERR_EXAMPLE_BUSY_INPUT",
                "example/busy reads a little-endian uint32 of milliseconds",
            ));
        };
        let until = Instant::now() + Duration::from_millis(u64::from(u32::from_le_bytes(ms)));
        let mut spins = 0u64;
        while Instant::now() < until {
            spins += 1;
            std::hint::spin_loop();
        }
        out.write(&spins.to_le_bytes())
    }
}

pub struct Tee;

impl Kernel for Tee {
    const NAME: &'static std::ffi::CStr = c"example/tee";
    type Params = ();
    type State = Teeing;

    fn params(_: &Values<'_>) -> Result<(), Error> {
        Ok(())
    }

    fn start(_: &(), _: Option<u64>) -> Result<Teeing, Error> {
        Ok(Teeing)
    }
}

pub struct Teeing;

impl Transform for Teeing {
    fn update(&mut self, chunk: &[u8], out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        out.write(chunk)
    }

    fn finish(&mut self, out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        out.write(b"!")
    }
}
