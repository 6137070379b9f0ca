'use strict';
// Kernels from libraries loaded at run time (Pool.loadKernels): the example
// Rust library (examples/kernels, by path and as an addon's handle) and the
// example C library (written against include/tidepool_kernel.h). They run
// like built-ins: results, parameters checked against their schemas, their
// own error codes, maxOutputBytes; a library of another ABI version, a
// clash or a non-library is refused with nothing registered (while they
// run: user-kernels-runtime.test.js). `npm test` builds the libraries
// first (scripts/build-examples.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const tidepool = require('..');
const { RUST_LIB, C_LIB_ABI2, RUST_KERNELS, noC } = require('./example-kernels');
const { rejects, throws } = require('./expect');

const { Pool } = tidepool;

test('a library of another ABI version is refused and registers nothing', { skip: noC }, () => {
  const before = Pool.kernels;
  throws(
    () => Pool.loadKernels(C_LIB_ABI2),
    Error,
    'ERR_TIDEPOOL_KERNEL_ABI',
    /ABI version 2; this tidepool supports version 1/,
  );
  assert.deepEqual(Pool.kernels, before);
  throws(() => new Pool({ kernel: 'example-c/wc' }), TypeError, 'ERR_TIDEPOOL_UNKNOWN_KERNEL');
});

test('loading by path registers the kernels for the process and returns their names', () => {
  const builtins = Pool.kernels.length;
  assert.deepEqual(Pool.loadKernels(RUST_LIB), RUST_KERNELS);
  assert.deepEqual(Pool.kernels.slice(builtins), RUST_KERNELS);
  assert.deepEqual(tidepool.kernels, Pool.kernels);
  assert.ok(Object.isFrozen(Pool.kernels));
  // Again, by path, file: URL or the addon's handle: the same library, the same names.
  assert.deepEqual(Pool.loadKernels(RUST_LIB), RUST_KERNELS);
  assert.deepEqual(Pool.loadKernels(pathToFileURL(RUST_LIB)), RUST_KERNELS);
  assert.deepEqual(Pool.loadKernels(require(RUST_LIB).kernels()), RUST_KERNELS);
  assert.equal(Pool.kernels.length, builtins + RUST_KERNELS.length);
});

test('a relative path is resolved against the working directory, never searched for', () => {
  const relative = path.relative(process.cwd(), RUST_LIB);
  assert.deepEqual(Pool.loadKernels(relative), RUST_KERNELS);
  // A bare file name that is not in the working directory is not looked up
  // on the library search path.
  throws(() => Pool.loadKernels('libc.so.6'), Error, 'ERR_DLOPEN_FAILED');
});

test('what is not a kernel library is refused with a typed error', () => {
  const before = Pool.kernels;
  throws(
    () => Pool.loadKernels(path.join(os.tmpdir(), 'no-such-library.so')),
    Error,
    'ERR_DLOPEN_FAILED',
    /no-such-library/,
  );
  const text = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tidepool-')), 'text.so');
  fs.writeFileSync(text, 'not a library');
  throws(() => Pool.loadKernels(text), Error, 'ERR_DLOPEN_FAILED');
  // tidepool's own addon is a shared library without the entry point.
  throws(
    () => Pool.loadKernels(path.join(__dirname, '..', 'tidepool.node')),
    Error,
    'ERR_TIDEPOOL_KERNEL_ENTRY',
    /tidepool_kernels_v1/,
  );
  for (const bad of [undefined, null, 42, {}, [], () => {}, Buffer.from('x'), Symbol('s')]) {
    throws(() => Pool.loadKernels(bad), TypeError, 'ERR_INVALID_ARG_TYPE', /"source" argument/);
  }
  throws(() => Pool.loadKernels(''), TypeError, 'ERR_INVALID_ARG_VALUE');
  throws(() => Pool.loadKernels('a\0b'), TypeError, 'ERR_INVALID_ARG_VALUE');
  throws(
    () => Pool.loadKernels(new URL('https://example.com/x.so')),
    TypeError,
    'ERR_INVALID_ARG_VALUE',
    /file: URL/,
  );
  assert.deepEqual(Pool.kernels, before);
});

