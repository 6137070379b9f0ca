'use strict';
// The inputs of the large-delivery probes: 1024 gzip members of 64 KiB of
// JSON-like records each, which gunzip to ~300 KB results.
const zlib = require('node:zlib');

function gunzipInputs() {
  const json = [];
  for (let i = 0; json.length < 20000; i++)
    json.push(JSON.stringify({ id: i, user: 'user-' + (i % 313), score: (i * 7919) % 1000 }));
  const big = Buffer.from(json.join('\n'));
  return Array.from({ length: 1024 }, (_, i) => {
    const start = (i * 4099) % (big.length - 65536);
    return zlib.gzipSync(big.subarray(start, start + 65536));
  });
}

module.exports = { gunzipInputs };
