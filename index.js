'use strict';
// @tidepool-rs/pool: the package's entry. The Pool and its engine live in
// lib/ (lib/pool.js; ARCHITECTURE.md has the map).

const { Pool, ENCODINGS, micros } = require('./lib/pool');
const { DEFAULTS } = require('./lib/args/defaults');

module.exports = { Pool, kernels: undefined, encodings: ENCODINGS, defaults: DEFAULTS, micros };
// Grows when a kernel library is loaded.
// (A getter written as `get() { return X.y; }` is one Node's ESM loader
// recognizes as a named export.)
Object.defineProperty(module.exports, 'kernels', {
  enumerable: true,
  get() {
    return Pool.kernels;
  },
});
