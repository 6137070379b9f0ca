/// <reference types="node" />
// Type declarations for tidepool (index.js). CommonJS: `module.exports = { Pool, kernels, encodings, defaults, micros }`.
// Works with `const { Pool } = require('@tidepool-rs/pool')`, `import { Pool } from '@tidepool-rs/pool'`
// and, under esModuleInterop, `import tidepool from '@tidepool-rs/pool'`.

import { EventEmitter } from 'node:events';
import { Transform } from 'node:stream';

declare namespace tidepool {
  /**
   * Name of a kernel: the function a pool thread runs over a message's bytes.
   * Digest kernels produce the digest bytes; `spin`, `sleep`, `echo` and `panic`
   * exist for tests and benchmarks (`spin`/`sleep` read a duration made by
   * {@link micros}; `echo` returns its input, joined, as a Buffer of its own;
   * `panic` always fails with `ERR_TIDEPOOL_PANIC`).
   */
  export type BuiltinKernelName =
    | 'sha256'
    | 'sha384'
    | 'sha512'
    | 'sha1'
    | 'md5'
    | 'blake3'
    | 'xxh3'
    | 'xxh64'
    | 'crc32'
    | 'crc32c'
    | 'spin'
    | 'sleep'
    | 'panic'
    | 'echo'
    | 'hmac'
    | 'gzip'
    | 'gunzip'
    | 'deflate'
    | 'inflate'
    | 'deflateRaw'
    | 'inflateRaw'
    | 'unzip'
    | 'brotliCompress'
    | 'brotliDecompress'
    | 'zstdCompress'
    | 'zstdDecompress'
    | 'lz4Compress'
    | 'lz4Decompress'
    | 'pbkdf2'
    | 'scrypt'
    | 'hkdf'
    | 'argon2id'
    | 'argon2i'
    | 'argon2d'
    | 'bcrypt';

  /**
   * The parameters of kernels loaded with {@link Pool.loadKernels}, by name.
   * Empty here; a kernel library's package adds its kernels so that their
   * names and parameters are checked:
   *
   * ```ts
   * declare module '@tidepool-rs/pool' {
   *   interface LoadedKernels {
   *     'example/rgba': { width: number; height: number; format?: 'rgba' | 'rgb' | 'gray' };
   *   }
   * }
   * ```
   */
  export interface LoadedKernels {}

  /** A loaded kernel's name: `scope/name`, as every kernel library names its kernels. */
  export type LoadedKernelName = `${string}/${string}`;

  /** Any kernel: a built-in, or one loaded with {@link Pool.loadKernels} (`scope/name`). */
  export type KernelName = BuiltinKernelName | LoadedKernelName;

  /** A value a loaded kernel's parameter can take (its schema decides which). */
  export type LoadedParamValue = number | bigint | boolean | string | Binary;

  /**
   * The parameters of loaded kernels: those {@link LoadedKernels} declares,
   * or, while it declares none, any names with the values a schema can take.
   */
  export type LoadedKernelParams = keyof LoadedKernels extends never
    ? { readonly [name: string]: LoadedParamValue | undefined }
    : LoadedKernels[keyof LoadedKernels];

  /**
   * Parameters of `gzip`, `deflate` and `deflateRaw`: zlib's, with
   * `node:zlib`'s names, ranges and defaults.
   */
  export interface DeflateParams {
    /** -1 (zlib's default, 6) or 0 (stored) to 9 (smallest). @default -1 */
    level?: number;
    /** Base-2 log of the window: 8 to 15 (9 to 15 for gzip). @default 15 */
    windowBits?: number;
    /** Memory for the compression state: 1 to 9. @default 8 */
    memLevel?: number;
    /** `zlib.constants.Z_DEFAULT_STRATEGY` (0) to `Z_FIXED` (4). @default 0 */
    strategy?: number;
    /** A preset dictionary (`deflate` and `deflateRaw`; a gzip stream has none). */
    dictionary?: Binary | string;
    /**
     * `node:zlib`'s `finishFlush`: the flush the end is, `Z_NO_FLUSH` (0) to
     * `Z_BLOCK` (5). With anything but `Z_FINISH` (4) the end only flushes,
     * leaving the stream open. @default 4
     */
    finishFlush?: number;
  }

  /** Parameters of `gunzip`, `inflate`, `inflateRaw` and `unzip` (gzip or zlib, by the header). */
  export interface InflateParams {
    /** The largest window the stream may use: 8 to 15, or 0 (the header's; not for raw). @default 15 */
    windowBits?: number;
    /**
     * The preset dictionary the encoder used: loaded when a zlib stream
     * asks for it (`Z_NEED_DICT` "Missing dictionary" without it, "Bad
     * dictionary" for another), set at the start of a raw one.
     */
    dictionary?: Binary | string;
    /**
     * `node:zlib`'s `finishFlush`: with anything but `Z_FINISH` (4), an
     * input cut short ends without an error, its output so far kept. @default 4
     */
    finishFlush?: number;
    /**
     * `node:zlib`'s `rejectGarbageAfterEnd`: input after the stream's end
     * fails with `ERR_TRAILING_JUNK_AFTER_STREAM_END` instead of being
     * ignored: `1` once a gzip input's members are read (Node 22), `2`
     * after the first member too (Node 24+). @default 0
     */
    rejectGarbage?: 0 | 1 | 2;
  }

  /** Parameters of `brotliCompress`, as `node:zlib`'s `BROTLI_PARAM_*`. */
  export interface BrotliParams {
    /** 0 (fastest) to 11 (smallest). @default 11 */
    quality?: number;
    /** Base-2 log of the window: 10 to 24; up to 30 with `largeWindow`. @default 22 */
    lgwin?: number;
    /** 0 generic, 1 text (UTF-8), 2 font (WOFF 2.0). @default 0 */
    mode?: number;
    /** The expected input size in bytes (a one-shot task gives its own). */
    sizeHint?: number;
    /** Base-2 log of the input block: 16 to 24, or 0 for brotli's choice. @default 0 */
    lgblock?: number;
    /** 1: no literal context modeling (faster, larger). @default 0 */
    disableLiteralContextModeling?: number;
    /** The distance codes' postfix bits: 0 to 3. */
    npostfix?: number;
    /** Direct distance codes: a multiple of 2^npostfix, at most 15 × 2^npostfix. */
    ndirect?: number;
    /**
     * brotli's non-standard large-window format (`BROTLI_PARAM_LARGE_WINDOW`),
     * which lets `lgwin` pass 24: the decoder must be told too
     * ({@link BrotliDecompressParams.largeWindow}). @default false
     */
    largeWindow?: boolean;
  }

  /** Parameters of `zstdCompress`. */
  export interface ZstdParams {
    /** zstd's levels: negative (fastest) to 22 (smallest). @default 3 */
    level?: number;
    /** Append a content checksum to the frame (the decoder verifies it). @default false */
    checksum?: boolean;
    /** A dictionary (raw content or a trained one); the decoder needs the same. */
    dictionary?: Binary | string;
    /**
     * zstd's own parameters, as `node:zlib` hands them to zstd: int32
     * `(key, value)` pairs (`ZSTD_c_*` keys), set after `level` and
     * `checksum`; what zstd refuses is refused.
     */
    parameters?: Binary;
    /** The input's size: a frame of another size fails (`ZSTD_error_srcSize_wrong`). */
    pledgedSrcSize?: number;
  }

