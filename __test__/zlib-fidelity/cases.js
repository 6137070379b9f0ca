'use strict';
// The option cases of the differential check: for every class of
// node:zlib, its options with valid, edge and bad values. A case is
// `{ cls, fn, label, options }`, where `options` may be a function of the
// input (zstd's pledgedSrcSize names its length), and `input` is what the
// stream and the one-shot are given (an encoder's payload, or node:zlib's
// encoding of it for a decoder).

const nodeZlib = require('node:zlib');
const { kMaxLength } = require('node:buffer');
const { isAnyArrayBuffer } = require('node:util').types;

const c = nodeZlib.constants;

/** The classes, their one-shots and families. */
const CLASSES = {
  Gzip: { fn: 'gzip', family: 'deflate', encoder: true },
  Gunzip: { fn: 'gunzip', family: 'deflate', from: 'Gzip' },
  Deflate: { fn: 'deflate', family: 'deflate', encoder: true },
  Inflate: { fn: 'inflate', family: 'deflate', from: 'Deflate' },
  DeflateRaw: { fn: 'deflateRaw', family: 'deflate', encoder: true },
  InflateRaw: { fn: 'inflateRaw', family: 'deflate', from: 'DeflateRaw' },
  Unzip: { fn: 'unzip', family: 'deflate', from: 'Gzip' },
  BrotliCompress: { fn: 'brotliCompress', family: 'brotli', encoder: true },
  BrotliDecompress: { fn: 'brotliDecompress', family: 'brotli', from: 'BrotliCompress' },
  ZstdCompress: { fn: 'zstdCompress', family: 'zstd', encoder: true },
  ZstdDecompress: { fn: 'zstdDecompress', family: 'zstd', from: 'ZstdCompress' },
};

/** Text of `n` bytes from a seeded generator: words, so it compresses, and in several deflate blocks. */
function text(n, seed = 1) {
  const words = [];
  for (let i = 0; i < 400; i++)
    words.push(((i * 2654435761) >>> 0).toString(36).slice(0, 2 + (i % 7)));
  let x = seed;
  let out = '';
  while (out.length < n) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out += words[x % words.length] + (x % 11 === 0 ? '\n' : ' ');
  }
  return Buffer.from(out.slice(0, n));
}

/** The payload of each family: deflate's long enough for several blocks, the slower codecs' short. */
const PAYLOAD = { deflate: text(100_000), brotli: text(6_000), zstd: text(20_000) };

const DICTIONARY = Buffer.from('tidepool dictionary: ' + text(300, 7).toString());

/** Values that are not numbers, or not finite ones, for any numeric option. */
const NOT_NUMBERS = [null, NaN, Infinity, -Infinity, '1', true, {}, [], 1n];

/** The flush kinds' range of each family, and a step past each end. */
const FLUSH = {
  deflate: [-1, 0, 1, 2, 3, 4, 5, 6, 2.5],
  brotli: [-1, 0, 1, 2, 3, 4, 1.5],
  zstd: [-1, 0, 1, 2, 3, 1.5],
};

/** What every class takes (ZlibBase's options, and the options object itself). */
function common(family) {
  const cases = [
    ['no options', undefined],
    ['options null', null],
    ['options {}', {}],
    ['options a string', 'abc'],
    ['options a number', 42],
    ['options true', true],
  ];
  for (const v of [64, 63, 0, -1, 1000, 100.5, kMaxLength + 1, ...NOT_NUMBERS])
    cases.push([`chunkSize ${show(v)}`, { chunkSize: v }]);
  for (const v of [...FLUSH[family], ...NOT_NUMBERS]) {
    cases.push([`flush ${show(v)}`, { flush: v }]);
    cases.push([`finishFlush ${show(v)}`, { finishFlush: v }]);
  }
  for (const v of [1, 10, 0, -1, 1.5, kMaxLength, kMaxLength + 1, NaN, '5', null])
    cases.push([`maxOutputLength ${show(v)}`, { maxOutputLength: v }]);
  for (const v of [true, 1, 'yes', false, null]) cases.push([`info ${show(v)}`, { info: v }]);
  for (const v of [true, false, 'yes', 1, null])
    cases.push([`rejectGarbageAfterEnd ${show(v)}`, { rejectGarbageAfterEnd: v }]);
  cases.push(
    ['encoding hex', { encoding: 'hex' }],
    ['objectMode', { objectMode: true }],
    ['writableObjectMode', { writableObjectMode: true }],
    ['decodeStrings false', { decodeStrings: false }],
    ['highWaterMark 1', { highWaterMark: 1 }],
  );
  return cases;
}

