'use strict';
// An HTTP service that hashes and compresses request bodies on a tidepool,
// and shows Prometheus what the pool is doing at /metrics. It is the unit
// deploy/kubernetes/ scales: one pod, one pool, as many threads as the
// container has cores; replicas are added when the pool's queue age says
// that its threads are no longer enough (docs/scaling-out.md).
//
//   PORT=8080 node server.js
//   curl --data-binary @file http://localhost:8080/sha256
//   curl --data-binary @file http://localhost:8080/gzip > file.gz
//   curl http://localhost:8080/metrics
//
// Environment:
//   PORT                  port to listen on (default 8080; 0 picks a free one)
//   HOST                  address to listen on (default: every address)
//   TIDEPOOL_MAX_THREADS  the pool's maxThreads (default: the cores the
//                         container may use, as its cgroup CPU quota says)
//   MAX_QUEUE             tasks that may wait before a request gets 503 (default 1024)
//   SHUTDOWN_DELAY_MS     after SIGTERM, how long /readyz reports 503 before the
//                         server stops accepting, so the load balancer has
//                         stopped sending requests first (default 5000)

const http = require('node:http');
const client = require('prom-client');
const { Pool, defaults } = require('tidepool');
const { collectMetrics } = require('tidepool/metrics');

/** Largest request body: a longer one gets 413 without being read. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Routes that run a kernel on the request body. */
const KERNELS = { __proto__: null, '/sha256': 'sha256', '/gzip': 'gzip' };

/** Pool errors that mean "overloaded, try again", not "bad request". */
const OVERLOADED = new Set(['ERR_TIDEPOOL_QUEUE_FULL', 'ERR_TIDEPOOL_DROPPED', 'ERR_TIDEPOOL_TIMEOUT']);

/** Each path, with the methods it answers. */
const ROUTES = {
  __proto__: null,
  '/sha256': ['POST'],
  '/gzip': ['POST'],
  '/metrics': ['GET', 'HEAD'],
  '/healthz': ['GET', 'HEAD'],
  '/readyz': ['GET', 'HEAD'],
  '/stats': ['GET', 'HEAD'],
};

class HttpError extends Error {
  constructor(status, message, headers = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

/** The request body as one Buffer, refused past MAX_BODY_BYTES. */
async function readBody(req) {
  const declared = Number(req.headers['content-length']);
  if (declared > MAX_BODY_BYTES) throw new HttpError(413, `body over ${MAX_BODY_BYTES} bytes`);
  const chunks = [];
  let length = 0;
  for await (const chunk of req) {
    length += chunk.length;
    if (length > MAX_BODY_BYTES) throw new HttpError(413, `body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, length);
}

function send(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/**
 * A service: `server` (not yet listening), its `pool` and `registry`, and
 * `shutdown()`, which fails readiness, waits `shutdownDelayMs`, stops
 * accepting, lets the requests in flight finish and closes the pool.
 */
function createService({ maxThreads = defaults.maxThreads, maxQueue = 1024, shutdownDelayMs = 5000 } = {}) {
  const pool = new Pool({ maxThreads, maxQueue });
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  collectMetrics(pool, { registry });
  let ready = true;

  async function runKernel(req, res, kernel) {
    const body = await readBody(req);
    // A client that goes away takes its task out of the queue.
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const { result } = await pool.post(body, { kernel, signal: gone.signal });
    if (kernel === 'sha256') send(res, 200, `${result.toString('hex')}\n`, { 'content-type': 'text/plain' });
    else send(res, 200, result, { 'content-type': 'application/gzip' });
  }

  async function handle(req, res) {
    const { pathname } = new URL(req.url, 'http://service');
    const methods = ROUTES[pathname];
    if (methods === undefined) throw new HttpError(404, 'not found');
    if (!methods.includes(req.method)) throw new HttpError(405, `use ${methods.join(' or ')}`, { allow: methods.join(', ') });
    if (KERNELS[pathname] !== undefined) return runKernel(req, res, KERNELS[pathname]);
    switch (pathname) {
      case '/metrics':
        return send(res, 200, await registry.metrics(), { 'content-type': registry.contentType });
      case '/healthz':
        return send(res, 200, 'ok\n');
      case '/readyz':
        return ready ? send(res, 200, 'ok\n') : send(res, 503, 'shutting down\n');
      case '/stats':
        return send(res, 200, JSON.stringify(pool.stats()), { 'content-type': 'application/json' });
    }
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (res.headersSent || res.destroyed) return res.destroy();
      // An unread body is not drained: the connection closes instead.
      if (err instanceof HttpError) return send(res, err.status, `${err.message}\n`, { connection: 'close', ...err.headers });
      if (OVERLOADED.has(err.code)) return send(res, 503, `${err.code}\n`, { 'retry-after': '1' });
      if (err.name === 'AbortError') return res.destroy();
      console.error(err);
      send(res, 500, 'internal error\n');
    });
  });

  let closing;
  function shutdown() {
    closing ??= (async () => {
      ready = false;
      await new Promise((resolve) => setTimeout(resolve, shutdownDelayMs));
      // close() stops accepting and closes idle keep-alive connections; it
      // calls back once the requests in flight have been answered.
      await new Promise((resolve) => server.close(resolve));
      await pool.close();
    })();
    return closing;
  }

  return { server, pool, registry, maxThreads, shutdown };
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

if (require.main === module) {
  const service = createService({
    maxThreads: envInteger('TIDEPOOL_MAX_THREADS', undefined, 1),
    maxQueue: envInteger('MAX_QUEUE', 1024, 1),
    shutdownDelayMs: envInteger('SHUTDOWN_DELAY_MS', 5000, 0),
  });
  const port = envInteger('PORT', 8080, 0);
  service.server.listen(port, process.env.HOST || undefined, () => {
    const { port: bound } = service.server.address();
    console.log(JSON.stringify({ msg: 'listening', port: bound, maxThreads: service.maxThreads }));
  });
  for (const signal of ['SIGTERM', 'SIGINT']) {
    process.once(signal, () => {
      console.log(JSON.stringify({ msg: 'shutting down', signal }));
      service.shutdown().then(
        () => process.exit(0),
        (err) => {
          console.error(err);
          process.exit(1);
        },
      );
    });
  }
}

module.exports = { createService };
