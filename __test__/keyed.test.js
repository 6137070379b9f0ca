'use strict';
// Keyed and seeded hashes through `params`: hmac identical to
// crypto.createHmac, BLAKE3's keyed and derive-key modes per its spec's
// vectors, xxHash seeds; keys copied when posted (changing or detaching the
// caller's key afterwards changes nothing), and every bad parameter refused
// synchronously.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { Pool } = require('..');

const HASHES = ['sha256', 'sha384', 'sha512', 'sha1', 'md5'];

test('hmac equals crypto.createHmac for every hash, key form and input shape', async () => {
  const pool = new Pool({ kernel: 'hmac', params: { hash: 'sha256', key: 'pool key' } });
  const data = crypto.randomBytes(300 * 1024);
  const keyBytes = crypto.randomBytes(200); // longer than a block: hashed first (RFC 2104)
  try {
    assert.equal(
      (await pool.post(data)).result.toString('hex'),
      crypto.createHmac('sha256', 'pool key').update(data).digest('hex'),
      "the pool's params",
    );
    for (const hash of HASHES) {
      const keys = [
        ['string', 'secret', 'secret'],
        ['empty', '', ''],
        ['Buffer', keyBytes, keyBytes],
        ['Uint8Array', new Uint8Array(keyBytes), keyBytes],
        [
          'DataView',
          new DataView(keyBytes.buffer, keyBytes.byteOffset + 3, 50),
          keyBytes.subarray(3, 53),
        ],
        ['ArrayBuffer', new Uint8Array(keyBytes).buffer, keyBytes],
      ];
      for (const [form, key, same] of keys) {
        const want = crypto.createHmac(hash, same).update(data).digest('hex');
        const { result } = await pool.post(data, { params: { hash, key } });
        assert.equal(result.toString('hex'), want, `${hash} with a ${form} key`);
      }
      const parts = [data.subarray(0, 1000), data.subarray(1000)];
      const { result } = await pool.post(parts, { params: { hash, key: 'k' } });
      assert.equal(
        result.toString('hex'),
        crypto.createHmac(hash, 'k').update(data).digest('hex'),
        `${hash} of slices`,
      );
    }
  } finally {
    await pool.close();
  }
});

