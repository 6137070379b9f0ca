'use strict';
// ws with permessage-deflate behind install(), on both ends. ws keeps one
// zlib.createDeflateRaw() and one createInflateRaw() per connection (made
// when first needed, looked up on node:zlib's module object), writes each
// message, then flush(Z_SYNC_FLUSH) (deflate) or flush() (inflate) and
// reads what the flush gave; under `*NoContextTakeover` it calls reset()
// after each message, and on a message over maxPayload it calls reset()
// on the inflater from its 'data' listener. Each test runs behind install()
// and on node:zlib itself (the control).

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { once } = require('node:events');
const { WebSocketServer, WebSocket } = require('ws');
const { body, routed, poolWork, assertPool, runChild, childResult } = require('./helpers');

/** An echo server and a client connected to it, both with permessage-deflate `options`. */
async function pair(options) {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: options });
  await once(server, 'listening');
  server.on('connection', (socket) =>
    socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary })),
  );
  const client = new WebSocket(`ws://127.0.0.1:${server.address().port}`, {
    perMessageDeflate: options,
  });
  await once(client, 'open');
  return { server, client };
}

/** Closes the client, then the server. */
async function closePair({ server, client }) {
  if (client.readyState !== WebSocket.CLOSED) {
    const closed = once(client, 'close');
    client.close();
    await closed;
  }
  await new Promise((resolve) => server.close(resolve));
}

/** Sends `parts` as one message (fragments when more than one); resolves with the echo. */
function echo(client, parts, binary = true) {
  const back = once(client, 'message');
  parts.forEach((part, i) => client.send(part, { binary, fin: i === parts.length - 1 }));
  return back;
}

for (const installed of [true, false]) {
  const where = installed ? 'behind install()' : 'on node:zlib (control)';

  test(`ws permessage-deflate: small, 5 MiB and fragmented messages echoed, ${where}`, () =>
    routed(installed, async () => {
      // threshold 0: even the small messages are compressed.
      const ends = await pair({ threshold: 0 });
      try {
        assert.equal(ends.client.extensions, 'permessage-deflate');
        const large = Buffer.concat([crypto.randomBytes(1 << 20), body(4 << 20)]);
        const fragments = [body(10_000), crypto.randomBytes(3000), body(70_000)];
        const cases = [
          ['small', [Buffer.from('tidepool')]],
          ['large', [large]],
          ['fragmented', fragments],
          ['small again', [Buffer.from('tidepool, again')]],
        ];
        for (const [what, parts] of cases) {
          const ran = await poolWork();
          const [data, isBinary] = await echo(ends.client, parts);
          assert.equal(isBinary, true);
          assert.ok(data.equals(Buffer.concat(parts)), `${what}: the echo differs`);
          assertPool(installed, ran, what);
        }
        const ran = await poolWork();
        const text = `text ${'é'.repeat(5000)} ✓`;
        const [data, isBinary] = await echo(ends.client, [text], false);
        assert.equal(isBinary, false);
        assert.equal(data.toString('utf8'), text);
        assertPool(installed, ran, 'text');
      } finally {
        await closePair(ends);
      }
    }));

  test(`ws permessage-deflate: a message over maxPayload closes with 1009, ${where}`, () =>
    routed(installed, async () => {
      const server = new WebSocketServer({
        port: 0,
        host: '127.0.0.1',
        perMessageDeflate: { threshold: 0 },
        maxPayload: 64 << 10,
      });
      await once(server, 'listening');
      const serverErrors = [];
      server.on('connection', (socket) => socket.on('error', (err) => serverErrors.push(err)));
      const client = new WebSocket(`ws://127.0.0.1:${server.address().port}`, {
        perMessageDeflate: { threshold: 0 },
      });
      try {
        await once(client, 'open');
        const ran = await poolWork();
        // 1 MiB of one byte: a few KiB on the wire, far over 64 KiB inflated.
        client.send(Buffer.alloc(1 << 20, 'a'));
        const [code] = await once(client, 'close');
        assert.equal(code, 1009);
        assert.deepEqual(
          serverErrors.map((err) => err.code),
          ['WS_ERR_UNSUPPORTED_MESSAGE_LENGTH'],
        );
        assertPool(installed, ran, 'the message over maxPayload');
      } finally {
        await closePair({ server, client });
      }
    }));

  // ws calls reset() on its DeflateRaw and InflateRaw after each message
  // (permessage-deflate.js, in the flush() callbacks of _compress() and
  // _decompress()) when *_no_context_takeover is agreed.
  test(`ws permessage-deflate with server/clientNoContextTakeover (reset() per message), ${where}`, () =>
    routed(installed, async () => {
      const ends = await pair({
        threshold: 0,
        serverNoContextTakeover: true,
        clientNoContextTakeover: true,
      });
      try {
        const agreed = ends.client._extensions['permessage-deflate'].params;
        assert.equal(agreed.server_no_context_takeover, true);
        assert.equal(agreed.client_no_context_takeover, true);
        const messages = [body(20_000), crypto.randomBytes(5000), body(20_000), body(300)];
        for (const [i, message] of messages.entries()) {
          const ran = await poolWork();
          const [data] = await echo(ends.client, [message]);
          assert.ok(data.equals(message), `message ${i}: the echo differs`);
          assertPool(installed, ran, `message ${i}`);
        }
      } finally {
        await closePair(ends);
      }
    }));
}

// A message whose last fragment is empty (`send(chunk, { fin: false })`
// then `send('', { fin: true })`, as a writer that ends a streamed message
// does; with ws's default options, as the first fragment is over its 1 KiB
// threshold). ws compresses each fragment with write() + flush(Z_SYNC_FLUSH) and,
// on the last, cuts the 4 bytes 00 00 ff ff that node:zlib's sync flush
// always ends with (permessage-deflate.js, _compress()). In a child: when
// the flush gives fewer than 4 bytes, ws's `new FastBuffer(..., length - 4)`
// throws a RangeError from the flush callback, uncaught.
const EMPTY_LAST_FRAGMENT = (installed) => `
  const crypto = require('node:crypto');
  const tz = require('@tidepool-rs/pool/zlib');
  if (${installed}) tz.install();
  const { WebSocketServer, WebSocket } = require('ws');
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: true });
  server.on('connection', (s) => s.on('message', (d, b) => s.send(d, { binary: b })));
  server.on('listening', () => {
    const client = new WebSocket('ws://127.0.0.1:' + server.address().port, { perMessageDeflate: true });
    const before = tz.pool.stats().completed;
    const parts = [Buffer.from('first fragment '.repeat(100)), crypto.randomBytes(1000), Buffer.alloc(0)];
    client.on('open', () => parts.forEach((p, i) => client.send(p, { fin: i === parts.length - 1 })));
    client.on('message', (data) => {
      const equal = data.equals(Buffer.concat(parts));
      console.log(JSON.stringify({ equal, ran: tz.pool.stats().completed - before }));
      client.close();
      server.close();
    });
  });`;

for (const installed of [true, false]) {
  const where = installed ? 'behind install()' : 'on node:zlib (control)';
  test(`ws permessage-deflate: a message whose last fragment is empty, ${where}`, async () => {
    const result = childResult(await runChild(EMPTY_LAST_FRAGMENT(installed)));
    assert.equal(result.equal, true);
    if (installed) assert.ok(result.ran > 0, `the pool should have run tasks (+${result.ran})`);
    else assert.equal(result.ran, 0);
  });
}
