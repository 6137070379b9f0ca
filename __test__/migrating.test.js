'use strict';
// docs/migrating.md's examples, run as written, from a throwaway project
// whose node_modules has this package (@tidepool-rs/pool) and the pools the
// guide migrates from (piscina, tinypool, workerpool). The working directory
// is the repository: an example loads the example kernel library from it.
//
// The fences this test knows:
//   ```js                a CommonJS program, run;
//   ```js esm            an ES module, run;
//   ```js file=NAME      a "before" example's worker file: not run, written
//                        as NAME next to every example;
//   ```js output=ID      run, and every block of the same ID must print
//                        exactly the same (a "before" and its "after");
//   ```js fragment       shown for its shape only, not run (none is today:
//                        the test says so);
//   ```ts                type-checked with `tsc --strict` against index.d.ts;
//   ```sh                a command, shown only.
// A run passes if it exits with 0 by itself within its time limit, writes
// nothing to stderr, prints no `false` (an example that checks something
// prints `true`), and prints the error codes and error names
// (`ERR_TIDEPOOL_TIMEOUT`, `AbortError`) that the comments of its
// `console.log(…); // …` lines say it prints, in that order, and no others.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { ROOT, projectWithTidepool } = require('./project');
const { prose, anchors } = require('./markdown');

const GUIDE = path.join(ROOT, 'docs', 'migrating.md');
const SOURCE = fs.readFileSync(GUIDE, 'utf8');
const PEERS = ['piscina', 'tinypool', 'workerpool'];
const LANGS = ['js', 'ts', 'sh'];
const FLAGS = /^(esm|fragment|file=[\w.-]+|output=[\w-]+)$/;
const RUN_TIMEOUT_MS = 120_000;

/** The fenced blocks of `markdown`: { lang, flags: { esm, fragment, file, output, all }, code, line }. */
function blocks(markdown) {
  const out = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)(.*)$/.exec(lines[i]);
    if (!open) continue;
    const line = i + 1;
    const body = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]);
    assert.ok(i < lines.length, `docs/migrating.md:${line}: the block is never closed`);
    const all = open[2].trim().split(/\s+/).filter(Boolean);
    const value = (key) => all.find((f) => f.startsWith(`${key}=`))?.slice(key.length + 1);
    const flags = {
      esm: all.includes('esm'),
      fragment: all.includes('fragment'),
      file: value('file'),
      output: value('output'),
      all,
    };
    out.push({ lang: open[1], flags, code: `${body.join('\n')}\n`, line });
  }
  return out;
}

const all = blocks(SOURCE);
const js = all.filter((b) => b.lang === 'js');
const workerFiles = js.filter((b) => b.flags.file !== undefined);
const runnable = js.filter((b) => b.flags.file === undefined && !b.flags.fragment);
const groups = new Map();
for (const block of runnable) {
  if (block.flags.output === undefined) continue;
  if (!groups.has(block.flags.output)) groups.set(block.flags.output, []);
  groups.get(block.flags.output).push(block);
}

/** Error codes (`ABORT_ERR`, `ERR_TIDEPOOL_TIMEOUT`, `Z_DATA_ERROR`) and error names (`AbortError`) in `text`, in order. */
const errorNames = (text) =>
  text.match(/\b(?:[A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z][A-Za-z]*Error)\b/g) ?? [];

/** What the comments of a block's `console.log(…); // …` lines say it prints: the error codes and names, in order. */
function promisedErrors(code) {
  return code
    .split('\n')
    .filter((line) => line.includes('console.log(') && line.includes(' // '))
    .flatMap((line) => errorNames(line.slice(line.indexOf(' // '))));
}

/** A throwaway project: this package as @tidepool-rs/pool, the peers from this repository's devDependencies, the worker files. */
function project() {
  const dir = projectWithTidepool('tidepool-migrating-');
  for (const peer of PEERS) {
    fs.symlinkSync(
      path.join(ROOT, 'node_modules', peer),
      path.join(dir, 'node_modules', peer),
      'junction',
    );
  }
  for (const block of workerFiles) fs.writeFileSync(path.join(dir, block.flags.file), block.code);
  return dir;
}

