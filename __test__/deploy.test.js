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
// against the metrics the pool really exports.
//
// The models are ES modules only: they are loaded with import().

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const YAML = require('yaml');

const DIR = path.join(__dirname, '..', 'deploy', 'kubernetes');

/** Packages with models, tried in order for `<package>/<apiVersion>/<kind>`. */
const MODEL_PACKAGES = ['kubernetes-models', '@kubernetes-models/keda', '@kubernetes-models/prometheus-operator'];

/** examples/service/server.js, as the manifests rely on it. */
const SERVICE = {
  name: 'tidepool-service',
  image: 'tidepool-service:0.1.0',
  uid: 1000,
  liveness: '/healthz',
  readiness: '/readyz',
  metrics: '/metrics',
  /** Its default PORT and SHUTDOWN_DELAY_MS. */
  port: 8080,
  shutdownDelayMs: 5000,
};

/** The longest single task: gzip of a 16 MiB body (the service's largest)
 * of random bytes took 1.1 s on one core here; 2 s leaves a margin. */
const LONGEST_TASK_SECONDS = 2;

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
  if (typeof apiVersion !== 'string' || !/^(?:[a-z0-9.-]+\/)?v\d+(?:(?:alpha|beta)\d+)?$/.test(apiVersion)) return undefined;
  if (typeof kind !== 'string' || !/^[A-Z][A-Za-z0-9]*$/.test(kind)) return undefined;
  for (const pkg of MODEL_PACKAGES) {
    let mod;
    try {
      mod = await import(`${pkg}/${apiVersion}/${kind}`);
    } catch (err) {
      if (err.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED' || err.code === 'ERR_MODULE_NOT_FOUND') continue;
      throw err;
    }
    const Model = mod[kind];
    // Only a top-level kind has these (not, say, apps/v1 DeploymentSpec).
    if (typeof Model === 'function' && Model.apiVersion === apiVersion && Model.kind === kind) return Model;
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
  if (unknown.length > 0) throw new Error(`unknown field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`);
}

/** KEDA's trigger metadata is a map of strings to its schema: its keys are checked here. */
function checkKedaTriggers(scaledObject) {
  const problems = [];
  scaledObject.spec.triggers.forEach((trigger, i) => {
    const where = `/spec/triggers/${i}/metadata`;
    if (trigger.type !== 'prometheus') return problems.push(`no check for KEDA trigger type ${JSON.stringify(trigger.type)}`);
    const metadata = trigger.metadata ?? {};
    const keys = Object.keys(metadata);
    for (const key of PROMETHEUS_TRIGGER_REQUIRED) if (!keys.includes(key)) problems.push(`missing field: ${where}/${key}`);
    for (const key of keys) {
      if (!PROMETHEUS_TRIGGER_REQUIRED.includes(key) && !PROMETHEUS_TRIGGER_OPTIONAL.includes(key))
        problems.push(`unknown field: ${where}/${key}`);
    }
    if ('threshold' in metadata && !Number.isFinite(Number(metadata.threshold))) problems.push(`${where}/threshold is not a number`);
    for (const flag of ['ignoreNullValues', 'unsafeSsl']) {
      if (flag in metadata && !['true', 'false'].includes(metadata[flag])) problems.push(`${where}/${flag} must be "true" or "false"`);
    }
  });
  if (problems.length > 0) throw new Error(problems.join('; '));
}

/** prometheus-adapter's config.yaml (no schema is published: its fields, from its docs). */
function checkAdapterConfig(config, where) {
  const problems = [];
  const only = (object, keys, at) => {
    if (!isObject(object)) return problems.push(`${at} must be an object`);
    for (const key of Object.keys(object)) if (!keys.includes(key)) problems.push(`unknown field: ${at}/${key}`);
  };
  const text = (value, at) => {
    if (typeof value !== 'string' || value === '') problems.push(`${at} must be a non-empty string`);
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
      for (const [j, filter] of (rule?.seriesFilters ?? []).entries()) only(filter, ['is', 'isNot'], `${at}/seriesFilters/${j}`);
      if (rule?.resources !== undefined) {
        only(
          rule.resources,
          list === 'externalRules' ? ['overrides', 'template', 'namespaced'] : ['overrides', 'template'],
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
  if (Model === undefined) throw new Error(`no schema for ${value.apiVersion} ${value.kind}: this test does not know that kind`);
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

/** A copy of the one document of `kind`, changed by `mutate`. */
function mutant(kind, mutate) {
  const doc = manifests.find((d) => d.value.kind === kind);
  assert.ok(doc, `no ${kind} to mutate`);
  const value = structuredClone(doc.value);
  mutate(value);
  return { file: doc.file, value };
}

const MUTANTS = [
  ['a typo in a field name', 'Deployment', (d) => (d.spec.replicaz = 2), /unknown field: \/spec\/replicaz$/],
  ['a wrong type', 'Deployment', (d) => (d.spec.template.spec.containers[0].resources.limits.cpu = true), /limits\/cpu must be/],
  [
    'a typo deep in the pod template',
    'Deployment',
    (d) => (d.spec.template.spec.containers[0].readinessProbe.httpGet.paht = '/readyz'),
    /unknown field: \/spec\/template\/spec\/containers\/0\/readinessProbe\/httpGet\/paht$/,
  ],
  ['an unknown kind', 'Deployment', (d) => (d.kind = 'Deploymnet'), /no schema for apps\/v1 Deploymnet/],
  ['an unknown apiVersion', 'Service', (d) => (d.apiVersion = 'v2'), /no schema for v2 Service/],
  ['a kind in the wrong group', 'PodMonitor', (d) => (d.apiVersion = 'keda.sh/v1alpha1'), /no schema/],
  ['a typo in a Service port', 'Service', (d) => (d.spec.ports[0].targetport = 8080), /unknown field: \/spec\/ports\/0\/targetport$/],
  ['a typo in a ScaledObject', 'ScaledObject', (d) => (d.spec.minReplicaCounts = 2), /unknown field: \/spec\/minReplicaCounts$/],
  ['a number for a KEDA threshold', 'ScaledObject', (d) => (d.spec.triggers[0].metadata.threshold = 0.5), /threshold must be string/],
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
  ['a typo in a PodMonitor', 'PodMonitor', (d) => (d.spec.podMetricsEndpoints[0].intervall = '15s'), /unknown field: .*\/intervall$/],
  ['a typo in HPA behavior', 'HorizontalPodAutoscaler', (d) => (d.spec.behavior.scaleUp.polices = []), /unknown field: .*\/polices$/],
  ['a bad HPA target type', 'HorizontalPodAutoscaler', (d) => (d.spec.metrics[0].external.target.value = true), /must be/],
  ['a typo in metadata', 'ConfigMap', (d) => (d.metadata.lables = {}), /unknown field: \/metadata\/lables$/],
  [
    'a typo in an adapter rule',
    'ConfigMap',
    (d) => (d.data['config.yaml'] = d.data['config.yaml'].replace('metricsQuery:', 'metricQuery:')),
    /unknown field: \/data\/config.yaml\/rules\/0\/metricQuery/,
  ],
];

test('the same validation rejects broken copies', async (t) => {
  for (const [what, kind, mutate, expected] of MUTANTS) {
    await t.test(what, () => assert.rejects(validateDocument(mutant(kind, mutate)), expected));
  }
});

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
      assert.equal(accepted, isMap(doc.value.kind, where), `${describe(doc)}: zzUnknown added at ${where || '/'}`);
      checked++;
    }
  }
  assert.ok(checked > 50, `${checked} objects`);
});

// ---- Cross-checks ----

function one(kind) {
  const found = manifests.filter((d) => d.value.kind === kind);
  assert.equal(found.length, 1, `one ${kind} in deploy/kubernetes/, found ${found.length}`);
  return found[0].value;
}

/** A Kubernetes quantity as a number ("2" → 2, "1400m" → 1.4, "1Gi" → 2^30). */
function quantity(value) {
  if (typeof value === 'number') return value;
  const m = /^([+-]?\d+(?:\.\d+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(String(value));
  assert.ok(m, `not a quantity: ${JSON.stringify(value)}`);
  const scale = { k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 }[m[2]];
  if (m[2] === 'm') return Number(m[1]) / 1000;
  return scale === undefined ? Number(m[1]) : Number(m[1]) * scale;
}

/** A Prometheus duration ("15s", "1m") in seconds. */
function seconds(duration) {
  const m = /^(\d+)(ms|s|m|h)$/.exec(duration);
  assert.ok(m, `not a duration: ${duration}`);
  return Number(m[1]) * { ms: 1e-3, s: 1, m: 60, h: 3600 }[m[2]];
}

function env(container, name) {
  return container.env?.find((e) => e.name === name)?.value;
}

const deployment = () => one('Deployment');
const podSpec = () => deployment().spec.template.spec;
const podLabels = () => deployment().spec.template.metadata.labels;
const container = () => {
  assert.equal(podSpec().containers.length, 1, 'one container');
  return podSpec().containers[0];
};

/** The container port a probe or Service names, by name or number. */
function containerPort(ref) {
  const port = container().ports.find((p) => p.name === ref || p.containerPort === ref);
  assert.ok(port, `no container port ${JSON.stringify(ref)}`);
  return port;
}

function matches(selector, labels) {
  assert.ok(isObject(selector) && Object.keys(selector).length > 0, 'an empty selector matches everything');
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

const scaledObject = () => one('ScaledObject');
const hpa = () => one('HorizontalPodAutoscaler');
const adapterConfig = () => parseYaml(one('ConfigMap').data['config.yaml'], 'config.yaml')[0];
const trigger = (type) => scaledObject().spec.triggers.find((t) => t.metricType === type);

/** Every PromQL text: KEDA's queries, the adapter's series queries and query templates. */
function promql() {
  const out = scaledObject().spec.triggers.map((t) => ({ where: `ScaledObject trigger ${t.name}`, query: t.metadata.query }));
  const config = adapterConfig();
  for (const list of ['rules', 'externalRules']) {
    for (const rule of config[list] ?? []) {
      out.push({ where: `adapter ${list} seriesQuery`, query: rule.seriesQuery });
      out.push({ where: `adapter ${list} metricsQuery`, query: rule.metricsQuery });
    }
  }
  return out;
}

const TIDEPOOL_NAME = /\btidepool_[A-Za-z0-9_:]*/g;

/** The names the pool's metrics export, with histograms' _bucket, _sum and _count. */
async function exportedNames() {
  const client = require('prom-client');
  const { Pool } = require('..');
  const { collectMetrics } = require('tidepool/metrics');
  const pool = new Pool();
  try {
    const registry = new client.Registry();
    collectMetrics(pool, { registry });
    const names = new Set();
    for (const metric of await registry.getMetricsAsJSON()) {
      names.add(metric.name);
      if (metric.type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
      for (const sample of metric.values) if (sample.metricName) names.add(sample.metricName);
    }
    return names;
  } finally {
    await pool.close();
  }
}

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

test('no document sets a namespace', () => {
  for (const doc of manifests) assert.equal(doc.value.metadata?.namespace, undefined, describe(doc));
});

test('the Deployment selects its own pods and runs the service image', () => {
  const d = deployment();
  assert.equal(d.metadata.name, SERVICE.name);
  assert.equal(d.metadata.labels['app.kubernetes.io/name'], SERVICE.name);
  assert.equal(podLabels()['app.kubernetes.io/name'], SERVICE.name);
  assert.ok(matches(d.spec.selector.matchLabels, podLabels()), 'the selector matches the pod template');
  assert.equal(container().image, SERVICE.image);
});

test('CPU: whole cores, requests = limits (memory too), and TIDEPOOL_MAX_THREADS equal to it if set', () => {
  const { requests, limits } = container().resources;
  const cpu = quantity(limits.cpu);
  assert.equal(quantity(requests.cpu), cpu, 'CPU requests = limits');
  assert.ok(Number.isInteger(cpu) && cpu >= 1, `whole cores, not ${limits.cpu}`);
  // Guaranteed QoS needs memory requests = limits as well.
  assert.ok(limits.memory !== undefined, 'a memory limit');
  assert.equal(quantity(requests.memory), quantity(limits.memory), 'memory requests = limits');
  const maxThreads = env(container(), 'TIDEPOOL_MAX_THREADS');
  if (maxThreads !== undefined) assert.equal(Number(maxThreads), cpu, 'TIDEPOOL_MAX_THREADS = limits.cpu');
});

test("probes use the service's routes on the named http port", () => {
  const c = container();
  const http = containerPort('http');
  assert.equal(http.containerPort, Number(env(c, 'PORT') ?? SERVICE.port), 'containerPort is the port the service listens on');
  assert.equal(c.livenessProbe.httpGet.path, SERVICE.liveness);
  assert.equal(c.livenessProbe.httpGet.port, 'http');
  assert.equal(c.readinessProbe.httpGet.path, SERVICE.readiness);
  assert.equal(c.readinessProbe.httpGet.port, 'http');
});

test('the grace period outlasts the not-ready delay and the longest task', () => {
  const delayMs = Number(env(container(), 'SHUTDOWN_DELAY_MS') ?? SERVICE.shutdownDelayMs);
  const grace = podSpec().terminationGracePeriodSeconds ?? 30;
  assert.ok(
    grace > delayMs / 1000 + LONGEST_TASK_SECONDS,
    `terminationGracePeriodSeconds ${grace} ≤ ${delayMs} ms + ${LONGEST_TASK_SECONDS} s`,
  );
});

test('the pod runs unprivileged', () => {
  const pod = podSpec().securityContext ?? {};
  const c = container().securityContext ?? {};
  assert.equal(c.runAsNonRoot ?? pod.runAsNonRoot, true, 'runAsNonRoot');
  assert.equal(c.runAsUser ?? pod.runAsUser, SERVICE.uid, "the image's node user, by number");
  assert.equal(c.readOnlyRootFilesystem, true, 'readOnlyRootFilesystem');
  assert.equal(c.allowPrivilegeEscalation, false, 'allowPrivilegeEscalation');
  assert.ok(c.capabilities?.drop?.includes('ALL'), 'drops ALL capabilities');
  assert.equal((c.seccompProfile ?? pod.seccompProfile)?.type, 'RuntimeDefault', 'seccomp RuntimeDefault');
});

test('the Service targets the named port of the pods', () => {
  const s = one('Service');
  assert.equal(s.metadata.name, SERVICE.name);
  assert.ok(matches(s.spec.selector, podLabels()), 'the selector matches the pod template');
  assert.equal(s.spec.ports.length, 1);
  assert.equal(s.spec.ports[0].port, 80);
  assert.equal(s.spec.ports[0].targetPort, 'http', 'targets the port by name');
  containerPort(s.spec.ports[0].targetPort);
});

test("the PodMonitor scrapes the service's /metrics and sets the job label the queries use", () => {
  const pm = one('PodMonitor');
  assert.ok(matches(pm.spec.selector.matchLabels, podLabels()), 'the selector matches the pod template');
  assert.equal(pm.spec.podMetricsEndpoints.length, 1);
  const endpoint = pm.spec.podMetricsEndpoints[0];
  assert.equal(endpoint.port, 'http');
  containerPort(endpoint.port);
  assert.equal(endpoint.path, SERVICE.metrics);
  assert.equal(seconds(endpoint.interval), 10);
  const job = podLabels()[pm.spec.jobLabel];
  assert.ok(job, `the pods have no ${pm.spec.jobLabel} label for the job`);
  const selectors = [];
  for (const { where, query } of promql()) {
    for (const [, value] of query.matchAll(/\bjob="([^"]*)"/g)) selectors.push({ where, value });
  }
  selectors.push({
    where: 'HPA external selector',
    value: hpa().spec.metrics.find((m) => m.type === 'External').external.metric.selector.matchLabels.job,
  });
  assert.ok(selectors.length >= 3);
  for (const { where, value } of selectors) assert.equal(value, job, `${where} selects job="${value}"`);
});

test('the autoscalers target the Deployment', () => {
  for (const ref of [scaledObject().spec.scaleTargetRef, hpa().spec.scaleTargetRef]) {
    assert.equal(ref.name, deployment().metadata.name);
    assert.equal(ref.kind ?? 'Deployment', 'Deployment');
    assert.equal(ref.apiVersion ?? 'apps/v1', 'apps/v1');
  }
});

test('every tidepool_ metric in a query is one the pool exports', async () => {
  const exported = await exportedNames();
  assert.ok(exported.has('tidepool_queue_oldest_age_seconds'));
  const used = new Set();
  for (const { where, query } of promql()) {
    for (const name of query.match(TIDEPOOL_NAME) ?? []) {
      assert.ok(exported.has(name), `${where}: ${name} is not exported (${[...exported].join(', ')})`);
      used.add(name);
    }
  }
  assert.ok(used.has('tidepool_queue_oldest_age_seconds') && used.has('tidepool_task_run_seconds_sum'), [...used].join(', '));
});

test('queries are well formed and their rate windows span 4 scrapes', () => {
  const scrape = seconds(one('PodMonitor').spec.podMetricsEndpoints[0].interval);
  for (const { where, query } of promql()) {
    // Brackets balance, outside quoted strings and the adapter's << >>.
    const bare = query.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/<<[^>]*>>/g, 'x');
    const stack = [];
    for (const ch of bare) {
      if ('({['.includes(ch)) stack.push(')}]'['({['.indexOf(ch)]);
      else if (')}]'.includes(ch)) assert.equal(stack.pop(), ch, `${where}: unbalanced ${query}`);
    }
    assert.equal(stack.length, 0, `${where}: unbalanced ${query}`);
    for (const [, window] of query.matchAll(/\[([^\]]+)\]/g)) {
      assert.ok(seconds(window) >= 4 * scrape, `${where}: rate window ${window} is under 4 scrapes of ${scrape} s`);
    }
  }
});

test("the HPA's metrics are the ones prometheus-adapter's rules expose", () => {
  const config = adapterConfig();
  const custom = config.rules.flatMap(exposedNames);
  const external = config.externalRules.flatMap(exposedNames);
  for (const metric of hpa().spec.metrics) {
    if (metric.type === 'Pods') assert.ok(custom.includes(metric.pods.metric.name), `${metric.pods.metric.name} not in ${custom}`);
    else if (metric.type === 'External') {
      assert.ok(external.includes(metric.external.metric.name), `${metric.external.metric.name} not in ${external}`);
    } else assert.fail(`no check for HPA metric type ${metric.type}`);
  }
  // The Pods rule is per pod: it must map the pod and namespace labels.
  for (const rule of config.rules) {
    assert.equal(rule.resources.overrides.pod?.resource, 'pod');
    assert.equal(rule.resources.overrides.namespace?.resource, 'namespace');
    assert.match(rule.metricsQuery, /by \(<<\.GroupBy>>\)/);
  }
});

test('KEDA and the HPA scale on the same series, thresholds, bounds and behavior', () => {
  const so = scaledObject().spec;
  const h = hpa().spec;
  const queueAge = trigger('Value');
  const busy = trigger('AverageValue');
  assert.equal(so.triggers.length, 2);
  assert.ok(queueAge && busy, 'one Value and one AverageValue trigger');
  const external = h.metrics.find((m) => m.type === 'External').external;
  const pods = h.metrics.find((m) => m.type === 'Pods').pods;
  assert.equal(h.metrics.length, 2);

  assert.match(queueAge.metadata.query, /^max\(tidepool_queue_oldest_age_seconds\{/);
  assert.match(busy.metadata.query, /^sum\(rate\(tidepool_task_run_seconds_sum\{/);
  const config = adapterConfig();
  assert.deepEqual(config.externalRules[0].seriesQuery.match(TIDEPOOL_NAME), queueAge.metadata.query.match(TIDEPOOL_NAME));
  assert.deepEqual(config.rules[0].seriesQuery.match(TIDEPOOL_NAME), busy.metadata.query.match(TIDEPOOL_NAME));

  assert.equal(external.target.type, 'Value');
  assert.equal(quantity(external.target.value), Number(queueAge.metadata.threshold));
  assert.equal(Number(queueAge.metadata.threshold), 0.5);
  assert.equal(pods.target.type, 'AverageValue');
  assert.equal(quantity(pods.target.averageValue), Number(busy.metadata.threshold));

  // The busy-threads target is per pod, so below the threads a pod has.
  const threads = quantity(container().resources.limits.cpu);
  assert.ok(Number(busy.metadata.threshold) > 0 && Number(busy.metadata.threshold) < threads, `busy threads target under ${threads}`);

  assert.equal(so.minReplicaCount, 2);
  assert.equal(so.maxReplicaCount, 20);
  assert.equal(h.minReplicas, so.minReplicaCount);
  assert.equal(h.maxReplicas, so.maxReplicaCount);
  assert.equal(so.pollingInterval, seconds(one('PodMonitor').spec.podMetricsEndpoints[0].interval), 'polled once per scrape');
  assert.deepEqual(h.behavior, so.advanced.horizontalPodAutoscalerConfig.behavior);
  assert.equal(h.behavior.scaleUp.stabilizationWindowSeconds, 0);
  assert.equal(h.behavior.scaleDown.stabilizationWindowSeconds, 300);
});
