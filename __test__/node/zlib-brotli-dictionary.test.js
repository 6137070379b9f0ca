'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-brotli-dictionary.js:
// brotli with a custom dictionary (`options.dictionary`). Compressed with
// it, the input is smaller than without (never larger), and decodes back
// with the same dictionary, through the one-shots and through a
// BrotliCompress piped into a BrotliDecompress; without the dictionary, or
// with another, decoding fails with a code ERR_*, as an exception, a
// callback's error or a stream's 'error'; the dictionary may be an
// ArrayBuffer or a Uint8Array; a dictionary that is not binary data (a
// string, a number, a boolean, an object, an array) is
// ERR_INVALID_ARG_TYPE from both factories.
//
// node:zlib takes a brotli dictionary from Node 24 (before, it ignores the
// option; detected: what it compresses with one decodes without it).
// The drop-in differs on purpose (docs/zlib.md, "brotli `dictionary`"):
// where node:zlib takes one, a non-empty dictionary is
// ERR_TIDEPOOL_ZLIB_UNSUPPORTED when the stream or one-shot is made (the
// brotli binding it runs on cannot attach one); where node:zlib ignores
// the option, so does the drop-in. So each check below runs node:zlib's
// half as upstream has it, and the drop-in's half checks that documented
// line instead, except the type checks of the option, which both keep.

const test = require('node:test');
const assert = require('node:assert/strict');
const { promisify } = require('node:util');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

const dictionary = Buffer.from(
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit. \n' +
    '  Sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. \n' +
    '  Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat.',
);
const input = Buffer.from(
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit. \n' +
    '  Lorem ipsum dolor sit amet, consectetur adipiscing elit. \n' +
    '  Sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. \n' +
    '  Sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. \n' +
    '  Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur.',
);
const wrongDictionary = Buffer.from('this is the wrong dictionary');

/** Whether node:zlib's brotli takes the dictionary (output made with it needs it). */
const NODE_HAS_DICTIONARY = (() => {
  const compressed = nodeZlib.brotliCompressSync(input, { dictionary });
  try {
    nodeZlib.brotliDecompressSync(compressed);
    return false;
  } catch {
    return true;
  }
})();

/**
 * `check` for node:zlib's run where it has a brotli dictionary; for the
 * drop-in's, its documented difference (see the top of the file).
 */
function dictionaryCheck(check) {
  return (zlib, common, who) => {
    if (zlib !== nodeZlib) return documentedDifference(zlib, who);
    if (!NODE_HAS_DICTIONARY) return undefined;
    return check(zlib, common, who, NODE_HAS_DICTIONARY);
  };
}

/** The drop-in's line of docs/zlib.md: refused where node:zlib takes one, else ignored as there. */
async function documentedDifference(zlib, who) {
  if (NODE_HAS_DICTIONARY) {
    const unsupported = { code: 'ERR_TIDEPOOL_ZLIB_UNSUPPORTED', message: /dictionary/ };
    for (const create of ['createBrotliCompress', 'createBrotliDecompress'])
      assert.throws(() => zlib[create]({ dictionary }), unsupported, `${who}, ${create}`);
    for (const oneShot of ['brotliCompress', 'brotliDecompress'])
      assert.throws(() => zlib[oneShot](input, { dictionary }, () => {}), unsupported, who);
    // An empty one is none, as there.
    assert.ok(
      (await promisify(zlib.brotliCompress)(input, { dictionary: Buffer.alloc(0) })).length,
    );
  } else {
    // Ignored, as node:zlib here ignores it: decoded without it.
    const compressed = await promisify(zlib.brotliCompress)(input, { dictionary });
    const back = await promisify(zlib.brotliDecompress)(compressed);
    assert.equal(back.toString(), input.toString(), who);
  }
}

/** Whether `err` is a decoding failure as upstream takes it: an Error with a code ERR_*. */
function assertDecodeError(err, what) {
  assert.ok(err instanceof Error, `${what}: ${err}`);
  assert.match(String(err.code), /ERR_/, `${what}: ${err.stack}`);
}

/** The async one-shot `fn(buffer, options)`: its result, or `{ error }`. */
async function settle(fn, buffer, options) {
  try {
    return await promisify(fn)(buffer, options);
  } catch (error) {
    return { error };
  }
}

test('brotliCompress()/brotliDecompress() with a dictionary', async (t) => {
  if (!NODE_HAS_DICTIONARY)
    t.diagnostic('node:zlib ignores a brotli dictionary here, and so does the drop-in');
  await both(
    dictionaryCheck(async (zlib, _common, who) => {
      const compressed = await promisify(zlib.brotliCompress)(input, { dictionary });
      assert.ok(compressed.length < input.length, `${who}: ${compressed.length} bytes`);
      const decompressed = await promisify(zlib.brotliDecompress)(compressed, { dictionary });
      assert.equal(decompressed.toString(), input.toString(), who);
    }),
  );
});

