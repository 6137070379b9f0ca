'use strict';
// What the fuzzers share: their command line (`--seconds N`, `--seed N`)
// and a seeded random source (mulberry32: small, fast and seedable), so a
// failure's seed replays it.

function seeded(argv = process.argv.slice(2)) {
  const arg = (name, fallback) => {
    const i = argv.indexOf(name);
    return i === -1 ? fallback : Number(argv[i + 1]);
  };
  const SECONDS = arg('--seconds', 3);
  const SEED = arg('--seed', Date.now() % 1e9);
  let state = SEED >>> 0;
  function random() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  const int = (n) => Math.floor(random() * n);
  return {
    SECONDS,
    SEED,
    random,
    int,
    pick: (xs) => xs[int(xs.length)],
    chance: (p) => random() < p,
  };
}

module.exports = { seeded };
