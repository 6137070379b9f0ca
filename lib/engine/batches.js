'use strict';
// Batches in flight: the tasks of a postMany(), postRecords() or map() (lib/engine/batch.js),
// fed to the native queue a chunk per call (wire.js has the slots of a
// chunk), a chunk per turn of the event loop, failed together, settled
// into their sink.

const { WaitQueue } = require('../base/wait-queue');
const { ownArray, grown } = require('../base/own-array');
const { refusalOf } = require('./binary');
const { makeError, closedError } = require('../errors');
const { Batch, elementNamer, groupSize, groupOf } = require('./batch');
const { Records } = require('./records');
const { KERNEL_FACTS } = require('../addon/binding');
const {
  CHUNK,
  MAX_CHUNKS,
  chunkIdOf,
  placeInChunk,
  submitChunk,
  submitRecords,
} = require('./wire');

/** What submit() did: queued everything, stopped at its chunk budget, found the queue full, or failed the batch. */
const FEED = Object.freeze({ done: 0, more: 1, full: 2, failed: 3 });

/** The error code a task cancelled with its batch counts under, when the batch has no error (tidepool/metrics). */
const CANCELLED = Object.freeze({ code: 'ERR_TIDEPOOL_CANCELLED' });

const defineProperty = Reflect.defineProperty;
/** setImmediate as Node has it at load (a test's fake timers must not hold the feed back). */
const { setImmediate: scheduleImmediate } = require('node:timers');

/** Data fed to a batch while it still had some to submit (see feed()). */
class Segment {
  datas;
  base;
  count;
  constructor(datas, base, count) {
    this.datas = datas;
    this.base = base;
    this.count = count;
  }
}

/** Makes a batch's next segment its current data; false if it has none. */
function nextSegment(batch) {
  const segments = batch.segments;
  if (segments === undefined || segments.empty) return false;
  const segment = segments.peek();
  segments.shift();
  batch.segmentTasks -= segment.count;
  batch.datas = segment.datas;
  batch.base = segment.base;
  batch.next = 0;
  batch.end = segment.count;
  return true;
}

/** A chunk of a batch in flight. */
class BatchChunk {
  batch;
  /** Index (in the batch) of the chunk's first message. */
  base;
  /** Holds the snapshots (or Records) native code reads until the chunk's last task settles. */
  datas;
  /** Messages per native task (see groupSize()). */
  group;
  /** Messages queued, and tasks not yet settled. */
  count;
  remaining;
  constructor(batch, base, datas, group, count, remaining) {
    this.batch = batch;
    this.base = base;
    this.datas = datas;
    this.group = group;
    this.count = count;
    this.remaining = remaining;
  }
}

class Batches {
  /** @type {import('./engine').Engine} */
  #engine;
  /** The chunks of batches in flight, by id, and a stack of free ids. */
  #chunks = ownArray(0);
  #freeChunks = ownArray(0);
  #freeChunkCount = 0;
  /** Batches whose chunks go in one per turn of the event loop (see feed()). */
  #feeding = new WaitQueue();
  #feedScheduled = false;

  /** @param {import('./engine').Engine} engine */
  constructor(engine) {
    this.#engine = engine;
  }

  /**
   * A new batch of tasks run with `options`, its own cancel flag, its
   * results going to `sink`; `what` names its messages in errors.
   * @param {import('./post').TaskOptions} options
   */
  open(options, sink, what) {
    const extra = options.extra;
    const batch = new Batch(
      what,
      options.kernel,
      extra === undefined ? undefined : extra.params,
      extra === undefined ? undefined : extra.maxOutputBytes,
      options.timeoutMs ?? 0,
      this.#engine.native.cancelFlag(),
      options.signal,
      sink,
    );
    batch.packed = options.packed;
    // Small messages may share tasks when the kernel says so (its facts'
    // `packing`): a hash's results, of one length, are split by it; a
    // compressor's, of their own lengths, by the lengths told after them
    // (never into one packed Buffer). A decoder's may be large, and a
    // task's outputs are held together until it ends: one a task.
    const packing = KERNEL_FACTS[options.kernel].packing;
    batch.sized = packing === 'sized';
    batch.groupable = packing === 'equal' || (batch.sized && !options.packed);
    return batch;
  }

  /** No batch is being fed. */
  feedingEmpty() {
    return this.#feeding.empty;
  }

