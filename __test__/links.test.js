'use strict';
// The documents' links lead somewhere: every relative link of README.md,
// ARCHITECTURE.md, BENCHMARKS.md and docs/*.md names a file that exists,
// and an anchor into a Markdown file names one of its headings (as GitHub
// makes anchors), so renaming a section cannot strand the links to it.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT } = require('./project');
const { brokenLinks } = require('./markdown');

const DOCS = [
  'README.md',
  'ARCHITECTURE.md',
  'BENCHMARKS.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

for (const doc of DOCS) {
  test(`${doc}: its relative links and anchors resolve`, () => {
    assert.deepEqual(brokenLinks(path.join(ROOT, doc)), []);
  });
}
