'use strict';
// Draws the results of bench/run.js as an SVG: demo throughput, the event
// loop's delay during the demo, and tiny-task round trips, per configuration
// (medians; the thin line spans min to max).
//
//   node bench/chart.js bench/results-latest.json docs/bench.svg
//
// bench/run.js calls it itself after every run (`--svg`, default docs/bench.svg).

const fs = require('node:fs');

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function escape(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** One panel of horizontal bars: rows of { label, values[] }. */
function panel(title, unit, rows, top, { log = false } = {}) {
  const W = 980;
  const left = 400;
  const right = 110;
  const rowH = 18;
  const max = Math.max(...rows.flatMap((r) => r.values));
  const min = log ? Math.min(...rows.flatMap((r) => r.values).filter((v) => v > 0)) / 2 : 0;
  const x = (v) => {
    if (!log) return left + (v / max) * (W - left - right);
    const lo = Math.log10(min);
    return (
      left + ((Math.log10(Math.max(v, min)) - lo) / (Math.log10(max) - lo)) * (W - left - right)
    );
  };
  const parts = [
    `<text x="10" y="${top + 14}" font-size="13" font-weight="bold">${escape(title)}</text>`,
  ];
  rows.forEach((r, i) => {
    const y = top + 24 + i * rowH;
    const m = median(r.values);
    const ours = r.label.includes('tidepool');
    parts.push(`<text x="${left - 8}" y="${y + 12}" text-anchor="end">${escape(r.label)}</text>`);
    parts.push(
      `<rect x="${left}" y="${y + 2}" width="${Math.max(1, x(m) - left).toFixed(1)}" height="${rowH - 6}" fill="${ours ? '#1f5fbf' : '#9aa5b1'}"/>`,
    );
    parts.push(
      `<line x1="${x(Math.min(...r.values)).toFixed(1)}" y1="${y + rowH / 2}" x2="${x(Math.max(...r.values)).toFixed(1)}" y2="${y + rowH / 2}" stroke="#222"/>`,
    );
    const shown =
      m >= 1e6
        ? `${(m / 1e6).toFixed(2)}M`
        : m >= 1e4
          ? `${(m / 1e3).toFixed(0)}k`
          : m >= 10
            ? m.toFixed(0)
            : m.toFixed(2);
    parts.push(`<text x="${(x(m) + 6).toFixed(1)}" y="${y + 12}">${shown} ${escape(unit)}</text>`);
  });
  return { svg: parts.join('\n'), height: 30 + rows.length * rowH };
}

function chart(data) {
  const results = data.results;
  const names = Object.keys(results);
  const pick = (prefix, field = 'value') =>
    names
      .filter((n) => n.startsWith(prefix) && results[n].every((r) => typeof r[field] === 'number'))
      .map((n) => ({ label: n.slice(prefix.length), values: results[n].map((r) => r[field]) }));
  const panels = [
    [
      'Reference workload: 4096 x 64 KiB SHA-256 (MB/s, higher is better)',
      'MB/s',
      pick('demo: '),
      {},
    ],
    [
      'Event loop during the demo round: p99 delay (ms, lower is better)',
      'ms',
      pick('demo: ', 'loopP99'),
      {},
    ],
    [
      'Event loop during the demo round: max delay (ms, lower is better)',
      'ms',
      pick('demo: ', 'loopMax'),
      {},
    ],
    [
      'Tiny tasks: 64 B SHA-256 round trips per second (log scale)',
      '/s',
      pick('tiny: '),
      { log: true },
    ],
  ];
  let top = 40;
  const body = [];
  for (const [title, unit, rows, opts] of panels) {
    if (rows.length === 0) continue;
    const p = panel(title, unit, rows, top, opts);
    body.push(p.svg);
    top += p.height + 20;
  }
  const header = `tidepool benchmark: node ${escape(data.node)}, ${data.cpus} CPUs (${escape(data.cpu)}), ${data.reps} repetitions; bars: median, line: min - max; blue: tidepool`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="980" height="${top + 10}" font-family="sans-serif" font-size="11">`,
    '<rect width="100%" height="100%" fill="white"/>',
    `<text x="10" y="20" font-size="13">${header}</text>`,
    ...body,
    '</svg>',
  ].join('\n');
}

module.exports = { chart };

if (require.main === module) {
  const [input, output] = process.argv.slice(2);
  if (!input || !output) {
    console.error('usage: node bench/chart.js RESULTS.json OUTPUT.svg');
    process.exit(2);
  }
  fs.writeFileSync(output, chart(JSON.parse(fs.readFileSync(input, 'utf8'))));
  console.log(`chart written to ${output}`);
}
