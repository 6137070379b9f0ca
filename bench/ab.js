'use strict';
// A/B helper: tiny post() round trips/s (1024 in flight, third of three rounds)
// for the tidepool tree given as argument, in this process. Run it
// alternately against two trees (e.g. a git worktree of an older commit,
// built with its own CARGO_TARGET_DIR) and compare paired runs:
//   node bench/ab.js /path/to/tree-a; node bench/ab.js /path/to/tree-b; ...
const root = process.argv[2];
const { Pool } = require(root);
const crypto = require('crypto');
(async () => {
  const p = new Pool();
  const N = 200000;
  const msgs = Array.from({ length: 1024 }, () => crypto.randomBytes(64));
  let rate;
  for (let r = 0; r < 3; r++) {
    let t = process.hrtime.bigint();
    let i = 0,
      done = 0;
    await new Promise((resolve) => {
      const next = () => {
        if (i >= N) return;
        const m = msgs[i++ & 1023];
        p.post(m).then(() => {
          if (++done === N) resolve();
          else next();
        });
      };
      for (let k = 0; k < 1024; k++) next();
    });
    rate = N / (Number(process.hrtime.bigint() - t) / 1e9);
  }
  console.log(Math.round(rate));
  await p.close();
})();
