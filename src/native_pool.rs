//! The `NativePool` class: what lib/engine/ calls per task and per lifecycle step.
//! Its lifecycle glue (ownership of its state, teardown) is lifecycle.rs.

use std::rc::Rc;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::JsValue;
use napi_derive::napi;
use tidepool_core::policy::SpawnReason;

use crate::delivery;
use crate::handles::Reference;
use crate::inner::Inner;
use crate::lifecycle;
use crate::napi_util::typed_array_data;
use crate::pool_objects::{
    metric_bounds, NativeBudget, NativeLatency, NativeMetrics, NativeOptions, NativeStats,
};
use crate::refusal::Refusal;
use crate::wire;

/// A pool of Rust threads; JavaScript talks to it through lib/engine/.
#[napi]
pub struct NativePool {
    inner: Rc<Inner>,
}

#[napi]
impl NativePool {
    /// `new NativePool(options, onBatch, meta: Uint32Array, slab: Uint8Array)`.
    #[napi(constructor)]
    pub fn new(
        env: Env,
        options: NativeOptions,
        on_batch: Unknown,
        meta: Unknown,
        slab: Unknown,
    ) -> Result<Self> {
        let raw_env = env.raw();
        let (meta_ptr, meta_len) = typed_array_data(raw_env, meta.raw(), "meta")?;
        let (slab_ptr, slab_len) = typed_array_data(raw_env, slab.raw(), "slab")?;
        if meta_len < wire::BATCH_CAPACITY * 2 || slab_len < wire::SLAB_BYTES {
            return Err(Error::new(
                Status::InvalidArg,
                "meta or slab is smaller than batchLayout()".to_owned(),
            ));
        }
        // SAFETY: JS thread, live env and values of this call; the
        // references live in `Inner`, which only this thread touches.
        let (callback, buffers) = unsafe {
            (
                Reference::new(raw_env, on_batch.raw(), 0)?,
                [Reference::new(raw_env, meta.raw(), 1)?, Reference::new(raw_env, slab.raw(), 1)?],
            )
        };
        // The thread that frees large results (once per process).
        crate::reclaim::start();
        let inner = Rc::new(Inner::new(
            raw_env,
            callback,
            buffers,
            meta_ptr as *mut u32,
            slab_ptr as *mut u8,
            wire::BATCH_CAPACITY,
            options.string_results,
        ));
        lifecycle::start(&env, &inner, options.pool_config())?;
        Ok(NativePool { inner })
    }