  /** Parameters of `zstdDecompress`. */
  export interface ZstdDecompressParams {
    /** The dictionary the frames were made with. */
    dictionary?: Binary | string;
    /**
     * `node:zlib`'s `finishFlush`: with anything but `ZSTD_e_end` (2), an
     * input cut short ends without an error, its output so far kept. @default 2
     */
    finishFlush?: number;
    /** zstd's own parameters (`ZSTD_d_windowLogMax`), as int32 `(key, value)` pairs. */
    parameters?: Binary;
    /**
     * What follows a frame: `0` frames (anything else is corrupt, as the
     * zstd CLI reads it); `1` as `node:zlib` of Node 22 (the rest of a
     * piece of input after a frame is ignored); `2` as Node 24's (frames,
     * told by their magic number; anything else ignored). @default 0
     */
    trailing?: 0 | 1 | 2;
    /** With `trailing` 1 or 2: what would be ignored fails with `ERR_TRAILING_JUNK_AFTER_STREAM_END`. @default false */
    rejectGarbage?: boolean;
  }

  /** Parameters of `brotliDecompress`. */
  export interface BrotliDecompressParams {
    /**
     * `node:zlib`'s `finishFlush`: with anything but
     * `BROTLI_OPERATION_FINISH` (2), an input cut short ends without an
     * error, its output so far kept. @default 2
     */
    finishFlush?: number;
    /**
     * Reads brotli's large-window format (`BROTLI_DECODER_PARAM_LARGE_WINDOW`),
     * and the standard one. The decoder's memory grows with its output, so
     * the output limit bounds it. @default false
     */
    largeWindow?: boolean;
    /** Input after the stream's end fails with `ERR_TRAILING_JUNK_AFTER_STREAM_END`, not ignored. @default false */
    rejectGarbage?: boolean;
  }

  /** Parameters of `lz4Compress` (the LZ4 frame format, as the `lz4` tool writes it). */
  export interface Lz4Params {
    /** Bytes per block: 65536, 262144, 1048576 or 4194304. @default 4194304 */
    blockSize?: number;
    /** An xxHash-32 of the whole content at the end of the frame. @default true */
    contentChecksum?: boolean;
    /** An xxHash-32 after every block. @default false */
    blockChecksum?: boolean;
  }

  /** Parameters of `hmac`: both required; the result equals `crypto.createHmac(hash, key)`'s digest. */
  export interface HmacParams {
    hash: 'sha256' | 'sha384' | 'sha512' | 'sha1' | 'md5';
    /** Copied once when posted, wiped when the task ends. A string is its UTF-8 bytes. */
    key: string | Binary;
  }

  /** Parameters of `blake3`: none (the hash), `key` (keyed hash) or `context` (key derivation; the input is the key material). */
  export interface Blake3Params {
    /** Exactly 32 bytes. */
    key?: Binary;
    context?: string;
  }

  /** Parameters of `xxh3` and `xxh64`. */
  export interface XxhashParams {
    /** 0 to 2^64 - 1. @default 0 */
    seed?: number | bigint;
  }

  /** The hashes of `pbkdf2` and `hkdf`, by node:crypto's names. */
  export type KdfHash =
    'md5' | 'sha1' | 'sha224' | 'sha256' | 'sha384' | 'sha512' | 'sha512-224' | 'sha512-256';

  /**
   * Parameters of `pbkdf2` (the input is the password): the result equals
   * `crypto.pbkdf2Sync(input, salt, iterations, keylen, digest)`.
   */
  export interface Pbkdf2Params {
    digest: KdfHash;
    /** A string is its UTF-8 bytes. Copied once when posted, wiped when the task ends. @default empty */
    salt?: string | Binary;
    /** 1 to 2^31 - 1. */
    iterations: number;
    /** The key's bytes, 0 to 2^31 - 1. */
    keylen: number;
  }

  /**
   * Parameters of `scrypt` (the input is the password): the result equals
   * `crypto.scryptSync(input, salt, keylen, { N, r, p })`. The task holds
   * 128 × r × (N + p) bytes while it runs.
   */
  export interface ScryptParams {
    /** @default empty */
    salt?: string | Binary;
    /** A power of 2 above 1. */
    N: number;
    /** r × p below 2^30. */
    r: number;
    p: number;
    keylen: number;
  }

  /**
   * Parameters of `hkdf` (the input is the key material): the result equals
   * `crypto.hkdfSync(digest, input, salt, info, keylen)`.
   */
  export interface HkdfParams {
    digest: KdfHash;
    /** @default empty */
    salt?: string | Binary;
    /** At most 1024 bytes. @default empty */
    info?: string | Binary;
    /** At most 255 digests' bytes. */
    keylen: number;
  }

  /**
   * Parameters of `argon2id`, `argon2i` and `argon2d` (RFC 9106; the input is
   * the password), named as node:crypto's `argon2()` names them: the result
   * equals `crypto.argon2Sync(kernel, { message: input, ...params })`. A task
   * holds `memory` KiB while it runs.
   */
  export interface Argon2Params {
    /** The salt, 8 bytes or more. */
    nonce: string | Binary;
    /** Lanes, 1 to 2^24 - 1. */
    parallelism: number;
    /** Bytes of output, 4 or more. */
    tagLength: number;
    /** KiB of memory, at least 8 × parallelism. */
    memory: number;
    /** Passes over the memory, 1 or more. */
    passes: number;
    /** A key kept apart from the stored hash. @default empty */
    secret?: string | Binary;
    /** Data bound to the hash. @default empty */
    associatedData?: string | Binary;
    /** 19 (0x13), or 16 (0x10) for hashes of Argon2 1.0. @default 19 */
    version?: 16 | 19;
  }

  /**
   * Parameters of `bcrypt` (the input is the password, of which bcrypt reads
   * at most 72 bytes): the result is the modular crypt string, 60 ASCII bytes.
   */
  export interface BcryptParams {
    /** log2 of the rounds, 4 to 31. */
    cost: number;
    /** Exactly 16 bytes. */
    salt: Binary;
    /** @default '2b' */
    version?: '2a' | '2b' | '2y';
  }

  /**
   * The parameters of some kernel (each kernel checks its own, when the pool
   * is made or the task posted: an unknown name throws
   * `ERR_INVALID_ARG_VALUE`, a value out of range `ERR_OUT_OF_RANGE`).
   */
  export type KernelParams =
    | DeflateParams
    | InflateParams
    | BrotliParams
    | ZstdParams
    | ZstdDecompressParams
    | BrotliDecompressParams
    | Lz4Params
    | HmacParams
    | Blake3Params
    | XxhashParams
    | Pbkdf2Params
    | ScryptParams
    | HkdfParams
    | Argon2Params
    | BcryptParams
    | LoadedKernelParams;

  /** How results are delivered: `'buffer'` gives a `Buffer`, the others a `string` in that encoding. */
  export type Encoding = 'buffer' | 'hex' | 'base64' | 'base64url';

  /** The type of a result for encoding `E`: `Buffer` for `'buffer'`, otherwise `string`. */
  export type ResultOf<E extends Encoding> = E extends 'buffer' ? Buffer : string;

  /**
   * Bytes a kernel can read in place: a Buffer, any TypedArray, a DataView,
   * an ArrayBuffer or a SharedArrayBuffer.
   */
  export type Binary = ArrayBufferView | ArrayBuffer | SharedArrayBuffer;

  /** One {@link Binary}, or an array of them (hashed as if concatenated, in order). */
  export type BinaryInput = Binary | readonly Binary[];

  /**
   * What a pool without a `select` option accepts: the binary itself, an array
   * of binaries, or any object whose `data` property holds one of those.
   */
  export type DefaultMessage = BinaryInput | { readonly data: BinaryInput };