  /**
   * Hands the batch `count` checked snapshots, task indices `base...`, and
   * queues its first chunk now; the others follow, a chunk per turn of the
   * event loop (#feedLater), so that a large batch never holds the loop
   * for more than its reading and one chunk. The queueFull policy applies
   * to what does not fit.
   */
  feed(batch, datas, base, count, bytes) {
    const engine = this.#engine;
    batch.bytes += bytes;
    batch.fed += count;
    if (batch.unsubmitted !== 0) {
      // The batch is still being fed, or waits for room (map() pulled more
      // meanwhile): this data follows what it has.
      (batch.segments ??= new WaitQueue()).push(new Segment(datas, base, count));
      batch.segmentTasks += count;
      if (batch.parked) engine.admission.waitingCount += count;
      if (engine.lifecycle.closed) this.fail(batch, batch.base + batch.next, closedError());
      return;
    }
    batch.datas = datas;
    batch.base = base;
    batch.next = 0;
    batch.end = count;
    if (engine.lifecycle.closed) {
      this.fail(batch, base, closedError());
      return;
    }
    // Posts already wait for room (queueFull: 'wait'): the batch waits behind them.
    if (!engine.admission.nobodyWaits()) {
      engine.admission.waitBatch(batch);
      return;
    }
    this.#afterSubmit(batch, this.submit(batch, 1));
  }

  /** map()'s source is exhausted: nothing more will be fed to `batch`. */
  endFeeding(batch) {
    batch.complete = true;
    if (batch.outstanding === 0 && batch.unsubmitted === 0) this.#engine.aborts.forgetBatch(batch);
  }

  /** What follows a submit() that did not queue everything (see FEED). */
  #afterSubmit(batch, outcome) {
    if (outcome === FEED.more) {
      batch.parked = true;
      this.#engine.admission.waitingCount += batch.unsubmitted;
      this.#feeding.push(batch);
      if (!this.#feedScheduled) {
        this.#feedScheduled = true;
        scheduleImmediate(this.#feedLater);
      }
    } else if (outcome === FEED.full) {
      this.#engine.admission.batchFull(batch);
    }
  }

  /** Queues the next chunk of the oldest batch still being fed (one per turn). */
  #feedLater = () => {
    this.#feedScheduled = false;
    const feeding = this.#feeding;
    while (!feeding.empty && feeding.peek().unsubmitted === 0) feeding.shift(); // failed meanwhile
    if (!feeding.empty) {
      const batch = feeding.peek();
      const outcome = this.submit(batch, 1);
      // As in Admission.pump: a refused chunk may have destroyed the pool.
      if (this.#engine.lifecycle.destroyed) return;
      if (outcome !== FEED.more) {
        feeding.shift();
        if (batch.parked) {
          batch.parked = false;
          this.#engine.admission.waitingCount -= batch.unsubmitted;
        }
        this.#afterSubmit(batch, outcome);
      }
    }
    while (!feeding.empty && feeding.peek().unsubmitted === 0) feeding.shift();
    if (!feeding.empty) {
      this.#feedScheduled = true;
      scheduleImmediate(this.#feedLater);
    } else {
      this.#engine.lifecycle.closeIfIdle();
    }
  };

  /**
   * Submits up to `chunks` chunks of the batch's unsubmitted snapshots, one
   * native call each (Infinity: all). Returns a FEED outcome.
   */
  submit(batch, chunks) {
    const engine = this.#engine;
    for (let n = 0; ; n++) {
      if (batch.next === batch.end && !nextSegment(batch)) break;
      if (n === chunks) return FEED.more;
      const start = batch.next;
      const datas = batch.datas;
      // postRecords(): its Records, cut where large records start or end.
      const records = datas instanceof Records ? datas : undefined;
      let count = Math.min(CHUNK, batch.end - start);
      if (records !== undefined) count = records.runOf(start, count);
      const id = this.#chunkId();
      if (id < 0) {
        this.fail(
          batch,
          batch.base + start,
          makeError(
            Error,
            'ERR_TIDEPOOL_QUEUE_FULL',
            `More than ${MAX_CHUNKS} chunks of batches are in flight`,
          ),
        );
        return FEED.failed;
      }
      const group =
        records === undefined
          ? groupSize(batch, count)
          : groupOf(batch, count, records.bytesOf(start, count));
      let tasks;
      try {
        tasks =
          records === undefined
            ? submitChunk(engine.submitMany, batch, id, group, datas, start, count)
            : submitRecords(engine.submitRecords, batch, id, group, records, start, count);
      } catch (err) {
        this.#freeChunks[this.#freeChunkCount++] = id;
        this.#refuseChunk(batch, start, count, err);
        return FEED.failed;
      }
      const queued = Math.min(tasks * group, count);
      if (tasks !== 0)
        this.#chunks[id] = new BatchChunk(batch, batch.base + start, datas, group, queued, tasks);
      else this.#freeChunks[this.#freeChunkCount++] = id;
      engine.pending += queued;
      batch.outstanding += queued;
      batch.next = start + queued;
      if (batch.parked) engine.admission.waitingCount -= queued;
      if (queued < count) {
        engine.admission.needsDrain = true;
        return FEED.full;
      }
    }
    batch.datas = undefined;
    engine.admission.noteQueueLength();
    return FEED.done;
  }

  /** A free chunk id (-1 when all MAX_CHUNKS are in use); the table grows (by doubling) when none is. */
  #chunkId() {
    if (this.#freeChunkCount !== 0) return this.#freeChunks[--this.#freeChunkCount];
    const used = this.#chunks.length;
    if (used === MAX_CHUNKS) return -1;
    const capacity = Math.min(MAX_CHUNKS, Math.max(16, used * 2));
    this.#chunks = grown(this.#chunks, capacity);
    this.#freeChunks = grown(this.#freeChunks, capacity);
    // The new ids, the lowest on top.
    for (let id = capacity - 1; id > used; id--) this.#freeChunks[this.#freeChunkCount++] = id;
    return used;
  }

  /**
   * The results of messages `index...` (`messages` of them, of one length),
   * back to back in `bytes` from `start` to `end`, each to the sink as a
   * result of its own: a view (`bytes` is memory of their own, never the
   * slab) or a string in the pool's encoding.
   */
  #split(batch, index, messages, bytes, start, end) {
    const encoding = this.#engine.encoding;
    const sink = batch.sink;
    // A sized task's lengths follow its outputs, a uint32 each.
    const told = batch.sized ? end - 4 * messages : -1;
    const each = batch.sized ? 0 : (end - start) / messages;
    for (let j = 0, at = start; j < messages; j++) {
      const length = told < 0 ? each : bytes.readUInt32LE(told + 4 * j);
      sink.result(
        index + j,
        encoding === 'buffer'
          ? bytes.subarray(at, at + length)
          : bytes.toString(encoding, at, at + length),
      );
      at += length;
    }
  }

