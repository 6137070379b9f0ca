'use strict';
// deploy/kubernetes/: every manifest checked offline, with no cluster.
//
// Each YAML document is validated against the schema of its kind from
// kubernetes-models (Kubernetes' own OpenAPI schemas), @kubernetes-models/keda
// or @kubernetes-models/prometheus-operator (the CRDs' Go types). Those
// validators accept fields they do not know (their schemas have no
// additionalProperties: false), so a typo such as `replicaz` would pass, as
// it would with `kubectl apply` minus server-side field validation. Here a
// validator runs on a Proxy that records which keys it reads: it reads every
// property its schema names, and every key of a map, so a key it never read
// is a field the schema does not have, and is rejected. Then the files are
// checked against each other, against the example service's contract and
// against the metrics the pool really exports. Last, broken copies of the
// files (each with one known mistake) must fail those same checks.
//
// The models are ES modules only: they are loaded with import().

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');

const DIR = path.join(__dirname, '..', 'deploy', 'kubernetes');

/** Packages with models, tried in order for `<package>/<apiVersion>/<kind>`. */
const MODEL_PACKAGES = [
  'kubernetes-models',
  '@kubernetes-models/keda',
  '@kubernetes-models/prometheus-operator',
];

/** The example service the manifests run: its source holds the contract. */
const SERVER = path.join(__dirname, '..', 'examples', 'service', 'server.js');

/** examples/service/server.js, as the manifests rely on it. */
const SERVICE = {
  name: 'tidepool-service',
  image: 'tidepool-service:0.1.0',
  uid: 1000,
  /** On the API's listener (PORT). */
  liveness: '/healthz',
  readiness: '/readyz',
  /** On the metrics listener (METRICS_PORT). */
  metrics: '/metrics',
  /** Its defaults for PORT, METRICS_PORT, SHUTDOWN_DELAY_MS, DRAIN_TIMEOUT_MS and BODY_BUDGET_MIB. */
  port: 8080,
  metricsPort: 9090,
  shutdownDelayMs: 5000,
  drainTimeoutMs: 20_000,
  bodyBudgetMiB: 256,
  /** The largest request body; the body budget must hold two. */
  maxBodyMiB: 16,
};

/** The settings server.js reads from its environment: name → [default, least value]. */
const SETTINGS = {
  PORT: [SERVICE.port, 0],
  METRICS_PORT: [SERVICE.metricsPort, 0],
  SHUTDOWN_DELAY_MS: [SERVICE.shutdownDelayMs, 0],
  DRAIN_TIMEOUT_MS: [SERVICE.drainTimeoutMs, 0],
  BODY_BUDGET_MIB: [SERVICE.bodyBudgetMiB, 2 * SERVICE.maxBodyMiB],
};

/** Memory a pod needs besides its body budget: Node, its heap and the pool. */
const BASE_MEMORY_MIB = 256;

/** Time left between the drain's deadline and SIGKILL, for closing the
 * connections left and the pool (quick: a closed connection cancels its task). */
const GRACE_MARGIN_SECONDS = 2;

/** The keys of KEDA's prometheus trigger metadata (KEDA 2.19's docs). */
const PROMETHEUS_TRIGGER_REQUIRED = ['serverAddress', 'query', 'threshold'];
const PROMETHEUS_TRIGGER_OPTIONAL = [
  'activationThreshold',
  'namespace',
  'customHeaders',
  'ignoreNullValues',
  'queryParameters',
  'unsafeSsl',
  'timeout',
  'authModes',
];

// YAML as Kubernetes reads it: YAML 1.1 (sigs.k8s.io/yaml), where `yes` and
// `on` are booleans; duplicate keys are errors.
const YAML_OPTIONS = { version: '1.1', uniqueKeys: true, prettyErrors: true };

function parseYaml(text, where) {
  const values = [];
  for (const doc of YAML.parseAllDocuments(text, YAML_OPTIONS)) {
    assert.deepEqual(doc.errors.map(String), [], `${where}: YAML errors`);
    assert.deepEqual(doc.warnings.map(String), [], `${where}: YAML warnings`);
    values.push(doc.toJS());
  }
  return values;
}

/** Every document of deploy/kubernetes/*.yaml: [{ file, value }]. */
function loadManifests() {
  const files = fs
    .readdirSync(DIR)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  const docs = [];
  for (const file of files) {
    const values = parseYaml(fs.readFileSync(path.join(DIR, file), 'utf8'), file);
    for (const value of values) {
      // An empty document (a stray `---`) is nothing to apply.
      if (value === null) continue;
      docs.push({ file, value });
    }
  }
  return docs;
}

const manifests = loadManifests();

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function describe({ file, value }) {
  return `${file}: ${value?.kind} ${value?.metadata?.name}`;
}

