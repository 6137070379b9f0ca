'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-object-write.js: a
// Gunzip in objectMode still takes only bytes: write({}) throws
// ERR_INVALID_ARG_TYPE at once, and the stream emits no 'error'.
// (Upstream's 'error' listener is mustNotCall(); here the errors are
// gathered and counted a turn later, so that a failing run fails the
// assertion rather than throwing from an event.)

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

// Fails on tidepool: its write({}) does not throw; the chunk is refused in
// _write (lib/streams/tasks.js write() -> writtenItems()), given to the
// write's callback, and the stream is destroyed with an 'error'. See the
// report of this adaptation.
test('write({}) to an objectMode Gunzip throws, and emits no error', async () => {
  await both(
    async (zlib, _common, who) => {
      const gunzip = new zlib.Gunzip({ objectMode: true });
      const errors = [];
      gunzip.on('error', (err) => errors.push(err));
      try {
        assert.throws(
          () => gunzip.write({}),
          {
            name: 'TypeError',
            code: 'ERR_INVALID_ARG_TYPE',
          },
          `${who}: write({}) throws`,
        );
        await new Promise((resolve) => setImmediate(resolve));
        assert.deepEqual(errors, [], `${who}: no 'error'`);
      } finally {
        gunzip.destroy();
      }
    },
    { work: false },
  );
});