test('a second library whose names are taken is refused whole', () => {
  Pool.loadKernels(RUST_LIB);
  const before = Pool.kernels;
  // A copy is another library to the dynamic loader, with the same names.
  const copy = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tidepool-')), 'copy.node');
  fs.copyFileSync(RUST_LIB, copy);
  throws(
    () => Pool.loadKernels(copy),
    Error,
    'ERR_TIDEPOOL_KERNEL_EXISTS',
    /'example\/sha256' is already registered/,
  );
  assert.deepEqual(Pool.kernels, before);
});

test('example/sha256 equals crypto.createHash for any size and input shape', async () => {
  Pool.loadKernels(RUST_LIB);
  const pool = new Pool({ kernel: 'example/sha256' });
  const hex = new Pool({ kernel: 'example/sha256', encoding: 'hex' });
  try {
    for (const size of [0, 1, 55, 64, 1000, 256 * 1024 + 7, 3 << 20]) {
      const data = crypto.randomBytes(size);
      const want = crypto.createHash('sha256').update(data).digest('hex');
      assert.equal((await pool.post(data)).result.toString('hex'), want, `${size} bytes`);
      const parts = [data.subarray(0, size >> 1), new Uint8Array(0), data.subarray(size >> 1)];
      assert.equal((await hex.post(parts)).result, want, `${size} bytes in parts`);
    }
    const message = { data: Buffer.from('abc') };
    const settled = await pool.post(message);
    assert.equal(settled.message, message, 'the very message comes back');
  } finally {
    await pool.close();
    await hex.close();
  }
});

test('example/pbkdf2 equals crypto.pbkdf2Sync; its parameters are checked by its schema', async () => {
  Pool.loadKernels(RUST_LIB);
  const pool = new Pool({
    kernel: 'example/pbkdf2',
    params: { salt: 'pool salt', iterations: 1000 },
  });
  try {
    const password = Buffer.from('correct horse battery staple');
    assert.equal(
      (await pool.post(password)).result.toString('hex'),
      crypto.pbkdf2Sync(password, 'pool salt', 1000, 32, 'sha256').toString('hex'),
      "the pool's params, keyLength's default",
    );
    const salt = crypto.randomBytes(16);
    for (const keyLength of [1, 32, 33, 100]) {
      const { result } = await pool.post(password, {
        params: { salt, iterations: 2000, keyLength },
      });
      assert.equal(
        result.toString('hex'),
        crypto.pbkdf2Sync(password, salt, 2000, keyLength, 'sha256').toString('hex'),
        `keyLength ${keyLength}`,
      );
    }
    throws(
      () => pool.post(password, { params: { iterations: 1 } }),
      TypeError,
      'ERR_INVALID_ARG_TYPE',
      /options\.params\.salt" property is required by kernel 'example\/pbkdf2'/,
    );
    throws(
      () => pool.post(password, { params: { salt, iterations: 0 } }),
      RangeError,
      'ERR_OUT_OF_RANGE',
      /options\.params\.iterations/,
    );
    throws(
      () => pool.post(password, { params: { salt, iterations: 1.5 } }),
      RangeError,
      'ERR_OUT_OF_RANGE',
    );
    throws(
      () => pool.post(password, { params: { salt, iterations: '10' } }),
      TypeError,
      'ERR_INVALID_ARG_TYPE',
      /options\.params\.iterations/,
    );
    throws(
      () => pool.post(password, { params: { salt, iterations: 1, rounds: 3 } }),
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      /Its parameters: salt, iterations, keyLength/,
    );
    throws(
      () => new Pool({ kernel: 'example/pbkdf2' }),
      TypeError,
      'ERR_INVALID_ARG_TYPE',
      /required/,
    );
  } finally {
    await pool.close();
  }
});

