'use strict';
// workerpool worker: SHA-256 of the task's bytes.
const { createHash } = require('node:crypto');
const workerpool = require('workerpool');

workerpool.worker({ sha256: (data) => createHash('sha256').update(data).digest() });
