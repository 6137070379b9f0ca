'use strict';
// What to do when there is no native addon: the one text that the loader
// (ERR_TIDEPOOL_NOT_BUILT) and the install script print, fitted to how this
// copy was installed, so the fix it names is the one that works there.
//
// The ways a copy ends up without an addon:
// - a checkout whose `npm install` has not run (or ran with --ignore-scripts);
// - an install from a package whose optionalDependencies name the prebuilt
//   platform package (a release, or `npm run pack:all`'s tarball) where that
//   package did not arrive: --omit=optional, or a tarball installed alone;
// - an install from sources alone (a git dependency, a plain `npm pack`
//   tarball) whose install script did not run: --ignore-scripts, or pnpm,
//   which runs a dependency's scripts only when the project allows them;
// - a prebuilt package of another version;
// - a platform with no prebuilt package and no build.

const path = require('node:path');
const { OWN, platformName, platformPackage, installedPrebuilt, prebuiltPlatforms } = require('./platform');

const BUILD_NEEDS = 'building needs Rust >= 1.88 with cargo (https://rustup.rs), access to crates.io and a C compiler';

/** `checkout`, `pnpm` or `npm` (npm, yarn and the rest take npm's commands). */
function installer(root) {
  const parts = path.resolve(root).split(path.sep);
  if (parts.includes('.pnpm')) return 'pnpm';
  if (parts.includes('node_modules')) return 'npm';
  return 'checkout';
}

/**
 * The sentences after "no native addon for <platform>": why none was found
 * and the command that fixes it here. `atInstall`: said by the install
 * script, which runs but finds no cargo to build with.
 */
function missingAddonAdvice(root, { atInstall = false } = {}) {
  const name = OWN.name;
  const platform = platformName();
  const binary = platformPackage();
  const wanted = `${binary}@${OWN.version}`;
  const how = installer(root);
  const rebuild =
    how === 'pnpm'
      ? `allow its install script (in pnpm-workspace.yaml: \`allowBuilds: { '${name}': true }\`, or \`pnpm approve-builds\`) and run \`pnpm rebuild ${name}\``
      : `run \`npm rebuild ${name}\``;
  const add = how === 'pnpm' ? `pnpm add ${wanted}` : `npm install ${wanted}`;

  if (how === 'checkout') {
    const missing = atInstall ? 'cargo was not found. ' : '';
    return `${missing}This is a checkout: \`npm install\` builds the addon from source (\`npm run build\` rebuilds it); ${BUILD_NEEDS}.`;
  }
  const found = installedPrebuilt(root);
  if (found !== null) {
    return (
      `The prebuilt package ${found.name} is installed at ${found.version}, but this ${name} is ${OWN.version} and ` +
      `takes only its own version: \`${add}\`. Or build from source: ${rebuild}; ${BUILD_NEEDS}.`
    );
  }
  const optional = OWN.optionalDependencies && Object.hasOwn(OWN.optionalDependencies, binary);
  if (optional) {
    return (
      `Its prebuilt package ${wanted} is not installed: an install with --omit=optional (or --no-optional) leaves it ` +
      `out, and a tarball of ${name} installed without the platform tarball has none. Add it: \`${add}\` (or its ` +
      `tarball, beside ${name}'s). Or build from source: ${rebuild}; ${BUILD_NEEDS}.`
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

module.exports = { installer, missingAddonAdvice, BUILD_NEEDS };
