'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-deflate-constructors.js:
// Deflate and DeflateRaw work with and without `new`; Deflate's options
// (chunkSize, windowBits, level, memLevel, strategy, dictionary) and
// params(level, strategy) are checked as node:zlib checks them, with its
// error codes and messages; every valid strategy is taken; Z_MAX_CHUNK is
// Infinity. (The streams made are destroyed after each run: a pool stream
// holds a codec until then.)

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

/** Node's ERR_INVALID_ARG_TYPE for a string where a number goes. */
const notNumber = (name, kind) => ({
  code: 'ERR_INVALID_ARG_TYPE',
  name: 'TypeError',
  message: `The "${name}" ${kind} must be of type number. Received type string ('test')`,
});
/** Node's ERR_OUT_OF_RANGE. */
const outOfRange = (name, range, received) => ({
  code: 'ERR_OUT_OF_RANGE',
  name: 'RangeError',
  message: `The value of "${name}" is out of range. It must be ${range}. Received ${received}`,
});

test('Deflate and DeflateRaw, their options and params()', async () => {
  await both(
    (zlib, _common, who) => {
      const made = [];
      const make = (stream) => {
        made.push(stream);
        return stream;
      };
      try {
        // With and without `new`.
        assert.ok(make(zlib.Deflate()) instanceof zlib.Deflate, who);
        assert.ok(make(new zlib.Deflate()) instanceof zlib.Deflate, who);
        assert.ok(make(zlib.DeflateRaw()) instanceof zlib.DeflateRaw, who);
        assert.ok(make(new zlib.DeflateRaw()) instanceof zlib.DeflateRaw, who);

        const deflate = (options) => make(new zlib.Deflate(options));
        const params = (...args) => make(new zlib.Deflate()).params(...args);

        assert.throws(
          () => deflate({ chunkSize: 'test' }),
          notNumber('options.chunkSize', 'property'),
        );
        assert.throws(
          () => deflate({ chunkSize: -Infinity }),
          outOfRange('options.chunkSize', 'a finite number', '-Infinity'),
        );
        assert.throws(() => deflate({ chunkSize: 0 }), outOfRange('options.chunkSize', '>= 64', 0));

        // The largest chunk size cannot be passed: there is none.
        assert.equal(zlib.constants.Z_MAX_CHUNK, Infinity, who);

        for (const name of ['windowBits', 'level', 'memLevel', 'strategy']) {
          const at = `options.${name}`;
          assert.throws(() => deflate({ [name]: 'test' }), notNumber(at, 'property'));
          for (const value of [-Infinity, Infinity]) {
            assert.throws(
              () => deflate({ [name]: value }),
              outOfRange(at, 'a finite number', value),
            );
          }
        }
        assert.throws(
          () => deflate({ windowBits: 0 }),
          outOfRange('options.windowBits', '>= 8 and <= 15', 0),
        );
        assert.throws(
          () => deflate({ level: -2 }),
          outOfRange('options.level', '>= -1 and <= 9', -2),
        );
        assert.throws(
          () => deflate({ memLevel: -2 }),
          outOfRange('options.memLevel', '>= 1 and <= 9', -2),
        );
        assert.throws(
          () => deflate({ strategy: -2 }),
          outOfRange('options.strategy', '>= 0 and <= 4', -2),
        );

        // Every valid strategy is taken.
        const { Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED, Z_DEFAULT_STRATEGY } = zlib.constants;
        for (const strategy of [Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED, Z_DEFAULT_STRATEGY])
          deflate({ strategy });

        // params(level, strategy).
        assert.throws(() => params('test'), notNumber('level', 'argument'));
        assert.throws(() => params(0, 'test'), notNumber('strategy', 'argument'));
        for (const value of [-Infinity, Infinity]) {
          assert.throws(() => params(value), outOfRange('level', 'a finite number', value));
          assert.throws(() => params(0, value), outOfRange('strategy', 'a finite number', value));
        }
        assert.throws(() => params(-2), outOfRange('level', '>= -1 and <= 9', -2));
        assert.throws(() => params(0, -2), outOfRange('strategy', '>= 0 and <= 4', -2));

        assert.throws(() => deflate({ dictionary: 'not a buffer' }), {
          code: 'ERR_INVALID_ARG_TYPE',
          name: 'TypeError',
          message:
            'The "options.dictionary" property must be an instance of Buffer, TypedArray, ' +
            "DataView, or ArrayBuffer. Received type string ('not a buffer')",
        });
      } finally {
        for (const stream of made) stream.destroy();
      }
    },
    { work: false },
  );
});
