'use strict';
// What a stream's tasks queue and run (lib/streams/tasks.js): an Item (a
// written chunk, a flush marker, an update() copy, the end), the chunk in
// flight and which queued items make one, and calling their callbacks
// back, whether the chunk ran or the stream failed. Records and their
// rules, apart from the machinery that moves them, so both read on their
// own.

const { ownArray } = require('../base/own-array');
const { throwLater } = require('../errors');

/** `end` of the last chunk (the stream's finish). */
const LAST = -1;

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

/** Something queued for the stream's tasks. */
class Item {
  /** A binary (read in place), or undefined for a flush or the end. */
  data;
  bytes;
  /** 0; a flush kind; LAST. */
  end;
  /** Called once the item was consumed (or the stream failed), or undefined. */
  callback;
  /** Bytes of staging memory (update() copies) this item holds. */
  staged;
  /** Work given while the pool was open: a closed pool still runs it. */
  accepted;
  /** The staging block `data` is a view of, reused once the item ran. */
  block = undefined;
  constructor(data, bytes, end, callback, staged, accepted) {
    this.data = data;
    this.bytes = bytes;
    this.end = end;
    this.callback = callback;
    this.staged = staged;
    this.accepted = accepted;
  }
}

/** The chunk in flight (the core's StreamChunk): its number, input, end and items. */
class StreamChunk {
  seq;
  input;
  end;
  items;
  /** Every item is accepted work (a closed pool still runs it). */
  accepted;
  /** What stops this chunk's steps (destroy(), or a takeover by #inline): the stream's StepWatch when it first ran. */
  watch = undefined;
  /** A task of it is in the pool (not yet settled). */
  inFlight = false;
  /** 1 once #inline took it over. */
  stale = 0;
  constructor(seq, input, end, items, accepted) {
    this.seq = seq;
    this.input = input;
    this.end = end;
    this.items = items;
    this.accepted = accepted;
  }
}

/**
 * The next chunk, numbered `seq`: the items at the front of `queue` (not
 * empty) up to a flush or the end, their bytes read as one input.
 */
function takeChunk(queue, seq) {
  // Most chunks are one item (a write, or a body with the end): sized to
  // it, and the input is that item's data, no Array of one.
  const items = ownArray(1);
  let count = 0;
  let input;
  let datas;
  let end = 0;
  let accepted = false;
  while (!queue.empty) {
    const item = queue.peek();
    // Work given before the pool's close() and work given after it are
    // never one chunk: the first still runs, the second is refused.
    if (count !== 0 && item.accepted !== accepted) break;
    queue.shift();
    items[count++] = item;
    accepted = item.accepted;
    if (item.bytes !== 0) {
      if (input === undefined) input = item.data;
      else {
        if (datas === undefined) {
          datas = ownArray(0);
          datas[0] = input;
        }
        datas[datas.length] = item.data;
      }
    }
    if (item.end !== 0) {
      end = item.end;
      break;
    }
  }
  return new StreamChunk(seq, datas ?? input ?? NO_DATA, end, items, accepted);
}

/** The input of a chunk of no bytes (a flush, or the end alone). */
const NO_DATA = Object.freeze(ownArray(0));

/** The callbacks of `items`, in a new Array or appended to `into`. */
function callbacksOf(items, into) {
  if (into !== undefined) {
    for (let i = 0; i < items.length; i++)
      if (items[i].callback !== undefined) into[into.length] = items[i].callback;
    return into;
  }
  // Sized to the items, then cut: no growth for the usual one or two.
  const callbacks = ownArray(items.length);
  let count = 0;
  for (let i = 0; i < items.length; i++)
    if (items[i].callback !== undefined) callbacks[count++] = items[i].callback;
  callbacks.length = count;
  return callbacks;
}

/**
 * Calls back `items` of a failed stream: the writes with `err`, or without
 * an error when it was destroyed (as node:zlib calls back a write its
 * destroy() cut short: no thread reads it any more); the end always with
 * `err` (the output it was asked for will not come).
 */
function failItems(items, err, destroyed) {
  const writes = ownArray(0);
  const ends = ownArray(0);
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item.callback === undefined) continue;
    if (item.end === LAST) ends[ends.length] = item.callback;
    else writes[writes.length] = item.callback;
  }
  callAll(writes, destroyed ? undefined : err);
  callAll(ends, err);
}

module.exports = { LAST, Item, takeChunk, callAll, callbacksOf, failItems };
