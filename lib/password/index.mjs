// `import { hash, verify } from '@tidepool-rs/pool/password'`: the
// CommonJS module (./index.js), its names as ESM named exports.

import { createRequire } from 'node:module';

// Required, not imported: every runtime loads the very CommonJS module.
const require = createRequire(import.meta.url);
const password = require('./index.js');

export default password;

export const { hash, verify, needsRehash, defaults } = password;
