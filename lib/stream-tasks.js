'use strict';
// The tasks of one stream of the pool (createHash, createGzip...): its
// chunks on their way to the pool's threads, its output and callbacks on
// the way back. The kernel's state stays in Rust between tasks (the core's
// stream.rs, which also says how a chunk may take several steps).
//
// The contract kept is Node's Writable one: a write's callback runs once
// its bytes were consumed (a task ran over them and its output was handed
// on) and no thread will read them again; the caller may then reuse the
// memory. So a write waits for its task, and the Writable's own buffer
// (its highWaterMark) is what holds the writes that come meanwhile: they
// reach `write()` together (`_writev`) and go as one task.
//
// One chunk of a stream is in flight at a time, so its chunks run in order,
// each on whichever thread is free. A chunk is every item queued up to a
// flush or the end, read in place as one input. A step of a chunk stops once
// its output passes the reader's room (`budget`): the output is handed on,
// and the same chunk runs again where it stopped, at once if the reader
// still has room, else when it reads (`resume()`). Memory stays near the
// reader's highWaterMark plus one piece of output, whatever the ratio.
//
// A hash's `update()` (node:crypto's is synchronous: its caller reuses the
// buffer as soon as it returns) copies the bytes into a staging area of at
// most STAGING_CAP bytes that the pool hashes; past the cap, or for a small
// update while nothing is in flight, the hash runs on the calling thread,
// taking over the chunk in flight (Rust stops it at its next piece), so
// memory stays bounded whatever the caller does.

const { Buffer } = require('node:buffer');
const { snapshot, readableBytes } = require('./binary');
const { ownArray } = require('./own-array');
const { WaitQueue } = require('./wait-queue');
const { invalidArgType, invalidArgValue, throwLater } = require('./errors');

const isEncoding = Buffer.isEncoding;
const bufferFrom = Buffer.from;
const allocUnsafeSlow = Buffer.allocUnsafeSlow;
const isArray = Array.isArray;
const nextTick = process.nextTick;
const Uint8ArrayCtor = Uint8Array;
const { isAnyArrayBuffer } = require('node:util').types;

/** `end` of the last chunk (the stream's finish). */
const LAST = -1;
/** The method a stream's signal calls when it fires: `stream[ABORT](err)` (index.js). */
const ABORT = Symbol('tidepool.abort');
/** What a step did (the core's stream.rs Outcome; 0 is done). */
const PAUSED = 1;
const ENDED = 2;
/**
 * Staged bytes of `update()` the pool may hash at a time; past it, update()
 * hashes on the calling thread. See BENCHMARKS.md ("createHash update()").
 */
const STAGING_CAP = 4 << 20;
/** An update() of at most this many bytes while nothing is in flight hashes at once. */
const INLINE_BYTES = 16 << 10;

/**
 * Calls `callbacks` with `err`. One that throws (user code behind a
 * Writable's callback) surfaces as an uncaught exception, as it would from
 * any stream, after the others have run.
 */
function callAll(callbacks, err) {
  let thrown;
  for (let i = 0; i < callbacks.length; i++) {
    try {
      callbacks[i](err);
    } catch (e) {
      (thrown ??= ownArray(0))[thrown.length] = e;
    }
  }
  if (thrown !== undefined) throwLater(thrown);
}

/** A chunk as a task reads it: a string encoded, a binary checked (one binary, not an Array). */
function chunkOf(data, inputEncoding) {
  if (typeof data === 'string') {
    if (inputEncoding !== undefined && (typeof inputEncoding !== 'string' || !isEncoding(inputEncoding))) {
      throw invalidArgValue('inputEncoding', `is not a known encoding (${String(inputEncoding)})`);
    }
    return bufferFrom(data, inputEncoding);
  }
  if (isArray(data)) {
    throw invalidArgType('data', 'of type string or an instance of Buffer, TypedArray, DataView or ArrayBuffer', data);
  }
  const chunk = snapshot(data, 'data');
  readableBytes(chunk, 'data');
  return chunk;
}

/** A copy of a checked binary's bytes, in memory of our own. */
function copyOf(chunk, bytes) {
  const copy = allocUnsafeSlow(bytes);
  const view = isAnyArrayBuffer(chunk) ? new Uint8ArrayCtor(chunk) : new Uint8ArrayCtor(chunk.buffer, chunk.byteOffset, bytes);
  copy.set(view);
  return copy;
}

