#!/usr/bin/env node
'use strict';
// Builds the example kernel libraries the tests, the benchmarks and the docs
// load (examples/kernels), into examples/kernels/build/:
//
//   tidepool_example_kernels.node   the Rust library (cargo; also a napi-rs
//                                   addon, so require() gives its handle)
//   example_c_wc.so                 the C library (the system C compiler)
//   example_c_wc_abi2.so            the same, deliberately built for ABI
//                                   version 2 (tests of the refusal)
//   example_c_keep_host.so          a C library that keeps a host past its
//                                   call (forbidden; tests of the check)
//
// cargo decides itself whether the Rust library is up to date; the C ones
// are rebuilt when their source or the header is newer. Without a C
// compiler the C libraries are skipped (their tests say so), except under
// CI, where that is an error.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const out = path.join(root, 'examples', 'kernels', 'build');
const profile = process.env.TIDEPOOL_PROFILE || 'release';

function run(cmd, args) {
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (result.error) return result.error;
  if (result.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (exit ${result.status})`);
  return null;
}

function rustLibrary() {
  const args = ['build', '-p', 'tidepool-example-kernels', '--locked'];
  if (profile === 'release') args.push('--release');
  else args.push('--profile', profile);
  const error = run(process.env.CARGO || 'cargo', args);
  if (error) throw error;
  const targetDir = process.env.CARGO_TARGET_DIR
    ? path.resolve(root, process.env.CARGO_TARGET_DIR)
    : path.join(root, 'target');
  const file =
    process.platform === 'win32'
      ? 'tidepool_example_kernels.dll'
      : process.platform === 'darwin'
        ? 'libtidepool_example_kernels.dylib'
        : 'libtidepool_example_kernels.so';
  const built = path.join(targetDir, profile === 'dev' ? 'debug' : profile, file);
  const target = path.join(out, 'tidepool_example_kernels.node');
  const tmp = `${target}.${process.pid}.tmp`;
  fs.copyFileSync(built, tmp);
  fs.renameSync(tmp, target);
}

function newer(target, sources) {
  if (!fs.existsSync(target)) return true;
  const built = fs.statSync(target).mtimeMs;
  return sources.some((s) => fs.statSync(s).mtimeMs > built);
}

function cLibraries() {
  const cc = process.env.CC || 'cc';
  const sources = path.join(root, 'examples', 'kernels', 'c');
  const header = path.join(root, 'include', 'tidepool_kernel.h');
  const flags = [
    '-std=c11',
    '-O2',
    '-Wall',
    '-Wextra',
    '-Werror',
    '-shared',
    '-fPIC',
    '-I',
    path.join(root, 'include'),
  ];
  for (const [name, file, defines] of [
    ['example_c_wc.so', 'wc.c', []],
    ['example_c_wc_abi2.so', 'wc.c', ['-DWC_TEST_ABI_VERSION=2']],
    ['example_c_keep_host.so', 'keep_host.c', []],
  ]) {
    const source = path.join(sources, file);
    const target = path.join(out, name);
    if (!newer(target, [source, header])) continue;
    const error = run(cc, [...flags, ...defines, source, '-o', target]);
    if (error) {
      if (process.env.CI) throw new Error(`no C compiler (${cc}): ${error.message}`);
      console.warn(
        `tidepool: no C compiler (${cc}); the C example kernels are not built and their tests will skip`,
      );
      return;
    }
  }
}

fs.mkdirSync(out, { recursive: true });
rustLibrary();
if (process.platform !== 'win32') cLibraries();
