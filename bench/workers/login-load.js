'use strict';
// The clients of bench/login.js, in a process of their own:
//   node login-load.js <port> <connections> <warmupMs> <durationMs>
// `connections` clients POST /login (a JSON body: a user and a password)
// back to back, every fourth with a wrong password; prints requests/s over
// the measured interval, and how many answers were wrong (a 401 for the
// right password, or a 204 for a wrong one).

const { Client } = require('undici');

const [port, connections, warmupMs, durationMs] = process.argv.slice(2, 6).map(Number);
const origin = `http://127.0.0.1:${port}`;

async function main() {
  let measuring = false;
  let stop = false;
  let requests = 0;
  let wrong = 0;
  const loaders = Array.from({ length: connections }, async (_, c) => {
    const client = new Client(origin, { pipelining: 1 });
    for (let i = c; !stop; i++) {
      const right = i % 4 !== 0;
      const res = await client.request({
        path: '/login',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user: 'alice', password: right ? 'correct horse' : 'wrong horse' }),
      });
      await res.body.dump();
      if (res.statusCode !== (right ? 204 : 401)) wrong++;
      if (measuring) requests++;
    }
    await client.close();
  });
  await new Promise((resolve) => setTimeout(resolve, warmupMs));
  measuring = true;
  const t = process.hrtime.bigint();
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  measuring = false;
  const seconds = Number(process.hrtime.bigint() - t) / 1e9;
  const counted = requests;
  stop = true;
  await Promise.all(loaders);
  console.log(JSON.stringify({ rps: counted / seconds, wrong }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
