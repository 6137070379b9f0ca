'use strict';
// require('@tidepool-rs/pool/metrics'): a pool's numbers as Prometheus metrics, on
// prom-client (an optional peer dependency: only this module loads it).
//
// Nothing is recorded on the JavaScript thread as tasks run: every value
// is read when the registry is scraped. Gauges and counters come from the
// pool's own counts (read through Pool[METRICS_SOURCE], a brand-checked
// static method, not through methods a caller may replace); the two
// histograms are the pool's own lock-free histograms (their counts and sums
// only grow, whatever stats({ reset }) does), read as cumulative buckets at
// fixed bounds (powers of four of nanoseconds, 1 µs to 17 s: edges of the
// pool's buckets, so the counts are exact).
//
// Each metric is a custom prom-client metric (an object with `get()`):
// prom-client's own Gauge, Counter and Histogram record values as they
// happen, where these report what the pool already counted. Several pools
// share one set of metrics per registry and prefix, told apart by their
// labels, and are held weakly.

const { Pool } = require('./pool');
const { METRICS_SOURCE } = require('./symbols');
const { invalidArgType, invalidArgValue, own } = require('./errors');
const { ownOptions } = require('./args/options');

const OPTIONS = Object.freeze(['registry', 'prefix', 'labels']);
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** Label names the metrics use themselves. */
const RESERVED = new Set(['le', 'outcome', 'code', 'reason', 'quantile']);
/** Codes whose failures are outcomes of their own. */
const OUTCOMES = Object.freeze({
  __proto__: null,
  ABORT_ERR: 'aborted',
  ERR_TIDEPOOL_TIMEOUT: 'timed_out',
  ERR_TIDEPOOL_DROPPED: 'dropped',
  ERR_TIDEPOOL_CANCELLED: 'cancelled',
});
const OWN_OUTCOMES = Object.freeze(['aborted', 'timed_out', 'dropped', 'cancelled']);
/** The metrics' names, after the prefix. */
const NAMES = Object.freeze([
  'threads',
  'threads_busy',
  'queue_length',
  'queue_oldest_age_seconds',
  'tasks_total',
  'task_wait_seconds',
  'task_run_seconds',
  'thread_spawns_total',
  'thread_retires_total',
  'thread_spawn_errors_total',
  'budget_shares',
  'budget_shares_held',
  'budget_share_waits_total',
  'budget_share_wait_seconds_total',
]);

/** Per registry, per prefix: the metrics and the pools they report. */
const collectors = new WeakMap();

function loadPromClient() {
  try {
    return require('prom-client');
  } catch (cause) {
    const err = new Error(
      '@tidepool-rs/pool/metrics needs prom-client: npm install prom-client (it is an optional peer dependency of @tidepool-rs/pool)',
      { cause },
    );
    own(err, 'code', 'ERR_TIDEPOOL_NO_PROM_CLIENT');
    throw err;
  }
}

/** The checked `labels` option: an own, plain copy. */
function checkLabels(labels) {
  const out = { __proto__: null };
  if (labels === undefined) return out;
  if (labels === null || typeof labels !== 'object' || Array.isArray(labels)) {
    throw invalidArgType('options.labels', 'of type object', labels);
  }
  for (const name of Object.keys(labels)) {
    if (!LABEL_NAME.test(name) || name.startsWith('__') || RESERVED.has(name)) {
      throw invalidArgValue(
        `options.labels.${name}`,
        'is not a label name @tidepool-rs/pool/metrics can use (a Prometheus label name, not __*, le, outcome, code, reason or quantile)',
      );
    }
    const value = labels[name];
    if (typeof value !== 'string')
      throw invalidArgType(`options.labels.${name}`, 'of type string', value);
    // Prometheus reads an empty label as no label: two pools would be one series.
    if (value === '')
      throw invalidArgValue(
        `options.labels.${name}`,
        'must not be empty (Prometheus reads an empty label as a missing one)',
      );
    out[name] = value;
  }
  return out;
}

/** A pool's label set as one key, to tell pools apart. */
function labelKey(labels) {
  return JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]]),
  );
}

/** A sample for the pool's labels and `extra`, of `metricName` when given (a histogram's `_bucket`...). */
function sample(labels, value, extra, metricName) {
  const out = { labels: { ...labels, ...extra }, value };
  if (metricName !== undefined) out.metricName = metricName;
  return out;
}

/**
 * The metrics of one registry and prefix: each a custom prom-client metric
 * whose get() reads every registered pool.
 */
