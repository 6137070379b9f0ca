'use strict';
// Where the JS thread's time goes while 1024 gunzip results of ~300 KB
// arrive: a CPU profile of just that window (inspector), self time per
// function, top 14.
//   node bench/probes/large-delivery-profile.js
const inspector = require('inspector');
const { Pool } = require('../..');
const { gunzipInputs } = require('./gunzip-inputs');
const ins = gunzipInputs();
const session = new inspector.Session();
session.connect();
const post = (m, p) =>
  new Promise((res, rej) => session.post(m, p, (e, r) => (e ? rej(e) : res(r))));
(async () => {
  const pool = new Pool({ kernel: 'gunzip' });
  await Promise.all(ins.slice(0, 64).map((m) => pool.post(m)));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 50 });
  await post('Profiler.start');
  await Promise.all(ins.map((m) => pool.post(m)));
  const { profile: p } = await post('Profiler.stop');
  const self = new Map();
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  p.samples.forEach((s, i) => {
    const n = byId.get(s);
    const k =
      n.callFrame.functionName +
      ' ' +
      (n.callFrame.url || '').split('/').pop() +
      ':' +
      n.callFrame.lineNumber;
    self.set(k, (self.get(k) || 0) + (p.timeDeltas[i] || 0));
  });
  console.log(
    [...self.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 14)
      .map(([k, v]) => (v / 1000).toFixed(1) + ' ms ' + k)
      .join('\n'),
  );
  await pool.close();
})();
