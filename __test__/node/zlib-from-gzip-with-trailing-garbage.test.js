'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-from-gzip-with-trailing-garbage.js:
// gzip members followed by zeros gunzip to the members' data, sync and
// async; followed by bytes that start like a gzip header (1f 8b) with a
// bad compression method, with zeros after them or not, they fail with
// Z_DATA_ERROR "unknown compression method", and the async callback gets
// no result.

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

test('trailing zeros are ignored', async () => {
  await both(async (zlib, common, who) => {
    const data = Buffer.concat([zlib.gzipSync('abc'), zlib.gzipSync('def'), Buffer.alloc(10)]);
    assert.equal(zlib.gunzipSync(data).toString(), 'abcdef', `${who}: gunzipSync`);
    const result = await new Promise((resolve) => zlib.gunzip(data, common.mustSucceed(resolve)));
    assert.equal(
      result.toString(),
      'abcdef',
      `${who}: result '${result.toString()}' should match original string`,
    );
  });
});

test('trailing bytes that look like a gzip header are an error', async () => {
  await both(
    async (zlib, common, who) => {
      const members = [zlib.gzipSync('abc'), zlib.gzipSync('def')];
      const header = Buffer.from([0x1f, 0x8b, 0xff, 0xff]);
      for (const [what, data] of [
        // Followed by zeros.
        ['a header and zeros', Buffer.concat([...members, header, Buffer.alloc(10)])],
        // Too short to be a gzip member: still an error.
        ['a header alone', Buffer.concat([...members, header])],
      ]) {
        assert.throws(() => zlib.gunzipSync(data), /^Error: unknown compression method$/);
        const [err, result] = await new Promise((resolve) =>
          zlib.gunzip(
            data,
            common.mustCall((...args) => resolve(args)),
          ),
        );
        assert.ok(err instanceof Error, `${who}, ${what}: ${err}`);
        common.expectsError({
          code: 'Z_DATA_ERROR',
          name: 'Error',
          message: 'unknown compression method',
        })(err);
        assert.equal(result, undefined, `${who}, ${what}`);
      }
    },
    { work: 'any' },
  );
});
