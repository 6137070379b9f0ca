#!/usr/bin/env bash
# Packs tidepool as npm would publish it, installs the tarball into a fresh
# temporary project (which builds the addon from source with cargo, since no
# prebuilt binary ships), then requires it and runs a task.
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
  const { Pool } = require('tidepool');
  const pool = new Pool({ encoding: 'hex' });
  const message = { data: crypto.randomBytes(1000) };
  pool.post(message).then(async ({ result, message: back }) => {
    assert.equal(back, message);
    assert.equal(result, crypto.createHash('sha256').update(message.data).digest('hex'));
    await pool.close();
    console.log('pack-smoke: require(\"tidepool\") and post() work from the installed tarball');
  });
"
