'use strict';
// The platform a prebuilt binary is made for, named as napi-rs names its
// per-platform packages (`tidepool-linux-x64-gnu`, `tidepool-darwin-arm64`,
// `tidepool-win32-x64-msvc`, ...): the loader (lib/binding.js), the install
// script (scripts/build.js) and `npm run pack:all` agree on it here.

const fs = require('node:fs');

/** True on a Linux whose C library is musl (Alpine), false on glibc. */
function isMusl() {
  try {
    // glibc's loader reports its version; musl's process report has none.
    const report = process.report && process.report.getReport();
    const header = report && (typeof report === 'string' ? JSON.parse(report) : report).header;
    if (header && header.glibcVersionRuntime) return false;
  } catch {
    // fall through to the file system
  }
  try {
    return fs.readFileSync('/usr/bin/ldd', 'utf8').includes('musl');
  } catch {
    return true;
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

module.exports = { platformName, platformPackage };
