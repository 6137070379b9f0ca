'use strict';
// `node --require @tidepool-rs/pool/crypto/register app.js`: node:crypto's
// key derivations run on a tidepool from the start, before the app (or
// any library it loads) takes node:crypto's functions.

require('./index').install();
