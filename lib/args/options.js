'use strict';
// Validation of the options of `new Pool()`, `post()` and `stats()`: every
// value checked for type and range, defaults filled in, and every unknown
// name refused. A misspelt option that is silently ignored is worse than an
// error: `post(b, { kernal: 'md5' })` would hash with SHA-256 and say
// nothing.
//
// The options are an object's own enumerable string-keyed properties (what
// `{ ...options }` copies). An inherited name is neither refused nor read:
// one enumerable property on Object.prototype (a polluted prototype, or a
// library's shim) would otherwise make every call throw, or change a
// kernel or a signal behind the caller's back; a getter there never runs.
//
// The folder: what a call is given, read once and checked.
//   options.js       this file: the pool's options, and the checks they share
//   task-options.js  a task's or a batch's options, as the engine takes them
//   params.js        a kernel's parameters, as the native handle takes them
//   files.js         postFile()'s paths
//   kernels.js       kernel libraries (loadKernels())

const { invalidArgType, outOfRange, makeError, unknownOption } = require('../errors');
const { uncurryThis } = require('../base/intrinsics');

const ENCODINGS = Object.freeze(['buffer', 'hex', 'base64', 'base64url']);
const SCALE_RULES = Object.freeze(['queue-age', 'backlog', 'demand']);
const QUEUE_FULL_POLICIES = Object.freeze(['reject', 'drop-oldest', 'wait']);
const BUDGETS = Object.freeze(['process', 'machine']);
const MAX_THREADS_LIMIT = 1024;

const POOL_OPTIONS = Object.freeze([
  'kernel',
  'encoding',
  'select',
  'minThreads',
  'maxThreads',
  'spawnDelayMs',
  'idleTimeoutMs',
  'checkIntervalMs',
  'scaleRule',
  'maxQueue',
  'queueFull',
  'maxQueueAgeMs',
  'maxInputBytes',
  'maxOutputBytes',
  'maxWorkingBytes',
  'niceIncrement',
  'budget',
  'params',
]);
const POST_OPTIONS = Object.freeze(['kernel', 'params', 'signal', 'timeoutMs', 'maxOutputBytes']);
const MAP_OPTIONS = Object.freeze([...POST_OPTIONS, 'concurrency']);
const POST_MANY_OPTIONS = Object.freeze([...POST_OPTIONS, 'packed']);
const STATS_OPTIONS = Object.freeze(['reset']);
/** Most tasks a map() may have in flight. */
const MAX_CONCURRENCY = 2 ** 20;

// The engine's own, captured at load: a caller's replacement is not consulted.
const hasOwn = Object.hasOwn;
const isOwnEnumerable = uncurryThis(Object.prototype.propertyIsEnumerable);

/**
 * The names of built-in kernels' parameters (index.d.ts's *Params): given
 * beside the options, as node:zlib takes `level`, they belong in `params`.
 */
const PARAM_NAMES = Object.freeze([
  'level',
  'windowBits',
  'memLevel',
  'strategy',
  'quality',
  'lgwin',
  'mode',
  'sizeHint',
  'checksum',
  'blockSize',
  'contentChecksum',
  'blockChecksum',
  'hash',
  'key',
  'context',
  'seed',
]);

/** node:zlib's options that go by another name here. */
const ZLIB_RENAMED = Object.freeze({ __proto__: null, maxOutputLength: 'maxOutputBytes' });

/**
 * Why an option is refused where a caller used to another API (node:zlib,
 * node:crypto) or to another method would give it: a kernel parameter
 * beside the options, a node:zlib name, or `where`'s option of another
 * method. Undefined when there is nothing to add to "did you mean".
 * `call` shows the call, `%` standing for its options object.
 */
function misplacedHint(key, call) {
  if (PARAM_NAMES.includes(key)) {
    return `'${key}' is a kernel parameter here: pass it in params, ${call.replace('%', `{ params: { ${key}: ... } }`)}`;
  }
  if (ZLIB_RENAMED[key] !== undefined) return `node:zlib's '${key}' is '${ZLIB_RENAMED[key]}' here`;
  return undefined;
}

/** Why a pool option is refused by `method`, when it is one. */
function taskHint(key, method) {
  if (POOL_OPTIONS.includes(key)) return `'${key}' is an option of new Pool(), not of ${method}()`;
  if (key === 'concurrency') return `'concurrency' is an option of map(), not of ${method}()`;
  if (key === 'packed')
    return `'packed' is an option of postMany() and postRecords(), not of ${method}()`;
  return misplacedHint(key, method === 'post' ? 'post(message, %)' : `${method}(messages, %)`);
}

/**
 * Throws `ERR_INVALID_ARG_VALUE` for the first own enumerable name of
 * `options` not in `known`. Inherited names and symbol keys are not options
 * and are not looked at.
 */
