'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-type-error.js: the web
// DecompressionStream ('deflate', 'gzip'), which Node builds on node:zlib's
// createInflate() and createGunzip(), fails its readable with a TypeError
// when the compressed stream is followed by more bytes: one zero byte, or
// a second stream (for gzip, a second member).
//
// The drop-in has no DecompressionStream of its own: its run calls
// install() (node:zlib's factories replaced by the module's, which is how
// Node's own DecompressionStream reaches it) and uninstall() after; the
// pool must have run the work (the harness counts it).
//
// Deviations:
// - Upstream builds each input as `new Blob([chunks])`, an array inside
//   the Blob's array, which a Blob takes as the text "120,156,...": every
//   case it runs is bytes that are not the format at all, rejected with a
//   TypeError. Both are checked here: bytes that are not the format (the
//   first test), and the trailing bytes upstream means (the second, with
//   the chunks given as bytes).
// - What Node's DecompressionStream refuses differs between lines, and
//   node:zlib defines it for the line being run: before Node 22 it takes
//   trailing bytes and fails with node:zlib's Error (no TypeError); Node 22
//   refuses trailing bytes but takes a second gzip member (multi-member
//   gzip); from Node 24 both are refused. Each kind of case (bad bytes,
//   trailing bytes for each format, a second gzip member) is tried once
//   with node:zlib's DecompressionStream before the runs, and both runs
//   must then do what it did: fail with the same error name and code, or
//   give the decoded bytes.

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeZlib = require('node:zlib');
const { DecompressionStream } = require('node:stream/web');
const { both } = require('./harness');

/** deflate('a') and gzip('a'), as upstream spells them. */
const DEFLATE_A = new Uint8Array([120, 156, 75, 4, 0, 0, 98, 0, 98]);
const GZIP_A = new Uint8Array([
  31, 139, 8, 0, 0, 0, 0, 0, 0, 19, 75, 4, 0, 67, 190, 183, 232, 1, 0, 0, 0,
]);
const ZERO = new Uint8Array(1);

/** `parts` joined into one Uint8Array. */
function joined(...parts) {
  return new Uint8Array(Buffer.concat(parts));
}

/**
 * `chunks` (Uint8Arrays, each written as it is) through a
 * DecompressionStream of `format`: { output } (a string), or { error }.
 */
async function decompress(format, chunks) {
  const out = [];
  try {
    const readable = new Blob(chunks).stream().pipeThrough(new DecompressionStream(format));
    for await (const chunk of readable) out.push(Buffer.from(chunk));
    return { output: Buffer.concat(out).toString() };
  } catch (error) {
    return { error };
  }
}

/** `check(zlib, common, who)` with node:zlib routed to the drop-in during its run. */
function routed(check) {
  return async (zlib, common, who) => {
    if (zlib === nodeZlib) return check(zlib, common, who);
    zlib.install();
    try {
      return await check(zlib, common, who);
    } finally {
      zlib.uninstall();
    }
  };
}

/** What node:zlib's DecompressionStream does with `chunks`: { name, code } of its error, or null. */
async function nodeRefusal(format, chunks) {
  const { error } = await decompress(format, chunks);
  return error === undefined ? null : { name: error.name, code: error.code };
}

/** Asserts that `result` (decompress()'s) is `refusal` (nodeRefusal()'s), or else `output`. */
function assertOutcome(result, refusal, output, what) {
  if (refusal === null) {
    assert.equal(result.error, undefined, `${what}: ${result.error}`);
    assert.equal(result.output, output, what);
  } else {
    assert.ok(result.error !== undefined, `${what}: no error, output '${result.output}'`);
    assert.equal(result.error.name, refusal.name, `${what}: ${result.error.stack}`);
    assert.equal(result.error.code, refusal.code, `${what}: ${result.error.stack}`);
  }
}

test('bytes that are not the format fail the readable', async () => {
  // Upstream's inputs, as its Blob makes them: text.
  const cases = [
    ['deflate', [new TextEncoder().encode([DEFLATE_A, ZERO].join(','))]],
    ['gzip', [new TextEncoder().encode([GZIP_A, GZIP_A].join(','))]],
  ];
  const refusals = [];
  for (const [format, chunks] of cases) refusals.push(await nodeRefusal(format, chunks));
  for (const refusal of refusals) assert.notEqual(refusal, null, 'node:zlib takes bad bytes');

  await both(
    routed(async (_zlib, _common, who) => {
      for (const [i, [format, chunks]] of cases.entries())
        assertOutcome(await decompress(format, chunks), refusals[i], undefined, `${who} ${format}`);
    }),
    { work: 'any' },
  );
});

test('bytes after the end of the stream fail the readable', async (t) => {
  // [format, kind, chunks, output when taken]
  const cases = [
    ['deflate', 'trailing', [joined(DEFLATE_A, ZERO)], 'a'],
    ['deflate', 'trailing', [DEFLATE_A, ZERO], 'a'],
    ['deflate', 'trailing', [DEFLATE_A, DEFLATE_A], 'a'],
    ['deflate', 'trailing', [DEFLATE_A, joined(DEFLATE_A, DEFLATE_A)], 'a'],
    ['gzip', 'trailing', [joined(GZIP_A, ZERO)], 'a'],
    ['gzip', 'trailing', [GZIP_A, ZERO], 'a'],
    ['gzip', 'member', [GZIP_A, GZIP_A], 'aa'],
    ['gzip', 'member', [joined(GZIP_A, GZIP_A)], 'aa'],
  ];
  // What node:zlib's DecompressionStream does on this line, per kind.
  const refusal = {
    'deflate trailing': await nodeRefusal('deflate', [DEFLATE_A, ZERO]),
    'gzip trailing': await nodeRefusal('gzip', [GZIP_A, ZERO]),
    'gzip member': await nodeRefusal('gzip', [GZIP_A, GZIP_A]),
  };
  t.diagnostic(`node:zlib's DecompressionStream here: ${JSON.stringify(refusal)}`);

  await both(
    routed(async (_zlib, _common, who) => {
      for (const [i, [format, kind, chunks, output]] of cases.entries()) {
        assertOutcome(
          await decompress(format, chunks),
          refusal[`${format} ${kind}`],
          output,
          `${who}: case ${i} (${format}, ${kind})`,
        );
      }
    }),
  );
});
