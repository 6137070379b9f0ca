'use strict';
// The wire between the engine and the native pool: what each raw call
// takes, in what order, and how what comes back is read. src/wire/ is the
// other side of this file (SubmitArgs, SubmitManyArgs, SubmitRecordsArgs, SubmitStepArgs, the
// batch layout, the error codes); a change to one is a change to both.
//
// Slots. A post's task carries the slot (below BATCH_SLOT) of its record in
// the slot table (slots.js). The tasks of a postMany() or map() go a chunk
// per native call: a chunk's tasks have consecutive slots,
// `BATCH_SLOT | id << CHUNK_BITS | i`, so nothing is stored per task: the
// chunk (batches.js) knows its batch, where its tasks' indices start and
// how many are still out.
//
// Delivery. Native code writes each finished task into `meta` (shared, a
// Uint32Array of BATCH_CAPACITY pairs) as [slot, code << 24 | length] and
// its result bytes, back to back, into `slab` (SLAB_BYTES), then calls
// onBatch(count, events, terminated, large, later) (delivery.js). Code 0:
// the result is in the slab; LARGE_CODE: it is the next Buffer of `large`;
// any other code is a TASK_CODES error whose detail (UTF-8) is in the slab,
// decoded by taskError (errors.js).

const { BATCH_CAPACITY, SLAB_BYTES, LARGE_CODE, TASK_CODES } = require('../addon/binding');
const { taskError } = require('../errors');

const applyFunction = Reflect.apply;
const setPrototypeOf = Reflect.setPrototypeOf;

/**
 * The raw calls, as `submitter()`, `batchSubmitter()` and `stepSubmitter()`
 * return them (src/wire/ SubmitArgs, SubmitManyArgs, SubmitStepArgs).
 * @typedef {(slot: number, kernel: number, data: unknown, timeoutMs?: number, flag?: unknown,
 *   params?: unknown, maxOutputBytes?: number, file?: boolean) => number} Submit
 * @typedef {(kernel: number, firstSlot: number, timeoutMs: number, flag: unknown, params: unknown,
 *   maxOutputBytes: number | undefined, group: number, ...binaries: unknown[]) => number} SubmitMany
 * @typedef {(slot: number, stream: unknown, data: unknown, end: number, budget: number, seq: number,
 *   flag?: unknown) => number} SubmitStep
 * @typedef {(kernel: number, firstSlot: number, timeoutMs: number, flag: unknown, params: unknown,
 *   maxOutputBytes: number | undefined, group: number, data: unknown, lengths: number | Float64Array,
 *   start: number, count: number, at: number) => number} SubmitRecords
 */

const CHUNK_BITS = 10;
/** Tasks per native call of a batch, at most. */
const CHUNK = 1 << CHUNK_BITS;
const BATCH_SLOT = 2 ** 31;
/** Chunk ids fit the 21 bits between BATCH_SLOT and a task's place in its chunk. */
const MAX_CHUNKS = 2 ** (31 - CHUNK_BITS);

/** The first slot of chunk `id`. */
function chunkSlot(id) {
  return BATCH_SLOT + id * CHUNK;
}

/** The chunk id of a batch task's slot. */
function chunkIdOf(slot) {
  return (slot >>> CHUNK_BITS) & (MAX_CHUNKS - 1);
}

/** A batch task's place in its chunk. */
function placeInChunk(slot) {
  return slot & (CHUNK - 1);
}

/** The result's length in a meta word (src/wire/ LENGTH_MASK). */
function resultLength(word) {
  return word & 0xffffff;
}

/** The outcome in a meta word (src/wire/ CODE_SHIFT): 0, LARGE_CODE or a TASK_CODES error. */
function resultCode(word) {
  return word >>> 24;
}

/**
 * Submits one post (`submitter()`'s function) or one step of a stream
 * (`stepSubmitter()`'s): returns the queue's length after, 0 if it was
 * full. Arguments, in order:
 *   submit(slot, kernel, input[, timeoutMs, flag[, params, maxOutputBytes, file]])
 *     timeoutMs 0: none; flag: the cancel flag of the post's signal
 *     (aborts.js flagOf(), undefined without one); params a handle
 *     (params.js) or undefined; maxOutputBytes undefined: the pool's;
 *     file: `input` is a path's bytes (postFile()).
 *   submitStep(slot, stream, input, end, budget, seq, flag)
 *     a stream's handle; end 0 (END_MORE), a flush kind, or -1 (END_LAST,
 *     streams/tasks.js LAST); the output after which the step stops; the
 *     chunk's number; its signal's cancel flag.
 * The shortest form that says everything is used: most posts carry nothing
 * but slot, kernel and input.
 * @param {Submit} submit
 * @param {SubmitStep} submitStep
 * @param {number} slot
 * @param {import('./post').Post} post
 * @param {unknown} flag
 */
