'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-reject-garbage-after-end.js:
// bytes after the end of a compressed stream (the stream again, or junk
// for zstd) are ignored by default by every decoder (inflate, inflateRaw,
// gunzip and unzip, which take a second gzip member, brotli, zstd), sync,
// async and as a stream; with `rejectGarbageAfterEnd: true` each refuses
// them with a TypeError ERR_TRAILING_JUNK_AFTER_STREAM_END. zstd also:
// concatenated frames (with a skippable frame between them) decode to both
// however the input is cut; junk after a frame is ignored, or refused,
// however it is written; a few bytes of a next frame's magic are junk; an
// error in a later frame (a bad checksum) fails the whole; several frames
// decode across small output chunks (chunkSize 64). The option must be a
// boolean (ERR_INVALID_ARG_TYPE).
//
// Feature by feature, as node:zlib on the running Node has it (the
// drop-in follows the node:zlib of the Node it runs on):
// - `rejectGarbageAfterEnd` is node:zlib's from Node 24 (Node 22 takes
//   it only in its inflate streams, for its DecompressionStream, and
//   ignores it elsewhere). Where node:zlib has no such option (detected:
//   inflateSync() of a stream and more, with the option, does not throw),
//   neither run checks it.
// - zstd is node:zlib's from Node 22.15 and 23.8: before, the zstd tests
//   run the drop-in's half alone (its zstd*Sync functions, where it has
//   them, included).
// - node:zlib's zstd decoder reads every frame of its input, however it
//   is cut, from Node 24 (Node 22's stops after the first frame a chunk
//   holds, and fails on junk between frames written apart; detected: two
//   frames in one Buffer decode to the first only). Where it does not, the
//   tests of concatenated frames, of junk before a later frame and of an
//   error in a later frame do not run (the drop-in reads as Node 22's
//   there); where node:zlib has no zstd, the drop-in reads as the newest
//   line's, and they run for it alone.
// Upstream's compressed inputs come from the *Sync functions; here from
// the module's async one-shots, and each *Sync check is made through the
// async one-shot too (the drop-in's own work).

const test = require('node:test');
const assert = require('node:assert/strict');
const { finished } = require('node:stream/promises');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

const JUNK = { code: 'ERR_TRAILING_JUNK_AFTER_STREAM_END', name: 'TypeError' };
const REJECT = { rejectGarbageAfterEnd: true };

/** Whether node:zlib here refuses trailing bytes when asked to (Node 24 on). */
const NODE_REJECTS = (() => {
  const once = nodeZlib.deflateSync('a');
  try {
    nodeZlib.inflateSync(Buffer.concat([once, once]), REJECT);
    return false;
  } catch (err) {
    return err.code === JUNK.code;
  }
})();
const NODE_HAS_ZSTD = typeof nodeZlib.createZstdCompress === 'function';
/** Whether node:zlib's zstd decoder reads every frame of a Buffer (Node 24 on). */
const NODE_READS_FRAMES =
  NODE_HAS_ZSTD &&
  nodeZlib
    .zstdDecompressSync(
      Buffer.concat([nodeZlib.zstdCompressSync('a'), nodeZlib.zstdCompressSync('b')]),
    )
    .toString() === 'ab';

/**
 * Whether the option is checked: where node:zlib has it, for both (the
 * drop-in follows the node:zlib of the Node it runs on, and ignores it
 * where that one has no such option).
 */
const checksOption = (_zlib) => NODE_REJECTS;
/** Whether `zlib`'s *Sync checks of the option run (they are node:zlib's own in both). */
const syncChecksOption = (zlib) => NODE_REJECTS && typeof zlib.inflateSync === 'function';
/** Whether `zlib`'s run has zstd (node:zlib's only from 22.15). */
const hasZstd = (zlib) => zlib !== nodeZlib || NODE_HAS_ZSTD;
/**
 * Whether `zlib`'s run reads every zstd frame: node:zlib's from 24; the
 * drop-in's as node:zlib's on this Node, or as the newest line's where
 * this node:zlib has no zstd.
 */
const readsFrames = (zlib) =>
  zlib === nodeZlib ? NODE_READS_FRAMES : NODE_READS_FRAMES || !NODE_HAS_ZSTD;
/**
 * `zlib`'s zstdDecompressSync for the checks of every frame, or
 * undefined: the module's is node:zlib's where node:zlib has one, so it
 * is left out where node:zlib's does not read every frame.
 */
function framesSync(zlib) {
  const sync = zlib.zstdDecompressSync;
  if (typeof sync !== 'function') return undefined;
  return NODE_READS_FRAMES || !NODE_HAS_ZSTD ? sync : undefined;
}

/** Where neither reads every frame (Node 22: the drop-in reads as its node:zlib does). */
const FRAMES_SKIP =
  !readsFrames(null) &&
  "node:zlib's zstd here reads a chunk's first frame only, and so does the drop-in";

