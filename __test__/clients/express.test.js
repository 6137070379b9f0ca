'use strict';
// express + compression behind install(): the middleware calls
// zlib.createGzip() / createDeflate() / createBrotliCompress() per response
// (looked up on node:zlib's module object each time), writes through them,
// calls stream.flush() for res.flush(), and destroys the stream when the
// client goes away. Each test runs twice: behind install() (the pool does
// the work) and on node:zlib itself (the control: same assertions, no pool).

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const zlib = require('node:zlib');
const { once } = require('node:events');
const express = require('express');
const compression = require('compression');
const { waitFor } = require('../wait');
const {
  body,
  routed,
  poolWork,
  assertPool,
  listen,
  close,
  get,
  readAll,
  noStrayErrors,
} = require('./helpers');

/** node:zlib's own decoders (install() leaves the *Sync functions and classes alone). */
const DECODE = {
  gzip: zlib.gunzipSync,
  deflate: zlib.inflateSync,
  br: zlib.brotliDecompressSync,
};
const DECODER = {
  gzip: () => new zlib.Gunzip(),
  deflate: () => new zlib.Inflate(),
  br: () => new zlib.BrotliDecompress(),
};

const BODY = body(1 << 20);

for (const installed of [true, false]) {
  const where = installed ? 'behind install()' : 'on node:zlib (control)';

  test(`express + compression: gzip, deflate and br bodies, ${where}`, () =>
    routed(installed, async () => {
      const app = express();
      app.use(compression());
      app.get('/body', (req, res) => res.type('text/plain').send(BODY));
      const server = http.createServer(app);
      try {
        const port = await listen(server);
        for (const encoding of ['gzip', 'deflate', 'br']) {
          const ran = await poolWork();
          const res = await get(port, '/body', { 'accept-encoding': encoding });
          assert.equal(res.statusCode, 200);
          assert.equal(res.headers['content-encoding'], encoding);
          const decoded = DECODE[encoding](await readAll(res));
          assert.ok(decoded.equals(BODY), `${encoding}: the decoded body differs`);
          assertPool(installed, ran, encoding);
        }
      } finally {
        await close(server);
      }
    }));

  test(`express + compression: res.flush() sends each event before the end, ${where}`, () =>
    routed(installed, async () => {
      let current;
      const app = express();
      app.use(compression());
      app.get('/events', (req, res) => {
        res.type('text/event-stream');
        res.write('data: one\n\n');
        res.flush();
        current = res;
      });
      const server = http.createServer(app);
      try {
        const port = await listen(server);
        for (const encoding of ['gzip', 'deflate', 'br']) {
          const ran = await poolWork();
          current = undefined;
          const res = await get(port, '/events', { 'accept-encoding': encoding });
          assert.equal(res.headers['content-encoding'], encoding);
          // Decoded as it comes: only a flushed event can be read before the end.
          const decoder = DECODER[encoding]();
          let text = '';
          decoder.setEncoding('utf8').on('data', (s) => (text += s));
          const ended = once(decoder, 'end');
          res.pipe(decoder);
          const what = `${encoding}: the events flushed so far`;
          await waitFor(() => text === 'data: one\n\n', { what, state: () => text });
          current.write('data: two\n\n');
          current.flush();
          await waitFor(() => text === 'data: one\n\ndata: two\n\n', { what, state: () => text });
          current.end('data: end\n\n');
          await ended;
          assert.equal(text, 'data: one\n\ndata: two\n\ndata: end\n\n');
          assertPool(installed, ran, encoding);
        }
      } finally {
        await close(server);
      }
    }));

  test(`express + compression: a client that hangs up mid-body, ${where}`, () =>
    routed(installed, () =>
      noStrayErrors(async () => {
        // Incompressible, so that the compressed body is as long as the
        // plain one: 64 MiB offered, far more than the client reads.
        const block = require('node:crypto').randomBytes(1 << 20);
        const TOTAL = 64;
        const served = { written: 0, closed: false, finished: false };
        const app = express();
        app.use(compression());
        app.get('/long', (req, res) => {
          res.type('application/octet-stream');
          res.on('close', () => (served.closed = true));
          const pump = () => {
            while (!served.closed && served.written < TOTAL) {
              served.written++;
              if (!res.write(block)) return;
            }
            if (!served.closed) {
              served.finished = true;
              res.end();
            }
          };
          res.on('drain', pump);
          pump();
        });
        app.get('/body', (req, res) => res.type('text/plain').send(BODY));
        const server = http.createServer(app);
        try {
          const port = await listen(server);
          const ran = await poolWork();
          const res = await get(port, '/long', { 'accept-encoding': 'gzip' });
          assert.equal(res.headers['content-encoding'], 'gzip');
          let received = 0;
          await new Promise((resolve, reject) => {
            res.on('data', (chunk) => {
              received += chunk.length;
              if (received > 256 << 10) {
                res.destroy();
                resolve();
              }
            });
            res.on('end', () => reject(new Error('the whole body came')));
          });
          await waitFor(() => served.closed, { what: 'the server to see the client go' });
          assert.equal(served.finished, false, 'the server stopped before the end of the body');
          assertPool(installed, ran, 'the body before the hang-up');

          // The pool (and the server) still work.
          const after = await poolWork();
          const again = await get(port, '/body', { 'accept-encoding': 'gzip' });
          assert.ok(zlib.gunzipSync(await readAll(again)).equals(BODY));
          assertPool(installed, after, 'a response after the hang-up');
        } finally {
          await close(server);
        }
      }),
    ));
}
