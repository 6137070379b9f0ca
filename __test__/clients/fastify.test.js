'use strict';
// fastify + @fastify/compress behind install(). The plugin compresses a
// buffered payload up to `syncThreshold` with zlib.gzipSync() and friends
// (on the event loop: install() leaves the *Sync functions to node:zlib),
// and streams anything larger, or any stream payload, through
// zlib.createGzip() / createBrotliCompress(), looked up on node:zlib's
// module object per response. It decodes request bodies with the
// createGunzip() it took when registered (so: register after install()).
// Each test runs behind install() and on node:zlib itself (the control).

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const zlib = require('node:zlib');
const { once } = require('node:events');
const { Readable } = require('node:stream');
const Fastify = require('fastify');
const fastifyCompress = require('@fastify/compress');
const { body, routed, poolWork, assertPool, get, readAll, tzlib } = require('./helpers');

const DECODE = { gzip: zlib.gunzipSync, br: zlib.brotliDecompressSync };

const LARGE = body(1 << 20);
const SMALL = body(2 << 10); // under syncThreshold (4 to 64 KiB), over threshold (1 KiB)

/** A fastify app with @fastify/compress, built (and registered) now, listening on loopback. */
async function app() {
  const fastify = Fastify();
  await fastify.register(fastifyCompress);
  fastify.get('/large', (req, reply) => reply.type('text/plain').send(LARGE));
  fastify.get('/small', (req, reply) => reply.type('text/plain').send(SMALL));
  fastify.get('/stream', (req, reply) =>
    reply
      .type('text/plain')
      .send(
        Readable.from([
          LARGE.subarray(0, 1000),
          LARGE.subarray(1000, 300_000),
          LARGE.subarray(300_000),
        ]),
      ),
  );
  fastify.post('/echo', (req, reply) => reply.type('application/octet-stream').send(req.body));
  fastify.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (req, b, done) =>
    done(null, b),
  );
  await fastify.listen({ port: 0, host: '127.0.0.1' });
  return fastify;
}

for (const installed of [true, false]) {
  const where = installed ? 'behind install()' : 'on node:zlib (control)';

  test(`@fastify/compress: gzip and br, a large buffered payload and a stream, ${where}`, () =>
    routed(installed, async () => {
      const fastify = await app();
      try {
        const port = fastify.server.address().port;
        for (const [path, want] of [
          ['/large', LARGE],
          ['/stream', LARGE],
        ]) {
          for (const encoding of ['gzip', 'br']) {
            const ran = await poolWork();
            const res = await get(port, path, { 'accept-encoding': encoding });
            assert.equal(res.statusCode, 200);
            assert.equal(res.headers['content-encoding'], encoding, path);
            const decoded = DECODE[encoding](await readAll(res));
            assert.ok(decoded.equals(want), `${path} ${encoding}: the decoded body differs`);
            assertPool(installed, ran, `${path} ${encoding}`);
          }
        }
      } finally {
        await fastify.close();
      }
    }));

  // Not the pool's, by design: a payload under syncThreshold (the plugin's
  // default is 4 to 64 KiB, scaled with the host) is compressed by zlib.gzipSync() and
  // brotliCompressSync(), which install() leaves to node:zlib.
  test(`@fastify/compress: a small payload takes the *Sync path, not the pool, ${where}`, () =>
    routed(installed, async () => {
      const fastify = await app();
      try {
        const port = fastify.server.address().port;
        for (const encoding of ['gzip', 'br']) {
          const ran = await poolWork();
          const res = await get(port, '/small', { 'accept-encoding': encoding });
          assert.equal(res.headers['content-encoding'], encoding);
          assert.ok(DECODE[encoding](await readAll(res)).equals(SMALL));
          assert.equal(ran(), 0, `${encoding}: the *Sync path runs on the event loop`);
        }
      } finally {
        await fastify.close();
      }
    }));

  test(`@fastify/compress: a gzip request body decoded, ${where}`, () =>
    routed(installed, async () => {
      const fastify = await app();
      try {
        const ran = await poolWork();
        const req = http.request({
          host: '127.0.0.1',
          port: fastify.server.address().port,
          method: 'POST',
          path: '/echo',
          agent: false,
          headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' },
        });
        req.end(zlib.gzipSync(LARGE));
        const [res] = await once(req, 'response');
        assert.equal(res.statusCode, 200);
        assert.ok((await readAll(res)).equals(LARGE), 'the decoded request body differs');
        assertPool(installed, ran, 'the request body');
      } finally {
        await fastify.close();
      }
    }));

  // Where node:zlib has no zstd (Node 20), @fastify/compress offers none
  // (it checks `typeof zlib.createZstdCompress` when registered), and
  // install() adds none: node:zlib keeps its own set of names, so a browser
  // that accepts zstd (Chrome sends `gzip, deflate, br, zstd`) gets br, as
  // without install().
  test(`@fastify/compress: what a browser's Accept-Encoding gets, ${where}`, () =>
    routed(installed, async () => {
      const fastify = await app();
      try {
        const port = fastify.server.address().port;
        const res = await get(port, '/large', { 'accept-encoding': 'gzip, deflate, br, zstd' });
        const raw = await readAll(res);
        const nodeHasZstd = typeof zlib.zstdDecompressSync === 'function';
        if (nodeHasZstd) {
          assert.equal(res.headers['content-encoding'], 'zstd');
          const decoded = await new Promise((resolve, reject) =>
            tzlib.zstdDecompress(raw, (err, out) => (err ? reject(err) : resolve(out))),
          );
          assert.ok(decoded.equals(LARGE));
        } else {
          assert.equal(res.headers['content-encoding'], 'br');
          assert.ok(zlib.brotliDecompressSync(raw).equals(LARGE));
        }
      } finally {
        await fastify.close();
      }
    }));
}
