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

module.exports = { jsThreadMicros };
