'use strict';
// The platform a prebuilt binary is made for, named as napi-rs names its
// per-platform packages: the package's own name, a dash, the platform
// (`@tidepool-rs/pool-linux-x64-gnu`, `@tidepool-rs/pool-darwin-arm64`,
// `@tidepool-rs/pool-win32-x64-msvc`, ...), all in the one npm scope, so no
// one outside it can publish a package the loader would take. The loader
// (lib/addon/binding.js), the install script (scripts/build.js) and
// `npm run pack:all` agree on it here.

const fs = require('node:fs');
const path = require('node:path');

/** True on a Linux whose C library is musl (Alpine), false on glibc. */
function isMusl() {
  try {
    // glibc's loader reports its version; musl's process report has none.
    // (Without the network section, the report takes a millisecond; the
    // process's own setting is put back.)
    let report;
    // (`excludeNetwork` is Node's; @types/node lacks it.)
    const reporter = /** @type {NodeJS.ProcessReport & { excludeNetwork: boolean }} */ (
      process.report
    );
    if (reporter) {
      const excluded = reporter.excludeNetwork;
      reporter.excludeNetwork = true;
      try {
        report = reporter.getReport();
      } finally {
        reporter.excludeNetwork = excluded;
      }
    }
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

const ROOT = path.join(__dirname, '..', '..');
/** This package's manifest: its name and version name the platform package. */
const OWN = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

/** The npm package holding this platform's prebuilt addon. */
function platformPackage() {
  return `${OWN.name}-${platformName()}`;
}

/**
 * This platform's prebuilt package (`name`) as installed next to `root`
 * (this package): `{ name, version, dir, main }`, or null when none is. Any
 * version: see prebuiltPackage.
 */
function installedPrebuilt(root, name = platformPackage()) {
  let manifest;
  try {
    manifest = require.resolve(`${name}/package.json`, { paths: [root] });
  } catch {
    return null;
  }
  const pkg = JSON.parse(fs.readFileSync(manifest, 'utf8'));
  if (pkg.name !== name) return null;
  return {
    name,
    version: pkg.version,
    dir: path.dirname(manifest),
    main: path.join(path.dirname(manifest), pkg.main),
  };
}

/**
 * This platform's prebuilt package at this package's version, or null (a
 * stray copy of another version higher up a monorepo is not used).
 */
function prebuiltPackage(root) {
  const found = installedPrebuilt(root);
  return found !== null && found.version === OWN.version ? found : null;
}

/** The platform names of package.json's napi.targets (the prebuilt packages a release has). */
function prebuiltPlatforms() {
  const arch = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' };
  return OWN.napi.targets.map((triple) => {
    const [cpu, , os, abi] = triple.split('-');
    if (os === 'darwin') return `darwin-${arch[cpu]}`;
    if (os === 'windows') return `win32-${arch[cpu]}-${abi}`;
    return `${os}-${arch[cpu]}-${abi.replace(/eabihf$/, '')}`;
  });
}

/** True when the environment variable says yes (`1`, `true`). */
function envYes(name) {
  const v = process.env[name];
  return v === '1' || v === 'true';
}

module.exports = {
  OWN,
  platformName,
  platformPackage,
  installedPrebuilt,
  prebuiltPackage,
  prebuiltPlatforms,
  envYes,
};
