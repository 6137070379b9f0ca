'use strict';
// node:zlib's async one-shots (gzip(buffer[, options], callback)...) as
// pool tasks: the input is read in place by a pool thread (as node:zlib's
// stream reads it), the result is one Buffer, the callback runs from the
// event loop (an exception it throws is uncaught, as with node:zlib), and
// util.promisify() takes them as they are.

const { Buffer } = require('node:buffer');
const { types } = require('node:util');
const { readOptions, initError } = require('./options');
const { invalidArgType, makeError } = require('../errors');

const nextTick = process.nextTick;

/**
 * The input as node:zlib's one-shots take it: a string (UTF-8), a view,
 * or an ArrayBuffer; anything else is node:zlib's error.
 */
function inputOf(buffer) {
  if (typeof buffer === 'string') return Buffer.from(buffer);
  if (types.isArrayBufferView(buffer)) return buffer;
  if (types.isAnyArrayBuffer(buffer)) return Buffer.from(buffer);
  throw invalidArgType(
    'chunk',
    'of type string or an instance of Buffer, TypedArray, or DataView',
    buffer,
  );
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
      if (typeof callback !== 'function')
        throw invalidArgType('callback', 'of type function', callback);
      const data = inputOf(buffer);
      const post = { kernel: o.kernel, maxOutputBytes: o.maxOutputLength };
      if (o.params !== undefined) post.params = o.params;
      let task;
      try {
        task = poolOf().post(data, post);
      } catch (err) {
        throw initError(err, o.kernel);
      }
      task.then(
        ({ result }) => {
          let value = result;
          if (o.info) {
            // node:zlib's engine, ended: here a stream of the same class, closed.
            const engine = new Class(options);
            engine.close();
            value = { buffer: result, engine };
          }
          nextTick(callback, null, value);
        },
        (err) => nextTick(callback, zlibError(err, o.maxOutputLength)),
      );
    },
  }[name];
}

module.exports = { oneShot, inputOf };
