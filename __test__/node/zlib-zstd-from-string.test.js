'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-zstd-from-string.js:
// zstdCompress() of a string (with non-ASCII characters) makes it smaller
// and zstdDecompress() gives it back; zstdDecompress() of a known zstd
// frame (upstream's, base64) gives the same string. zstd is node:zlib's
// from Node 22.15 and 23.8: before, the drop-in's run goes alone.

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

const NODE_HAS_ZSTD = typeof nodeZlib.createZstdCompress === 'function';

const inputString =
  'ΩΩLorem ipsum dolor sit amet, consectetur adipiscing elit. Morbi faucibus, purus at ' +
  'gravida dictum, libero arcu convallis lacus, in commodo libero metus eu nisi. Nullam ' +
  'commodo, neque nec porta placerat, nisi est fermentum augue, vitae gravida tellus sapien ' +
  'sit amet tellus. Aenean non diam orci. Proin quis elit turpis. Suspendisse non diam ' +
  'ipsum. Suspendisse nec ullamcorper odio. Vestibulum arcu mi, sodales non suscipit id, ' +
  'ultrices ut massa. Sed ac sem sit amet arcu malesuada fermentum. Nunc sed. ';
const compressedString =
  'KLUv/QRYRQkA9tc9H6AlhTb/z/7/gbTI3kaWLKnbCtkZu/hXm0jFpNz/VQM2ADMANQBHTuQOpIYzfVv7XGwXrpoIfgXN' +
  'AB98xW4wV3vnCF2bjcvWZF2wIZ1vr1mSHHvPHU0TgMGBwUFrF0xqReWcWPO8zNy6wMwFUilN+Lg987Zvs2GSRMy6uYvt' +
  'ovK9Uuhgst6l9FQrXLnA5gpZL7PdI8bO9sDH3tHm73XBzaUK+LjSPNKRmzQ3ZMYEPozdof12KcZGfIcLa0PTsdkYqhGc' +
  'Ax/E9mWa8EGEeq0Qou2LTmzgg3YJz/21OuXSF+TOd662d60Qyb04xC5dOF4b8JFH8mpHAxAAELu3tg1oabBEIWaRHdE0' +
  'l/+0RdEWWIVMAku8TgbiX/4bU+OpLo4UuY1FKDR8RgBc';

/** `fn(...args, callback)` as a promise; the callback must come once. */
function call(common, fn, ...args) {
  return new Promise((resolve, reject) => {
    fn(
      ...args,
      common.mustCall((err, result) => (err ? reject(err) : resolve(result))),
    );
  });
}

test('zstdCompress()/zstdDecompress() of a string', async (t) => {
  if (!NODE_HAS_ZSTD) t.diagnostic('node:zlib has no zstd here: the drop-in runs alone');
  await both(async (zlib, common, who) => {
    if (zlib === nodeZlib && !NODE_HAS_ZSTD) return;
    const [roundTrip, known] = await Promise.all([
      call(common, zlib.zstdCompress, inputString).then(async (buffer) => {
        assert.ok(inputString.length > buffer.length, `${who}: ${buffer.length} bytes`);
        return call(common, zlib.zstdDecompress, buffer);
      }),
      call(common, zlib.zstdDecompress, Buffer.from(compressedString, 'base64')),
    ]);
    assert.equal(roundTrip.toString(), inputString, who);
    assert.equal(known.toString(), inputString, who);
  });
});