  /**
   * Options of `new Pool(options)`. Every option is optional; an unknown name
   * throws `ERR_INVALID_ARG_VALUE`.
   */
  export interface PoolOptions<E extends Encoding = Encoding, T = DefaultMessage> {
    /**
     * The kernel `post()` and `postMessage()` run unless `post()` names another.
     * An unknown name throws `ERR_TIDEPOOL_UNKNOWN_KERNEL`.
     * @default 'sha256'
     */
    kernel?: KernelName;
    /**
     * The parameters of the pool's `kernel` (see {@link KernelParams}),
     * checked here. Required for `hmac`.
     */
    params?: KernelParams;
    /**
     * The form of each result: `'buffer'` (a `Buffer` of its own, safe to keep)
     * or a string in `'hex'`, `'base64'` or `'base64url'`. Anything else throws
     * `ERR_INVALID_ARG_VALUE`.
     * @default 'buffer'
     */
    encoding?: E;
    /**
     * Picks the bytes to process out of a posted message. Called once,
     * synchronously, by `post()`/`postMessage()`; what it returns is taken
     * as a snapshot then (an Array is read once into the pool's own), read
     * in place (not copied) and kept reachable until the task settles.
     * The default returns the message itself if it is a binary or an array,
     * else `message.data`. Annotate the parameter (`(m: Job) => m.bytes`) to
     * type the messages the pool accepts.
     */
    select?: (message: T) => BinaryInput;
    /**
     * Core threads: started by the constructor and never retired. An integer
     * from 0 to `maxThreads`. With 0, no thread runs while the pool is idle;
     * the first task starts one after `spawnDelayMs`, and idle threads then
     * take tasks at once.
     * @default 1
     */
    minThreads?: number;
    /**
     * Upper bound on threads, core and extra. An integer from 1 to 1024.
     * @default the number of CPUs this process may use (cgroup- and affinity-aware), see `defaults.maxThreads`
     */
    maxThreads?: number;
    /**
     * Queue-age unit of the autoscaling rule, in milliseconds: one more thread is
     * started when the queue holds more tasks than there are threads and the
     * oldest queued task has waited longer than `spawnDelayMs × threads`; spawns
     * are at least `spawnDelayMs` apart. A finite number from 0 to 2^31.
     * @default 1
     */
    spawnDelayMs?: number;
    /**
     * How long, in milliseconds, an extra (non-core) thread may stay idle before
     * it retires (newest first). A finite number from 0 to 2^31.
     * @default 100
     */
    idleTimeoutMs?: number;
    /**
     * How often, in milliseconds, the supervisor re-evaluates the autoscaling
     * rule while there is something to watch. A finite number from 0.01 to 2^31.
     * @default 1
     */
    checkIntervalMs?: number;
    /**
     * When to start threads beyond `minThreads`:
     * `'queue-age'` (the article's rule: the oldest task has waited
     * longer than `spawnDelayMs × threads`; one thread per `spawnDelayMs`),
     * `'backlog'` (draining the queue would take longer than `spawnDelayMs`:
     * `queued × mean run time / threads`) or `'demand'` (the oldest task has
     * waited longer than `spawnDelayMs`, and the pool has fewer threads than
     * arrival rate × mean run time plus those that drain the queue within
     * `10 × spawnDelayMs`: it starts them back to back).
     * @default 'demand'
     */
    scaleRule?: ScaleRule;
    /**
     * Most tasks waiting in the queue (running tasks are not counted); an
     * integer from 1 to 2^32 - 1, or `Infinity`.
     * @default Infinity
     */
    maxQueue?: number;
    /**
     * A post to a full queue: `'reject'` (`ERR_TIDEPOOL_QUEUE_FULL`),
     * `'drop-oldest'` (the oldest queued task rejects with
     * `ERR_TIDEPOOL_DROPPED`) or `'wait'` (the promise waits for room, in order).
     * @default 'reject'
     */
    queueFull?: QueueFullPolicy;
    /**
     * A task that waited longer than this (ms, a number above 0) when a thread
     * takes it rejects with `ERR_TIDEPOOL_TIMEOUT` instead of running late.
     * @default Infinity
     */
    maxQueueAgeMs?: number;
    /**
     * Inputs larger than this many bytes throw `ERR_OUT_OF_RANGE` synchronously;
     * an integer from 0 to 2^53 - 1, or `Infinity`.
     * @default Infinity
     */
    maxInputBytes?: number;
    /**
     * Most bytes a task's result may have: a kernel that would write more
     * stops there and the task rejects with a `RangeError` whose code is
     * `ERR_BUFFER_TOO_LARGE`. An integer from 1 to `buffer.constants.MAX_LENGTH`.
     * Without it, decoders (`gunzip`, `inflate`, `inflateRaw`,
     * `brotliDecompress`, `zstdDecompress`, `lz4Decompress`) stop at
     * 256 MiB ({@link Defaults.maxExpandedBytes}) and other kernels at
     * `buffer.constants.MAX_LENGTH`.
     * @default buffer.constants.MAX_LENGTH (256 MiB for decoders)
     */
    maxOutputBytes?: number;
    /**
     * Most bytes of working memory the running memory-hard tasks (the
     * `argon2*` and `scrypt` kernels) hold at once: a thread whose task does
     * not fit waits, first come first served, until running ones end
     * (`stats().memoryWaiting`); a task that alone needs more fails with
     * `ERR_TIDEPOOL_INVALID_INPUT`. An integer from 1 to 2^53 - 1, or
     * `Infinity` (each running thread holds its own task's).
     * @default Infinity
     */
    maxWorkingBytes?: number;
    /**
     * How much lower than the event loop's thread the workers' scheduling
     * priority is: a nice increment from 0 to 19 (Linux only; ignored
     * elsewhere). The event loop then wins a core back at once when every
     * core is busy. 0 keeps the process's priority.
     * @default 10
     */
    niceIncrement?: number;
    /**
     * Whose CPUs the pool's threads count against. `'process'`: its own
     * `maxThreads` only. `'machine'`: one budget of running threads, as many
     * as the CPUs this process may use (cgroup v2 `cpu.max` and cpuset
     * honoured), shared fairly by every pool that asks for it in every
     * process of the machine or container (Linux; shared memory in
     * `/dev/shm`, or `$TIDEPOOL_BUDGET_DIR`). A thread runs tasks only
     * while it holds a share. Where the budget cannot be had, the pool runs
     * as with `'process'` and the process gets one warning
     * (`TIDEPOOL_BUDGET_UNAVAILABLE`). See docs/api.md, "Machine budget".
     * @default 'process'
     */
    budget?: 'process' | 'machine';
  }

  /** What a post to a full queue does; see {@link PoolOptions.queueFull}. */
  export type QueueFullPolicy = 'reject' | 'drop-oldest' | 'wait';

  /** The autoscaling spawn tests; see {@link PoolOptions.scaleRule}. */
  export type ScaleRule = 'queue-age' | 'backlog' | 'demand';

  /** Options of {@link Pool.post}. An unknown name throws `ERR_INVALID_ARG_VALUE`. */
  export interface PostOptions {
    /** Run this kernel instead of the pool's `kernel` option for this task. */
    kernel?: KernelName;
    /**
     * This task's kernel parameters, instead of the pool's `params` (which
     * apply only to the pool's own kernel). Checked here: bad ones throw.
     */
    params?: KernelParams;
    /** This task's output limit, instead of the pool's `maxOutputBytes`. */
    maxOutputBytes?: number;
    /**
     * Cancels the task: a queued task leaves the queue and rejects at once, a
     * running one stops at its next 256 KiB chunk (the thread stays in the
     * pool); either way with an `AbortError` (`name: 'AbortError'`,
     * `code: 'ABORT_ERR'`, `cause`: the signal's reason), one error object
     * shared by every task the abort cancels. An already-aborted
     * signal throws synchronously. `AbortSignal.timeout(ms)` gives a deadline
     * counted from the post.
     */
    signal?: AbortSignal;
    /**
     * Run-time limit in ms, counted from when a thread starts the task; past
     * it the task stops and rejects with `ERR_TIDEPOOL_TIMEOUT`. Above 0, at
     * most 2^31, or `Infinity`.
     * @default Infinity
     */
    timeoutMs?: number;
  }

