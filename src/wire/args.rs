//! The raw functions' arguments: one table (a struct and its `read`) per
//! function, in argument order.

use std::sync::Arc;
use std::time::Duration;

use napi::sys;
use tidepool_core::kernels::{self, AnyKernel, KernelId};
use tidepool_core::{CancelFlag, ChunkEnd};

use crate::napi_util::{bool_of, f64_of, i32_of, is_undefined, u32_of};
use crate::refusal::*;

// --- Shared readers of optional arguments ---

/// The argument at `index`, when the call passed that many.
fn arg(args: &[sys::napi_value], index: usize) -> Option<sys::napi_value> {
    args.get(index).copied()
}

/// A run-time limit in milliseconds: none unless positive and finite.
fn timeout_of(ms: f64) -> Option<Duration> {
    (ms > 0.0 && ms.is_finite()).then(|| Duration::from_secs_f64(ms / 1000.0))
}

/// An output limit in bytes (an integer lib/engine/ checked): none when
/// `undefined`, not a Number, or below 1.
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
unsafe fn max_output_of(env: sys::napi_env, value: sys::napi_value) -> Option<usize> {
    if is_undefined(env, value) {
        return None;
    }
    // SAFETY: forwarded contract.
    unsafe { f64_of(env, value) }.filter(|&bytes| bytes >= 1.0).map(|bytes| bytes as usize)
}

/// A cancel flag (cancel_flag.rs), or `None` when not passed or `undefined`.
///
/// # Safety
/// `env` and `value` must be the live env and a value of the current call.
unsafe fn flag_arg(
    env: sys::napi_env,
    value: Option<sys::napi_value>,
) -> Result<Option<Arc<CancelFlag>>, Refusal> {
    match value {
        Some(value) if !is_undefined(env, value) => {
            // SAFETY: forwarded contract.
            unsafe { crate::cancel_flag::flag_of(env, value) }.map(Some)
        }
        _ => Ok(None),
    }
}

/// A makeParams handle, or `None` for `undefined` (the kernel's defaults).
fn params_of(env: sys::napi_env, value: sys::napi_value) -> Option<sys::napi_value> {
    (!is_undefined(env, value)).then_some(value)
}

// --- submit ---

/// `submit(slot, kernel, data, timeoutMs?, flag?, params?,
/// maxOutputBytes?, file?)`: queues one task. Returns the queue length
/// after it, or 0 when the queue was full (nothing queued).
///
/// lib/engine/ passes three arguments for a plain post, five with a signal
/// or a timeout, eight with parameters, an output limit or a file; an
/// argument not passed reads as its default, and arguments past the eighth
/// are ignored.
pub(crate) struct SubmitArgs {
    /// 0 `slot`: a uint32 (see the module doc).
    pub(crate) slot: u32,
    /// 1 `kernel`: a registered kernel's id (uint32).
    pub(crate) kernel: KernelId,
    /// 2 `data`: a binary or an Array of binaries (binary.rs), or with
    /// `file` a path's bytes; lib/engine/ keeps it reachable until the task
    /// is delivered. Read by submit.rs, once the pool is known to be open.
    pub(crate) data: sys::napi_value,
    /// 3 `timeoutMs`: a run-time limit; not a positive finite Number: none.
    pub(crate) timeout: Option<Duration>,
    /// 4 `flag`: the cancel flag of the post's signal (cancel_flag.rs), which
    /// `cancelFlagged()` raises; `undefined`: none (not cancellable).
    pub(crate) flag: Option<Arc<CancelFlag>>,
    /// 5 `params`: a handle from makeParams (params.rs), or `undefined`: the
    /// kernel's defaults. Taken by submit.rs.
    pub(crate) params: Option<sys::napi_value>,
    /// 6 `maxOutputBytes`: replaces the pool's output limit; `undefined`,
    /// not a Number or below 1: the pool's.
    pub(crate) max_output: Option<usize>,
    /// 7 `file`: `true`: `data` is a path's bytes, and the pool's thread
    /// reads that file (postFile). Not a boolean: false.
    pub(crate) file: bool,
}

