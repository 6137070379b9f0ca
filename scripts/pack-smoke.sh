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
# What the installed package holds: no build leftovers, every file its
# Markdown documents link to (README, docs/, deploy/), the licence.
pkg=node_modules/@tidepool-rs/pool
if [ -e "$pkg/target" ]; then echo "pack-smoke: $pkg/target was left behind" >&2; exit 1; fi
node -e "
  const fs = require('node:fs');
  const path = require('node:path');
  const { prose } = require('$root/__test__/markdown.js');
  const dir = '$pkg';
  const docs = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(path.join(dir, d), { withFileTypes: true })) {
      const rel = path.join(d, e.name);
      if (e.isDirectory()) { if (e.name !== 'node_modules') walk(rel); } else if (e.name.endsWith('.md')) docs.push(rel);
    }
  };
  walk('.');
  const missing = [];
  let links = 0;
  for (const doc of docs) {
    for (const [, link] of prose(fs.readFileSync(path.join(dir, doc), 'utf8')).matchAll(/\\]\\(([^)\\s#]+)(#[^)]*)?\\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
      links++;
      if (!fs.existsSync(path.join(dir, path.dirname(doc), link))) missing.push(doc + ' -> ' + link);
    }
  }
  if (!fs.existsSync(path.join(dir, 'LICENSE'))) missing.push('LICENSE');
  if (missing.length) { console.error('pack-smoke: the package lacks ' + missing.join(', ')); process.exit(1); }
  console.log('pack-smoke: the ' + links + ' files its ' + docs.length + ' Markdown documents link to and LICENSE are in the package');
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
# Every package pack:all makes is one npm would publish, publicly, and every
# package the main one names is in its scope: no name outside it can be
# registered by someone else and then loaded.
for tgz in "$main_tgz" "$binary_tgz"; do
  if ! out=$(cd "$root/dist" && npm publish --dry-run "./$(basename "$tgz")" 2>&1) ||
    ! grep -q "with tag latest and public access (dry-run)" <<<"$out"; then
    echo "pack-smoke: npm publish --dry-run of $(basename "$tgz") did not pass:" >&2
    echo "$out" >&2
    exit 1
  fi
done
tar -xzOf "$main_tgz" package/package.json | node -e "
  const pkg = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
  const scope = pkg.name.split('/')[0] + '/';
  const named = Object.keys(pkg.optionalDependencies || {});
  const stray = named.filter((n) => !n.startsWith(pkg.name + '-') || !n.startsWith(scope));
  if (!pkg.name.startsWith('@') || named.length !== pkg.napi.targets.length || stray.length || pkg.napi.packageName !== pkg.name) {
    console.error('pack-smoke: the main package must be scoped and name one platform package per target in its scope', pkg.name, named);
    process.exit(1);
  }
  console.log('pack-smoke: npm publish --dry-run passes for both tarballs; the ' + named.length + ' platform packages are ' + pkg.name + '-<platform>');
"
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
# Every entry, from ESM and CommonJS: each value its installed .d.ts
# declares (read with TypeScript's checker) is there by name, the same both
# ways, and every CommonJS export is an ESM named export.
env PATH="$no_rust_path" node --input-type=module -e "
  import assert from 'node:assert/strict';
  import { createRequire } from 'node:module';
  const require = createRequire(process.cwd() + '/');
  const { declaredValues } = require('$root/__test__/dts-exports.js');
  const installed = process.cwd() + '/node_modules/@tidepool-rs/pool/';
  for (const [entry, dts] of [['', 'index.d.ts'], ['/metrics', 'metrics.d.ts'], ['/zlib', 'zlib.d.ts'], ['/crypto', 'crypto.d.ts'], ['/password', 'password.d.ts']]) {
    const name = '@tidepool-rs/pool' + entry;
    const esm = await import(name);
    const cjs = require(name);
    const declared = declaredValues(installed + dts);
    for (const key of declared) {
      assert.ok(Object.hasOwn(esm, key), name + ': no ESM export ' + key + ', which ' + dts + ' declares');
      assert.equal(esm[key], cjs[key], name + ': ' + key + ' differs between ESM and CommonJS');
    }
    for (const key of Object.keys(cjs)) assert.ok(Object.hasOwn(esm, key), name + ': ESM lacks ' + key);
    console.log('pack-smoke: ' + name + ': the ' + declared.length + ' values of ' + dts + ', by name from ESM and CommonJS');
  }
  const { pool } = await import('@tidepool-rs/pool/zlib');
  await pool.close();
  await (await import('@tidepool-rs/pool/crypto')).pool.close();
"
size_kb=$(du -sk node_modules/@tidepool-rs/pool | cut -f1)
echo "pack-smoke: node_modules/@tidepool-rs/pool is ${size_kb} KiB, its binary package $(du -sh node_modules/@tidepool-rs/pool-* | cut -f1)"
if [ "$size_kb" -ge 5120 ]; then echo "pack-smoke: node_modules/@tidepool-rs/pool is 5 MB or more" >&2; exit 1; fi

# TypeScript, strict, from the installed package's own types: CommonJS
# (module commonjs, `import x = require()` and named imports) and ESM
# (nodenext, from an .mts file), the metrics subpath included (its types
# name prom-client's, the optional peer a user of it installs).
tsc="$root/node_modules/.bin/tsc"
npm install --no-audit --no-fund "prom-client@$(node -p "require('$root/package.json').devDependencies['prom-client']")" >/dev/null
cat > cjs.ts <<'TS'
import { Pool, kernels, type PostResult } from '@tidepool-rs/pool';
import tidepool = require('@tidepool-rs/pool');
import { collectMetrics } from '@tidepool-rs/pool/metrics';
const pool: tidepool.Pool = new Pool({ kernel: 'sha256' });
const done: Promise<PostResult<{ data: Buffer }>> = pool.post({ data: Buffer.from('x') });
export { done, kernels, collectMetrics };
TS
cat > esm.mts <<'TS'
import { Pool } from '@tidepool-rs/pool';
import type { CollectMetricsOptions } from '@tidepool-rs/pool/metrics';
const pool = new Pool({ encoding: 'hex' });
const { result }: { result: string } = await pool.post(Buffer.from('x'));
const options: CollectMetricsOptions = { prefix: 'app_' };
await pool.close();
export { result, options };
TS
"$tsc" --noEmit --strict --module commonjs --moduleResolution node10 --target es2022 --typeRoots "$root/node_modules/@types" --types node cjs.ts
"$tsc" --noEmit --strict --module nodenext --moduleResolution nodenext --target es2022 --typeRoots "$root/node_modules/@types" --types node esm.mts
echo 'pack-smoke: the installed types check under tsc --strict, from CommonJS (node10) and ESM (nodenext)'

# The main tarball alone (no platform tarball, no cargo): require() names
# the package to add, at this version.
cd "$tmp" && mkdir alone && cd alone && npm init -y >/dev/null
env PATH="$no_rust_path" npm install --no-audit --no-fund --ignore-scripts "$main_tgz" >/dev/null
env PATH="$no_rust_path" node -e "
  const version = require('@tidepool-rs/pool/package.json').version;
  try { require('@tidepool-rs/pool'); console.error('pack-smoke: require() worked without the platform package?'); process.exit(1); }
  catch (e) {
    const wanted = 'npm install @tidepool-rs/pool-' + e.message.split(' no native addon for ')[1].split('.')[0] + '@' + version;
    if (e.code !== 'ERR_TIDEPOOL_NOT_BUILT' || !e.message.includes(wanted)) throw e;
    console.log('pack-smoke: the main tarball alone says: ' + wanted);
  }
"

# pnpm (11+ holds back install scripts until the project allows them; a
# tarball is allowed by its path, as pnpm names it): the README's steps, with
# cargo off the PATH, from CommonJS and ESM.
cd "$tmp" && mkdir pnpm && cd pnpm && npm init -y >/dev/null
pnpm_version=12.21.0
pnpm() { env PATH="$no_rust_path" npm exec --yes --package="pnpm@$pnpm_version" -- pnpm "$@"; }
rel_main=$(node -p "require('node:path').relative(process.cwd(), process.argv[1])" "$main_tgz")
printf "allowBuilds:\n  '@tidepool-rs/pool@file:%s': true\n" "$rel_main" > pnpm-workspace.yaml
pnpm add "$binary_tgz" "$main_tgz" > pnpm.log 2>&1 || { cat pnpm.log >&2; echo "pack-smoke: pnpm add failed" >&2; exit 1; }
grep -q 'using the prebuilt addon' pnpm.log || { cat pnpm.log >&2; echo "pack-smoke: pnpm did not run the allowed install script" >&2; exit 1; }
env PATH="$no_rust_path" node -e "
  const { Pool } = require('@tidepool-rs/pool');
  const pool = new Pool({ kernel: 'crc32', encoding: 'hex' });
  pool.post(Buffer.from('123456789')).then(async ({ result }) => {
    if (result !== 'cbf43926') throw new Error(result);
    await pool.close();
  });
"
env PATH="$no_rust_path" node --input-type=module -e "
  import { Pool } from '@tidepool-rs/pool';
  await new Pool().close();
"
echo "pack-smoke: pnpm $pnpm_version installs both tarballs with the install script allowed; CommonJS and ESM work"
