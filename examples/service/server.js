'use strict';
// An HTTP service that hashes and compresses request bodies on a tidepool,
// and shows Prometheus what the pool is doing. It is the unit
// deploy/kubernetes/ scales: one pod, one pool, as many threads as the
// container has cores; replicas are added when the pool's queue age says
// that its threads are no longer enough (docs/scaling-out.md).
//
//   PORT=8080 node server.js
//   curl --data-binary @file http://localhost:8080/sha256
//   curl --data-binary @file http://localhost:8080/gzip > file.gz
//   curl http://localhost:9090/metrics
//
// Two listeners: the API (PORT: /sha256, /gzip, /healthz, /readyz), which
// the Kubernetes Service exposes, and METRICS_PORT (/metrics, /stats),
// which only Prometheus reaches.
//
// Environment:
//   PORT                  the API's port (default 8080; 0 picks a free one)
//   METRICS_PORT          /metrics and /stats (default 9090; 0 picks a free one)
//   HOST                  address to listen on (default: every address)
//   TIDEPOOL_MAX_THREADS  the pool's maxThreads (default: the cores the
//                         container may use, as its cgroup CPU quota says)
//   MAX_QUEUE             tasks that may wait before a request gets 503 (default 1024)
//   BODY_BUDGET_MIB       request bodies (and gzip's output) held at once, in
//                         MiB; past it a request gets 503 (default 256)
//   SHUTDOWN_DELAY_MS     after SIGTERM, how long the server goes on accepting
//                         (while /readyz reports 503 and every response closes
//                         its connection) so the load balancer has stopped
//                         sending requests first (default 5000)
//   DRAIN_TIMEOUT_MS      then, how long requests in flight may take before
//                         their connections are closed (default 20000)

const http = require('node:http');
const client = require('prom-client');
const { Pool, defaults } = require('@tidepool-rs/pool');
const { collectMetrics } = require('@tidepool-rs/pool/metrics');

/** Largest request body: a longer one gets 413 without being read. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** The API's paths, with the methods each answers. */
const API = {
  __proto__: null,
  '/sha256': ['POST'],
  '/gzip': ['POST'],
  '/healthz': ['GET', 'HEAD'],
  '/readyz': ['GET', 'HEAD'],
};
/** The metrics listener's paths. */
const INTERNAL = { __proto__: null, '/metrics': ['GET', 'HEAD'], '/stats': ['GET', 'HEAD'] };

/** Routes that run a kernel on the request body, and how many bytes of memory per body byte they hold. */
const KERNELS = { __proto__: null, '/sha256': ['sha256', 1], '/gzip': ['gzip', 2] };

/** Pool errors that mean "overloaded, try again", not "bad request". */
const OVERLOADED = new Set([
  'ERR_TIDEPOOL_QUEUE_FULL',
  'ERR_TIDEPOOL_DROPPED',
  'ERR_TIDEPOOL_TIMEOUT',
]);

