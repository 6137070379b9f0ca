'use strict';
// Load profiles as phases ({ name, ms, load(f, t) } in threads' worth) and
// the oracles the autoscaling benchmarks compare the pools with.

const { quantile } = require('./stats');

function totalMs(phases) {
  return phases.reduce((a, p) => a + p.ms, 0);
}

/** The load at `t` ms and its phase. */
function loadAt(phases, t) {
  let start = 0;
  for (const p of phases) {
    if (t < start + p.ms) return { load: p.load((t - start) / p.ms, t - start), phase: p };
    start += p.ms;
  }
  return { load: 0, phase: phases[phases.length - 1] };
}

function phaseStart(phases, name) {
  let start = 0;
  for (const p of phases) {
    if (p.name === name) return start;
    start += p.ms;
  }
  return NaN;
}

/**
 * The oracle: FIFO service of `posts` (ms) by exactly the threads the
 * arrivals need at every instant, in exact integer µs. Little's law on the
 * run's own arrivals: threads(t) = max(1, ceil(rate(t) x runMs)), where
 * rate(t) counts the posts within 5 ms either side of t (an oracle knows the
 * near future, so a catch-up burst after a stalled timer finds its threads
 * ready) and `runMs` is the run's own median run time (a 1 ms sleep takes
 * ~1.1 ms: the OS wakes a sleeper late).
 */
function oracle(posts, phases, runMs) {
  const dt = 50;
  const cost = Math.max(dt, Math.round(runMs * 1000));
  const arrivals = posts.map((ms) => Math.round(ms * 1000));
  const endMs = Math.ceil(Math.max(totalMs(phases), ...posts)) + 1;
  const perMs = new Array(endMs + 1).fill(0);
  for (const ms of posts) perMs[Math.floor(ms)]++;
  const want = []; // threads wanted, per ms
  let inWindow = 0;
  for (let i = 0; i < Math.min(5, perMs.length); i++) inWindow += perMs[i];
  for (let t = 0; t <= endMs; t++) {
    if (t + 5 < perMs.length) inWindow += perMs[t + 5];
    if (t - 5 >= 0) inWindow -= perMs[t - 5];
    want.push(Math.max(1, Math.ceil((inWindow / 10) * (cost / 1000) - 1e-9)));
  }
  const busyUntil = [];
  const waits = [];
  let served = 0;
  let threadUs = 0;
  const endUs = totalMs(phases) * 1000;
  for (let t = 0; t < endUs || served < arrivals.length; t += dt) {
    const w = want[Math.min(want.length - 1, Math.floor(t / 1000))];
    let busy = 0;
    for (let s = 0; s < busyUntil.length; s++) if (busyUntil[s] > t) busy++;
    for (let s = 0; s < w && served < arrivals.length && arrivals[served] <= t; s++) {
      if (busyUntil[s] === undefined || busyUntil[s] <= t) {
        waits.push((t - arrivals[served]) / 1000);
        busyUntil[s] = t + cost;
        served++;
        busy++;
      }
    }
    if (t < endUs) threadUs += Math.max(w, busy) * dt;
  }
  return { waits, threadSeconds: threadUs / 1e6, want };
}

/**
 * The fixed-pool oracle: phase by phase, the fewest threads `k`, kept for
 * the whole phase, that serve `posts` (ms) FIFO with a p99 wait of at most
 * `p99Ms` for the phase's arrivals, each task taking `runMs` (the run's own
 * median). Threads carry their work from one phase into the next (a phase
 * with fewer keeps the ones free soonest); the idle tail ('idle') has the
 * one core thread. Returns every wait (ms), the thread-seconds (k x the
 * phase's length, summed) and `k` per phase. What a user who knew the load
 * would have fixed: the bar for an autoscaler's thread-seconds.
 */
function fixedOracle(posts, phases, runMs, p99Ms = 2) {
  let free = [];
  let start = 0;
  let next = 0;
  let threadMs = 0;
  const waits = [];
  const threads = [];
  for (const phase of phases) {
    const end = start + phase.ms;
    let last = next;
    while (last < posts.length && posts[last] < end) last++;
    const arrivals = posts.slice(next, last);
    let k = 1;
    let served = serve(free, k, arrivals, start, runMs);
    if (phase.name !== 'idle') {
      while (k < 256 && quantile(served.waits, 0.99) > p99Ms) {
        k++;
        served = serve(free, k, arrivals, start, runMs);
      }
    }
    free = served.free;
    waits.push(...served.waits);
    threads.push(k);
    threadMs += k * phase.ms;
    next = last;
    start = end;
  }
  return { waits, threadSeconds: threadMs / 1000, threads };
}

/** FIFO service of `arrivals` by `k` threads from `start`, the carried ones free at `free` (ms). */
function serve(free, k, arrivals, start, cost) {
  const at = [...free].sort((a, b) => a - b).slice(0, k);
  for (let s = 0; s < at.length; s++) at[s] = Math.max(at[s], start);
  while (at.length < k) at.push(start);
  const waits = [];
  for (const arrival of arrivals) {
    let soonest = 0;
    for (let s = 1; s < k; s++) if (at[s] < at[soonest]) soonest = s;
    const begin = Math.max(arrival, at[soonest]);
    waits.push(begin - arrival);
    at[soonest] = begin + cost;
  }
  return { waits, free: at };
}

module.exports = { totalMs, loadAt, phaseStart, oracle, fixedOracle };