function makeCollector(registry, prefix) {
  // label key -> { ref: WeakRef<Pool>, labels }: a pool dropped without
  // stop() goes, with its series.
  const pools = new Map();
  // One read of every pool per scrape: prom-client calls every metric's
  // get() in the same turn, so the first read serves the others.
  let snapshot;
  const read = () => {
    if (snapshot !== undefined) return snapshot;
    snapshot = [];
    for (const [key, { ref, labels }] of pools) {
      const pool = ref.deref();
      if (pool === undefined) pools.delete(key);
      else snapshot.push({ labels, source: Pool[METRICS_SOURCE](pool) });
    }
    queueMicrotask(() => (snapshot = undefined));
    return snapshot;
  };
  const metric = (name, help, type, values) => {
    const m = {
      name: `${prefix}${name}`,
      help,
      type,
      aggregator: 'sum',
      // m.name, read at each scrape: prom-client renames counters for
      // OpenMetrics (it drops `_total`, then adds it to each sample).
      get: async () => ({ name: m.name, help, type, aggregator: 'sum', values: values(read()) }),
      reset: () => {},
    };
    registry.registerMetric(m);
  };
  const gauge = (name, help, pick) =>
    metric(name, help, 'gauge', (all) =>
      all.map(({ labels, source }) => sample(labels, pick(source))),
    );
  const counter = (name, help, pick) =>
    metric(name, help, 'counter', (all) =>
      all.map(({ labels, source }) => sample(labels, pick(source))),
    );
  gauge('threads', 'Threads of the pool, busy or idle.', (s) => s.threads);
  gauge('threads_busy', 'Threads of the pool running a task.', (s) => s.busyThreads);
  gauge('queue_length', 'Tasks in the pool queue, not yet started.', (s) => s.queued);
  gauge(
    'queue_oldest_age_seconds',
    'How long the oldest queued task has waited (0 when the queue is empty): the signal the pool scales its threads on.',
    (s) => s.oldestQueuedMs / 1000,
  );
  gauge(
    'working_memory_bytes',
    'Bytes of working memory the running memory-hard tasks (Argon2, scrypt) hold.',
    (s) => s.native.workingBytes,
  );
  gauge(
    'threads_waiting_memory',
    'Threads waiting for working memory to run their task (maxWorkingBytes).',
    (s) => s.native.memoryWaiting,
  );
  metric(
    'tasks_total',
    'Tasks settled, by outcome (completed, failed with code, aborted, timed_out, dropped, cancelled).',
    'counter',
    (all) => {
      const out = [];
      for (const { labels, source } of all) {
        out.push(sample(labels, source.completed, { outcome: 'completed' }));
        const byOutcome = { __proto__: null, aborted: 0, timed_out: 0, dropped: 0, cancelled: 0 };
        for (const code in source.failures) {
          const outcome = OUTCOMES[code];
          if (outcome === undefined)
            out.push(sample(labels, source.failures[code], { outcome: 'failed', code }));
          else byOutcome[outcome] += source.failures[code];
        }
        for (const outcome of OWN_OUTCOMES)
          out.push(sample(labels, byOutcome[outcome], { outcome }));
      }
      return out;
    },
  );
  const histogram = (name, help, which) =>
    metric(name, help, 'histogram', (all) => {
      const out = [];
      const metricName = `${prefix}${name}`;
      for (const { labels, source } of all) {
        const n = source.native;
        const buckets = n[`${which}Buckets`];
        for (let i = 0; i < n.bounds.length; i++) {
          out.push(sample(labels, buckets[i], { le: String(n.bounds[i]) }, `${metricName}_bucket`));
        }
        out.push(sample(labels, n[`${which}Count`], { le: '+Inf' }, `${metricName}_bucket`));
        out.push(sample(labels, n[`${which}Sum`], {}, `${metricName}_sum`));
        out.push(sample(labels, n[`${which}Count`], {}, `${metricName}_count`));
      }
      return out;
    });
  histogram(
    'task_wait_seconds',
    'Time tasks waited in the queue before a thread started them.',
    'wait',
  );
  histogram('task_run_seconds', 'Time kernels ran.', 'run');
  metric(
    'thread_spawns_total',
    'Threads started, by reason (core, queue-age, backlog, demand).',
    'counter',
    (all) => {
      const out = [];
      for (const { labels, source } of all) {
        const { spawnReasons, spawns } = source.native;
        for (let i = 0; i < spawns.length; i++)
          out.push(sample(labels, spawns[i], { reason: spawnReasons[i] }));
      }
      return out;
    },
  );
  counter(
    'thread_retires_total',
    'Extra threads retired: idle, or fewer would have served the recent load.',
    (s) => s.retired,
  );
  counter(
    'thread_spawn_errors_total',
    'Threads the operating system refused to start.',
    (s) => s.spawnErrors,
  );
  // The machine budget's numbers are the process's (every pool of a process
  // under budget 'machine' shares them): only pools under it have samples.
  const budgetMetric = (name, help, type, pick) =>
    metric(name, help, type, (all) =>
      all
        .filter(({ source }) => source.native.budget != null)
        .map(({ labels, source }) => sample(labels, pick(source.native.budget))),
    );
  budgetMetric(
    'budget_shares',
    "Shares of the machine budget (budget: 'machine'): the CPUs this process may use.",
    'gauge',
    (b) => b.capacity,
  );
  budgetMetric(
    'budget_shares_held',
    "Shares of the machine budget this process's threads hold.",
    'gauge',
    (b) => b.held,
  );
  budgetMetric(
    'budget_share_waits_total',
    'Times a thread of this process waited for a share of the machine budget.',
    'counter',
    (b) => b.waits,
  );
  budgetMetric(
    'budget_share_wait_seconds_total',
    "Seconds this process's threads waited for shares of the machine budget.",
    'counter',
    (b) => b.waitSeconds,
  );
  return { pools };
}

