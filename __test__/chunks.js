'use strict';
// Data cut into chunks the way the stream tests write it: text-like bytes,
// pieces of varied sizes (empty ones included), and a transform fed them.

const { pipeline } = require('node:stream/promises');
const { Readable, Writable } = require('node:stream');

/** Text-like bytes (compressible), `n` of them. */
function text(n) {
  const words = ['tide', 'pool', 'stream', 'chunk', 'thread', 'gzip', 'zstd', 'brotli', '\n'];
  const out = Buffer.alloc(n);
  let x = 7;
  for (let at = 0; at < n;) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    at += out.write(`${words[x % words.length]} `, at);
  }
  return out;
}

/** `data` in chunks of varied sizes (empty ones included). */
function pieces(data, seed) {
  const out = [];
  let x = seed;
  for (let at = 0; at < data.length;) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const size = [0, 1, 100, 4096, 65536, 200_000][x % 6];
    out.push(data.subarray(at, at + size));
    at += size;
  }
  return out;
}

/** Runs `data` (in pieces) through `transform`; the output, joined. */
async function through(transform, data, seed = 1) {
  const out = [];
  await pipeline(
    Readable.from(pieces(data, seed)),
    transform,
    new Writable({
      write(chunk, _enc, cb) {
        out.push(chunk);
        cb();
      },
    }),
  );
  return Buffer.concat(out);
}

/** `data` cut at random places (empty chunks included). */
function cuts(data, seed) {
  const out = [];
  let at = 0;
  let x = seed;
  while (at < data.length) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const size = [0, 1, 63, 64, 65, 1000, 4096, 70_000][x % 8];
    out.push(data.subarray(at, at + size));
    at += size;
  }
  return out;
}

module.exports = { text, pieces, through, cuts };
