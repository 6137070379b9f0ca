'use strict';
// The login section of `npm run bench`: a plain `http` server whose
// POST /login checks a password against a stored hash, loaded by 32
// clients back to back from a process of their own
// (bench/workers/login-load.js) while the server reads a small file in a
// loop (fs.promises.readFile, on libuv's pool) and times it; the same
// reads are timed first for a second with the server idle. Each way of
// hashing is a case, the server's code otherwise the same:
// - Argon2id at OWASP's settings (19 MiB, two passes, one lane), the
//   string made by @node-rs/argon2: its verify() (libuv's threads),
//   node:crypto's argon2() where this Node has it (libuv's), and
//   @tidepool-rs/pool/password's verify() (the pool);
// - scrypt at node:crypto's defaults (N 16384, r 8, p 1, a 64-byte key):
//   node:crypto's scrypt() as it is, and behind
//   @tidepool-rs/pool/crypto's install().

const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const crypto = require('node:crypto');
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const { quantile } = require('./stats');

const ROOT = path.join(__dirname, '..');
const CONNECTIONS = 32;
const WARMUP_MS = 1000;
const DURATION_MS = 4000;
const IDLE_MS = 1000;
const SALT = Buffer.from('per-user salt 16');
/** maxWorkingBytes of the bounded case: one Argon2 hash at OWASP's 19 MiB. */
const BOUND = 19 * 1024 * 1024;

/** How each case checks a password: `check(password)` resolves with true or false. */
async function checker(how) {
  if (how === 'scrypt' || how === 'scrypt-installed') {
    let tidepool;
    if (how === 'scrypt-installed') {
      tidepool = require(path.join(ROOT, 'lib', 'crypto'));
      tidepool.install();
    }
    // As a login library has it: node:crypto's, taken after install().
    const scrypt = promisify(require('node:crypto').scrypt);
    const stored = crypto.scryptSync('correct horse', SALT, 64);
    return {
      check: async (pw) => crypto.timingSafeEqual(await scrypt(pw, SALT, 64), stored),
      pool: tidepool?.pool,
    };
  }
  const nodeRs = require('@node-rs/argon2');
  const stored = await nodeRs.hash('correct horse', {
    memoryCost: 19456,
    timeCost: 2,
    parallelism: 1,
  });
  if (how === 'argon2-node-rs') return { check: (pw) => nodeRs.verify(stored, pw) };
  if (how === 'argon2-node') {
    const [, , , costs, salt, hash] = stored.split('$');
    const expected = Buffer.from(hash, 'base64');
    const nonce = Buffer.from(salt, 'base64');
    const m = Object.fromEntries(costs.split(',').map((kv) => kv.split('=')));
    const argon2 = promisify(crypto.argon2);
    return {
      check: async (pw) => {
        const tag = await argon2('argon2id', {
          message: pw,
          nonce,
          memory: Number(m.m),
          passes: Number(m.t),
          parallelism: Number(m.p),
          tagLength: expected.length,
        });
        return crypto.timingSafeEqual(tag, expected);
      },
    };
  }
  const password = require(path.join(ROOT, 'lib', 'password'));
  if (how === 'argon2-pool-bounded') {
    // Room for one hash's 19 MiB at a time.
    const { Pool } = require(ROOT);
    const pool = new Pool({ maxWorkingBytes: BOUND });
    return { check: (pw) => password.verify(stored, pw, { pool }), pool };
  }
  return {
    check: (pw) => password.verify(stored, pw),
    pool: require(path.join(ROOT, 'lib', 'crypto')).pool,
  };
}

/**
 * Times fs.promises.readFile of a small file every 5 ms until `until()` is
 * false: the times (ms) of the reads begun at `from` (ms, Date.now()) or later.
 */
async function readLoop(until, from = 0) {
  const file = path.join(ROOT, 'package.json');
  const times = [];
  while (until()) {
    const begun = Date.now();
    const t = process.hrtime.bigint();
    await fs.promises.readFile(file);
    if (begun >= from) times.push(Number(process.hrtime.bigint() - t) / 1e6);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return times;
}

async function serve(how) {
  const { check, pool } = await checker(how);
  const server = http.createServer((req, res) => {
    if (req.url !== '/login' || req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', async () => {
      try {
        const { password } = JSON.parse(body);
        res.writeHead((await check(password)) ? 204 : 401).end();
      } catch (err) {
        res.writeHead(500).end(String(err));
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const startRssMiB = process.memoryUsage().rss / 2 ** 20;
  // The reads of an idle process first, then under load.
  const idleUntil = Date.now() + IDLE_MS;
  const idle = await readLoop(() => Date.now() < idleUntil);
  let loading = true;
  // Counted from the end of the clients' warm-up, as their requests are.
  const reads = readLoop(() => loading, Date.now() + WARMUP_MS);
  const load = new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [
        path.join(__dirname, 'workers', 'login-load.js'),
        String(server.address().port),
        String(CONNECTIONS),
        String(WARMUP_MS),
        String(DURATION_MS),
      ],
      { cwd: ROOT, encoding: 'utf8' },
      (err, stdout, stderr) =>
        err
          ? reject(new Error(`${err.message}\n${stderr}`))
          : resolve(JSON.parse(stdout.trim().split('\n').pop())),
    );
  });
  const result = await load;
  loading = false;
  const loaded = await reads;
  server.close();
  if (result.wrong > 0) throw new Error(`${how}: ${result.wrong} wrong answers`);
  if (pool !== undefined) {
    if (pool.stats().completed === 0) throw new Error(`${how}: the pool ran no task`);
    await pool.close();
  }
  return {
    value: result.rps,
    idleReadP50: quantile(idle, 0.5),
    loadReadP50: quantile(loaded, 0.5),
    loadReadP99: quantile(loaded, 0.99),
    // The process's peak resident memory (KiB on Linux), and before the load.
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    startRssMiB,
  };
}

const RPS = 'requests/s';
const CASES = {
  'login: argon2id, @node-rs/argon2 verify()': { unit: RPS, run: () => serve('argon2-node-rs') },
  'login: argon2id, @tidepool-rs/pool/password verify()': {
    unit: RPS,
    run: () => serve('argon2-pool'),
  },
  'login: argon2id, password verify(), maxWorkingBytes 19 MiB': {
    unit: RPS,
    run: () => serve('argon2-pool-bounded'),
  },
  'login: scrypt, node:crypto': { unit: RPS, run: () => serve('scrypt') },
  'login: scrypt, behind install()': { unit: RPS, run: () => serve('scrypt-installed') },
};
const RATIOS = [
  [
    'login: argon2id, @tidepool-rs/pool/password verify()',
    'login: argon2id, @node-rs/argon2 verify()',
  ],
  ['login: scrypt, behind install()', 'login: scrypt, node:crypto'],
];
// node:crypto's own argon2 (Node 24.7+).
if (typeof crypto.argon2 === 'function') {
  CASES['login: argon2id, node:crypto argon2()'] = { unit: RPS, run: () => serve('argon2-node') };
  RATIOS.push([
    'login: argon2id, @tidepool-rs/pool/password verify()',
    'login: argon2id, node:crypto argon2()',
  ]);
}

module.exports = { CASES, RATIOS };