/** The deflate family's own: level, windowBits, memLevel, strategy, dictionary. */
function deflateOwn() {
  let cases = [];
  for (const v of [-2, -1, 0, 1, 9, 10, 5.5, ...NOT_NUMBERS])
    cases.push([`level ${show(v)}`, { level: v }]);
  for (const v of [0, -0, 7, 8, 9, 10, 15, 16, -1, 9.5, ...NOT_NUMBERS])
    cases.push([`windowBits ${show(v)}`, { windowBits: v }]);
  for (const v of [0, 1, 9, 10, 1.5, ...NOT_NUMBERS])
    cases.push([`memLevel ${show(v)}`, { memLevel: v }]);
  for (const v of [-1, 0, 1, 2, 3, 4, 5, 2.5, ...NOT_NUMBERS])
    cases.push([`strategy ${show(v)}`, { strategy: v }]);
  cases = cases.concat(dictionaryCases());
  cases.push(
    ['level 0 strategy Z_FIXED', { level: 0, strategy: c.Z_FIXED }],
    ['windowBits 9 memLevel 1', { windowBits: 9, memLevel: 1 }],
    ['dictionary with windowBits 9', { dictionary: DICTIONARY, windowBits: 9 }],
    ['level 1 strategy Z_HUFFMAN_ONLY', { level: 1, strategy: c.Z_HUFFMAN_ONLY }],
  );
  return cases;
}

/** Dictionaries of every kind node:zlib takes, and some it refuses. */
function dictionaries() {
  const bytes = new Uint8Array(DICTIONARY);
  return [
    ['a Buffer', DICTIONARY],
    ['empty', Buffer.alloc(0)],
    ['a Uint8Array', bytes],
    ['a DataView', new DataView(bytes.buffer)],
    ['an ArrayBuffer', bytes.slice().buffer],
    ['a SharedArrayBuffer', shared(bytes)],
    ['a string', 'dictionary'],
    ['a number', 42],
    ['null', null],
    ['an array', [1, 2]],
    ['an object', {}],
  ];
}

function shared(bytes) {
  const sab = new SharedArrayBuffer(bytes.length);
  new Uint8Array(sab).set(bytes);
  return sab;
}

/** `options.params` of brotli or zstd: the object itself, then keys and values. */
function paramsCases(cls) {
  const cases = [];
  for (const v of [null, 5, false, true, 0, 'abc', '', [], [1], {}])
    cases.push([`params ${show(v)}`, { params: v }]);
  const keyed = (key, value) => [`params {${key}: ${show(value)}}`, { params: { [key]: value } }];
  if (cls === 'BrotliCompress') {
    const p = (k) => c[`BROTLI_PARAM_${k}`];
    for (const v of [0, 11, 12, -1, 4.7, '5', null, true, NaN, 1n, {}])
      cases.push(keyed(p('QUALITY'), v));
    for (const v of [9, 10, 24, 25, 30, 31]) cases.push(keyed(p('LGWIN'), v));
    for (const v of [0, 1, 2, 3]) cases.push(keyed(p('MODE'), v));
    for (const v of [0, 15, 16, 24, 25]) cases.push(keyed(p('LGBLOCK'), v));
    for (const v of [0, 1, 2]) cases.push(keyed(p('DISABLE_LITERAL_CONTEXT_MODELING'), v));
    for (const v of [0, 1000, -1]) cases.push(keyed(p('SIZE_HINT'), v));
    for (const v of [0, 3, 4]) cases.push(keyed(p('NPOSTFIX'), v));
    for (const v of [0, 3, 8, 15, 16, 121]) cases.push(keyed(p('NDIRECT'), v));
    for (const v of [false, true, 1]) cases.push(keyed(p('LARGE_WINDOW'), v));
    cases.push(
      [
        'params lgwin 28 with large window',
        { params: { [p('LGWIN')]: 28, [p('LARGE_WINDOW')]: 1 } },
      ],
      ['params npostfix 1 ndirect 2', { params: { [p('NPOSTFIX')]: 1, [p('NDIRECT')]: 2 } }],
      ['params npostfix 1 ndirect 3', { params: { [p('NPOSTFIX')]: 1, [p('NDIRECT')]: 3 } }],
    );
  } else if (cls === 'BrotliDecompress') {
    for (const v of [0, 1, true, false, 2, -1, '1', null])
      cases.push(keyed(c.BROTLI_DECODER_PARAM_DISABLE_RING_BUFFER_REALLOCATION, v));
    for (const v of [0, 1, true, 5]) cases.push(keyed(c.BROTLI_DECODER_PARAM_LARGE_WINDOW, v));
    for (const k of [2, 5, 8, 9]) cases.push(keyed(k, 1));
  } else if (cls === 'ZstdCompress') {
    const level = c.ZSTD_c_compressionLevel ?? 100;
    for (const v of [1, 19, 22, 23, 0, -1, -5, -200000, 4.7, '5', null, true, 2 ** 32 + 3])
      cases.push(keyed(level, v));
    for (const v of [true, false, 1, 0, 2]) cases.push(keyed(c.ZSTD_c_checksumFlag ?? 201, v));
    for (const k of [101, 107, 160, 200, 202, 400, 50, 0]) cases.push(keyed(k, 1));
  } else {
    for (const v of [10, 31, 0, 27]) cases.push(keyed(c.ZSTD_d_windowLogMax ?? 100, v));
    for (const k of [50, 0, 1]) cases.push(keyed(k, 1));
  }
  for (const key of ['-1', 'abc', '1.5', '1e3', '1000', '01'])
    cases.push([`params key ${key}`, { params: { [key]: 1 } }]);
  cases.push(['params key given twice', { params: { 1: 5, '01': 6 } }]);
  return cases;
}

