'use strict';
// The slot table: the Post of every post() task that native code holds,
// by slot. Holding the Post keeps its message and input snapshot
// reachable, since Rust threads read that memory in place, until the task
// settles. A slot is reused once its task settled.

const { ownArray, grown } = require('../base/own-array');

class SlotTable {
  /** The Post of each slot in use; own-element Arrays (lib/base/own-array.js), grown together. */
  #posts = ownArray(0);
  /** A stack of `#freeCount` slots free for reuse. */
  #free = ownArray(0);
  #freeCount = 0;
  #next = 0;
  #capacity = 0;

  /** A slot for a task about to be submitted: a free one, else a new one. */
  acquire() {
    if (this.#freeCount !== 0) return this.#free[--this.#freeCount];
    const slot = this.#next++;
    if (slot === this.#capacity) {
      const capacity = Math.max(64, this.#capacity * 2);
      this.#posts = grown(this.#posts, capacity);
      this.#free = grown(this.#free, capacity);
      this.#capacity = capacity;
    }
    return slot;
  }

  /** An acquired slot whose task was not queued. */
  giveBack(slot) {
    this.#free[this.#freeCount++] = slot;
  }

  /** `post` was queued in `slot`. */
  hold(slot, post) {
    this.#posts[slot] = post;
  }

  /** The Post in `slot`. */
  get(slot) {
    return this.#posts[slot];
  }

  /** The Post in `slot`, let go: its task settles now and the slot is free. */
  release(slot) {
    const post = this.#posts[slot];
    this.#posts[slot] = undefined;
    this.#free[this.#freeCount++] = slot;
    return post;
  }
}

module.exports = { SlotTable };
