'use strict';
// deploy/prometheus/: the alerts and recording rule docs/scaling-out.md
// recommends, checked with Prometheus's own promtool (`check rules`, and
// `test rules` over the unit tests beside them), and the docs' table
// naming exactly those rules with those expressions (less the job selector
// every rule carries). promtool comes from Debian's `prometheus` package,
// installed here when it is missing; where it cannot be had (not Debian,
// not root, no registry) the test says so and skips, as CI's Miri step does.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const YAML = require('yaml');

const ROOT = path.join(__dirname, '..');
const DIR = path.join(ROOT, 'deploy', 'prometheus');
const RULES = path.join(DIR, 'tidepool.rules.yaml');
const TESTS = path.join(DIR, 'tidepool.rules.test.yaml');

function run(command, args, timeout = 60_000) {
  return spawnSync(command, args, { encoding: 'utf8', timeout });
}

/** The path of promtool, installing Debian's package if need be; or why not. */
function promtool() {
  const found = () => {
    const r = run('sh', ['-c', 'command -v promtool']);
    return r.status === 0 ? r.stdout.trim() : undefined;
  };
  const here = found();
  if (here !== undefined) return { path: here };
  if (
    process.platform !== 'linux' ||
    typeof process.getuid !== 'function' ||
    process.getuid() !== 0
  )
    return { why: 'promtool is not installed, and installing it needs root on Debian' };
  if (run('sh', ['-c', 'command -v apt-get']).status !== 0)
    return { why: 'promtool is not installed, and there is no apt-get to install it' };
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args) => spawnSync('apt-get', args, { encoding: 'utf8', timeout: 600_000, env });
  apt(['update', '-qq']);
  const install = apt(['install', '-y', '-qq', '--no-install-recommends', 'prometheus']);
  const installed = found();
  if (installed !== undefined) return { path: installed };
  return {
    why: `apt-get install prometheus failed: ${(install.stderr || install.stdout).trim().slice(-500)}`,
  };
}

const tool = promtool();

test('promtool checks the rules and passes their unit tests', { skip: tool.why }, () => {
  const check = run(tool.path, ['check', 'rules', RULES]);
  assert.equal(check.status, 0, check.stdout + check.stderr);
  const rules = YAML.parse(fs.readFileSync(RULES, 'utf8')).groups.flatMap((g) => g.rules);
  assert.match(check.stdout, new RegExp(`SUCCESS: ${rules.length} rules found`));
  // The unit tests name their rule file relative to themselves.
  const unit = spawnSync(tool.path, ['test', 'rules', path.basename(TESTS)], {
    cwd: DIR,
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(unit.status, 0, unit.stdout + unit.stderr);
  assert.match(unit.stdout, /SUCCESS/);
});

test('every alert and recording rule is tested firing and, for alerts, not firing', () => {
  const rules = YAML.parse(fs.readFileSync(RULES, 'utf8')).groups.flatMap((g) => g.rules);
  const tests = YAML.parse(fs.readFileSync(TESTS, 'utf8')).tests;
  const cases = tests.flatMap((t) => t.alert_rule_test ?? []);
  for (const rule of rules.filter((r) => r.alert)) {
    const mine = cases.filter((c) => c.alertname === rule.alert);
    assert.ok(
      mine.some((c) => c.exp_alerts.length > 0),
      `${rule.alert} is never tested firing`,
    );
    assert.ok(
      mine.some((c) => c.exp_alerts.length === 0),
      `${rule.alert} is never tested not firing`,
    );
  }
  const exprs = tests.flatMap((t) => t.promql_expr_test ?? []).map((c) => c.expr);
  for (const rule of rules.filter((r) => r.record))
    assert.ok(exprs.includes(rule.record), `${rule.record} is never evaluated`);
});

test("docs/scaling-out.md's table names the rules, with their expressions", () => {
  const rules = YAML.parse(fs.readFileSync(RULES, 'utf8')).groups.flatMap((g) => g.rules);
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'scaling-out.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## What to alert on'));
  const rows = section
    .split('\n')
    .filter((l) => /^\| `[A-Za-z0-9:_]+`/.test(l))
    .map((l) => {
      const cells = l.split(/(?<!\\)\|/).map((c) => c.trim());
      return { name: cells[1].match(/`([^`]+)`/)[1], text: cells[2].replace(/\\\|/g, '|') };
    });
  const names = rules.map((r) => r.alert ?? r.record);
  assert.deepEqual(rows.map((r) => r.name).sort(), [...names].sort(), 'one row per rule');
  // The docs leave out the job selector every rule carries.
  const bare = (expr) =>
    expr
      .replace(/\{job="tidepool-service"\}/g, '')
      .replace(/job="tidepool-service",/g, '')
      .replace(/\{horizontalpodautoscaler="tidepool-service"\}/g, '');
  for (const rule of rules) {
    const row = rows.find((r) => r.name === (rule.alert ?? rule.record));
    const expr = bare(rule.expr);
    // An alert's `expr > x` and its `for`, as the table writes them.
    assert.ok(
      row.text.includes(`\`${expr}\``),
      `${row.name}: the table shows ${row.text}, the rule ${expr}`,
    );
    if (rule.for !== undefined)
      assert.ok(row.text.includes(`for ${rule.for}`), `${row.name}: for ${rule.for}`);
  }
});