function checkKeys(options, known, where, hint) {
  for (const key in options) {
    if (!hasOwn(options, key)) continue;
    if (!known.includes(key))
      throw unknownOption(where, key, known, hint === undefined ? undefined : hint(key));
  }
}

/**
 * The options of `options` (an object) that `known` names, each read once
 * into an object without a prototype (a name not given reads as undefined
 * there, whatever Object.prototype holds); an unknown own name throws first,
 * before any value is read.
 */
function ownOptions(options, known, where, hint) {
  checkKeys(options, known, where, hint);
  const given = { __proto__: null };
  for (let i = 0; i < known.length; i++) {
    const name = known[i];
    if (isOwnEnumerable(options, name)) given[name] = options[name];
  }
  return given;
}

/**
 * Which task options an object gives (`TASK_OPTION` bits), from the one
 * pass over its names that refuses unknown ones: the reader then reads only
 * those, without a look-up per absent name (this runs per post).
 */
const TASK_OPTION = Object.freeze({
  kernel: 1,
  params: 2,
  signal: 4,
  timeoutMs: 8,
  maxOutputBytes: 16,
  concurrency: 32,
  packed: 64,
});

/**
 * The options of `post()`, `postMany()` and `map()` (`method`): called per
 * post, so a switch rather than a list search. Returns the `TASK_OPTION`
 * bits of the names `options` has as its own.
 */
function checkTaskKeys(options, method) {
  let given = 0;
  for (const key in options) {
    if (!hasOwn(options, key)) continue;
    switch (key) {
      case 'kernel':
        given |= TASK_OPTION.kernel;
        break;
      case 'params':
        given |= TASK_OPTION.params;
        break;
      case 'signal':
        given |= TASK_OPTION.signal;
        break;
      case 'timeoutMs':
        given |= TASK_OPTION.timeoutMs;
        break;
      case 'maxOutputBytes':
        given |= TASK_OPTION.maxOutputBytes;
        break;
      case 'concurrency':
        if (method !== 'map') throw unknownTaskOption(key, method);
        given |= TASK_OPTION.concurrency;
        break;
      case 'packed':
        if (method !== 'postMany' && method !== 'postRecords') throw unknownTaskOption(key, method);
        given |= TASK_OPTION.packed;
        break;
      default:
        throw unknownTaskOption(key, method);
    }
  }
  return given;
}

function unknownTaskOption(key, method) {
  const known =
    method === 'map'
      ? MAP_OPTIONS
      : method === 'postMany' || method === 'postRecords'
        ? POST_MANY_OPTIONS
        : POST_OPTIONS;
  return unknownOption('options', key, known, taskHint(key, method));
}

/** map()'s `concurrency` (the value given, or undefined): how many of its tasks may be in flight at once. */
function concurrencyOption(value, fallback) {
  return checkInteger(value, 'concurrency', 1, MAX_CONCURRENCY, fallback);
}

function integerOption(options, name, min, max, fallback) {
  return checkInteger(options[name], name, min, max, fallback);
}

function checkInteger(value, name, min, max, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw invalidArgType(`options.${name}`, 'of type number', value);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw outOfRange(`options.${name}`, `an integer >= ${min} and <= ${max}`, value);
  }
  return value;
}

function msOption(options, name, min, fallback) {
  const value = options[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'number') throw invalidArgType(`options.${name}`, 'of type number', value);
  if (!Number.isFinite(value) || value < min || value > 2 ** 31) {
    throw outOfRange(`options.${name}`, `a finite number >= ${min} and <= 2^31`, value);
  }
  return value;
}

/**
 * A limit that may be `Infinity` (the default: no limit). `min` is
 * inclusive unless `above` is set, then the value must exceed it.
 */
function limitOption(options, name, min, max, { integer = false, above = false } = {}) {
  const value = options[name];
  if (value === undefined || value === Infinity) return Infinity;
  if (typeof value !== 'number') throw invalidArgType(`options.${name}`, 'of type number', value);
  const low = above ? value <= min : value < min;
  if (Number.isNaN(value) || low || value > max || (integer && !Number.isInteger(value))) {
    const kind = integer ? 'an integer' : 'a number';
    throw outOfRange(
      `options.${name}`,
      `${kind} ${above ? '>' : '>='} ${min} and <= ${max}, or Infinity`,
      value,
    );
  }
  return value;
}

/** A string option that must be one of `values`. */
function oneOfOption(options, name, values, fallback) {
  const value = options[name] === undefined ? fallback : options[name];
  if (values.includes(value)) return value;
  if (typeof value !== 'string') throw invalidArgType(`options.${name}`, 'of type string', value);
  throw makeError(
    TypeError,
    'ERR_INVALID_ARG_VALUE',
    `The property 'options.${name}' must be one of: ${values.map((e) => `'${e}'`).join(', ')}. Received '${value}'`,
  );
}

