#!/usr/bin/env bash
# Packs tidepool as npm would publish it, installs the tarball into a fresh
# temporary project (which builds the addon from source with cargo, since no
# prebuilt binary ships yet), then requires it from CommonJS and ESM and runs
# a task; checks the installed package (no build leftovers, every file the
# README links to, the licence) and the message of an install without
# scripts.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$root"
tgz=$(npm pack --silent --pack-destination "$tmp" | tail -n 1)
echo "pack-smoke: packed $tgz ($(du -h "$tmp/$tgz" | cut -f1))"

cd "$tmp"
mkdir app && cd app
npm init -y >/dev/null
# Share the registry crates already compiled in this checkout; the packaged
# crate itself is still compiled from the tarball's sources.
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" npm install --no-audit --no-fund "../$tgz"
node -e "
  const assert = require('node:assert/strict');
  const crypto = require('node:crypto');
  const { Pool } = require('@tidepool-rs/pool');
  const pool = new Pool({ encoding: 'hex' });
  const message = { data: crypto.randomBytes(1000) };
  pool.post(message).then(async ({ result, message: back }) => {
    assert.equal(back, message);
    assert.equal(result, crypto.createHash('sha256').update(message.data).digest('hex'));
    await pool.close();
    console.log('pack-smoke: require(\"@tidepool-rs/pool\") and post() work from the installed tarball');
  });
"
node --input-type=module -e "
  import assert from 'node:assert/strict';
  import { Pool } from '@tidepool-rs/pool';
  const pool = new Pool({ kernel: 'crc32', encoding: 'hex' });
  const { result } = await pool.post(Buffer.from('123456789'));
  assert.equal(result, 'cbf43926');
  await pool.close();
  console.log('pack-smoke: import { Pool } from \"@tidepool-rs/pool\" works (ESM)');
"
# prom-client is an optional peer: without it, @tidepool-rs/pool/metrics loads and
# says what to install.
node -e "
  const { Pool } = require('@tidepool-rs/pool');
  const { collectMetrics } = require('@tidepool-rs/pool/metrics');
  const pool = new Pool();
  try { collectMetrics(pool); console.error('pack-smoke: collectMetrics() worked without prom-client?'); process.exit(1); }
  catch (e) { if (e.code !== 'ERR_TIDEPOOL_NO_PROM_CLIENT') throw e; }
  pool.close().then(() => console.log('pack-smoke: without prom-client, @tidepool-rs/pool/metrics says: npm install prom-client'));
"
# What the installed package holds: no build leftovers, every file the
# README links to, the licence.
pkg=node_modules/@tidepool-rs/pool
if [ -e "$pkg/target" ]; then echo "pack-smoke: $pkg/target was left behind" >&2; exit 1; fi
node -e "
  const fs = require('node:fs');
  const path = require('node:path');
  const dir = '$pkg';
  const readme = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
  const links = [...readme.matchAll(/\]\(([^)#:]+)(#[^)]*)?\)/g)].map((m) => m[1]);
  const missing = [...links, 'LICENSE'].filter((l) => !fs.existsSync(path.join(dir, l)));
  if (missing.length) { console.error('pack-smoke: the package lacks ' + missing.join(', ')); process.exit(1); }
  console.log('pack-smoke: the ' + links.length + ' files the README links to and LICENSE are in the package');
"
echo "pack-smoke: node_modules/@tidepool-rs/pool is $(du -sh "$pkg" | cut -f1) after a source build"
# Installed with scripts disabled (npm --ignore-scripts, pnpm's default):
# require() says what to run.
cd "$tmp" && mkdir noscripts && cd noscripts && npm init -y >/dev/null
npm install --no-audit --no-fund --ignore-scripts "../$tgz" >/dev/null
node -e "
  try { require('@tidepool-rs/pool'); console.error('pack-smoke: require() worked without a built addon?'); process.exit(1); }
  catch (e) {
    if (e.code !== 'ERR_TIDEPOOL_NOT_BUILT' || !e.message.includes('npm rebuild @tidepool-rs/pool')) throw e;
    console.log('pack-smoke: without install scripts, require() says: npm rebuild @tidepool-rs/pool');
  }
"

# The prebuilt path: `npm run pack:all` (the main package naming every
# platform package, and this platform's), both installed into a fresh project
# with cargo and rustc off the PATH: nothing is compiled.
cd "$root"
node scripts/pack-all.js >/dev/null
main_tgz=$(ls "$root"/dist/tidepool-rs-pool-[0-9]*.tgz)
binary_tgz=$(ls "$root"/dist/tidepool-rs-pool-*-*.tgz | grep -v "/tidepool-rs-pool-[0-9]")
cd "$tmp" && mkdir prebuilt && cd prebuilt && npm init -y >/dev/null
no_rust_path=$(echo "$PATH" | tr ':' '\n' | while read -r d; do [ -x "$d/cargo" ] || [ -x "$d/rustc" ] || echo "$d"; done | paste -sd:)
start=$(date +%s.%N)
env PATH="$no_rust_path" bash -c '! command -v cargo && ! command -v rustc && npm install --no-audit --no-fund "$0" "$1"' "$binary_tgz" "$main_tgz" >/dev/null
echo "pack-smoke: installed the prebuilt tarballs without cargo in $(node -p "($(date +%s.%N) - $start).toFixed(1)") s"
if [ -e node_modules/@tidepool-rs/pool/tidepool.node ]; then echo "pack-smoke: the prebuilt install compiled an addon" >&2; exit 1; fi
env PATH="$no_rust_path" node -e "
  const assert = require('node:assert/strict');
  const crypto = require('node:crypto');
  const { Pool } = require('@tidepool-rs/pool');
  const pool = new Pool({ kernel: 'sha512', encoding: 'hex' });
  const data = crypto.randomBytes(100000);
  pool.post(data).then(async ({ result }) => {
    assert.equal(result, crypto.createHash('sha512').update(data).digest('hex'));
    await pool.close();
    console.log('pack-smoke: the prebuilt addon works from CommonJS');
  });
"
env PATH="$no_rust_path" node --input-type=module -e "
  import assert from 'node:assert/strict';
  import { Pool } from '@tidepool-rs/pool';
  const pool = new Pool({ kernel: 'crc32', encoding: 'hex' });
  assert.equal((await pool.post(Buffer.from('123456789'))).result, 'cbf43926');
  await pool.close();
  console.log('pack-smoke: the prebuilt addon works from ESM');
"
env PATH="$no_rust_path" node --input-type=module -e "
  import assert from 'node:assert/strict';
  import { createRequire } from 'node:module';
  import * as esm from '@tidepool-rs/pool';
  const cjs = createRequire(process.cwd() + '/')('@tidepool-rs/pool');
  assert.deepEqual(Object.keys(esm).filter((k) => k !== 'default').sort(), Object.keys(cjs).sort());
  assert.ok(esm.kernels.includes('sha256'));
  console.log('pack-smoke: ESM sees every CommonJS export by name');
"
size_kb=$(du -sk node_modules/@tidepool-rs/pool | cut -f1)
echo "pack-smoke: node_modules/@tidepool-rs/pool is ${size_kb} KiB, its binary package $(du -sh node_modules/@tidepool-rs/pool-* | cut -f1)"
if [ "$size_kb" -ge 5120 ]; then echo "pack-smoke: node_modules/@tidepool-rs/pool is 5 MB or more" >&2; exit 1; fi
