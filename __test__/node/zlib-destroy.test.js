'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-destroy.js: destroy()
// cleans up and closes; an error is emitted once, even when the stream is
// destroyed with an error of its own while a write fails. (Upstream also
// checks that node:zlib's `_handle` is null after destroy(): the pool's
// streams have no `_handle`. The streams are destroyed before a task need
// run: `work: false`.)

const test = require('node:test');
const assert = require('node:assert/strict');
const { once } = require('node:events');
const { both } = require('./harness');
const { waitFor } = require('../wait');

test('destroy() closes the stream; an error is emitted once', async () => {
  await both(
    async (zlib, _common, who) => {
      const ts = zlib.createGzip();
      ts.destroy();
      if (who === 'node:zlib') assert.equal(ts._handle, null);
      await once(ts, 'close');

      const decompress = zlib.createGunzip();
      let errors = 0;
      decompress.on('error', () => {
        errors++;
        decompress.close();
      });
      const closed = new Promise((resolve) => decompress.on('close', resolve));
      decompress.write('something invalid');
      decompress.destroy(new Error('asd'));
      await closed;
      // A second error would come from the write's work: the pool's has
      // settled once nothing is pending (node:zlib's reports nothing: 50 ms).
      if (who === 'tidepool')
        await waitFor(() => zlib.pool.stats().pending === 0, { what: 'the write to settle' });
      else await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(errors, 1, who);
    },
    { work: false },
  );
});