class HttpError extends Error {
  constructor(status, message, headers = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

const busy = () => new HttpError(503, 'busy, try again', { 'retry-after': '1' });
// Too large a body is not read: the connection closes after the answer.
const tooLarge = () =>
  new HttpError(413, `body over ${MAX_BODY_BYTES} bytes`, { connection: 'close' });

/** The path of a request target, without parsing it as a URL (which can throw). */
function pathOf(target) {
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}

/**
 * A service: its two servers (not yet listening), its `pool` and
 * `registry`, and `shutdown()`: readiness off, `shutdownDelayMs` more of
 * service, then no new connections, `drainTimeoutMs` for the requests in
 * flight, and the pool closed.
 */
function createService({
  maxThreads = defaults.maxThreads,
  maxQueue = 1024,
  bodyBudgetBytes = 256 * 1024 * 1024,
  shutdownDelayMs = 5000,
  drainTimeoutMs = 20_000,
} = {}) {
  if (bodyBudgetBytes < 2 * MAX_BODY_BYTES)
    throw new RangeError(
      `the body budget must be at least ${2 * MAX_BODY_BYTES} bytes: a gzip body of ${MAX_BODY_BYTES} bytes counts twice`,
    );
  const pool = new Pool({ maxThreads, maxQueue });
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  collectMetrics(pool, { registry });
  let draining = false;

  // Bytes of request bodies held now, by every request: each chunk as it
  // arrives (twice for gzip, whose output can be as large), given back when
  // the response is done or the connection gone. A client that declares 16
  // MiB and sends one byte holds one byte's worth. (Approximate: the chunks
  // are copied once more when a body is assembled.)
  let held = 0;
  new client.Gauge({
    name: 'service_request_bodies_held_bytes',
    help: 'Bytes of request bodies (and gzip output) held now, counted against service_request_bodies_budget_bytes',
    registers: [registry],
    collect() {
      this.set(held);
    },
  });
  new client.Gauge({
    name: 'service_request_bodies_budget_bytes',
    help: 'Bytes of request bodies the service holds at most (BODY_BUDGET_MIB); past it a request gets 503',
    registers: [registry],
  }).set(bodyBudgetBytes);

  /**
   * The request body as one Buffer, refused past MAX_BODY_BYTES or the
   * budget. `expectContinue`: the client waits for a 100 before it sends
   * the body, which is written once the checks pass.
   */
  async function readBody(req, res, factor, expectContinue) {
    let reserved = 0;
    whenDone(req, res, () => {
      held -= reserved;
      reserved = 0;
    });
    const declared =
      req.headers['content-length'] === undefined
        ? undefined
        : Number(req.headers['content-length']);
    if (declared > MAX_BODY_BYTES) throw tooLarge();
    // Refused at once when it cannot fit now, rather than halfway.
    if (declared !== undefined && held + declared * factor > bodyBudgetBytes) throw busy();
    // HTTP/1.0 clients get no 100 (RFC 9110); they send their body anyway.
    if (expectContinue && req.httpVersion !== '1.0') res.writeContinue();
    // Events, not `for await`: leaving that loop early destroys the request
    // and its connection, and the refusal would never reach the client.
    // Refused, the rest of the body streams by unread (Node drops it).
    return new Promise((resolve, reject) => {
      const chunks = [];
      let length = 0;
      let settled = false;
      const refuse = (err) => {
        if (settled) return;
        settled = true;
        chunks.length = 0;
        reject(err);
      };
      req.on('data', (chunk) => {
        if (settled) return;
        if (length + chunk.length > MAX_BODY_BYTES) return refuse(tooLarge());
        if (held + chunk.length * factor > bodyBudgetBytes) return refuse(busy());
        held += chunk.length * factor;
        reserved += chunk.length * factor;
        chunks.push(chunk);
        length += chunk.length;
      });
      req.once('end', () => {
        if (settled) return;
        settled = true;
        resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length));
      });
      req.once('error', refuse);
      req.once('close', () => refuse(new Error('the client went away before its body was whole')));
    });
  }

  function send(res, status, body, headers = {}) {
    // While draining, every response ends its connection, so that clients
    // with keep-alive connections go to another pod.
    const close = draining ? { connection: 'close' } : {};
    res.writeHead(status, { 'content-length': Buffer.byteLength(body), ...headers, ...close });
    res.end(body);
  }

  async function runKernel(req, res, [kernel, factor], expectContinue) {
    const body = await readBody(req, res, factor, expectContinue);
    // A client that goes away takes its task out of the queue.
    const gone = new AbortController();
    whenDone(req, res, () => gone.abort());
    const { result } = await pool.post(body, { kernel, signal: gone.signal });
    if (kernel === 'sha256')
      send(res, 200, `${result.toString('hex')}\n`, { 'content-type': 'text/plain' });
    else send(res, 200, result, { 'content-type': 'application/gzip' });
  }

  async function api(req, res, expectContinue = false) {
    const path = pathOf(req.url);
    route(req, path, API);
    if (KERNELS[path] !== undefined) return runKernel(req, res, KERNELS[path], expectContinue);
    if (path === '/healthz') return send(res, 200, 'ok\n');
    return draining ? send(res, 503, 'shutting down\n') : send(res, 200, 'ok\n');
  }

  async function internal(req, res) {
    const path = pathOf(req.url);
    route(req, path, INTERNAL);
    if (path === '/metrics')
      return send(res, 200, await registry.metrics(), { 'content-type': registry.contentType });
    return send(res, 200, JSON.stringify(pool.stats()), { 'content-type': 'application/json' });
  }

  function serve(handler, expectContinue = false) {
    return (req, res) =>
      handler(req, res, expectContinue).catch((err) => {
        // A client gone (its request aborted) gets nothing more.
        if (res.headersSent || res.destroyed || req.destroyed) return res.destroy();
        // The rest of a refused body is read and dropped by Node, so the
        // answer arrives whole (a connection closed with unread bytes is
        // reset, and the client may lose it). 413 closes at once, and so
        // does a refusal before a 100 Continue: that client will not send
        // the body the connection would wait for.
        const close = expectContinue ? { connection: 'close' } : {};
        if (err instanceof HttpError)
          return send(res, err.status, `${err.message}\n`, { ...err.headers, ...close });
        if (OVERLOADED.has(err.code))
          return send(res, 503, `${err.code}\n`, { 'retry-after': '1' });
        if (err.name === 'AbortError') return res.destroy();
        console.error(err);
        send(res, 500, 'internal error\n');
      });
  }

