//! A deflate stream on zlib's own API (libz-rs-sys: zlib-rs behind zlib's
//! functions), for what zlib-rs's safe `Deflate` cannot do: change the
//! level and strategy mid-stream as `deflateParams` does (node:zlib's
//! `params()`; the safe `set_level` resets the strategy and fails when the
//! level's algorithm changes after the first call). The same zlib-rs code
//! compresses, so the output is the safe API's byte for byte.
//!
//! Every call sets the stream's buffer pointers from slices borrowed for
//! that call alone and clears them before it returns: no pointer outlives
//! the borrow it came from. [`pump_deflate`] drives one through the
//! codecs' shared loop (kernels/codec.rs), for a stream, a block and a
//! one-shot alike.

use std::ffi::c_int;

use libz_rs_sys as zlib;

use super::{format_error, Z_MEM_ERROR, Z_STREAM_ERROR};
use crate::kernels::codec::{pump, Progress, Stop};
use crate::kernels::{KernelError, RunContext, Sink};

/// What a deflate call did.
pub(super) struct Step {
    pub consumed: usize,
    pub produced: usize,
    /// `Z_STREAM_END`: the stream is finished.
    pub ended: bool,
}

/// A zlib failure: its return code (`Z_STREAM_ERROR`, `Z_MEM_ERROR`...) and
/// zlib's words for it, when it has them.
pub(super) struct Failure {
    pub code: c_int,
    pub message: Option<String>,
}

pub(super) struct Deflater {
    /// Boxed: zlib's state points back at its stream, which must not move.
    stream: Box<zlib::z_stream>,
}

// SAFETY: the stream and its state are owned by this value alone (no
// other handle to them exists), the buffer pointers are null between
// calls, and zlib keeps no thread-local state: moving it to another
// thread is moving plain owned memory.
unsafe impl Send for Deflater {}

impl Deflater {
    /// `deflateInit2` with zlib's parameters (`window_bits` in zlib's
    /// encoding of the format: 8..15 zlib, 24..31 gzip, -15..-8 raw).
    pub fn new(
        level: c_int,
        window_bits: c_int,
        mem_level: c_int,
        strategy: c_int,
    ) -> Result<Deflater, Failure> {
        let mut stream = Box::new(zlib::z_stream::default());
        // SAFETY: `stream` is a default (zeroed, allocator set) z_stream at
        // a stable address, as deflateInit2_ asks; the version and size are
        // the library's own.
        let code = unsafe {
            zlib::deflateInit2_(
                &mut *stream,
                level,
                zlib::Z_DEFLATED,
                window_bits,
                mem_level,
                strategy,
                zlib::zlibVersion(),
                size_of::<zlib::z_stream>() as c_int,
            )
        };
        if code != zlib::Z_OK {
            // Nothing was allocated that deflateEnd would free.
            return Err(Failure { code, message: None });
        }
        Ok(Deflater { stream })
    }

    /// `deflate` over `input` into `output` with `flush`.
    pub fn deflate(
        &mut self,
        input: &[u8],
        output: &mut [u8],
        flush: c_int,
    ) -> Result<Step, Failure> {
        let avail_in = input.len().min(u32::MAX as usize);
        let avail_out = output.len().min(u32::MAX as usize);
        let s = &mut *self.stream;
        s.next_in = input.as_ptr();
        s.avail_in = avail_in as u32;
        s.next_out = output.as_mut_ptr();
        s.avail_out = avail_out as u32;
        // SAFETY: the stream was initialized by deflateInit2_ (new); next_in
        // and next_out point into `input` and `output`, valid (and the
        // output exclusively ours) for avail_in and avail_out bytes for the
        // whole call.
        let code = unsafe { zlib::deflate(s, flush) };
        let step = Step {
            consumed: avail_in - s.avail_in as usize,
            produced: avail_out - s.avail_out as usize,
            ended: code == zlib::Z_STREAM_END,
        };
        self.clear();
        match code {
            // Z_BUF_ERROR: no progress was possible, which is no error here.
            zlib::Z_OK | zlib::Z_STREAM_END | zlib::Z_BUF_ERROR => Ok(step),
            code => Err(self.failure(code)),
        }
    }

    /// `deflateParams`: the level and strategy from here on. Whatever the
    /// stream held back goes out as a block into `output` first (nothing,
    /// after a sync flush); returns how many bytes it wrote.
    pub fn params(
        &mut self,
        level: c_int,
        strategy: c_int,
        output: &mut [u8],
    ) -> Result<usize, Failure> {
        let avail_out = output.len().min(u32::MAX as usize);
        let s = &mut *self.stream;
        s.next_out = output.as_mut_ptr();
        s.avail_out = avail_out as u32;
        // SAFETY: as in deflate(): an initialized stream, and next_out
        // valid for avail_out bytes for the call (no input is given).
        let code = unsafe { zlib::deflateParams(s, level, strategy) };
        let produced = avail_out - s.avail_out as usize;
        self.clear();
        match code {
            zlib::Z_OK => Ok(produced),
            code => Err(self.failure(code)),
        }
    }

