'use strict';
// One big input on several threads: a one-shot gzip, deflate, deflateRaw,
// zstdCompress or BLAKE3 task over a large input runs in blocks on the
// pool's idle threads (docs/api.md, "One big input"). What must hold: the
// output decodes to the input with node:zlib and with the gzip and zstd
// command-line tools at every size around the block edges; BLAKE3's digest
// is a one-thread pool's; cancellation, limits and small inputs behave as
// without the split. Speed lives in bench/one-big.js.

const test = require('node:test');
const assert = require('node:assert/strict');
const zlib = require('node:zlib');
const { spawnSync } = require('node:child_process');
const { Pool } = require('..');

const MIB = 1 << 20;
/** The gzip blocks and the zstd frames (crates/core: zlib/parallel.rs, zstd.rs). */
const GZIP_BLOCK = MIB;
const ZSTD_BLOCK = 4 * MIB;

function mixed(len) {
  const out = Buffer.allocUnsafe(len);
  let state = 0x2545f491;
  let at = 0;
  while (at < len) {
    if ((at >> 12) % 3 === 0) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      out[at++] = state & 0xff;
    } else {
      at += out.write(`${at} GET /item/${state % 1000} 200\n`, at, 'latin1');
    }
  }
  return out;
}

/** What a command-line tool makes of `input` (`args`), or undefined if it is not installed. */
function cli(command, args, input) {
  const r = spawnSync(command, args, { input, maxBuffer: 1 << 30 });
  if (r.error?.code === 'ENOENT') return undefined;
  assert.equal(r.status, 0, `${command}: ${r.stderr}`);
  return r.stdout;
}

const data = mixed(2 * ZSTD_BLOCK + 1);

test('gzip, deflate and deflateRaw of large inputs decode to the input at every block edge', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  const one = new Pool({ maxThreads: 1 });
  t.after(() => Promise.all([pool.close(), one.close()]));
  for (const len of [2 * GZIP_BLOCK - 1, 2 * GZIP_BLOCK, 2 * GZIP_BLOCK + 1, 3 * GZIP_BLOCK + 7]) {
    const input = data.subarray(0, len);
    const gz = (await pool.post(input, { kernel: 'gzip' })).result;
    const whole = (await one.post(input, { kernel: 'gzip' })).result;
    assert.deepEqual(zlib.gunzipSync(gz), input, `node:zlib, ${len}`);
    const byCli = cli('gzip', ['-dc'], gz);
    if (byCli !== undefined) assert.deepEqual(byCli, input, `gzip -d, ${len}`);
    assert.ok(gz.length <= whole.length * 1.01, `${gz.length} vs ${whole.length}`);
    assert.deepEqual(gz.subarray(0, 10), whole.subarray(0, 10), 'the same gzip header');
    if (len >= 2 * GZIP_BLOCK) assert.notDeepEqual(gz, whole, 'in blocks');
    const z = (await pool.post(input, { kernel: 'deflate' })).result;
    assert.deepEqual(zlib.inflateSync(z), input);
    const raw = (await pool.post(input, { kernel: 'deflateRaw' })).result;
    assert.deepEqual(zlib.inflateRawSync(raw), input);
  }
});

test('zstdCompress of a large input is frames that the zstd CLI and the pool decode', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.close());
  for (const len of [2 * ZSTD_BLOCK - 1, 2 * ZSTD_BLOCK, 2 * ZSTD_BLOCK + 1]) {
    const input = data.subarray(0, len);
    const zst = (await pool.post(input, { kernel: 'zstdCompress' })).result;
    assert.deepEqual((await pool.post(zst, { kernel: 'zstdDecompress' })).result, input);
    const byCli = cli('zstd', ['-dc'], zst);
    if (byCli !== undefined) assert.deepEqual(byCli, input, `zstd -d, ${len}`);
    if (typeof zlib.zstdDecompressSync === 'function')
      assert.deepEqual(zlib.zstdDecompressSync(zst), input);
  }
});

test("BLAKE3 in subtrees is a one-thread pool's digest, in every mode", async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  const one = new Pool({ maxThreads: 1 });
  t.after(() => Promise.all([pool.close(), one.close()]));
  const key = Buffer.alloc(32, 9);
  for (const len of [4 * MIB - 1, 4 * MIB, 4 * MIB + 1, 5 * MIB + 1024, 7 * MIB + 1]) {
    const input = data.subarray(0, len);
    for (const params of [undefined, { key }, { context: 'tidepool one-big test' }]) {
      const split = (await pool.post(input, { kernel: 'blake3', params })).result;
      const whole = (await one.post(input, { kernel: 'blake3', params })).result;
      assert.equal(
        split.toString('hex'),
        whole.toString('hex'),
        `${len} ${JSON.stringify(params)}`,
      );
    }
  }
});

test('a pool that has run small tasks still starts a thread for a big job, and a small task does not wait for it', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.close());
  // The mean run time the scaling rule knows is a tiny task's.
  await pool.post(Buffer.from('warm'));
  const spawns = [];
  pool.on('spawn', (e) => spawns.push(e));
  const order = [];
  const big = pool.post(mixed(16 * MIB), { kernel: 'gzip' }).then(() => order.push('big'));
  await new Promise((r) => setTimeout(r, 5));
  const tiny = pool.post(Buffer.from('tiny')).then(() => order.push('tiny'));
  await Promise.all([big, tiny]);
  assert.deepEqual(order, ['tiny', 'big']);
  assert.ok(spawns.length >= 1 || pool.stats().threads === 2, 'a second thread ran');
});

test('a job in blocks is cancelled by its signal, and a limit holds over its whole output', async (t) => {
  const pool = new Pool({ maxThreads: 2 });
  t.after(() => pool.close());
  const big = mixed(32 * MIB);
  const controller = new AbortController();
  const task = pool.post(big, { kernel: 'gzip', signal: controller.signal });
  setImmediate(() => controller.abort());
  await assert.rejects(task, { name: 'AbortError', code: 'ABORT_ERR' });
  await assert.rejects(pool.post(big, { kernel: 'gzip', maxOutputBytes: 1000 }), {
    code: 'ERR_BUFFER_TOO_LARGE',
  });
  // The pool goes on.
  const { result } = await pool.post(data.subarray(0, 3 * MIB), { kernel: 'gzip' });
  assert.deepEqual(zlib.gunzipSync(result), data.subarray(0, 3 * MIB));
});
