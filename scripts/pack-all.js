#!/usr/bin/env node
'use strict';
// npm run pack:all: leaves in dist/
//
//   tidepool-rs-pool-<version>.tgz     the main package (@tidepool-rs/pool),
//                                      whose optionalDependencies name every
//                                      platform package at this version (as
//                                      `napi pre-publish` writes them at
//                                      release)
//   tidepool-rs-pool-<platform>-<version>.tgz
//                                      this platform's binary package
//                                      (@tidepool-rs/pool-<platform>, from
//                                      npm/<platform>/, made by
//                                      `napi create-npm-dirs`), holding the
//                                      addon built from these sources
//
// scripts/pack-smoke.sh installs the two into a project without cargo.

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { platformName } = require('../lib/addon/platform');

const root = path.resolve(__dirname, '..');
const dist = path.join(root, 'dist');
const stage = path.join(dist, 'stage');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

function pack(dir) {
  const out = execFileSync(npm, ['pack', '--silent', '--pack-destination', dist], {
    cwd: dir,
    encoding: 'utf8',
  });
  return out.trim().split('\n').pop();
}

fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(stage, { recursive: true });

// The addon, built (or found up to date) by the install script's build.
execFileSync(process.execPath, [path.join(root, 'scripts', 'build.js')], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, TIDEPOOL_BUILD_FROM_SOURCE: '1' },
});

// This platform's binary package.
const platform = platformName();
const platformDir = path.join(root, 'npm', platform);
if (!fs.existsSync(path.join(platformDir, 'package.json'))) {
  throw new Error(
    `no npm/${platform}/package.json: not one of package.json's napi.targets (npx napi create-npm-dirs makes them)`,
  );
}
const binaryStage = path.join(stage, platform);
fs.mkdirSync(binaryStage);
const binaryPkg = JSON.parse(fs.readFileSync(path.join(platformDir, 'package.json'), 'utf8'));
binaryPkg.version = pkg.version;
fs.writeFileSync(path.join(binaryStage, 'package.json'), `${JSON.stringify(binaryPkg, null, 2)}\n`);
fs.copyFileSync(path.join(platformDir, 'README.md'), path.join(binaryStage, 'README.md'));
fs.copyFileSync(path.join(root, 'tidepool.node'), path.join(binaryStage, binaryPkg.main));
const binaryTgz = pack(binaryStage);

// The main package: the files `npm pack` takes, with optionalDependencies on
// every platform package.
const listed = JSON.parse(
  execFileSync(npm, ['pack', '--dry-run', '--json', '--silent'], { cwd: root, encoding: 'utf8' }),
)[0].files;
const mainStage = path.join(stage, 'main');
for (const { path: file } of listed) {
  fs.mkdirSync(path.dirname(path.join(mainStage, file)), { recursive: true });
  fs.copyFileSync(path.join(root, file), path.join(mainStage, file));
}
const optional = {};
for (const dir of fs.readdirSync(path.join(root, 'npm')).sort()) {
  optional[JSON.parse(fs.readFileSync(path.join(root, 'npm', dir, 'package.json'), 'utf8')).name] =
    pkg.version;
}
fs.writeFileSync(
  path.join(mainStage, 'package.json'),
  `${JSON.stringify({ ...pkg, optionalDependencies: optional }, null, 2)}\n`,
);
const mainTgz = pack(mainStage);

fs.rmSync(stage, { recursive: true, force: true });
console.log(`pack:all: dist/${mainTgz} and dist/${binaryTgz}`);
