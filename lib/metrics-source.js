'use strict';
// The key a Pool answers tidepool/metrics through (lib/pool.js, lib/metrics.js):
// a symbol, so that the metrics module reads the pool's counters without
// their being part of the Pool's public API.

const METRICS_SOURCE = Symbol('tidepool metrics source');

module.exports = { METRICS_SOURCE };