function submitPost(submit, submitStep, slot, post, flag) {
  const step = post.step;
  if (step !== undefined)
    return submitStep(slot, step.handle, post.data, step.end, step.budget, step.seq, flag);
  const o = post.options;
  const extra = o.extra;
  if (extra !== undefined) {
    return submit(
      slot,
      o.kernel,
      post.data,
      o.timeoutMs ?? 0,
      flag,
      extra.params,
      extra.maxOutputBytes,
      extra.file,
    );
  }
  if (flag === undefined && o.timeoutMs === undefined) return submit(slot, o.kernel, post.data);
  return submit(slot, o.kernel, post.data, o.timeoutMs ?? 0, flag);
}

/**
 * Submits `count` snapshots `datas[start...]` of a batch as chunk `id`
 * (`batchSubmitter()`'s function), `group` of them per task: returns
 * how many tasks were queued (the queue may fill part way). Arguments, in
 * order:
 *   submitMany(kernel, firstSlot, timeoutMs, flag, params, maxOutputBytes, group, ...inputs)
 * The inputs go as arguments, in an Array without holes or prototype,
 * which V8 spreads fastest. A task of `group` inputs (above 1: packed) has
 * its first input's slot; when it fails, its completion has the slot of
 * the input that failed.
 * @param {SubmitMany} submitMany
 */
function submitChunk(submitMany, batch, id, group, datas, start, count) {
  const args = chunkArgs;
  // Shorter: cut. Longer: filled in order below, so no hole.
  if (args.length > 7 + count) args.length = 7 + count;
  args[0] = batch.kernel;
  args[1] = chunkSlot(id);
  args[2] = batch.timeoutMs;
  args[3] = batch.flag;
  args[4] = batch.params;
  args[5] = batch.maxOutputBytes;
  args[6] = group;
  for (let i = 0; i < count; i++) args[7 + i] = datas[start + i];
  try {
    return applyFunction(submitMany, undefined, args);
  } finally {
    // Nothing of the caller's is held here after the call.
    for (let i = 3; i < args.length; i++) args[i] = undefined;
  }
}

/**
 * Submits records `start...` (`count` of them) of a postRecords() as chunk
 * `id` (`recordsSubmitter()`'s function), as submitChunk() submits
 * snapshots:
 *   submitRecords(kernel, firstSlot, timeoutMs, flag, params, maxOutputBytes, group,
 *     data, lengths, start, count, at)
 * `lengths` every record's length, or the Float64Array of their offsets;
 * `data` what the records span (records.js spanOf()), beginning at byte
 * `at` of the whole.
 * @param {SubmitRecords} submitRecords
 * @param {import('./records').Records} records
 */
function submitRecords(submitRecords, batch, id, group, records, start, count) {
  const span = records.spanOf(start, count);
  return submitRecords(
    batch.kernel,
    chunkSlot(id),
    batch.timeoutMs,
    batch.flag,
    batch.params,
    batch.maxOutputBytes,
    group,
    span.data,
    records.lengths,
    start,
    count,
    span.at,
  );
}

/**
 * submitChunk()'s argument list, one for every call (the native side only
 * reads it, and runs no JavaScript): a chunk's list of a thousand
 * arguments is not garbage per call. Without a prototype, no hole.
 */
const chunkArgs = [];
setPrototypeOf(chunkArgs, null);

/** The error of `streamInline()`'s failure, "CODE detail" (code a TASK_CODES number). */
function inlineError(text) {
  const space = text.indexOf(' ');
  return taskError(Number(text.slice(0, space)), text.slice(space + 1), false);
}

module.exports = {
  BATCH_CAPACITY,
  SLAB_BYTES,
  LARGE_CODE,
  TASK_CODES,
  CHUNK,
  BATCH_SLOT,
  MAX_CHUNKS,
  chunkIdOf,
  placeInChunk,
  resultLength,
  resultCode,
  submitPost,
  submitChunk,
  submitRecords,
  taskError,
  inlineError,
};
