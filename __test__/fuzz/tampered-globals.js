#!/usr/bin/env node
'use strict';
// Run by input.test.js in its own process (it tampers with globals): what a
// post reads and checks must not depend on builtins replaced after
// require('@tidepool-rs/pool'). Prints one JSON line of outcomes.
const crypto = require('node:crypto');
const { Pool } = require('../..');

const sha256 = (b) => crypto.createHash('sha256').update(b).digest('hex');
const outcome = (fn) =>
  Promise.resolve()
    .then(fn)
    .then(
      (r) => ({ ok: r }),
      (e) => ({ err: `${e.name}:${e.code}` }),
    );

(async () => {
  const pool = new Pool({ encoding: 'hex' });
  const out = {};

  // A replaced WeakRef.prototype.deref must not let a resizable buffer pass
  // as the last SharedArrayBuffer seen.
  await pool.post(new Uint8Array(new SharedArrayBuffer(4)));
  const rab = new ArrayBuffer(8, { maxByteLength: 16 });
  const realDeref = WeakRef.prototype.deref;
  WeakRef.prototype.deref = () => rab;
  out.weakref = await outcome(() => pool.post(new Uint8Array(rab, 4, 4)));
  WeakRef.prototype.deref = realDeref;

  // An accessor on Array.prototype[0] must not reach the snapshot or the
  // pool's own tables.
  const good = Buffer.from('hello');
  const other = Buffer.from('other');
  Object.defineProperty(Array.prototype, 0, { configurable: true, get: () => other, set() {} });
  out.arrayProto = await outcome(async () => (await pool.post([good])).result === sha256(good));
  delete Array.prototype[0];

  // A replaced global Uint8Array must not change what a SharedArrayBuffer reads.
  const sab = new SharedArrayBuffer(4);
  new Uint8Array(sab).set([1, 2, 3, 4]);
  const RealU8 = Uint8Array;
  globalThis.Uint8Array = class extends RealU8 {
    constructor() {
      super(0);
    }
  };
  out.uint8array = await outcome(
    async () => (await pool.post(sab)).result === sha256(Buffer.from([1, 2, 3, 4])),
  );
  globalThis.Uint8Array = RealU8;

  await pool.close();
  console.log(JSON.stringify(out));
})();
