'use strict';
// Pool.loadKernels(): registers the kernels of a native library (a shared
// library opened by its path, or the handle an addon exports) for every pool
// of the process, and returns their names. The checks of the library itself
// (ABI version, names, schemas, clashes) are Rust's (src/loader.rs,
// crates/core/src/kernels/foreign/); here: the argument, the permission
// model, the errors.

const path = require('node:path');
const { fileURLToPath } = require('node:url');
const { binding, KERNELS, syncKernels } = require('../addon/binding');
const { accessDenied } = require('./files');
const { invalidArgType, invalidArgValue, makeError } = require('../errors');
const { uncurryThis } = require('../base/intrinsics');

const stringCharAt = uncurryThis(String.prototype.charAt);
const stringIndexOf = uncurryThis(String.prototype.indexOf);
const stringSlice = uncurryThis(String.prototype.slice);
const ArrayFrom = Array.from;
const SOURCE = 'source';
const EXPECTED = 'of type string (a path), an instance of URL (file:) or a kernel library handle';

/** The absolute path a string or file: URL names (never a search-path lookup). */
function libraryPath(source) {
  let file = source;
  if (source instanceof URL) {
    if (source.protocol !== 'file:')
      throw invalidArgValue(SOURCE, `must be a file: URL. Received ${source.href}`);
    file = fileURLToPath(source);
  }
  if (file.length === 0 || file.includes('\0'))
    throw invalidArgValue(SOURCE, 'must be a non-empty path without NUL bytes');
  // A bare name such as 'libfoo.so' would make dlopen search the library
  // path: resolved against the working directory instead, as a file.
  return path.resolve(file);
}

/**
 * Registers the kernels of `source` and returns their names (in the
 * library's order). Loading the same library again returns the same names.
 */
function loadKernels(source) {
  let loaded;
  // The library's path (an error carries it), or undefined for a handle.
  let file;
  if (typeof source === 'string' || source instanceof URL) {
    file = libraryPath(source);
    const denied = accessDenied(file);
    if (denied !== undefined) throw denied;
    loaded = binding.loadKernelLibrary(file);
  } else if (source !== null && typeof source === 'object') {
    loaded = binding.loadKernelHandle(source);
    if (typeof loaded !== 'string') throw invalidArgType(SOURCE, EXPECTED, source);
  } else {
    throw invalidArgType(SOURCE, EXPECTED, source);
  }
  // "first count", or "!CODE message" (see src/loader.rs).
  if (stringCharAt(loaded, 0) === '!') {
    const space = stringIndexOf(loaded, ' ');
    const code = stringSlice(loaded, 1, space);
    throw makeError(
      Error,
      code,
      stringSlice(loaded, space + 1),
      file === undefined ? undefined : { path: file },
    );
  }
  syncKernels();
  const space = stringIndexOf(loaded, ' ');
  const first = Number(stringSlice(loaded, 0, space));
  const count = Number(stringSlice(loaded, space + 1));
  // Defined index by index: no iterator or push a caller could have replaced.
  return ArrayFrom(
    /** @type {ArrayLike<string>} */ ({ __proto__: null, length: count }),
    (_, i) => KERNELS[first + i],
  );
}

module.exports = { loadKernels };
