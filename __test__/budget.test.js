'use strict';
// `budget: 'machine'`: pools in several processes share one budget of
// running threads. The processes here are real (child processes), each
// with its own table directory per test, and a capacity fixed by a test
// hook so that they contend on any machine. Timing targets (how fast a
// killed process's shares come back, throughput) live in bench/budget.js.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { Pool } = require('..');

const LINUX = process.platform === 'linux';

function tableDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidepool-budget-test-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A child process running `body` (the source of an async function of
 * `(Pool, send, cap, heard)`) with the table in `dir`; lines it sends
 * arrive as JSON. `heard(pred)` waits for the first line the test `tell()`s
 * it that satisfies `pred` (it stops reading then: one such wait a child).
 */
function child(dir, body) {
  const source = `
    const { Pool } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
    const heard = (pred) => new Promise((resolve) => {
      let buf = '';
      process.stdin.setEncoding('utf8');
      process.stdin.on('data', function onData(d) {
        buf += d;
        let nl;
        while ((nl = buf.indexOf('\\n')) >= 0) {
          const m = JSON.parse(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
          if (pred(m)) {
            process.stdin.off('data', onData);
            process.stdin.destroy();
            return resolve(m);
          }
        }
      });
    });
    (${body})(Pool, send, Symbol.for('tidepool.test.budgetCapacity'), heard).catch((e) => {
      send({ error: String(e && e.stack) });
      process.exit(1);
    });`;
  const c = spawn(process.execPath, ['-e', source], {
    env: { ...process.env, TIDEPOOL_BUDGET_DIR: dir },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  c.stdin.on('error', () => {}); // a child that exited reads no more
  const messages = [];
  const waiters = [];
  let buf = '';
  let stderr = '';
  c.stderr.on('data', (d) => (stderr += d));
  c.stdout.on('data', (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const m = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      messages.push(m);
      for (const w of waiters.splice(0)) w();
    }
  });
  const exited = new Promise((resolve) =>
    c.on('exit', (code, signal) => resolve({ code, signal })),
  );
  /** The first message satisfying `pred`, waiting for it (the runner's timeout bounds the wait). */
  async function next(pred) {
    for (;;) {
      const m = messages.find(pred);
      if (m) return m;
      if (c.exitCode !== null || c.signalCode !== null)
        throw new Error(`child ended before the message: ${stderr}`);
      await Promise.race([new Promise((r) => waiters.push(r)), exited]);
    }
  }
  /** Sends `m` to the child's `heard()`. */
  const tell = (m) => c.stdin.write(JSON.stringify(m) + '\n');
  return { process: c, next, tell, exited, stderr: () => stderr };
}

test('budget is an option with two values, and stats() says which', async (t) => {
  assert.throws(() => new Pool({ budget: 'everything' }), {
    name: 'TypeError',
    code: 'ERR_INVALID_ARG_VALUE',
    message: /'options.budget' must be one of: 'process', 'machine'/,
  });
  assert.throws(() => new Pool({ budget: 1 }), { code: 'ERR_INVALID_ARG_TYPE' });
  const inherited = Object.create({ budget: 'machine' });
  const pool = new Pool(inherited);
  t.after(() => pool.close());
  assert.equal(pool.stats().budget, null, 'an inherited budget is not an option');
  const own = new Pool({ budget: 'process' });
  t.after(() => own.close());
  assert.equal(own.stats().budget, null);
});

test('a pool whose machine budget cannot be had runs as without it and says so once', async () => {
  // A directory that does not exist: the table cannot be opened.
  const r = spawnSync(
    process.execPath,
    [
      '-e',
      `
      const { Pool } = require(${JSON.stringify(path.join(__dirname, '..'))});
      const warnings = [];
      process.on('warning', (w) => warnings.push({ code: w.code, message: w.message }));
      (async () => {
        const a = new Pool({ budget: 'machine' });
        const b = new Pool({ budget: 'machine' });
        const { result } = await a.post(Buffer.from('abc'));
        await b.post(Buffer.from('abc'));
        await new Promise((r) => setImmediate(r));
        console.log(JSON.stringify({ warnings, digest: result.toString('hex'), stats: a.stats().budget }));
        await a.close();
        await b.close();
      })();`,
    ],
    {
      encoding: 'utf8',
      env: {
        ...process.env,
        TIDEPOOL_BUDGET_DIR: path.join(os.tmpdir(), 'no-such-dir-' + process.pid),
      },
      timeout: 60_000,
    },
  );
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(
    out.digest,
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    'tasks still run',
  );
  assert.equal(out.stats, null);
  assert.equal(out.warnings.length, 1, JSON.stringify(out.warnings));
  assert.equal(out.warnings[0].code, 'TIDEPOOL_BUDGET_UNAVAILABLE');
  assert.match(out.warnings[0].message, LINUX ? /no-such-dir/ : /Linux/);
});

test(
  "a budget member's workers run under SCHED_BATCH and keep their niceIncrement (Linux)",
  { skip: !LINUX },
  async (t) => {
    // SCHED_BATCH: a worker woken for a share given over does not preempt
    // the worker that gave it, which is about to sleep. A pool without the
    // budget is the control: same options, its process's policy.
    const c = child(
      tableDir(t),
      `async (Pool, send, cap) => {
      const fs = require('node:fs');
      // After "(comm)": state is field 3, nice field 19, policy field 41.
      const fields = (path) => {
        const stat = fs.readFileSync(path, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      };
      const workers = () => {
        const out = [];
        for (const tid of fs.readdirSync('/proc/self/task')) {
          try {
            const comm = fs.readFileSync('/proc/self/task/' + tid + '/comm', 'utf8').trim();
            const f = fields('/proc/self/task/' + tid + '/stat');
            if (/^tidepool-\\d+$/.test(comm)) out.push({ comm, nice: Number(f[16]), policy: Number(f[38]) });
          } catch {} // the thread exited meanwhile
        }
        return out;
      };
      const seen = {};
      for (const budget of ['machine', 'process']) {
        const pool = new Pool({ budget, minThreads: 2, maxThreads: 2, niceIncrement: 5, [cap]: 2 });
        await pool.post(Buffer.from('x'));
        // Both core threads start at once; each sets its policy before its
        // first task. Look until both have, or the deadline passes.
        const settled = (ws) => ws.length === 2 && ws.every((w) => w.policy === ws[0].policy && w.nice === ws[0].nice);
        // Under 'machine', also until they have left SCHED_OTHER (0).
        const deadline = Date.now() + 10_000;
        let ws = workers();
        while (!(settled(ws) && (budget === 'process' || ws[0].policy !== 0)) && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 5));
          ws = workers();
        }
        seen[budget] = ws;
        await pool.close();
      }
      const own = fields('/proc/self/stat');
      send({ seen, own: { nice: Number(own[16]), policy: Number(own[38]) } });
    }`,
    );
    t.after(() => c.process.kill('SIGKILL'));
    const { seen, own } = await c.next((m) => m.seen);
    const SCHED_OTHER = 0;
    const SCHED_BATCH = 3;
    // Under another policy (chrt), the workers keep it, budget or not.
    const expected = {
      machine: own.policy === SCHED_OTHER ? SCHED_BATCH : own.policy,
      process: own.policy,
    };
    for (const budget of ['machine', 'process']) {
      const workers = seen[budget];
      assert.equal(workers.length, 2, JSON.stringify(seen));
      for (const w of workers) {
        assert.equal(w.policy, expected[budget], `${budget}: ${JSON.stringify(w)}`);
        assert.equal(w.nice, Math.min(19, own.nice + 5), `${budget}: ${JSON.stringify(w)}`);
      }
    }
    assert.deepEqual(await c.exited, { code: 0, signal: null });
  },
);

test(
  'processes share the machine budget: one runs while the other waits',
  { skip: !LINUX },
  async (t) => {
    const dir = tableDir(t);
    // A holds the only share with a task that runs until the test lets it
    // go (once B was seen waiting); B's task waits for it.
    const a = child(
      dir,
      `async (Pool, send, cap, heard) => {
      const pool = new Pool({ kernel: 'sleep', budget: 'machine', maxThreads: 2, [cap]: 1 });
      const us = Buffer.alloc(4); us.writeUInt32LE(60_000_000);
      const release = new AbortController();
      const running = pool.post(us, { signal: release.signal }).catch((e) => e.name);
      const deadline = Date.now() + 30_000;
      while (pool.stats().busyThreads === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
      send({ holding: pool.stats().budget });
      await heard((m) => m.release);
      release.abort();
      send({ done: await running });
      await pool.close();
    }`,
    );
    t.after(() => a.process.kill('SIGKILL'));
    const holding = (await a.next((m) => m.holding)).holding;
    assert.equal(holding.capacity, 1);
    assert.equal(holding.held, 1);
    const b = child(
      dir,
      `async (Pool, send, cap) => {
      const pool = new Pool({ budget: 'machine', maxThreads: 2, [cap]: 1 });
      const started = performance.now();
      const task = pool.post(Buffer.from('x'));
      const waitUntil = Date.now() + 30_000;
      while (pool.stats().budget.waiting === 0 && Date.now() < waitUntil) await new Promise((r) => setTimeout(r, 1));
      send({ waiting: pool.stats().budget });
      await task;
      const finished = performance.now() - started;
      // A thread keeps its share a moment after its last task (in case
      // another comes), then gives it back.
      const giveBackBy = Date.now() + 30_000;
      while (pool.stats().budget.held > 0 && Date.now() < giveBackBy) await new Promise((r) => setTimeout(r, 1));
      send({ finished, stats: pool.stats().budget });
      await pool.close();
    }`,
    );
    t.after(() => b.process.kill('SIGKILL'));
    const waiting = (await b.next((m) => m.waiting)).waiting;
    assert.equal(waiting.held, 0);
    assert.equal(waiting.machine.held, 1, "A's share, seen from B");
    assert.equal(waiting.machine.processes, 2);
    a.tell({ release: true });
    assert.equal((await a.next((m) => m.done)).done, 'AbortError', "A's task ran until let go");
    const finished = await b.next((m) => m.finished);
    assert.equal(finished.stats.waits, 1);
    assert.ok(finished.stats.waitMs > 0);
    assert.equal(finished.stats.held, 0, 'given back once the queue was empty');
    assert.deepEqual(await a.exited, { code: 0, signal: null });
    assert.deepEqual(await b.exited, { code: 0, signal: null });
  },
);

test("a SIGKILLed process's shares come back to the others", { skip: !LINUX }, async (t) => {
  const dir = tableDir(t);
  const a = child(
    dir,
    `async (Pool, send, cap) => {
      const pool = new Pool({ kernel: 'sleep', budget: 'machine', maxThreads: 2, minThreads: 2, [cap]: 2 });
      const us = Buffer.alloc(4); us.writeUInt32LE(60_000_000);
      pool.post(us); pool.post(us);
      const deadline = Date.now() + 30_000;
      while (pool.stats().budget.held < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
      send({ holding: pool.stats().budget });
      await new Promise(() => {});
    }`,
  );
  t.after(() => a.process.kill('SIGKILL'));
  assert.equal((await a.next((m) => m.holding)).holding.held, 2);
  const b = child(
    dir,
    `async (Pool, send, cap) => {
      const pool = new Pool({ budget: 'machine', maxThreads: 2, [cap]: 2 });
      const task = pool.post(Buffer.from('x'));
      const waitUntil = Date.now() + 30_000;
      while (pool.stats().budget.waiting === 0 && Date.now() < waitUntil) await new Promise((r) => setTimeout(r, 1));
      send({ waiting: true });
      await task;
      // Its own share goes back once the thread has lingered on the empty queue.
      const deadline = Date.now() + 10_000;
      while (pool.stats().budget.held > 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 1));
      send({ finished: true, stats: pool.stats().budget });
      await pool.close();
    }`,
  );
  t.after(() => b.process.kill('SIGKILL'));
  await b.next((m) => m.waiting);
  a.process.kill('SIGKILL');
  assert.equal((await a.exited).signal, 'SIGKILL');
  const finished = await b.next((m) => m.finished);
  assert.equal(finished.stats.held, 0);
  assert.deepEqual(
    finished.stats.machine,
    { processes: 0, held: 0 },
    'the dead one is not counted',
  );
  assert.deepEqual(await b.exited, { code: 0, signal: null });
});

test(
  'an empty TIDEPOOL_BUDGET_DIR means the default directory, as if unset',
  {
    skip: !LINUX || !fs.existsSync('/dev/shm'),
  },
  () => {
    const table = `/dev/shm/tidepool-budget-v2-${process.getuid()}`;
    const existed = fs.existsSync(table);
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'tidepool-cwd-'));
    try {
      const r = spawnSync(
        process.execPath,
        [
          '-e',
          `const { Pool } = require(${JSON.stringify(path.join(__dirname, '..'))});
        const warnings = [];
        process.on('warning', (w) => warnings.push(w.code));
        (async () => {
          const pool = new Pool({ budget: 'machine' });
          await pool.post(Buffer.from('abc'));
          await new Promise((r) => setImmediate(r));
          console.log(JSON.stringify({ warnings, budget: pool.stats().budget }));
          await pool.close();
        })();`,
        ],
        {
          encoding: 'utf8',
          env: { ...process.env, TIDEPOOL_BUDGET_DIR: '' },
          cwd,
          timeout: 60_000,
        },
      );
      assert.equal(r.status, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.deepEqual(out.warnings, []);
      assert.ok(out.budget && out.budget.capacity >= 1, JSON.stringify(out.budget));
      assert.ok(fs.existsSync(table), 'the table is in /dev/shm');
      assert.deepEqual(fs.readdirSync(cwd), [], 'no table in the working directory');
    } finally {
      if (!existed) fs.rmSync(table, { force: true });
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  },
);

/**
 * A child holding both shares of a 2-share budget with two long tasks,
 * until it is told `bye` (then it aborts them and closes).
 */
const HOLDER = `async (Pool, send, cap, heard) => {
      const pool = new Pool({ kernel: 'sleep', budget: 'machine', maxThreads: 2, minThreads: 2, [cap]: 2 });
      const us = Buffer.alloc(4); us.writeUInt32LE(60_000_000);
      const stop = new AbortController();
      const held = [pool.post(us, { signal: stop.signal }), pool.post(us, { signal: stop.signal })];
      while (pool.stats().budget.held < 2) await new Promise((r) => setTimeout(r, 1));
      send({ holding: true });
      await heard((m) => m.bye);
      stop.abort();
      await Promise.allSettled(held);
      await pool.close();
    }`;

// The table's file truncated (`: > file`) or removed while a member runs:
// a mapped page past a file's end is SIGBUS to whoever touches it. The
// member goes on (its monitor thread, which touches the table every 100 ms
// at most, joins the file made anew), and a process that starts afterwards
// sees it in the one table: one budget per machine still.
for (const how of ['truncated', 'removed']) {
  test(
    `a table file ${how} under a running member neither kills it nor splits the budget`,
    { skip: !LINUX },
    async (t) => {
      const dir = tableDir(t);
      const a = child(dir, HOLDER);
      t.after(() => a.process.kill('SIGKILL'));
      await a.next((m) => m.holding);
      const [file] = fs.readdirSync(dir).filter((f) => f.startsWith('tidepool-budget-v2-'));
      const where = path.join(dir, file);
      if (how === 'truncated') fs.truncateSync(where, 0);
      else fs.rmSync(where);
      const b = child(dir, HOLDER);
      t.after(() => b.process.kill('SIGKILL'));
      await b.next((m) => m.holding);
      // b is in the file at the path; a moves there: a third sees them both.
      const seen = child(
        dir,
        `async (Pool, send, cap) => {
        const pool = new Pool({ budget: 'machine', maxThreads: 1, [cap]: 2 });
        // A hang guard: the monitor threads look every 500 ms at most.
        const deadline = Date.now() + 30_000;
        for (;;) {
          const machine = pool.stats().budget.machine;
          pool.post(Buffer.from('x')).catch(() => {});
          // Its own posts wait for a share the other two hold: it leaves.
          if (machine.processes >= 3 || Date.now() > deadline)
            return send({ machine }), process.exit(0);
          await new Promise((r) => setTimeout(r, 10));
        }
      }`,
      );
      t.after(() => seen.process.kill('SIGKILL'));
      const { machine } = await seen.next((m) => m.machine);
      assert.equal(machine.processes, 3, JSON.stringify(machine));
      assert.deepEqual(await seen.exited, { code: 0, signal: null }, seen.stderr());
      assert.equal(
        fs.readdirSync(dir).filter((f) => f.startsWith('tidepool-budget-v2-')).length,
        1,
      );
      a.tell({ bye: true });
      b.tell({ bye: true });
      assert.deepEqual(await a.exited, { code: 0, signal: null }, a.stderr());
      assert.deepEqual(await b.exited, { code: 0, signal: null }, b.stderr());
    },
  );
}

// A holder stopped (SIGSTOP: a debugger's breakpoint, a frozen cgroup) is
// alive, but renews no lease on its shares: the others' monitors take them
// back, and a task of another process runs meanwhile. Resumed, the holder
// goes on and ends well.
test(
  "a stopped process's shares come back to the others after its lease",
  { skip: !LINUX },
  async (t) => {
    const dir = tableDir(t);
    const a = child(dir, HOLDER);
    t.after(() => a.process.kill('SIGKILL'));
    await a.next((m) => m.holding);
    a.process.kill('SIGSTOP');
    t.after(() => a.process.kill('SIGCONT'));
    const b = child(
      dir,
      `async (Pool, send, cap) => {
      const pool = new Pool({ budget: 'machine', maxThreads: 1, [cap]: 2 });
      // A hang guard: the lease is 2 s.
      const late = new Promise((r) => setTimeout(() => r('late'), 30_000).unref());
      if ((await Promise.race([pool.post(Buffer.from('x')), late])) === 'late') process.exit(3);
      send({ ran: pool.stats().budget });
      await pool.close();
    }`,
    );
    t.after(() => b.process.kill('SIGKILL'));
    const { ran } = await b.next((m) => m.ran);
    assert.ok(ran.waits >= 1, 'it waited: the stopped process held every share');
    assert.deepEqual(await b.exited, { code: 0, signal: null }, b.stderr());
    a.process.kill('SIGCONT');
    a.tell({ bye: true });
    assert.deepEqual(await a.exited, { code: 0, signal: null }, a.stderr());
  },
);
