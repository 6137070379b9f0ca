'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-destroy-pipe.js: a Gzip
// destroyed with data still in flight, from the write() of the stream it
// is piped to, emits no error, and that write() is the only one. (Upstream
// writes Buffer.allocUnsafe() bytes; here zeros, the same for both runs.
// Upstream's "no error" is its process not crashing; here 'error' must not
// come, and the run ends at 'close'.)

const test = require('node:test');
const { Writable } = require('node:stream');
const { both } = require('./harness');

test('destroy() with data in flight emits no error', async () => {
  await both(async (zlib, common) => {
    const ts = zlib.createGzip();
    const ws = new Writable({
      write: common.mustCall((chunk, encoding, cb) => {
        setImmediate(cb);
        ts.destroy();
      }),
    });
    ts.on('error', common.mustNotCall("'error'"));
    const closed = new Promise((resolve) => ts.on('close', resolve));
    const buf = Buffer.alloc(1024 * 1024 * 20);
    ts.end(buf);
    ts.pipe(ws);
    await closed;
    // The write's callback (a setImmediate) runs before the run is counted.
    await new Promise((resolve) => setImmediate(resolve));
  });
});
