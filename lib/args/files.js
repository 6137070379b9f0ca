'use strict';
// postFile(): the path a caller gives, made into what the native side opens
// (an absolute path's bytes, resolved now: a later process.chdir() changes
// nothing), and the fs-style errors of a file that cannot be read.
//
// The file is opened by a pool thread with the process's permissions, as
// `fs` would open it. Under Node's permission model (--permission), the
// path is checked here first, as `fs` checks it.

const path = require('node:path');
const { Buffer } = require('node:buffer');
const { fileURLToPath } = require('node:url');
const { invalidArgType, invalidArgValue, makeError } = require('../errors');

const NAME = 'path';
const EXPECTED = 'of type string or an instance of Buffer, Uint8Array or URL';
const isUint8Array = require('node:util').types.isUint8Array;
const bufferFrom = Buffer.from;
const bufferConcat = Buffer.concat;
const SLASH = 0x2f;
const POSIX = path.sep === '/';

/**
 * `file` (a string, a Buffer or Uint8Array of the path's bytes, or a file:
 * URL) checked: `{ bytes, shown }`, the path's bytes (still relative if
 * it was: see absolute()) and the path as errors name it (as the caller
 * gave it).
 */
function filePath(file) {
  let shown;
  let bytes;
  if (typeof file === 'string') {
    shown = file;
  } else if (file instanceof URL) {
    shown = fileURLToPath(file); // ERR_INVALID_URL_SCHEME / ERR_INVALID_FILE_URL_* as fs
  } else if (isUint8Array(file)) {
    // The bytes as given (a Unix path need not be UTF-8), copied: the
    // caller may change theirs once postFile() has returned.
    bytes = bufferFrom(file);
    shown = bytes.toString();
  } else {
    throw invalidArgType(NAME, EXPECTED, file);
  }
  if (shown.length === 0 || (bytes === undefined ? shown.includes('\0') : bytes.includes(0))) {
    throw invalidArgValue(
      NAME,
      `must be a non-empty path without null bytes. Received ${JSON.stringify(shown)}`,
    );
  }
  return { bytes: bytes ?? bufferFrom(shown), shown };
}

/**
 * The absolute path's bytes for `bytes`, a checked path: a relative one
 * with the working directory in front, and nothing else changed. Not
 * path.resolve(): it would drop `..` and a trailing slash without looking
 * at the file system, where a symlink may make `link/..` another directory
 * (and `file/` is ENOTDIR), so the pool would read another file than fs.
 * Throws when the working directory is gone (postFile() rejects with it).
 */
function absolute(bytes) {
  if (!POSIX) return bufferFrom(path.resolve(bytes.toString()));
  if (bytes[0] === SLASH) return bytes;
  return bufferConcat([bufferFrom(`${process.cwd()}/`), bytes]);
}

/**
 * Node's ERR_ACCESS_DENIED when the permission model forbids reading the
 * file at `file` (a path, or its bytes), else undefined. The model itself
 * resolves paths lexically (path.resolve), and so does this check, as fs's.
 * Also behind Pool.loadKernels() (lib/args/kernels.js).
 */
function accessDenied(file) {
  const permission = process.permission;
  if (permission === undefined || permission === null) return undefined;
  const resolved = path.resolve(typeof file === 'string' ? file : file.toString());
  if (permission.has('fs.read', resolved)) return undefined;
  return makeError(
    Error,
    'ERR_ACCESS_DENIED',
    `Access to this API has been restricted: reading ${resolved} (--allow-fs-read)`,
    {
      permission: 'FileSystemRead',
      resource: resolved,
    },
  );
}

module.exports = { filePath, absolute, accessDenied };
