'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-random-byte-pipes.js:
// random bytes from an old-style stream (pause()/resume()) piped through
// gzip, then gunzip, into an old-style sink whose write() says false every
// time and drains a moment later; the bytes that come out hash as those
// that went in.

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { Stream } = require('node:stream');
const { both } = require('./harness');

/** Emits `total` random bytes in blocks of `block` ± jitter, keeping their SHA-1. */
class RandomReadStream extends Stream {
  constructor({ total, block, jitter }) {
    super();
    this.readable = true;
    this._paused = false;
    this._processing = false;
    this._hasher = crypto.createHash('sha1');
    this._remaining = total;
    this._opt = { block, jitter };
    this._process = this._process.bind(this);
    process.nextTick(this._process);
  }

  pause() {
    this._paused = true;
    this.emit('pause');
  }

  resume() {
    this._paused = false;
    this.emit('resume');
    this._process();
  }

  _process() {
    if (this._processing || this._paused) return;
    this._processing = true;
    if (!this._remaining) {
      this._hash = this._hasher.digest('hex');
      this._processing = false;
      this.emit('end');
      return;
    }
    let block =
      this._opt.block + Math.ceil(Math.random() * this._opt.jitter - this._opt.jitter / 2);
    block = Math.min(block, this._remaining);
    const buf = crypto.randomBytes(block);
    this._hasher.update(buf);
    this._remaining -= block;
    this._processing = false;
    this.emit('data', buf);
    process.nextTick(this._process);
  }
}

/** Hashes what is written; write() says false every time, as an fs.WriteStream may. */
class HashStream extends Stream {
  constructor() {
    super();
    this.readable = this.writable = true;
    this._hasher = crypto.createHash('sha1');
  }

  write(c) {
    this._hasher.update(c);
    process.nextTick(() => this.resume());
    return false;
  }

  resume() {
    this.emit('resume');
    process.nextTick(() => this.emit('drain'));
  }

  end(c) {
    if (c) this.write(c);
    this._hash = this._hasher.digest('hex');
    this.emit('data', this._hash);
    this.emit('end');
  }
}

test('random bytes through gzip and gunzip come out as they went in', async () => {
  await both(async (zlib, _common, who) => {
    for (const [total, block, jitter] of [
      [1024, 256, 16],
      [4 << 20, 256 << 10, 1024],
    ]) {
      const inp = new RandomReadStream({ total, block, jitter });
      const out = new HashStream();
      const gzip = zlib.createGzip();
      const gunz = zlib.createGunzip();
      const hashed = new Promise((resolve, reject) => {
        out.on('data', resolve);
        gzip.on('error', reject);
        gunz.on('error', reject);
      });
      inp.pipe(gzip).pipe(gunz).pipe(out);
      assert.equal(await hashed, inp._hash, `${who}: ${total} bytes`);
    }
  });
});