impl SubmitArgs {
    pub(crate) const SLOT: usize = 0;
    pub(crate) const KERNEL: usize = 1;
    pub(crate) const DATA: usize = 2;
    pub(crate) const TIMEOUT_MS: usize = 3;
    pub(crate) const FLAG: usize = 4;
    pub(crate) const PARAMS: usize = 5;
    pub(crate) const MAX_OUTPUT_BYTES: usize = 6;
    pub(crate) const FILE: usize = 7;
    /// Arguments read at most.
    pub(crate) const MAX: usize = 8;
    /// Fewer are refused ([`ERR_INVALID_ARG_TYPE`], [`Self::USAGE`]).
    pub(crate) const MIN: usize = 3;
    pub(crate) const USAGE: &'static str = "submit(slot, kernel, data) takes three arguments";

    /// Reads the table from `args`, the arguments passed (at most
    /// [`Self::MAX`]). Only the numbers and the flag can be refused here.
    ///
    /// # Safety
    /// `env` and `args` must be the live env and arguments of the current call.
    pub(crate) unsafe fn read(
        env: sys::napi_env,
        args: &[sys::napi_value],
    ) -> Result<SubmitArgs, Refusal> {
        if args.len() < Self::MIN {
            return Err(Refusal::new(ERR_INVALID_ARG_TYPE, Self::USAGE));
        }
        // SAFETY: (whole block) live env and arguments of this call; the
        // readers only look at the values.
        unsafe {
            let (Some(slot), Some(kernel)) =
                (u32_of(env, args[Self::SLOT]), u32_of(env, args[Self::KERNEL]))
            else {
                return Err(Self::bad_ids());
            };
            if kernels::get(kernel).is_none() {
                return Err(Self::bad_ids());
            }
            Ok(SubmitArgs {
                slot,
                kernel,
                data: args[Self::DATA],
                timeout: arg(args, Self::TIMEOUT_MS)
                    .and_then(|v| f64_of(env, v))
                    .and_then(timeout_of),
                flag: flag_arg(env, arg(args, Self::FLAG))?,
                params: arg(args, Self::PARAMS).and_then(|v| params_of(env, v)),
                max_output: arg(args, Self::MAX_OUTPUT_BYTES).and_then(|v| max_output_of(env, v)),
                file: arg(args, Self::FILE).and_then(|v| bool_of(env, v)).unwrap_or(false),
            })
        }
    }

    fn bad_ids() -> Refusal {
        Refusal::new(ERR_INVALID_ARG_TYPE, "submit: slot and kernel must be valid uint32 ids")
    }
}

// --- submitMany ---

/// `submitMany(kernel, firstSlot, timeoutMs, flag, params, maxOutputBytes,
/// group, ...binaries)`: queues one task per binary, task `i` in slot
/// `firstSlot + i`, all with the batch's `flag`; or, with `group` above 1,
/// one packed task per `group` binaries (the last one takes what is left),
/// in the slot of its first binary. Returns how many tasks were queued:
/// all, or the first ones in order when the queue filled up.
///
/// The binaries come as arguments, not in an Array: V8 copies an argument
/// list for a few nanoseconds per element, where reading an Array costs a
/// property lookup and a handle per element, the largest share of the call.
pub(crate) struct SubmitManyArgs<'a> {
    /// 0 `kernel`: a registered kernel's id (uint32).
    pub(crate) kernel: KernelId,
    /// 1 `firstSlot`: the first task's slot (uint32); the last one's must
    /// fit a uint32 too.
    pub(crate) first_slot: u32,
    /// 2 `timeoutMs`: a Number (required); a run-time limit for each task
    /// when positive and finite.
    pub(crate) timeout: Option<Duration>,
    /// 3 `flag`: the batch's handle from `cancelFlag()` (cancel_flag.rs). Read by
    /// submit_many.rs, once the pool is known to be open.
    pub(crate) flag: sys::napi_value,
    /// 4 `params`: a handle from makeParams, or `undefined`: the kernel's
    /// defaults. Taken by submit_many.rs when there are binaries.
    pub(crate) params: Option<sys::napi_value>,
    /// 5 `maxOutputBytes`: as `submit`'s.
    pub(crate) max_output: Option<usize>,
    /// 6 `group`: binaries per task (uint32, from 1 to
    /// [`Self::MAX_GROUP`]); above 1 the tasks are packed
    /// (`tidepool_core::Mode::Packed`).
    pub(crate) group: usize,
    /// 7 and on: the binaries, one task each, each a binary or an Array of
    /// binaries; 0 to [`Self::MAX_BINARIES`] of them. lib/engine/ keeps
    /// them reachable until the chunk's last task is delivered.
    pub(crate) binaries: &'a [sys::napi_value],
}

