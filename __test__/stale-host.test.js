'use strict';
// A kernel library that keeps a host past its call (forbidden: a tp_host
// and its ctx are valid only until the kernel function returns) and uses
// it from a later task writes into no task's output: the late call does
// nothing (TP_ERROR), and the kernel the host was lent to fails its next
// call with ERR_TIDEPOOL_KERNEL_CONTRACT. Before hosts were checked, the
// kept pointer read the host of whichever call then sat at the same place
// on the worker's stack, and the write landed in that task's output.
// (examples/kernels/c/keep_host.c; the Rust side: crates/core/tests/foreign/hosts.rs.)

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Pool } = require('..');

const LIB = path.join(__dirname, '..', 'examples', 'kernels', 'build', 'example_c_keep_host.so');
const noC =
  !fs.existsSync(LIB) && !process.env.CI
    ? 'no C compiler: examples/kernels/build/example_c_keep_host.so was not built'
    : false;

test(
  'a host kept past its call writes into no other task, and its kernel is told at its next call',
  { skip: noC },
  async () => {
    assert.deepEqual(Pool.loadKernels(LIB), ['example-c/keep-host', 'example-c/meddle']);
    // One thread: every task runs where the kept host was lent.
    const pool = new Pool({ minThreads: 1, maxThreads: 1 });
    try {
      const input = Buffer.from('x');
      assert.equal(
        (await pool.post(input, { kernel: 'example-c/keep-host' })).result.toString(),
        'kept',
      );
      // Another kernel's task writes through the kept host: refused (TP_ERROR,
      // 1), and its own output is untouched ("EVILclean:0" before the fix).
      assert.equal(
        (await pool.post(input, { kernel: 'example-c/meddle' })).result.toString(),
        'clean:1',
      );
      // The kernel whose host it was fails its next call with the contract error.
      await assert.rejects(pool.post(input, { kernel: 'example-c/keep-host' }), {
        name: 'Error',
        code: 'ERR_TIDEPOOL_KERNEL_CONTRACT',
        message:
          "kernel 'example-c/keep-host' called its host's write after the call it was lent to had returned (the call did nothing)",
      });
      assert.equal(
        (await pool.post(input, { kernel: 'example-c/keep-host' })).result.toString(),
        'kept',
        'reported once',
      );
      // With other tasks in between (built-in and loaded), the same.
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          pool.post(Buffer.from([i]), { kernel: i % 2 ? 'sha256' : 'example-c/meddle' }),
        ),
      );
      await assert.rejects(pool.post(input, { kernel: 'example-c/keep-host' }), {
        code: 'ERR_TIDEPOOL_KERNEL_CONTRACT',
      });
      assert.equal(
        (await pool.post(input, { kernel: 'example-c/meddle' })).result.toString(),
        'clean:1',
      );
    } finally {
      await pool.close();
    }
  },
);
