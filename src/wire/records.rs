//! `submitRecords`'s arguments: `submitMany`'s first seven, then one
//! binary cut into records (`postRecords()`).

use napi::sys;

use super::SubmitManyArgs;
use crate::napi_util::{f64_of, typed_array_info, u32_of};
use crate::refusal::*;

/// `submitRecords(kernel, firstSlot, timeoutMs, flag, params,
/// maxOutputBytes, group, data, lengths, start, count, at)`: queues
/// records `start .. start + count` of the binary `data` is part of as
/// `submitMany` queues binaries (one task each, or `group` to a packed
/// task; record `start + i` in slot `firstSlot + i`). Returns how many
/// tasks were queued, as `submitMany`.
pub(crate) struct SubmitRecordsArgs<'a> {
    /// 0 to 6: as [`SubmitManyArgs`]'s (its `binaries` empty).
    pub(crate) batch: SubmitManyArgs<'a>,
    /// 7 `data`: the bytes these records lie in (a binary, or an Array of
    /// binaries read as one), from byte `at` of the whole. lib/engine/
    /// keeps it reachable until the chunk's last task is delivered.
    pub(crate) data: sys::napi_value,
    /// 8 `lengths`: see [`Cuts`].
    pub(crate) cuts: Cuts<'a>,
    /// 9 `start`, 10 `count`: the records to queue (count from 1 to
    /// [`SubmitManyArgs::MAX_BINARIES`]; 0 queues nothing).
    pub(crate) start: u32,
    pub(crate) count: u32,
    /// 11 `at`: where `data` begins in the whole, in bytes (a whole
    /// Number): a record's offsets less `at` are its bytes in `data`.
    pub(crate) at: usize,
}

/// Where the records lie in the binary: every one `Fixed` bytes long (a
/// Number, at least 1), or record `i` from `offsets[i]` to
/// `offsets[i + 1]` (a Float64Array of integers, lib/engine/'s own, with
/// at least `start + count + 1` of them). Every range is checked against
/// the binary's length before it is read.
pub(crate) enum Cuts<'a> {
    Fixed(usize),
    Offsets(&'a [f64]),
}

impl Cuts<'_> {
    /// Bytes of record `index`; `None` when its offsets are not a range
    /// of non-negative integers (a range past the binary is refused by
    /// its reader).
    pub(crate) fn range(&self, index: usize) -> Option<(usize, usize)> {
        match *self {
            Cuts::Fixed(length) => {
                let from = index.checked_mul(length)?;
                Some((from, from.checked_add(length)?))
            }
            Cuts::Offsets(offsets) => {
                let (from, to) = (*offsets.get(index)?, *offsets.get(index + 1)?);
                let whole = |v: f64| v >= 0.0 && v.fract() == 0.0 && v < 2f64.powi(53);
                (whole(from) && whole(to) && from <= to).then_some((from as usize, to as usize))
            }
        }
    }
}

impl<'a> SubmitRecordsArgs<'a> {
    pub(crate) const DATA: usize = SubmitManyArgs::BINARIES;
    pub(crate) const LENGTHS: usize = Self::DATA + 1;
    pub(crate) const START: usize = Self::DATA + 2;
    pub(crate) const COUNT: usize = Self::DATA + 3;
    pub(crate) const AT: usize = Self::DATA + 4;
    /// Every argument is required; more are ignored.
    pub(crate) const MIN: usize = Self::AT + 1;

    /// Reads the table from `args` (at least [`Self::MIN`] of them).
    ///
    /// # Safety
    /// `env` and `args` must be the live env and arguments of the current
    /// call; the returned offsets borrow a Float64Array argument's memory,
    /// which stays put while no JavaScript runs (none runs in the call).
    pub(crate) unsafe fn read(
        env: sys::napi_env,
        args: &'a [sys::napi_value],
    ) -> Result<SubmitRecordsArgs<'a>, Refusal> {
        if args.len() < Self::MIN {
            return Err(refusal("takes twelve arguments"));
        }
        // SAFETY: (whole block) forwarded contract; the readers only look
        // at the values.
        unsafe {
            let batch = SubmitManyArgs::read(env, &args[..SubmitManyArgs::BINARIES])?;
            let (Some(start), Some(count)) =
                (u32_of(env, args[Self::START]), u32_of(env, args[Self::COUNT]))
            else {
                return Err(refusal("start and count must be uint32"));
            };
            if count as usize > SubmitManyArgs::MAX_BINARIES
                || batch.first_slot.checked_add(count).is_none()
                || start.checked_add(count).is_none()
            {
                return Err(refusal("count must be at most 4096, its slots uint32"));
            }
            let at = match f64_of(env, args[Self::AT]) {
                Some(at) if at >= 0.0 && at.fract() == 0.0 && at < 2f64.powi(53) => at as usize,
                _ => return Err(refusal("at must be a whole Number")),
            };
            let cuts = cuts_of(env, args[Self::LENGTHS], start as usize + count as usize)?;
            Ok(SubmitRecordsArgs { batch, data: args[Self::DATA], cuts, start, count, at })
        }
    }
}

/// The `lengths` argument: a Number at least 1, or a Float64Array of at
/// least `needed + 1` offsets.
///
/// # Safety
/// As [`SubmitRecordsArgs::read`]'s.
unsafe fn cuts_of<'a>(
    env: sys::napi_env,
    value: sys::napi_value,
    needed: usize,
) -> Result<Cuts<'a>, Refusal> {
    // SAFETY: forwarded contract.
    if let Some(length) = unsafe { f64_of(env, value) } {
        if length >= 1.0 && length.fract() == 0.0 && length < 2f64.powi(53) {
            return Ok(Cuts::Fixed(length as usize));
        }
        return Err(refusal("a record length must be a whole number above 0"));
    }
    // SAFETY: forwarded contract.
    let info = unsafe { typed_array_info(env, value) };
    let Some((_, length, data)) = info.filter(|&(kind, length, data)| {
        kind == sys::TypedarrayType::float64_array && length > needed && !data.is_null()
    }) else {
        return Err(refusal("lengths must be a Number or a Float64Array of the records' offsets"));
    };
    // SAFETY: a live Float64Array's `length` elements, aligned (a
    // Float64Array's byte offset is a multiple of 8), not written while no
    // JavaScript runs, which none does until this call returns.
    Ok(Cuts::Offsets(unsafe { std::slice::from_raw_parts(data as *const f64, length) }))
}

/// A refusal of `submitRecords`.
fn refusal(what: &str) -> Refusal {
    Refusal::new(ERR_INVALID_ARG_TYPE, format!("submitRecords: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_give_ranges_or_nothing() {
        assert_eq!(Cuts::Fixed(64).range(0), Some((0, 64)));
        assert_eq!(Cuts::Fixed(64).range(3), Some((192, 256)));
        assert_eq!(Cuts::Fixed(usize::MAX).range(2), None);
        let offsets = [0.0, 3.0, 3.0, 10.0];
        let cuts = Cuts::Offsets(&offsets);
        assert_eq!(cuts.range(0), Some((0, 3)));
        assert_eq!(cuts.range(1), Some((3, 3)));
        assert_eq!(cuts.range(2), Some((3, 10)));
        assert_eq!(cuts.range(3), None);
        for bad in [[2.0, 1.0], [-1.0, 1.0], [0.5, 1.0], [0.0, f64::NAN], [0.0, f64::INFINITY]] {
            assert_eq!(Cuts::Offsets(&bad).range(0), None, "{bad:?}");
        }
    }
}
