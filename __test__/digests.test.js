'use strict';
// Every kernel's output, for every accepted input shape and encoding, against
// node:crypto / zlib (where Node has the algorithm) or the algorithms'
// reference test vectors (BLAKE3, XXH3, XXH64, CRC-32C).

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const zlib = require('node:zlib');
const { Pool, kernels } = require('..');

const NODE_HASHES = ['sha256', 'sha384', 'sha512', 'sha1', 'md5'];
// Sizes around block boundaries and across the 256 KiB cancellation chunk.
const SIZES = [
  0, 1, 55, 56, 63, 64, 65, 127, 128, 129, 1000, 65536, 262143, 262144, 262145, 600001,
];

/** The reference vectors' input: bytes 0, 1, ..., 250, 0, 1, ... */
function pattern(n) {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = i % 251;
  return b;
}

// Produced by the reference implementations (BLAKE3's test_vectors.json
// inputs; xxHash's and CRC-32C's reference C code).
const VECTORS = {
  blake3: {
    0: 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262',
    1: '2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213',
    1023: '10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11',
    1024: '42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7',
    1025: 'd00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444',
    2048: 'e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a',
    31744: '62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47',
    102400: 'bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085',
  },
  xxh3: {
    0: '2d06800538d394c2',
    1: 'c44bdff4074eecdb',
    1023: 'd3d91d80ac495685',
    1024: 'e5d78bafa45b2aa5',
    1025: 'e95c42288f28186e',
    2048: '25339063db861586',
    31744: '5162bbaf8b257803',
    102400: '1428e17f1cac2837',
  },
  xxh64: {
    0: 'ef46db3751d8e999',
    1: 'e934a84adb052768',
    1023: 'd66738f081c25cf4',
    1024: '138e26c65048ce29',
    1025: 'cfd73aedd2d6a39d',
    2048: 'a69e05a7eff57800',
    31744: '5fd04299cacedf8a',
    102400: 'eb1adcdd9e1369a6',
  },
  crc32c: {
    0: '00000000',
    1: '527d5351',
    1023: '39a4911a',
    1024: '2af62c0c',
    1025: 'c8d03add',
    2048: '9f7e33f0',
    31744: 'e1a4cb23',
    102400: '7957da17',
  },
};

function nodeDigest(kernel, data, encoding = 'hex') {
  if (kernel === 'crc32') {
    const hex = zlib.crc32(data).toString(16).padStart(8, '0');
    return encoding === 'hex' ? hex : Buffer.from(hex, 'hex').toString(encoding);
  }
  return crypto.createHash(kernel).update(data).digest(encoding);
}

test('every documented kernel is registered', () => {
  for (const k of [...NODE_HASHES, 'blake3', 'xxh3', 'xxh64', 'crc32', 'crc32c', 'spin', 'sleep']) {
    assert.ok(kernels.includes(k), `missing kernel ${k}`);
  }
});

test('digests are byte-identical to node:crypto and zlib.crc32', async () => {
  const pool = new Pool();
  try {
    for (const kernel of [...NODE_HASHES, 'crc32']) {
      for (const size of SIZES) {
        const data = crypto.randomBytes(size);
        const { result } = await pool.post(data, { kernel });
        assert.ok(Buffer.isBuffer(result), 'default encoding is a Buffer');
        assert.equal(
          result.toString('hex'),
          nodeDigest(kernel, data),
          `${kernel} of ${size} bytes`,
        );
      }
    }
  } finally {
    await pool.close();
  }
});

test('digests match the reference test vectors', async () => {
  const pool = new Pool({ encoding: 'hex' });
  try {
    for (const [kernel, vectors] of Object.entries(VECTORS)) {
      for (const [size, hex] of Object.entries(vectors)) {
        const { result } = await pool.post(pattern(Number(size)), { kernel });
        assert.equal(result, hex, `${kernel} of ${size} bytes`);
      }
    }
  } finally {
    await pool.close();
  }
});

test('encodings: hex, base64, base64url equal node:crypto', async () => {
  const data = crypto.randomBytes(1000);
  for (const encoding of ['hex', 'base64', 'base64url']) {
    const pool = new Pool({ encoding, kernel: 'sha512' });
    const { result } = await pool.post(data);
    assert.equal(result, nodeDigest('sha512', data, encoding));
    const crc = await pool.post(data, { kernel: 'crc32' });
    assert.equal(crc.result, nodeDigest('crc32', data, encoding));
    await pool.close();
  }
});

test('every binary shape is read in place, with its offset and length', async () => {
  const pool = new Pool({ encoding: 'hex' });
  try {
    const backing = crypto.randomBytes(4096);
    const ab = backing.buffer.slice(backing.byteOffset, backing.byteOffset + backing.length);
    const u8 = new Uint8Array(ab);
    const sab = new SharedArrayBuffer(300);
    new Uint8Array(sab).set(u8.subarray(0, 300));
    const cases = [
      ['Buffer', Buffer.from(u8), u8],
      ['Buffer slice with offset', Buffer.from(ab, 7, 100), u8.subarray(7, 107)],
      ['Uint8Array', new Uint8Array(ab, 3, 64), u8.subarray(3, 67)],
      ['Uint16Array', new Uint16Array(ab, 8, 10), u8.subarray(8, 28)],
      ['Float64Array', new Float64Array(ab, 16, 5), u8.subarray(16, 56)],
      ['BigInt64Array', new BigInt64Array(ab, 0, 3), u8.subarray(0, 24)],
      ['DataView', new DataView(ab, 5, 33), u8.subarray(5, 38)],
      ['ArrayBuffer', ab, u8],
      ['SharedArrayBuffer', sab, u8.subarray(0, 300)],
      ['small on-heap Uint8Array', new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3])],
      ['empty Buffer', Buffer.alloc(0), new Uint8Array(0)],
    ];
    for (const [name, input, expectedBytes] of cases) {
      const { result, message } = await pool.post(input);
      assert.equal(message, input, name);
      assert.equal(result, nodeDigest('sha256', expectedBytes), name);
    }
  } finally {
    await pool.close();
  }
});

test('an array of binaries hashes as their concatenation', async () => {
  const pool = new Pool({ encoding: 'hex' });
  try {
    const parts = [
      crypto.randomBytes(10),
      new Uint8Array(0),
      crypto.randomBytes(300000),
      new Uint16Array([1, 2, 3]),
    ];
    const whole = Buffer.concat(
      parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)),
    );
    for (const kernel of ['sha256', 'md5', 'crc32']) {
      const { result, message } = await pool.post(parts, { kernel });
      assert.equal(message, parts);
      assert.equal(result, nodeDigest(kernel, whole), kernel);
    }
    const { result } = await pool.post([], { kernel: 'sha256' });
    assert.equal(result, nodeDigest('sha256', Buffer.alloc(0)));
  } finally {
    await pool.close();
  }
});

test('Buffer results are independent copies', async () => {
  const pool = new Pool();
  try {
    const a = await pool.post(Buffer.from('a'));
    const firstHex = a.result.toString('hex');
    // Many more results pass through the shared slab afterwards.
    await Promise.all(Array.from({ length: 2000 }, (_, i) => pool.post(Buffer.from(String(i)))));
    assert.equal(a.result.toString('hex'), firstHex);
    assert.equal(firstHex, nodeDigest('sha256', Buffer.from('a')));
  } finally {
    await pool.close();
  }
});
