// Type-level test of index.d.ts; never run, only compiled:
//   tsc --noEmit --strict --esModuleInterop --types node index.d.ts __test__/types.test-d.ts
// Lines marked @ts-expect-error must fail to type-check.

import { EventEmitter } from 'node:events';
import tidepoolDefault from '..';
import tidepool = require('..');
import {
  Pool,
  kernels,
  encodings,
  defaults,
  micros,
  type Hash,
  type KernelName,
  type Encoding,
  type PoolOptions,
  type PoolStats,
  type PostResult,
  type TidepoolError,
  type TidepoolErrorCode,
} from '..';

type Equal<A, B> =
  (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(): void {}
function expectType<T>(value: T): T {
  return value;
}

// The three import styles see the same module.
assertType<Equal<typeof tidepoolDefault, typeof tidepool>>();
assertType<Equal<typeof tidepool.Pool, typeof Pool>>();

// Module-level exports.
assertType<Equal<typeof kernels, readonly KernelName[]>>();
assertType<Equal<typeof encodings, readonly Encoding[]>>();
assertType<Equal<typeof Pool.kernels, readonly KernelName[]>>();
assertType<Equal<typeof defaults.encoding, 'buffer'>>();
assertType<Equal<typeof defaults.maxThreads, number>>();
expectType<Buffer>(micros(1000));
// @ts-expect-error: micros takes a number
micros('1000');
// @ts-expect-error: defaults is read-only
defaults.maxThreads = 4;
// @ts-expect-error: kernels is read-only
kernels.push('sha256');

async function main(): Promise<void> {
  // Default pool: Buffer results, binary or { data } messages.
  const pool = new Pool();
  assertType<Equal<typeof pool, Pool<'buffer', tidepool.DefaultMessage>>>();
  const buf = Buffer.from('abc');
  const r1 = await pool.post(buf);
  expectType<Buffer>(r1.result);
  assertType<Equal<typeof r1.message, typeof buf>>();
  const job = { id: 7, data: new Uint8Array(8) };
  const r2 = await pool.post(job, { kernel: 'blake3' });
  expectType<Buffer>(r2.result);
  expectType<number>(r2.message.id);
  await pool.post([
    buf,
    new ArrayBuffer(4),
    new SharedArrayBuffer(4),
    new DataView(new ArrayBuffer(2)),
  ]);
  await pool.post({ data: [buf, buf] });
  await pool.post(new Float64Array(2), {});
  // @ts-expect-error: unknown kernel name
  await pool.post(buf, { kernel: 'sha3' });
  // @ts-expect-error: a string is not a binary
  await pool.post('abc');
  // @ts-expect-error: data must be binary
  await pool.post({ data: 'abc' });
  // @ts-expect-error: post options cannot be null
  await pool.post(buf, null);

  // A literal encoding flows into the results.
  const hex = new Pool({ encoding: 'hex', kernel: 'sha256', maxThreads: 4 });
  const r3 = await hex.post(buf);
  expectType<string>(r3.result);
  assertType<Equal<typeof r3, PostResult<typeof buf, 'hex'>>>();
  // @ts-expect-error: a hex pool's results are strings
  expectType<Buffer>(r3.result);
  // @ts-expect-error: unknown encoding
  new Pool({ encoding: 'utf8' });
  // @ts-expect-error: unknown kernel name
  new Pool({ kernel: 'sha3-256' });
  // @ts-expect-error: maxThreads is a number
  new Pool({ maxThreads: '4' });

  // A non-literal encoding gives Buffer | string.
  const enc: Encoding = Math.random() > 0.5 ? 'buffer' : 'base64';
  const any = new Pool({ encoding: enc });
  const r4 = await any.post(buf);
  assertType<Equal<typeof r4.result, Buffer | string>>();

  // select types the messages the pool accepts.
  interface Job {
    name: string;
    bytes: Uint8Array;
  }
  const jobs = new Pool({ encoding: 'base64url', select: (m: Job) => m.bytes });
  const r5 = await jobs.post({ name: 'a', bytes: new Uint8Array(1) });
  expectType<string>(r5.result);
  expectType<string>(r5.message.name);
  jobs.postMessage({ name: 'b', bytes: new Uint8Array(1) });
  // @ts-expect-error: not a Job
  jobs.postMessage(buf);
  // @ts-expect-error: select must return a binary
  new Pool({ select: (m: Job) => m.name });

  // Options objects can be typed ahead of time.
  const options: PoolOptions = {
    kernel: 'xxh3',
    minThreads: 0,
    spawnDelayMs: 0.5,
    idleTimeoutMs: 10,
    checkIntervalMs: 0.1,
  };
  const fromOptions = new Pool(options);
  assertType<
    Equal<Awaited<ReturnType<typeof fromOptions.post<Buffer>>>['result'], Buffer | string>
  >();

  // Events.
  pool.on('online', () => {});
  pool.on('message', (result, message) => {
    expectType<Buffer>(result);
    expectType<tidepool.DefaultMessage>(message);
  });
  jobs.once('message', (result, message) => {
    expectType<string>(result);
    expectType<Job>(message);
  });
  pool.on('error', (err, message) => {
    expectType<TidepoolErrorCode>(err.code);
    expectType<tidepool.DefaultMessage>(message);
  });
  pool.addListener('spawn', (e) => {
    expectType<number>(e.threadId);
    expectType<number>(e.threads);
    expectType<string>(e.reason);
  });
  pool.off('retire', (e) => expectType<'idle-timeout' | 'underused'>(e.reason));
  pool.on('spawnError', (e) => {
    expectType<string>(e.error);
    expectType<number>(e.threads);
  });
  pool.on('newListener', (name: string | symbol) => {}); // EventEmitter's own events still work
  pool.on(Symbol('custom'), () => {});
  pool.emit('online');
  pool.emit('spawn', { threadId: 1, threads: 1, reason: 'core' });
  // @ts-expect-error: 'message' listeners get a Buffer result on a 'buffer' pool
  pool.on('message', (result: string) => {});
  // @ts-expect-error: spawn events carry an object
  pool.emit('spawn', 1);
  // Still an EventEmitter.
  const emitter: EventEmitter = pool;
  emitter.on('message', () => {});

  // stats(), lifecycle.
  const stats: PoolStats = pool.stats();
  expectType<number>(
    stats.threads + stats.idleThreads + stats.busyThreads + stats.queued + stats.oldestQueuedMs,
  );
  expectType<number>(
    stats.pending +
      stats.completed +
      stats.failed +
      stats.spawned +
      stats.retired +
      stats.spawnErrors,
  );
  const budget = stats.budget;
  if (budget !== null) {
    expectType<number>(
      budget.capacity + budget.held + budget.waiting + budget.waits + budget.waitMs,
    );
    expectType<number>(budget.machine.processes + budget.machine.held);
  }
  new Pool({ budget: 'machine' });
  // @ts-expect-error: one of 'process' and 'machine'
  new Pool({ budget: 'cluster' });
  expectType<boolean>(pool.closed);
  // @ts-expect-error: closed is read-only
  pool.closed = true;
  expectType<Promise<void>>(pool.close());
  expectType<Promise<void>>(pool.destroy());
  expectType<Promise<void>>(pool[Symbol.asyncDispose]());

  // Errors.
  try {
    await pool.post(buf);
  } catch (e) {
    const err = e as TidepoolError;
    if (err.code === 'ERR_TIDEPOOL_CLOSED') expectType<Error>(err);
    // @ts-expect-error: not a tidepool error code
    if (err.code === 'ERR_SOMETHING_ELSE') return;
  }
}

void main;

// Backpressure options, needsDrain and 'drain'.
{
  const bounded = new Pool({
    maxQueue: 100,
    queueFull: 'wait',
    maxQueueAgeMs: 50,
    maxInputBytes: 1 << 20,
    niceIncrement: 0,
  });
  const needs: boolean = bounded.needsDrain;
  bounded.on('drain', () => {});
  // @ts-expect-error not a queue-full policy
  new Pool({ queueFull: 'caller-runs' });
  void needs;
}

// Cancellation options.
{
  const p = new Pool();
  const ac = new AbortController();
  void p.post(Buffer.alloc(1), { signal: ac.signal, timeoutMs: 100, kernel: 'md5' });
  // @ts-expect-error a signal must be an AbortSignal
  void p.post(Buffer.alloc(1), { signal: 'stop' });
}

// Unknown option names are errors at run time (ERR_INVALID_ARG_VALUE) and at compile time.
{
  const p = new Pool();
  // @ts-expect-error misspelt pool option
  new Pool({ kernal: 'md5' });
  // @ts-expect-error encoding is a pool option, not a post option
  void p.post(Buffer.alloc(1), { encoding: 'hex' });
  const code: tidepool.TidepoolErrorCode = 'ERR_INVALID_STATE';
  void code;
}

// Kernel parameters and per-task output limits.
{
  const gz = new Pool({
    kernel: 'gzip',
    params: { level: 9, memLevel: 9 },
    maxOutputBytes: 1 << 20,
  });
  void gz.post(Buffer.alloc(1), { kernel: 'gunzip', maxOutputBytes: 1 << 16 });
  void gz.post(Buffer.alloc(1), {
    kernel: 'hmac',
    params: { hash: 'sha256', key: Buffer.from('k') },
  });
  void gz.post(Buffer.alloc(1), { kernel: 'xxh3', params: { seed: BigInt(7) } });
  // @ts-expect-error not a hash hmac knows
  void gz.post(Buffer.alloc(1), { kernel: 'hmac', params: { hash: 'sha3', key: 'k' } });
  // @ts-expect-error no kernel takes this parameter
  new Pool({ kernel: 'gzip', params: { lvl: 9 } });
  const code: tidepool.TidepoolErrorCode = 'Z_DATA_ERROR';
  void code;
}

// Kernel libraries (Pool.loadKernels): names are `scope/name`; a library's
// package declares its kernels' parameters by augmenting LoadedKernels.
declare module '..' {
  interface LoadedKernels {
    'example/rgba': {
      width: number;
      height: number;
      resizeWidth?: number;
      resizeHeight?: number;
      format?: 'rgba' | 'rgb' | 'gray';
    };
  }
}

async function loaded(): Promise<void> {
  const names: string[] = Pool.loadKernels('/opt/kernels/libexample.so');
  Pool.loadKernels(new URL('file:///opt/kernels/libexample.so'));
  Pool.loadKernels({} as tidepool.KernelLibraryHandle);
  // @ts-expect-error: a number is not a library
  Pool.loadKernels(42);
  expectType<string[]>(names);
  const pool = new Pool({ kernel: 'example/rgba', params: { width: 2, height: 1 } });
  await pool.post(Buffer.alloc(8), { params: { width: 2, height: 1, format: 'gray' } });
  // @ts-expect-error: 'cmyk' is not one of the declared formats
  await pool.post(Buffer.alloc(8), { params: { width: 2, height: 1, format: 'cmyk' } });
  // @ts-expect-error: a built-in name that does not exist, and no scope
  new Pool({ kernel: 'sha257' });
  const kernel: KernelName = 'myorg/anything';
  expectType<KernelName>(kernel);
}
void loaded;

// postMany(): results in the pool's encoding; map(): { result, message } per message.
async function batches(): Promise<void> {
  const pool = new Pool();
  const digests = await pool.postMany([Buffer.from('a'), { data: Buffer.from('b') }]);
  assertType<Equal<typeof digests, Buffer[]>>();
  const hex = new Pool({ encoding: 'hex' });
  const hexDigests = await hex.postMany([Buffer.from('a')]);
  assertType<Equal<typeof hexDigests, string[]>>();
  // packed: one Buffer, whatever the encoding; a boolean not known: either.
  const packed = await hex.postMany([Buffer.from('a')], { packed: true });
  assertType<Equal<typeof packed, Buffer>>();
  const unpacked = await hex.postMany([Buffer.from('a')], { packed: false });
  assertType<Equal<typeof unpacked, string[]>>();
  const either = await hex.postMany([Buffer.from('a')], { packed: Math.random() > 0.5 });
  assertType<Equal<typeof either, Buffer | string[]>>();
  // @ts-expect-error: packed is a boolean
  await pool.postMany([Buffer.from('a')], { packed: 1 });
  await pool.postMany([Buffer.from('a')], {
    kernel: 'md5',
    signal: AbortSignal.timeout(10),
    timeoutMs: 5,
  });
  // @ts-expect-error: concurrency is an option of map()
  await pool.postMany([Buffer.from('a')], { concurrency: 4 });
  // @ts-expect-error: messages is an Array
  await pool.postMany(Buffer.from('a'));
  // postRecords(): one binary, a length for all or one each.
  const records = await hex.postRecords(Buffer.alloc(128), 64);
  assertType<Equal<typeof records, string[]>>();
  const packedRecords = await hex.postRecords(Buffer.alloc(3), new Uint32Array([1, 2]), {
    packed: true,
  });
  assertType<Equal<typeof packedRecords, Buffer>>();
  await pool.postRecords([Buffer.alloc(1), new ArrayBuffer(2)], [1, 2], { kernel: 'md5' });
  // @ts-expect-error: lengths are numbers
  await pool.postRecords(Buffer.alloc(2), ['1', '1']);
  // @ts-expect-error: concurrency is an option of map()
  await pool.postRecords(Buffer.alloc(2), 1, { concurrency: 4 });

  interface Upload {
    id: number;
    body: Buffer;
  }
  const uploads = new Pool<'hex', Upload>({ encoding: 'hex', select: (m) => m.body });
  async function* source(): AsyncGenerator<Upload> {
    yield { id: 1, body: Buffer.from('x') };
  }
  for await (const { result, message } of uploads.map(source(), { concurrency: 8 })) {
    expectType<string>(result);
    expectType<number>(message.id);
  }
  for await (const item of pool.map([Buffer.from('a'), Promise.resolve(Buffer.from('b'))])) {
    expectType<Buffer>(item.result);
  }
  // @ts-expect-error: a message of another type
  uploads.map([Buffer.from('a')]);
  // @ts-expect-error: concurrency is a number
  pool.map([], { concurrency: '4' });
  try {
    await pool.postMany([Buffer.from('a')]);
  } catch (err) {
    expectType<number | undefined>((err as TidepoolError).index);
  }
}
void batches;

// createHash(): a Transform (the digest on its readable side) with update() and a Promise digest().
async function hashes(): Promise<void> {
  const pool = new Pool();
  const hash = pool.createHash('sha256');
  expectType<typeof hash>(hash.update('a').update(Buffer.from('b'), 'utf8'));
  expectType<Buffer>(await hash.digest());
  expectType<string>(
    await pool.createHash('hmac', { params: { hash: 'sha1', key: 'k' } }).digest('hex'),
  );
  // As node:crypto: 'buffer' (and an unknown encoding, at run time) gives a Buffer.
  expectType<Buffer>(await pool.createHash('sha256').digest('buffer'));
  expectType<string>(await pool.createHmac('sha256', Buffer.from('k')).digest('hex'));
  expectType<Hash>(hash.copy({ highWaterMark: 1, signal: AbortSignal.timeout(1) }));
  // @ts-expect-error: a copy's kernel and params are its source's
  hash.copy({ params: { key: 'k' } });
  // @ts-expect-error: createHmac() takes no params
  pool.createHmac('sha1', 'k', { params: { hash: 'sha1', key: 'k' } });
  const writable: import('node:stream').Writable = pool.createHash('md5');
  const transform: import('node:stream').Transform = pool.createHash('md5', { highWaterMark: 16 });
  void writable;
  void transform;
  // @ts-expect-error: gzip is not a hash
  pool.createHash('gzip');
  // @ts-expect-error: no such option
  pool.createHash('sha256', { encoding: 'hex' });
}
void hashes;

// The codec streams: Transforms, with each codec's parameters.
function codecStreams(): void {
  const pool = new Pool();
  const gzip: import('node:stream').Transform = pool.createGzip({
    params: { level: 9 },
    maxOutputBytes: 1 << 20,
    highWaterMark: 65536,
  });
  pool.createBrotliCompress().flush(1, () => {});
  void pool.postFile('/etc/hostname', { kernel: 'sha256' }).then(({ result, path }) => {
    const p: string = path;
    return [result, p];
  });
  // @ts-expect-error: a path is a string, Buffer or URL
  void pool.postFile(42);
  pool.createGzip().flush(() => {});
  const taken: number = pool.createGunzip().bytesWritten;
  void taken;
  pool.createGunzip().close(() => {});
  // @ts-expect-error: bytesWritten is read-only
  pool.createGunzip().bytesWritten = 1;
  // @ts-expect-error: a kind is a number
  pool.createGzip().flush('sync');
  void gzip;
  pool.createBrotliCompress({ params: { quality: 4 } });
  // brotli's large window, both ways.
  pool.createBrotliCompress({ params: { largeWindow: true, lgwin: 28, lgblock: 0 } });
  pool.createBrotliDecompress({ params: { largeWindow: true } });
  // @ts-expect-error: largeWindow is a boolean
  pool.createBrotliCompress({ params: { largeWindow: 1 } });
  pool.createZstdDecompress({ signal: AbortSignal.timeout(1000) });
  // @ts-expect-error: gzip has no quality
  pool.createGzip({ params: { quality: 4 } });
  // @ts-expect-error: brotli's decoder takes no quality
  pool.createBrotliDecompress({ params: { quality: 4 } });
}
void codecStreams;

// tidepool/metrics.
import { collectMetrics } from '../metrics';
import { Registry } from 'prom-client';
function metrics(): void {
  const stop: () => void = collectMetrics(new Pool(), {
    registry: new Registry(),
    prefix: 'app_',
    labels: { pool: 'a' },
  });
  stop();
  // @ts-expect-error: label values are strings
  collectMetrics(new Pool(), { labels: { pool: 1 } });
  // @ts-expect-error: no such option
  collectMetrics(new Pool(), { registy: new Registry() });
}
void metrics;

// @tidepool-rs/pool/zlib: node:zlib's types, with zstd, install() and the pool.
import * as tzlib from '../zlib';
function zlibModule(): void {
  const gzip: import('node:zlib').Gzip = tzlib.createGzip({ level: 9, chunkSize: 1024 });
  tzlib.gunzip(Buffer.from('x'), (err: Error | null, out: Buffer) => void [err, out]);
  tzlib.zstdCompress('x', { params: { [tzlib.constants.ZSTD_c_compressionLevel]: 3 } }, () => {});
  tzlib.install({ pool: new Pool() });
  tzlib.uninstall();
  expectType<number>(tzlib.pool.stats().completed);
  // @ts-expect-error: install() takes a pool, nothing else
  tzlib.install({ pol: new Pool() });
  void gzip;
}
void zlibModule;

// @tidepool-rs/pool/crypto: node:crypto's key derivations, install() and the pool.
import * as tcrypto from '../crypto';
function cryptoModule(): void {
  tcrypto.pbkdf2(
    'pw',
    'salt',
    1000,
    32,
    'sha256',
    (err: Error | null, key: Buffer) => void [err, key],
  );
  tcrypto.scrypt(
    'pw',
    'salt',
    32,
    { N: 1024 },
    (err: Error | null, key: Buffer) => void [err, key],
  );
  tcrypto.hkdf(
    'sha256',
    'ikm',
    'salt',
    'info',
    32,
    (err: Error | null, key: ArrayBuffer) => void [err, key],
  );
  expectType<Buffer>(tcrypto.pbkdf2Sync('pw', 'salt', 1, 32, 'sha256'));
  // argon2 where node:crypto has it (Node 24.7+).
  tcrypto.argon2?.(
    'argon2id',
    { message: 'pw', nonce: 'saltsalt', parallelism: 1, tagLength: 32, memory: 64, passes: 1 },
    (err: Error | null, key: Buffer) => void [err, key],
  );
  tcrypto.install({ pool: new Pool() });
  tcrypto.uninstall();
  expectType<number>(tcrypto.pool.stats().completed);
  // @ts-expect-error: install() takes a pool, nothing else
  tcrypto.install({ pol: new Pool() });
  // A kernel of its own, with its parameters.
  void new Pool({ kernel: 'pbkdf2', params: { digest: 'sha512', iterations: 1000, keylen: 64 } });
  void new Pool({ kernel: 'scrypt', params: { N: 16384, r: 8, p: 1, keylen: 64, salt: 'salt' } });
  // @ts-expect-error: pbkdf2 takes node:crypto's hash names
  void new Pool({ kernel: 'pbkdf2', params: { digest: 'sha3', iterations: 1, keylen: 1 } });
}
void cryptoModule;

// @tidepool-rs/pool/password: hash() and verify().
import * as tpassword from '../password';
async function passwordModule(): Promise<void> {
  const stored: string = await tpassword.hash('hunter2');
  const bc: string = await tpassword.hash(Buffer.from('hunter2'), {
    algorithm: 'bcrypt',
    cost: 12,
  });
  expectType<boolean>(
    await tpassword.verify(stored, 'hunter2', { signal: AbortSignal.timeout(1000) }),
  );
  expectType<boolean>(tpassword.needsRehash(bc, { memoryCost: 65536 }));
  // @ts-expect-error: bcrypt takes no memoryCost
  await tpassword.hash('x', { algorithm: 'bcrypt', memoryCost: 1 });
}
void passwordModule;
