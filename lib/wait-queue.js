'use strict';
// Posts waiting for room in a full queue (queueFull: 'wait'), oldest first.
// A plain array with a moving head: taking from the front is O(1), and the
// array is reset whenever it empties.

class WaitQueue {
  #entries = [];
  #head = 0;

  get empty() {
    return this.#head === this.#entries.length;
  }

  push(entry) {
    this.#entries.push(entry);
  }

  /** The oldest entry (the queue must not be empty). */
  peek() {
    return this.#entries[this.#head];
  }

  /** Drops the oldest entry. */
  shift() {
    this.#entries[this.#head++] = undefined;
    if (this.#head === this.#entries.length) {
      this.#entries.length = 0;
      this.#head = 0;
    }
  }

  /** Empties the queue; returns what it held, oldest first. */
  takeAll() {
    const rest = this.#entries.slice(this.#head);
    this.#entries = [];
    this.#head = 0;
    return rest;
  }
}

module.exports = { WaitQueue };
