'use strict';
// @tidepool-rs/pool/password: hash() and verify() against the packages
// people use (strings made there verify here, and strings made here verify
// there), bcrypt's published vectors and its 72-byte rule, the edges of
// passwords and costs, bad input, abort and close().

const test = require('node:test');
const assert = require('node:assert/strict');
const argon2 = require('argon2');
const nodeRsArgon2 = require('@node-rs/argon2');
const bcrypt = require('bcrypt');
const bcryptjs = require('bcryptjs');
const password = require('@tidepool-rs/pool/password');
const cryptoModule = require('@tidepool-rs/pool/crypto');
const { poolKeepingInputs, allWiped } = require('./secrets');
const { waitFor, poolState } = require('./wait');
const { Pool } = require('..');

test.after(() => cryptoModule.pool.close());

test('hash() makes an argon2id PHC string with the defaults, and verify() takes it', async () => {
  const stored = await password.hash('hunter2');
  assert.match(stored, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  assert.equal(await password.verify(stored, 'hunter2'), true);
  assert.equal(await password.verify(stored, 'hunter3'), false);
  assert.equal(await password.verify(stored, Buffer.from('hunter2')), true);
  // A new salt each time.
  assert.notEqual(await password.hash('hunter2'), stored);
  assert.equal(password.needsRehash(stored), false);
  assert.equal(password.needsRehash(stored, { timeCost: 3 }), true);
  assert.equal(password.needsRehash(stored, { algorithm: 'bcrypt' }), true);
});

test('strings of argon2 and @node-rs/argon2 verify here; strings made here verify there', async () => {
  for (const type of ['argon2id', 'argon2i', 'argon2d']) {
    const theirs = await argon2.hash('correct horse', {
      type: argon2[type],
      memoryCost: 4096,
      timeCost: 2,
      parallelism: 2,
    });
    assert.equal(await password.verify(theirs, 'correct horse'), true, theirs);
    assert.equal(await password.verify(theirs, 'correct horsf'), false, theirs);
    const ours = await password.hash('correct horse', {
      algorithm: type,
      memoryCost: 4096,
      timeCost: 2,
      parallelism: 2,
    });
    assert.equal(await argon2.verify(ours, 'correct horse'), true, ours);
    assert.equal(await argon2.verify(ours, 'correct horsf'), false, ours);
  }
  const theirs = await nodeRsArgon2.hash('battery staple');
  assert.equal(await password.verify(theirs, 'battery staple'), true, theirs);
  assert.equal(await password.verify(theirs, 'battery stapler'), false);
  const ours = await password.hash('battery staple', { parallelism: 4, memoryCost: 8192 });
  assert.equal(await nodeRsArgon2.verify(ours, 'battery staple'), true, ours);
  assert.equal(await nodeRsArgon2.verify(ours, 'battery stapler'), false);
  // With a secret (a pepper) and associated data.
  const secret = Buffer.from('pepper');
  const peppered = await nodeRsArgon2.hash('pw', { secret });
  assert.equal(await password.verify(peppered, 'pw', { secret }), true);
  assert.equal(await password.verify(peppered, 'pw'), false);
  const withData = await argon2.hash('pw', { associatedData: Buffer.from('tenant-7') });
  assert.match(withData, /,data=/);
  assert.equal(await password.verify(withData, 'pw'), true);
  const oursWithData = await password.hash('pw', { associatedData: 'tenant-7', secret });
  assert.equal(await argon2.verify(oursWithData, 'pw', { secret }), true);
});

test('strings of bcrypt and bcryptjs verify here; strings made here verify there', async () => {
  for (const version of ['a', 'b']) {
    const theirs = await bcrypt.hash('tr0ub4dor', await bcrypt.genSalt(5, version));
    assert.equal(await password.verify(theirs, 'tr0ub4dor'), true, theirs);
    assert.equal(await password.verify(theirs, 'tr0ub4dos'), false, theirs);
  }
  const js = bcryptjs.hashSync('tr0ub4dor', 5);
  assert.equal(await password.verify(js, 'tr0ub4dor'), true, js);
  const php = js.replace('$2b$', '$2y$'); // PHP's prefix for the same hash
  assert.equal(await password.verify(php, 'tr0ub4dor'), true, php);
  assert.equal(await password.verify(php, 'tr0ub4dos'), false, php);
  for (const version of ['2a', '2b', '2y']) {
    const ours = await password.hash('tr0ub4dor', { algorithm: 'bcrypt', cost: 5, version });
    assert.ok(ours.startsWith(`$${version}$05$`), ours);
    assert.equal(ours.length, 60);
    // The bcrypt package reads $2a$ and $2b$, not $2y$; bcryptjs all three.
    if (version !== '2y') {
      assert.equal(await bcrypt.compare('tr0ub4dor', ours), true, ours);
      assert.equal(await bcrypt.compare('tr0ub4dos', ours), false, ours);
    }
    assert.equal(bcryptjs.compareSync('tr0ub4dor', ours), true, ours);
    assert.equal(bcryptjs.compareSync('tr0ub4dos', ours), false, ours);
  }
});

test("bcrypt: Openwall's published vectors, and the 72-byte rule as the reference has it", async () => {
  const vectors = [
    ['U*U', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'],
    ['U*U*', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK'],
    ['U*U*U', '$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a'],
    ['', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy'],
    [
      '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789chars after 72 are ignored',
      '$2a$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui',
    ],
  ];
  for (const [pw, stored] of vectors) {
    assert.equal(await password.verify(stored, pw), true, stored);
    assert.equal(await bcrypt.compare(pw, stored), true, `control: ${stored}`);
  }
  // Bytes past the 72nd are not read, here as in bcrypt and bcryptjs.
  const long = 'x'.repeat(72);
  const stored = await password.hash(long, { algorithm: 'bcrypt', cost: 4 });
  for (const check of [
    (pw) => password.verify(stored, pw),
    (pw) => bcrypt.compare(pw, stored),
    async (pw) => bcryptjs.compareSync(pw, stored),
  ]) {
    assert.equal(await check(`${long}and more`), true);
    assert.equal(await check('x'.repeat(71)), false);
  }
});

test('empty and 1 MB passwords, and non-ASCII text as its UTF-8 bytes', async () => {
  const options = { memoryCost: 1024, timeCost: 1 };
  for (const pw of ['', 'x'.repeat(1 << 20), 'pässwörd 🔑']) {
    const stored = await password.hash(pw, options);
    assert.equal(await password.verify(stored, pw), true);
    assert.equal(await password.verify(stored, Buffer.from(pw, 'utf8')), true);
    assert.equal(await argon2.verify(stored, pw), true);
  }
});

test('bad input: typed errors, before any work', async () => {
  const stored = await password.hash('pw', { memoryCost: 1024, timeCost: 1 });
  const rejects = (promise, expected) => assert.rejects(promise, expected);
  await rejects(password.hash(42), { code: 'ERR_INVALID_ARG_TYPE' });
  await rejects(password.hash('pw', 'argon2id'), { code: 'ERR_INVALID_ARG_TYPE' });
  await rejects(password.hash('pw', { algorithm: 'scrypt' }), { code: 'ERR_INVALID_ARG_VALUE' });
  await rejects(password.hash('pw', { memoryCots: 1 }), {
    code: 'ERR_INVALID_ARG_VALUE',
    message: /memoryCost/,
  });
  await rejects(password.hash('pw', { algorithm: 'bcrypt', memoryCost: 1024 }), {
    code: 'ERR_INVALID_ARG_VALUE',
  });
  await rejects(password.hash('pw', { algorithm: 'bcrypt', cost: 3 }), {
    code: 'ERR_OUT_OF_RANGE',
  });
  await rejects(password.hash('pw', { algorithm: 'bcrypt', cost: 32 }), {
    code: 'ERR_OUT_OF_RANGE',
  });
  await rejects(password.hash('pw', { parallelism: 2, memoryCost: 15 }), {
    code: 'ERR_OUT_OF_RANGE',
  });
  await rejects(password.hash('pw', { saltLength: 7 }), { code: 'ERR_OUT_OF_RANGE' });
  await rejects(password.hash('pw', { hashLength: 3 }), { code: 'ERR_OUT_OF_RANGE' });
  await rejects(password.hash('pw', { timeCost: 0 }), { code: 'ERR_OUT_OF_RANGE' });
  await rejects(password.hash('pw', { associatedData: Buffer.alloc(33) }), {
    code: 'ERR_OUT_OF_RANGE',
  });
  await rejects(password.hash('pw', { signal: 'stop' }), { code: 'ERR_INVALID_ARG_TYPE' });
  await rejects(password.hash('pw', { pool: {} }), { code: 'ERR_INVALID_ARG_TYPE' });
  // Only own properties are options.
  const inherited = Object.create({ algorithm: 'bcrypt' });
  assert.match(
    await password.hash('pw', Object.assign(inherited, { memoryCost: 1024, timeCost: 1 })),
    /^\$argon2id\$/,
  );
  await rejects(password.verify(42, 'pw'), { code: 'ERR_INVALID_ARG_TYPE' });
  await rejects(password.verify(stored, null), { code: 'ERR_INVALID_ARG_TYPE' });
  for (const bad of [
    '',
    'hunter2',
    '$argon2id$v=19$m=1024,t=1$c2FsdHNhbHQ$aGFzaGhhc2g',
    `${stored}$`,
    stored.replace('$v=19', '$v=19$v=19'),
    '$2b$10$short',
  ]) {
    await rejects(password.verify(bad, 'pw'), { code: 'ERR_INVALID_ARG_VALUE' }, bad);
  }
  // Salt of every invalid length, and costs past their limits in a string.
  for (const salt of ['', 'c2FsdA', 'c2FsdHNh']) {
    await rejects(password.verify(`$argon2id$v=19$m=1024,t=1,p=1$${salt}$aGFzaGhhc2g`, 'pw'), {
      code: 'ERR_TIDEPOOL_PASSWORD_UNSUPPORTED',
    });
  }
  for (const costs of ['m=7,t=1,p=1', 'm=1024,t=1,p=16777216', 'm=4294967296,t=1,p=1']) {
    await rejects(password.verify(`$argon2id$v=19$${costs}$c2FsdHNhbHQ$aGFzaGhhc2g`, 'pw'), {
      code: 'ERR_TIDEPOOL_PASSWORD_UNSUPPORTED',
    });
  }
  await rejects(
    password.verify('$2x$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW', 'U*U'),
    {
      code: 'ERR_TIDEPOOL_PASSWORD_UNSUPPORTED',
    },
  );
  await rejects(
    password.verify('$2b$03$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW', 'U*U'),
    {
      code: 'ERR_TIDEPOOL_PASSWORD_UNSUPPORTED',
    },
  );
});

test('stored strings: only canonical ones, and costs within limits, run', async () => {
  const stored = await password.hash('pw', { memoryCost: 1024, timeCost: 1 });
  const [, alg, v, costs, salt, hash] = stored.split('$');
  // The last base64 character with unused bits set: no encoder writes it.
  const last = hash.at(-1);
  const bent = 'AQgw'.includes(last) ? String.fromCharCode(last.charCodeAt(0) + 1) : last;
  if (bent !== last) {
    await assert.rejects(
      password.verify(`$${alg}$${v}$${costs}$${salt}$${hash.slice(0, -1)}${bent}`, 'pw'),
      {
        code: 'ERR_INVALID_ARG_VALUE',
      },
    );
  }
  await assert.rejects(password.verify(stored.replace('v=19', 'v=019'), 'pw'), {
    code: 'ERR_INVALID_ARG_VALUE',
  });
  const bc = '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW';
  // The salt's last character ('.') uses 2 of its 6 bits; 'D' sets unused ones.
  await assert.rejects(password.verify(bc.replace('CCC.', 'CCCD'), 'U*U'), {
    code: 'ERR_INVALID_ARG_VALUE',
  });
  // A stored string whose costs would hold a thread for hours is refused
  // at once, without the salt in the message; limits lets it through.
  const huge = `$argon2id$v=19$m=8,t=4294967295,p=1$${salt}$${hash}`;
  await assert.rejects(password.verify(huge, 'pw'), (err) => {
    assert.equal(err.code, 'ERR_TIDEPOOL_PASSWORD_UNSUPPORTED');
    assert.ok(!err.message.includes(salt), err.message);
    return true;
  });
  await assert.rejects(password.verify(bc.replace('$05$', '$21$'), 'U*U'), {
    code: 'ERR_TIDEPOOL_PASSWORD_UNSUPPORTED',
  });
  const strict = { limits: { timeCost: 1 } };
  assert.equal(await password.verify(stored, 'pw', strict), true);
  await assert.rejects(password.verify(stored, 'pw', { limits: { timeCost: 0 } }), {
    code: 'ERR_OUT_OF_RANGE',
  });
  await assert.rejects(password.verify(stored, 'pw', { limits: { memory: 1 } }), {
    code: 'ERR_INVALID_ARG_VALUE',
  });
  // bcrypt has no secret: a pepper given for a bcrypt string is refused, not ignored.
  await assert.rejects(password.verify(bc, 'U*U', { secret: 'pepper' }), {
    code: 'ERR_INVALID_ARG_VALUE',
  });
});

test('a signal: an aborted one rejects at once; one that fires while the hash runs rejects then', async () => {
  await assert.rejects(password.hash('pw', { signal: AbortSignal.abort() }), {
    name: 'AbortError',
  });
  const pool = new Pool({ maxThreads: 1 });
  try {
    const controller = new AbortController();
    const running = password.hash('pw', {
      pool,
      memoryCost: 256 * 1024,
      timeCost: 8,
      signal: controller.signal,
    });
    // Abort once the pool reports the hash running.
    await waitFor(() => pool.stats().busyThreads === 1, {
      what: 'the hash running',
      interval: 1,
      state: poolState(pool),
    });
    controller.abort(new Error('user left'));
    await assert.rejects(
      running,
      (err) => err.name === 'AbortError' && err.cause.message === 'user left',
    );
    // The thread finished the hash it could not stop; the pool settles every task once.
    await pool.close();
    assert.equal(pool.stats().completed + pool.stats().failed, 1);
  } finally {
    await pool.close();
  }
});

test('close() with hashes queued: each settles once, with its string', async () => {
  const pool = new Pool({ maxThreads: 1 });
  const calls = Array.from({ length: 8 }, (_, i) =>
    password.hash(`pw${i}`, { pool, memoryCost: 1024, timeCost: 1 }).then(
      (stored) => ({ stored }),
      (err) => ({ err }),
    ),
  );
  assert.ok(pool.stats().queued > 0);
  await pool.close();
  const results = await Promise.all(calls);
  for (const [i, { stored, err }] of results.entries()) {
    assert.ifError(err);
    assert.equal(await argon2.verify(stored, `pw${i}`), true);
  }
});

test("the pool's copy of the password is wiped when the task ends", async () => {
  const { pool, inputs: seen } = poolKeepingInputs();
  try {
    const stored = await password.hash('correct horse', { pool, memoryCost: 1024, timeCost: 1 });
    await password.verify(stored, 'correct horse', { pool });
    await password.hash('correct horse', { pool, algorithm: 'bcrypt', cost: 4 });
    assert.equal(seen.length, 3);
    assert.ok(allWiped(seen), 'wiped');
  } finally {
    await pool.close();
  }
});