/** Runs a block as written, checks that it ran cleanly, and returns what it printed. */
function run(block) {
  const where = `docs/migrating.md:${block.line}`;
  const dir = project();
  try {
    const file = path.join(dir, block.flags.esm ? 'example.mjs' : 'example.js');
    fs.writeFileSync(file, block.code);
    const child = spawnSync(process.execPath, [file], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: RUN_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    const output = `\n--- stdout\n${child.stdout}\n--- stderr\n${child.stderr}`;
    assert.equal(
      child.error,
      undefined,
      `${where}: ${child.error?.message} (limit ${RUN_TIMEOUT_MS} ms)${output}`,
    );
    assert.equal(child.signal, null, `${where}: killed by ${child.signal}${output}`);
    assert.equal(child.status, 0, `${where}: exit ${child.status}${output}`);
    assert.equal(child.stderr, '', `${where}: wrote to stderr${output}`);
    assert.doesNotMatch(child.stdout, /\bfalse\b/, `${where}: a check printed false${output}`);
    assert.notEqual(child.stdout.trim(), '', `${where}: printed nothing`);
    assert.deepEqual(
      errorNames(child.stdout),
      promisedErrors(block.code),
      `${where}: prints other errors than its comments say${output}`,
    );
    return child.stdout;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('docs/migrating.md: every block is one the test knows, and every example runs', () => {
  assert.deepEqual(
    all
      .filter((b) => !LANGS.includes(b.lang))
      .map((b) => `${b.lang || '(none)'} at line ${b.line}`),
    [],
    `blocks are ${LANGS.join(', ')}`,
  );
  assert.deepEqual(
    all.flatMap((b) =>
      b.flags.all.filter((f) => !FLAGS.test(f)).map((f) => `${f} at line ${b.line}`),
    ),
    [],
    'unknown fence flags',
  );
  assert.deepEqual(
    all
      .filter((b) => b.lang !== 'js' && (b.flags.file || b.flags.output || b.flags.esm))
      .map((b) => b.line),
    [],
    'file=, output= and esm are for js blocks',
  );
  assert.deepEqual(
    js.filter((b) => b.flags.fragment).map((b) => b.line),
    [],
    'every example runs as written',
  );
  assert.ok(runnable.length >= 20, `${runnable.length} runnable examples`);
  assert.ok(all.some((b) => b.lang === 'ts'));
});

test('docs/migrating.md: the worker files have distinct names, and each is loaded by an example', () => {
  const names = workerFiles.map((b) => b.flags.file);
  assert.ok(names.length >= 2);
  assert.deepEqual([...new Set(names)], names, 'one block per file');
  for (const block of workerFiles) {
    assert.ok(
      runnable.some(
        (b) =>
          b.code.includes(`'${block.flags.file}'`) || b.code.includes(`'./${block.flags.file}'`),
      ),
      `docs/migrating.md:${block.line}: no example loads ${block.flags.file}`,
    );
  }
});

test('docs/migrating.md: there is a "before" for every pool the guide migrates from, and each before has its after', () => {
  for (const peer of PEERS) {
    assert.ok(
      runnable.some(
        (b) => b.code.includes(`require('${peer}')`) || b.code.includes(`from '${peer}'`),
      ),
      `no example uses ${peer}`,
    );
  }
  assert.ok(groups.size >= 5, `${groups.size} before/after groups`);
  for (const [id, members] of groups) {
    assert.ok(
      members.length >= 2,
      `output=${id} (line ${members[0].line}) has nothing to be compared with`,
    );
    const peers = members.filter((b) => PEERS.some((peer) => b.code.includes(`'${peer}'`)));
    const tidepool = members.filter(
      (b) => b.code.includes(`'@tidepool-rs/pool'`) && !peers.includes(b),
    );
    assert.ok(
      peers.length >= 1 && tidepool.length >= 1,
      `output=${id}: a before (a peer pool) and an after (tidepool alone)`,
    );
  }
  // The worked example of the reference workload covers all three peers.
  const reference = groups.get('reference') ?? [];
  for (const peer of PEERS)
    assert.ok(
      reference.some((b) => b.code.includes(`'${peer}'`)),
      `the reference workload with ${peer}`,
    );
});

for (const block of runnable.filter((b) => b.flags.output === undefined)) {
  test(`docs/migrating.md:${block.line}: runs as ${block.flags.esm ? 'an ES module' : 'CommonJS'}`, () => {
    run(block);
  });
}

for (const [id, members] of groups) {
  const lines = members.map((b) => b.line).join(', ');
  test(`docs/migrating.md: output=${id} (lines ${lines}): before and after print the same`, () => {
    const outputs = members.map((block) => ({ block, stdout: run(block) }));
    const [first, ...rest] = outputs;
    for (const { block, stdout } of rest) {
      assert.equal(
        stdout,
        first.stdout,
        `docs/migrating.md:${block.line} and docs/migrating.md:${first.block.line} differ`,
      );
    }
  });
}

test('docs/migrating.md: the TypeScript examples type-check with tsc --strict', () => {
  const ts = all.filter((b) => b.lang === 'ts');
  const dir = projectWithTidepool('tidepool-migrating-ts-');
  try {
    const files = ts.map((block, i) => {
      const file = path.join(dir, `example${i}.ts`);
      fs.writeFileSync(file, `${block.code}export {};\n`); // each example a module of its own
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
    ];
    args.push(
      '--types',
      'node',
      '--typeRoots',
      path.join(ROOT, 'node_modules', '@types'),
      ...files,
    );
    const child = spawnSync(process.execPath, args, {
      cwd: dir,
      encoding: 'utf8',
      timeout: RUN_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    const where = (out) =>
      out.replace(/example(\d+)\.ts/g, (_, i) => `docs/migrating.md:${ts[Number(i)].line}`);
    assert.equal(child.error, undefined, String(child.error));
    assert.equal(child.status, 0, where(`${child.stdout}\n${child.stderr}`));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('docs/migrating.md: its links lead to files and headings that exist', () => {
  const links = [...prose(SOURCE).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
  assert.ok(links.length >= 5);
  for (const link of links) {
    if (/^[a-z]+:/i.test(link)) continue; // https:, mailto:
    const [target, anchor] = link.split('#');
    const file = target === '' ? GUIDE : path.resolve(path.dirname(GUIDE), target);
    assert.ok(fs.existsSync(file), `${link}: no ${path.relative(ROOT, file)}`);
    if (path.basename(file) === 'BENCHMARKS.md')
      assert.equal(anchor, undefined, `${link}: link BENCHMARKS.md, not its sections`);
    if (anchor !== undefined && file.endsWith('.md')) {
      assert.ok(
        anchors(fs.readFileSync(file, 'utf8')).has(anchor),
        `${link}: ${path.relative(ROOT, file)} has no heading #${anchor}`,
      );
    }
  }
});