  /**
   * Options of {@link Pool.postMany} and {@link Pool.postRecords}: those of
   * {@link PostOptions}, applied to every task of the batch. `signal` cancels the whole batch;
   * `timeoutMs` limits each task's own run.
   */
  export interface PostManyOptions extends PostOptions {
    /**
     * Resolve with one `Buffer` holding every result back to back, in the
     * order of the messages, instead of an Array: all results have one
     * length `L` (digests do), and result `i` is bytes `i * L` to
     * `(i + 1) * L`. The pool's `encoding` does not apply. No object is
     * made per result: for batches of small messages of a hash this is
     * the fastest way through the pool. A result of another length
     * rejects the batch with
     * `ERR_TIDEPOOL_PACKED_LENGTH` (`index`: a message whose result has
     * it).
     * @default false
     */
    packed?: boolean;
  }

  /** The built-in kernels {@link Pool.createHash} takes (their output comes at the end). */
  export type HashKernelName =
    | 'sha256'
    | 'sha384'
    | 'sha512'
    | 'sha1'
    | 'md5'
    | 'hmac'
    | 'blake3'
    | 'xxh3'
    | 'xxh64'
    | 'crc32'
    | 'crc32c';

  /** Options of {@link Pool.createHash}. An unknown name throws `ERR_INVALID_ARG_VALUE`. */
  export interface HashOptions {
    /** The kernel's parameters (`{ hash, key }` for `hmac`, `{ key }` for keyed `blake3`, ...), checked here. */
    params?: KernelParams;
    /**
     * Stops the hash when it fires (the chunk running stops at its next
     * 256 KiB): `digest()` rejects with an `AbortError`; the stream is
     * destroyed with it if it has an `'error'` listener (a pipeline), else
     * it closes without an `'error'` event. An aborted signal makes the
     * hash closed from the start.
     */
    signal?: AbortSignal;
    /**
     * The buffers of the stream's two sides (see `stream.Transform`).
     * @default Node's for the readable side; 2 MiB for the writable side
     */
    highWaterMark?: number;
  }

  /**
   * An incremental hash on the pool's threads ({@link Pool.createHash}),
   * drop-in for `crypto.createHash` where it matters: `update()` returns at
   * once, `digest()` a Promise. A Transform, as `node:crypto`'s Hash: what
   * is written is hashed, and once the writing ends the digest is its
   * readable side's one chunk (`readable.pipe(hash).on('data', …)`); or
   * `await pipeline(readable, hash)`, then `await hash.digest()`.
   */
  export interface Hash extends Transform {
    /**
     * Adds `data` (a binary, or a string in `inputEncoding`, `'utf8'` by
     * default); returns this hash at once. As with `node:crypto`, the
     * caller may reuse `data` as soon as `update()` returns: its bytes are
     * copied (at most 4 MiB wait at a time), or hashed on the calling
     * thread (a small update while nothing is in flight, or one past that
     * cap).
     * @throws {TidepoolError} `ERR_CRYPTO_HASH_FINALIZED` after `digest()`
     *   or `end()`; the hash's error once a chunk failed or it was aborted.
     */
    update(data: string | Binary, inputEncoding?: BufferEncoding): this;
    /**
     * The digest, once every chunk has run: a `Buffer`, or a string in
     * `encoding`. Rejects with the error of a failed chunk, an `AbortError`,
     * `ERR_TIDEPOOL_CLOSED` (the pool was closed before the digest was
     * asked for), `ERR_STREAM_DESTROYED`.
     * @throws {TidepoolError} `ERR_CRYPTO_HASH_FINALIZED` when called twice.
     */
    digest(): Promise<Buffer>;
    digest(encoding: 'buffer'): Promise<Buffer>;
    digest(encoding: BufferEncoding): Promise<string>;
    /**
     * A new hash whose state is this one's now (`node:crypto`'s `copy()`,
     * and an HMAC's too): of everything written and updated so far; the
     * two go on apart. A chunk in flight is finished on the calling thread
     * first. `options`: the copy's own `highWaterMark` and `signal`.
     * @throws {TidepoolError} `ERR_CRYPTO_HASH_FINALIZED` after `digest()`
     *   or `end()`; the hash's error once it failed; `ERR_TIDEPOOL_CLOSED`
     *   or `ERR_TIDEPOOL_DESTROYED` once the pool takes no work; `ERR_TIDEPOOL_HASH_COPY`
     *   while written chunks wait in the stream's buffer (node:crypto would
     *   have hashed them: copy once their callbacks ran), or for a loaded
     *   kernel, whose state is its own.
     */
    copy(options?: Omit<HashOptions, 'params'>): Hash;
  }

  /**
   * Options of the codec streams ({@link Pool.createGzip} and the others).
   * An unknown name throws `ERR_INVALID_ARG_VALUE`.
   */
  export interface CodecStreamOptions<P = never> {
    /** The codec's parameters, as for its one-shot kernel (`{ level }` for gzip, ...), checked here. */
    params?: P;
    /**
     * Most bytes the whole stream may output; past it the stream fails with
     * `ERR_BUFFER_TOO_LARGE` without producing more.
     * @default the pool's `maxOutputBytes` (256 MiB for decoders without it)
     */
    maxOutputBytes?: number;
    /**
     * The buffers of the stream's two sides (see `stream.Transform`): a
     * write past it returns `false`, and a task stops once the reader's
     * buffer is full.
     * @default Node's for the readable side; 2 MiB for the writable side
     *   (the writes queued while a task runs are the next task's input)
     */
    highWaterMark?: number;
    /**
     * Destroys the stream with an `AbortError` when it fires (the chunk
     * running stops at its next 256 KiB), as `node:zlib`'s `signal` does;
     * an aborted signal gives a stream destroyed from the start.
     */
    signal?: AbortSignal;
  }

  /** A codec stream ({@link Pool.createGzip} and the others): a Transform with `node:zlib`'s `flush()`. */
  export interface CodecStream extends Transform {
    /**
     * Once `callback` runs, the output so far decodes to everything written
     * before the flush. `kind`: the family's constant from `zlib.constants`
     * (`Z_FULL_FLUSH` by default for the deflate family, also `Z_NO_FLUSH`,
     * `Z_PARTIAL_FLUSH`, `Z_SYNC_FLUSH`, `Z_BLOCK`; `BROTLI_OPERATION_FLUSH`;
     * `ZSTD_e_flush`; `1` for LZ4). Another kind throws `ERR_OUT_OF_RANGE`.
     */
    flush(kind?: number, callback?: (err?: Error | null) => void): void;
    flush(callback: (err?: Error | null) => void): void;
    /**
     * `node:zlib`'s `params()` (the deflate family): what was written so
     * far is flushed (`Z_SYNC_FLUSH`), then `level` (-1 to 9) and `strategy`
     * (0 to 4) change for what follows, then `callback` runs. Brotli, zstd
     * and LZ4 streams throw `ERR_METHOD_NOT_IMPLEMENTED`.
     */
    params(level: number, strategy: number, callback?: () => void): void;
    /**
     * `node:zlib`'s `reset()`: the codec starts over, as a new stream would
     * (its dictionary set again), for what is written after the call; the
     * writes before it are consumed first (`node:zlib` resets at once,
     * under writes still queued). Every codec, LZ4's too.
     */
    reset(): void;
    /** `node:zlib`'s `close()`: destroys the stream; `callback` once it has closed. */
    close(callback?: (err?: Error | null) => void): void;
    /** Input bytes the codec has taken, as `node:zlib`'s: a decoder whose format ended does not count what followed. */
    readonly bytesWritten: number;
  }

  /** Options of {@link Pool.map}. An unknown name throws `ERR_INVALID_ARG_VALUE`. */
  export interface MapOptions extends PostOptions {
    /**
     * Most tasks in flight at once (pulled from the source and not yet
     * yielded): memory stays bounded whatever the source's length. Tiny
     * tasks (a hash of a few hundred bytes) want thousands; large ones a
     * few per thread. An integer from 1 to 2^20.
     * @default 4 × maxThreads
     */
    concurrency?: number;
  }

