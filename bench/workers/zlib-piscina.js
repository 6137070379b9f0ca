'use strict';
// piscina worker: one node:zlib sync call (`op`: 'gzip', 'gunzip', ...) on the task's bytes.
const zlib = require('node:zlib');

module.exports = ({ op, data, options }) => zlib[`${op}Sync`](data, options);
