'use strict';
// node:zlib's classes (Gzip, Inflate, BrotliCompress...) over a pool's codec
// streams: constructed with or without `new`, subclassable, taking
// node:zlib's options (lib/codecs/options.js), with node:zlib's members where a pool
// stream can keep their contract.

const zlib = require('node:zlib');
const { deprecate } = require('node:util');
const { CodecStream } = require('../streams/codec');
const { OPEN_CODEC } = require('../symbols');
const { STREAM_WRITE_AHEAD } = require('../args/task-options');
const { isResizable } = require('../engine/binary');
const { copyOf } = require('./one-shot');
const { readOptions, initError, rangeOr, MODES, DEFLATE } = require('../codecs/options');
const { resetRefusesIncomplete } = require('../codecs/lines');
const { makeError } = require('../errors');

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

/** The Transform's options: the caller's, with the pool streams' write-ahead (lib/args/task-options.js) when it sets no buffer. */
function transformOptions(given) {
  // As node:zlib's streams (Node's stream constructors): a falsy signal is none.
  if (!given.signal) delete given.signal;
  const objects = given.objectMode || given.writableObjectMode;
  if (!objects && given.highWaterMark === undefined && given.writableHighWaterMark === undefined)
    given.writableHighWaterMark = STREAM_WRITE_AHEAD;
  return given;
}

/** A finite number given as `options[name]` (checked by readOptions), or undefined. */
function finiteOwn(options, name) {
  if (options === null || typeof options !== 'object' || !Object.hasOwn(options, name))
    return undefined;
  return Number.isFinite(options[name]) ? options[name] : undefined;
}

// The classes are functions, as node:zlib's are: called without `new`
// they make an instance; called on an object (`Gzip.call(this, options)`,
// the old way to inherit) they initialize it; `class X extends Gzip` works.

/**
 * What is common to node:zlib's classes here (node:zlib's ZlibBase): `name`
 * is the class's (MODES).
 * @this {any}
 */
function ZlibBase(name, options) {
  const o = readOptions(name, options);
  let opened;
  try {
    opened = poolOf()[OPEN_CODEC](o.kernel, o.params);
  } catch (err) {
    throw initError(err, o.kernel);
  }
  // Before the Transform: an aborted signal destroys it in there.
  this[MEMBER] = { kernel: o.kernel, started: false, output: 0 };
  CodecStream.call(this, opened.port, opened.handle, o.kernel, transformOptions(o.transform), {
    writeFlush: o.flush,
    chunkSize: o.chunkSize,
  });
}
Object.setPrototypeOf(ZlibBase.prototype, CodecStream.prototype);
Object.setPrototypeOf(ZlibBase, CodecStream);

/**
 * The gzip member or zstd frame under way since the stream's start or its
 * last reset(): whether anything was written or flushed into it, and the
 * output bytes pushed of it (see reset()).
 */
const MEMBER = Symbol('tidepool.member');

/** Output pushed: counted for reset()'s check, then the Transform's push(). */
ZlibBase.prototype.push = function push(chunk, encoding) {
  if (chunk !== null && chunk !== undefined) this[MEMBER].output += chunk.length;
  return CodecStream.prototype.push.call(this, chunk, encoding);
};

/** flush(): the member has begun (gzip writes its header), as for a write. */
ZlibBase.prototype.flush = function flush(kind, callback) {
  this[MEMBER].started = true;
  return CodecStream.prototype.flush.call(this, kind, callback);
};

/**
 * reset(): where node:zlib refuses to reset a gzip stream whose member has
 * begun, or a zstd stream whose frame has made output (Node 26; the output
 * would be a cut member, then a new one), the stream fails as node:zlib's
 * does (ERR_ZLIB_INCOMPLETE_FRAME). As here a reset applies after the
 * writes before it, a write not yet consumed has begun the member too.
 *
 * @this {any}
 */
ZlibBase.prototype.reset = function reset() {
  const member = this[MEMBER];
  if (!this.destroyed && !this.writableEnded && resetRefusesIncomplete()) {
    const cut =
      member.kernel === 'gzip'
        ? member.started
        : member.kernel === 'zstdCompress' && member.output > 0;
    if (cut) {
      this.destroy(incompleteFrame(member.kernel));
      return;
    }
  }
  CodecStream.prototype.reset.call(this);
  member.started = false;
  member.output = 0;
};

