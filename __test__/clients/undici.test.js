'use strict';
// undici behind install(), decoding compressed responses from a loopback
// server (encoded by node:zlib's own *Sync functions, which install()
// leaves alone): undici's fetch() (zlib.createGunzip() / createInflate() /
// createBrotliDecompress(), looked up on node:zlib per response, with
// flush and finishFlush Z_SYNC_FLUSH / BROTLI_OPERATION_FLUSH, "as cURL
// does": lenient with a truncated body), request() through
// interceptors.decompress (which takes the factories when its module loads,
// so it is loaded afresh after install()), and Node's own global fetch()
// (its bundled undici, the same code). Each test runs behind install() and
// on node:zlib itself (the control).

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const zlib = require('node:zlib');
const undici = require('undici');
const {
  body,
  routed,
  poolWork,
  assertPool,
  listen,
  close,
  freshRequire,
  runChild,
  childResult,
} = require('./helpers');

const BODY = body(1 << 20);
const ENCODED = {
  gzip: zlib.gzipSync(BODY),
  deflate: zlib.deflateSync(BODY),
  br: zlib.brotliCompressSync(BODY),
};

/** A server of BODY in each encoding (/gzip, /deflate, /br) and a truncated gzip (/truncated). */
function server() {
  return http.createServer((req, res) => {
    const name = req.url.slice(1);
    const truncated = name === 'truncated';
    const encoded = truncated ? ENCODED.gzip.subarray(0, ENCODED.gzip.length - 100) : ENCODED[name];
    res.setHeader('content-type', 'application/octet-stream');
    res.setHeader('content-encoding', truncated ? 'gzip' : name);
    res.end(encoded);
  });
}

/** What fetch-like `get(url)` gives for /gzip, /deflate (and /br), checked against BODY. */
async function fetchEach(installed, port, get, encodings) {
  for (const encoding of encodings) {
    const ran = await poolWork();
    const res = await get(`http://127.0.0.1:${port}/${encoding}`);
    assert.equal(res.status, 200);
    const decoded = Buffer.from(await res.arrayBuffer());
    assert.ok(decoded.equals(BODY), `${encoding}: the decoded body differs`);
    assertPool(installed, ran, encoding);
  }
}

/**
 * undici's fetch() asks createBrotliDecompress() for
 * `{ flush: BROTLI_OPERATION_FLUSH, finishFlush: BROTLI_OPERATION_FLUSH }`
 * (lenient at the end, as its gunzip is with Z_SYNC_FLUSH): the br tests
 * below hold the module to that.
 */

for (const installed of [true, false]) {
  const where = installed ? 'behind install()' : 'on node:zlib (control)';

  test(`undici fetch(): gzip and deflate responses, ${where}`, () =>
    routed(installed, async () => {
      const s = server();
      const agent = new undici.Agent();
      try {
        const port = await listen(s);
        await fetchEach(installed, port, (url) => undici.fetch(url, { dispatcher: agent }), [
          'gzip',
          'deflate',
        ]);
      } finally {
        await agent.close();
        await close(s);
      }
    }));

  test(`undici fetch(): a br response, ${where}`, () =>
    routed(installed, async () => {
      const s = server();
      const agent = new undici.Agent();
      try {
        const port = await listen(s);
        await fetchEach(installed, port, (url) => undici.fetch(url, { dispatcher: agent }), ['br']);
      } finally {
        await agent.close();
        await close(s);
      }
    }));

  test(`undici fetch(): a truncated gzip body gives what it has, ${where}`, () =>
    routed(installed, async () => {
      const s = server();
      const agent = new undici.Agent();
      try {
        const port = await listen(s);
        const ran = await poolWork();
        const res = await undici.fetch(`http://127.0.0.1:${port}/truncated`, { dispatcher: agent });
        const got = Buffer.from(await res.arrayBuffer());
        assert.ok(got.length > 0 && got.length < BODY.length, `${got.length} bytes`);
        assert.ok(got.equals(BODY.subarray(0, got.length)), 'a prefix of the body');
        assertPool(installed, ran, 'the truncated body');
      } finally {
        await agent.close();
        await close(s);
      }
    }));

  test(`undici request() with interceptors.decompress: gzip, deflate and br, ${where}`, () =>
    routed(installed, async () => {
      const decompress = freshRequire('undici/lib/interceptor/decompress.js');
      const s = server();
      const agent = new undici.Agent();
      try {
        const port = await listen(s);
        const dispatcher = agent.compose(decompress());
        for (const encoding of ['gzip', 'deflate', 'br']) {
          const ran = await poolWork();
          const res = await undici.request(`http://127.0.0.1:${port}/${encoding}`, { dispatcher });
          assert.equal(res.statusCode, 200);
          const decoded = Buffer.from(await res.body.arrayBuffer());
          assert.ok(decoded.equals(BODY), `${encoding}: the decoded body differs`);
          assertPool(installed, ran, encoding);
        }
      } finally {
        await agent.close();
        await close(s);
      }
    }));

  test(`Node's global fetch(): gzip and deflate responses, ${where}`, () =>
    routed(installed, async () => {
      const s = server();
      try {
        const port = await listen(s);
        await fetchEach(installed, port, (url) => fetch(url), ['gzip', 'deflate']);
      } finally {
        await close(s);
      }
    }));
}

// Node's global fetch() of a br response, in a child: behind install() the
// throw from createBrotliDecompress() inside fetch's onHeaders is emitted as
// an 'error' on a Readable nobody listens to, and ends the process (Node 20's
// bundled undici); npm's undici 7 rejects the fetch() instead (above).
const GLOBAL_FETCH_BR = (installed) => `
  const http = require('node:http');
  const zlib = require('node:zlib');
  const tz = require('@tidepool-rs/pool/zlib');
  if (${installed}) tz.install();
  const body = Buffer.from('brotli over global fetch '.repeat(20000));
  const server = http.createServer((req, res) => {
    res.setHeader('content-encoding', 'br');
    res.end(zlib.brotliCompressSync(body));
  });
  server.listen(0, '127.0.0.1', async () => {
    const before = tz.pool.stats().completed;
    const res = await fetch('http://127.0.0.1:' + server.address().port + '/');
    const equal = Buffer.from(await res.arrayBuffer()).equals(body);
    console.log(JSON.stringify({ equal, ran: tz.pool.stats().completed - before }));
    server.close();
  });`;

for (const installed of [true, false]) {
  const where = installed ? 'behind install()' : 'on node:zlib (control)';
  test(`Node's global fetch(): a br response, ${where}`, async () => {
    const result = childResult(await runChild(GLOBAL_FETCH_BR(installed)));
    assert.equal(result.equal, true);
    if (installed) assert.ok(result.ran > 0, `the pool should have run tasks (+${result.ran})`);
    else assert.equal(result.ran, 0);
  });
}
