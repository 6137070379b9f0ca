'use strict';
// piscina / tinypool worker: SHA-256 of the task's bytes.
const { createHash } = require('node:crypto');

module.exports = (data) => createHash('sha256').update(data).digest();
