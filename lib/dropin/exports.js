'use strict';
// A drop-in's module object: its own functions (`api`), and the three
// names every drop-in has: install(), uninstall() and the `pool` getter,
// with the listener door its ES module's live `pool` binding uses.

const { WATCH_POOL } = require('../symbols');

/**
 * The exports of a drop-in whose routing is `routing` and pool source
 * `pools` (./routing.js, ./pool-source.js).
 */
function dropInExports(api, routing, pools) {
  const exports = {
    ...api,
    install(options) {
      routing.install(options, exports);
      pools.changed();
    },
    uninstall() {
      routing.uninstall();
      pools.changed();
    },
    /** The pool this module's work runs on (to read its stats() or metrics). */
    get pool() {
      return pools.current();
    },
  };
  Object.defineProperty(exports, WATCH_POOL, { value: (listener) => pools.watch(listener) });
  return exports;
}

module.exports = { dropInExports };
