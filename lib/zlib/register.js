'use strict';
// `node --require @tidepool-rs/pool/zlib/register app.js`: node:zlib's
// async work runs on a tidepool from the start, before the app (or any
// library it loads) takes node:zlib's functions.

require('./index').install();
