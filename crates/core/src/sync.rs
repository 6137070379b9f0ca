//! The synchronisation primitives of the pool's wake / park / spawn / retire
//! protocol, in one place so that the `shuttle` feature can swap them for
//! Shuttle's, whose scheduler explores thread interleavings
//! (`cargo test -p tidepool-core --features shuttle --test shuttle`).
//!
//! Flags outside that protocol (the kernels' cancel flag, histogram counters)
//! use `std` directly.

#[cfg(not(feature = "shuttle"))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicUsize};
#[cfg(not(feature = "shuttle"))]
pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(feature = "shuttle"))]
pub(crate) use std::thread;

#[cfg(feature = "shuttle")]
pub(crate) use shuttle::sync::atomic::{AtomicBool, AtomicUsize};
#[cfg(feature = "shuttle")]
pub(crate) use shuttle::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(feature = "shuttle")]
pub(crate) use shuttle::thread;
