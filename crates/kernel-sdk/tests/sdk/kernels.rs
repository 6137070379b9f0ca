//! The kernels, defined with `export_kernels!` as a library defines them.

use std::ffi::CStr;
use std::sync::atomic::{AtomicUsize, Ordering};

use tidepool_kernel_sdk::{
    export_kernels, Context, Error, Kernel, Output, Param, Transform, Values,
};

/// Every parameter type; echoes its input through `unfilled`/`commit` in
/// pieces of `piece` bytes, then its settings through `write`.
pub(crate) struct Echo;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Settings {
    pub(crate) piece: i64,
    pub(crate) ratio: Option<f64>,
    pub(crate) strict: Option<bool>,
    pub(crate) label: Option<String>,
    pub(crate) key: Option<Vec<u8>>,
}

pub(crate) struct Echoing(Settings);

impl Kernel for Echo {
    const NAME: &'static CStr = c"test/echo";
    const PARAMS: &'static [Param] = &[
        Param::integer(c"piece", 1, 1 << 20).required(),
        Param::number(c"ratio", -0.5, 2.5),
        Param::boolean(c"strict"),
        Param::string(c"label"),
        Param::bytes(c"key"),
    ];
    const EXPANDS: bool = true;
    type Params = Settings;
    type State = Echoing;

    fn params(v: &Values<'_>) -> Result<Settings, Error> {
        let settings = Settings {
            piece: v.integer("piece").unwrap_or(1),
            ratio: v.number("ratio"),
            strict: v.boolean("strict"),
            label: v.string("label").map(str::to_owned),
            key: v.bytes("key").map(<[u8]>::to_vec),
        };
        // Accessors of another type, or of names not in the schema, give nothing.
        assert_eq!(
            (v.number("piece"), v.integer("ratio"), v.string("key"), v.integer("nope")),
            (None, None, None, None)
        );
        match settings.label.as_deref() {
            Some("refuse") => Err(Error::new("ERR_TEST_REFUSED", "the label 'refuse' is refused")),
            _ => Ok(settings),
        }
    }

    fn start(settings: &Settings, _: Option<u64>) -> Result<Echoing, Error> {
        Ok(Echoing(settings.clone()))
    }
}

impl Transform for Echoing {
    fn update(
        &mut self,
        chunk: &[u8],
        out: &mut Output<'_>,
        cx: &Context<'_>,
    ) -> Result<(), Error> {
        cx.check()?;
        out.reserve(chunk.len());
        let mut left = chunk;
        while !left.is_empty() {
            let room = out.unfilled(left.len().min(self.0.piece as usize))?;
            let n = room.len().min(left.len());
            room[..n].copy_from_slice(&left[..n]);
            out.commit(n)?;
            left = &left[n..];
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        out.write(format!("|{:?}", self.0).as_bytes())
    }
}

/// No parameters (`()`, zero-sized): counts its input, checking for
/// cancellation before each chunk; the count and the length hint (8 bytes
/// each, `u64::MAX` for none) at the end.
pub(crate) struct Unit;

pub(crate) struct Counting {
    count: u64,
    hint: Option<u64>,
}

impl Kernel for Unit {
    const NAME: &'static CStr = c"test/unit";
    type Params = ();
    type State = Counting;

    fn params(_: &Values<'_>) -> Result<(), Error> {
        Ok(())
    }

    fn start(_: &(), hint: Option<u64>) -> Result<Counting, Error> {
        Ok(Counting { count: 0, hint })
    }
}

impl Transform for Counting {
    fn update(&mut self, chunk: &[u8], _: &mut Output<'_>, cx: &Context<'_>) -> Result<(), Error> {
        cx.check()?;
        self.count += chunk.len() as u64;
        Ok(())
    }

    fn finish(&mut self, out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        out.write(&self.count.to_le_bytes())?;
        out.write(&self.hint.unwrap_or(u64::MAX).to_le_bytes())
    }
}

/// Panics: in `start` for a length hint of 13, in `update` (a `String`
/// message, or a payload that is no text for a chunk starting with 0), in
/// `finish` (a `&str` message). Counts its dropped states (only the panic
/// test uses it).
pub(crate) struct Fragile;

pub(crate) static FRAGILE_STATES_DROPPED: AtomicUsize = AtomicUsize::new(0);

pub(crate) struct Breaking;

impl Drop for Breaking {
    fn drop(&mut self) {
        FRAGILE_STATES_DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

impl Kernel for Fragile {
    const NAME: &'static CStr = c"test/fragile";
    type Params = ();
    type State = Breaking;

    fn params(_: &Values<'_>) -> Result<(), Error> {
        Ok(())
    }

    fn start(_: &(), hint: Option<u64>) -> Result<Breaking, Error> {
        assert_ne!(hint, Some(13), "unlucky start");
        Ok(Breaking)
    }
}

impl Transform for Breaking {
    fn update(&mut self, chunk: &[u8], _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        match chunk.first() {
            Some(0) => std::panic::panic_any(7u8),
            Some(_) => panic!("fragile: {} bytes", chunk.len()),
            None => Ok(()),
        }
    }

    fn finish(&mut self, _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        panic!("fragile finish");
    }
}

/// Zero-sized parameters and a state, both counting their drops (used by
/// one test only, so the counts are its own).
pub(crate) struct Tracked;

pub(crate) static TRACKED_PARAMS_DROPPED: AtomicUsize = AtomicUsize::new(0);
pub(crate) static TRACKED_STATES_DROPPED: AtomicUsize = AtomicUsize::new(0);

pub(crate) struct TrackedParams;

impl Drop for TrackedParams {
    fn drop(&mut self) {
        TRACKED_PARAMS_DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

pub(crate) struct TrackedState(Vec<u8>);

impl Drop for TrackedState {
    fn drop(&mut self) {
        TRACKED_STATES_DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

impl Kernel for Tracked {
    const NAME: &'static CStr = c"test/tracked";
    type Params = TrackedParams;
    type State = TrackedState;

    fn params(_: &Values<'_>) -> Result<TrackedParams, Error> {
        Ok(TrackedParams)
    }

    fn start(_: &TrackedParams, _: Option<u64>) -> Result<TrackedState, Error> {
        Ok(TrackedState(vec![1, 2, 3]))
    }
}

impl Transform for TrackedState {
    fn update(&mut self, _: &[u8], _: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        Ok(())
    }

    fn finish(&mut self, out: &mut Output<'_>, _: &Context<'_>) -> Result<(), Error> {
        out.write(&self.0)
    }
}

export_kernels!(Echo, Unit, Fragile, Tracked);