/** node:zlib's error of a reset() that would cut a gzip member or zstd frame. */
function incompleteFrame(kernel) {
  return kernel === 'gzip'
    ? makeError(
        Error,
        'ERR_ZLIB_INCOMPLETE_FRAME',
        'Cannot reset a gzip stream with an incomplete member; end the stream or start a new gzip compressor',
        { errno: -2 },
      )
    : makeError(
        Error,
        'ERR_ZLIB_INCOMPLETE_FRAME',
        'Cannot reset a zstd stream with an incomplete frame; end the frame or discard the output produced so far',
        { errno: 60 },
      );
}

/**
 * A write whose memory could shrink under a pool thread (a view of a
 * resizable ArrayBuffer) is copied: node:zlib takes it as it is.
 * @this {any}
 */
ZlibBase.prototype.write = function write(chunk, encoding, callback) {
  if (ArrayBuffer.isView(chunk) && isResizable(chunk.buffer)) chunk = Buffer.from(copyOf(chunk));
  if (chunk !== null && chunk !== undefined && chunk.length !== 0) this[MEMBER].started = true;
  return CodecStream.prototype.write.call(this, chunk, encoding, callback);
};

/** DEP0108, once per process, as node:zlib warns it. */
const warnBytesRead = deprecate(
  () => {},
  'zlib.bytesRead is deprecated and will change its meaning in the future. Use zlib.bytesWritten instead.',
  'DEP0108',
);

// node:zlib's deprecated name of bytesWritten (DEP0108), where this
// Node's node:zlib still has it (it is gone from Node 23).
if ('bytesRead' in zlib.Gzip.prototype)
  Object.defineProperty(ZlibBase.prototype, 'bytesRead', {
    configurable: true,
    enumerable: true,
    /** @this {any} */
    get() {
      warnBytesRead();
      return this.bytesWritten;
    },
    // node:zlib's setter writes bytesWritten, which is the pool's count here.
    set(_value) {
      warnBytesRead();
    },
  });

// node:zlib's `_closed` (undocumented, read by code written for it):
// whether the stream let go of its codec (destroyed, or ended).
Object.defineProperty(ZlibBase.prototype, '_closed', {
  configurable: true,
  enumerable: true,
  /** @this {any} */
  get() {
    return this.destroyed;
  },
});

/**
 * The deflate family's (node:zlib's Zlib): params(), and the level and
 * strategy it has now as node:zlib keeps them (`_level`, `_strategy`,
 * undocumented, read by code written for it).
 * @this {any}
 */
function Zlib(name, options) {
  ZlibBase.call(this, name, options);
  this._level = finiteOwn(options, 'level') ?? -1;
  this._strategy = finiteOwn(options, 'strategy') ?? 0;
}
Object.setPrototypeOf(Zlib.prototype, ZlibBase.prototype);
Object.setPrototypeOf(Zlib, ZlibBase);

/**
 * node:zlib's params(level, strategy, callback): its checks, and nothing
 * to do (the callback on the next tick) when neither changes; otherwise a
 * sync flush, then the change (CodecStream's params()).
 * @this {any}
 */
Zlib.prototype.params = function params(level, strategy, callback) {
  rangeOr(level, 'level', -1, 9, undefined);
  rangeOr(strategy, 'strategy', 0, 4, undefined);
  // node:zlib's binding reads what is not a number (NaN, undefined) as 0.
  if (!Number.isFinite(level)) level = 0;
  if (!Number.isFinite(strategy)) strategy = 0;
  if (level === this._level && strategy === this._strategy) {
    if (callback !== undefined) process.nextTick(callback);
    return;
  }
  // As node:zlib's: the level and strategy it keeps change when they
  // apply, after the flush (a second call meanwhile compares with the
  // ones applied, and flushes again); the callback has no argument.
  const done = () => {
    if (!this.destroyed) {
      this._level = level;
      this._strategy = strategy;
    }
    if (callback !== undefined) callback();
  };
  CodecStream.prototype.params.call(this, Math.trunc(level), Math.trunc(strategy), done);
};

/** A node:zlib class: callable without `new`, `instanceof` and subclassing as in node:zlib. */
function zlibClass(name) {
  const Base = MODES[name].family === DEFLATE ? Zlib : ZlibBase;
  /** @type {any} */
  const Class = {
    /** @this {any} */
    [name]: function (options) {
      if (!(this instanceof Class)) return new Class(options);
      Base.call(this, name, options);
    },
  }[name];
  Object.setPrototypeOf(Class.prototype, Base.prototype);
  Object.setPrototypeOf(Class, Base);
  return Class;
}

const CLASSES = Object.freeze(
  Object.fromEntries(Object.keys(MODES).map((name) => [name, zlibClass(name)])),
);

module.exports = { CLASSES, ZlibBase, setPoolSource };
