'use strict';
// koa + koa-compress behind install(). koa-compress takes node:zlib's
// factories when it loads (`const encodingMethods = { gzip:
// zlib.createGzip, ... }` at the top of its module), so it sees install()
// only when loaded after it: as a real app gets with `node --require
// @tidepool-rs/pool/zlib/register`, and as these tests get by loading it
// afresh (freshRequire) inside routed(). Each test runs behind install()
// and on node:zlib itself (the control).

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const zlib = require('node:zlib');
const { Readable } = require('node:stream');
const Koa = require('koa');
const {
  body,
  routed,
  poolWork,
  assertPool,
  listen,
  close,
  get,
  readAll,
  freshRequire,
  runChild,
  childResult,
  tzlib,
} = require('./helpers');

const DECODE = {
  gzip: zlib.gunzipSync,
  deflate: zlib.inflateSync,
  br: zlib.brotliDecompressSync,
};

const BODY = body(1 << 20);

/** A koa app with `compress` (koa-compress's middleware factory) serving BODY as a Buffer and as a stream. */
function app(compress) {
  const koa = new Koa();
  koa.use(compress());
  koa.use((ctx) => {
    ctx.type = 'text/plain';
    ctx.body =
      ctx.path === '/stream' ? Readable.from([BODY.subarray(0, 5000), BODY.subarray(5000)]) : BODY;
  });
  return koa.callback();
}

for (const installed of [true, false]) {
  const where = installed ? 'behind install()' : 'on node:zlib (control)';

  test(`koa + koa-compress: gzip, deflate and br, a Buffer body and a stream, ${where}`, () =>
    routed(installed, async () => {
      const server = http.createServer(app(freshRequire('koa-compress')));
      try {
        const port = await listen(server);
        for (const path of ['/buffer', '/stream']) {
          for (const encoding of ['gzip', 'deflate', 'br']) {
            const ran = await poolWork();
            const res = await get(port, path, { 'accept-encoding': encoding });
            assert.equal(res.statusCode, 200);
            assert.equal(res.headers['content-encoding'], encoding);
            const decoded = DECODE[encoding](await readAll(res));
            assert.ok(decoded.equals(BODY), `${path} ${encoding}: the decoded body differs`);
            assertPool(installed, ran, `${path} ${encoding}`);
          }
        }
      } finally {
        await close(server);
      }
    }));

  // koa-compress offers what it finds on node:zlib when it loads, zstd
  // first. Where node:zlib has no zstd (Node 20), install() adds none
  // (node:zlib keeps its own set of names): a browser that accepts zstd
  // (Chrome sends `gzip, deflate, br, zstd`) gets br, as without install().
  test(`koa + koa-compress: what a browser's Accept-Encoding gets, ${where}`, () =>
    routed(installed, async () => {
      const server = http.createServer(app(freshRequire('koa-compress')));
      try {
        const port = await listen(server);
        const res = await get(port, '/buffer', { 'accept-encoding': 'gzip, deflate, br, zstd' });
        const raw = await readAll(res);
        if (typeof zlib.zstdDecompressSync === 'function') {
          assert.equal(res.headers['content-encoding'], 'zstd');
          const decoded = await new Promise((resolve, reject) =>
            tzlib.zstdDecompress(raw, (err, out) => (err ? reject(err) : resolve(out))),
          );
          assert.ok(decoded.equals(BODY));
        } else {
          assert.equal(res.headers['content-encoding'], 'br');
          assert.ok(zlib.brotliDecompressSync(raw).equals(BODY));
        }
      } finally {
        await close(server);
      }
    }));
}

test('koa-compress loaded before install() keeps node:zlib (as install() documents)', async () => {
  const compress = freshRequire('koa-compress');
  await routed(true, async () => {
    const server = http.createServer(app(compress));
    try {
      const port = await listen(server);
      const ran = await poolWork();
      const res = await get(port, '/buffer', { 'accept-encoding': 'gzip' });
      assert.ok(zlib.gunzipSync(await readAll(res)).equals(BODY));
      assert.equal(ran(), 0, "the factories it took at load time are node:zlib's");
    } finally {
      await close(server);
    }
  });
});

test('koa + koa-compress under node --require @tidepool-rs/pool/zlib/register', async () => {
  const script = `
    const http = require('node:http');
    const zlib = require('node:zlib');
    const Koa = require('koa');
    const compress = require('koa-compress');
    const tz = require('@tidepool-rs/pool/zlib');
    const body = require('node:crypto').randomBytes(1 << 16).toString('hex');
    const koa = new Koa();
    koa.use(compress());
    koa.use((ctx) => { ctx.type = 'text/plain'; ctx.body = body; });
    const server = http.createServer(koa.callback()).listen(0, '127.0.0.1', () => {
      const before = tz.pool.stats().completed;
      http.get({ host: '127.0.0.1', port: server.address().port, agent: false,
                 headers: { 'accept-encoding': 'br' } }, async (res) => {
        const chunks = [];
        for await (const c of res) chunks.push(c);
        const equal = zlib.brotliDecompressSync(Buffer.concat(chunks)).toString() === body;
        const ran = tz.pool.stats().completed - before;
        console.log(JSON.stringify({ encoding: res.headers['content-encoding'], equal, ran }));
        server.close();
      });
    });`;
  const result = childResult(
    await runChild(script, { args: ['--require', '@tidepool-rs/pool/zlib/register'] }),
  );
  assert.equal(result.encoding, 'br');
  assert.equal(result.equal, true);
  assert.ok(result.ran > 0, `the pool should have run tasks (completed +${result.ran})`);
});
