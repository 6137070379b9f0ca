'use strict';
// Prometheus' text exposition format, parsed for the tests that scrape
// /metrics (not a test file itself: node --test runs *.test.js only).

const assert = require('node:assert/strict');

/** The metrics tidepool/metrics registers (default prefix), with their types. */
const NAMES = Object.freeze({
  tidepool_threads: 'gauge',
  tidepool_threads_busy: 'gauge',
  tidepool_queue_length: 'gauge',
  tidepool_queue_oldest_age_seconds: 'gauge',
  tidepool_tasks_total: 'counter',
  tidepool_task_wait_seconds: 'histogram',
  tidepool_task_run_seconds: 'histogram',
  tidepool_thread_spawns_total: 'counter',
  tidepool_thread_retires_total: 'counter',
  tidepool_thread_spawn_errors_total: 'counter',
});

/** { types: name -> type, samples: [{ name, labels, value }] }. */
function parse(text) {
  const types = {};
  const samples = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP')) continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      types[type[1]] = type[2];
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const labels = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[k] = v;
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return { types, samples };
}

/** The value of the one sample of `name` whose labels include `labels`. */
function value(parsed, name, labels = {}) {
  const found = parsed.samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  assert.equal(found.length, 1, `${name} ${JSON.stringify(labels)}: ${found.length} samples`);
  return found[0].value;
}

/** A sample's series: its name and labels, as one string. */
function series(sample) {
  return `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
}

module.exports = { NAMES, parse, value, series };
