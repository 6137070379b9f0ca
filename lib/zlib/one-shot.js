'use strict';
// node:zlib's async one-shots (gzip(buffer[, options], callback)...) as
// pool tasks: the input is read in place by a pool thread (as node:zlib's
// stream reads it), the result is one Buffer, the callback runs from the
// event loop (an exception it throws is uncaught, as with node:zlib), and
// util.promisify() takes them as they are.

const { Buffer } = require('node:buffer');
const { types } = require('node:util');
const { readOptions, initError } = require('../codecs/options');
const { abortError, invalidArgType, makeError } = require('../errors');
const { isResizable } = require('../engine/binary');
const { isAborted, signalReason } = require('../engine/signals');
const { ONE_SHOT } = require('../symbols');

const nextTick = process.nextTick;

/**
 * The input as node:zlib's one-shots take it: a string (in the stream's
 * `defaultEncoding`, as its Writable decodes what it is written), a view,
 * or an ArrayBuffer; anything else is node:zlib's error.
 */
function inputOf(buffer, encoding = 'utf8') {
  if (typeof buffer === 'string')
    return Buffer.from(buffer, /** @type {BufferEncoding} */ (encoding));
  // As node:zlib, whose engine ends with no chunk.
  if (buffer === null || buffer === undefined) return Buffer.alloc(0);
  // Memory that could shrink under a pool thread is copied (node:zlib reads it in place).
  if (types.isArrayBufferView(buffer))
    return isResizable(buffer.buffer) ? Buffer.from(copyOf(buffer)) : buffer;
  if (types.isAnyArrayBuffer(buffer))
    return isResizable(buffer) ? Buffer.from(buffer.slice(0)) : Buffer.from(buffer);
  throw invalidArgType(
    'chunk',
    'of type string or an instance of Buffer, TypedArray, or DataView',
    buffer,
  );
}

/** A Writable's `defaultEncoding`, checked as its constructor checks it (node:zlib's one-shot makes one). */
function defaultEncodingOf(encoding) {
  if (encoding === undefined || encoding === null) return 'utf8';
  if (Buffer.isEncoding(encoding)) return encoding;
  throw makeError(TypeError, 'ERR_UNKNOWN_ENCODING', `Unknown encoding: ${encoding}`);
}

/** The bytes of `view`, copied. */
function copyOf(view) {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength).slice();
}

/**
 * node:zlib's `info` engine: a stream of the class, made from the call's
 * options and ended. Made without the caller's signal, which would
 * destroy it (with an 'error' nobody listens to) once it fires.
 */
function endedEngine(Class, options) {
  let rest = options;
  if (options !== null && typeof options === 'object' && Object.hasOwn(options, 'signal')) {
    rest = { ...options };
    delete rest.signal;
  }
  const engine = new Class(rest);
  engine.close();
  return engine;
}

/** node:zlib's error for a task's failure (its words where they differ). */
function zlibError(err, maxOutputLength) {
  if (err !== null && typeof err === 'object' && err.code === 'ERR_BUFFER_TOO_LARGE') {
    return makeError(
      RangeError,
      'ERR_BUFFER_TOO_LARGE',
      `Cannot create a Buffer larger than ${maxOutputLength} bytes`,
    );
  }
  return err;
}

/** The one-shot `name` of class `className` (`Class`), run on `poolOf()`. */
function oneShot(name, className, Class, poolOf) {
  return {
    [name](buffer, options, callback) {
      if (typeof options === 'function') {
        callback = options;
        options = {};
      }
      // As node:zlib: the options first (its engine is made first), then the callback.
      const o = readOptions(className, options);
      const encoding = defaultEncodingOf(o.transform.defaultEncoding);
      if (typeof callback !== 'function')
        throw invalidArgType('callback', 'of type function', callback);
      const data = inputOf(buffer, encoding);
      // node:zlib's streams take a signal, and so its one-shots: an aborted
      // one is the callback's AbortError, as there (a falsy one is none).
      const signal = o.transform.signal || undefined;
      if (signal !== undefined && isAborted(signal)) {
        nextTick(callback, abortError(signalReason(signal)));
        return;
      }
      // node:zlib's `info` engine is made before the work, from the
      // options as given: a throw is the caller's, here, not a rejection.
      const engine = o.info ? endedEngine(Class, options) : undefined;
      let task;
      try {
        task = poolOf()[ONE_SHOT](o.kernel, o.params, o.maxOutputLength, data, signal);
      } catch (err) {
        throw initError(err, o.kernel);
      }
      task.then(
        (result) => {
          // Aborted after the work and before this turn: node:zlib's
          // stream, destroyed by its signal first, calls back with the
          // AbortError.
          if (signal !== undefined && isAborted(signal)) {
            nextTick(callback, abortError(signalReason(signal)));
            return;
          }
          nextTick(callback, null, engine === undefined ? result : { buffer: result, engine });
        },
        (err) => nextTick(callback, zlibError(err, o.maxOutputGiven)),
      );
    },
  }[name];
}

module.exports = { oneShot, inputOf, endedEngine, copyOf, zlibError };
