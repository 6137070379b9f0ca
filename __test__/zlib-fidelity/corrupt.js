'use strict';
// The bad-input cases of the differential check: node:zlib's own streams
// with bits flipped, cut short, followed by garbage or by another stream
// (a gzip member and a zlib stream, in unzip), and with a dictionary
// missing or wrong. Each is given to every decoder that reads its format,
// whole to the one-shot and in three writes to a stream.

const nodeZlib = require('node:zlib');
const { text, DICTIONARY } = require('./cases');

const c = nodeZlib.constants;

/** A seeded generator of integers below `n` (xorshift32). */
function seeded(seed) {
  let x = seed >>> 0 || 1;
  return (n) => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x % n;
  };
}

/** `bytes` with bit `bit` of byte `at` flipped. */
function flipped(bytes, at, bit) {
  const out = Buffer.from(bytes);
  out[at] ^= 1 << bit;
  return out;
}

/** The payloads: tiny (a fixed block), short, long (dynamic blocks), stored. */
const PAYLOADS = [
  ['tiny', Buffer.from('hello, hello, hello'), {}],
  ['short', text(3_000, 3), {}],
  ['long', text(40_000, 5), {}],
  ['stored', text(2_000, 9), { level: 0 }],
];

/** Mutations of a whole stream `good`: flipped bits, cuts and what may follow its end. */
function mutations(good, random, flips, other) {
  const out = [];
  // The header's bits, then bits anywhere.
  for (let at = 0; at < Math.min(good.length, 12); at++)
    out.push([`flip byte ${at}`, flipped(good, at, random(8))]);
  for (let i = 0; i < flips; i++) {
    const at = random(good.length);
    out.push([`flip byte ${at}`, flipped(good, at, random(8))]);
  }
  for (const n of [0, 1, 2, 5, good.length >> 1, good.length - 8, good.length - 4, good.length - 1])
    if (n >= 0 && n < good.length) out.push([`cut to ${n}`, good.subarray(0, n)]);
  const after = [
    ['a zero', Buffer.alloc(1)],
    ['ten zeros', Buffer.alloc(10)],
    ['garbage', Buffer.from('xyz garbage')],
    ['a zero then garbage', Buffer.from('\0xyz')],
    ['itself', good],
    ...other,
  ];
  for (const [label, tail] of after)
    out.push([`followed by ${label}`, Buffer.concat([good, tail])]);
  return out;
}

/** The deflate family's cases: each format to each decoder that reads it. */
function deflateCases() {
  const cases = [];
  const random = seeded(0x2545f491);
  for (const [name, payload, options] of PAYLOADS) {
    const gzip = nodeZlib.gzipSync(payload, options);
    const zlib = nodeZlib.deflateSync(payload, options);
    const raw = nodeZlib.deflateRawSync(payload, options);
    const flips = name === 'tiny' ? 8 : 24;
    const others = (one, two, twoName) => [
      [twoName, two],
      [`zeros then ${twoName}`, Buffer.concat([Buffer.alloc(4), two])],
      [`itself then garbage`, Buffer.concat([one, Buffer.from('junk')])],
    ];
    const streams = [
      ['Gunzip', 'gzip', gzip, others(gzip, zlib, 'a zlib stream')],
      ['Unzip', 'gzip', gzip, others(gzip, zlib, 'a zlib stream')],
      ['Unzip', 'zlib', zlib, others(zlib, gzip, 'a gzip member')],
      ['Inflate', 'zlib', zlib, others(zlib, gzip, 'a gzip member')],
      ['InflateRaw', 'raw', raw, others(raw, zlib, 'a zlib stream')],
    ];
    for (const [cls, format, good, other] of streams) {
      for (const [label, input] of mutations(good, random, flips, other))
        cases.push({ cls, label: `${format} ${name}: ${label}`, input });
    }
  }
  // A dictionary: missing, wrong, given where none was used.
  const payload = text(5_000, 11);
  const withDictionary = nodeZlib.deflateSync(payload, { dictionary: DICTIONARY });
  const rawWithDictionary = nodeZlib.deflateRawSync(payload, { dictionary: DICTIONARY });
  const wrong = Buffer.from('not the dictionary');
  for (const cls of ['Inflate', 'Unzip']) {
    cases.push(
      { cls, label: 'a dictionary stream, none given', input: withDictionary },
      {
        cls,
        label: 'a dictionary stream, the wrong one',
        input: withDictionary,
        options: { dictionary: wrong },
      },
      {
        cls,
        label: 'a dictionary stream, the right one',
        input: withDictionary,
        options: { dictionary: DICTIONARY },
      },
    );
  }
  cases.push(
    { cls: 'InflateRaw', label: 'a raw dictionary stream, none given', input: rawWithDictionary },
    {
      cls: 'InflateRaw',
      label: 'a raw dictionary stream, the wrong one',
      input: rawWithDictionary,
      options: { dictionary: wrong },
    },
  );
  return cases.concat(cutAndGarbageOptions('deflate'));
}

