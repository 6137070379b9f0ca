'use strict';
// The records of one postRecords(): a binary's snapshot and where each
// record lies in it. It stands where a batch's snapshots stand (a Batch's
// `datas`, a chunk's hold on what native code reads), and batches.js
// cuts it into chunks.

/** A record this long or longer runs as a task of its own. */
const ALONE_BYTES = 16 * 1024;

class Records {
  /** The binary (a snapshot, checked), and the records' count. */
  data;
  count;
  /** Every record's length, or 0 when `offsets` says where each lies. */
  fixed;
  /** Float64Array: record `i` is bytes `offsets[i]` to `offsets[i + 1]`. */
  offsets;

  constructor(data, count, fixed, offsets) {
    this.data = data;
    this.count = count;
    this.fixed = fixed;
    this.offsets = offsets;
  }

  /** What submitRecords takes as `lengths`: the fixed length, or the offsets. */
  get lengths() {
    return this.fixed !== 0 ? this.fixed : this.offsets;
  }

  /** Bytes of records `start` to `start + count - 1`. */
  bytesOf(start, count) {
    if (this.fixed !== 0) return this.fixed * count;
    return this.offsets[start + count] - this.offsets[start];
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

  /** True if the record at `start` runs as a task of its own. */
  isLarge(start) {
    return this.bytesOf(start, 1) >= ALONE_BYTES;
  }
}

module.exports = { Records, ALONE_BYTES };
