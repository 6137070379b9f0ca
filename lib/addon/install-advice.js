'use strict';
// What to do when there is no native addon: the one text that the loader
// (ERR_TIDEPOOL_NOT_BUILT) and the install script print, fitted to how this
// copy was installed, so the fix it names is the one that works there.
//
// The ways a copy ends up without an addon:
// - a checkout whose `npm install` has not run (or ran with --ignore-scripts);
// - an install from a package whose optionalDependencies name the prebuilt
//   platform package (a release, or `npm run pack:all`'s tarball) where that
//   package did not arrive: --omit=optional, a tarball installed alone, a
//   lockfile or node_modules made on another platform;
// - an install from sources alone (a git dependency, a plain `npm pack`
//   tarball) whose install script did not run: --ignore-scripts, or pnpm,
//   which runs a dependency's scripts only when the project allows them;
// - a prebuilt package of another version;
// - a build from source asked for (TIDEPOOL_BUILD_FROM_SOURCE) without cargo;
// - a platform with no prebuilt package and no build.

const fs = require('node:fs');
const path = require('node:path');
const { OWN, platformName, installedPrebuilt, prebuiltPlatforms } = require('./platform');

const BUILD_NEEDS =
  'building needs Rust >= 1.88 with cargo (https://rustup.rs), access to crates.io and a C compiler';

/**
 * `checkout`, `pnpm`, `npm` (npm, yarn and the rest take npm's commands) or
 * `copy` (a packed copy outside any node_modules, a vendored one). `own`:
 * the copy's manifest (a packed one names its platform packages).
 */
function installer(root, own = OWN) {
  const parts = path.resolve(root).split(path.sep);
  const at = parts.lastIndexOf('node_modules');
  if (at === -1) return own.optionalDependencies === undefined ? 'checkout' : 'copy';
  if (parts.includes('.pnpm')) return 'pnpm';
  // pnpm's other layouts (nodeLinker: hoisted) leave its state beside the packages.
  const modules = parts.slice(0, at + 1).join(path.sep) || path.sep;
  return fs.existsSync(path.join(modules, '.modules.yaml')) ? 'pnpm' : 'npm';
}

/** The command that runs this package's install script (a build from source) for `how`. */
function rebuildCommand(how, name = OWN.name) {
  if (how !== 'pnpm') return `run \`npm rebuild ${name}\``;
  // A tarball or git dependency is allowed by its own key, which approve-builds writes.
  return (
    `allow its install script (\`pnpm approve-builds\`; from the registry, \`allowBuilds: { '${name}': true }\` in ` +
    `pnpm-workspace.yaml, pnpm 10: \`onlyBuiltDependencies\`) and run \`pnpm rebuild ${name}\``
  );
}

/**
 * The sentences after "no native addon for <platform>": why none was found
 * and the command that fixes it here. `atInstall`: said by the install
 * script, which runs but finds no cargo to build with. `own`: the copy's
 * manifest (tests give another).
 */
function missingAddonAdvice(root, { atInstall = false, own = OWN } = {}) {
  const name = own.name;
  const platform = platformName();
  const binary = `${name}-${platform}`;
  const wanted = `${binary}@${own.version}`;
  const how = installer(root, own);
  const rebuild = rebuildCommand(how, name);
  const add = `${how === 'pnpm' ? 'pnpm add' : 'npm install'} ${wanted}\` (or its tarball, beside ${name}'s)`;
  const noCargo = atInstall ? 'cargo was not found. ' : '';

  if (how === 'checkout') {
    return `${noCargo}This is a checkout: \`npm install\` builds the addon from source (\`npm run build\` rebuilds it); ${BUILD_NEEDS}.`;
  }
  const found = installedPrebuilt(root, binary);
  if (found !== null && found.version === own.version) {
    // Only a forced build from source passes over a prebuilt addon that fits.
    return (
      `${noCargo}TIDEPOOL_BUILD_FROM_SOURCE asks for a build from source, but the prebuilt package ${found.name} ` +
      `fits: unset it to use ${found.name}, or install Rust; ${BUILD_NEEDS}.`
    );
  }
  if (found !== null) {
    return (
      `${noCargo}The prebuilt package ${found.name} is installed at ${found.version}, but this ${name} is ` +
      `${own.version} and takes only its own version: \`${add}. Or build from source: ${rebuild}; ${BUILD_NEEDS}.`
    );
  }
  const optional =
    own.optionalDependencies !== undefined && Object.hasOwn(own.optionalDependencies, binary);
  if (optional) {
    return (
      `${noCargo}Its prebuilt package ${wanted} is not installed: an install with --omit=optional (or ` +
      `--no-optional) leaves it out, a tarball of ${name} installed without the platform tarball has none, and a ` +
      `lockfile or node_modules made on another OS, CPU or C library names another platform's (npm/cli#4828: ` +
      `remove node_modules and package-lock.json and install again). Add it: \`${add}. Or build from source: ` +
      `${rebuild}; ${BUILD_NEEDS}.`
    );
  }
  const scripts = atInstall
    ? 'cargo was not found'
    : how === 'pnpm'
      ? 'pnpm ran no install script for it (pnpm runs a dependency’s build only when the project allows it)'
      : 'its install script did not run (--ignore-scripts?)';
  const prebuilt = prebuiltPlatforms().includes(platform)
    ? `This copy was installed from sources (a git dependency or a plain \`npm pack\` tarball), which build the addon at install, and ${scripts}.`
    : `There is no prebuilt package for ${platform}, so the addon is built at install, and ${scripts}.`;
  return `${prebuilt} Build it: ${rebuild}; ${BUILD_NEEDS}.`;
}

module.exports = { installer, rebuildCommand, missingAddonAdvice, BUILD_NEEDS };
