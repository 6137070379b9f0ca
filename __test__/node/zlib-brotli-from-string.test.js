'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-brotli-from-string.js:
// brotliCompress() of a string (with non-ASCII characters) makes it
// smaller and brotliDecompress() gives it back; brotliDecompress() of a
// known brotli stream (upstream's, base64) gives the same string.

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

const inputString =
  'ΩΩLorem ipsum dolor sit amet, consectetur adipiscing elit. Morbi faucibus, purus at ' +
  'gravida dictum, libero arcu convallis lacus, in commodo libero metus eu nisi. Nullam ' +
  'commodo, neque nec porta placerat, nisi est fermentum augue, vitae gravida tellus sapien ' +
  'sit amet tellus. Aenean non diam orci. Proin quis elit turpis. Suspendisse non diam ' +
  'ipsum. Suspendisse nec ullamcorper odio. Vestibulum arcu mi, sodales non suscipit id, ' +
  'ultrices ut massa. Sed ac sem sit amet arcu malesuada fermentum. Nunc sed. ';
const compressedString =
  'G/gBQBwHdky2aHV5KK9Snf05//1pPdmNw/7232fnIm1IBK1AA8RsN8OB8Nb7Lpgk3UWWUlzQXZyHQeBBbXMTQXC1j7' +
  'wg3LJs9LqOGHRH2bj/a2iCTLLx8hBOyTqgoVuD1e+Qqdnf1rkUNyrWq6LtOhWgxP3QUwdhKGdZm3rJWaDDBV7+pDk1' +
  'MIkrmjp4ma2xVi5MsgJScA3tP1I7mXeby6MELozrwoBQDmVTnEAicZNj4lkGqntJe2qSnGyeMmcFgraK94vCg/4iLu' +
  'Tw5RhKhnVY++dZ6niUBmRqIutsjf5TzwF5iAg8a9UkjF52eZ0tB2vo6v8SqVfNMkBmmhxr0NT9LkYF69aEjlYzj7IE' +
  'KmEUQf1HBogRYhFIt4ymRNEgHAIzOyNEsQM=';

/** `fn(...args, callback)` as a promise; the callback must come once. */
function call(common, fn, ...args) {
  return new Promise((resolve, reject) => {
    fn(
      ...args,
      common.mustCall((err, result) => (err ? reject(err) : resolve(result))),
    );
  });
}

test('brotliCompress()/brotliDecompress() of a string', async () => {
  await both(async (zlib, common, who) => {
    const [roundTrip, known] = await Promise.all([
      call(common, zlib.brotliCompress, inputString).then(async (buffer) => {
        assert.ok(inputString.length > buffer.length, `${who}: ${buffer.length} bytes`);
        return call(common, zlib.brotliDecompress, buffer);
      }),
      call(common, zlib.brotliDecompress, Buffer.from(compressedString, 'base64')),
    ]);
    assert.equal(roundTrip.toString(), inputString, who);
    assert.equal(known.toString(), inputString, who);
  });
});