impl<'a> SubmitManyArgs<'a> {
    pub(crate) const KERNEL: usize = 0;
    pub(crate) const FIRST_SLOT: usize = 1;
    pub(crate) const TIMEOUT_MS: usize = 2;
    pub(crate) const FLAG: usize = 3;
    pub(crate) const PARAMS: usize = 4;
    pub(crate) const MAX_OUTPUT_BYTES: usize = 5;
    pub(crate) const GROUP: usize = 6;
    /// Where the binaries start: the arguments before them are required.
    pub(crate) const BINARIES: usize = 7;
    /// Most binaries one packed task takes.
    pub(crate) const MAX_GROUP: u32 = 1024;
    /// Most binaries one call takes.
    pub(crate) const MAX_BINARIES: usize = 4096;

    /// Whether a call with `argc` arguments has the required ones and no
    /// more than [`Self::MAX_BINARIES`] binaries; if not, it is refused
    /// with [`Self::bad_count`].
    pub(crate) fn takes(argc: usize) -> bool {
        (Self::BINARIES..=Self::BINARIES + Self::MAX_BINARIES).contains(&argc)
    }

    pub(crate) fn bad_count() -> Refusal {
        submit_many_refusal("takes seven arguments and at most 4096 binaries")
    }

    /// Reads the table from `args`, every argument of a call [`Self::takes`]
    /// accepted. Only the numbers can be refused here.
    ///
    /// # Safety
    /// `env` and `args` must be the live env and arguments of the current call.
    pub(crate) unsafe fn read(
        env: sys::napi_env,
        args: &'a [sys::napi_value],
    ) -> Result<SubmitManyArgs<'a>, Refusal> {
        let binaries = &args[Self::BINARIES..];
        // SAFETY: (whole block) live env and arguments of this call; the
        // readers only look at the values.
        unsafe {
            let numbers = (
                u32_of(env, args[Self::KERNEL]),
                u32_of(env, args[Self::FIRST_SLOT]),
                f64_of(env, args[Self::TIMEOUT_MS]),
                u32_of(env, args[Self::GROUP]),
            );
            let (Some(kernel), Some(first_slot), Some(timeout_ms), Some(group)) = numbers else {
                return Err(Self::bad_numbers());
            };
            if kernels::get(kernel).is_none()
                || first_slot.checked_add(binaries.len() as u32).is_none()
                || !(1..=Self::MAX_GROUP).contains(&group)
            {
                return Err(Self::bad_numbers());
            }
            Ok(SubmitManyArgs {
                kernel,
                first_slot,
                timeout: timeout_of(timeout_ms),
                flag: args[Self::FLAG],
                params: params_of(env, args[Self::PARAMS]),
                max_output: max_output_of(env, args[Self::MAX_OUTPUT_BYTES]),
                group: group as usize,
                binaries,
            })
        }
    }

    fn bad_numbers() -> Refusal {
        submit_many_refusal(
            "kernel, firstSlot, timeoutMs and group must be numbers, the kernel a valid id, \
             group from 1 to 1024",
        )
    }
}

