'use strict';
// Delivery: native code calls back once per batch of finished tasks (up to
// BATCH_CAPACITY), having written them into the shared meta words and slab
// (wire.js); this settles every one of them and emits the thread events
// that came with them, in one call into JavaScript.

const { ownArray } = require('../base/own-array');
const { makeError, throwLater } = require('../errors');
const {
  BATCH_SLOT,
  LARGE_CODE,
  TASK_CODES,
  resultLength,
  resultCode,
  taskError,
} = require('./wire');

/** setImmediate as Node has it at load: a test's fake timers (or an environment without the global) must not hold back delivery. */
const { setImmediate: scheduleImmediate } = require('node:timers');

/** Bytes `start..end` of `buffer` in memory of their own. */
function bufferCopy(buffer, start, end) {
  const copy = Buffer.allocUnsafe(end - start);
  buffer.copy(copy, 0, start, end);
  return copy;
}

/** The slab's bytes of a chunk of `count` entries, in memory of their own. */
function slabCopy(slab, meta, count) {
  let total = 0;
  for (let i = 0; i < count; i++) total += resultLength(meta[2 * i + 1]);
  const copy = Buffer.allocUnsafeSlow(total);
  slab.copy(copy, 0, 0, total);
  return copy;
}

/** A large result's Buffer that Node could not allocate. */
function allocationFailed() {
  return makeError(
    Error,
    'ERR_MEMORY_ALLOCATION_FAILED',
    'Failed to allocate memory for the result',
  );
}

/**
 * Settles the `count` tasks the native side wrote into the meta words and
 * slab. `events`: the thread events since the last call (or undefined);
 * `terminated`: the last thread exited; `large`: the Buffers of LARGE_CODE
 * results, in order; `later`: the native side kept the rest of this batch
 * for the next turn of the event loop (it had handed over its budget of
 * large results).
 * @param {import('./engine').Engine} engine
 */
function deliver(engine, count, events, terminated, large, later) {
  if (later) scheduleImmediate(engine.deliverLater);
  const meta = engine.meta;
  const slab = engine.slab;
  const encoding = engine.encoding;
  const slots = engine.slots;
  let errors;
  // With the 'buffer' encoding, results are views of one copy of the
  // chunk's slab (like Buffer.allocUnsafe's pool), never of the reused
  // slab itself; made when the first result wants it (a packed batch's
  // results are copied into its own Buffer and want none).
  let copy;
  // A thread started before it ran any of this batch's tasks: its 'spawn'
  // comes before their results; a retirement or a failed start after.
  if (events !== undefined) errors = emitThreadEvents(engine.emitter, events, true, errors);
  let offset = 0;
  let nextLarge = 0;
  for (let i = 0; i < count; i++) {
    const slot = meta[2 * i];
    const word = meta[2 * i + 1];
    const length = resultLength(word);
    const code = resultCode(word);
    const end = offset + length;
    let err;
    const chunk = slot >= BATCH_SLOT ? engine.batches.chunkOf(slot) : undefined;
    if (chunk !== undefined && chunk.batch.error !== undefined) {
      // Its batch already failed: nothing of this task is wanted.
      if (code === LARGE_CODE) nextLarge++;
      engine.batches.settleTask(slot, code === 0 || code === LARGE_CODE, undefined);
    } else if (chunk !== undefined && chunk.batch.packed && code === 0) {
      // Copied from the slab into the batch's one Buffer.
      engine.batches.settleTask(slot, true, slab, offset, end);
    } else if (chunk !== undefined && chunk.group > 1 && code === 0) {
      // The results of the task's messages, back to back: each a view of
      // the copy, or a string.
      if (encoding === 'buffer') copy ??= slabCopy(slab, meta, count);
      engine.batches.settleTask(slot, true, copy !== undefined ? copy : slab, offset, end);
    } else if (
      chunk !== undefined &&
      (chunk.group > 1 || chunk.batch.packed) &&
      code === LARGE_CODE
    ) {
      const buffer = large[nextLarge++];
      if (buffer === undefined) err = engine.settle(slot, false, allocationFailed());
      else engine.batches.settleTask(slot, true, buffer, 0, buffer.length);
    } else if (code === 0) {
      let result;
      if (encoding === 'buffer')
        result = (copy ??= slabCopy(slab, meta, count)).subarray(offset, end);
      else if (slot < BATCH_SLOT && slots.get(slot).bytes) result = bufferCopy(slab, offset, end);
      else result = slab.toString(encoding, offset, end);
      err = engine.settle(slot, true, result);
    } else if (code === LARGE_CODE) {
      // A Buffer of its own, made from the kernel's output without a copy.
      const buffer = large[nextLarge++];
      if (buffer === undefined) {
        err = engine.settle(slot, false, allocationFailed());
      } else if (encoding === 'buffer' || (slot < BATCH_SLOT && slots.get(slot).bytes)) {
        // (A stream's output is bytes, whatever the pool's encoding.)
        err = engine.settle(slot, true, buffer);
      } else {
        // A string has a length limit a Buffer does not (ERR_STRING_TOO_LONG):
        // past it the task rejects with Node's error.
        let text;
        let failure;
        try {
          text = buffer.toString(encoding);
        } catch (e) {
          failure = e;
        }
        err =
          failure === undefined
            ? engine.settle(slot, true, text)
            : engine.settle(slot, false, failure);
      }
    } else {
      // Told to stop by its signal: its AbortError.
      const watch =
        code === TASK_CODES.cancelled && slot < BATCH_SLOT ? slots.get(slot).watch : undefined;
      const aborted = watch === undefined ? undefined : watch.aborted;
      const error =
        aborted !== undefined
          ? aborted
          : taskError(code, slab.toString('utf8', offset, end), engine.lifecycle.destroyed);
      err = engine.settle(slot, false, error);
    }
    if (err !== undefined) (errors ??= ownArray(0))[errors.length] = err;
    offset = end;
  }
  if (events !== undefined) errors = emitThreadEvents(engine.emitter, events, false, errors);
  const admission = engine.admission;
  // The queue length now: listeners above may have posted.
  if (admission.needsDrain) admission.pump((errors ??= ownArray(0)));
  if (terminated) engine.lifecycle.onTerminated();
  // Listeners threw: each surfaces as an uncaught exception, as an
  // EventEmitter would have thrown it, but only after the whole batch
  // has settled.
  if (errors !== undefined) throwLater(errors);
}

/**
 * Emits the thread events of a batch: the 'spawn' ones (`spawns` true) or
 * the others. A listener's exception is collected into `errors` (returned),
 * as the results' are.
 */
function emitThreadEvents(emitter, events, spawns, errors) {
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    if ((e.type === 'spawn') !== spawns) continue;
    try {
      if (e.type === 'spawnError')
        emitter.emit('spawnError', { error: e.error, threads: e.threads });
      else emitter.emit(e.type, { threadId: e.threadId, threads: e.threads, reason: e.reason });
    } catch (err) {
      (errors ??= ownArray(0))[errors.length] = err;
    }
  }
  return errors;
}

module.exports = { deliver };
