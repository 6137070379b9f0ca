'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-unzip-one-byte-chunks.js:
// two gzip members, concatenated, written to Unzip one byte at a time:
// both members come out ('abcdef') by 'finish', and no error.

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

test('two gzip members written one byte at a time unzip whole', async () => {
  const data = Buffer.concat([nodeZlib.gzipSync('abc'), nodeZlib.gzipSync('def')]);
  await both(async (zlib, common, who) => {
    const resultBuffers = [];
    const unzip = zlib.createUnzip();
    const finished = new Promise((resolve, reject) => {
      unzip.on('error', reject);
      unzip.on(
        'finish',
        common.mustCall(() => resolve(Buffer.concat(resultBuffers).toString())),
      );
    });
    unzip.on('data', (chunk) => resultBuffers.push(chunk));
    for (let i = 0; i < data.length; i++) unzip.write(Buffer.from([data[i]]));
    unzip.end();
    const unzipped = await finished;
    assert.equal(
      unzipped,
      'abcdef',
      `${who}: '${unzipped}' should match 'abcdef' after zipping and unzipping`,
    );
  });
});