/// A refusal of `submitMany`.
pub(crate) fn submit_many_refusal(what: &str) -> Refusal {
    Refusal::new(ERR_INVALID_ARG_TYPE, format!("submitMany: {what}"))
}

// --- submitStep ---

/// `submitStep(slot, stream, data, end, budget, seq, flag?)`: queues one
/// step of chunk `seq` of a stream, cancelled with `flag` (the chunk's
/// signal's: the stream's `destroy()`). Returns the queue length after it,
/// or 0 when the queue was full (nothing queued).
pub(crate) struct SubmitStepArgs {
    /// 0 `slot`: a uint32 (see the module doc).
    pub(crate) slot: u32,
    /// 1 `stream`: a handle from `newStream()` (streams.rs). Read by
    /// submit_step.rs.
    pub(crate) stream: sys::napi_value,
    /// 2 `data`: a binary or an Array of binaries, kept reachable by
    /// lib/engine/ until the task is delivered.
    pub(crate) data: sys::napi_value,
    /// 3 `end`: an int32: [`Self::END_LAST`] (the stream's last chunk),
    /// [`Self::END_MORE`] (nothing), any other: a flush of that kind (the
    /// codec's, checked in JavaScript).
    pub(crate) end: ChunkEnd,
    /// 4 `budget`: a Number, at least 1: the step stops once its output
    /// passes this many bytes (not finite: no limit).
    pub(crate) budget: usize,
    /// 5 `seq`: a Number, at least 0: the chunk's number in its stream.
    pub(crate) seq: u64,
    /// 6 `flag`: the cancel flag of the step's signal, or `undefined`.
    pub(crate) flag: Option<Arc<CancelFlag>>,
}

impl SubmitStepArgs {
    pub(crate) const SLOT: usize = 0;
    pub(crate) const STREAM: usize = 1;
    pub(crate) const DATA: usize = 2;
    pub(crate) const END: usize = 3;
    pub(crate) const BUDGET: usize = 4;
    pub(crate) const SEQ: usize = 5;
    pub(crate) const FLAG: usize = 6;
    /// Arguments read at most.
    pub(crate) const MAX: usize = 7;
    /// Every argument but the flag is required; more are ignored.
    pub(crate) const MIN: usize = 6;
    pub(crate) const USAGE: &'static str =
        "submitStep(slot, stream, data, end, budget, seq) takes six arguments";
    pub(crate) const END_LAST: i32 = -1;
    pub(crate) const END_MORE: i32 = 0;

    /// Reads the table from `args`, the arguments passed (at most
    /// [`Self::MAX`]). Only the count, the numbers and the flag can be
    /// refused here.
    ///
    /// # Safety
    /// `env` and `args` must be the live env and arguments of the current call.
    pub(crate) unsafe fn read(
        env: sys::napi_env,
        args: &[sys::napi_value],
    ) -> Result<SubmitStepArgs, Refusal> {
        if args.len() < Self::MIN {
            return Err(Refusal::new(ERR_INVALID_ARG_TYPE, Self::USAGE));
        }
        // SAFETY: (whole block) live env and arguments of this call; the
        // readers only look at the values.
        let numbers = unsafe {
            (
                u32_of(env, args[Self::SLOT]),
                i32_of(env, args[Self::END]),
                f64_of(env, args[Self::BUDGET]),
                f64_of(env, args[Self::SEQ]),
            )
        };
        let (Some(slot), Some(end), Some(budget), Some(seq)) = numbers else {
            return Err(Self::bad_numbers());
        };
        let Some((budget, seq)) = Self::budget_and_seq(budget, seq) else {
            return Err(Self::bad_numbers());
        };
        let end = Self::chunk_end(end);
        Ok(SubmitStepArgs {
            slot,
            stream: args[Self::STREAM],
            data: args[Self::DATA],
            end,
            budget,
            seq,
            // SAFETY: live env and arguments of this call.
            flag: unsafe { flag_arg(env, arg(args, Self::FLAG)) }?,
        })
    }