  // A request has 30 s to arrive whole (its headers 10 s), checked every 2 s.
  const limits = {
    requestTimeout: 30_000,
    headersTimeout: 10_000,
    connectionsCheckingInterval: 2_000,
  };
  const server = http.createServer(limits, serve(api));
  // Expect: 100-continue goes through the same checks before the body is
  // asked for (readBody writes the 100 once they pass).
  server.on('checkContinue', serve(api, true));
  const metricsServer = http.createServer(limits, serve(internal));

  let closing;
  function shutdown() {
    closing ??= (async () => {
      draining = true;
      await new Promise((resolve) => setTimeout(resolve, shutdownDelayMs));
      // Stop accepting; idle keep-alive connections close now, busy ones
      // after their response (which says `connection: close`).
      const closed = new Promise((resolve) => server.close(resolve));
      const deadline = setTimeout(() => {
        console.log(JSON.stringify({ msg: 'drain timeout: closing the connections left' }));
        server.closeAllConnections();
      }, drainTimeoutMs);
      await closed;
      clearTimeout(deadline);
      await pool.close();
      metricsServer.closeAllConnections();
      await new Promise((resolve) => metricsServer.close(resolve));
    })();
    return closing;
  }

  return { server, metricsServer, pool, registry, maxThreads, shutdown };
}

/** Per connection: what to call when it closes (one listener, however many requests it carries). */
const onConnectionClose = new WeakMap();

/**
 * Calls `fn` once, when the response is done or its connection is gone,
 * whichever comes first: a response queued behind another on a pipelined
 * connection never emits 'close' if the connection dies first.
 */
function whenDone(req, res, fn) {
  let callbacks = onConnectionClose.get(req.socket);
  if (callbacks === undefined) {
    callbacks = new Set();
    onConnectionClose.set(req.socket, callbacks);
    req.socket.once('close', () => {
      for (const callback of callbacks) callback();
    });
  }
  const once = () => {
    if (!callbacks.delete(once)) return;
    fn();
  };
  callbacks.add(once);
  res.once('close', once);
}

/** Checks the method against the listener's routes. */
function route(req, path, routes) {
  const methods = routes[path];
  if (methods === undefined) throw new HttpError(404, 'not found');
  if (!methods.includes(req.method))
    throw new HttpError(405, `use ${methods.join(' or ')}`, { allow: methods.join(', ') });
}

/** A whole number from the environment, or `fallback` when unset. */
function envInteger(name, fallback, min) {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min) {
    console.error(`${name} must be a whole number ≥ ${min}, not ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return value;
}

function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, process.env.HOST || undefined, () => {
      server.off('error', reject);
      resolve(server.address().port);
    });
  });
}

async function main() {
  const service = createService({
    maxThreads: envInteger('TIDEPOOL_MAX_THREADS', undefined, 1),
    maxQueue: envInteger('MAX_QUEUE', 1024, 1),
    bodyBudgetBytes: envInteger('BODY_BUDGET_MIB', 256, 32) * 1024 * 1024,
    shutdownDelayMs: envInteger('SHUTDOWN_DELAY_MS', 5000, 0),
    drainTimeoutMs: envInteger('DRAIN_TIMEOUT_MS', 20_000, 0),
  });
  const port = await listen(service.server, envInteger('PORT', 8080, 0));
  const metricsPort = await listen(service.metricsServer, envInteger('METRICS_PORT', 9090, 0));
  console.log(
    JSON.stringify({ msg: 'listening', port, metricsPort, maxThreads: service.maxThreads }),
  );
  let stopping = false;
  const stop = (signal) => {
    // A second SIGTERM changes nothing: the drain has its own deadline. A
    // second Ctrl-C (SIGINT) quits at once, as a developer expects.
    console.log(
      JSON.stringify({ msg: stopping ? 'already shutting down' : 'shutting down', signal }),
    );
    if (stopping && signal === 'SIGINT') process.exit(130);
    if (stopping) return;
    stopping = true;
    service.shutdown().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, stop);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

module.exports = { createService };
