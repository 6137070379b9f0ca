'use strict';
// Where a hash's update() puts its bytes before a pool thread hashes them.
//
// node:crypto's update() is synchronous: its caller reuses the buffer as
// soon as it returns, so the bytes are copied: small ones into a staging
// block of STAGING_BLOCK bytes that many updates share (one task per block,
// not per update), larger ones into a copy of their own; at most
// STAGING_CAP bytes of staging at a time. Past the cap nothing is copied,
// and the stream's tasks (lib/streams/tasks.js) hash on the calling thread
// instead, so memory stays bounded whatever the caller does. The blocks,
// their spares and the cap are kept here, apart from the chunks the copies
// become, which the tasks run as they run any other item.

const { Buffer } = require('node:buffer');
const { ownArray } = require('../base/own-array');
const { Item } = require('./items');

const allocUnsafeSlow = Buffer.allocUnsafeSlow;
const { setImmediate: scheduleImmediate } = require('node:timers');

/**
 * Bytes of update() copies the pool may hold at a time; past it, update()
 * hashes on the calling thread. See BENCHMARKS.md ("createHash: update()
 * and write()").
 */
const STAGING_CAP = 4 << 20;
/** The staging block updates share; an update larger than one gets a copy of its own. */
const STAGING_BLOCK = 64 << 10;
/** Staging blocks a stream keeps for reuse once their items ran. */
const SPARE_BLOCKS = 4;

class Staging {
  /** The stream's queue (lib/base/wait-queue.js), which the copies join in the order of the updates. */
  #queue;
  /** What the pool's close() waits for (lib/streams/debts.js): an accepted copy is owed. */
  #debts;
  /** Starts what was queued (the tasks' kick). */
  #queued;
  /** Bytes of staging memory not yet hashed. */
  #staged = 0;
  /** The staging block small updates are copied into, its bytes used, and whether they are accepted. */
  #block = undefined;
  #blockUsed = 0;
  #blockAccepted = false;
  /** Staging blocks whose items ran, for the next ones (no allocation per block). */
  #spare = ownArray(0);
  #flushScheduled = false;

  constructor(queue, debts, queued) {
    this.#queue = queue;
    this.#debts = debts;
    this.#queued = queued;
  }

  /**
   * Copies `view` (update()'s bytes, `accepted` when the pool is open) into
   * the staging block or a copy of its own, queued behind what came before;
   * false, copying nothing, when that would pass the cap.
   */
  copy(view, accepted) {
    const bytes = view.byteLength;
    if (bytes <= STAGING_BLOCK) {
      if (this.#block !== undefined && this.#blockUsed + bytes <= STAGING_BLOCK) {
        this.#append(view, accepted);
        return true;
      }
      if (this.#staged + STAGING_BLOCK > STAGING_CAP) return false;
      this.close();
      this.#block = this.#takeSpare();
      this.#staged += STAGING_BLOCK;
      this.#append(view, accepted);
      return true;
    }
    if (this.#staged + bytes > STAGING_CAP) return false;
    this.close();
    const copy = allocUnsafeSlow(bytes);
    copy.set(view);
    this.#staged += bytes;
    if (accepted) this.#debts.owe(1);
    this.#queue.push(new Item(copy, bytes, 0, undefined, bytes, accepted));
    this.#queued();
    return true;
  }

  /** The staging block, if it holds anything, becomes an item (before whatever comes next). */
  close() {
    if (this.#block === undefined || this.#blockUsed === 0) return;
    const item = new Item(
      this.#block.subarray(0, this.#blockUsed),
      this.#blockUsed,
      0,
      undefined,
      STAGING_BLOCK,
      this.#blockAccepted,
    );
    item.block = this.#block;
    this.#block = undefined;
    this.#blockUsed = 0;
    this.#blockAccepted = false;
    this.#queue.push(item); // (its debt was taken when its first accepted bytes came)
  }

  /** `item` was consumed without a thread reading it: its staging no longer counts. */
  free(item) {
    this.#staged -= item.staged;
  }

  /** `item` ran: its staging no longer counts, and no thread reads its block, which the next updates may fill. */
  recycle(item) {
    this.#staged -= item.staged;
    if (item.block !== undefined && this.#spare.length < SPARE_BLOCKS)
      this.#spare[this.#spare.length] = item.block;
  }

  /** Everything staged was hashed on the calling thread, or never will be: none of it counts. */
  drop() {
    this.#staged = 0;
    this.#block = undefined;
    this.#blockUsed = 0;
    this.#blockAccepted = false;
  }

  /** A spare staging block, or a new one. */
  #takeSpare() {
    const spare = this.#spare;
    if (spare.length === 0) return allocUnsafeSlow(STAGING_BLOCK);
    const block = spare[spare.length - 1];
    spare.length--;
    return block;
  }

  /** Copies `view` into the staging block; the block goes to the pool when full, or when the event loop turns. */
  #append(view, accepted) {
    this.#block.set(view, this.#blockUsed);
    this.#blockUsed += view.byteLength;
    if (accepted && !this.#blockAccepted) {
      this.#blockAccepted = true;
      this.#debts.owe(1);
    }
    if (this.#blockUsed === STAGING_BLOCK) {
      this.close();
      this.#queued();
    } else if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      scheduleImmediate(this.#flushBlock);
    }
  }

  #flushBlock = () => {
    this.#flushScheduled = false;
    this.close();
    this.#queued();
  };
}

module.exports = { Staging };