  /** The chunk of a batch's task (its slot is BATCH_SLOT or above). */
  chunkOf(slot) {
    return this.#chunks[chunkIdOf(slot)];
  }

  /**
   * The native side refused a chunk (nothing of it was queued): a binary
   * was detached after it was checked, or the environment is going away.
   * The batch fails with the error a post would have, naming the element.
   */
  #refuseChunk(batch, start, count, err) {
    if (batch.datas instanceof Records) {
      // Its one binary: postRecords()'s `data`.
      this.fail(batch, batch.base + start, refusalOf(err, 'data'));
      return;
    }
    // The refusal says which of the chunk's binaries (`binary`) it was.
    const at = err !== null && typeof err === 'object' ? err.binary : undefined;
    const index = batch.base + start + (typeof at === 'number' && at < count ? at : 0);
    const name = elementNamer(batch.what, false);
    name.at = index;
    this.fail(batch, index, refusalOf(err, name));
  }

  /**
   * A batch fails. Its sink hears `error` once (carrying `index` when a
   * task is the cause; -1: the batch as a whole); its queued tasks leave
   * the queue and settle now, its running ones are told to stop, and those
   * never submitted count as failed. Its other tasks settle quietly.
   */
  fail(batch, index, error) {
    if (!this.#markFailed(batch, index, error)) return;
    if (batch.outstanding !== 0) {
      const removed = this.#engine.native.cancelFlagged(batch.flag);
      for (let i = 0; i < removed.length; i++) this.settleTask(removed[i], false, undefined);
    }
    this.#engine.admission.pumpSoon();
    this.whenStopped(batch, () => batch.sink.fail(index, error));
  }

  /**
   * Runs `fn` once no task of `batch` runs any more: now if none does,
   * else when the last one settles (tasks of a failed batch stop at their
   * next piece). A sink's failure waits for it, so the caller gets its
   * buffers back only once no thread reads them.
   */
  whenStopped(batch, fn) {
    if (batch.outstanding === 0) fn();
    else (batch.whenStopped ??= ownArray(0))[batch.whenStopped.length] = fn;
  }

  /**
   * fail() for every batch of `batches` (as a whole: their signal fired),
   * with their queued tasks taken out of the queue in one native pass for
   * all (a pass per batch would cost batches × queue length). Each sink
   * hears it once every batch is failed and its own running tasks have
   * stopped.
   */
  failAll(batches, error) {
    const failed = ownArray(0);
    const flags = ownArray(0);
    for (let i = 0; i < batches.length; i++) {
      const batch = batches[i];
      if (!this.#markFailed(batch, -1, error)) continue;
      failed[failed.length] = batch;
      if (batch.outstanding !== 0) flags[flags.length] = batch.flag;
    }
    if (flags.length !== 0) {
      const removed = this.#engine.native.cancelAllFlagged(flags);
      for (let i = 0; i < removed.length; i++) this.settleTask(removed[i], false, undefined);
    }
    this.#engine.admission.pumpSoon();
    for (let i = 0; i < failed.length; i++) {
      const batch = failed[i];
      this.whenStopped(batch, () => batch.sink.fail(-1, error));
    }
  }

  /** Fails every batch still being fed (destroy()). */
  failFeeding(error) {
    const feeding = this.#feeding.takeAll();
    for (let i = 0; i < feeding.length; i++) {
      const batch = feeding[i];
      this.fail(batch, batch.base + batch.next, error());
    }
  }

  /**
   * What failing a batch does before its queued tasks leave the queue: its
   * error (with `index`), the tasks never submitted counted as failed and
   * let go, its wait and its signal left. False if it had already failed.
   */
  #markFailed(batch, index, error) {
    if (batch.error !== undefined) return false;
    const engine = this.#engine;
    batch.error = error;
    // Defined, not assigned: an inherited `index` setter must not run here.
    if (index >= 0 && error !== null && typeof error === 'object') {
      defineProperty(
        error,
        'index',
        /** @type {PropertyDescriptor} */ ({
          __proto__: null,
          value: index,
          writable: true,
          enumerable: true,
          configurable: true,
        }),
      );
    }
    const unsubmitted = batch.unsubmitted;
    engine.countFailures(error, unsubmitted);
    batch.next = batch.end;
    batch.datas = undefined;
    batch.segments = undefined;
    batch.segmentTasks = 0;
    if (batch.parked) {
      batch.parked = false;
      engine.admission.waitingCount -= unsubmitted;
    }
    if (batch.waiting !== undefined) {
      batch.waiting.settled = true; // the pump skips it
      batch.waiting = undefined;
    }
    engine.aborts.forgetBatch(batch);
    return true;
  }

  /**
   * Settles one task of a batch: its result goes to the batch's sink, its
   * failure fails the batch. The result of a task of several messages, or
   * of a packed batch's, is `value`'s bytes from `start` to `end`: the
   * results of its messages back to back.
   */
  settleTask(slot, ok, value, start = 0, end = 0) {
    const engine = this.#engine;
    const id = chunkIdOf(slot);
    const chunk = this.#chunks[id];
    const batch = chunk.batch;
    const place = placeInChunk(slot);
    // A packed task's messages: a failed one names the message that failed.
    const group = chunk.group;
    const first = group === 1 ? place : place - (place % group);
    const messages = group === 1 ? 1 : Math.min(group, chunk.count - first);
    if (--chunk.remaining === 0) {
      // Its snapshots may go: no thread reads them any more.
      this.#chunks[id] = undefined;
      this.#freeChunks[this.#freeChunkCount++] = id;
    }
    engine.pending -= messages;
    batch.outstanding -= messages;
    // Packed results that cannot join the others fail their task.
    let error = ok ? undefined : value;
    if (ok && batch.error === undefined && batch.packed) {
      error = batch.sink.packed(chunk.base + first, messages, value, start, end);
    }
    const failed = !ok || error !== undefined;
    if (!failed) engine.completed += messages;
    // A task cancelled with its batch settles without an error of its own:
    // it counts under the batch's (the signal, the failed task), or as
    // cancelled (a map() left early).
    else engine.countFailures(error ?? batch.error ?? CANCELLED, messages);
    if (batch.error === undefined) {
      if (failed) this.fail(batch, chunk.base + (ok ? first : place), error);
      else if (batch.packed) {
        // Its results are in the batch's Buffer already.
      } else if (group === 1) batch.sink.result(chunk.base + place, value);
      else this.#split(batch, chunk.base + first, messages, value, start, end);
    } else if (batch.outstanding === 0 && batch.whenStopped !== undefined) {
      const waiting = batch.whenStopped;
      batch.whenStopped = undefined;
      for (let i = 0; i < waiting.length; i++) waiting[i]();
    }
    if (batch.outstanding === 0 && batch.complete && batch.unsubmitted === 0)
      engine.aborts.forgetBatch(batch);
  }
}

module.exports = { Batches, FEED };
