'use strict';
// node:zlib's classes (Gzip, Inflate, BrotliCompress...) over a pool's codec
// streams: constructed with or without `new`, subclassable, taking
// node:zlib's options (./options.js), with node:zlib's members where a pool
// stream can keep their contract.

const { deprecate } = require('node:util');
const { CodecStream } = require('../codec-stream');
const { OPEN_CODEC } = require('./link');
const { readOptions, initError, rangeOr, MODES, DEFLATE } = require('./options');

/**
 * Where the classes get their pool (set by ./index.js).
 * @type {() => any}
 */
let poolOf = () => {
  throw new Error('lib/zlib/streams.js: no pool source');
};

/** `source()` gives the pool new streams run on. @param {() => any} source */
function setPoolSource(source) {
  poolOf = source;
}

/**
 * The writable side's default buffer (lib/task-options.js's
 * STREAM_WRITE_AHEAD) when the caller sets none: a write waits for a
 * thread, and the writes behind it are the next task.
 */
const WRITE_AHEAD = 2 << 20;

/** The Transform's options: the caller's, with the pool's write-ahead when it sets no buffer. */
function transformOptions(given) {
  if (given.highWaterMark === undefined && given.writableHighWaterMark === undefined)
    given.writableHighWaterMark = WRITE_AHEAD;
  return given;
}

/** A finite number given as `options[name]` (checked by readOptions), or undefined. */
function finiteOwn(options, name) {
  if (options === null || typeof options !== 'object' || !Object.hasOwn(options, name))
    return undefined;
  return Number.isFinite(options[name]) ? options[name] : undefined;
}

/** What is common to node:zlib's classes here (node:zlib's ZlibBase). */
class ZlibBase extends CodecStream {
  constructor(name, options) {
    const o = readOptions(name, options);
    let opened;
    try {
      opened = poolOf()[OPEN_CODEC](o.kernel, o.params);
    } catch (err) {
      throw initError(err, o.kernel);
    }
    const { port, handle } = opened;
    super(port, handle, o.kernel, transformOptions(o.transform), {
      writeFlush: o.flush,
      chunkSize: o.chunkSize,
    });
  }

  /** node:zlib's deprecated name of bytesWritten (DEP0108). */
  get bytesRead() {
    warnBytesRead();
    return this.bytesWritten;
  }

  set bytesRead(value) {
    warnBytesRead();
  }
}

/** DEP0108, once per process, as node:zlib warns it. */
const warnBytesRead = deprecate(
  () => {},
  'zlib.bytesRead is deprecated and will change its meaning in the future. Use zlib.bytesWritten instead.',
  'DEP0108',
);

/** The deflate family's (node:zlib's Zlib): params(). */
class Zlib extends ZlibBase {
  #level;
  #strategy;

  constructor(name, options) {
    super(name, options);
    this.#level = finiteOwn(options, 'level') ?? -1;
    this.#strategy = finiteOwn(options, 'strategy') ?? 0;
  }

  /**
   * node:zlib's params(level, strategy, callback): its checks, and nothing
   * to do (the callback on the next tick) when neither changes; otherwise
   * a sync flush, then the change (CodecStream's params()).
   */
  params(level, strategy, callback) {
    rangeOr(level, 'level', -1, 9, undefined);
    rangeOr(strategy, 'strategy', 0, 4, undefined);
    if (level === this.#level && strategy === this.#strategy) {
      if (callback !== undefined) process.nextTick(callback);
      return;
    }
    super.params(Math.trunc(level), Math.trunc(strategy), callback);
    this.#level = level;
    this.#strategy = strategy;
  }
}

/** A node:zlib class: callable without `new`, `instanceof` and subclassing as in node:zlib. */
function zlibClass(name) {
  const Impl = {
    [name]: class extends (MODES[name].family === DEFLATE ? Zlib : ZlibBase) {
      constructor(options) {
        super(name, options);
      }
    },
  }[name];
  /** @type {any} */
  const Class = {
    [name]: function (options) {
      return Reflect.construct(Impl, [options], new.target ?? Class);
    },
  }[name];
  Object.defineProperty(Class, 'prototype', { value: Impl.prototype, writable: false });
  Object.defineProperty(Impl.prototype, 'constructor', {
    value: Class,
    writable: true,
    configurable: true,
  });
  Object.setPrototypeOf(Class, ZlibBase);
  return Class;
}

const CLASSES = Object.freeze(
  Object.fromEntries(Object.keys(MODES).map((name) => [name, zlibClass(name)])),
);

module.exports = { CLASSES, ZlibBase, setPoolSource };
