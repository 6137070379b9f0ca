'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-from-string.js: a string
// (with non-ASCII characters) through deflate()/inflate() and
// gzip()/gunzip() comes back; unzip() of known deflate and gzip streams
// (upstream's, base64) gives the same string. (As upstream, the
// compressed bytes are not compared: a gzip header holds more than the
// input.)

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
const expectedBase64Deflate =
  'eJxdUUtOQzEMvMoc4OndgT0gJCT2buJWlpI4jePeqZfpmXAKLRKbLOzx/HK73q6vOrhCunlF1qIDJhNUeW5I2ozT5OkD' +
  'lKWLJWkncJG5403HQXAkT3Jw29B9uIEmToMukglZ0vS6ociBh4JG8sV4oVLEUCitK2kxq1WzPnChHDzsaGKy491LofoA' +
  'bWh8do43oeuYhB5EPCjcLjzYJo48KrfQBvnJecNFJvHT1+RSQsGoC7dn2t/xjhduTA1NWyQIZR0pbHwMDatnD+crPqKS' +
  'qGPHp1vnlsWM/07ubf7bheF7kqSj84Bm0R1fYTfaK8vqqqfKBtNMhe3OZh6N95CTvMX5HJJi4xOVzCgUOIMSLH7wmeOH' +
  'aFE4RdpnGavKtrB5xzfO/Ll9';
const expectedBase64Gzip =
  'H4sIAAAAAAAAA11RS05DMQy8yhzg6d2BPSAkJPZu4laWkjiN496pl+mZcAotEpss7PH8crverq86uEK6eUXWogMmE1R5' +
  'bkjajNPk6QOUpYslaSdwkbnjTcdBcCRPcnDb0H24gSZOgy6SCVnS9LqhyIGHgkbyxXihUsRQKK0raTGrVbM+cKEcPOxo' +
  'YrLj3Uuh+gBtaHx2jjeh65iEHkQ8KNwuPNgmjjwqt9AG+cl5w0Um8dPX5FJCwagLt2fa3/GOF25MDU1bJAhlHSlsfAwN' +
  'q2cP5ys+opKoY8enW+eWxYz/Tu5t/tuF4XuSpKPzgGbRHV9hN9ory+qqp8oG00yF7c5mHo33kJO8xfkckmLjE5XMKBQ4' +
  'gxIsfvCZ44doUThF2mcZq8q2sHnHNzRtagj5AQAA';

/** `fn(...args, callback)` as a promise; the callback must come once. */
function call(common, fn, ...args) {
  return new Promise((resolve, reject) => {
    fn(
      ...args,
      common.mustCall((err, result) => (err ? reject(err) : resolve(result))),
    );
  });
}

test('deflate/inflate, gzip/gunzip and unzip of a string', async () => {
  await both(async (zlib, common, who) => {
    const results = await Promise.all([
      call(common, zlib.deflate, inputString).then((buffer) => call(common, zlib.inflate, buffer)),
      call(common, zlib.gzip, inputString).then((buffer) => call(common, zlib.gunzip, buffer)),
      call(common, zlib.unzip, Buffer.from(expectedBase64Deflate, 'base64')),
      call(common, zlib.unzip, Buffer.from(expectedBase64Gzip, 'base64')),
    ]);
    for (const [i, what] of ['inflate', 'gunzip', 'unzip (deflate)', 'unzip (gzip)'].entries())
      assert.equal(results[i].toString(), inputString, `${who}: ${what}`);
  });
});
