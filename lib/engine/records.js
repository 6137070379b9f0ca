'use strict';
// The records of one postRecords(): a binary's snapshot and where each
// record lies in it. It stands where a batch's snapshots stand (a Batch's
// `datas`, a chunk's hold on what native code reads), and batches.js
// cuts it into chunks.
//
// An Array of binaries is read as their concatenation. Its parts are made
// fixed-length views at the call (a length-tracking view of a growable
// SharedArrayBuffer must not grow a part between two chunks), and each
// chunk hands native code only the parts its records span, so a chunk
// costs the parts it reads, not all of them.

/** A record this long or longer runs as a task of its own. */
const ALONE_BYTES = 16 * 1024;

const { fixedBytes } = require('./binary');
const { ownArray } = require('../base/own-array');

const isArray = Array.isArray;
const Float64ArrayCtor = Float64Array;
const EMPTY = new Uint8Array(0);

class Records {
  /** The binary (a snapshot, checked), and the records' count. */
  data;
  count;
  /** For an Array `data`: its parts as fixed-length views, and where each ends. */
  parts = undefined;
  partEnds = undefined;
  /** Every record's length, or 0 when `offsets` says where each lies. */
  fixed;
  /** Float64Array: record `i` is bytes `offsets[i]` to `offsets[i + 1]`. */
  offsets;

  constructor(data, count, fixed, offsets) {
    this.data = data;
    this.count = count;
    this.fixed = fixed;
    this.offsets = offsets;
    if (isArray(data)) {
      const parts = ownArray(data.length);
      const ends = new Float64ArrayCtor(data.length);
      let at = 0;
      for (let i = 0; i < data.length; i++) {
        const view = fixedBytes(data[i]);
        parts[i] = view;
        at += view.byteLength;
        ends[i] = at;
      }
      this.parts = parts;
      this.partEnds = ends;
    }
  }

  /** Byte offset of record `index` (`count`: the end of the last). */
  offsetOf(index) {
    return this.fixed !== 0 ? this.fixed * index : this.offsets[index];
  }

  /**
   * What native code reads for records `start` to `start + count - 1`:
   * `{ data, at }`, the binary (or the parts of an Array that they span)
   * and the byte offset in the whole where it begins.
   */
  spanOf(start, count) {
    const parts = this.parts;
    if (parts === undefined) return { data: this.data, at: 0 };
    const from = this.offsetOf(start);
    const to = this.offsetOf(start + count);
    if (from === to) return { data: EMPTY, at: from };
    const ends = this.partEnds;
    // The first part that ends past `from`, the first that ends at or past `to`.
    const first = firstEndingPast(ends, from);
    const last = firstEndingPast(ends, to - 1);
    return {
      data: first === last ? parts[first] : ownArray(last - first + 1, (k) => parts[first + k]),
      at: first === 0 ? 0 : ends[first - 1],
    };
  }

  /** What submitRecords takes as `lengths`: the fixed length, or the offsets. */
  get lengths() {
    return this.fixed !== 0 ? this.fixed : this.offsets;
  }

  /** Bytes of records `start` to `start + count - 1`. */
  bytesOf(start, count) {
    return this.offsetOf(start + count) - this.offsetOf(start);
  }

  /**
   * How many records from `start` (at most `max`) go in one chunk: the
   * run of records on the same side of ALONE_BYTES as the first, so that
   * a large record never shares a task with small ones.
   */
  runOf(start, max) {
    if (this.fixed !== 0) return max;
    const offsets = this.offsets;
    const alone = offsets[start + 1] - offsets[start] >= ALONE_BYTES;
    let end = start + 1;
    const last = start + max;
    while (end < last && offsets[end + 1] - offsets[end] >= ALONE_BYTES === alone) end++;
    return end - start;
  }
}

/** The index of the first of ascending `ends` above `offset`. */
function firstEndingPast(ends, offset) {
  let low = 0;
  let high = ends.length - 1;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (ends[mid] > offset) high = mid;
    else low = mid + 1;
  }
  return low;
}

module.exports = { Records };
