//! SHA-256, the same crate as tidepool's built-in `sha256`.

use sha2::Digest;
use tidepool_kernel_sdk::{Context, Error, Kernel, Output, Transform, Values};

pub struct Sha256;

impl Kernel for Sha256 {
    const NAME: &'static std::ffi::CStr = c"example/sha256";
    type Params = ();
    type State = Hashing;

    fn params(_: &Values<'_>) -> Result<(), Error> {
        Ok(())
    }

    fn start(_: &(), _: Option<u64>) -> Result<Hashing, Error> {
        Ok(Hashing(sha2::Sha256::new()))
    }
}

pub struct Hashing(sha2::Sha256);

impl Transform for Hashing {
    fn update(&mut self, chunk: &[u8], _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        self.0.update(chunk);
        Ok(())
    }

    fn finish(&mut self, out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        out.write(&std::mem::take(&mut self.0).finalize())
    }
}