/** A dictionary, both ways: zstd's (from Node 22.15), brotli's (from Node 24). */
function dictionaryCases() {
  return dictionaries().map(([label, v]) => [`dictionary ${label}`, { dictionary: v }]);
}

/** zstd's pledged size: its types and values, right and wrong. */
function pledgedCases(cls) {
  const cases = [];
  const sizes = [
    ['exact', (n) => n],
    ['one more', (n) => n + 1],
    ['one less', (n) => n - 1],
    ['0', () => 0],
  ];
  for (const [label, size] of sizes)
    cases.push([`pledgedSrcSize ${label}`, (input) => ({ pledgedSrcSize: size(input.length) })]);
  for (const v of [
    undefined,
    null,
    -1,
    -1.5,
    -0,
    1.5,
    '5',
    5n,
    NaN,
    Infinity,
    -Infinity,
    2 ** 53,
    true,
    {},
  ])
    cases.push([`pledgedSrcSize ${show(v)}`, { pledgedSrcSize: v }]);
  if (cls === 'ZstdCompress')
    cases.push([
      'pledgedSrcSize with a level',
      (input) => ({ pledgedSrcSize: input.length, params: { 100: 5 } }),
    ]);
  return cases;
}

/** `v` as a label. */
function show(v) {
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (Object.is(v, -0)) return '-0';
  if (Array.isArray(v)) return `[${v.map(show).join(',')}]`;
  if (v !== null && typeof v === 'object') return '{}';
  return String(v);
}

/**
 * A string written, read in the stream's `defaultEncoding` (the one-shots
 * end a stream with it): node:zlib's Writable decodes it, or refuses an
 * encoding it does not know.
 */
function stringCases(cls) {
  const { family, encoder } = CLASSES[cls];
  if (!encoder) return [];
  const payload = PAYLOAD[family].subarray(0, 4000);
  const cases = [];
  for (const encoding of [undefined, 'hex', 'latin1', 'base64', 'utf16le', 'bogus', 5]) {
    const known = typeof encoding === 'string' && Buffer.isEncoding(encoding);
    const input = payload.toString(known ? encoding : 'utf8');
    const options = encoding === undefined ? {} : { defaultEncoding: encoding };
    cases.push({
      cls,
      fn: CLASSES[cls].fn,
      label: `a string, defaultEncoding ${show(encoding)}`,
      options,
      input,
    });
  }
  return cases;
}

/** Every option case of class `cls`, each with the input its stream and one-shot get. */
function optionCases(cls) {
  const { family, from } = CLASSES[cls];
  let cases = common(family);
  if (family === 'deflate') cases = cases.concat(deflateOwn());
  else cases = cases.concat(paramsCases(cls), dictionaryCases());
  if (family === 'zstd') cases = cases.concat(pledgedCases(cls));
  return cases
    .map(([label, options]) => {
      const payload = PAYLOAD[family];
      const input = from === undefined ? payload : encodeFor(cls, options, payload);
      const given = typeof options === 'function' ? options(input) : options;
      return { cls, fn: CLASSES[cls].fn, label, options: given, input };
    })
    .concat(stringCases(cls));
}

/** node:zlib's encoding of `payload` that decoder `cls` given `options` reads: with its dictionary, if any. */
const encoded = new Map();
function encodeFor(cls, options, payload) {
  const { from } = CLASSES[cls];
  const dictionary = options !== null && typeof options === 'object' && options.dictionary;
  // Every dictionary of these cases that node:zlib takes holds DICTIONARY's bytes.
  const withDictionary =
    (ArrayBuffer.isView(dictionary) || isAnyArrayBuffer(dictionary)) &&
    dictionary.byteLength > 0 &&
    from !== 'Gzip';
  const key = `${from}:${withDictionary}`;
  if (!encoded.has(key)) {
    // node:zlib's encoder, with the dictionary where it takes one (brotli's from Node 24).
    const fn = nodeZlib[`${CLASSES[from].fn}Sync`];
    encoded.set(key, fn(payload, withDictionary ? { dictionary: DICTIONARY } : {}));
  }
  return encoded.get(key);
}

module.exports = { CLASSES, PAYLOAD, DICTIONARY, optionCases, text, show };
