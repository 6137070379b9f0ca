'use strict';
// Every error tidepool throws, rejects with or emits, built the way Node
// builds its own: the right class, a `code`, and a message that names the
// argument and shows what was received.

const { getSystemErrorMap, inspect } = require('node:util');
const zlib = require('node:zlib');
const { TASK_CODES } = require('./addon/binding');

function makeError(Ctor, code, message, props) {
  const err = new Ctor(message);
  own(err, 'code', code);
  if (props !== undefined) for (const key of Object.keys(props)) own(err, key, props[key]);
  return err;
}

/**
 * makeError() without a stack trace: for an error made in bulk that ends
 * something no caller is waiting on with a stack of its own (a stream
 * destroyed without an error: its pending writes are called back without
 * one, as node:zlib's are). Capturing 16,000 stacks costs more than the
 * teardown itself.
 */
function stacklessError(Ctor, code, message) {
  const limit = Error.stackTraceLimit;
  try {
    Error.stackTraceLimit = 0;
  } catch {
    return makeError(Ctor, code, message); // a frozen Error
  }
  try {
    return makeError(Ctor, code, message);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * Gives `err` its own `key`, as an assignment would on a plain object but
 * without one: an accessor a caller put on Object.prototype (a getter-only
 * `code` makes `err.code = …` throw) is neither run nor in the way.
 */
function own(err, key, value) {
  Object.defineProperty(
    err,
    key,
    /** @type {PropertyDescriptor} */ ({
      __proto__: null,
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    }),
  );
}

/** The `code` of an error, when it is its own string, else undefined: no getter of the caller's runs. */
function ownCode(err) {
  if (err === null || (typeof err !== 'object' && typeof err !== 'function')) return undefined;
  const desc = Object.getOwnPropertyDescriptor(err, 'code');
  return desc !== undefined && typeof desc.value === 'string' ? desc.value : undefined;
}

/**
 * The codes a failed task is counted under by its own name (stats by code,
 * tidepool/metrics' `code` label): the ones tidepool gives (its own, and
 * Node's that it uses), zlib's and brotli's as node:zlib names them, and
 * the system's (libuv's names: postFile(), or a map() source reading
 * files). Any other code (a map() source's own, a loaded kernel's) counts
 * as `other`: a code per failure (an id in it) would otherwise make a
 * series, and an entry in the pool's counts, per failure for the pool's
 * whole life. A prototype-free object: no look-up reaches Object.prototype.
 */
const COUNTED_CODES = { __proto__: null };
for (const code of [
  'ERR_TIDEPOOL_CANCELLED',
  'ERR_TIDEPOOL_CLOSED',
  'ERR_TIDEPOOL_CORRUPT_INPUT',
  'ERR_TIDEPOOL_DESTROYED',
  'ERR_TIDEPOOL_DROPPED',
  'ERR_TIDEPOOL_INTERNAL',
  'ERR_TIDEPOOL_HASH_COPY',
  'ERR_TIDEPOOL_INVALID_INPUT',
  'ERR_TIDEPOOL_KERNEL_ABI',
  'ERR_TIDEPOOL_KERNEL_CONTRACT',
  'ERR_TIDEPOOL_KERNEL_ENTRY',
  'ERR_TIDEPOOL_KERNEL_EXISTS',
  'ERR_TIDEPOOL_KERNEL_FAILED',
  'ERR_TIDEPOOL_KERNEL_INVALID',
  'ERR_TIDEPOOL_KERNEL_LIMIT',
  'ERR_TIDEPOOL_NOT_A_FILE',
  'ERR_TIDEPOOL_NOT_BUILT',
  'ERR_TIDEPOOL_NO_PROM_CLIENT',
  'ERR_TIDEPOOL_PACKED_LENGTH',
  'ERR_TIDEPOOL_PANIC',
  'ERR_TIDEPOOL_QUEUE_FULL',
  'ERR_TIDEPOOL_SPAWN_FAILED',
  'ERR_TIDEPOOL_TIMEOUT',
  'ERR_TIDEPOOL_UNKNOWN_KERNEL',
  'ERR_TIDEPOOL_ZLIB_INSTALLED',
  'ERR_TIDEPOOL_ZLIB_UNSUPPORTED',
  'ERR_TIDEPOOL_CRYPTO_INSTALLED',
  'ERR_TIDEPOOL_CRYPTO_UNSUPPORTED',
  'ERR_TIDEPOOL_PASSWORD_UNSUPPORTED',
  'ABORT_ERR',
  'ERR_BROTLI_INVALID_PARAM',
  'ERR_ZSTD_INVALID_PARAM',
  'ERR_ZLIB_INITIALIZATION_FAILED',
  'ERR_ACCESS_DENIED',
  'ERR_BUFFER_TOO_LARGE',
  'ERR_CRYPTO_HASH_FINALIZED',
  'ERR_CRYPTO_HASH_UPDATE_FAILED',
  'ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE',
  'ERR_DLOPEN_FAILED',
  'ERR_INVALID_ARG_TYPE',
  'ERR_INVALID_ARG_VALUE',
  'ERR_INVALID_RETURN_VALUE',
  'ERR_INVALID_STATE',
  'ERR_MEMORY_ALLOCATION_FAILED',
  'ERR_METHOD_NOT_IMPLEMENTED',
  'ERR_OUT_OF_RANGE',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
  'ERR_STRING_TOO_LONG',
  'ERR_TRAILING_JUNK_AFTER_STREAM_END',
  'ERR_ZLIB_INCOMPLETE_FRAME',
  'ERR_UNKNOWN_ENCODING',
  // A brotli code this Node's constants may not list yet (the decoder is newer).
  'ERR__ERROR_COMPOUND_DICTIONARY',
]) {
  COUNTED_CODES[code] = true;
}
// (`zlib.codes` is Node's; @types/node lacks it.)
for (const name of Object.keys(
  /** @type {{ codes: Record<string, number> }} */ (/** @type {unknown} */ (zlib)).codes,
))
  if (name.startsWith('Z_')) COUNTED_CODES[name] = true;
// node:zlib's brotli codes: BROTLI_DECODER_ERROR_FORMAT_PADDING_1 fails as ERR__ERROR_FORMAT_PADDING_1.
for (const name of Object.keys(zlib.constants)) {
  if (name.startsWith('BROTLI_DECODER_ERROR_'))
    COUNTED_CODES[`ERR_${name.slice('BROTLI_DECODER'.length)}`] = true;
}
// zstd's codes, ZSTD_error_corruption_detected and the others (the
// module's constants: node:zlib has them from Node 22.15).
for (const name of Object.keys(require('./codecs/constants').constants)) {
  if (name.startsWith('ZSTD_error_')) COUNTED_CODES[name] = true;
}
for (const [name] of getSystemErrorMap().values()) COUNTED_CODES[name] = true;

/** What a failed task counts under: its error's own code when it is one of COUNTED_CODES, else 'other'. */
function countedCode(err) {
  const code = ownCode(err);
  return code !== undefined && COUNTED_CODES[code] === true ? code : 'other';
}

/** A short description of a received value, as Node's argument errors give it. */
function describe(value) {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return `function ${value.name || '<anonymous>'}`;
  if (typeof value === 'object') {
    let name;
    try {
      // A getter or a Proxy trap may throw: the description must not.
      name = value.constructor && value.constructor.name;
    } catch {
      name = undefined;
    }
    return typeof name === 'string' && name !== '' ? `an instance of ${name}` : 'an object';
  }
  let shown = typeof value === 'bigint' ? `${value}n` : String(value);
  if (shown.length > 28) shown = `${shown.slice(0, 25)}...`;
  if (typeof value === 'string') shown = `'${shown}'`;
  return `type ${typeof value} (${shown})`;
}

/**
 * The name an error gives the argument at fault. `name` may be a function
 * that makes it: a batch names each element (`messages[41]`) without making
 * that string for every element that passes.
 */
function label(name) {
  return typeof name === 'function' ? name() : name;
}

/** Node's word for what `name` names: a property (`options.level`) or an argument. */
function kindOf(name) {
  return name.includes('.') ? 'property' : 'argument';
}

function invalidArgType(name, expected, actual, received = describe(actual)) {
  const at = label(name);
  return makeError(
    TypeError,
    'ERR_INVALID_ARG_TYPE',
    `The "${at}" ${kindOf(at)} must be ${expected}. Received ${received}`,
  );
}

function invalidArgValue(name, reason) {
  const at = label(name);
  return makeError(TypeError, 'ERR_INVALID_ARG_VALUE', `The ${kindOf(at)} '${at}' ${reason}`);
}

/** A binary whose memory cannot be read: detached, or out of bounds of its ArrayBuffer. */
function invalidState(name, reason) {
  return makeError(TypeError, 'ERR_INVALID_STATE', `Invalid state: "${label(name)}" ${reason}`);
}

/** `digits` with an underscore every three from the right, as Node's errors show large numbers. */
function separated(digits) {
  let out = '';
  let i = digits.length;
  const start = digits[0] === '-' ? 1 : 0;
  for (; i >= start + 4; i -= 3) out = `_${digits.slice(i - 3, i)}${out}`;
  return `${digits.slice(0, i)}${out}`;
}

function outOfRange(name, range, actual) {
  // Node's words for what was received: large integers and bigints
  // grouped, other numbers as inspect() shows them (-0).
  let received = typeof actual === 'number' ? inspect(actual) : String(actual);
  if (typeof actual === 'bigint') {
    if (actual > 2n ** 32n || actual < -(2n ** 32n)) received = separated(received);
    received += 'n';
  } else if (Number.isInteger(actual) && Math.abs(actual) > 2 ** 32) {
    received = separated(received);
  }
  return makeError(
    RangeError,
    'ERR_OUT_OF_RANGE',
    `The value of "${label(name)}" is out of range. It must be ${range}. Received ${received}`,
  );
}

/** An option name the function does not know (a typo must not pass unnoticed). */
function unknownOption(where, key, known, hint) {
  const suggestion = closest(key, known);
  let message = `The property '${where}.${key}' is not a known option`;
  if (hint !== undefined) message += `: ${hint}.`;
  else if (suggestion !== undefined) message += `. Did you mean '${suggestion}'?`;
  else message += '.';
  message += ` Known options: ${known.join(', ')}`;
  return makeError(TypeError, 'ERR_INVALID_ARG_VALUE', message);
}

/**
 * The kernel `name` was meant to be: the one it names in another spelling
 * (node:crypto's 'SHA256', WebCrypto's 'SHA-256', 'xxh_64': case, dashes
 * and underscores aside), else the nearest within two edits.
 */
function closestKernel(name, kernels) {
  const bare = (s) => s.toLowerCase().replace(/[-_\s]/g, '');
  const wanted = bare(name);
  for (const kernel of kernels) if (bare(kernel) === wanted) return kernel;
  // A name near in spelling but with other numbers is another algorithm
  // (sha3-256 is no sha256, blake2b no blake3): no suggestion then. A name
  // without numbers may lack them ('blake' for blake3).
  const numbers = (s) => (s.match(/\d+/g) ?? []).join(' ');
  const near = closest(name, kernels);
  if (near === undefined || numbers(name) === '' || numbers(near) === numbers(name)) return near;
  return undefined;
}

/** The known name nearest to `key` (edit distance at most 2), if any. */
function closest(key, known) {
  let best;
  let bestDistance = 3;
  for (const name of known) {
    const d = editDistance(key.toLowerCase(), name.toLowerCase());
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a, b) {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length];
}

function closedError() {
  return makeError(Error, 'ERR_TIDEPOOL_CLOSED', 'The pool is closed and accepts no new tasks');
}

/** Node's convention for aborted operations (as fs, timers/promises, events.once). */
function abortError(reason) {
  const err = new Error('The operation was aborted', { cause: reason });
  own(err, 'name', 'AbortError');
  own(err, 'code', 'ABORT_ERR');
  return err;
}

function queueFullError() {
  return makeError(
    Error,
    'ERR_TIDEPOOL_QUEUE_FULL',
    'The queue is full (maxQueue tasks are waiting)',
  );
}

function droppedError() {
  return makeError(
    Error,
    'ERR_TIDEPOOL_DROPPED',
    'The task was dropped from a full queue to make room for a newer one',
  );
}

/** The error of a failed task, from its native code (see TASK_CODES) and detail text. */
function taskError(code, detail, destroyed) {
  switch (code) {
    case TASK_CODES.panic:
      return makeError(Error, 'ERR_TIDEPOOL_PANIC', `The kernel panicked: ${detail}`);
    case TASK_CODES.cancelled:
      return destroyed
        ? makeError(
            Error,
            'ERR_TIDEPOOL_DESTROYED',
            'The pool was destroyed before the task finished',
          )
        : makeError(Error, 'ERR_TIDEPOOL_CANCELLED', 'The task was cancelled');
    case TASK_CODES.invalidInput:
      return makeError(RangeError, 'ERR_TIDEPOOL_INVALID_INPUT', detail);
    case TASK_CODES.timedOut:
      return makeError(
        Error,
        'ERR_TIDEPOOL_TIMEOUT',
        'The task ran longer than its timeoutMs and was stopped',
      );
    case TASK_CODES.tooLarge:
      return makeError(
        RangeError,
        'ERR_BUFFER_TOO_LARGE',
        `Cannot create a result larger than maxOutputBytes (${detail} bytes)`,
      );
    case TASK_CODES.format: {
      // "CODE ERRNO message": the code names the failure and errno is the
      // library's number for it (0: none), as on node:zlib's errors.
      const [code, errno] = detail.split(' ', 2);
      const message = detail.slice(code.length + 1 + (errno === undefined ? 0 : errno.length + 1));
      return makeError(
        // node:zlib's is a TypeError, as the other codes of its own.
        code === 'ERR_TRAILING_JUNK_AFTER_STREAM_END' ? TypeError : Error,
        code,
        message,
        errno !== undefined && errno !== '0' ? { errno: Number(errno) } : undefined,
      );
    }
    case TASK_CODES.failed: {
      // "CODE message": a loaded kernel's own code (an identifier, checked
      // natively) and words.
      const space = detail.indexOf(' ');
      return makeError(Error, detail.slice(0, space), detail.slice(space + 1));
    }
    case TASK_CODES.io: {
      // "syscall errno name": a file postFile() could not read.
      const [syscall, errno, name] = detail.split(' ', 3);
      return fsError(syscall, Number(errno), name);
    }
    case TASK_CODES.unequalLength: {
      // "expected got": postMany({ packed: true }) found results of two lengths.
      const [expected, got] = detail.split(' ', 2);
      return makeError(
        RangeError,
        'ERR_TIDEPOOL_PACKED_LENGTH',
        `Packed results must have one length: this message's is ${got} bytes, ` +
          `another's ${expected}`,
      );
    }
    case TASK_CODES.bufferTooLarge:
      // The kernel's result is longer than any Buffer Node can make
      // (buffer.constants.MAX_LENGTH): Node's own error and words.
      return makeError(
        RangeError,
        'ERR_BUFFER_TOO_LARGE',
        `Cannot create a Buffer larger than ${detail} bytes`,
      );
    case TASK_CODES.expired:
      return makeError(
        Error,
        'ERR_TIDEPOOL_TIMEOUT',
        'The task waited in the queue longer than maxQueueAgeMs and was not run',
      );
    default:
      return makeError(
        Error,
        'ERR_TIDEPOOL_INTERNAL',
        `Unknown native error code ${code}: ${detail}`,
      );
  }
}

let errorMap;
const kFileFailure = Symbol('tidepool file failure');

/** The failed system call behind `err` when it is a file error of ours without its path, else undefined. */
function fileFailure(err) {
  return err !== null && typeof err === 'object' ? err[kFileFailure] : undefined;
}

/**
 * A failed system call as `fs` reports it: `ENOENT: no such file or
 * directory, open '/x'` with `errno` (negative, as libuv's), `code`,
 * `syscall` and `path`. `errno` is the OS's number (0 where the platform's
 * numbers are not libuv's), `name` the POSIX name the native side gave;
 * `shown` the path as the caller gave it (postFile adds it: the native
 * side does not know it).
 */
function fsError(syscall, errno, name, shown = undefined) {
  errorMap ??= getSystemErrorMap();
  const known = errno !== 0 ? errorMap.get(-errno) : undefined;
  const code = known === undefined ? name : known[0];
  const description =
    known !== undefined
      ? known[1]
      : name === 'ERR_TIDEPOOL_NOT_A_FILE'
        ? 'not a regular file (postFile() reads no FIFO, socket or device)'
        : 'the file could not be read';
  const props = { code, syscall };
  if (known !== undefined) props.errno = -errno;
  if (shown === undefined) {
    // Marked as ours (a symbol no caller can reach, not a property a
    // polluted prototype could fake): postFile() adds the path.
    const err = makeError(Error, code, `${code}: ${description}, ${syscall}`, props);
    Object.defineProperty(err, kFileFailure, { value: { syscall, errno, name } });
    return err;
  }
  props.path = shown;
  return makeError(Error, code, `${code}: ${description}, ${syscall} '${shown}'`, props);
}

/** A task the pool's destroy() cancelled (queued, waiting or running). */
function destroyedError() {
  return taskError(TASK_CODES.cancelled, '', true);
}

function rethrow(err) {
  throw err;
}

/**
 * Surfaces each of `errors` (exceptions thrown by user listeners) as its own
 * uncaught exception, after the current batch has settled, as an
 * EventEmitter would have thrown each of them.
 */
function throwLater(errors) {
  for (let i = 0; i < errors.length; i++) process.nextTick(rethrow, errors[i]);
}

module.exports = {
  fsError,
  ownCode,
  countedCode,
  fileFailure,
  label,
  destroyedError,
  makeError,
  stacklessError,
  own,
  describe,
  invalidArgType,
  invalidArgValue,
  invalidState,
  outOfRange,
  unknownOption,
  closestKernel,
  closedError,
  abortError,
  queueFullError,
  droppedError,
  taskError,
  throwLater,
};