  /** What {@link Pool.post} resolves with. */
  export interface PostResult<M, E extends Encoding = 'buffer'> {
    /** The kernel's output: a `Buffer` when the pool's encoding is `'buffer'`, else a string. */
    result: ResultOf<E>;
    /** The very message that was posted (the same object, not a copy). */
    message: M;
  }

  /** A snapshot returned by {@link Pool.stats}. */
  export interface PoolStats {
    /** Live threads, core and extra. */
    threads: number;
    /** Threads not running a task (`threads - busyThreads`). */
    idleThreads: number;
    /** Threads running a task. */
    busyThreads: number;
    /** Tasks waiting for a thread. */
    queued: number;
    /** Age of the oldest queued task in milliseconds (fractional; 0 when nothing is queued). */
    oldestQueuedMs: number;
    /** Tasks posted and not yet settled (queued, running, or finished but not yet delivered). */
    pending: number;
    /** Tasks that settled with a result since the pool was created. */
    completed: number;
    /** Tasks that settled with an error since the pool was created (including those cancelled by `destroy()`). */
    failed: number;
    /** Threads started since the pool was created (core threads included). */
    spawned: number;
    /** Extra threads retired since the pool was created (idle, or by use: see {@link RetireEvent}), counted when they leave. */
    retired: number;
    /** Failed attempts to start a thread since the pool was created. */
    spawnErrors: number;
    /** Queue wait of tasks (from post to the kernel's start), since creation or the last `stats({ reset: true })`. */
    waitTime: LatencySummary;
    /** Kernel run time of tasks, over the same window as `waitTime`. */
    runTime: LatencySummary;
    /** Bytes of working memory the running memory-hard tasks hold (see `maxWorkingBytes`). */
    workingBytes: number;
    /** Threads waiting for working memory under `maxWorkingBytes` before they run their task. */
    memoryWaiting: number;
    /** The machine budget's numbers; null unless the pool runs under `budget: 'machine'`. */
    budget: BudgetStats | null;
  }

  /** `stats().budget`: the machine budget, seen from this process. */
  export interface BudgetStats {
    /** Shares the budget has: the CPUs this process may use, read again every second. */
    capacity: number;
    /** Shares this process's threads hold now. */
    held: number;
    /** This process's threads waiting for a share now. */
    waiting: number;
    /** Times one of this process's threads had to wait for a share, since the process joined. */
    waits: number;
    /** Milliseconds this process's threads spent waiting for shares, all together. */
    waitMs: number;
    /** Processes of the machine that want or hold shares now, and the shares they hold. */
    machine: { processes: number; held: number };
  }

  /** Percentiles of a latency, in milliseconds (within 12.5 %; `max` is exact; all 0 when `count` is 0). */
  export interface LatencySummary {
    p50: number;
    p99: number;
    max: number;
    /** Number of tasks measured. */
    count: number;
  }

  /** Options of {@link Pool.stats}. */
  export interface StatsOptions {
    /** Restart the `waitTime` / `runTime` window after this snapshot. Default `false`. */
    reset?: boolean;
  }

  /** Argument of the `'spawn'` event. */
  export interface SpawnEvent {
    /** The pool's own id of the thread (sequential per pool; not a `worker_threads` id). */
    threadId: number;
    /** Live threads after the spawn. */
    threads: number;
    /**
     * `'core'`: below `minThreads` (start-up); `'queue-age'` / `'backlog'` /
     * `'demand'`: that autoscaling rule fired. `'backlog'` and `'demand'`
     * need a measured run time: until the pool has one, they fall back to
     * the queue-age test, and the event says `'queue-age'`.
     */
    reason: 'core' | ScaleRule;
  }

  /** Argument of the `'retire'` event. */
  export interface RetireEvent {
    /** The pool's own id of the thread (sequential per pool; not a `worker_threads` id). */
    threadId: number;
    /** Live threads after the retirement. */
    threads: number;
    /**
     * `'idle-timeout'`: an extra thread stayed idle for `idleTimeoutMs`.
     * `'underused'`: at least two threads fewer would have served the
     * last `idleTimeoutMs` of posts (up to 1024 ms) without keeping tasks
     * waiting, so the most junior extra left, idle or not (a busy one once
     * the queue was empty).
     */
    reason: 'idle-timeout' | 'underused';
  }

  /** Argument of the `'spawnError'` event. */
  export interface SpawnErrorEvent {
    /** The operating system's error message. */
    error: string;
    /** Live threads after the failed attempt. */
    threads: number;
  }

  /**
   * The events of a `Pool<E, T>` and their listener arguments.
   * Listeners run on the JavaScript thread; every exception thrown by one is
   * re-thrown as an uncaught exception (each on its own) once the current
   * batch has settled.
   */
  export interface PoolEvents<E extends Encoding = 'buffer', T = DefaultMessage> {
    /** Emitted once, on the tick after construction. */
    online: [];
    /** `needsDrain` went back to false: the queue has room again. */
    drain: [];
    /** A task posted with `postMessage()` finished. */
    message: [result: ResultOf<E>, message: T];
    /**
     * A task posted with `postMessage()` failed, or `postMessage()` was called
     * on a closed pool (`ERR_TIDEPOOL_CLOSED`). Without an `'error'` listener
     * the error is thrown as an uncaught exception.
     */
    error: [error: TidepoolError, message: T];
    /** A thread started. */
    spawn: [event: SpawnEvent];
    /** A thread retired. */
    retire: [event: RetireEvent];
    /** Starting a thread failed (the pool keeps running with the threads it has). */
    spawnError: [event: SpawnErrorEvent];
  }

  /** Name of a {@link PoolEvents pool event}. */
  export type PoolEventName = keyof PoolEvents;

  /**
   * Any event name other than the pool's own (the fallback overload of the
   * listener methods, kept for `EventEmitter` compatibility).
   */
  export type OtherEventName<N extends string | symbol> = N extends PoolEventName ? never : N;

  /** The fs error codes `postFile()` rejects with most often (any of libuv's may come). */
  export type FileErrorCode =
    | 'ENOENT'
    | 'EACCES'
    | 'EPERM'
    | 'EISDIR'
    | 'ENOTDIR'
    | 'ENAMETOOLONG'
    | 'ELOOP'
    | 'EMFILE'
    | 'ENFILE'
    | 'EIO';

