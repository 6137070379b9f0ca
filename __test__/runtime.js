'use strict';
// Which runtime runs the suite, for the few tests that are about Node
// itself (its command line, how node:test reports an uncaught exception)
// or hold a runtime's node:zlib to Node's: they say why they skip
// elsewhere. Not a test file itself.

/** 'bun', 'deno' or 'node'. */
const RUNTIME = process.versions.bun ? 'bun' : process.versions.deno ? 'deno' : 'node';

/** A test's `skip` option: false on Node, else why it does not apply here. */
function nodeOnly(why) {
  return RUNTIME === 'node' ? false : `on ${RUNTIME}: ${why}`;
}

/** A test's `skip` option: false but on Deno, whose node:zlib and node:crypto differ from Node's where `why` says. */
function notOnDeno(why) {
  return RUNTIME === 'deno' ? `on deno: ${why}` : false;
}

/**
 * A test's `skip` option for what needs install(): false where node:zlib's
 * functions can be replaced (Node, Bun), else why not (Deno: install()
 * throws ERR_TIDEPOOL_ZLIB_UNSUPPORTED, as its own test checks).
 */
function needsInstall() {
  const own = Object.getOwnPropertyDescriptor(require('node:zlib'), 'createGzip');
  return own.configurable || own.writable ? false : "node:zlib's functions cannot be replaced here";
}

module.exports = { RUNTIME, nodeOnly, notOnDeno, needsInstall };