/**
 * Checks `new Pool(options)` and fills in the defaults. `kernelId(name,
 * argName)` resolves a kernel name; `failSpawnsAfterKey` is the symbol of a
 * test hook passed on to the native options. `params` is handed back as
 * read, for the kernel's own check (lib/args/params.js).
 */
function resolvePoolOptions(given, defaults, kernelId, failSpawnsAfterKey, budgetCapacityKey) {
  if (given !== undefined && (given === null || typeof given !== 'object'))
    throw invalidArgType('options', 'of type object', given);
  // Each read once, into an object without a prototype: the readers below
  // see only what the caller gave as its own.
  const options =
    given === undefined
      ? { __proto__: null }
      : ownOptions(given, POOL_OPTIONS, 'options', (key) => misplacedHint(key, 'new Pool(%)'));
  const kernel = kernelId(
    options.kernel === undefined ? defaults.kernel : options.kernel,
    'options.kernel',
  );
  const encoding = oneOfOption(options, 'encoding', ENCODINGS, defaults.encoding);
  const select = options.select;
  if (select !== undefined && typeof select !== 'function') {
    throw invalidArgType('options.select', 'of type function', select);
  }
  const scaleRule = oneOfOption(options, 'scaleRule', SCALE_RULES, defaults.scaleRule);
  const maxThreads = integerOption(
    options,
    'maxThreads',
    1,
    MAX_THREADS_LIMIT,
    defaults.maxThreads,
  );
  const minThreads = integerOption(
    options,
    'minThreads',
    0,
    maxThreads,
    Math.min(defaults.minThreads, maxThreads),
  );
  const maxQueue = limitOption(options, 'maxQueue', 1, 0xffffffff, { integer: true });
  // 0 would expire every task (each waits a little), so it must be above 0.
  const maxQueueAgeMs = limitOption(options, 'maxQueueAgeMs', 0, 2 ** 31, { above: true });
  const maxWorkingBytes = limitOption(options, 'maxWorkingBytes', 1, Number.MAX_SAFE_INTEGER, {
    integer: true,
  });
  return {
    kernel,
    encoding,
    select,
    params: options.params,
    maxQueue,
    queueFull: oneOfOption(options, 'queueFull', QUEUE_FULL_POLICIES, defaults.queueFull),
    maxInputBytes: limitOption(options, 'maxInputBytes', 0, Number.MAX_SAFE_INTEGER, {
      integer: true,
    }),
    native: {
      stringResults: encoding !== 'buffer',
      minThreads,
      maxThreads,
      spawnDelayMs: msOption(options, 'spawnDelayMs', 0, defaults.spawnDelayMs),
      idleTimeoutMs: msOption(options, 'idleTimeoutMs', 0, defaults.idleTimeoutMs),
      checkIntervalMs: msOption(options, 'checkIntervalMs', 0.01, defaults.checkIntervalMs),
      scaleRule,
      maxQueue: maxQueue === Infinity ? undefined : maxQueue,
      maxQueueAgeMs: maxQueueAgeMs === Infinity ? undefined : maxQueueAgeMs,
      maxOutputBytes: integerOption(
        options,
        'maxOutputBytes',
        1,
        defaults.maxOutputBytes,
        defaults.maxOutputBytes,
      ),
      // Decoders (gunzip, inflate...) get a smaller default: see DEFAULTS.
      maxExpandedBytes: integerOption(
        options,
        'maxOutputBytes',
        1,
        defaults.maxOutputBytes,
        defaults.maxExpandedBytes,
      ),
      maxWorkingBytes: maxWorkingBytes === Infinity ? undefined : maxWorkingBytes,
      niceIncrement: integerOption(options, 'niceIncrement', 0, 19, defaults.niceIncrement),
      // lib/pool.js opens the machine's budget, or falls back and says why.
      machineBudget: oneOfOption(options, 'budget', BUDGETS, defaults.budget) === 'machine',
      failSpawnsAfter:
        given !== undefined && hasOwn(given, failSpawnsAfterKey)
          ? given[failSpawnsAfterKey]
          : undefined,
      budgetCapacity:
        given !== undefined && budgetCapacityKey !== undefined && hasOwn(given, budgetCapacityKey)
          ? given[budgetCapacityKey]
          : undefined,
    },
  };
}

/** `stats(options)`: whether to reset the latency histograms. */
function resolveStatsOptions(given) {
  if (given === undefined) return false;
  if (given === null || typeof given !== 'object')
    throw invalidArgType('options', 'of type object', given);
  const { reset } = ownOptions(given, STATS_OPTIONS, 'options');
  if (reset !== undefined && typeof reset !== 'boolean')
    throw invalidArgType('options.reset', 'of type boolean', reset);
  return reset === true;
}

module.exports = {
  checkTaskKeys,
  integerOption,
  oneOfOption,
  misplacedHint,
  concurrencyOption,
  ENCODINGS,
  ownOptions,
  resolvePoolOptions,
  resolveStatsOptions,
  TASK_OPTION,
};