  /**
   * Every error code tidepool sets (what each means, and its class:
   * docs/api.md, "Errors"). Argument errors are thrown synchronously; task
   * errors reject the `post()` promise (or are emitted as `'error'` for
   * `postMessage()`). A loaded kernel's own codes come besides these (see
   * {@link TidepoolError.code}).
   */
  export type TidepoolErrorCode =
    | 'ERR_INVALID_ARG_TYPE'
    | 'ERR_INVALID_ARG_VALUE'
    | 'ERR_INVALID_STATE'
    | 'ERR_OUT_OF_RANGE'
    | 'ERR_INVALID_RETURN_VALUE'
    | 'ERR_CRYPTO_HASH_FINALIZED'
    | 'ERR_CRYPTO_HASH_UPDATE_FAILED'
    | 'ERR_STREAM_DESTROYED'
    | 'ERR_TIDEPOOL_KERNEL_CONTRACT'
    | 'ERR_TIDEPOOL_HASH_COPY'
    | 'ERR_TIDEPOOL_UNKNOWN_KERNEL'
    | 'ERR_TIDEPOOL_ZLIB_INSTALLED'
    | 'ERR_TIDEPOOL_ZLIB_UNSUPPORTED'
    | 'ERR_TIDEPOOL_CRYPTO_INSTALLED'
    | 'ERR_TIDEPOOL_CRYPTO_UNSUPPORTED'
    | 'ERR_TIDEPOOL_PASSWORD_UNSUPPORTED'
    | 'ERR_TIDEPOOL_CLOSED'
    | 'ERR_TIDEPOOL_DESTROYED'
    | 'ERR_TIDEPOOL_CANCELLED'
    | 'ERR_TIDEPOOL_PANIC'
    | 'ERR_TIDEPOOL_INVALID_INPUT'
    | 'ERR_TIDEPOOL_INTERNAL'
    | 'ERR_TIDEPOOL_NOT_BUILT'
    | 'ERR_TIDEPOOL_SPAWN_FAILED'
    | 'ERR_TIDEPOOL_QUEUE_FULL'
    | 'ERR_TIDEPOOL_PACKED_LENGTH'
    | 'ERR_TIDEPOOL_DROPPED'
    | 'ERR_TIDEPOOL_TIMEOUT'
    | 'ERR_BUFFER_TOO_LARGE'
    | 'Z_DATA_ERROR'
    | 'Z_BUF_ERROR'
    | 'Z_NEED_DICT'
    | 'Z_MEM_ERROR'
    | 'Z_STREAM_ERROR'
    | `ERR__ERROR_${string}`
    | `ZSTD_error_${string}`
    | 'ERR_TRAILING_JUNK_AFTER_STREAM_END'
    | 'ERR_TIDEPOOL_CORRUPT_INPUT'
    | 'ERR_TIDEPOOL_NOT_A_FILE'
    | 'ERR_METHOD_NOT_IMPLEMENTED'
    | 'ERR_ACCESS_DENIED'
    | 'ERR_STREAM_WRITE_AFTER_END'
    | 'ERR_STRING_TOO_LONG'
    | 'ERR_MEMORY_ALLOCATION_FAILED'
    | 'ERR_INVALID_URL_SCHEME'
    | 'ERR_INVALID_FILE_URL_HOST'
    | 'ERR_INVALID_FILE_URL_PATH'
    | 'ERR_DLOPEN_FAILED'
    | 'ERR_TIDEPOOL_KERNEL_ENTRY'
    | 'ERR_TIDEPOOL_KERNEL_ABI'
    | 'ERR_TIDEPOOL_KERNEL_INVALID'
    | 'ERR_TIDEPOOL_KERNEL_EXISTS'
    | 'ERR_TIDEPOOL_KERNEL_LIMIT'
    | 'ERR_TIDEPOOL_KERNEL_FAILED'
    | 'ERR_TIDEPOOL_NO_PROM_CLIENT'
    | FileErrorCode
    | 'ABORT_ERR';

  /**
   * An error thrown, rejected or emitted by tidepool: an `Error`, `TypeError`
   * or `RangeError` carrying a {@link TidepoolErrorCode} in `code`.
   */
  export interface TidepoolError extends Error {
    /**
     * What went wrong; see {@link TidepoolErrorCode}. A loaded kernel's
     * failure carries the kernel's own code, which this type does not know:
     * compare it as a string (`(err.code as string) === 'ERR_NDJSON_INVALID'`).
     */
    code: TidepoolErrorCode;
    /**
     * For a failed task of {@link Pool.postMany} or {@link Pool.map}: the
     * index of its message (in the Array, or in the order the source gave it).
     */
    index?: number;
    /**
     * The underlying error: for `ERR_TIDEPOOL_SPAWN_FAILED`, and for
     * `ERR_TIDEPOOL_NOT_BUILT` when a prebuilt addon was found but did not load.
     */
    cause?: unknown;
    /** zlib's return code, for the `Z_*` codes (as on `node:zlib`'s errors); libuv's (negative) for fs errors. */
    errno?: number;
    /** For a file `postFile()` could not read: the system call that failed (`'open'`, `'read'`). */
    syscall?: string;
    /** For a file `postFile()` could not read: the path, as given. */
    path?: string;
  }

  /**
   * A pool of native threads that run a kernel (SHA-256, BLAKE3, ...) over
   * binaries without copying them, growing with the age of its queue and
   * shrinking when threads idle.
   *
   * @typeParam E - The `encoding` option, inferred from a literal: results are
   *   `Buffer`s for `'buffer'` (the default), strings otherwise.
   * @typeParam T - The messages the pool accepts: {@link DefaultMessage}, or
   *   the parameter type of the `select` option.
   */
  export class Pool<E extends Encoding = 'buffer', T = DefaultMessage> extends EventEmitter {
    /**
     * Creates a pool and starts its `minThreads` core threads.
     * @throws {TidepoolError} `ERR_INVALID_ARG_TYPE`, `ERR_INVALID_ARG_VALUE`,
     *   `ERR_OUT_OF_RANGE` or `ERR_TIDEPOOL_UNKNOWN_KERNEL` for a bad option;
     *   an `Error` if the core threads cannot be started.
     */
    constructor(options?: PoolOptions<E, T>);

    /**
     * Names of every available kernel, in id order: the built-ins, then the
     * loaded ones (the same frozen array as the module's `kernels`, made
     * anew when a library is loaded).
     */
    static get kernels(): readonly KernelName[];

    /**
     * Registers the kernels of a native kernel library for every pool of
     * the process (every thread's) and returns their names, in the
     * library's order. Loading the same library again returns the same
     * names. Libraries are never unloaded. See docs/writing-kernels.md.
     *
     * @param source The library's path (a string, resolved against the
     *   working directory: never looked up on a search path; or a `file:`
     *   URL), or the handle a kernel library's addon exports.
     * @throws {TidepoolError} `ERR_INVALID_ARG_TYPE` / `ERR_INVALID_ARG_VALUE`
     *   for a bad `source`; `ERR_ACCESS_DENIED` when the permission model
     *   does not allow reading the file; `ERR_DLOPEN_FAILED` when it cannot
     *   be opened; `ERR_TIDEPOOL_KERNEL_ENTRY` (no `tidepool_kernels_v1`),
     *   `ERR_TIDEPOOL_KERNEL_ABI` (another ABI version),
     *   `ERR_TIDEPOOL_KERNEL_INVALID` (a descriptor breaking a rule),
     *   `ERR_TIDEPOOL_KERNEL_EXISTS` (a name already registered),
     *   `ERR_TIDEPOOL_KERNEL_LIMIT`: nothing of the library is registered then.
     */
    static loadKernels(source: string | URL | KernelLibraryHandle): string[];

    /**
     * Runs the pool's kernel (or `options.kernel`) over the message's binary
     * (see the `select` option) on a pool thread.
     *
     * What is read is decided now: `select` runs once, an Array of binaries
     * is read once (each element exactly once) into a snapshot the pool
     * keeps alive until the task settles, so the caller may clear or reuse
     * its Array at once. Binaries over a detached ArrayBuffer throw
     * `ERR_INVALID_STATE`, over a resizable one `ERR_INVALID_ARG_VALUE`; a
     * Proxy is not a binary.
     *
     * Buffer contract: the bytes are read in place by Rust threads, not
     * copied. Do not modify them, nor transfer or detach their ArrayBuffer,
     * until the returned promise settles, exactly as with `fs.write`.
     *
     * @returns A promise of `{ result, message }`, `message` being the very
     *   object posted. It rejects with `ERR_TIDEPOOL_CLOSED` if the pool is
     *   closed, and with a task error (`ERR_TIDEPOOL_PANIC`,
     *   `ERR_TIDEPOOL_DESTROYED`, ...) if the task fails.
     * @throws {TidepoolError} synchronously, for an invalid message or options
     *   (`ERR_INVALID_ARG_TYPE`, `ERR_INVALID_ARG_VALUE`, `ERR_INVALID_STATE`,
     *   `ERR_TIDEPOOL_UNKNOWN_KERNEL`, `ERR_OUT_OF_RANGE`), or an `AbortError`
     *   for an already-aborted signal.
     */
    post<M extends T>(message: M, options?: PostOptions): Promise<PostResult<M, E>>;