/** Something queued for the stream's tasks. */
class Item {
  /** A binary (read in place), or undefined for a flush or the end. */
  data;
  bytes;
  /** 0; a flush kind; LAST. */
  end;
  /** Called once the item was consumed (or the stream failed), or undefined. */
  callback;
  /** Bytes of a staged copy (update()) this item holds. */
  staged;
  constructor(data, bytes, end, callback, staged) {
    this.data = data;
    this.bytes = bytes;
    this.end = end;
    this.callback = callback;
    this.staged = staged;
  }
}

/** The chunk in flight: its number, input, end and items. */
class Chunk {
  seq;
  input;
  end;
  items;
  /** 1 once #inline took it over. */
  stale = 0;
  constructor(seq, input, end, items) {
    this.seq = seq;
    this.input = input;
    this.end = end;
    this.items = items;
  }
}

class StreamTasks {
  /** What the pool lends (index.js #streamPort): step, report, inline, inlineError, finishing, finished. */
  #port;
  #handle;
  /**
   * The stream's side: output(buffer, last) -> whether its reader has room
   * (`last`: the stream's last chunk wrote it), ended(), failed(err),
   * budget().
   */
  #hooks;
  /** The error of a write after finish() (the owner's: ERR_CRYPTO_HASH_FINALIZED for a hash). */
  #lateWrite;
  #queue = new WaitQueue();
  #running = undefined;
  #seq = 0;
  /** A step that paused for a full reader, run again by resume(). */
  #waiting = undefined;
  /**
   * The callbacks of a chunk that ran while its output filled the reader:
   * as Transform holds a write's callback, they wait for resume(), and no
   * chunk starts meanwhile.
   */
  #held = undefined;
  /** finish() was called: nothing more is queued. */
  #sealed = false;
  /** The last chunk ran: the stream is over. */
  #done = false;
  /** The kernel's format ended (a decoder): nothing more is read. */
  #ended = false;
  #error = undefined;
  /** The stream was destroyed: a write in flight is called back without an error once its task stopped, as node:zlib does. */
  #destroyed = false;
  /** Bytes the kernel took in all (bytesWritten). */
  #consumed = 0;
  /** Bytes of update() copies not yet hashed. */
  #staged = 0;
  /**
   * Steps taken over by #inline whose tasks have not settled: while one
   * has not, the event loop has not turned since update() last hashed on
   * the calling thread, and copies would only wait behind it.
   */
  #stale = 0;
  /** The pool counts this stream as one close() waits for. */
  #finishing = false;
  /** Stops the step in flight (its task is posted with this signal). */
  #own = new AbortController();

  constructor(port, handle, hooks, lateWrite) {
    this.#port = port;
    this.#handle = handle;
    this.#hooks = hooks;
    this.#lateWrite = lateWrite;
  }

  /** Nothing more is taken (finished, failed or destroyed). */
  get closed() {
    return this.#sealed || this.#error !== undefined;
  }

  get error() {
    return this.#error;
  }

  /** The signal of this stream's tasks (aborted when it fails). */
  get signal() {
    return this.#own.signal;
  }

  /** Input bytes the kernel took in all. */
  get consumed() {
    return this.#consumed;
  }

  /** Whether the pool's close() waits for this stream: its end was asked for before. */
  get accepted() {
    return this.#finishing;
  }

