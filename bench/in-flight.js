'use strict';

/**
 * Runs `start(item)` (a promise) for every item with at most `width` in
 * flight; resolves when all have resolved, rejects with the first rejection.
 */
function inFlight(items, width, start) {
  return new Promise((resolve, reject) => {
    let next = 0;
    let done = 0;
    const launch = () => {
      if (next >= items.length) return;
      start(items[next++]).then(() => {
        if (++done === items.length) resolve();
        else launch();
      }, reject);
    };
    for (let i = 0; i < width; i++) launch();
  });
}

module.exports = { inFlight };
