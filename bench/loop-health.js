'use strict';
// Event-loop health while a round runs: the delay monitor and utilization,
// shared by the benchmark sections.

const LOOP_RESOLUTION_MS = 1;
/**
 * Event-loop delay while `fn` runs: p50, p99 and max in ms beyond the
 * sampling interval (see the top of bench/run.js), and utilization 0..1.
 */
async function withLoopHealth(fn) {
  const { monitorEventLoopDelay, performance } = require('node:perf_hooks');
  const h = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  h.enable();
  // A few ticks first: the monitor records intervals between its ticks, so
  // without them a stall right at the start would not be recorded.
  await new Promise((resolve) => setTimeout(resolve, 20));
  h.reset();
  // reset() also forgets the last tick, so the first interval after it is
  // not recorded: let a few ticks pass before the round starts.
  await new Promise((resolve) => setTimeout(resolve, 3));
  const elu = performance.eventLoopUtilization();
  const result = await fn();
  // And a few after it: a synchronous stall at the end of the round is only
  // recorded by the next tick.
  await new Promise((resolve) => setTimeout(resolve, 3));
  h.disable();
  const delay = (ns) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS);
  return {
    ...result,
    loopP50: delay(h.percentile(50)),
    loopP99: delay(h.percentile(99)),
    loopMax: delay(h.max),
    loopSamples: h.count,
    elu: performance.eventLoopUtilization(elu).utilization,
  };
}

module.exports = { withLoopHealth };
