'use strict';
// install() of a drop-in (`@tidepool-rs/pool/zlib`, `/crypto`): some of a
// Node module's functions replaced, on the module object itself, by the
// drop-in's, so that code which calls `zlib.gzip()` or
// `crypto.pbkdf2()` runs on a tidepool without a change. ESM named
// imports follow (module.syncBuiltinESMExports). uninstall() puts the
// module's own back. A function taken from the module before install()
// (`const { pbkdf2 } = require('crypto')` at load time) keeps the
// module's: install first (`node --require <drop-in>/register`).

const { syncBuiltinESMExports } = require('node:module');
const { invalidArgType, invalidArgValue, makeError, unknownOption } = require('../errors');
const { POOL_SHAPE } = require('../symbols');

/**
 * How one drop-in routes one module: `target` (node:zlib's module
 * object), `label` ('node:zlib'), `entry` ('@tidepool-rs/pool/zlib'),
 * `family` ('ZLIB', for ERR_TIDEPOOL_ZLIB_*), and `names`, the functions
 * install() replaces where this Node's module has them (a module keeps
 * its own set of names: no zstd before Node 22.15).
 */
class Routing {
  #target;
  #label;
  #entry;
  #family;
  #names;
  /** While installed: the module's property descriptors, by name. */
  #saved;
  /** install()'s pool, while installed with one. */
  #pool;

  constructor({ target, label, entry, family, names }) {
    this.#target = target;
    this.#label = label;
    this.#entry = entry;
    this.#family = family;
    this.#names = Object.freeze([...names]);
  }

  /** The pool install() was given, or undefined. */
  get pool() {
    return this.#pool;
  }

  /**
   * Routes the module's functions to `api`'s (the drop-in's exports) for
   * the whole process, on `options.pool` or the drop-in's default pool.
   * Installing again while installed is an error unless it changes nothing.
   */
  install(options, api) {
    let given;
    if (options !== undefined) {
      if (options === null || typeof options !== 'object')
        throw invalidArgType('options', 'of type object', options);
      const { Pool } = require('../pool');
      if (options instanceof Pool)
        throw invalidArgValue(
          'options',
          'is a Pool, not the options: pass { pool } (install({ pool }))',
        );
      for (const key in options) {
        if (Object.hasOwn(options, key) && key !== 'pool')
          throw unknownOption('options', key, ['pool'], undefined);
      }
      given = Object.hasOwn(options, 'pool') ? options.pool : undefined;
      if (given !== undefined) checkPool(given);
    }
    if (this.#saved !== undefined) {
      if (given === this.#pool) return;
      throw makeError(
        Error,
        `ERR_TIDEPOOL_${this.#family}_INSTALLED`,
        `${this.#label} is already routed to another pool: uninstall() first`,
      );
    }
    const routed = this.#routable();
    this.#saved = { __proto__: null };
    for (const name of routed) {
      this.#saved[name] = Object.getOwnPropertyDescriptor(this.#target, name);
      this.#put(name, api[name]);
    }
    this.#pool = given;
    syncBuiltinESMExports();
  }

  /** Puts the module's own functions back; nothing when not installed. */
  uninstall() {
    const saved = this.#saved;
    if (saved === undefined) return;
    // All or none: the module frozen since install() is a typed error,
    // and stays routed.
    for (const name in saved) {
      const own = Object.getOwnPropertyDescriptor(this.#target, name);
      if (own !== undefined && !own.configurable && !own.writable) {
        throw makeError(
          Error,
          `ERR_TIDEPOOL_${this.#family}_UNSUPPORTED`,
          `uninstall() is not supported by ${this.#entry} now: ${this.#label}'s ${name} was frozen after install(), and cannot be put back`,
        );
      }
    }
    for (const name in saved) this.#put(name, saved[name].value, saved[name]);
    this.#saved = undefined;
    this.#pool = undefined;
    syncBuiltinESMExports();
  }

  /**
   * The names this module has, once each is known to be replaceable; else
   * (Deno's built-in modules are frozen) a typed error, before anything
   * changed.
   */
  #routable() {
    const names = [];
    for (const name of this.#names) {
      const own = Object.getOwnPropertyDescriptor(this.#target, name);
      if (own === undefined) continue;
      if (!own.configurable && !(own.writable && 'value' in own)) {
        throw makeError(
          Error,
          `ERR_TIDEPOOL_${this.#family}_UNSUPPORTED`,
          `install() is not supported by ${this.#entry} on this runtime: ${this.#label}'s ${name} cannot be replaced. Use require('${this.#entry}') in place of ${this.#label}`,
        );
      }
      names.push(name);
    }
    return names;
  }

  /** The module's `name` made `value`: redefined, or where it may not be, assigned (writable). */
  #put(name, value, descriptor) {
    const target = this.#target;
    const own = Object.getOwnPropertyDescriptor(target, name);
    if (own !== undefined && !own.configurable) target[name] = value;
    else
      Object.defineProperty(
        target,
        name,
        descriptor ?? { value, writable: true, enumerable: true, configurable: true },
      );
  }
}

/** A pool install() can route to: an open Pool whose results are Buffers. */
function checkPool(given) {
  const { Pool } = require('../pool');
  if (!(given instanceof Pool)) throw invalidArgType('options.pool', 'an instance of Pool', given);
  if (given.closed)
    throw makeError(
      Error,
      'ERR_TIDEPOOL_CLOSED',
      'The pool is closed: install() needs an open one',
    );
  const shape = given[POOL_SHAPE];
  if (shape.encoding !== 'buffer' || shape.select) {
    throw invalidArgValue(
      'options.pool',
      `must take and give Buffers as node:zlib and node:crypto do (no select, encoding 'buffer'). Received a pool with ${shape.select ? 'a select function' : `encoding '${shape.encoding}'`}`,
    );
  }
}

module.exports = { Routing, checkPool };