/** The model class for apiVersion and kind, or undefined. */
async function modelFor(apiVersion, kind) {
  // Checked before they become part of a module path.
  if (
    typeof apiVersion !== 'string' ||
    !/^(?:[a-z0-9.-]+\/)?v\d+(?:(?:alpha|beta)\d+)?$/.test(apiVersion)
  )
    return undefined;
  if (typeof kind !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(kind)) return undefined;
  for (const pkg of MODEL_PACKAGES) {
    let mod;
    try {
      mod = await import(`${pkg}/${apiVersion}/${kind}`);
    } catch (err) {
      if (err.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED' || err.code === 'ERR_MODULE_NOT_FOUND')
        continue;
      throw err;
    }
    const Model = mod[kind];
    // Only a top-level kind has these (not, say, apps/v1 DeploymentSpec).
    if (typeof Model === 'function' && Model.apiVersion === apiVersion && Model.kind === kind)
      return Model;
  }
  return undefined;
}

/** `value` behind a Proxy that records, for each object in it, the keys read. */
function tracked(value, where, seen) {
  if (value === null || typeof value !== 'object') return value;
  const read = new Set();
  seen.push({ value, where, read });
  const proxies = new Map();
  return new Proxy(value, {
    get(target, key) {
      const child = Reflect.get(target, key);
      if (typeof key !== 'string') return child;
      read.add(key);
      if (!Object.hasOwn(target, key)) return child;
      if (!proxies.has(key)) proxies.set(key, tracked(child, `${where}/${key}`, seen));
      return proxies.get(key);
    },
    has(target, key) {
      if (typeof key === 'string') read.add(key);
      return Reflect.has(target, key);
    },
  });
}

/** Runs Model's validator on `value`, and throws on any key it never read. */
function rejectUnknownFields(Model, value) {
  const seen = [];
  Model.prototype.validate.call(tracked(value, '', seen));
  const unknown = [];
  for (const { value: object, where, read } of seen) {
    if (Array.isArray(object)) continue;
    for (const key of Object.keys(object)) if (!read.has(key)) unknown.push(`${where}/${key}`);
  }
  if (unknown.length > 0)
    throw new Error(`unknown field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`);
}

/** KEDA's trigger metadata is a map of strings to its schema: its keys are checked here. */
function checkKedaTriggers(scaledObject) {
  const problems = [];
  scaledObject.spec.triggers.forEach((trigger, i) => {
    const where = `/spec/triggers/${i}/metadata`;
    if (trigger.type !== 'prometheus')
      return problems.push(`no check for KEDA trigger type ${JSON.stringify(trigger.type)}`);
    const metadata = trigger.metadata ?? {};
    const keys = Object.keys(metadata);
    for (const key of PROMETHEUS_TRIGGER_REQUIRED)
      if (!keys.includes(key)) problems.push(`missing field: ${where}/${key}`);
    for (const key of keys) {
      if (!PROMETHEUS_TRIGGER_REQUIRED.includes(key) && !PROMETHEUS_TRIGGER_OPTIONAL.includes(key))
        problems.push(`unknown field: ${where}/${key}`);
    }
    if ('threshold' in metadata && !Number.isFinite(Number(metadata.threshold)))
      problems.push(`${where}/threshold is not a number`);
    for (const flag of ['ignoreNullValues', 'unsafeSsl']) {
      if (flag in metadata && !['true', 'false'].includes(metadata[flag]))
        problems.push(`${where}/${flag} must be "true" or "false"`);
    }
  });
  if (problems.length > 0) throw new Error(problems.join('; '));
}

/** prometheus-adapter's config.yaml (no schema is published: its fields, from its docs). */
function checkAdapterConfig(config, where) {
  const problems = [];
  const only = (object, keys, at) => {
    if (!isObject(object)) return problems.push(`${at} must be an object`);
    for (const key of Object.keys(object))
      if (!keys.includes(key)) problems.push(`unknown field: ${at}/${key}`);
  };
  const text = (value, at) => {
    if (typeof value !== 'string' || value === '')
      problems.push(`${at} must be a non-empty string`);
  };
  only(config, ['rules', 'externalRules', 'resourceRules'], where);
  for (const list of ['rules', 'externalRules']) {
    if (config?.[list] === undefined) continue;
    if (!Array.isArray(config[list])) {
      problems.push(`${where}/${list} must be a list`);
      continue;
    }
    config[list].forEach((rule, i) => {
      const at = `${where}/${list}/${i}`;
      only(rule, ['seriesQuery', 'seriesFilters', 'resources', 'name', 'metricsQuery'], at);
      text(rule?.seriesQuery, `${at}/seriesQuery`);
      text(rule?.metricsQuery, `${at}/metricsQuery`);
      for (const [j, filter] of (rule?.seriesFilters ?? []).entries())
        only(filter, ['is', 'isNot'], `${at}/seriesFilters/${j}`);
      if (rule?.resources !== undefined) {
        only(
          rule.resources,
          list === 'externalRules'
            ? ['overrides', 'template', 'namespaced']
            : ['overrides', 'template'],
          `${at}/resources`,
        );
        for (const [label, target] of Object.entries(rule.resources?.overrides ?? {})) {
          only(target, ['group', 'resource'], `${at}/resources/overrides/${label}`);
          text(target?.resource, `${at}/resources/overrides/${label}/resource`);
        }
      }
      if (rule?.name !== undefined) only(rule.name, ['matches', 'as'], `${at}/name`);
    });
  }
  if (problems.length > 0) throw new Error(problems.join('; '));
}

/** The one validation path: schema, unknown fields, then what no schema covers. */
async function validateDocument({ value }) {
  if (!isObject(value)) throw new Error('a document must be a mapping');
  const Model = await modelFor(value.apiVersion, value.kind);
  if (Model === undefined)
    throw new Error(
      `no schema for ${value.apiVersion} ${value.kind}: this test does not know that kind`,
    );
  new Model(value).validate();
  rejectUnknownFields(Model, value);
  if (value.kind === 'ScaledObject') checkKedaTriggers(value);
  if (value.kind === 'ConfigMap' && value.data?.['config.yaml'] !== undefined) {
    const [config, ...rest] = parseYaml(value.data['config.yaml'], 'config.yaml');
    assert.equal(rest.length, 0, 'config.yaml holds one document');
    checkAdapterConfig(config, '/data/config.yaml');
  }
}

for (const doc of manifests) {
  test(`schema: ${describe(doc)}`, () => validateDocument(doc));
}

/** Objects that are maps (any key is valid): labels, selectors, ConfigMap data. */
function isMap(kind, where) {
  return (
    /\/(?:labels|annotations|matchLabels)$/.test(where) ||
    (kind === 'Service' && where === '/spec/selector') ||
    (kind === 'ConfigMap' && where === '/data')
  );
}

test('an added key is rejected in every object that is not a map', async () => {
  let checked = 0;
  for (const doc of manifests) {
    const objects = [];
    (function walk(value, keys) {
      if (value === null || typeof value !== 'object') return;
      if (!Array.isArray(value)) objects.push(keys);
      for (const [key, child] of Object.entries(value)) walk(child, [...keys, key]);
    })(doc.value, []);
    for (const keys of objects) {
      const where = keys.map((k) => `/${k}`).join('');
      const value = structuredClone(doc.value);
      keys.reduce((object, key) => object[key], value).zzUnknown = 'x';
      const accepted = await validateDocument({ file: doc.file, value }).then(
        () => true,
        () => false,
      );
      assert.equal(
        accepted,
        isMap(doc.value.kind, where),
        `${describe(doc)}: zzUnknown added at ${where || '/'}`,
      );
      checked++;
    }
  }
  assert.ok(checked > 50, `${checked} objects`);
});

/** A Kubernetes quantity as a number ("2" → 2, "1400m" → 1.4, "1Gi" → 2^30). */
function quantity(value) {
  if (typeof value === 'number') return value;
  const m = /^([+-]?\d+(?:\.\d+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(String(value));
  assert.ok(m, `not a quantity: ${JSON.stringify(value)}`);
  const scale = {
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
  }[m[2]];
  if (m[2] === 'm') return Number(m[1]) / 1000;
  return scale === undefined ? Number(m[1]) : Number(m[1]) * scale;
}

/** A Prometheus duration ("15s", "1m") in seconds. */
function seconds(duration) {
  const m = /^(\d+)(ms|s|m|h)$/.exec(duration);
  assert.ok(m, `not a duration: ${duration}`);
  return Number(m[1]) * { ms: 1e-3, s: 1, m: 60, h: 3600 }[m[2]];
}

// ---- Cross-checks ----
//
// Each cross-check reads a set of documents through view(), so that the same
// checks run on the files here and, at the end, on broken copies of them.

/** Checks registered with crossCheck(), for the broken copies. */
const CROSS_CHECKS = [];

/** A test of the files here, also run on every broken copy. */
function crossCheck(name, check) {
  CROSS_CHECKS.push([name, check]);
  test(name, () => check(view(manifests)));
}

/** Helpers over one set of documents ([{ file, value }]). */
function view(docs) {
  const one = (kind) => {
    const found = docs.filter((d) => d.value?.kind === kind);
    assert.equal(found.length, 1, `one ${kind} in deploy/kubernetes/, found ${found.length}`);
    return found[0].value;
  };
  const deployment = () => one('Deployment');
  const podSpec = () => deployment().spec.template.spec;
  const podLabels = () => deployment().spec.template.metadata.labels;
  const container = () => {
    assert.equal(podSpec().containers.length, 1, 'one container');
    return podSpec().containers[0];
  };
  const env = (name) => container().env?.find((e) => e.name === name);
  /** The container port a probe, the Service or the PodMonitor names, by name or number. */
  const containerPort = (ref) => {
    const port = container().ports?.find((p) => p.name === ref || p.containerPort === ref);
    assert.ok(port, `no container port ${JSON.stringify(ref)}`);
    return port;
  };
  /** A setting of the service: its env value, checked as server.js checks it, or its default. */
  const setting = (name) => {
    const [fallback, min] = SETTINGS[name];
    const entry = env(name);
    if (entry === undefined) return fallback;
    assert.equal(entry.valueFrom, undefined, `${name} needs a literal value, to be checked here`);
    const text = entry.value ?? '';
    if (text === '') return fallback;
    const value = Number(text);
    assert.ok(
      Number.isSafeInteger(value) && value >= min,
      `${name} must be a whole number ≥ ${min}, not ${JSON.stringify(text)}`,
    );
    return value;
  };
  const podMonitor = () => one('PodMonitor');
  /** The job label Prometheus gives the pods' series: the pods' label that the PodMonitor names. */
  const job = () => {
    const { jobLabel } = podMonitor().spec;
    const value = podLabels()[jobLabel];
    assert.ok(value, `the pods have no ${jobLabel} label for the job`);
    return value;
  };
  const scaledObject = () => one('ScaledObject');
  const hpa = () => one('HorizontalPodAutoscaler');
  const adapterConfig = () => parseYaml(one('ConfigMap').data['config.yaml'], 'config.yaml')[0];
  const trigger = (type) => scaledObject().spec.triggers.find((t) => t.metricType === type);

  /**
   * Every PromQL text: KEDA's queries, the adapter's series queries and
   * query templates. `source` is keda, rules or externalRules; `series` the
   * tidepool_ names it reads (for a metricsQuery, its rule's seriesQuery's).
   */
  const promql = () => {
    const out = scaledObject().spec.triggers.map((t) => ({
      where: `ScaledObject trigger ${t.name}`,
      source: 'keda',
      field: 'query',
      query: t.metadata.query,
      series: t.metadata.query.match(TIDEPOOL_NAME) ?? [],
    }));
    const config = adapterConfig();
    for (const source of ['rules', 'externalRules']) {
      for (const rule of config[source] ?? []) {
        const series = rule.seriesQuery.match(TIDEPOOL_NAME) ?? [];
        for (const field of ['seriesQuery', 'metricsQuery'])
          out.push({
            where: `adapter ${source} ${field}`,
            source,
            field,
            query: rule[field],
            series,
          });
      }
    }
    return out;
  };

  return {
    docs,
    one,
    deployment,
    podSpec,
    podLabels,
    container,
    env,
    containerPort,
    setting,
    podMonitor,
    job,
    scaledObject,
    hpa,
    adapterConfig,
    trigger,
    promql,
  };
}

function matches(selector, labels) {
  assert.ok(
    isObject(selector) && Object.keys(selector).length > 0,
    'an empty selector matches everything',
  );
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

const TIDEPOOL_NAME = /\btidepool_[A-Za-z0-9_:]*/g;

/** A PromQL label matcher on `job`, with any operator. */
const JOB_MATCHER = /\bjob\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g;

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * How each series must be aggregated, outermost: the queue age of the pod
 * where it is oldest, and the busy threads summed over the pods (a rate of
 * a counter). The autoscalers' arithmetic assumes these.
 */
const AGGREGATION = {
  tidepool_queue_oldest_age_seconds: { outer: 'max', inner: '' },
  tidepool_task_run_seconds_sum: { outer: 'sum', inner: 'rate(' },
};

/** A query of the form `f(args)`, or `f(args) by (labels)`: { name, args, grouping }, else undefined. */
function outerCall(query) {
  const head = /^\s*([A-Za-z_]\w*)\s*\(/.exec(query);
  if (!head) return undefined;
  // The same length, without the brackets of quoted strings and of the adapter's << >>.
  const bare = query.replace(/"(?:[^"\\]|\\.)*"|<<[^>]*>>/g, (s) => 'x'.repeat(s.length));
  let depth = 0;
  for (let i = head[0].length - 1; i < bare.length; i++) {
    if (bare[i] === '(') depth++;
    else if (bare[i] === ')' && --depth === 0) {
      const tail = /^\s*(?:(by|without)\s*\(([^)]*)\))?\s*$/.exec(query.slice(i + 1));
      if (!tail) return undefined;
      return {
        name: head[1],
        args: query.slice(head[0].length, i).trim(),
        grouping: tail[1] && `${tail[1]} (${tail[2].trim()})`,
      };
    }
  }
  return undefined;
}

/** The names the pool's metrics export, with histograms' _bucket, _sum and _count. */
async function exportedNames() {
  const client = require('prom-client');
  const { Pool } = require('..');
  const { collectMetrics } = require('@tidepool-rs/pool/metrics');
  const pool = new Pool();
  try {
    const registry = new client.Registry();
    collectMetrics(pool, { registry });
    const names = new Set();
    for (const metric of await registry.getMetricsAsJSON()) {
      names.add(metric.name);
      if (metric.type === 'histogram')
        for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
      for (const sample of metric.values) if (sample.metricName) names.add(sample.metricName);
    }
    return names;
  } finally {
    await pool.close();
  }
}

let exported;
/** exportedNames(), once: the broken copies ask again and again. */
const exportedOnce = () => (exported ??= exportedNames());

/** The names a prometheus-adapter rule exposes for the series names it finds. */
function exposedNames(rule) {
  const series = [...new Set(rule.seriesQuery.match(TIDEPOOL_NAME) ?? [])];
  assert.ok(series.length > 0, `no tidepool_ series in ${rule.seriesQuery}`);
  const pattern = new RegExp(rule.name?.matches ?? '.*');
  return series.map((name) => {
    const m = pattern.exec(name);
    assert.ok(m, `name.matches ${pattern} does not match ${name}`);
    const as = rule.name?.as ?? (m.length === 1 ? '$0' : '$1');
    return as.replace(/\$\{?(\d+)\}?/g, (_, i) => m[Number(i)] ?? '');
  });
}

test("SERVICE holds examples/service/server.js's defaults and routes", () => {
  const source = fs.readFileSync(SERVER, 'utf8');
  for (const [name, [fallback, min]] of Object.entries(SETTINGS)) {
    const m = new RegExp(`envInteger\\('${name}', ([\\d_]+), (\\d+)\\)`).exec(source);
    assert.ok(m, `server.js reads no ${name} with envInteger()`);
    assert.equal(Number(m[1].replaceAll('_', '')), fallback, `${name}'s default`);
    assert.equal(Number(m[2]), min, `${name}'s least value`);
  }
  assert.match(source, new RegExp(`\\bMAX_BODY_BYTES = ${SERVICE.maxBodyMiB} \\* 1024 \\* 1024;`));
  const api = /\bconst API = \{([\s\S]*?)\};/.exec(source)?.[1] ?? '';
  const internal = /\bconst INTERNAL = \{([\s\S]*?)\};/.exec(source)?.[1] ?? '';
  for (const route of [SERVICE.liveness, SERVICE.readiness])
    assert.ok(api.includes(`'${route}'`), `${route} on the API listener`);
  assert.ok(
    internal.includes(`'${SERVICE.metrics}'`),
    `${SERVICE.metrics} on the metrics listener`,
  );
  assert.ok(!api.includes(`'${SERVICE.metrics}'`), `${SERVICE.metrics} not on the API listener`);
});

crossCheck('no document sets a namespace', (m) => {
  for (const doc of m.docs) assert.equal(doc.value.metadata?.namespace, undefined, describe(doc));
});

crossCheck('the Deployment selects its own pods and runs the service image', (m) => {
  const d = m.deployment();
  assert.equal(d.metadata.name, SERVICE.name);
  assert.equal(d.metadata.labels['app.kubernetes.io/name'], SERVICE.name);
  assert.equal(m.podLabels()['app.kubernetes.io/name'], SERVICE.name);
  assert.ok(
    matches(d.spec.selector.matchLabels, m.podLabels()),
    'the selector matches the pod template',
  );
  assert.equal(m.container().image, SERVICE.image);
});

crossCheck(
  'CPU: whole cores, requests = limits (memory too), and TIDEPOOL_MAX_THREADS equal to it if set',
  (m) => {
    const { requests, limits } = m.container().resources;
    const cpu = quantity(limits.cpu);
    assert.equal(quantity(requests.cpu), cpu, 'CPU requests = limits');
    assert.ok(Number.isInteger(cpu) && cpu >= 1, `whole cores, not ${limits.cpu}`);
    // Guaranteed QoS needs memory requests = limits as well.
    assert.ok(limits.memory !== undefined, 'a memory limit');
    assert.equal(quantity(requests.memory), quantity(limits.memory), 'memory requests = limits');
    const maxThreads = m.env('TIDEPOOL_MAX_THREADS')?.value;
    if (maxThreads !== undefined)
      assert.equal(Number(maxThreads), cpu, 'TIDEPOOL_MAX_THREADS = limits.cpu');
  },
);

crossCheck('memory holds the body budget plus Node and the pool', (m) => {
  const budget = m.setting('BODY_BUDGET_MIB');
  assert.ok(
    budget >= 2 * SERVICE.maxBodyMiB,
    `BODY_BUDGET_MIB ${budget} holds two bodies of ${SERVICE.maxBodyMiB} MiB`,
  );
  const limit = m.container().resources.limits.memory;
  assert.ok(
    quantity(limit) >= (budget + BASE_MEMORY_MIB) * 2 ** 20,
    `memory limit ${limit} < BODY_BUDGET_MIB ${budget} MiB + ${BASE_MEMORY_MIB} MiB for Node and the pool`,
  );
});

crossCheck("probes use the service's routes on the named http port", (m) => {
  const c = m.container();
  assert.equal(
    m.containerPort('http').containerPort,
    m.setting('PORT'),
    'the http containerPort is PORT',
  );
  assert.equal(c.livenessProbe.httpGet.path, SERVICE.liveness);
  assert.equal(c.livenessProbe.httpGet.port, 'http');
  assert.equal(c.readinessProbe.httpGet.path, SERVICE.readiness);
  assert.equal(c.readinessProbe.httpGet.port, 'http');
  // One slow answer under load must not take a busy pod out of the Service.
  assert.ok(
    (c.readinessProbe.failureThreshold ?? 3) >= 2,
    `readiness failureThreshold ${c.readinessProbe.failureThreshold} < 2`,
  );
});

crossCheck('the grace period outlasts the shutdown delay and the drain, with a margin', (m) => {
  const delayMs = m.setting('SHUTDOWN_DELAY_MS');
  const drainMs = m.setting('DRAIN_TIMEOUT_MS');
  const grace = m.podSpec().terminationGracePeriodSeconds ?? 30;
  assert.ok(
    grace - (delayMs + drainMs) / 1000 >= GRACE_MARGIN_SECONDS,
    `terminationGracePeriodSeconds ${grace} < SHUTDOWN_DELAY_MS ${delayMs} ms + DRAIN_TIMEOUT_MS ${drainMs} ms + ${GRACE_MARGIN_SECONDS} s`,
  );
});

crossCheck('the pod runs unprivileged', (m) => {
  const pod = m.podSpec().securityContext ?? {};
  const c = m.container().securityContext ?? {};
  assert.equal(c.runAsNonRoot ?? pod.runAsNonRoot, true, 'runAsNonRoot');
  assert.equal(c.runAsUser ?? pod.runAsUser, SERVICE.uid, "the image's node user, by number");
  assert.equal(c.readOnlyRootFilesystem, true, 'readOnlyRootFilesystem');
  assert.equal(c.allowPrivilegeEscalation, false, 'allowPrivilegeEscalation');
  assert.ok(c.capabilities?.drop?.includes('ALL'), 'drops ALL capabilities');
  assert.equal(
    (c.seccompProfile ?? pod.seccompProfile)?.type,
    'RuntimeDefault',
    'seccomp RuntimeDefault',
  );
});

crossCheck('the Service exposes the named http port, never the metrics port', (m) => {
  const s = m.one('Service');
  assert.equal(s.metadata.name, SERVICE.name);
  assert.ok(matches(s.spec.selector, m.podLabels()), 'the selector matches the pod template');
  const metricsPort = m.setting('METRICS_PORT');
  for (const port of s.spec.ports) {
    // An unset targetPort is the port itself.
    const target = port.targetPort ?? port.port;
    const { name, containerPort } = m.containerPort(target);
    assert.ok(
      target !== 'metrics' &&
        target !== metricsPort &&
        name !== 'metrics' &&
        containerPort !== metricsPort,
      `Service port ${port.name ?? port.port} targets the metrics port (${JSON.stringify(target)})`,
    );
  }
  assert.equal(s.spec.ports.length, 1, 'one Service port');
  assert.equal(s.spec.ports[0].port, 80);
  assert.equal(s.spec.ports[0].targetPort, 'http', 'targets the port by name');
});

crossCheck("the PodMonitor scrapes /metrics on the pods' metrics port", (m) => {
  const pm = m.podMonitor();
  assert.ok(
    matches(pm.spec.selector.matchLabels, m.podLabels()),
    'the selector matches the pod template',
  );
  assert.equal(pm.spec.podMetricsEndpoints.length, 1);
  const endpoint = pm.spec.podMetricsEndpoints[0];
  assert.equal(endpoint.port, 'metrics', 'scrapes the container port named metrics');
  const metrics = m.containerPort('metrics');
  assert.equal(metrics.name, 'metrics', 'a container port named metrics');
  assert.equal(
    metrics.containerPort,
    m.setting('METRICS_PORT'),
    'the metrics containerPort is METRICS_PORT',
  );
  assert.notEqual(
    metrics.containerPort,
    m.containerPort('http').containerPort,
    'the API and the metrics on two ports',
  );
  assert.equal(endpoint.path, SERVICE.metrics);
  assert.equal(seconds(endpoint.interval), 10);
});

crossCheck("every query selects exactly the PodMonitor's job", (m) => {
  const job = m.job();
  const exact = new RegExp(`[{,]\\s*job\\s*=\\s*"${escapeRegExp(job)}"\\s*[,}]`);
  let own = 0;
  for (const { where, source, query } of m.promql()) {
    // KEDA's queries and the adapter's per-pod rule select the job
    // themselves; the external rule gets it from the HPA's selector.
    if (source === 'externalRules') continue;
    assert.match(query, exact, `${where} has no job="${job}" matcher: ${query}`);
    for (const [text, op, value] of query.matchAll(JOB_MATCHER)) {
      assert.ok(op === '=' && value === job, `${where}: ${text} is not job="${job}"`);
    }
    own++;
  }
  assert.ok(own >= 4, `${own} queries select the job`);
  // The external rule's own job matchers, if any, and the HPA's selector.
  for (const { where, query } of m.promql().filter((q) => q.source === 'externalRules')) {
    for (const [text, op, value] of query.matchAll(JOB_MATCHER)) {
      assert.ok(
        op === '!=' ? value === '' : op === '=' && value === job,
        `${where}: ${text} selects another job than ${job}`,
      );
    }
  }
  const external = m.hpa().spec.metrics.find((x) => x.type === 'External').external;
  assert.equal(
    external.metric.selector?.matchLabels?.job,
    job,
    `the HPA's external selector selects job="${job}"`,
  );
});

crossCheck('the autoscalers target the Deployment', (m) => {
  for (const ref of [m.scaledObject().spec.scaleTargetRef, m.hpa().spec.scaleTargetRef]) {
    assert.equal(ref.name, m.deployment().metadata.name);
    assert.equal(ref.kind ?? 'Deployment', 'Deployment');
    assert.equal(ref.apiVersion ?? 'apps/v1', 'apps/v1');
  }
});

crossCheck('every tidepool_ metric in a query is one the pool exports', async (m) => {
  const names = await exportedOnce();
  assert.ok(names.has('tidepool_queue_oldest_age_seconds'));
  const used = new Set();
  for (const { where, query } of m.promql()) {
    for (const name of query.match(TIDEPOOL_NAME) ?? []) {
      assert.ok(names.has(name), `${where}: ${name} is not exported (${[...names].join(', ')})`);
      used.add(name);
    }
  }
  assert.ok(
    used.has('tidepool_queue_oldest_age_seconds') && used.has('tidepool_task_run_seconds_sum'),
    [...used].join(', '),
  );
});

crossCheck('queries are well formed and their rate windows span 4 scrapes', (m) => {
  const scrape = seconds(m.podMonitor().spec.podMetricsEndpoints[0].interval);
  for (const { where, query } of m.promql()) {
    // Brackets balance, outside quoted strings and the adapter's << >>.
    const bare = query.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/<<[^>]*>>/g, 'x');
    const stack = [];
    for (const ch of bare) {
      if ('({['.includes(ch)) stack.push(')}]'['({['.indexOf(ch)]);
      else if (')}]'.includes(ch)) assert.equal(stack.pop(), ch, `${where}: unbalanced ${query}`);
    }
    assert.equal(stack.length, 0, `${where}: unbalanced ${query}`);
    for (const [, window] of query.matchAll(/\[([^\]]+)\]/g)) {
      assert.ok(
        seconds(window) >= 4 * scrape,
        `${where}: rate window ${window} is under 4 scrapes of ${scrape} s`,
      );
    }
  }
});

crossCheck('queue age aggregates with max(, busy threads with sum(rate(', (m) => {
  let checked = 0;
  for (const { where, source, field, query, series } of m.promql()) {
    if (field === 'seriesQuery') continue;
    const names = [...new Set(series)];
    assert.equal(names.length, 1, `${where} reads one series: ${names.join(', ')}`);
    const { outer, inner } =
      AGGREGATION[names[0]] ?? assert.fail(`${where}: no aggregation known for ${names[0]}`);
    const call = outerCall(query);
    const operand = source === 'keda' ? names[0] : '<<.Series>>';
    assert.ok(
      call?.name === outer && call.args.startsWith(`${inner}${operand}{`),
      `${where} must aggregate with ${outer}(${inner}${operand}{...}): ${query}`,
    );
    // KEDA and an External metric want one number; the per-pod rule groups by pod.
    if (source === 'rules')
      assert.equal(call.grouping, 'by (<<.GroupBy>>)', `${where} groups by <<.GroupBy>>: ${query}`);
    else
      assert.equal(
        call.grouping,
        undefined,
        `${where} must return one series, not ${call.grouping}: ${query}`,
      );
    checked++;
  }
  assert.equal(checked, 4);
});

crossCheck('KEDA treats no data as an error, not as 0', (m) => {
  for (const t of m.scaledObject().spec.triggers) {
    const value = t.metadata.ignoreNullValues;
    assert.equal(
      value,
      'false',
      `trigger ${t.name}: ignoreNullValues is ${JSON.stringify(value)}, not "false"`,
    );
  }
});

crossCheck("the HPA's metrics are the ones prometheus-adapter's rules expose", (m) => {
  const config = m.adapterConfig();
  const custom = config.rules.flatMap(exposedNames);
  const external = config.externalRules.flatMap(exposedNames);
  for (const metric of m.hpa().spec.metrics) {
    if (metric.type === 'Pods')
      assert.ok(
        custom.includes(metric.pods.metric.name),
        `${metric.pods.metric.name} not in ${custom}`,
      );
    else if (metric.type === 'External') {
      assert.ok(
        external.includes(metric.external.metric.name),
        `${metric.external.metric.name} not in ${external}`,
      );
    } else assert.fail(`no check for HPA metric type ${metric.type}`);
  }
  // The Pods rule is per pod: it maps the pod and namespace labels, and its
  // query takes the adapter's matchers (that pod, that namespace).
  for (const rule of config.rules) {
    assert.equal(rule.resources.overrides.pod?.resource, 'pod');
    assert.equal(rule.resources.overrides.namespace?.resource, 'namespace');
    assert.ok(
      rule.metricsQuery.includes('<<.LabelMatchers>>'),
      `adapter rules metricsQuery lacks <<.LabelMatchers>>: ${rule.metricsQuery}`,
    );
  }
  // The External rule maps the namespace label, so that an HPA reads its
  // own namespace's pods; without it the metric spans the whole cluster.
  for (const rule of config.externalRules) {
    assert.equal(
      rule.resources?.overrides?.namespace?.resource,
      'namespace',
      'adapter externalRules: no namespace override, so the metric would be cluster-wide',
    );
    assert.notEqual(
      rule.resources.namespaced,
      false,
      'adapter externalRules: namespaced: false makes the metric cluster-wide',
    );
    assert.ok(
      rule.metricsQuery.includes('<<.LabelMatchers>>'),
      `adapter externalRules metricsQuery lacks <<.LabelMatchers>>: ${rule.metricsQuery}`,
    );
  }
});

crossCheck('KEDA and the HPA scale on the same series, thresholds, bounds and behavior', (m) => {
  const so = m.scaledObject().spec;
  const h = m.hpa().spec;
  const queueAge = m.trigger('Value');
  const busy = m.trigger('AverageValue');
  assert.equal(so.triggers.length, 2);
  assert.ok(queueAge && busy, 'one Value and one AverageValue trigger');
  const external = h.metrics.find((x) => x.type === 'External').external;
  const pods = h.metrics.find((x) => x.type === 'Pods').pods;
  assert.equal(h.metrics.length, 2);

  assert.deepEqual(queueAge.metadata.query.match(TIDEPOOL_NAME), [
    'tidepool_queue_oldest_age_seconds',
  ]);
  assert.deepEqual(busy.metadata.query.match(TIDEPOOL_NAME), ['tidepool_task_run_seconds_sum']);
  const config = m.adapterConfig();
  assert.deepEqual(
    config.externalRules[0].seriesQuery.match(TIDEPOOL_NAME),
    queueAge.metadata.query.match(TIDEPOOL_NAME),
  );
  assert.deepEqual(
    config.rules[0].seriesQuery.match(TIDEPOOL_NAME),
    busy.metadata.query.match(TIDEPOOL_NAME),
  );

  assert.equal(external.target.type, 'Value');
  assert.equal(quantity(external.target.value), Number(queueAge.metadata.threshold));
  assert.equal(Number(queueAge.metadata.threshold), 0.5);
  assert.equal(pods.target.type, 'AverageValue');
  assert.equal(quantity(pods.target.averageValue), Number(busy.metadata.threshold));

  // The busy-threads target is per pod, so below the threads a pod has.
  const threads = quantity(m.container().resources.limits.cpu);
  assert.ok(
    Number(busy.metadata.threshold) > 0 && Number(busy.metadata.threshold) < threads,
    `busy threads target under ${threads}`,
  );

  assert.equal(so.minReplicaCount, 2);
  assert.equal(so.maxReplicaCount, 20);
  assert.equal(h.minReplicas, so.minReplicaCount);
  assert.equal(h.maxReplicas, so.maxReplicaCount);
  assert.equal(
    so.pollingInterval,
    seconds(m.podMonitor().spec.podMetricsEndpoints[0].interval),
    'polled once per scrape',
  );
  assert.deepEqual(h.behavior, so.advanced.horizontalPodAutoscalerConfig.behavior);
  assert.equal(h.behavior.scaleUp.stabilizationWindowSeconds, 0);
  assert.equal(h.behavior.scaleDown.stabilizationWindowSeconds, 300);
});

// ---- Broken copies ----

/** The documents, with a copy of the one of `kind` changed by `mutate`. */
function mutant(kind, mutate) {
  const found = manifests.filter((d) => d.value.kind === kind);
  assert.equal(found.length, 1, `one ${kind} to mutate`);
  const value = structuredClone(found[0].value);
  mutate(value);
  return manifests.map((d) => (d === found[0] ? { file: d.file, value } : d));
}

/** Every problem in a set of documents: schema errors, then failed cross-checks. */
async function problemsIn(docs) {
  const problems = [];
  for (const doc of docs) {
    await validateDocument(doc).catch((err) => problems.push(`${describe(doc)}: ${err.message}`));
  }
  for (const [name, check] of CROSS_CHECKS) {
    try {
      await check(view(docs));
    } catch (err) {
      problems.push(`${name}: ${err.message}`);
    }
  }
  return problems;
}

const theContainer = (d) => d.spec.template.spec.containers[0];
const setEnv = (name, value) => (d) =>
  (theContainer(d).env.find((e) => e.name === name).value = value);
const kedaQuery = (type, edit) => (d) => {
  const { metadata } = d.spec.triggers.find((t) => t.metricType === type);
  metadata.query = edit(metadata.query);
};
/** Edits the adapter's config.yaml as data (its comments are lost, which is no matter here). */
const adapterRules = (edit) => (d) => {
  const config = YAML.parse(d.data['config.yaml']);
  edit(config);
  d.data['config.yaml'] = YAML.stringify(config);
};

const MUTANTS = [
  // Schema and unknown fields.
  [
    'a typo in a field name',
    'Deployment',
    (d) => (d.spec.replicaz = 2),
    /unknown field: \/spec\/replicaz$/,
  ],
  [
    'a wrong type',
    'Deployment',
    (d) => (theContainer(d).resources.limits.cpu = true),
    /limits\/cpu must be/,
  ],
  [
    'a typo deep in the pod template',
    'Deployment',
    (d) => (theContainer(d).readinessProbe.httpGet.paht = '/readyz'),
    /unknown field: \/spec\/template\/spec\/containers\/0\/readinessProbe\/httpGet\/paht$/,
  ],
  [
    'an unknown kind',
    'Deployment',
    (d) => (d.kind = 'Deploymnet'),
    /no schema for apps\/v1 Deploymnet/,
  ],
  ['an unknown apiVersion', 'Service', (d) => (d.apiVersion = 'v2'), /no schema for v2 Service/],
  [
    'a kind in the wrong group',
    'PodMonitor',
    (d) => (d.apiVersion = 'keda.sh/v1alpha1'),
    /no schema/,
  ],
  [
    'a typo in a Service port',
    'Service',
    (d) => (d.spec.ports[0].targetport = 8080),
    /unknown field: \/spec\/ports\/0\/targetport$/,
  ],
  [
    'a typo in a ScaledObject',
    'ScaledObject',
    (d) => (d.spec.minReplicaCounts = 2),
    /unknown field: \/spec\/minReplicaCounts$/,
  ],
  [
    'a number for a KEDA threshold',
    'ScaledObject',
    (d) => (d.spec.triggers[0].metadata.threshold = 0.5),
    /threshold must be string/,
  ],
  [
    'a typo in KEDA trigger metadata',
    'ScaledObject',
    (d) => {
      const { metadata } = d.spec.triggers[0];
      metadata.serverAdress = metadata.serverAddress;
      delete metadata.serverAddress;
    },
    /missing field: \/spec\/triggers\/0\/metadata\/serverAddress; unknown field: \/spec\/triggers\/0\/metadata\/serverAdress/,
  ],
  [
    'a typo in a PodMonitor',
    'PodMonitor',
    (d) => (d.spec.podMetricsEndpoints[0].intervall = '15s'),
    /unknown field: .*\/intervall$/,
  ],
  [
    'a typo in HPA behavior',
    'HorizontalPodAutoscaler',
    (d) => (d.spec.behavior.scaleUp.polices = []),
    /unknown field: .*\/polices$/,
  ],
  [
    'a bad HPA target type',
    'HorizontalPodAutoscaler',
    (d) => (d.spec.metrics[0].external.target.value = true),
    /must be/,
  ],
  [
    'a typo in metadata',
    'ConfigMap',
    (d) => (d.metadata.lables = {}),
    /unknown field: \/metadata\/lables$/,
  ],
  [
    'a typo in an adapter rule',
    'ConfigMap',
    (d) => (d.data['config.yaml'] = d.data['config.yaml'].replace('metricsQuery:', 'metricQuery:')),
    /unknown field: \/data\/config.yaml\/rules\/0\/metricQuery/,
  ],

  // Ports, shutdown and memory against the service.
  [
    'a Service port for the metrics',
    'Service',
    (d) =>
      d.spec.ports.push({ name: 'metrics', port: 9090, targetPort: 'metrics', protocol: 'TCP' }),
    /Service port metrics targets the metrics port/,
  ],
  [
    'a Service port targeting 9090',
    'Service',
    (d) => (d.spec.ports[0].targetPort = 9090),
    /Service port http targets the metrics port/,
  ],
  [
    'a PodMonitor scraping the API port',
    'PodMonitor',
    (d) => (d.spec.podMetricsEndpoints[0].port = 'http'),
    /scrapes the container port named metrics/,
  ],
  [
    'METRICS_PORT apart from the metrics containerPort',
    'Deployment',
    setEnv('METRICS_PORT', '9091'),
    /the metrics containerPort is METRICS_PORT/,
  ],
  [
    'memory 64Mi',
    'Deployment',
    (d) => {
      const { resources } = theContainer(d);
      resources.requests.memory = resources.limits.memory = '64Mi';
    },
    /memory limit 64Mi < BODY_BUDGET_MIB 256 MiB/,
  ],
  [
    'terminationGracePeriodSeconds 8',
    'Deployment',
    (d) => (d.spec.template.spec.terminationGracePeriodSeconds = 8),
    /terminationGracePeriodSeconds 8 < /,
  ],
  [
    'DRAIN_TIMEOUT_MS past the grace period',
    'Deployment',
    setEnv('DRAIN_TIMEOUT_MS', '30000'),
    /terminationGracePeriodSeconds 30 < SHUTDOWN_DELAY_MS 5000 ms \+ DRAIN_TIMEOUT_MS 30000 ms/,
  ],
  [
    'a drain timeout the service refuses',
    'Deployment',
    setEnv('DRAIN_TIMEOUT_MS', '20s'),
    /DRAIN_TIMEOUT_MS must be a whole number/,
  ],
  [
    'a readiness probe that fails at once',
    'Deployment',
    (d) => (theContainer(d).readinessProbe.failureThreshold = 1),
    /readiness failureThreshold 1 < 2/,
  ],

  // PromQL.
  [
    'a KEDA query with job!=""',
    'ScaledObject',
    kedaQuery('Value', (q) => q.replace('job="tidepool-service"', 'job!=""')),
    /ScaledObject trigger queue-age has no job="tidepool-service" matcher/,
  ],
  [
    'a KEDA query with job=~".+"',
    'ScaledObject',
    kedaQuery('AverageValue', (q) => q.replace('job="tidepool-service"', 'job=~".+"')),
    /ScaledObject trigger busy-threads has no job="tidepool-service" matcher/,
  ],
  [
    'a KEDA query with a second job matcher',
    'ScaledObject',
    kedaQuery('Value', (q) =>
      q.replace('job="tidepool-service"', 'job="tidepool-service",job=~".+"'),
    ),
    /job=~".\+" is not job="tidepool-service"/,
  ],
  [
    'a KEDA queue-age query with avg(',
    'ScaledObject',
    kedaQuery('Value', (q) => q.replace(/^max\(/, 'avg(')),
    /queue-age must aggregate with max\(/,
  ],
  [
    'a KEDA busy query with irate(',
    'ScaledObject',
    kedaQuery('AverageValue', (q) => q.replace('rate(', 'irate(')),
    /busy-threads must aggregate with sum\(rate\(/,
  ],
  [
    'a KEDA query grouped by pod',
    'ScaledObject',
    kedaQuery('AverageValue', (q) => `${q} by (pod)`),
    /busy-threads must return one series/,
  ],
  [
    'an adapter queue-age query with sum(',
    'ConfigMap',
    adapterRules(
      (c) =>
        (c.externalRules[0].metricsQuery = c.externalRules[0].metricsQuery.replace('max(', 'sum(')),
    ),
    /adapter externalRules metricsQuery must aggregate with max\(/,
  ],
  [
    'an adapter busy query with avg(',
    'ConfigMap',
    adapterRules(
      (c) => (c.rules[0].metricsQuery = c.rules[0].metricsQuery.replace('sum(', 'avg(')),
    ),
    /adapter rules metricsQuery must aggregate with sum\(rate\(/,
  ],
  [
    'an adapter custom rule without <<.LabelMatchers>>',
    'ConfigMap',
    adapterRules(
      (c) => (c.rules[0].metricsQuery = c.rules[0].metricsQuery.replace('<<.LabelMatchers>>,', '')),
    ),
    /adapter rules metricsQuery lacks <<\.LabelMatchers>>/,
  ],
  [
    'an adapter external rule without the namespace override',
    'ConfigMap',
    adapterRules((c) => delete c.externalRules[0].resources.overrides.namespace),
    /no namespace override, so the metric would be cluster-wide/,
  ],
  [
    'KEDA ignoring null values',
    'ScaledObject',
    (d) => (d.spec.triggers[0].metadata.ignoreNullValues = 'true'),
    /ignoreNullValues is "true", not "false"/,
  ],
];

test('the same checks reject broken copies', async (t) => {
  assert.deepEqual(await problemsIn(manifests), [], 'the files as they are pass');
  for (const [what, kind, mutate, expected] of MUTANTS) {
    await t.test(what, async () => {
      const problems = await problemsIn(mutant(kind, mutate));
      assert.ok(
        problems.some((p) => expected.test(p)),
        `nothing matches ${expected}; the problems:\n${problems.join('\n') || '(none)'}`,
      );
    });
  }
});