test('a BrotliCompress piped into a BrotliDecompress, both with the dictionary', async () => {
  await both(
    dictionaryCheck(async (zlib, common, who) => {
      const encoder = zlib.createBrotliCompress({ dictionary });
      const decoder = zlib.createBrotliDecompress({ dictionary });
      const chunks = [];
      decoder.on('data', (chunk) => chunks.push(chunk));
      await new Promise((resolve, reject) => {
        encoder.on('error', reject);
        decoder.on('error', reject);
        decoder.on('end', common.mustCall(resolve));
        encoder.pipe(decoder);
        encoder.end(input);
      });
      assert.equal(Buffer.concat(chunks).toString(), input.toString(), who);
    }),
  );
});

test('the dictionary makes the output no larger, and decodes back', async () => {
  await both(
    dictionaryCheck(async (zlib, _common, who, sync) => {
      const withDict = await promisify(zlib.brotliCompress)(input, { dictionary });
      const withoutDict = await promisify(zlib.brotliCompress)(input);
      assert.ok(withDict.length <= withoutDict.length, `${who}: ${withDict.length} bytes`);
      const back = await promisify(zlib.brotliDecompress)(withDict, { dictionary });
      assert.equal(back.toString(), input.toString(), who);
      if (!sync) return;
      const syncWith = zlib.brotliCompressSync(input, { dictionary });
      const syncWithout = zlib.brotliCompressSync(input);
      assert.ok(syncWith.length <= syncWithout.length, `${who}, sync: ${syncWith.length} bytes`);
      const syncBack = zlib.brotliDecompressSync(syncWith, { dictionary });
      assert.equal(syncBack.toString(), input.toString(), `${who}, sync`);
    }),
  );
});

test('without the dictionary, or with another, decoding fails', async () => {
  await both(
    dictionaryCheck(async (zlib, _common, who, sync) => {
      const compressed = await promisify(zlib.brotliCompress)(input, { dictionary });
      for (const [what, options] of [
        ['no dictionary', undefined],
        ['another dictionary', { dictionary: wrongDictionary }],
      ]) {
        const result = await settle(zlib.brotliDecompress, compressed, options ?? {});
        assert.ok(result.error !== undefined, `${who}, ${what}: decoded`);
        assertDecodeError(result.error, `${who}, ${what}`);
        if (sync) {
          let syncError;
          try {
            zlib.brotliDecompressSync(compressed, options);
          } catch (err) {
            syncError = err;
          }
          assert.ok(syncError !== undefined, `${who}, ${what}, sync: decoded`);
          assertDecodeError(syncError, `${who}, ${what}, sync`);
        }
      }
    }),
    { work: 'any' },
  );
});

test('the dictionary as an ArrayBuffer or a Uint8Array', async () => {
  await both(
    dictionaryCheck(async (zlib, _common, who, sync) => {
      const arrayBuffer = dictionary.buffer.slice(
        dictionary.byteOffset,
        dictionary.byteOffset + dictionary.byteLength,
      );
      for (const [kind, dict] of [
        ['ArrayBuffer', arrayBuffer],
        ['Uint8Array', new Uint8Array(dictionary)],
      ]) {
        const compressed = await promisify(zlib.brotliCompress)(input, { dictionary: dict });
        const back = await promisify(zlib.brotliDecompress)(compressed, { dictionary: dict });
        assert.equal(back.toString(), input.toString(), `${who}: ${kind}`);
        // Made with it, so it needs it: the dictionary was not ignored.
        const without = await settle(zlib.brotliDecompress, compressed, {});
        assert.ok(without.error !== undefined, `${who}: ${kind} ignored`);
        if (sync) {
          const syncCompressed = zlib.brotliCompressSync(input, { dictionary: dict });
          const syncBack = zlib.brotliDecompressSync(syncCompressed, { dictionary: dict });
          assert.equal(syncBack.toString(), input.toString(), `${who}: ${kind}, sync`);
        }
      }
    }),
    { work: 'any' },
  );
});

test('a dictionary that is not binary data is ERR_INVALID_ARG_TYPE', async () => {
  await both(
    dictionaryCheck((zlib, _common, who) => {
      for (const dict of ['string', 123, true, { object: true }, [1, 2, 3]]) {
        const what = `${who}: ${JSON.stringify(dict)}`;
        for (const create of ['createBrotliCompress', 'createBrotliDecompress']) {
          assert.throws(
            () => zlib[create]({ dictionary: dict }),
            { code: 'ERR_INVALID_ARG_TYPE' },
            `${what}, ${create}`,
          );
        }
      }
    }),
    { work: false },
  );
});

test("a BrotliDecompress with another dictionary emits 'error'", async () => {
  await both(
    dictionaryCheck(async (zlib, common, who) => {
      const compressed = await promisify(zlib.brotliCompress)(input, { dictionary });
      const decoder = zlib.createBrotliDecompress({
        dictionary: Buffer.from('wrong dictionary data'),
      });
      const err = await new Promise((resolve) => {
        decoder.on('error', common.mustCall(resolve));
        decoder.on('end', () => resolve(undefined));
        decoder.resume();
        decoder.write(compressed);
        decoder.end();
      });
      assertDecodeError(err, who);
    }),
    { work: 'any' },
  );
});
