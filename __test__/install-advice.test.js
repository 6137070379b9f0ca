'use strict';
// ERR_TIDEPOOL_NOT_BUILT's advice (lib/addon/install-advice.js) for each way a
// copy can be left without an addon, on layouts made on disk as npm and
// pnpm make them: the fix it names must be the one that works there. (The
// real installs, npm's and pnpm's, are scripts/pack-smoke.sh's.)

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { installer, missingAddonAdvice } = require('../lib/addon/install-advice');
const { platformName } = require('../lib/addon/platform');

const NAME = '@tidepool-rs/pool';
const PLATFORM = platformName();
const BINARY = `${NAME}-${PLATFORM}`;
/** A packed manifest (pack:all's): it names every platform package. */
const PACKED = { name: NAME, version: '1.2.3', optionalDependencies: { [BINARY]: '1.2.3' } };
/** A manifest from sources (a checkout, a git dependency, a plain npm pack). */
const SOURCES = { name: NAME, version: '1.2.3' };

/** A temporary tree: `files` maps relative paths to contents. Returns its root. */
function tree(files) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tidepool-advice-'));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  return root;
}

/** Runs `fn(root)` on a temporary tree of `files`, removed afterwards. */
function withTree(files, fn) {
  const root = tree(files);
  try {
    fn(root);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

const manifest = (name, version) => JSON.stringify({ name, version, main: 'addon.node' });

test('a checkout is told to npm install; a vendored packed copy is not called a checkout', () => {
  withTree({ 'repo/package.json': '{}' }, (root) => {
    const checkout = path.join(root, 'repo');
    assert.equal(installer(checkout, SOURCES), 'checkout');
    assert.match(
      missingAddonAdvice(checkout, { own: SOURCES }),
      /This is a checkout: `npm install` builds/,
    );
    assert.match(
      missingAddonAdvice(checkout, { own: SOURCES, atInstall: true }),
      /^cargo was not found\. This is a checkout/,
    );
    assert.equal(installer(checkout, PACKED), 'copy');
    assert.match(
      missingAddonAdvice(checkout, { own: PACKED }),
      new RegExp(`Add it: \`npm install ${BINARY}@1\\.2\\.3\``),
    );
  });
});

test('npm: a packed copy without its platform package names the package, the lockfile cause and the build', () => {
  withTree({ [`app/node_modules/${NAME}/package.json`]: '{}' }, (root) => {
    const dir = path.join(root, 'app', 'node_modules', NAME);
    assert.equal(installer(dir, PACKED), 'npm');
    const advice = missingAddonAdvice(dir, { own: PACKED });
    assert.match(
      advice,
      new RegExp(`Add it: \`npm install ${BINARY}@1\\.2\\.3\` \\(or its tarball`),
    );
    assert.match(advice, /--omit=optional/);
    assert.match(advice, /npm\/cli#4828/);
    assert.match(advice, /run `npm rebuild @tidepool-rs\/pool`/);
  });
});

test('npm: sources whose install script did not run are told to rebuild, not to add a package', () => {
  withTree({ [`app/node_modules/${NAME}/package.json`]: '{}' }, (root) => {
    const dir = path.join(root, 'app', 'node_modules', NAME);
    const advice = missingAddonAdvice(dir, { own: SOURCES });
    assert.match(
      advice,
      /installed from sources .* its install script did not run \(--ignore-scripts\?\)/,
    );
    assert.doesNotMatch(advice, /npm install @/);
    assert.match(
      missingAddonAdvice(dir, { own: SOURCES, atInstall: true }),
      /and cargo was not found\. Build it/,
    );
  });
});

test('pnpm, isolated or hoisted: approve-builds and pnpm rebuild, pnpm add for the package', () => {
  withTree(
    {
      [`iso/node_modules/.pnpm/x/node_modules/${NAME}/package.json`]: '{}',
      'hoisted/node_modules/.modules.yaml': 'nodeLinker: hoisted\n',
      [`hoisted/node_modules/${NAME}/package.json`]: '{}',
    },
    (root) => {
      for (const dir of [
        path.join(root, 'iso/node_modules/.pnpm/x/node_modules', NAME),
        path.join(root, 'hoisted/node_modules', NAME),
      ]) {
        assert.equal(installer(dir, SOURCES), 'pnpm', dir);
        const sources = missingAddonAdvice(dir, { own: SOURCES });
        assert.match(sources, /pnpm ran no install script/);
        assert.match(sources, /`pnpm approve-builds`.*run `pnpm rebuild @tidepool-rs\/pool`/);
        assert.match(
          missingAddonAdvice(dir, { own: PACKED }),
          new RegExp(`\`pnpm add ${BINARY}@1\\.2\\.3\``),
        );
      }
    },
  );
});

test('a platform package of another version, and a forced source build beside one that fits', () => {
  withTree(
    {
      [`old/node_modules/${NAME}/package.json`]: '{}',
      [`old/node_modules/${BINARY}/package.json`]: manifest(BINARY, '0.0.9'),
      [`fits/node_modules/${NAME}/package.json`]: '{}',
      [`fits/node_modules/${BINARY}/package.json`]: manifest(BINARY, '1.2.3'),
    },
    (root) => {
      const old = missingAddonAdvice(path.join(root, 'old/node_modules', NAME), { own: PACKED });
      assert.match(old, /is installed at 0\.0\.9, but this @tidepool-rs\/pool is 1\.2\.3/);
      assert.match(old, /or its tarball/);
      const forced = missingAddonAdvice(path.join(root, 'fits/node_modules', NAME), {
        own: PACKED,
        atInstall: true,
      });
      assert.match(
        forced,
        /^cargo was not found\. TIDEPOOL_BUILD_FROM_SOURCE asks for a build from source/,
      );
      assert.match(forced, /unset it to use/);
      assert.doesNotMatch(forced, /takes only its own version/);
    },
  );
});

test("finding the platform (as loading a prebuilt addon does) leaves the process's report settings as they were", () => {
  const { spawnSync } = require('node:child_process');
  const platform = JSON.stringify(path.join(__dirname, '..', 'lib', 'addon', 'platform.js'));
  const code = `const before = process.report.excludeNetwork; require(${platform}).platformName(); console.log(before, process.report.excludeNetwork)`;
  const run = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), 'false false');
});
