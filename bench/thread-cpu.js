'use strict';
// The CPU time of this process's main (JS) thread, for the benches that
// tell the event loop's share apart from the pool's threads and V8's.

const fs = require('node:fs');

/** CPU µs of the main thread so far: threadCpuUsage (Node 23.9+), else Linux's /proc (10 ms ticks). */
function jsThreadMicros() {
  if (process.threadCpuUsage) {
    const used = process.threadCpuUsage();
    return used.user + used.system;
  }
  // The main thread's task id is the process id.
  const stat = fs.readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 1e4;
}

/**
 * Which of this process's threads a thread is, by its name: the event
 * loop, the pool's (`tidepool-N`, its supervisor apart), libuv's and V8's
 * helpers (named so from Node 22 on; on Node 20 they are all `node`, and
 * count as `other`).
 */
function groupOf(tid, comm) {
  if (tid === String(process.pid)) return 'event loop';
  if (comm.startsWith('tidepool-')) return comm === 'tidepool-superv' ? 'other' : 'pool';
  if (comm.startsWith('libuv-worker')) return 'libuv';
  if (comm.startsWith('V8')) return 'V8 helpers';
  return 'other';
}

/**
 * CPU µs of this process's threads so far, by group ({@link groupOf}), or
 * null where Linux's /proc cannot tell (10 ms ticks). A thread that ends
 * between two readings takes its time with it: {@link groupMicrosSince}
 * gives that to `other`, from the process's own total.
 */
function threadGroupMicros() {
  let tasks;
  try {
    tasks = fs.readdirSync('/proc/self/task');
  } catch {
    return null;
  }
  const groups = { total: microsOf(process.cpuUsage()) };
  for (const tid of tasks) {
    try {
      const comm = fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const group = groupOf(tid, comm);
      groups[group] = (groups[group] ?? 0) + (Number(fields[11]) + Number(fields[12])) * 1e4;
    } catch {
      // The thread ended while it was read.
    }
  }
  return groups;
}

/** CPU µs by group since `before` (a {@link threadGroupMicros} reading); `other` holds the rest of the process's total. */
function groupMicrosSince(before) {
  const now = threadGroupMicros();
  if (!before || !now) return null;
  const since = {};
  let named = 0;
  for (const group of ['event loop', 'pool', 'libuv', 'V8 helpers']) {
    since[group] = Math.max(0, (now[group] ?? 0) - (before[group] ?? 0));
    named += since[group];
  }
  since.other = Math.max(0, now.total - before.total - named);
  return since;
}

function microsOf(usage) {
  return usage.user + usage.system;
}

module.exports = { jsThreadMicros, threadGroupMicros, groupMicrosSince };