    fn bad_numbers() -> Refusal {
        Refusal::new(ERR_INVALID_ARG_TYPE, "submitStep: slot, end, budget and seq must be numbers")
    }

    /// `budget` (at least 1; not finite: no limit) and `seq` (at least 0)
    /// as [`SubmitStepArgs::budget`] and [`SubmitStepArgs::seq`] hold
    /// them; None when either is out of range.
    pub(crate) fn budget_and_seq(budget: f64, seq: f64) -> Option<(usize, u64)> {
        if !(seq >= 0.0 && budget >= 1.0) {
            return None;
        }
        Some((if budget.is_finite() { budget as usize } else { usize::MAX }, seq as u64))
    }

    /// What `end` (see [`SubmitStepArgs::end`]) stands for.
    pub(crate) fn chunk_end(end: i32) -> ChunkEnd {
        match end {
            Self::END_LAST => ChunkEnd::Last,
            Self::END_MORE => ChunkEnd::More,
            kind => ChunkEnd::Flush(kind as u32),
        }
    }
}

// --- makeParams ---

/// `makeParams(kernel, names, values, once)`: hands a kernel's parameters to
/// its check (params.rs). Returns a handle for `submit`'s `params`, or, when
/// the kernel refuses them, an Array `[kind, name, expected]`.
pub(crate) struct MakeParamsArgs {
    /// 0 `kernel`: a registered kernel's id (uint32), and that kernel.
    pub(crate) id: KernelId,
    pub(crate) kernel: &'static dyn AnyKernel,
    /// 1 `names`: lib/args/params.js's own Array of the parameters' names
    /// (strings). Read by params.rs.
    pub(crate) names: sys::napi_value,
    /// 2 `values`: lib/args/params.js's own Array of their values, as long.
    /// Read by params.rs.
    pub(crate) values: sys::napi_value,
    /// 3 `once`: a boolean: the handle gives its parameters up to the one
    /// task it is submitted with.
    pub(crate) once: bool,
}

impl MakeParamsArgs {
    pub(crate) const KERNEL: usize = 0;
    pub(crate) const NAMES: usize = 1;
    pub(crate) const VALUES: usize = 2;
    pub(crate) const ONCE: usize = 3;
    /// Every argument is required; more are ignored.
    pub(crate) const COUNT: usize = 4;

    /// Every refusal of `makeParams`: a call lib/args/params.js never makes.
    pub(crate) fn usage() -> Refusal {
        Refusal::new(
            ERR_INVALID_ARG_TYPE,
            "makeParams(kernel, names, values, once) takes a kernel id and two Arrays",
        )
    }

    /// Reads the table from `args`, the arguments passed (at most
    /// [`Self::COUNT`]).
    ///
    /// # Safety
    /// `env` and `args` must be the live env and arguments of the current call.
    pub(crate) unsafe fn read(
        env: sys::napi_env,
        args: &[sys::napi_value],
    ) -> Result<MakeParamsArgs, Refusal> {
        if args.len() < Self::COUNT {
            return Err(Self::usage());
        }
        // SAFETY: live env and arguments of this call; the readers only
        // look at the values.
        let (id, once) =
            unsafe { (u32_of(env, args[Self::KERNEL]), bool_of(env, args[Self::ONCE])) };
        let (Some(id), Some(once)) = (id, once) else {
            return Err(Self::usage());
        };
        let kernel = kernels::get(id).ok_or_else(Self::usage)?;
        Ok(MakeParamsArgs {
            id,
            kernel,
            names: args[Self::NAMES],
            values: args[Self::VALUES],
            once,
        })
    }
}
