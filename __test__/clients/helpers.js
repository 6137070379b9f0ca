'use strict';
// Shared by the client tests (__test__/clients/*.test.js): real HTTP and
// WebSocket clients and servers on loopback, with node:zlib routed to a
// tidepool by install() (or not, for the control), and the pool's stats
// to tell whether it did the work. Bodies are checked with node:zlib's
// own *Sync decoders and classes, which install() leaves alone: the pool's
// output is read by an independent decoder.

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const http = require('node:http');
const path = require('node:path');
const { once } = require('node:events');
const { spawn } = require('node:child_process');
const tzlib = require('@tidepool-rs/pool/zlib');
const { waitFor, poolState } = require('../wait');

/** The repository's root (the package itself). */
const ROOT = path.join(__dirname, '..', '..');

/**
 * `n` bytes that compress somewhat (text, with random runs between): a
 * codec that drops, repeats or reorders bytes cannot hide it.
 */
function body(n) {
  const out = Buffer.alloc(n);
  const words = ['tide', 'pool', 'stream', 'chunk', 'thread', 'gzip', 'brotli', 'deflate', '\n'];
  let x = 11;
  for (let at = 0; at < n;) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    if (x % 97 === 0) at += crypto.randomBytes(Math.min(64 + (x % 512), n - at)).copy(out, at);
    else at += out.write(`${words[x % words.length]} `, at);
  }
  return out;
}

/**
 * Runs `fn` with node:zlib routed to the pool (`installed`) or as it is,
 * and always uninstalls after (a failure does not leak into other tests).
 */
async function routed(installed, fn) {
  if (installed) tzlib.install();
  try {
    return await fn();
  } finally {
    if (installed) tzlib.uninstall();
  }
}

/**
 * Tasks the zlib pool completes from now on, as a function. Waits first
 * for the pool to be quiet: a stream's last task can complete just after
 * its reader has all the bytes (undici's deflate decoder does), and that
 * is the previous test's work, not the next one's.
 */
async function poolWork() {
  const pool = tzlib.pool;
  await waitFor(
    () => {
      const s = pool.stats();
      return s.pending === 0 && s.queued === 0 && s.busyThreads === 0;
    },
    { what: 'the zlib pool to be quiet', state: poolState(pool) },
  );
  const before = pool.stats().completed;
  return () => pool.stats().completed - before;
}

/**
 * Asserts the pool's part: it ran tasks when installed, none otherwise
 * (node:zlib did the work). `ran` is poolWork()'s function.
 */
function assertPool(installed, ran, what) {
  const n = ran();
  if (installed) assert.ok(n > 0, `${what}: the pool should have run tasks (completed +${n})`);
  else assert.equal(n, 0, `${what}: node:zlib's own work should not reach the pool`);
}

/** Listens on loopback, port 0; resolves with the port. */
async function listen(server) {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server.address().port;
}

/** Closes `server` and every connection it still has. */
async function close(server) {
  if (!server.listening) return;
  const closed = once(server, 'close');
  server.close();
  server.closeAllConnections?.();
  await closed;
}

/** GET on loopback without keep-alive: resolves with the response (not yet read). */
function get(port, urlPath, headers = {}) {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: urlPath, headers, agent: false }, resolve)
      .on('error', reject);
  });
}

/** All of a readable's bytes. */
async function readAll(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * Runs `script` (CommonJS) in a child Node from the repository's root, for
 * what may crash a process (an exception thrown from a stream's callback).
 * Resolves with its exit code, signal, stdout and stderr; the child is
 * killed after `timeoutMs` (a deadline, not a measure).
 */
async function runChild(script, { args = [], timeoutMs = 30_000 } = {}) {
  const child = spawn(process.execPath, [...args, '-e', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: timeoutMs,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s) => (stderr += s));
  const [code, signal] = await once(child, 'close');
  return { code, signal, stdout, stderr };
}

/**
 * The last line of a child's stdout as JSON, or an assertion error that
 * shows what the child said (its stderr has the crash, if it crashed).
 */
function childResult(run) {
  const lines = run.stdout.trim().split('\n');
  assert.equal(
    run.code,
    0,
    `the child exited with ${run.code ?? run.signal}:\n${run.stderr || run.stdout}`,
  );
  return JSON.parse(lines[lines.length - 1]);
}

/**
 * Requires the module `id` afresh (dropped from the require cache first):
 * for the clients whose module takes node:zlib's functions when it loads
 * (`const { createGunzip } = require('zlib')` at its top), which see
 * install() only if loaded after it, as install()'s docs say.
 */
function freshRequire(id) {
  delete require.cache[require.resolve(id)];
  return require(id);
}

/** Collects uncaught exceptions and unhandled rejections while `fn` runs (without handling them). */
async function noStrayErrors(fn) {
  const errors = [];
  const onException = (err) => errors.push(err);
  const onRejection = (reason) => errors.push(reason);
  process.on('uncaughtExceptionMonitor', onException);
  process.on('unhandledRejection', onRejection);
  try {
    await fn();
  } finally {
    process.off('uncaughtExceptionMonitor', onException);
    process.off('unhandledRejection', onRejection);
  }
  assert.deepEqual(errors, [], 'no uncaught exception or unhandled rejection');
}

module.exports = {
  ROOT,
  body,
  routed,
  poolWork,
  assertPool,
  listen,
  close,
  get,
  readAll,
  runChild,
  childResult,
  freshRequire,
  noStrayErrors,
  tzlib,
};
