'use strict';
// ESLint (flat config): the recommended rules for the package, its tests,
// benchmarks and scripts (CommonJS on Node.js). Formatting is Prettier's job
// (.prettierrc.json); `npm run lint` runs both.

const js = require('@eslint/js');
const globals = require('globals');

module.exports = [
  { ignores: ['node_modules/', 'target/', 'npm/', '**/*.d.ts'] },
  js.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: 'commonjs',
      globals: { ...globals.node },
    },
    rules: {
      // `catch {}` without a binding is used on purpose where an error is
      // only a signal (engine getters that refuse a receiver).
      'no-empty': ['error', { allowEmptyCatch: true }],
      'no-unused-vars': [
        'error',
        { args: 'after-used', argsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { ecmaVersion: 2024, sourceType: 'module', globals: { ...globals.node } },
  },
];
