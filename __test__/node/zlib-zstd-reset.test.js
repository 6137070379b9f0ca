'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-zstd-reset.js: reset()
// keeps what a zstd stream was made with. A ZstdCompress made with a
// dictionary, a pledgedSrcSize, a compression level and a checksum, reset
// before its first write, makes the same bytes as one not reset; a
// ZstdDecompress reset before its first write still has its dictionary
// (it decodes what was made with it), and its parameters (a window limit
// of 2^10 refuses a frame of window 2^11:
// ZSTD_error_frameParameter_windowTooLarge).
//
// Feature by feature, as node:zlib on the running Node has it: zstd (from
// Node 22.15 and 23.8), and a reset() that keeps the options (Node 24 on;
// Node 22's starts over without them: detected with the dictionary case).
// Where node:zlib lacks one, the drop-in's run goes alone. Upstream's
// input for the decoder comes from zstdCompressSync; here from the
// module's zstdCompress().

const test = require('node:test');
const assert = require('node:assert/strict');
const { finished } = require('node:stream/promises');
const { promisify } = require('node:util');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

const NODE_HAS_ZSTD = typeof nodeZlib.createZstdCompress === 'function';

const dictionary = Buffer.from(
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit. ' +
    'Sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.',
);
const input = Buffer.from('Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(100));

/** Writes `inputs` to `stream` (the last by end()); its whole output once it finished. */
async function collect(stream, ...inputs) {
  const chunks = [];
  stream.on('data', (chunk) => chunks.push(chunk));
  for (const data of inputs.slice(0, -1)) stream.write(data);
  stream.end(inputs[inputs.length - 1]);
  await finished(stream);
  return Buffer.concat(chunks);
}

/** Whether `zlib`'s ZstdDecompress, reset, still decodes with its dictionary. */
async function resetKeepsDictionary(zlib) {
  const compressed = await promisify(zlib.zstdCompress)(input, { dictionary });
  const decompress = zlib.createZstdDecompress({ dictionary });
  decompress.reset();
  try {
    return (await collect(decompress, compressed)).equals(input);
  } catch {
    return false;
  }
}

/** node:zlib's run is made only where it has zstd and its reset() keeps the options. */
let nodeKeeps;
async function nodeRuns(t) {
  nodeKeeps ??= NODE_HAS_ZSTD && (await resetKeepsDictionary(nodeZlib));
  if (!nodeKeeps) {
    t.diagnostic(
      NODE_HAS_ZSTD
        ? "node:zlib's zstd reset() drops the options here: the drop-in runs alone"
        : 'node:zlib has no zstd here: the drop-in runs alone',
    );
  }
  return nodeKeeps;
}

test('ZstdCompress: reset() keeps its options', async (t) => {
  const withNode = await nodeRuns(t);
  await both(async (zlib, _common, who) => {
    if (zlib === nodeZlib && !withNode) return;
    const { ZSTD_c_compressionLevel, ZSTD_c_checksumFlag } = zlib.constants;
    const options = {
      dictionary,
      pledgedSrcSize: input.length,
      params: { [ZSTD_c_compressionLevel]: 19, [ZSTD_c_checksumFlag]: 1 },
    };
    const expected = await collect(zlib.createZstdCompress(options), input);
    const reset = zlib.createZstdCompress(options);
    reset.reset();
    assert.deepEqual(await collect(reset, input), expected, who);
  });
});

test('ZstdDecompress: reset() keeps its dictionary', async (t) => {
  const withNode = await nodeRuns(t);
  await both(async (zlib, _common, who) => {
    if (zlib === nodeZlib && !withNode) return;
    const compressed = await promisify(zlib.zstdCompress)(input, { dictionary });
    const decompress = zlib.createZstdDecompress({ dictionary });
    decompress.reset();
    assert.deepEqual(await collect(decompress, compressed), input, who);
  });
});

test('ZstdDecompress: reset() keeps its parameters', async (t) => {
  const withNode = await nodeRuns(t);
  await both(
    async (zlib, _common, who) => {
      if (zlib === nodeZlib && !withNode) return;
      const { ZSTD_c_windowLog, ZSTD_d_windowLogMax } = zlib.constants;
      const compressed = await collect(
        zlib.createZstdCompress({ params: { [ZSTD_c_windowLog]: 11 } }),
        Buffer.alloc(2048),
        Buffer.alloc(2048),
      );
      const decompress = zlib.createZstdDecompress({ params: { [ZSTD_d_windowLogMax]: 10 } });
      decompress.reset();
      await assert.rejects(
        collect(decompress, compressed),
        { code: 'ZSTD_error_frameParameter_windowTooLarge' },
        who,
      );
    },
    { work: 'any' },
  );
});
