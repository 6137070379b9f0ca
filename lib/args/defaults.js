'use strict';
// The pool's options' defaults (the package's `defaults`).

const { binding } = require('../addon/binding');

const BUFFER_MAX_LENGTH = require('node:buffer').constants.MAX_LENGTH;

const DEFAULTS = Object.freeze({
  kernel: 'sha256',
  encoding: 'buffer',
  minThreads: 1,
  maxThreads: binding.availableParallelism(),
  spawnDelayMs: 1,
  idleTimeoutMs: 100,
  checkIntervalMs: 1,
  scaleRule: 'demand',
  maxQueue: Infinity,
  queueFull: 'reject',
  maxQueueAgeMs: Infinity,
  maxInputBytes: Infinity,
  // The largest Buffer this Node can make (4 GiB on Node 20, 64-bit).
  maxOutputBytes: BUFFER_MAX_LENGTH,
  // What a decoder (gunzip, inflate...) may produce unless maxOutputBytes is
  // given: 256 MiB, so a 256 KiB gzip bomb cannot claim 4 GiB per thread
  // (README, "Compression").
  maxExpandedBytes: Math.min(256 * 1024 * 1024, BUFFER_MAX_LENGTH),
  // No bound on the working memory of memory-hard tasks (Argon2, scrypt)
  // beyond one task's per running thread.
  maxWorkingBytes: Infinity,
  niceIncrement: binding.defaultNiceIncrement(),
  budget: 'process',
});

module.exports = { DEFAULTS };