test('example/rgba converts and resizes images, its output bounded by maxOutputBytes', async () => {
  Pool.loadKernels(RUST_LIB);
  // A pool's kernel with a required parameter needs the pool's params.
  throws(
    () => new Pool({ kernel: 'example/rgba' }),
    TypeError,
    'ERR_INVALID_ARG_TYPE',
    /options\.params\.width/,
  );
  const pool = new Pool({ kernel: 'example/rgba', params: { width: 1, height: 1 } });
  try {
    const width = 300;
    const height = 200;
    const image = crypto.randomBytes(width * height * 4);
    const gray = Buffer.alloc(width * height);
    for (let i = 0; i < width * height; i++) {
      gray[i] = (77 * image[4 * i] + 150 * image[4 * i + 1] + 29 * image[4 * i + 2] + 128) >> 8;
    }
    // Split mid-pixel: a pixel straddles two parts.
    const parts = [image.subarray(0, 4001), image.subarray(4001)];
    assert.deepEqual(
      (await pool.post(parts, { params: { width, height, format: 'gray' } })).result,
      gray,
    );
    const rgb = (await pool.post(image, { params: { width, height, format: 'rgb' } })).result;
    assert.equal(rgb.length, width * height * 3);
    assert.deepEqual(rgb.subarray(0, 3), image.subarray(0, 3));
    const up = (
      await pool.post(image, { params: { width, height, resizeWidth: 600, resizeHeight: 400 } })
    ).result;
    assert.equal(up.length, 600 * 400 * 4, 'a large output, written in place');
    const flat = Buffer.alloc(8 * 8 * 4, 77);
    const down = (
      await pool.post(flat, { params: { width: 8, height: 8, resizeWidth: 3, resizeHeight: 5 } })
    ).result;
    assert.deepEqual(down, Buffer.alloc(3 * 5 * 4, 77), 'a flat image stays flat');
    await rejects(
      pool.post(image, {
        params: { width, height, resizeWidth: 600, resizeHeight: 400 },
        maxOutputBytes: 600 * 400 * 4 - 1,
      }),
      'ERR_BUFFER_TOO_LARGE',
    );
    await rejects(
      pool.post(image.subarray(1), { params: { width, height } }),
      'ERR_EXAMPLE_RGBA_SIZE',
      /239999/,
    );
    // A limit that falls inside a pixel.
    await rejects(
      pool.post(Buffer.alloc(12), { params: { width: 3, height: 1 }, maxOutputBytes: 11 }),
      'ERR_BUFFER_TOO_LARGE',
    );
    throws(
      () => pool.post(image, { params: { width, height, format: 'cmyk' } }),
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      /not 'cmyk'.*ERR_EXAMPLE_RGBA_FORMAT/,
    );
    throws(
      () => pool.post(image, { params: { width: 70000, height } }),
      RangeError,
      'ERR_OUT_OF_RANGE',
    );
  } finally {
    await pool.close();
  }
});

test('example/ndjson counts records and names the first bad one', async () => {
  Pool.loadKernels(RUST_LIB);
  const pool = new Pool({ kernel: 'example/ndjson' });
  try {
    const lines = [];
    for (let i = 0; i < 5000; i++)
      lines.push(JSON.stringify({ i, name: `record ${i}`, tags: ['a', { deep: [i] }] }));
    const text = Buffer.from(`${lines.join('\n')}\n\n`);
    assert.equal((await pool.post(text)).result.readBigUInt64LE(0), 5000n);
    // Lines split across the parts of the input.
    const parts = [text.subarray(0, 33), text.subarray(33, 70000), text.subarray(70000)];
    assert.equal((await pool.post(parts)).result.readBigUInt64LE(0), 5000n);
    const broken = Buffer.from(`{"a":1}\n\n[1,2,]\n{"b":2}\n`);
    await rejects(
      pool.post(broken),
      'ERR_NDJSON_INVALID',
      /^record 2 \(line 3\): unexpected character at byte 6$/,
    );
    await rejects(
      pool.post(Buffer.from('[[[[1]]]]'), { params: { maxDepth: 3 } }),
      'ERR_NDJSON_TOO_DEEP',
    );
    await rejects(
      pool.post(Buffer.from('"0123456789"'), { params: { maxRecordBytes: 5 } }),
      'ERR_NDJSON_RECORD_TOO_LARGE',
    );
  } finally {
    await pool.close();
  }
});
