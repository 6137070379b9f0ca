'use strict';
// The platform a prebuilt binary is made for, named as napi-rs names its
// per-platform packages (`tidepool-linux-x64-gnu`, `tidepool-darwin-arm64`,
// `tidepool-win32-x64-msvc`, ...): the loader (lib/binding.js), the install
// script (scripts/build.js) and `npm run pack:all` agree on it here.

const fs = require('node:fs');
const path = require('node:path');

/** True on a Linux whose C library is musl (Alpine), false on glibc. */
function isMusl() {
  try {
    // glibc's loader reports its version; musl's process report has none.
    // (Without the network section, the report takes a millisecond.)
    if (process.report) process.report.excludeNetwork = true;
    const report = process.report && process.report.getReport();
    const header = report && (typeof report === 'string' ? JSON.parse(report) : report).header;
    if (header) return !header.glibcVersionRuntime;
  } catch {
    // fall through to the file system
  }
  try {
    return fs.readdirSync('/lib').some((f) => f.startsWith('ld-musl-'));
  } catch {
    return false;
  }
}

/** `linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`, ... for this process. */
function platformName() {
  const base = `${process.platform}-${process.arch}`;
  if (process.platform === 'linux') return `${base}-${isMusl() ? 'musl' : 'gnu'}`;
  if (process.platform === 'win32') return `${base}-msvc`;
  return base;
}

/** The npm package holding this platform's prebuilt addon. */
function platformPackage() {
  return `tidepool-${platformName()}`;
}

/**
 * This platform's prebuilt package as installed next to `root` (the
 * tidepool package): `{ dir, main }`, or null when it is not installed or
 * is not this tidepool's version (a stray copy higher up a monorepo is not
 * used).
 */
function prebuiltPackage(root) {
  const name = platformPackage();
  let manifest;
  try {
    manifest = require.resolve(`${name}/package.json`, { paths: [root] });
  } catch {
    return null;
  }
  const own = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const pkg = JSON.parse(fs.readFileSync(manifest, 'utf8'));
  if (pkg.version !== own.version) return null;
  return { name, dir: path.dirname(manifest), main: path.join(path.dirname(manifest), pkg.main) };
}

/** True when the environment variable says yes (`1`, `true`). */
function envYes(name) {
  const v = process.env[name];
  return v === '1' || v === 'true';
}

module.exports = { platformName, platformPackage, prebuiltPackage, envYes };