    /**
     * The `worker_threads`-style API: runs the pool's kernel over the message's
     * binary; the result arrives as a `'message'` event `(result, message)`, a
     * failure (or a closed pool) as an `'error'` event `(err, message)`.
     * The same buffer contract as {@link Pool.post} applies until then.
     * @throws {TidepoolError} synchronously, for an invalid message.
     */
    postMessage<M extends T>(message: M): void;

    /**
     * Runs a kernel over the file at `path`, read by a pool thread in
     * 256 KiB chunks (no Buffer holds the file, no libuv thread reads it).
     * A relative path is resolved when called. Resolves with the result and
     * the very `path` given; rejects with an fs-style error (`code` such as
     * `'ENOENT'`, `errno`, `syscall`, `path`), or `ERR_ACCESS_DENIED` under
     * the permission model. The file is opened with the process's permissions.
     */
    postFile<P extends string | Buffer | URL>(
      path: P,
      options?: PostOptions,
    ): Promise<{ result: ResultOf<E>; path: P }>;

    /**
     * Runs the pool's kernel (or `options.kernel`) over every message of
     * `messages`, and resolves with the results in the same order: one
     * promise for the batch, no object per task, a native call per 1024
     * tasks.
     *
     * Every message is read and checked before anything is queued, with
     * the rules of {@link Pool.post} (`select` runs once per message, the
     * Array is read once); a bad one throws, naming `messages[i]`. The
     * buffer contract of {@link Pool.post} holds for every message until
     * the promise settles. The pool's `queueFull` policy applies to the
     * tasks that do not fit.
     *
     * @returns A promise of the results (`Buffer`s, or strings for a string
     *   encoding; with `packed`, one `Buffer` of them all). If a task fails, it rejects with that task's error, whose
     *   `index` says which message, and the batch's other tasks are cancelled
     *   (queued ones never run, running ones stop at their next chunk). An
     *   aborted `signal` rejects it with an `AbortError` and cancels them all.
     * @throws {TidepoolError} synchronously, as {@link Pool.post} throws, or
     *   `ERR_INVALID_ARG_TYPE` if `messages` is not an Array.
     */
    postMany<M extends T>(
      messages: readonly M[],
      options?: PostManyOptions & { packed?: false },
    ): Promise<ResultOf<E>[]>;
    postMany<M extends T>(
      messages: readonly M[],
      options: PostManyOptions & { packed: true },
    ): Promise<Buffer>;
    postMany<M extends T>(
      messages: readonly M[],
      options?: PostManyOptions,
    ): Promise<Buffer | ResultOf<E>[]>;

    /**
     * Runs the kernel over every record of one binary: records that lie
     * back to back in `data` (an NDJSON or CSV file's lines, fixed-size
     * keys, a driver's rows), read in place, with no object made per
     * record. `lengths` is every record's length (a whole number above 0;
     * `data` must then be a whole number of records: a short last one is
     * an error, not dropped), or each record's own (an Array or
     * `Uint32Array`; they may add up to less than `data`, never more).
     * Resolves as {@link Pool.postMany} does, record by record.
     *
     * Records run several to a task (a hash's or a compressor's small
     * ones; a record of 16 KiB or more, a decoder's and a loaded kernel's
     * run alone); `data` and `lengths` are read and checked
     * before anything is queued, and the buffer contract of
     * {@link Pool.post} holds for `data` until the promise settles.
     *
     * @returns A promise of the results in the order of the records; with
     *   `packed` (hash kernels only), one `Buffer` of them back to back. A
     *   failed record rejects it with its error, whose `index` says which.
     * @throws {TidepoolError} synchronously: `ERR_INVALID_ARG_TYPE` for a
     *   `data` that is not a binary or `lengths` of another type,
     *   `ERR_OUT_OF_RANGE` for a length that is not a whole number (naming
     *   `lengths[i]`), a record past the end of `data` (naming the first),
     *   a `data` that is not a whole number of fixed-length records, or a
     *   record outside the kernel's input sizes (`maxInputBytes`);
     *   `ERR_INVALID_ARG_VALUE` for `packed` with a kernel whose results
     *   have lengths of their own; and what {@link Pool.post} throws for
     *   `data` itself.
     */
    postRecords(
      data: BinaryInput,
      lengths: number | readonly number[] | Uint32Array,
      options?: PostManyOptions & { packed?: false },
    ): Promise<ResultOf<E>[]>;
    postRecords(
      data: BinaryInput,
      lengths: number | readonly number[] | Uint32Array,
      options: PostManyOptions & { packed: true },
    ): Promise<Buffer>;
    postRecords(
      data: BinaryInput,
      lengths: number | readonly number[] | Uint32Array,
      options?: PostManyOptions,
    ): Promise<Buffer | ResultOf<E>[]>;

    /**
     * An incremental hash whose chunks run on the pool's threads, one at a
     * time and in order, the kernel's state kept in Rust between them; many
     * hashes run in parallel. The digest equals `node:crypto`'s (or the
     * kernel's one-shot result) whatever the chunking.
     * @param kernel A hash kernel ({@link HashKernelName}) or a loaded one
     *   (which must write its output only at the end).
     * @throws {TidepoolError} `ERR_INVALID_ARG_VALUE` for a kernel that is
     *   not a hash or an unknown option; `ERR_TIDEPOOL_UNKNOWN_KERNEL`; the
     *   kernel's parameter errors.
     */
    createHash(kernel: HashKernelName | LoadedKernelName, options?: HashOptions): Hash;
    /**
     * `node:crypto`'s `createHmac(algorithm, key[, options])` on the pool's
     * threads: {@link Pool.createHash} of `hmac` with `{ hash: algorithm, key }`.
     * `key`: a string (its UTF-8 bytes), a binary, or a secret `KeyObject`.
     */
    createHmac(
      algorithm: HmacParams['hash'],
      key: string | Binary | import('node:crypto').KeyObject,
      options?: Omit<HashOptions, 'params'>,
    ): Hash;

    /**
     * `node:zlib`'s `createGzip()`, its chunks run on the pool's threads (one
     * at a time and in order, the codec's state kept in Rust between them),
     * not on libuv's pool; output byte-compatible with the `gzip` kernel and
     * decodable by `node:zlib`. Corrupt input fails the stream with a
     * zlib-style error (`Z_DATA_ERROR`, ...), too much output with
     * `ERR_BUFFER_TOO_LARGE`; a pool closed mid-stream with `ERR_TIDEPOOL_CLOSED`.
     */
    createGzip(options?: CodecStreamOptions<DeflateParams> & DeflateParams): CodecStream;
    /** `node:zlib`'s `createGunzip()`, on the pool's threads (see {@link Pool.createGzip}). */
    createGunzip(options?: CodecStreamOptions<InflateParams> & InflateParams): CodecStream;
    /** `node:zlib`'s `createDeflate()`, on the pool's threads. */
    createDeflate(options?: CodecStreamOptions<DeflateParams> & DeflateParams): CodecStream;
    /** `node:zlib`'s `createInflate()`, on the pool's threads. */
    createInflate(options?: CodecStreamOptions<InflateParams> & InflateParams): CodecStream;
    /** `node:zlib`'s `createDeflateRaw()`, on the pool's threads. */
    createDeflateRaw(options?: CodecStreamOptions<DeflateParams> & DeflateParams): CodecStream;
    /** `node:zlib`'s `createInflateRaw()`, on the pool's threads. */
    createInflateRaw(options?: CodecStreamOptions<InflateParams> & InflateParams): CodecStream;
    /** `node:zlib`'s `createUnzip()` (gzip or zlib, by the header), on the pool's threads. */
    createUnzip(options?: CodecStreamOptions<InflateParams> & InflateParams): CodecStream;
    /** `node:zlib`'s `createBrotliCompress()`, on the pool's threads. */
    createBrotliCompress(options?: CodecStreamOptions<BrotliParams>): CodecStream;
    /** `node:zlib`'s `createBrotliDecompress()`, on the pool's threads. */
    createBrotliDecompress(
      options?: CodecStreamOptions<BrotliDecompressParams> & BrotliDecompressParams,
    ): CodecStream;
    /** A Zstandard compression stream (`node:zlib`'s `createZstdCompress()` from Node 22.15), on the pool's threads. */
    createZstdCompress(
      options?: CodecStreamOptions<ZstdParams> & Pick<ZstdParams, 'dictionary'>,
    ): CodecStream;
    /** A Zstandard decompression stream, on the pool's threads. */
    createZstdDecompress(
      options?: CodecStreamOptions<ZstdDecompressParams> & ZstdDecompressParams,
    ): CodecStream;
    /** An LZ4 frame compression stream, on the pool's threads. */
    createLz4Compress(options?: CodecStreamOptions<Lz4Params>): CodecStream;
    /** An LZ4 frame decompression stream, on the pool's threads. */
    createLz4Decompress(options?: CodecStreamOptions): CodecStream;