    /// Returns this pool's `submit(slot, kernel, data, timeoutMs?, flag?,
    /// params?, maxOutputBytes?, file?)` function (arguments:
    /// `wire::SubmitArgs`).
    ///
    /// `submit` is the one call made per task, so it is a plain N-API function
    /// bound to this pool's `Inner` (its callback data) rather than a method
    /// (see submit.rs). The function owns a share of `Inner`, dropped by a
    /// finalizer when the function is collected.
    #[napi]
    pub fn submitter<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        lifecycle::bound_function(env, &self.inner, c"submit", crate::submit::submit_callback)
    }

    /// Returns this pool's `submitMany(kernel, firstSlot, timeoutMs, flag,
    /// params, maxOutputBytes, ...binaries)` (arguments:
    /// `wire::SubmitManyArgs`), bound as `submit` is.
    #[napi]
    pub fn batch_submitter<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        lifecycle::bound_function(
            env,
            &self.inner,
            c"submitMany",
            crate::submit_many::submit_many_callback,
        )
    }

    /// Returns this pool's `submitRecords(kernel, firstSlot, timeoutMs,
    /// flag, params, maxOutputBytes, group, data, lengths, start, count)`
    /// (arguments: `wire::SubmitRecordsArgs`), bound as `submit` is.
    #[napi]
    pub fn records_submitter<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        lifecycle::bound_function(
            env,
            &self.inner,
            c"submitRecords",
            crate::submit_records::submit_records_callback,
        )
    }

    /// Returns this pool's `submitStep(slot, stream, data, end, budget,
    /// seq)` (arguments: `wire::SubmitStepArgs`), bound as `submit` is.
    #[napi]
    pub fn step_submitter<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        lifecycle::bound_function(
            env,
            &self.inner,
            c"submitStep",
            crate::submit_step::submit_step_callback,
        )
    }

    /// A new stream's handle: the state its chunks continue (see the core's
    /// stream.rs) for `kernel` with `params` (a makeParams handle or
    /// undefined) and an output limit for the whole stream (undefined: the
    /// pool's for the kernel); `digest`: a hash's (its kernel may write only
    /// when it finishes). Freed when the handle is collected and no task
    /// holds it.
    #[napi]
    pub fn new_stream<'env>(
        &self,
        env: &'env Env,
        kernel: u32,
        params: Unknown,
        max_output_bytes: Option<f64>,
        digest: Option<bool>,
    ) -> Result<Unknown<'env>> {
        // SAFETY: live env and a value of this call.
        let value = unsafe {
            crate::streams::new_stream(
                &self.inner,
                env.raw(),
                kernel,
                params.raw(),
                max_output_bytes,
                digest.unwrap_or(false),
            )
        }
        .map_err(Refusal::into_napi)?;
        // SAFETY: a value just made in this live env.
        unsafe { Unknown::from_napi_value(env.raw(), value) }
    }

    /// What the last step of `stream` did (see streams.rs `report`).
    #[napi]
    pub fn stream_report(&self, env: Env, stream: Unknown) -> Result<f64> {
        // SAFETY: live env and a value of this call.
        unsafe { crate::streams::report(env.raw(), stream.raw()) }
            .map_err(|refusal| Error::new(Status::InvalidArg, refusal.message))
    }

    /// `stream` is over: its codec state is no longer reported to V8 (see
    /// streams.rs `over`).
    #[napi]
    pub fn stream_over(&self, env: Env, stream: Unknown) -> Result<()> {
        // SAFETY: live env and a value of this call.
        unsafe { crate::streams::over(env.raw(), stream.raw()) }
            .map_err(|refusal| Error::new(Status::InvalidArg, refusal.message))
    }

    /// A new stream whose state is a copy of `stream`'s, between chunks
    /// (see streams.rs `fork`).
    #[napi]
    pub fn stream_fork<'env>(&self, env: &'env Env, stream: Unknown) -> Result<Unknown<'env>> {
        // SAFETY: live env and a value of this call.
        let value =
            unsafe { crate::streams::fork(env.raw(), stream.raw()) }.map_err(Refusal::into_napi)?;
        // SAFETY: a value just made in this live env.
        unsafe { Unknown::from_napi_value(env.raw(), value) }
    }

    /// Runs the chunk in flight of a hash and `rest` on this thread (see
    /// streams.rs `run_inline`).
    #[napi]
    pub fn stream_inline<'env>(
        &self,
        env: &'env Env,
        stream: Unknown,
        seq: f64,
        in_flight: Unknown,
        rest: Unknown,
    ) -> Result<Unknown<'env>> {
        // SAFETY: live env and values of this call.
        let value = unsafe {
            crate::streams::run_inline(env.raw(), stream.raw(), seq, in_flight.raw(), rest.raw())
        }
        .map_err(Refusal::into_napi)?;
        // SAFETY: a value just made in this live env.
        unsafe { Unknown::from_napi_value(env.raw(), value) }
    }

    /// Runs the next step of a stream's chunk on this thread when it only
    /// hands on output made already; undefined when it is a pool thread's
    /// (see streams.rs `step_here`).
    #[napi]
    pub fn stream_step_here<'env>(
        &self,
        env: &'env Env,
        stream: Unknown,
        data: Unknown,
        end: i32,
        budget: f64,
        seq: f64,
    ) -> Result<Unknown<'env>> {
        // SAFETY: live env and values of this call.
        let value = unsafe {
            crate::streams::step_here(env.raw(), stream.raw(), data.raw(), end, budget, seq)
        }
        .map_err(Refusal::into_napi)?;
        // SAFETY: a value just made in this live env.
        unsafe { Unknown::from_napi_value(env.raw(), value) }
    }

    /// A new cancel flag for one batch (`postMany()`, `map()`) or one
    /// AbortSignal's posts, shared by their tasks (cancel_flag.rs).
    #[napi]
    pub fn cancel_flag<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        // SAFETY: live env of this call.
        let value = unsafe { crate::cancel_flag::new_flag(env.raw()) }
            .map_err(|refusal| Error::new(Status::GenericFailure, refusal.message))?;
        // SAFETY: a value just made in this live env.
        unsafe { Unknown::from_napi_value(env.raw(), value) }
    }

    /// Cancels the tasks of a flag (a batch's task failed, or their signal
    /// fired): takes its queued tasks out of the queue in one pass and
    /// returns their slots (they will not be delivered), then raises the
    /// flag, which stops the running ones at their next chunk (they are
    /// delivered as cancelled; a finished one is delivered as it ended).
    #[napi]
    pub fn cancel_flagged(&self, env: Env, flag: Unknown) -> Result<Uint32Array> {
        // SAFETY: live env and value of this call.
        let flag = unsafe { crate::cancel_flag::flag_of(env.raw(), flag.raw()) }
            .map_err(|refusal| Error::new(Status::InvalidArg, refusal.message))?;
        let inner = &*self.inner;
        let removed = inner.pool().remove_queued_with(&flag);
        crate::cancel_flag::raise(&flag);
        inner.tasks_done(removed.len());
        inner.update_hold();
        Ok(Uint32Array::new(removed))
    }

    /// Raises a flag without taking its queued tasks out: a task a thread
    /// takes from now on stops before its first piece, and a running one at
    /// its next. What a stream chunk's signal does at once when it fires;
    /// its queued tasks leave the queue later, with others, in one pass.
    #[napi]
    pub fn raise_flag(&self, env: Env, flag: Unknown) -> Result<()> {
        // SAFETY: live env and value of this call.
        let flag = unsafe { crate::cancel_flag::flag_of(env.raw(), flag.raw()) }
            .map_err(|refusal| Error::new(Status::InvalidArg, refusal.message))?;
        crate::cancel_flag::raise(&flag);
        Ok(())
    }

    /// [`cancel_flagged`](Self::cancel_flagged) for many flags at once (the
    /// batches of one AbortSignal that fired), `flags` an Array of them: one
    /// pass over the queue takes all their queued tasks out, where a call
    /// per flag would pass over it once per flag.
    #[napi]
    pub fn cancel_all_flagged(&self, env: Env, flags: Unknown) -> Result<Uint32Array> {
        // SAFETY: live env and value of this call.
        let flags = unsafe { crate::cancel_flag::flags_of(env.raw(), flags.raw()) }
            .map_err(|refusal| Error::new(Status::InvalidArg, refusal.message))?;
        let inner = &*self.inner;
        let removed = inner.pool().remove_queued_with_any(&flags);
        for flag in &flags {
            crate::cancel_flag::raise(flag);
        }
        inner.tasks_done(removed.len());
        inner.update_hold();
        Ok(Uint32Array::new(removed))
    }

    /// Delivers the completions an earlier delivery left for a later turn
    /// of the event loop (its batch callback said `later`).
    #[napi]
    pub fn deliver(&self, env: Env) {
        self.inner.deferred.set(false);
        if self.inner.is_torn_down() {
            return;
        }
        // SAFETY: lib/engine/ calls this on the JS thread that made the pool,
        // whose env is `inner.env`.
        unsafe { delivery::deliver_batch(env.raw(), &self.inner) }
    }

    /// Current numbers of the native side; `reset` restarts the latency
    /// histograms after reading them.
    #[napi]
    pub fn stats(&self, reset: bool) -> NativeStats {
        let s = self.inner.pool().stats(reset);
        NativeStats {
            threads: s.threads as u32,
            busy_threads: s.busy_threads as u32,
            idle_threads: (s.threads - s.busy_threads) as u32,
            queued: s.queued as u32,
            oldest_queued_ms: s.oldest_queued.as_secs_f64() * 1000.0,
            spawned: s.spawned as f64,
            retired: s.retired as f64,
            spawn_errors: s.spawn_errors as f64,
            wait_time: NativeLatency::of(&s.wait),
            run_time: NativeLatency::of(&s.run),
            working_bytes: s.working_bytes as f64,
            memory_waiting: s.memory_waiting as u32,
            budget: self.inner.pool().budget_stats().as_ref().map(NativeBudget::of),
        }
    }

    /// See [`NativeMetrics`].
    #[napi]
    pub fn metrics(&self) -> NativeMetrics {
        let t = self.inner.pool().totals();
        let bounds = metric_bounds();
        let counts = |s: &tidepool_core::histogram::Summary| {
            s.cumulative(&bounds).into_iter().map(|c| c as f64).collect()
        };
        NativeMetrics {
            threads: t.threads as u32,
            busy_threads: t.busy_threads as u32,
            queued: t.queued as u32,
            oldest_queued_ms: t.oldest_queued.as_secs_f64() * 1000.0,
            working_bytes: t.working_bytes as f64,
            memory_waiting: t.memory_waiting as u32,
            retired: t.retired as f64,
            spawn_errors: t.spawn_errors as f64,
            bounds: bounds.iter().map(Duration::as_secs_f64).collect(),
            wait_buckets: counts(&t.wait),
            wait_count: t.wait.count() as f64,
            wait_sum: t.wait.sum().as_secs_f64(),
            run_buckets: counts(&t.run),
            run_count: t.run.count() as f64,
            run_sum: t.run.sum().as_secs_f64(),
            spawn_reasons: SpawnReason::ALL.iter().map(|r| r.as_str().to_owned()).collect(),
            spawns: t.spawns_by_reason.iter().map(|&n| n as f64).collect(),
            budget: self.inner.pool().budget_stats().as_ref().map(NativeBudget::of),
        }
    }

    /// Stops accepting tasks; threads finish the queue and exit. Termination
    /// is reported through the batch callback.
    #[napi]
    pub fn close(&self) {
        self.inner.pool().close();
        self.inner.begin_closing();
    }

    /// Stops accepting tasks, cancels running kernels and returns the slots
    /// of the tasks that were still queued (they will not be delivered).
    #[napi]
    pub fn destroy(&self) -> Vec<u32> {
        let inner = &*self.inner;
        let slots = inner.pool().abort();
        inner.tasks_done(slots.len());
        inner.begin_closing();
        slots
    }

    /// Tasks in the queue right now.
    #[napi]
    pub fn queued(&self) -> u32 {
        self.inner.pool().queued().min(u32::MAX as usize) as u32
    }

    /// Removes the oldest queued task (the `drop-oldest` policy) and returns
    /// its slot, or -1 if the queue is empty. It will not be delivered.
    #[napi]
    pub fn drop_oldest(&self) -> i64 {
        let inner = &*self.inner;
        match inner.pool().drop_oldest() {
            Some(slot) => {
                inner.tasks_done(1);
                inner.update_hold();
                slot as i64
            }
            None => -1,
        }
    }

    /// Joins the exited threads. Call after termination was delivered; it
    /// then returns at once.
    #[napi]
    pub fn join(&self) {
        self.inner.pool().join();
    }
}

impl Drop for NativePool {
    fn drop(&mut self) {
        lifecycle::stop_and_release(&self.inner);
    }
}