  /**
   * The stream's end was asked for (end(), digest()): a pool closed from
   * now on finishes it first.
   */
  finishing() {
    if (this.#finishing || this.#done || this.#error !== undefined) return;
    this.#finishing = this.#port.finishing(this);
  }

  /**
   * A Writable's chunks ({ chunk, encoding } each; an `end` of its own for
   * a flush marker): checked all first (the callback gets the first
   * refusal), then queued; `callback` once they were consumed.
   */
  write(chunks, callback, flushKind) {
    if (this.#sealed || this.#error !== undefined) {
      callback(this.#error ?? this.#lateWrite());
      return;
    }
    const items = ownArray(chunks.length);
    try {
      for (let i = 0; i < chunks.length; i++) {
        const { chunk, encoding } = chunks[i];
        const kind = flushKind(chunk);
        if (kind >= 0) {
          items[i] = new Item(undefined, 0, kind, undefined, 0);
        } else {
          const data = chunkOf(chunk, encoding === 'buffer' ? undefined : encoding);
          items[i] = new Item(data, readableBytes(data, 'data'), 0, undefined, 0);
        }
      }
    } catch (err) {
      callback(err);
      return;
    }
    if (items.length === 0) {
      callback();
      return;
    }
    items[items.length - 1].callback = callback;
    for (let i = 0; i < items.length; i++) this.#queue.push(items[i]);
    this.#kick();
  }

  /**
   * update(): `chunk` (checked by chunkOf) copied and queued, or hashed
   * here (see the top of this file). Throws the stream's error.
   */
  update(chunk) {
    const bytes = readableBytes(chunk, 'data');
    if (bytes === 0) return;
    const idle = this.#running === undefined && this.#queue.empty;
    if ((idle && bytes <= INLINE_BYTES) || this.#stale !== 0) {
      this.#inline(chunk);
    } else if (this.#staged + bytes <= STAGING_CAP) {
      this.#staged += bytes;
      this.#queue.push(new Item(copyOf(chunk, bytes), bytes, 0, undefined, bytes));
      this.#kick();
    } else {
      this.#inline(chunk);
    }
  }

  /** The end: `callback(err)` once the last chunk ran (its output handed on first). */
  finish(callback) {
    if (this.#error !== undefined) {
      callback(this.#error);
      return;
    }
    this.finishing();
    this.#sealed = true;
    this.#queue.push(new Item(undefined, 0, LAST, callback, 0));
    this.#kick();
  }

  /** The reader wants more: a step that paused for it goes on, or held callbacks run. */
  resume() {
    if (this.#error !== undefined) return;
    const waiting = this.#waiting;
    const held = this.#held;
    if (waiting !== undefined) {
      this.#waiting = undefined;
      this.#step(waiting);
    } else if (held !== undefined) {
      this.#held = undefined;
      this.#kick();
      callAll(held, undefined);
    }
  }

  /**
   * Ends the stream with `err` (the first error wins): what is queued is
   * called back now with it (or without an error when `destroyed`, as
   * node:zlib calls back a write its destroy() cut short); the chunk in
   * flight is stopped (its task is cancelled), and called back once its
   * task has settled, when no thread reads it any more.
   */
  fail(err, destroyed = false) {
    if (this.#error !== undefined) return;
    this.#error = err;
    this.#destroyed = destroyed;
    this.#waiting = undefined;
    // Held callbacks: their bytes were consumed.
    const held = this.#held;
    this.#held = undefined;
    if (held !== undefined) callAll(held, undefined);
    const queued = this.#queue.takeAll();
    this.#staged = 0;
    this.#over();
    const callbacks = ownArray(0);
    for (let i = 0; i < queued.length; i++) if (queued[i].callback !== undefined) callbacks[callbacks.length] = queued[i].callback;
    // The task in flight stops at its next piece; its callbacks wait for it.
    if (this.#running !== undefined) this.#own.abort(err);
    callAll(callbacks, destroyed ? undefined : err);
  }

  /** The stream is over for the pool's close(). */
  #over() {
    if (!this.#finishing) return;
    this.#finishing = false;
    this.#port.finished(this);
  }

  /** Starts the next chunk if none is in flight. */
  #kick() {
    if (this.#running !== undefined || this.#error !== undefined || this.#queue.empty) return;
    const queue = this.#queue;
    if (this.#ended) {
      // Nothing more is read: each item is consumed as it comes.
      const callbacks = ownArray(0);
      let last = false;
      while (!queue.empty) {
        const item = queue.peek();
        queue.shift();
        this.#staged -= item.staged;
        last ||= item.end === LAST;
        if (item.callback !== undefined) callbacks[callbacks.length] = item.callback;
      }
      if (last) this.#finished();
      callAll(callbacks, undefined);
      return;
    }
    const items = ownArray(0);
    const datas = ownArray(0);
    let end = 0;
    while (!queue.empty) {
      const item = queue.peek();
      queue.shift();
      items[items.length] = item;
      if (item.bytes !== 0) datas[datas.length] = item.data;
      if (item.end !== 0) {
        end = item.end;
        break;
      }
    }
    const input = datas.length === 1 ? datas[0] : datas;
    this.#running = new Chunk(this.#seq++, input, end, items);
    this.#step(this.#running);
  }

  /** Runs one step of `chunk`. */
  #step(chunk) {
    let task;
    try {
      task = this.#port.step(this, this.#handle, chunk.input, chunk.end, this.#hooks.budget(), chunk.seq);
    } catch (err) {
      // Refused at once (the pool closed, the chunk detached): the stream
      // fails as if the task had.
      task = Promise.reject(err);
    }
    task.then(
      (output) => this.#stepped(chunk, output),
      (err) => this.#stepFailed(chunk, err),
    );
  }

  #stepped(chunk, output) {
    if (chunk !== this.#running) {
      this.#stale -= chunk.stale; // taken over by #inline
      return;
    }
    if (this.#error !== undefined) {
      this.#settleFailed(chunk);
      return;
    }
    const report = this.#port.report(this.#handle);
    const outcome = report % 4;
    this.#consumed = (report - outcome) / 4;
    const room = this.#hooks.output(output, chunk.end === LAST && outcome !== PAUSED);
    // The output's reader may have destroyed the stream.
    if (this.#error !== undefined) {
      this.#settleFailed(chunk);
      return;
    }
    if (outcome === PAUSED) {
      if (room) this.#step(chunk);
      else this.#waiting = chunk;
      return;
    }
    this.#running = undefined;
    const callbacks = ownArray(0);
    const items = chunk.items;
    let last = false;
    for (let i = 0; i < items.length; i++) {
      this.#staged -= items[i].staged;
      last ||= items[i].end === LAST;
      if (items[i].callback !== undefined) callbacks[callbacks.length] = items[i].callback;
    }
    if (outcome === ENDED && !this.#ended) {
      this.#ended = true;
      this.#hooks.ended();
    }
    if (last) this.#finished();
    if (!room && !last && !this.#ended) {
      this.#held = callbacks;
      return;
    }
    this.#kick();
    callAll(callbacks, undefined);
  }

  #stepFailed(chunk, err) {
    if (chunk !== this.#running) {
      this.#stale -= chunk.stale; // taken over by #inline: its stream goes on
      return;
    }
    const first = this.#error === undefined;
    if (first) {
      this.fail(err);
      this.#hooks.failed(err);
    }
    this.#settleFailed(chunk);
  }

  /** The chunk in flight of a failed stream has settled: its callbacks run. */
  #settleFailed(chunk) {
    this.#running = undefined;
    const callbacks = ownArray(0);
    const items = chunk.items;
    for (let i = 0; i < items.length; i++) if (items[i].callback !== undefined) callbacks[callbacks.length] = items[i].callback;
    callAll(callbacks, this.#destroyed ? undefined : this.#error);
  }

  #finished() {
    this.#done = true;
    this.#over();
  }

  /**
   * Hashes on this thread the chunk in flight (from where its task got to),
   * everything queued, then `chunk`. Throws the error that ends the stream.
   */
  #inline(chunk) {
    const running = this.#running;
    this.#waiting = undefined;
    const queued = this.#queue.takeAll();
    const rest = ownArray(0);
    for (let i = 0; i < queued.length; i++) if (queued[i].bytes !== 0) rest[rest.length] = queued[i].data;
    rest[rest.length] = chunk;
    const result =
      running === undefined
        ? this.#port.inline(this.#handle, -1, undefined, rest)
        : this.#port.inline(this.#handle, running.seq, running.input, rest);
    if (typeof result === 'string') {
      const err = this.#port.inlineError(result);
      this.fail(err);
      this.#hooks.failed(err);
      throw err;
    }
    // Everything up to `chunk` is taken: the task in flight, if it has not
    // run yet, will find its chunk done and do nothing.
    this.#running = undefined;
    if (running !== undefined) {
      running.stale = 1;
      this.#stale++;
    }
    this.#staged = 0;
    const callbacks = ownArray(0);
    if (running !== undefined) {
      for (let i = 0; i < running.items.length; i++)
        if (running.items[i].callback !== undefined) callbacks[callbacks.length] = running.items[i].callback;
    }
    for (let i = 0; i < queued.length; i++) if (queued[i].callback !== undefined) callbacks[callbacks.length] = queued[i].callback;
    this.#hooks.output(result, false);
    // Write callbacks of the chunks taken: later, not inside update().
    if (callbacks.length !== 0) nextTick(callAll, callbacks, undefined);
  }
}

module.exports = { StreamTasks, chunkOf, ABORT };