/**
 * Reports `pool` in `registry` (prom-client's default registry unless
 * given), its metrics named `prefix` + name (default `tidepool_`), its
 * samples labelled `labels`. Several pools in one registry need labels that
 * tell them apart; a closed pool's labels may be taken by a new pool. The
 * pool is held weakly. Returns a function that stops reporting this pool.
 */
function collectMetrics(pool, options) {
  if (Pool[METRICS_SOURCE](pool) === undefined)
    throw invalidArgType('pool', 'an instance of Pool', pool);
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw invalidArgType('options', 'of type object', options);
  }
  // A registry given where the options go (prom-client's own collectors
  // take it so): say how to give it.
  if (options !== undefined && typeof options.registerMetric === 'function') {
    throw invalidArgValue(
      'options',
      'is a prom-client Registry, not the options: pass { registry } (collectMetrics(pool, { registry }))',
    );
  }
  // Only own properties are options (lib/args/options.js): a polluted
  // Object.prototype is neither refused nor read.
  const given =
    options === undefined ? { __proto__: null } : ownOptions(options, OPTIONS, 'options');
  const client = loadPromClient();
  const registry = given.registry ?? client.register;
  if (
    registry === null ||
    typeof registry !== 'object' ||
    typeof registry.registerMetric !== 'function'
  ) {
    throw invalidArgType('options.registry', 'a prom-client Registry', registry);
  }
  const prefix = given.prefix ?? 'tidepool_';
  if (typeof prefix !== 'string') throw invalidArgType('options.prefix', 'of type string', prefix);
  if (prefix !== '' && !METRIC_NAME.test(`${prefix}x`)) {
    throw invalidArgValue(
      'options.prefix',
      `must start a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*). Received ${JSON.stringify(prefix)}`,
    );
  }
  const labels = checkLabels(given.labels);
  let byPrefix = collectors.get(registry);
  if (byPrefix === undefined) collectors.set(registry, (byPrefix = new Map()));
  let collector = byPrefix.get(prefix);
  const whole =
    collector !== undefined &&
    NAMES.every((name) => registry.getSingleMetric(`${prefix}${name}`) !== undefined);
  if (!whole) {
    // Made (again, after registry.clear()) only when none of the names is
    // taken: nothing is registered halfway.
    const taken = NAMES.filter(
      (name) => registry.getSingleMetric(`${prefix}${name}`) !== undefined,
    );
    if (taken.length !== 0) {
      throw invalidArgValue(
        'options.prefix',
        `gives metric names the registry already has (${taken.map((n) => prefix + n).join(', ')})`,
      );
    }
    byPrefix.set(prefix, (collector = makeCollector(registry, prefix)));
  }
  const key = labelKey(labels);
  const names = Object.keys(labels).sort().join(', ');
  for (const [other, entry] of collector.pools) {
    const held = entry.ref.deref();
    // One metric's series share their label names: an unlabelled pool
    // beside a labelled one would be a series that sums nothing and
    // aggregations that miss it.
    const theirs = Object.keys(entry.labels).sort().join(', ');
    if (held !== undefined && other !== key && theirs !== names) {
      throw invalidArgValue(
        'options.labels',
        `must have the label names of the other pools in this registry with prefix ${JSON.stringify(prefix)} ` +
          `(${theirs || 'none'}; every pool reported together needs the same names). Received ${names || 'none'}`,
      );
    }
    if (held === pool && other !== key) {
      throw invalidArgValue(
        'options.labels',
        'must be the ones this pool is already reported with in this registry (it would count twice)',
      );
    }
    // A closed pool's place may be taken (a pool made again after a reload).
    if (
      other === key &&
      held !== undefined &&
      held !== pool &&
      !Pool[METRICS_SOURCE](held).closed
    ) {
      throw invalidArgValue(
        'options.labels',
        `must tell this pool apart from another pool in the registry with prefix ${JSON.stringify(prefix)}`,
      );
    }
  }
  const entry = { ref: new WeakRef(pool), labels };
  collector.pools.set(key, entry);
  return () => {
    if (collector.pools.get(key) === entry) collector.pools.delete(key);
  };
}

module.exports = { collectMetrics };
