'use strict';
// Order statistics shared by the benchmark scripts.

/** The `p` quantile of `xs` (nearest rank; 0 for no values). */
function quantile(xs, p) {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
}

function median(xs) {
  return quantile(xs, 0.5);
}

module.exports = { quantile, median };