/** `zlib[name](input[, options], callback)` as a promise. */
function call(zlib, name, input, options) {
  return new Promise((resolve, reject) => {
    const done = (err, result) => (err ? reject(err) : resolve(result));
    if (options === undefined) zlib[name](input, done);
    else zlib[name](input, options, done);
  });
}

/** Writes `inputs` to `stream` (the last by end()); its whole output once it finished. */
async function collect(stream, ...inputs) {
  const chunks = [];
  stream.on('data', (chunk) => chunks.push(chunk));
  for (const input of inputs.slice(0, -1)) stream.write(input);
  stream.end(inputs[inputs.length - 1]);
  await finished(stream);
  return Buffer.concat(chunks);
}

/** A zstd skippable frame holding 'meta'. */
function skippableFrame() {
  const frame = Buffer.alloc(12);
  frame.writeUInt32LE(0x184d2a50, 0);
  frame.writeUInt32LE(4, 4);
  frame.write('meta', 8);
  return frame;
}

// [label, compressor, decompressor (one-shot name; +Sync, create...), output, trailing input]
const CODECS = [
  ['inflate', 'deflate', 'inflate', 'Inflate', 'a'],
  ['inflateRaw', 'deflateRaw', 'inflateRaw', 'InflateRaw', 'a'],
  ['gunzip', 'gzip', 'gunzip', 'Gunzip', 'aa'],
  ['unzip', 'gzip', 'unzip', 'Unzip', 'aa'],
  ['brotli', 'brotliCompress', 'brotliDecompress', 'BrotliDecompress', 'a'],
  ['zstd', 'zstdCompress', 'zstdDecompress', 'ZstdDecompress', 'a', Buffer.from('trailing junk')],
];

for (const [label, compress, decompress, Class, defaultOutput, trailing] of CODECS) {
  test(`${label}: trailing input taken by default, refused with rejectGarbageAfterEnd`, async (t) => {
    const zstd = label === 'zstd';
    if (!NODE_REJECTS) t.diagnostic('node:zlib has no rejectGarbageAfterEnd here');
    await both(
      async (zlib, _common, who) => {
        if (zstd && !hasZstd(zlib)) return;
        const what = `${who} ${label}`;
        const compressed = await call(zlib, compress, Buffer.from('a'));
        const input = Buffer.concat([compressed, trailing ?? compressed]);
        const sync = zlib[`${decompress}Sync`];
        const create = zlib[`create${Class}`];

        if (typeof sync === 'function')
          assert.equal(sync(input).toString(), defaultOutput, `${what}: sync`);
        assert.equal((await call(zlib, decompress, input)).toString(), defaultOutput, what);
        assert.equal((await collect(create(), input)).toString(), defaultOutput, `${what}: stream`);

        if (!checksOption(zlib)) return;
        if (syncChecksOption(zlib)) assert.throws(() => sync(input, REJECT), JUNK, `${what}: sync`);
        await assert.rejects(call(zlib, decompress, input, REJECT), JUNK, what);
        await assert.rejects(collect(create(REJECT), input), JUNK, `${what}: stream`);
      },
      { work: 'any' },
    );
  });
}

test(
  'zstd: concatenated frames decode to both, however the input is cut',
  { skip: FRAMES_SKIP },
  async () => {
    await both(async (zlib, _common, who) => {
      if (!readsFrames(zlib)) return;
      const first = await call(zlib, 'zstdCompress', 'a');
      const second = await call(zlib, 'zstdCompress', 'b');
      for (const [shape, input] of [
        ['two frames', Buffer.concat([first, second])],
        ['a skippable frame between', Buffer.concat([first, skippableFrame(), second])],
      ]) {
        for (const rejectGarbageAfterEnd of [false, true]) {
          const options = { rejectGarbageAfterEnd };
          const what = `${who}, ${shape}, ${JSON.stringify(options)}`;
          const sync = framesSync(zlib);
          if (sync !== undefined)
            assert.equal(sync(input, options).toString(), 'ab', `${what}: sync`);
          assert.equal((await call(zlib, 'zstdDecompress', input, options)).toString(), 'ab', what);
          for (let cut = 0; cut <= input.length; cut++) {
            const output = await collect(
              zlib.createZstdDecompress(options),
              input.subarray(0, cut),
              input.subarray(cut),
            );
            assert.equal(output.toString(), 'ab', `${what}: stream cut at ${cut}`);
          }
        }
      }
    });
  },
);