    /// `deflateSetDictionary`.
    pub fn set_dictionary(&mut self, dictionary: &[u8]) -> Result<(), Failure> {
        let Ok(len) = u32::try_from(dictionary.len()) else {
            return Err(Failure { code: zlib::Z_STREAM_ERROR, message: None });
        };
        // SAFETY: an initialized stream; `dictionary` is valid for `len`
        // bytes for the call, and zlib copies what it keeps.
        let code =
            unsafe { zlib::deflateSetDictionary(&mut *self.stream, dictionary.as_ptr(), len) };
        if code == zlib::Z_OK {
            Ok(())
        } else {
            Err(self.failure(code))
        }
    }

    /// `deflateReset`: a new stream, with the parameters it has now (those
    /// of the last [`params`](Self::params)).
    pub fn reset(&mut self) -> Result<(), Failure> {
        // SAFETY: an initialized stream.
        let code = unsafe { zlib::deflateReset(&mut *self.stream) };
        if code == zlib::Z_OK {
            Ok(())
        } else {
            Err(self.failure(code))
        }
    }

    fn clear(&mut self) {
        let s = &mut *self.stream;
        s.next_in = std::ptr::null();
        s.avail_in = 0;
        s.next_out = std::ptr::null_mut();
        s.avail_out = 0;
    }

    fn failure(&self, code: c_int) -> Failure {
        let msg = self.stream.msg;
        let message = if msg.is_null() {
            None
        } else {
            // SAFETY: zlib's msg is null or one of its static NUL-terminated strings.
            Some(unsafe { std::ffi::CStr::from_ptr(msg) }.to_string_lossy().into_owned())
        };
        Failure { code, message }
    }
}

impl Drop for Deflater {
    fn drop(&mut self) {
        // SAFETY: an initialized stream, ended once (here).
        unsafe { zlib::deflateEnd(&mut *self.stream) };
    }
}

/// Small enough for Miri (`npm run test:miri`): every unsafe call, with
/// buffers that end where the borrow ends.
/// [`pump`] with `deflate` over `input` and `flush` (a flush or finish
/// runs until deflate has written all it holds).
pub(super) fn pump_deflate(
    deflate: &mut Deflater,
    input: &[u8],
    flush: i32,
    out: &mut Sink,
    ctx: &RunContext<'_>,
) -> Result<Stop, KernelError> {
    pump(out, ctx, input, flush != zlib::Z_NO_FLUSH, |input, room| {
        let step = deflate.deflate(input, room, flush).map_err(deflate_error)?;
        Ok(Progress { consumed: step.consumed, produced: step.produced, ended: step.ended })
    })
}

pub(super) fn deflate_error(e: Failure) -> KernelError {
    match e.code {
        libz_rs_sys::Z_MEM_ERROR => format_error(Z_MEM_ERROR, "out of memory"),
        _ => format_error(Z_STREAM_ERROR, e.message.as_deref().unwrap_or("stream error")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deflates `input` with `flush` into exactly-sized pieces of output.
    fn run(d: &mut Deflater, input: &[u8], flush: c_int) -> Vec<u8> {
        let mut out = Vec::new();
        let mut at = 0;
        loop {
            let mut room = [0u8; 7];
            let step = d.deflate(&input[at..], &mut room, flush).ok().unwrap();
            at += step.consumed;
            out.extend_from_slice(&room[..step.produced]);
            if step.ended || (at == input.len() && step.produced < room.len()) {
                return out;
            }
        }
    }

    #[test]
    fn deflates_changes_params_resets_and_ends_without_leaks() {
        let data = b"abcabcabcabc tidepool tidepool";
        // Raw deflate, 9-bit window: the smallest state zlib-rs makes.
        let mut d = Deflater::new(1, -9, 1, 0).ok().unwrap();
        d.set_dictionary(b"tidepool").ok().unwrap();
        let mut packed = run(&mut d, data, zlib::Z_SYNC_FLUSH);
        let mut room = [0u8; 16];
        let wrote = d.params(0, 0, &mut room).ok().unwrap();
        packed.extend_from_slice(&room[..wrote]);
        packed.extend(run(&mut d, data, zlib::Z_FINISH));
        assert!(!packed.is_empty());
        d.reset().ok().unwrap();
        assert!(!run(&mut d, b"again", zlib::Z_FINISH).is_empty());
        // A refused parameter is an error value, and nothing is allocated.
        assert!(Deflater::new(1, 99, 1, 0).is_err());
    }
}
