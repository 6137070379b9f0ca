'use strict';
// The window of map() (lib/map/iterator.js): the messages in flight and their
// results, served in the order of the messages whatever order the results
// come in.
//
// A ring of places, from `#head`, the next to yield, to `#tail`, the next
// to pull; index `i` lives at `i & (capacity - 1)`. It starts small and
// doubles as it fills (at most up to the first power of two >= the
// iteration's `concurrency`), so a large `concurrency` costs nothing until
// it is used. Kept apart from the pulling and the iterator's protocol: it
// only stores, reorders and lets go.

const { ownArray } = require('../base/own-array');

class MapWindow {
  /** Places in the ring (a power of two). */
  #capacity;
  #messages;
  #results;
  /** 1 where the result of the message in that place has arrived. */
  #ready;
  #head = 0;
  #tail = 0;

  constructor(concurrency) {
    this.#capacity = Math.min(64, 2 ** Math.ceil(Math.log2(concurrency)));
    this.#messages = ownArray(this.#capacity);
    this.#results = ownArray(this.#capacity);
    this.#ready = new Uint8Array(this.#capacity);
  }

  /** Messages pulled and not yet yielded. */
  get size() {
    return this.#tail - this.#head;
  }

  /** The index of the next message pulled. */
  get tail() {
    return this.#tail;
  }

  /** The result of the next message to yield has arrived. */
  headReady() {
    return this.#head < this.#tail && this.#ready[this.#head & (this.#capacity - 1)] === 1;
  }

  /** The head of the window as an iterator result (its result must have arrived); frees its place. */
  takeHead() {
    const place = this.#head & (this.#capacity - 1);
    const value = { result: this.#results[place], message: this.#messages[place] };
    this.#results[place] = undefined;
    this.#messages[place] = undefined;
    this.#ready[place] = 0;
    this.#head++;
    return { value, done: false };
  }

  /** The result of message `index` arrived; true if it is the next to yield. */
  arrived(index, value) {
    const place = index & (this.#capacity - 1);
    this.#results[place] = value;
    this.#ready[place] = 1;
    return index === this.#head;
  }

  /** Message `index` (the tail or past it, in a pull under way) takes its place, the ring grown if need be. */
  put(index, message) {
    this.#makeRoom(index + 1);
    this.#messages[index & (this.#capacity - 1)] = message;
  }

  /** The `count` messages put from the tail on were handed to the pool: they are in flight. */
  advance(count) {
    this.#tail += count;
  }

  /** The `count` messages put from the tail on will never be tasks: let go. */
  forget(count) {
    for (let i = 0; i < count; i++)
      this.#messages[(this.#tail + i) & (this.#capacity - 1)] = undefined;
  }

  /** Lets go of every message and result. */
  clear() {
    const length = this.#capacity;
    for (let i = 0; i < length; i++) {
      this.#messages[i] = undefined;
      this.#results[i] = undefined;
    }
    this.#ready.fill(0);
    this.#head = this.#tail;
  }

  /** The ring holds `end - #head` places or more (doubling it as needed). */
  #makeRoom(end) {
    let capacity = this.#capacity;
    if (end - this.#head <= capacity) return;
    while (capacity < end - this.#head) capacity *= 2;
    const messages = ownArray(capacity);
    const results = ownArray(capacity);
    const ready = new Uint8Array(capacity);
    const oldMask = this.#capacity - 1;
    const mask = capacity - 1;
    for (let index = this.#head; index < end - 1; index++) {
      messages[index & mask] = this.#messages[index & oldMask];
      results[index & mask] = this.#results[index & oldMask];
      ready[index & mask] = this.#ready[index & oldMask];
    }
    this.#messages = messages;
    this.#results = results;
    this.#ready = ready;
    this.#capacity = capacity;
  }
}

module.exports = { MapWindow };