test(
  'zstd: junk after a frame, then another frame, written apart',
  { skip: FRAMES_SKIP },
  async () => {
    await both(
      async (zlib, _common, who) => {
        if (!readsFrames(zlib)) return;
        const compressed = await call(zlib, 'zstdCompress', 'a');
        const laterFrame = await call(zlib, 'zstdCompress', 'b');
        const junk = Buffer.from('trailing junk');
        const output = await collect(zlib.createZstdDecompress(), compressed, junk, laterFrame);
        assert.equal(output.toString(), 'a', who);
        if (!checksOption(zlib)) return;
        await assert.rejects(
          collect(zlib.createZstdDecompress(REJECT), compressed, junk),
          JUNK,
          who,
        );
      },
      { work: 'any' },
    );
  },
);

test("zstd: a few bytes of a next frame's magic are junk", async () => {
  await both(
    async (zlib, _common, who) => {
      if (!hasZstd(zlib)) return;
      const compressed = await call(zlib, 'zstdCompress', 'a');
      const magic = (await call(zlib, 'zstdCompress', 'b')).subarray(0, 3);
      for (let length = 1; length <= magic.length; length++) {
        const input = Buffer.concat([compressed, magic.subarray(0, length)]);
        const what = `${who}, ${length} byte(s) of magic`;
        if (typeof zlib.zstdDecompressSync === 'function')
          assert.equal(zlib.zstdDecompressSync(input).toString(), 'a', `${what}: sync`);
        assert.equal((await call(zlib, 'zstdDecompress', input)).toString(), 'a', what);
        const streamed = await collect(
          zlib.createZstdDecompress(),
          compressed,
          magic.subarray(0, length),
        );
        assert.equal(streamed.toString(), 'a', `${what}: stream`);
        if (!checksOption(zlib)) continue;
        if (syncChecksOption(zlib))
          assert.throws(() => zlib.zstdDecompressSync(input, REJECT), JUNK, `${what}: sync`);
        await assert.rejects(call(zlib, 'zstdDecompress', input, REJECT), JUNK, what);
      }
    },
    { work: 'any' },
  );
});

test('zstd: a bad checksum in a later frame fails the whole', { skip: FRAMES_SKIP }, async () => {
  await both(
    async (zlib, _common, who) => {
      if (!readsFrames(zlib)) return;
      const first = await call(zlib, 'zstdCompress', 'a');
      const second = await call(zlib, 'zstdCompress', 'b', {
        params: { [zlib.constants.ZSTD_c_checksumFlag]: 1 },
      });
      second[second.length - 1] ^= 1;
      const input = Buffer.concat([first, second]);
      const checksumWrong = { code: 'ZSTD_error_checksum_wrong' };
      const sync = framesSync(zlib);
      if (sync !== undefined) assert.throws(() => sync(input), checksumWrong, `${who}: sync`);
      await assert.rejects(call(zlib, 'zstdDecompress', input), checksumWrong, who);
      await assert.rejects(
        collect(zlib.createZstdDecompress(), first, second),
        checksumWrong,
        `${who}: stream`,
      );
    },
    { work: 'any' },
  );
});

test(
  'zstd: several frames decode across output chunks of 64 bytes',
  { skip: FRAMES_SKIP },
  async () => {
    await both(async (zlib, _common, who) => {
      if (!hasZstd(zlib)) return;
      const firstInput = Buffer.from(Array.from({ length: 1024 }, (_, i) => i & 0xff));
      const secondInput = Buffer.from(Array.from({ length: 1024 }, (_, i) => (i + 1) & 0xff));
      const input = Buffer.concat([
        await call(zlib, 'zstdCompress', firstInput),
        await call(zlib, 'zstdCompress', secondInput),
      ]);
      const expected = Buffer.concat([firstInput, secondInput]);
      const options = { chunkSize: 64 };
      if (typeof zlib.zstdDecompressSync === 'function')
        assert.deepEqual(zlib.zstdDecompressSync(input, options), expected, `${who}: sync`);
      assert.deepEqual(await call(zlib, 'zstdDecompress', input, options), expected, who);
      const streamed = await collect(zlib.createZstdDecompress(options), input);
      assert.deepEqual(streamed, expected, `${who}: stream`);
    });
  },
);

test('rejectGarbageAfterEnd must be a boolean', async () => {
  await both(
    (zlib, common, who) => {
      if (!checksOption(zlib)) return;
      const compressed = nodeZlib.deflateSync(Buffer.from('a'));
      const invalidType = { code: 'ERR_INVALID_ARG_TYPE', name: 'TypeError' };
      for (const value of [1, 'true', null]) {
        const options = { rejectGarbageAfterEnd: value };
        const what = `${who}: ${JSON.stringify(value)}`;
        if (syncChecksOption(zlib))
          assert.throws(() => zlib.inflateSync(compressed, options), invalidType, `${what}: sync`);
        assert.throws(() => zlib.createInflate(options), invalidType, `${what}: stream`);
        assert.throws(
          () => zlib.inflate(compressed, options, common.mustNotCall()),
          invalidType,
          what,
        );
      }
    },
    { work: false },
  );
});
