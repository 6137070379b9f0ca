'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-deflate-raw-inherits.js:
// DeflateRaw can be inherited the old way, a constructor function that
// calls `DeflateRaw.call(this, options)` with its prototype chained by
// Object.setPrototypeOf; an instance made so takes a piped input.
//
// Upstream only needs the run not to throw; here the output is also read
// to its end, and must inflate to the input.

const test = require('node:test');
const assert = require('node:assert/strict');
const { Readable } = require('node:stream');
const { both } = require('./harness');

// Fails on tidepool (see the report of this adaptation): called without
// `new`, its DeflateRaw makes a new stream instead of initializing `this`.
test('a DeflateRaw inherited with Object.setPrototypeOf takes a pipe', async () => {
  await both(async (zlib, common, who) => {
    const { DeflateRaw } = zlib;
    function NotInitialized(options) {
      DeflateRaw.call(this, options);
      this.prop = true;
    }
    Object.setPrototypeOf(NotInitialized.prototype, DeflateRaw.prototype);
    Object.setPrototypeOf(NotInitialized, DeflateRaw);

    const dest = new NotInitialized();
    assert.equal(dest.prop, true, who);

    const read = new Readable({
      read() {
        this.push(Buffer.from('a test string'));
        this.push(null);
      },
    });
    const chunks = [];
    await new Promise((resolve, reject) => {
      dest.on('error', reject);
      dest.on('data', (chunk) => chunks.push(chunk));
      dest.on('end', common.mustCall(resolve));
      read.pipe(dest);
      dest.resume();
    });
    assert.equal(zlib.inflateRawSync(Buffer.concat(chunks)).toString(), 'a test string', who);
  });
});
