'use strict';
// A differential check of @tidepool-rs/pool/zlib against node:zlib of the
// Node it runs on, the truth of each line (20, 22, 24, 26 differ). For every
// class: its options with valid, edge and bad values (./zlib-fidelity/
// cases.js), and decoders given corrupt, cut and concatenated inputs
// (./zlib-fidelity/corrupt.js). Each case runs on node:zlib first, then on
// the drop-in, and what a caller sees must be the same: whether making the
// stream throws (the error's class, code and message), and what a stream
// and the async one-shot give (an error's class, code, errno and message,
// or the output; an encoder's by what node:zlib decodes from it). Where a
// difference is on purpose, the drop-in's typed error is asserted instead,
// and the line of docs/zlib.md's "What differs" table that says so must be
// there.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { isDeepStrictEqual, inspect } = require('node:util');
const nodeZlib = require('node:zlib');
const ours = require('@tidepool-rs/pool/zlib');
const { streamRun, oneShotRun } = require('./zlib-fidelity/observe');
const { CLASSES, optionCases } = require('./zlib-fidelity/cases');
const { corruptCases } = require('./zlib-fidelity/corrupt');
const { documented } = require('./zlib-fidelity/documented');

const DOC = fs.readFileSync(path.join(__dirname, '..', 'docs', 'zlib.md'), 'utf8');
const HAS_ZSTD = typeof nodeZlib.ZstdCompress === 'function';
const NO_ZSTD = 'node:zlib of this Node has no zstd: no truth to compare with';

/** What `zlib` does with `kase`: a stream and the async one-shot. */
async function observe(zlib, kase) {
  const { cls, fn, options, input, pieces } = kase;
  return {
    stream: await streamRun(zlib, cls, options, input, pieces),
    oneShot: await oneShotRun(zlib, fn, cls, options, input),
  };
}

/** `value` flattened: each leaf by its path ('stream.error.code'). */
function leaves(value, at = '', out = new Map()) {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const key of Object.keys(value)) leaves(value[key], at ? `${at}.${key}` : key, out);
  } else {
    out.set(at, value);
  }
  return out;
}

/** Where `got` differs from `truth`: a whole part when its kind differs, else one line per leaf. */
function delta(got, truth) {
  const lines = [];
  const compact = (v) => inspect(v, { depth: 5, breakLength: Infinity });
  for (const part of Object.keys(truth)) {
    const [a, b] = [truth[part], got[part]];
    if (isDeepStrictEqual(a, b)) continue;
    if (!isDeepStrictEqual(Object.keys(a), Object.keys(b))) {
      lines.push(
        `  ${part}: node:zlib ${compact(a)}\n  ${' '.repeat(part.length)}  ours ${compact(b)}`,
      );
      continue;
    }
    const [x, y] = [leaves(a), leaves(b)];
    for (const key of new Set([...x.keys(), ...y.keys()])) {
      if (!isDeepStrictEqual(x.get(key), y.get(key)))
        lines.push(
          `  ${part}.${key}: node:zlib ${compact(x.get(key))}, ours ${compact(y.get(key))}`,
        );
    }
  }
  return lines.join('\n');
}

/**
 * Runs `cases` on both modules; returns the cases where the drop-in's
 * answer is neither node:zlib's nor a documented difference's, each with
 * what differs.
 */
async function differences(cases) {
  const found = [];
  for (const kase of cases) {
    const truth = await observe(nodeZlib, kase);
    const got = await observe(ours, kase);
    const name = `${kase.cls} ${kase.label}`;
    const purpose = documented(kase, truth);
    if (purpose !== undefined) {
      assert.ok(DOC.includes(purpose.line), `docs/zlib.md lacks the line: ${purpose.line}`);
      if (!purpose.matches(got))
        found.push(
          `${name}: documented (${purpose.line}), but ours gave ${inspect(got, { depth: 4, breakLength: Infinity })}`,
        );
    } else if (!isDeepStrictEqual(got, truth)) {
      found.push(`${name}:\n${delta(got, truth)}`);
    }
  }
  return found;
}

/** Fails with every difference, one per case. */
function assertSame(found, count) {
  assert.equal(found.length, 0, `${found.length} of ${count} cases differ:\n${found.join('\n')}`);
}

for (const cls of Object.keys(CLASSES)) {
  const skip = CLASSES[cls].family === 'zstd' && !HAS_ZSTD && NO_ZSTD;
  test(`${cls}: every option case as node:zlib's`, { skip }, async () => {
    const cases = optionCases(cls);
    assertSame(await differences(cases), cases.length);
  });
}

for (const family of ['deflate', 'brotli', 'zstd']) {
  const skip = family === 'zstd' && !HAS_ZSTD && NO_ZSTD;
  test(
    `${family} decoders: corrupt, cut and concatenated inputs as node:zlib's`,
    { skip },
    async () => {
      const cases = corruptCases(family);
      assertSame(await differences(cases), cases.length);
    },
  );
}
