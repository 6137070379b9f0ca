'use strict';
// The README's examples, run as written: every ```js block as a CommonJS
// file (```js esm: an ES module), every ```ts block type-checked with
// `tsc --strict` against index.d.ts, every ```yaml block parsed, from a
// project whose node_modules has this package under its name
// (@tidepool-rs/pool). The working directory is the repository (an
// example may name a file in it). A block marked ```js fragment is shown
// for its shape only and is not run (none is, today: the test says so).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { projectWithTidepool } = require('./project');

const ROOT = path.join(__dirname, '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The fenced blocks: { lang, flags, code, line }. */
function blocks(markdown) {
  const out = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w+)?(.*)$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]);
    out.push({
      lang: open[1] || '',
      flags: open[2].trim().split(/\s+/).filter(Boolean),
      code: body.join('\n'),
      line: start + 1,
    });
  }
  return out;
}

/** A project directory whose `tidepool` is this repository, with its optional peer prom-client installed. */
const project = () => projectWithTidepool('tidepool-readme-');

const all = blocks(README);
const js = all.filter((b) => b.lang === 'js' && !b.flags.includes('fragment'));
const ts = all.filter((b) => b.lang === 'ts');

test('the README has examples in both languages, and none is left unrun', () => {
  assert.ok(js.length >= 6, `${js.length} JavaScript examples`);
  assert.ok(ts.length >= 1, `${ts.length} TypeScript examples`);
  assert.deepEqual(
    all.filter((b) => b.flags.includes('fragment')).map((b) => b.line),
    [],
    'every example runs as written',
  );
  const unknown = all.filter((b) => !['js', 'ts', 'sh', 'yaml', 'text', ''].includes(b.lang));
  assert.deepEqual(
    unknown.map((b) => `${b.lang} at line ${b.line}`),
    [],
  );
});

// docs/zlib.md's and docs/crypto.md's examples run the same way.
const runnable = [
  ...js.map((block) => ({ ...block, file: 'README.md' })),
  ...['docs/zlib.md', 'docs/crypto.md'].flatMap((file) =>
    blocks(fs.readFileSync(path.join(ROOT, file), 'utf8'))
      .filter((b) => b.lang === 'js')
      .map((block) => ({ ...block, file })),
  ),
];

for (const block of runnable) {
  const esm = block.flags.includes('esm');
  test(`${block.file}:${block.line}: runs as ${esm ? 'an ES module' : 'CommonJS'}`, () => {
    const dir = project();
    const file = path.join(dir, esm ? 'example.mjs' : 'example.js');
    fs.writeFileSync(file, block.code);
    const run = spawnSync(process.execPath, [file], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(run.signal, null, `killed: ${run.stderr}`);
    assert.equal(run.status, 0, `exit ${run.status}\n${run.stdout}\n${run.stderr}`);
    assert.doesNotMatch(run.stdout, /false\b/, 'an example that prints a check prints true');
    fs.rmSync(dir, { recursive: true, force: true });
  });
}

test('README.md: the YAML examples parse, and name this package', () => {
  const YAML = require('yaml');
  const { name } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const yaml = all.filter((b) => b.lang === 'yaml');
  assert.ok(yaml.length >= 1);
  for (const block of yaml) {
    const doc = YAML.parseDocument(block.code);
    assert.deepEqual(doc.errors, [], `README.md:${block.line}`);
    // pnpm's allowBuilds: the key must be the package's name, or pnpm holds its script back.
    if (doc.has('allowBuilds'))
      assert.equal(doc.toJS().allowBuilds[name], true, `README.md:${block.line}`);
  }
});

test('README.md: the TypeScript examples type-check with tsc --strict', () => {
  const dir = project();
  const files = ts.map((block, i) => {
    const file = path.join(dir, `example${i}.ts`);
    // Each example is its own module (an `export {}` keeps its names to itself).
    fs.writeFileSync(file, `${block.code}\nexport {};\n`);
    return file;
  });
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const args = [
    tsc,
    '--noEmit',
    '--strict',
    '--target',
    'es2022',
    '--module',
    'commonjs',
    '--esModuleInterop',
    '--types',
    'node',
    '--typeRoots',
    path.join(ROOT, 'node_modules', '@types'),
    ...files,
  ];
  const run = spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  const where = (out) =>
    out.replace(/example(\d+)\.ts/g, (_, i) => `README.md:${ts[Number(i)].line} (example ${i})`);
  assert.equal(run.status, 0, where(`${run.stdout}\n${run.stderr}`));
  fs.rmSync(dir, { recursive: true, force: true });
});