test("createHmac() gives crypto.createHmac's digest for every hash and key form", async () => {
  const pool = new Pool();
  try {
    const secret = crypto.createSecretKey(Buffer.from('a secret key of some length'));
    const data = Buffer.from('the same bytes through both, cut differently');
    for (const algorithm of HASHES) {
      for (const key of ['text key', Buffer.from([1, 2, 3]), new Uint16Array([7, 8]), secret]) {
        const ours = pool.createHmac(algorithm, key);
        ours.update(data.subarray(0, 7));
        ours.update(data.subarray(7));
        const control = crypto.createHmac(algorithm, key).update(data).digest('hex');
        assert.equal(await ours.digest('hex'), control, `${algorithm} ${key.constructor.name}`);
      }
    }
    const { publicKey } = crypto.generateKeyPairSync('ed25519');
    for (const create of [crypto.createHmac, (a, k) => pool.createHmac(a, k)]) {
      assert.throws(() => create('sha256', publicKey), {
        name: 'TypeError',
        code: 'ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE',
        message: 'Invalid key object type public, expected secret.',
      });
      assert.throws(() => create(256, 'k'), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    }
    assert.throws(() => pool.createHmac('sha256', 'k', { params: {} }), {
      code: 'ERR_INVALID_ARG_VALUE',
    });
  } finally {
    await pool.close();
  }
});

test('the key is copied when posted: changing or detaching it afterwards changes nothing', async () => {
  const pool = new Pool({ kernel: 'hmac', maxThreads: 1, params: { hash: 'sha256', key: 'x' } });
  const data = Buffer.alloc(1 << 20, 7);
  try {
    const key = Buffer.from('the original key');
    const want = crypto.createHmac('sha512', 'the original key').update(data).digest('hex');
    const pending = [];
    for (let i = 0; i < 4; i++) pending.push(pool.post(data, { params: { hash: 'sha512', key } }));
    key.fill(0);
    const detachable = new Uint8Array(Buffer.from('the original key'));
    pending.push(pool.post(data, { params: { hash: 'sha512', key: detachable } }));
    structuredClone(detachable.buffer, { transfer: [detachable.buffer] }); // detaches it
    for (const { result } of await Promise.all(pending)) assert.equal(result.toString('hex'), want);
  } finally {
    await pool.close();
  }
});

test('a getter that detaches an earlier key is refused with a typed error, not a crash', () => {
  const pool = new Pool({ kernel: 'hmac', params: { hash: 'sha256', key: 'k' } });
  try {
    const key = new Uint8Array(32).fill(1);
    const params = {
      key,
      get hash() {
        structuredClone(key.buffer, { transfer: [key.buffer] });
        return 'sha256';
      },
    };
    // lib/args/params.js reads every value first (the getter detaches the key),
    // then finds the key detached.
    assert.throws(() => pool.post(Buffer.alloc(1), { params }), {
      name: 'TypeError',
      code: 'ERR_INVALID_STATE',
      message: /options\.params\.key/,
    });
  } finally {
    pool.destroy();
  }
});

test('hmac needs its hash and key: a pool or post without them throws, naming what is missing', () => {
  assert.throws(() => new Pool({ kernel: 'hmac' }), {
    name: 'TypeError',
    code: 'ERR_INVALID_ARG_TYPE',
    message: /options\.params\.hash/,
  });
  assert.throws(() => new Pool({ kernel: 'hmac', params: { hash: 'sha256' } }), {
    code: 'ERR_INVALID_ARG_TYPE',
    message: /options\.params\.key/,
  });
  const pool = new Pool();
  try {
    assert.throws(() => pool.post(Buffer.alloc(1), { kernel: 'hmac' }), {
      code: 'ERR_INVALID_ARG_TYPE',
      message: /hash/,
    });
    assert.throws(
      () => pool.post(Buffer.alloc(1), { kernel: 'hmac', params: { hash: 'sha3-256', key: 'k' } }),
      {
        name: 'TypeError',
        code: 'ERR_INVALID_ARG_VALUE',
        message:
          /options\.params\.hash' must be one of 'sha256'.*Received type string \('sha3-256'\)/,
      },
    );
    assert.throws(
      () => pool.post(Buffer.alloc(1), { kernel: 'hmac', params: { hash: 'sha256', key: 42 } }),
      {
        code: 'ERR_INVALID_ARG_TYPE',
      },
    );
    assert.throws(
      () => pool.post(Buffer.alloc(1), { kernel: 'hmac', params: { hash: 'sha256', key: {} } }),
      {
        code: 'ERR_INVALID_ARG_TYPE',
      },
    );
    assert.throws(
      () =>
        pool.post(Buffer.alloc(1), {
          kernel: 'hmac',
          params: { hash: 'sha256', key: 'k', salt: 1 },
        }),
      {
        code: 'ERR_INVALID_ARG_VALUE',
      },
    );
  } finally {
    pool.destroy();
  }
});

test("blake3's keyed and derive-key modes give the spec's test vectors", async () => {
  // BLAKE3 test_vectors.json: key "whats the Elvish word for friend", the
  // context string below, inputs of 0 and 1023 bytes (i % 251); the first
  // 32 bytes of each extended output.
  const key = Buffer.from('whats the Elvish word for friend');
  const context = 'BLAKE3 2019-12-27 16:29:52 test vectors context';
  const input1023 = Buffer.alloc(1023);
  for (let i = 0; i < 1023; i++) input1023[i] = i % 251;
  const pool = new Pool({ kernel: 'blake3', encoding: 'hex' });
  try {
    assert.equal(
      (await pool.post(Buffer.alloc(0), { params: { key } })).result,
      '92b2b75604ed3c761f9d6f62392c8a9227ad0ea3f09573e783f1498a4ed60d26',
    );
    assert.equal(
      (await pool.post(input1023, { params: { key } })).result,
      'c951ecdf03288d0fcc96ee3413563d8a6d3589547f2c2fb36d9786470f1b9d6e',
    );
    assert.equal(
      (await pool.post(Buffer.alloc(0), { params: { context } })).result,
      '2cc39783c223154fea8dfb7c1b1660f2ac2dcbd1c1de8277b0b0dd39b7e50d7d',
    );
    // Without params: the plain hash (spec vector for the empty input).
    assert.equal(
      (await pool.post(Buffer.alloc(0))).result,
      'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262',
    );
    assert.throws(() => pool.post(Buffer.alloc(0), { params: { key: key.subarray(1) } }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /options\.params\.key' must be 32 bytes long/,
    });
    assert.throws(() => pool.post(Buffer.alloc(0), { params: { key, context } }), {
      code: 'ERR_INVALID_ARG_VALUE',
    });
    assert.throws(() => pool.post(Buffer.alloc(0), { params: { context: key } }), {
      code: 'ERR_INVALID_ARG_TYPE',
    });
  } finally {
    await pool.close();
  }
});

test('xxh3 and xxh64 take a seed as a number or a bigint, within 0..2^64-1', async () => {
  const pool = new Pool({ kernel: 'xxh64', encoding: 'hex' });
  const data = Buffer.from('hello, tidepool');
  try {
    const unseeded = (await pool.post(data)).result;
    assert.equal((await pool.post(data, { params: { seed: 0 } })).result, unseeded);
    const seeded = (await pool.post(data, { params: { seed: 7 } })).result;
    assert.notEqual(seeded, unseeded);
    assert.equal((await pool.post(data, { params: { seed: 7n } })).result, seeded);
    const max = (await pool.post(data, { kernel: 'xxh3', params: { seed: 2n ** 64n - 1n } }))
      .result;
    assert.match(max, /^[0-9a-f]{16}$/);
    for (const seed of [-1, 2 ** 64, 2n ** 64n, -1n, 1.5]) {
      assert.throws(
        () => pool.post(data, { params: { seed } }),
        { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: /options\.params\.seed/ },
        String(seed),
      );
    }
    assert.throws(() => pool.post(data, { params: { seed: '7' } }), {
      code: 'ERR_INVALID_ARG_TYPE',
    });
    assert.throws(() => pool.post(data, { kernel: 'sha256', params: { seed: 7 } }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: /takes none/,
    });
  } finally {
    await pool.close();
  }
});

test('a hash kernel posted without params while the pool has params for another kernel runs with its defaults', async () => {
  const pool = new Pool({ kernel: 'hmac', params: { hash: 'md5', key: 'k' } });
  try {
    const data = Buffer.from('abc');
    const { result } = await pool.post(data, { kernel: 'sha256' });
    assert.equal(result.toString('hex'), crypto.createHash('sha256').update(data).digest('hex'));
  } finally {
    await pool.close();
  }
});

test("posts with params that wait for room (queueFull 'wait', 'drop-oldest') keep their params", async () => {
  const data = Buffer.alloc(256 * 1024, 1);
  const want = (key) => crypto.createHmac('sha1', key).update(data).digest('hex');
  for (const queueFull of ['wait', 'drop-oldest']) {
    const pool = new Pool({
      kernel: 'hmac',
      maxThreads: 1,
      maxQueue: 1,
      queueFull,
      params: { hash: 'sha1', key: 'pool' },
    });
    try {
      const posts = [];
      for (let i = 0; i < 20; i++) {
        const key = `key ${i}`;
        posts.push(
          pool.post(data, { params: { hash: 'sha1', key } }).then(
            ({ result }) =>
              assert.equal(result.toString('hex'), want(key), `${queueFull}: post ${i}`),
            (err) => assert.equal(err.code, 'ERR_TIDEPOOL_DROPPED', `${queueFull}: post ${i}`),
          ),
        );
      }
      await Promise.all(posts);
    } finally {
      await pool.close();
    }
  }
});

test('hostile params: huge bigints, inherited names, SharedArrayBuffer and detached keys', async () => {
  const pool = new Pool({ kernel: 'xxh64', encoding: 'hex' });
  const data = Buffer.from('hello');
  try {
    // A bigint past 128 bits is out of range, not cut to its low bits.
    for (const seed of [2n ** 128n + 5n, 2n ** 1000n, -(2n ** 128n)]) {
      assert.throws(
        () => pool.post(data, { params: { seed } }),
        { code: 'ERR_OUT_OF_RANGE' },
        String(seed),
      );
    }
    // Inherited names are not parameters: only own ones are read (own-options.test.js).
    const seeded = (await pool.post(data, { params: { seed: 9 } })).result;
    const unseeded = (await pool.post(data)).result;
    assert.notEqual(seeded, unseeded);
    assert.equal((await pool.post(data, { params: Object.create({ seed: 9 }) })).result, unseeded);
    // A SharedArrayBuffer key is a binary like any other.
    const sab = new SharedArrayBuffer(4);
    new Uint8Array(sab).set([1, 2, 3, 4]);
    const mac = (await pool.post(data, { kernel: 'hmac', params: { hash: 'sha256', key: sab } }))
      .result;
    assert.equal(
      mac,
      crypto
        .createHmac('sha256', Buffer.from([1, 2, 3, 4]))
        .update(data)
        .digest('hex'),
    );
    // A detached key is refused as Node refuses a detached input.
    const key = new Uint8Array(8);
    structuredClone(key.buffer, { transfer: [key.buffer] });
    assert.throws(() => pool.post(data, { kernel: 'hmac', params: { hash: 'sha256', key } }), {
      name: 'TypeError',
      code: 'ERR_INVALID_STATE',
      message: /options\.params\.key/,
    });
  } finally {
    await pool.close();
  }
});