    /**
     * Runs the pool's kernel over every message an iterable or async
     * iterable yields (a sync iterable's promises are awaited), with at most
     * `options.concurrency` tasks in flight, and yields `{ result, message }`
     * in the order of the messages. The source is pulled only as results
     * are consumed, so memory stays bounded over millions of messages.
     *
     * Breaking out of the loop (or `return()`) cancels the tasks in flight
     * and closes the source; it completes once the running tasks have
     * stopped. A failed task (its error's `index` says which message), a
     * message that is not binary, the source throwing or the signal firing
     * ends the iteration: the tasks in flight are cancelled and, once they
     * have stopped, the pending `next()` rejects with that error.
     *
     * @throws {TidepoolError} synchronously for bad options,
     *   `ERR_INVALID_ARG_TYPE` if `iterable` is not iterable, or an
     *   `AbortError` for an already-aborted signal.
     */
    map<M extends T>(
      iterable: Iterable<M | PromiseLike<M>> | AsyncIterable<M>,
      options?: MapOptions,
    ): AsyncIterableIterator<PostResult<M, E>>;

    /** A snapshot of the pool's threads, queue, counters and latencies. */
    stats(options?: StatsOptions): PoolStats;

    /** True once `close()` or `destroy()` was called. */
    get closed(): boolean;

    /**
     * True while the queue holds `maxQueue` tasks or posts wait for room; a
     * `'drain'` event follows when it falls back below.
     */
    get needsDrain(): boolean;

    /**
     * Stops accepting tasks, lets the queued and running ones finish, then
     * joins the threads. Resolves when every thread has exited. Idempotent.
     */
    close(): Promise<void>;

    /**
     * Stops accepting tasks, rejects the queued ones and cancels the running
     * ones (`ERR_TIDEPOOL_DESTROYED`), then joins the threads. Resolves when
     * every thread has exited. Idempotent.
     */
    destroy(): Promise<void>;

    /** `await using pool = new Pool()`: calls {@link Pool.close}. */
    [Symbol.asyncDispose](): Promise<void>;

    /** Adds a listener for a pool event (see {@link PoolEvents}). */
    on<K extends PoolEventName>(event: K, listener: (...args: PoolEvents<E, T>[K]) => void): this;
    on<N extends string | symbol>(
      event: OtherEventName<N>,
      listener: (...args: any[]) => void,
    ): this;

    /** Adds a one-time listener for a pool event (see {@link PoolEvents}). */
    once<K extends PoolEventName>(event: K, listener: (...args: PoolEvents<E, T>[K]) => void): this;
    once<N extends string | symbol>(
      event: OtherEventName<N>,
      listener: (...args: any[]) => void,
    ): this;

    /** Removes a listener of a pool event (alias of `removeListener`). */
    off<K extends PoolEventName>(event: K, listener: (...args: PoolEvents<E, T>[K]) => void): this;
    off<N extends string | symbol>(
      event: OtherEventName<N>,
      listener: (...args: any[]) => void,
    ): this;

    /** Adds a listener for a pool event (alias of `on`). */
    addListener<K extends PoolEventName>(
      event: K,
      listener: (...args: PoolEvents<E, T>[K]) => void,
    ): this;
    addListener<N extends string | symbol>(
      event: OtherEventName<N>,
      listener: (...args: any[]) => void,
    ): this;

    /** Removes a listener of a pool event. */
    removeListener<K extends PoolEventName>(
      event: K,
      listener: (...args: PoolEvents<E, T>[K]) => void,
    ): this;
    removeListener<N extends string | symbol>(
      event: OtherEventName<N>,
      listener: (...args: any[]) => void,
    ): this;

    /** Adds a listener for a pool event at the front of the listener list. */
    prependListener<K extends PoolEventName>(
      event: K,
      listener: (...args: PoolEvents<E, T>[K]) => void,
    ): this;
    prependListener<N extends string | symbol>(
      event: OtherEventName<N>,
      listener: (...args: any[]) => void,
    ): this;

    /** Adds a one-time listener for a pool event at the front of the listener list. */
    prependOnceListener<K extends PoolEventName>(
      event: K,
      listener: (...args: PoolEvents<E, T>[K]) => void,
    ): this;
    prependOnceListener<N extends string | symbol>(
      event: OtherEventName<N>,
      listener: (...args: any[]) => void,
    ): this;

    /** Emits a pool event (the pool does this itself; rarely useful from outside). */
    emit<K extends PoolEventName>(event: K, ...args: PoolEvents<E, T>[K]): boolean;
    emit<N extends string | symbol>(event: OtherEventName<N>, ...args: any[]): boolean;
  }

  /** The default values of the {@link PoolOptions} (a frozen object). */
  export interface PoolDefaults {
    /** `'sha256'`. */
    readonly kernel: 'sha256';
    /** `'buffer'`. */
    readonly encoding: 'buffer';
    /** `1`. */
    readonly minThreads: number;
    /** The number of CPUs this process may use (cgroup- and affinity-aware), at least 1. */
    readonly maxThreads: number;
    /** `1` millisecond. */
    readonly spawnDelayMs: number;
    /** `100` milliseconds. */
    readonly idleTimeoutMs: number;
    /** `1` millisecond. */
    readonly checkIntervalMs: number;
    /** `'demand'`. */
    readonly scaleRule: ScaleRule;
    /** `Infinity`. */
    readonly maxQueue: number;
    /** `'reject'`. */
    readonly queueFull: QueueFullPolicy;
    /** `Infinity`. */
    readonly maxQueueAgeMs: number;
    /** `Infinity`. */
    readonly maxInputBytes: number;
    /** `buffer.constants.MAX_LENGTH` (the largest Buffer this Node can make). */
    readonly maxOutputBytes: number;
    /** 256 MiB: the output limit of decoders when `maxOutputBytes` is not given. */
    readonly maxExpandedBytes: number;
    /** `10`. */
    /** No bound on the working memory of memory-hard tasks: `Infinity`. */
    readonly maxWorkingBytes: number;
    readonly niceIncrement: number;
  }

  /** What a kernel library's addon exports for {@link Pool.loadKernels} (an opaque External). */
  export interface KernelLibraryHandle {
    readonly __tidepoolKernelLibrary?: never;
  }

  /** Names of every available kernel, in id order (a frozen array; see {@link Pool.kernels}). */
  export const kernels: readonly KernelName[];

  /** Every valid `encoding` option: `['buffer', 'hex', 'base64', 'base64url']` (a frozen array). */
  export const encodings: readonly Encoding[];

  /** The default option values (a frozen object). */
  export const defaults: PoolDefaults;

  /**
   * The input of the `spin` and `sleep` kernels: a new 4-byte Buffer holding
   * `us` microseconds as a little-endian uint32.
   * @param us An integer from 0 to 4294967295.
   * @throws {TidepoolError} `ERR_INVALID_ARG_TYPE` or `ERR_OUT_OF_RANGE`.
   */
  export function micros(us: number): Buffer;
}

export = tidepool;
