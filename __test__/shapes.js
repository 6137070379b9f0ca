'use strict';
// Inputs of the shapes the one-shot codec tests compress: empty, one byte,
// random, JSON-like text of several sizes.

const crypto = require('node:crypto');

/** JSON-like text: compresses well, like the payloads services compress. */
function jsonLike(n) {
  const parts = [];
  let size = 0;
  for (let i = 0; size < n; i++) {
    const s = JSON.stringify({
      id: i,
      name: `user-${i % 97}`,
      tags: ['a', 'b', String(i % 13)],
      score: (i * 7919) % 1000,
    });
    parts.push(s);
    size += s.length + 1;
  }
  return Buffer.from(parts.join('\n')).subarray(0, n);
}

const SHAPES = {
  empty: Buffer.alloc(0),
  'one byte': Buffer.from([42]),
  'random 100 KiB': crypto.randomBytes(100 * 1024),
  'JSON 64 KiB': jsonLike(64 * 1024),
  'JSON 16 MiB': jsonLike(16 << 20),
};

module.exports = { jsonLike, SHAPES };
