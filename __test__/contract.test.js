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
  const { TASK_CODES } = require('../lib/binding');
  const { taskError } = require('../lib/errors');
  const codes = Object.values(TASK_CODES);
  assert.equal(new Set(codes).size, codes.length, 'codes are distinct');
  for (const code of codes) {
    assert.notEqual(code, 0, '0 is success');
    assert.notEqual(taskError(code, 'detail', false).code, 'ERR_TIDEPOOL_INTERNAL', `code ${code} is mapped`);
  }
});