/**
 * The options that change what a bad input gives: a decoder told not to
 * finish (a cut input is no error), told to refuse garbage after the end.
 */
function cutAndGarbageOptions(family) {
  const payload = text(30_000, 13);
  const streams = {
    deflate: () => [
      ['Gunzip', nodeZlib.gzipSync(payload), c.Z_SYNC_FLUSH],
      ['Inflate', nodeZlib.deflateSync(payload), c.Z_SYNC_FLUSH],
      ['InflateRaw', nodeZlib.deflateRawSync(payload), c.Z_SYNC_FLUSH],
      ['Unzip', nodeZlib.gzipSync(payload), c.Z_PARTIAL_FLUSH],
    ],
    brotli: () => [
      ['BrotliDecompress', nodeZlib.brotliCompressSync(payload), c.BROTLI_OPERATION_FLUSH],
    ],
    zstd: () => [['ZstdDecompress', zstd(payload), c.ZSTD_e_flush]],
  }[family]();
  const cases = [];
  for (const [cls, good, finishFlush] of streams) {
    for (const n of [0, 10, good.length >> 2, good.length >> 1, good.length - 1]) {
      const input = good.subarray(0, n);
      cases.push({
        cls,
        label: `cut to ${n}, finishFlush ${finishFlush}`,
        input,
        options: { finishFlush },
      });
    }
    for (const [label, tail] of [
      ['garbage', Buffer.from('garbage')],
      ['zeros', Buffer.alloc(8)],
      ['itself', good],
    ]) {
      const input = Buffer.concat([good, tail]);
      cases.push({
        cls,
        label: `followed by ${label}, rejectGarbageAfterEnd`,
        input,
        options: { rejectGarbageAfterEnd: true },
      });
    }
  }
  return cases;
}

function zstd(payload, options) {
  return nodeZlib.zstdCompressSync(payload, options);
}

/** brotli's and zstd's cases. */
function keyedCases(family) {
  const random = seeded(family === 'brotli' ? 0x1234567 : 0x7654321);
  const cls = family === 'brotli' ? 'BrotliDecompress' : 'ZstdDecompress';
  const encode =
    family === 'brotli'
      ? (p, q) => nodeZlib.brotliCompressSync(p, { params: { [c.BROTLI_PARAM_QUALITY]: q } })
      : (p, q) => zstd(p, { params: { [c.ZSTD_c_compressionLevel]: q } });
  const cases = [];
  for (const [name, payload] of PAYLOADS) {
    const good = encode(payload, name === 'long' ? 5 : 11 - (family === 'zstd') * 8);
    const other = family === 'zstd' ? [['another frame', zstd(Buffer.from('more'))]] : [];
    for (const [label, input] of mutations(good, random, name === 'tiny' ? 8 : 20, other))
      cases.push({ cls, label: `${name}: ${label}`, input });
  }
  if (family === 'zstd') {
    const payload = text(5_000, 17);
    const checked = zstd(payload, { params: { [c.ZSTD_c_checksumFlag]: 1 } });
    cases.push({
      cls,
      label: 'a checksum flipped',
      input: flipped(checked, checked.length - 1, 0),
    });
    const skippable = Buffer.from([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);
    cases.push({
      cls,
      label: 'a skippable frame first',
      input: Buffer.concat([skippable, zstd(payload)]),
    });
    // A frame of 100 bytes that names a 1 MiB window (no content size to
    // shrink it to): within a small output limit, its window is not.
    const wide = Buffer.concat([
      Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x50, 0x21, 0x03, 0x00]),
      Buffer.alloc(100, 7),
    ]);
    cases.push(
      { cls, label: 'a 1 MiB window', input: wide },
      {
        cls,
        label: 'a 1 MiB window, maxOutputLength 1000',
        input: wide,
        options: { maxOutputLength: 1000 },
        purpose: 'zstdWindow',
      },
    );
    const withDictionary = zstd(payload, { dictionary: DICTIONARY });
    cases.push(
      { cls, label: 'a dictionary frame, none given', input: withDictionary },
      {
        cls,
        label: 'a dictionary frame, the wrong one',
        input: withDictionary,
        options: { dictionary: Buffer.from('wrong dictionary') },
      },
    );
  }
  return cases.concat(cutAndGarbageOptions(family));
}

const FNS = {
  Gunzip: 'gunzip',
  Unzip: 'unzip',
  Inflate: 'inflate',
  InflateRaw: 'inflateRaw',
  BrotliDecompress: 'brotliDecompress',
  ZstdDecompress: 'zstdDecompress',
};

/** Every bad-input case of `family`, with its one-shot's name. */
function corruptCases(family) {
  const cases = family === 'deflate' ? deflateCases() : keyedCases(family);
  return cases.map((kase) => ({ fn: FNS[kase.cls], options: {}, pieces: 3, ...kase }));
}

module.exports = { corruptCases };
