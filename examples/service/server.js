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
const { Pool, defaults } = require('tidepool');
const { collectMetrics } = require('tidepool/metrics');

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
const OVERLOADED = new Set(['ERR_TIDEPOOL_QUEUE_FULL', 'ERR_TIDEPOOL_DROPPED', 'ERR_TIDEPOOL_TIMEOUT']);

class HttpError extends Error {
  constructor(status, message, headers = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

const busy = () => new HttpError(503, 'busy, try again', { 'retry-after': '1' });

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
    throw new RangeError(`the body budget must hold at least two bodies of ${MAX_BODY_BYTES} bytes`);
  const pool = new Pool({ maxThreads, maxQueue });
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  collectMetrics(pool, { registry });
  let draining = false;

  // Bytes of bodies held now, by every request. A request reserves its
  // body (twice for gzip, whose output can be as large) before reading it,
  // or chunk by chunk when it has no Content-Length, and gives it back when
  // its response is done.
  let held = 0;

  /** The request body as one Buffer, refused past MAX_BODY_BYTES or the budget. */
  async function readBody(req, res, factor) {
    let reserved = 0;
    const reserve = (bytes) => {
      if (held + bytes > bodyBudgetBytes) return false;
      held += bytes;
      reserved += bytes;
      return true;
    };
    res.once('close', () => {
      held -= reserved;
      reserved = 0;
    });
    const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
    if (declared > MAX_BODY_BYTES) throw new HttpError(413, `body over ${MAX_BODY_BYTES} bytes`);
    if (declared !== undefined && !reserve(declared * factor)) throw busy();
    // Only now may a client that asked (Expect: 100-continue) send its body.
    if (req.headers.expect?.toLowerCase() === '100-continue') res.writeContinue();
    const body = declared === undefined ? undefined : Buffer.allocUnsafe(declared);
    const chunks = [];
    let length = 0;
    for await (const chunk of req) {
      if (length + chunk.length > MAX_BODY_BYTES) throw new HttpError(413, `body over ${MAX_BODY_BYTES} bytes`);
      if (body === undefined) {
        if (!reserve(chunk.length * factor)) throw busy();
        chunks.push(chunk);
      } else {
        chunk.copy(body, length);
      }
      length += chunk.length;
    }
    return body ?? Buffer.concat(chunks, length);
  }

  function send(res, status, body, headers = {}) {
    // While draining, every response ends its connection, so that clients
    // with keep-alive connections go to another pod.
    const close = draining ? { connection: 'close' } : {};
    res.writeHead(status, { 'content-length': Buffer.byteLength(body), ...headers, ...close });
    res.end(body);
  }

  async function runKernel(req, res, [kernel, factor]) {
    const body = await readBody(req, res, factor);
    // A client that goes away takes its task out of the queue.
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const { result } = await pool.post(body, { kernel, signal: gone.signal });
    if (kernel === 'sha256') send(res, 200, `${result.toString('hex')}\n`, { 'content-type': 'text/plain' });
    else send(res, 200, result, { 'content-type': 'application/gzip' });
  }

  async function api(req, res) {
    const path = pathOf(req.url);
    route(req, path, API);
    if (KERNELS[path] !== undefined) return runKernel(req, res, KERNELS[path]);
    if (path === '/healthz') return send(res, 200, 'ok\n');
    return draining ? send(res, 503, 'shutting down\n') : send(res, 200, 'ok\n');
  }

  async function internal(req, res) {
    const path = pathOf(req.url);
    route(req, path, INTERNAL);
    if (path === '/metrics') return send(res, 200, await registry.metrics(), { 'content-type': registry.contentType });
    return send(res, 200, JSON.stringify(pool.stats()), { 'content-type': 'application/json' });
  }

  function serve(handler) {
    return (req, res) =>
      handler(req, res).catch((err) => {
        if (res.headersSent || res.destroyed) return res.destroy();
        // An unread body is not drained: the connection closes instead.
        if (err instanceof HttpError) return send(res, err.status, `${err.message}\n`, { connection: 'close', ...err.headers });
        if (OVERLOADED.has(err.code)) return send(res, 503, `${err.code}\n`, { 'retry-after': '1' });
        if (err.name === 'AbortError') return res.destroy();
        console.error(err);
        send(res, 500, 'internal error\n');
      });
  }

  const server = http.createServer({ requestTimeout: 60_000, headersTimeout: 10_000 }, serve(api));
  // Expect: 100-continue goes through the same checks before the body is
  // asked for (readBody writes the 100 once they pass).
  server.on('checkContinue', serve(api));
  const metricsServer = http.createServer({ requestTimeout: 10_000, headersTimeout: 10_000 }, serve(internal));

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

/** Checks the method against the listener's routes. */
function route(req, path, routes) {
  const methods = routes[path];
  if (methods === undefined) throw new HttpError(404, 'not found');
  if (!methods.includes(req.method)) throw new HttpError(405, `use ${methods.join(' or ')}`, { allow: methods.join(', ') });
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
    server.listen(port, process.env.HOST || undefined, () => resolve(server.address().port));
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
  console.log(JSON.stringify({ msg: 'listening', port, metricsPort, maxThreads: service.maxThreads }));
  let stopping = false;
  const stop = (signal) => {
    // A second signal changes nothing: the drain has its own deadline.
    console.log(JSON.stringify({ msg: stopping ? 'already shutting down' : 'shutting down', signal }));
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
