'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-sync-no-event.js: a
// Gzip and a Gunzip driven synchronously by _processChunk(chunk, Z_FINISH)
// (the undocumented method behind node:zlib's *Sync functions) round-trip
// the message and emit no 'close'. (Upstream's 'close' listeners are
// mustNotCall(); here they are counted a turn later.)

//
// Not applicable to @tidepool-rs/pool/zlib as it is: _processChunk() is
// node:zlib's internal, synchronous path, and the module's streams run on
// the pool, so they have none (docs/zlib.md, "What differs"). The check
// runs on node:zlib as upstream wrote it; on the module, the test holds it
// to its documented difference.

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeZlib = require('node:zlib');
const ours = require('@tidepool-rs/pool/zlib');

test('_processChunk(chunk, Z_FINISH) round-trips and emits no close', async () => {
  {
    const [zlib, who] = [nodeZlib, 'node:zlib'];
    const message = 'Come on, Fhqwhgads.';
    const buffer = Buffer.from(message);
    let closes = 0;

    const zipper = new zlib.Gzip();
    zipper.on('close', () => closes++);
    const unzipper = new zlib.Gunzip();
    unzipper.on('close', () => closes++);
    try {
      const zipped = zipper._processChunk(buffer, zlib.constants.Z_FINISH);
      const unzipped = unzipper._processChunk(zipped, zlib.constants.Z_FINISH);
      assert.notEqual(zipped.toString(), message, who);
      assert.equal(unzipped.toString(), message, who);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(closes, 0, `${who}: 'close' events`);
    } finally {
      zipper.destroy();
      unzipper.destroy();
    }
  }
  // The documented difference: no such member on the module's streams.
  const gzip = new ours.Gzip();
  assert.equal(gzip._processChunk, undefined);
  gzip.destroy();
});
