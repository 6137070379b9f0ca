'use strict';
// The example kernel libraries the user-kernels tests load: where
// `npm test` builds them (scripts/build-examples.js), the Rust library's
// kernels, and whether the C ones could be built here.

const fs = require('node:fs');
const path = require('node:path');

const BUILD = path.join(__dirname, '..', 'examples', 'kernels', 'build');

const RUST_LIB = path.join(BUILD, 'tidepool_example_kernels.node');

const C_LIB = path.join(BUILD, 'example_c_wc.so');

const C_LIB_ABI2 = path.join(BUILD, 'example_c_wc_abi2.so');

const RUST_KERNELS = [
  'example/sha256',
  'example/rgba',
  'example/ndjson',
  'example/pbkdf2',
  'example/panic',
  'example/busy',
  'example/tee',
];

/** The C libraries need a C compiler; without one (and outside CI) their tests skip. */
const noC =
  !fs.existsSync(C_LIB) && !process.env.CI
    ? 'no C compiler: examples/kernels/build/example_c_wc.so was not built'
    : false;

module.exports = { BUILD, RUST_LIB, C_LIB, C_LIB_ABI2, RUST_KERNELS, noC };
