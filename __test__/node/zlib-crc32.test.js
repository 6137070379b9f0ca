'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-crc32.js: crc32(data[,
// value]) of a string is that of its UTF-8 bytes, starts from 0 when no
// value is given, and goes on from `value` (a running CRC) when one is;
// data that is neither a string nor a Buffer, and a value that is not a
// number, are ERR_INVALID_ARG_TYPE.
//
// Upstream checks a table of zlib-ng's test vectors (test_crc32.cc). Here
// the expected values come from a plain table-driven CRC-32 written in the
// test (checked first against the standard check value of "123456789"),
// over inputs made in the test: upstream's shapes (empty, short words,
// strings of 20, 30, 100 and 600 printable characters), from 0 and from
// seeded running values. crc32 appeared in node:zlib in Node 20.15 and
// 22.2: where it has none, the drop-in's run goes alone. The module's
// crc32 is node:zlib's own (no pool work: `work: false`).

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

const NODE_HAS_CRC32 = typeof nodeZlib.crc32 === 'function';

/** The CRC-32 (reflected, polynomial 0xedb88320) table. */
const TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** zlib's crc32(value, bytes): the CRC of `bytes`, going on from `value`. */
function referenceCrc32(bytes, value = 0) {
  let c = ~value >>> 0;
  for (const byte of bytes) c = TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

/** Seeded xorshift32: a function giving the next unsigned 32-bit number. */
function xorshift(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

/** The inputs: [string, value], printable ASCII, from 0 and from running values. */
function inputs() {
  const next = xorshift(0x1db71064);
  const printable = (length) =>
    Array.from({ length }, () => String.fromCharCode(0x21 + (next() % 94))).join('');
  const words = ['', 'abacus', 'delta', 'file', 'hello', 'quest', 'walrus', 'zlib'];
  const strings = [...words];
  for (const length of [20, 20, 20, 30, 30, 100, 100, 600]) strings.push(printable(length));
  const out = [];
  for (const s of strings) {
    out.push([s, 0]);
    out.push([s, next()]);
  }
  out.push(['', 0xffffffff]);
  return out;
}

test('the reference CRC-32 gives the standard check value', () => {
  assert.equal(referenceCrc32(Buffer.from('123456789')), 0xcbf43926);
});

test('crc32() of strings and Buffers, from 0 and from a running value', async (t) => {
  if (!NODE_HAS_CRC32) t.diagnostic('node:zlib has no crc32 here: the drop-in runs alone');
  await both(
    (zlib, _common, who) => {
      if (zlib === nodeZlib && !NODE_HAS_CRC32) return;
      for (const [s, value] of inputs()) {
        const buf = Buffer.from(s, 'utf8');
        const expected = referenceCrc32(buf, value);
        const what = `${who}: crc32('${s.slice(0, 24)}', ${value})`;
        assert.equal(zlib.crc32(buf, value), expected, `${what} of a Buffer`);
        assert.equal(zlib.crc32(s, value), expected, `${what} of a string`);
        if (value === 0) {
          assert.equal(zlib.crc32(buf), expected, `${what} of a Buffer, no value`);
          assert.equal(zlib.crc32(s), expected, `${what} of a string, no value`);
        }
      }
      // A string is its UTF-8 bytes; a CRC carried over is the CRC of the whole.
      const text = 'ΩΩ crc über alles';
      assert.equal(zlib.crc32(text), zlib.crc32(Buffer.from(text)), `${who}: UTF-8`);
      assert.equal(zlib.crc32('def', zlib.crc32('abc')), zlib.crc32('abcdef'), `${who}: carried`);
    },
    { work: false },
  );
});

test('crc32() refuses data and values of other types', async () => {
  await both(
    (zlib, _common, who) => {
      if (zlib === nodeZlib && !NODE_HAS_CRC32) return;
      for (const data of [undefined, null, true, 1, () => {}, {}]) {
        assert.throws(
          () => zlib.crc32(data),
          { code: 'ERR_INVALID_ARG_TYPE' },
          `${who}: data ${String(data)}`,
        );
      }
      for (const value of [null, true, () => {}, {}]) {
        assert.throws(
          () => zlib.crc32('test', value),
          { code: 'ERR_INVALID_ARG_TYPE' },
          `${who}: value ${String(value)}`,
        );
      }
    },
    { work: false },
  );
});
