'use strict';
// Posts waiting for room in a full queue (queueFull: 'wait'), oldest first:
// a ring of own-element slots (lib/base/own-array.js) between `#head` and
// `#tail`, grown by doubling, so taking from the front is O(1) and no read
// or write goes near Array.prototype. The ring is made at the first push:
// a stream's queue that never holds anything costs no slots.

const { ownArray, grown } = require('./own-array');

/** Slots of a queue's first ring. */
const FIRST_RING = 4;

class WaitQueue {
  #entries = undefined;
  #head = 0;
  #tail = 0;

  get empty() {
    return this.#head === this.#tail;
  }

  push(entry) {
    if (this.#entries === undefined) this.#entries = ownArray(FIRST_RING);
    else if (this.#tail === this.#entries.length) {
      if (this.#head !== 0) this.#compact();
      else this.#entries = grown(this.#entries, this.#entries.length * 2);
    }
    this.#entries[this.#tail++] = entry;
  }

  /** The oldest entry (the queue must not be empty). */
  peek() {
    return this.#entries[this.#head];
  }

  /** Drops the oldest entry; nothing when the queue is empty. */
  shift() {
    if (this.#head === this.#tail) return;
    this.#entries[this.#head++] = undefined;
    if (this.#head === this.#tail) this.#head = this.#tail = 0;
  }

  /** Empties the queue; returns what it held, oldest first. */
  takeAll() {
    const head = this.#head;
    const entries = this.#entries;
    const rest = ownArray(this.#tail - head, (i) => entries[head + i]);
    this.#entries = undefined;
    this.#head = this.#tail = 0;
    return rest;
  }

  /** Moves the live entries to the front. */
  #compact() {
    const live = this.#tail - this.#head;
    for (let i = 0; i < live; i++) {
      this.#entries[i] = this.#entries[this.#head + i];
      this.#entries[this.#head + i] = undefined;
    }
    this.#head = 0;
    this.#tail = live;
  }
}

module.exports = { WaitQueue };
