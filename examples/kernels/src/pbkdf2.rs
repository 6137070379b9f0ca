//! PBKDF2-HMAC-SHA256 (RFC 8018), equal to `crypto.pbkdf2(password, salt,
//! iterations, keyLength, 'sha256')`: the input is the password, the
//! parameters the salt, the iteration count and the key length. Deliberately
//! slow, so it checks for cancellation every 1024 iterations: a task can be
//! aborted, or time out, within a fraction of a millisecond. (A PBKDF2 crate
//! would run the whole derivation in one call, which no one could stop.)

use hmac::{Hmac, KeyInit, Mac};
use tidepool_kernel_sdk::{Context, Error, Kernel, Output, Param, Transform, Values};

type HmacSha256 = Hmac<sha2::Sha256>;

/// Iterations between two looks at the cancellation flag (~0.5 ms).
const CHECK_EVERY: u32 = 1024;

pub struct Pbkdf2;

pub struct Settings {
    salt: Vec<u8>,
    iterations: u32,
    key_length: usize,
}

impl Kernel for Pbkdf2 {
    const NAME: &'static std::ffi::CStr = c"example/pbkdf2";
    const PARAMS: &'static [Param] = &[
        Param::bytes(c"salt").required(),
        Param::integer(c"iterations", 1, u32::MAX as i64).required(),
        Param::integer(c"keyLength", 1, 1024),
    ];
    type Params = Settings;
    type State = Deriving;

    fn params(values: &Values<'_>) -> Result<Settings, Error> {
        Ok(Settings {
            salt: values.bytes("salt").unwrap_or_default().to_vec(),
            iterations: values.integer("iterations").unwrap_or(1) as u32,
            key_length: values.integer("keyLength").unwrap_or(32) as usize,
        })
    }

    fn start(settings: &Settings, len_hint: Option<u64>) -> Result<Deriving, Error> {
        let password = Vec::with_capacity(len_hint.unwrap_or(0).min(1024) as usize);
        Ok(Deriving {
            password,
            salt: settings.salt.clone(),
            iterations: settings.iterations,
            key_length: settings.key_length,
        })
    }
}

pub struct Deriving {
    password: Vec<u8>,
    salt: Vec<u8>,
    iterations: u32,
    key_length: usize,
}

impl Drop for Deriving {
    fn drop(&mut self) {
        // The password is a secret: wiped before its memory is freed.
        for b in self.password.iter_mut() {
            // SAFETY: a valid, aligned `&mut u8`; the volatile write keeps
            // the compiler from removing a store to memory about to be freed.
            unsafe { std::ptr::write_volatile(b, 0) };
        }
    }
}

impl Transform for Deriving {
    fn update(&mut self, chunk: &[u8], _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        self.password.extend_from_slice(chunk);
        Ok(())
    }

    fn finish(&mut self, out: &mut Output<'_>, cx: &Context<'_>) -> Result<(), Error> {
        let keyed =
            HmacSha256::new_from_slice(&self.password).expect("HMAC takes keys of any length");
        let mut left = self.key_length;
        for block in 1u32.. {
            if left == 0 {
                break;
            }
            let mut mac = keyed.clone();
            mac.update(&self.salt);
            mac.update(&block.to_be_bytes());
            let mut u = mac.finalize().into_bytes();
            let mut t = u;
            for i in 1..self.iterations {
                if i % CHECK_EVERY == 0 {
                    cx.check()?;
                }
                let mut mac = keyed.clone();
                mac.update(&u);
                u = mac.finalize().into_bytes();
                for (t, u) in t.iter_mut().zip(u.iter()) {
                    *t ^= u;
                }
            }
            let n = left.min(t.len());
            out.write(&t[..n])?;
            left -= n;
        }
        Ok(())
    }
}
