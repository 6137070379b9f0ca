'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-zstd-dictionary.js:
// zstdCompress() with a dictionary makes the input smaller, and
// zstdDecompress() with it gives the input back; the dictionary may be an
// ArrayBuffer, a Uint8Array or a DataView of the same bytes, with the same
// output as a Buffer's; a dictionary of any other type (null, a string, a
// number, a boolean, an object, an array) is ERR_INVALID_ARG_TYPE from
// both factories, both *Sync functions and both one-shots (which throw
// before calling back).
//
// Feature by feature, as node:zlib on the running Node has it: zstd (from
// Node 22.15 and 23.8), a dictionary of any binary type (an ArrayBuffer is
// ignored on Node 22; detected: its output is the Buffer's) and the check
// of its type (from Node 24; detected: a number is refused). The drop-in
// follows the node:zlib of the Node it runs on: where that one has zstd
// but not the feature (Node 22), neither half checks it; where it has no
// zstd (before 22.15), the drop-in's half runs alone, as the newest line,
// and not through the *Sync functions.
// Upstream checks the kinds of dictionary with the *Sync functions only:
// here through the async one-shots too.

const test = require('node:test');
const assert = require('node:assert/strict');
const { promisify } = require('node:util');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

const NODE_HAS_ZSTD = typeof nodeZlib.createZstdCompress === 'function';

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

/** The dictionary's bytes as an ArrayBuffer, a Uint8Array and a DataView. */
function otherKinds() {
  const arrayBuffer = dictionary.buffer.slice(
    dictionary.byteOffset,
    dictionary.byteOffset + dictionary.byteLength,
  );
  return [
    ['ArrayBuffer', arrayBuffer],
    ['Uint8Array', new Uint8Array(arrayBuffer)],
    ['DataView', new DataView(arrayBuffer)],
  ];
}

/** Whether node:zlib takes `dictionary` as an ArrayBuffer (not ignored). */
const NODE_TAKES_EVERY_KIND =
  NODE_HAS_ZSTD &&
  nodeZlib.zstdCompressSync(input, { dictionary: otherKinds()[0][1] }).length ===
    nodeZlib.zstdCompressSync(input, { dictionary }).length;

/** Whether node:zlib refuses a dictionary that is not binary data. */
const NODE_CHECKS_TYPE = (() => {
  if (!NODE_HAS_ZSTD) return false;
  try {
    nodeZlib.createZstdCompress({ dictionary: 123 }).destroy();
    return false;
  } catch {
    return true;
  }
})();

test('zstdCompress()/zstdDecompress() with a dictionary', async (t) => {
  if (!NODE_HAS_ZSTD) t.diagnostic('node:zlib has no zstd here: the drop-in runs alone');
  await both(async (zlib, _common, who) => {
    if (zlib === nodeZlib && !NODE_HAS_ZSTD) return;
    const compressed = await promisify(zlib.zstdCompress)(input, { dictionary });
    assert.ok(compressed.length < input.length, `${who}: ${compressed.length} bytes`);
    const decompressed = await promisify(zlib.zstdDecompress)(compressed, { dictionary });
    assert.equal(decompressed.toString(), input.toString(), who);
  });
});

test(
  'the dictionary as an ArrayBuffer, a Uint8Array or a DataView',
  {
    skip:
      NODE_HAS_ZSTD &&
      !NODE_TAKES_EVERY_KIND &&
      'node:zlib here ignores an ArrayBuffer dictionary, and so does the drop-in',
  },
  async (t) => {
    if (!NODE_TAKES_EVERY_KIND) {
      t.diagnostic(
        NODE_HAS_ZSTD
          ? 'node:zlib ignores an ArrayBuffer dictionary here: the drop-in runs alone'
          : 'node:zlib has no zstd here: the drop-in runs alone',
      );
    }
    await both(async (zlib, _common, who) => {
      if (zlib === nodeZlib && !NODE_TAKES_EVERY_KIND) return;
      const sync = NODE_TAKES_EVERY_KIND && typeof zlib.zstdCompressSync === 'function';
      const baseline = (await promisify(zlib.zstdCompress)(input, { dictionary })).length;
      const syncBaseline = sync ? zlib.zstdCompressSync(input, { dictionary }).length : undefined;
      for (const [kind, dict] of otherKinds()) {
        const what = `${who}: ${kind}`;
        const compressed = await promisify(zlib.zstdCompress)(input, { dictionary: dict });
        assert.equal(compressed.length, baseline, what);
        const decompressed = await promisify(zlib.zstdDecompress)(compressed, { dictionary: dict });
        assert.equal(decompressed.toString(), input.toString(), what);
        if (sync) {
          const syncCompressed = zlib.zstdCompressSync(input, { dictionary: dict });
          assert.equal(syncCompressed.length, syncBaseline, `${what}, sync`);
          const back = zlib.zstdDecompressSync(syncCompressed, { dictionary: dict });
          assert.equal(back.toString(), input.toString(), `${what}, sync`);
        }
      }
    });
  },
);

test(
  'a dictionary that is not binary data is ERR_INVALID_ARG_TYPE',
  {
    skip:
      NODE_HAS_ZSTD &&
      !NODE_CHECKS_TYPE &&
      "node:zlib here does not check the dictionary's type, nor does the drop-in",
  },
  async (t) => {
    if (!NODE_CHECKS_TYPE) {
      t.diagnostic(
        NODE_HAS_ZSTD
          ? "node:zlib does not check the dictionary's type here: the drop-in runs alone"
          : 'node:zlib has no zstd here: the drop-in runs alone',
      );
    }
    await both(
      (zlib, common, who) => {
        if (zlib === nodeZlib && !NODE_CHECKS_TYPE) return;
        const sync = NODE_CHECKS_TYPE && typeof zlib.zstdCompressSync === 'function';
        const expected = { code: 'ERR_INVALID_ARG_TYPE', name: 'TypeError' };
        for (const dict of [null, 'string', 123, true, {}, [1, 2, 3]]) {
          const options = { dictionary: dict };
          const what = `${who}: ${JSON.stringify(dict)}`;
          assert.throws(() => zlib.createZstdCompress(options), expected, `${what}, compress`);
          assert.throws(() => zlib.createZstdDecompress(options), expected, `${what}, decompress`);
          if (sync) {
            assert.throws(() => zlib.zstdCompressSync(input, options), expected, what);
            assert.throws(() => zlib.zstdDecompressSync(input, options), expected, what);
          }
          assert.throws(
            () => zlib.zstdCompress(input, options, common.mustNotCall()),
            expected,
            `${what}, zstdCompress()`,
          );
          assert.throws(
            () => zlib.zstdDecompress(input, options, common.mustNotCall()),
            expected,
            `${what}, zstdDecompress()`,
          );
        }
      },
      { work: false },
    );
  },
);
