'use strict';
// The pool a drop-in's work runs on: install()'s, or else the drop-in's
// own default pool, made on first use (and again once it was closed).

/** One drop-in's pool, and who asked to hear when it changes. */
class PoolSource {
  /** @type {import('./routing').Routing} */
  #routing;
  /** The pool of this drop-in's work when install() was given none. */
  #default;
  /** The pool current() gave last, for the listeners. */
  #last;
  #listeners = [];

  constructor(routing) {
    this.#routing = routing;
  }

  /** The pool new work runs on: install()'s, or the default one. */
  current() {
    let pool = this.#routing.pool;
    if (pool === undefined) {
      if (this.#default === undefined || this.#default.closed) {
        // Loaded here: the package's index loads the drop-ins' siblings,
        // not the reverse.
        const { Pool } = require('../pool');
        this.#default = new Pool();
      }
      pool = this.#default;
    }
    if (pool !== this.#last) {
      this.#last = pool;
      for (const listener of this.#listeners) listener(pool);
    }
    return pool;
  }

  /**
   * `listener(pool)` whenever the pool current() gives changes (made,
   * replaced once closed, installed, uninstalled), so that an ESM `pool`
   * binding stays the CommonJS getter's.
   */
  watch(listener) {
    this.#listeners.push(listener);
  }

  /** The listeners told of the pool now (once install() or uninstall() changed it). */
  changed() {
    if (this.#listeners.length > 0) this.current();
  }
}

module.exports = { PoolSource };
