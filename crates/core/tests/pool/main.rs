//! Integration tests of the pool mechanism, driven the way the binding drives
//! it: submit tasks, wait for the waker, drain completions. One file per
//! concern:
//!
//! * `results.rs`: each task's result, once, with its own output.
//! * `lifecycle.rs`: close, abort, drop, threads that fail to start.
//! * `scaling.rs`: threads added under load and retired after it.
//! * `queue.rs`: the queue's bound, expiry, removal, timeouts and flags.
//! * `scheduling.rs`: no task waits for another.
//! * `helpers.rs`: what they share.

#[path = "../common/mod.rs"]
mod common;
mod helpers;

mod lifecycle;
mod queue;
mod results;
mod scaling;
mod scheduling;
