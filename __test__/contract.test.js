'use strict';
// One source of truth: what the JavaScript side and the types say must
// match what the Rust side registers.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { kernels } = require('..');

test("index.d.ts's BuiltinKernelName union lists exactly the built-in kernels", () => {
  const dts = fs.readFileSync(path.join(__dirname, '..', 'index.d.ts'), 'utf8');
  const union = /export type BuiltinKernelName =([^;]+);/.exec(dts);
  assert.ok(union, 'BuiltinKernelName union not found in index.d.ts');
  const typed = [...union[1].matchAll(/'([^']+)'/g)].map((m) => m[1]);
  assert.deepEqual([...typed].sort(), [...kernels].sort());
});

test('every error code a task can fail with is known to the JavaScript side', () => {
  const { TASK_CODES } = require('../lib/addon/binding');
  const { taskError } = require('../lib/errors');
  const codes = Object.values(TASK_CODES);
  assert.equal(new Set(codes).size, codes.length, 'codes are distinct');
  for (const code of codes) {
    assert.notEqual(code, 0, '0 is success');
    assert.notEqual(
      taskError(code, 'detail', false).code,
      'ERR_TIDEPOOL_INTERNAL',
      `code ${code} is mapped`,
    );
  }
});

test('every error code tidepool gives a task is counted under its own name (the code label of tidepool/metrics)', () => {
  const { countedCode } = require('../lib/errors');
  const root = path.join(__dirname, '..');
  const sources = (dir, ext) =>
    fs
      .readdirSync(path.join(root, dir), { recursive: true })
      .filter((f) => f.endsWith(ext))
      .map((f) => fs.readFileSync(path.join(root, dir, f), 'utf8'));
  const codes = new Set();
  // Rust's codes ("Z_DATA_ERROR", "ERR__ERROR_FORMAT_PADDING_1", "ENOENT"...) and the JS side's own.
  for (const text of [...sources('crates/core/src', '.rs'), ...sources('src', '.rs')]) {
    for (const [, code] of text.matchAll(/"((?:ERR_|Z_)[A-Z0-9_]+|E[A-Z0-9]+)"/g)) codes.add(code);
  }
  for (const text of [
    ...sources('lib', '.js'),
    fs.readFileSync(path.join(root, 'index.js'), 'utf8'),
  ]) {
    for (const [, code] of text.matchAll(/'((?:ERR_|Z_)[A-Z0-9_]+|ABORT_ERR)'/g)) codes.add(code);
  }
  assert.ok(
    codes.has('Z_DATA_ERROR') && codes.has('ENOENT') && codes.has('ERR_TIDEPOOL_CLOSED'),
    'the scan finds codes',
  );
  for (const code of codes) assert.equal(countedCode({ code }), code, code);
  assert.equal(countedCode({ code: 'ERR_MY_OWN' }), 'other');
  assert.equal(countedCode(new Error('no code')), 'other');
});
