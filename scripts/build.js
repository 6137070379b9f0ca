#!/usr/bin/env node
'use strict';
// Builds the native addon from source with cargo and copies it to
// ./tidepool.node. Runs as the package's `install` script.
//
// A second `npm install` does not rebuild: the build is skipped when
// tidepool.node exists and a hash of every input of the build (Rust sources,
// manifests, lock file) matches the one recorded by the last build.
// `node scripts/build.js --force` (npm run build) always builds.
//
// When this platform's prebuilt package (<name>-<platform>, an optional
// dependency of the published package) is installed, nothing is built.
//
// Installed as a dependency (inside node_modules), the build runs in a
// temporary target directory that is removed afterwards: a consumer's
// node_modules keeps the 3 MB addon, not cargo's ~120 MB of intermediate
// files. In a checkout, ./target is kept for incremental builds.

const { spawnSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const output = path.join(root, 'tidepool.node');
const stampFile = path.join(root, '.build-stamp');
const force = process.argv.includes('--force');
const profile = process.env.TIDEPOOL_PROFILE || 'release';

function inputs() {
  const files = [
    'Cargo.toml',
    'Cargo.lock',
    'build.rs',
    'crates/core/Cargo.toml',
    'crates/kernel-sdk/Cargo.toml',
    'vendor/zlib-rs/Cargo.toml',
  ];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.rs')) files.push(rel);
    }
  };
  walk('src');
  walk('crates/core/src');
  walk('crates/kernel-sdk/src');
  walk('vendor/zlib-rs/src');
  return files.sort();
}

function stamp() {
  const hash = crypto.createHash('sha256');
  hash.update(`${profile}\0${process.platform}\0${process.arch}\0`);
  for (const rel of inputs()) {
    const file = path.join(root, rel);
    if (!fs.existsSync(file)) continue;
    hash.update(rel);
    hash.update('\0');
    hash.update(fs.readFileSync(file));
  }
  return hash.digest('hex');
}

function libraryName() {
  if (process.platform === 'win32') return 'tidepool.dll';
  if (process.platform === 'darwin') return 'libtidepool.dylib';
  return 'libtidepool.so';
}

/**
 * One line the user sees even when npm hides install scripts' output (it
 * does, unless --foreground-scripts): written to the terminal itself when
 * there is one, else to stderr.
 */
function note(line) {
  try {
    const fd = fs.openSync('/dev/tty', 'w');
    fs.writeSync(fd, `${line}\n`);
    fs.closeSync(fd);
  } catch {
    process.stderr.write(`${line}\n`);
  }
}

function main() {
  const { OWN, envYes, platformName, prebuiltPackage } = require('../lib/addon/platform');
  const { missingAddonAdvice, BUILD_NEEDS } = require('../lib/addon/install-advice');
  // A prebuilt binary of this version wins, unless asked otherwise
  // (TIDEPOOL_BUILD_FROM_SOURCE=1, or `npm run build`, which always builds).
  const fromSource = force || envYes('TIDEPOOL_BUILD_FROM_SOURCE');
  const binary = fromSource ? null : prebuiltPackage(root);
  if (binary !== null) {
    console.log(`${OWN.name}: using the prebuilt addon ${binary.main}; not building`);
    return;
  }
  const wanted = stamp();
  if (
    !force &&
    fs.existsSync(output) &&
    fs.existsSync(stampFile) &&
    fs.readFileSync(stampFile, 'utf8') === wanted
  ) {
    console.log(`${OWN.name}: native addon is up to date, not rebuilding`);
    return;
  }
  const cargo = process.env.CARGO || 'cargo';
  if (spawnSync(cargo, ['--version'], { stdio: 'ignore' }).error) {
    console.error(
      `${OWN.name}: no native addon for ${platformName()}. ${missingAddonAdvice(root, { atInstall: true })}`,
    );
    process.exit(1);
  }
  const dependency = root.split(path.sep).includes('node_modules');
  const scratch =
    dependency && !process.env.CARGO_TARGET_DIR
      ? fs.mkdtempSync(path.join(os.tmpdir(), 'tidepool-build-'))
      : null;
  const args = ['build', '-p', 'tidepool', '--locked'];
  if (profile === 'release') args.push('--release');
  else args.push('--profile', profile);
  console.log(`${OWN.name}: building the native addon: ${cargo} ${args.join(' ')}`);
  note(`${OWN.name}: compiling the native addon from source (1-3 minutes)...`);
  const env = scratch ? { ...process.env, CARGO_TARGET_DIR: scratch } : process.env;
  const result = spawnSync(cargo, args, { cwd: root, stdio: 'inherit', env });
  const fail = (message, status) => {
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
    console.error(message);
    process.exit(status);
  };
  if (result.error && result.error.code === 'ENOENT') {
    fail(
      `${OWN.name}: cargo was not found; ${BUILD_NEEDS}. Install them, then run \`npm rebuild ${OWN.name}\`.`,
      1,
    );
  }
  if (result.status !== 0) {
    fail(
      `${OWN.name}: cargo build failed (exit ${result.status}); the addon needs Rust >= 1.88 and a C compiler`,
      result.status || 1,
    );
  }
  const targetDir =
    scratch ??
    (process.env.CARGO_TARGET_DIR
      ? path.resolve(root, process.env.CARGO_TARGET_DIR)
      : path.join(root, 'target'));
  const built = path.join(targetDir, profile === 'dev' ? 'debug' : profile, libraryName());
  // Copy to a temporary name and rename, so a process that has the old addon
  // loaded keeps a valid file and nobody sees a half-written one.
  const tmp = `${output}.${process.pid}.tmp`;
  fs.copyFileSync(built, tmp);
  fs.renameSync(tmp, output);
  fs.writeFileSync(stampFile, wanted);
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  console.log(`${OWN.name}: built ${path.relative(process.cwd(), output) || output}`);
}

main();
