'use strict';
// The streams a Pool makes (createHash(), createHmac(), createGzip() and
// the other codecs, and lib/zlib/'s classes): each option read and checked
// once, the kernel's params made into a native stream handle, the stream
// built over the engine's StreamPort, its signal watched.
//
// The folder, as Node's lib/internal/streams/ (files by concern):
//   factory.js  this file: makes every stream
//   hash.js     createHash()/createHmac(): node:crypto's Hash and Hmac
//   codec.js    the codec streams (createGzip()...), node:zlib's Transform
//   flushes.js  what a codec stream's flush(), params() and reset() write
//   tasks.js    one stream's steps on their way to the threads and back
//   items.js    a write as an item of the chunk it joins
//   input.js    what a write or update() is given, read once
//   staging.js  update()'s copies, until a step takes them
//   debts.js    what the pool's close() still waits for

const { KeyObject } = require('node:crypto');
const { Hash } = require('./hash');
const { CodecStream } = require('./codec');
const { StreamPort } = require('../engine/ports');
const { paramsHandle, checkDefaults } = require('../args/params');
const { zlibParams } = require('../codecs/pool-options');
const { invalidArgType, invalidArgValue, makeError } = require('../errors');
const { factsOf, hashNames } = require('../addon/binding');
const {
  kernelId,
  checkOutputLimit,
  HASH_OPTIONS,
  HMAC_OPTIONS,
  CODEC_STREAM_OPTIONS,
  streamOptions,
  streamBuffers,
} = require('../args/task-options');

/** A stream's output limit that is none (newStream() takes it as the most a usize holds). */
const UNLIMITED = Infinity;
/** A hash's stream (see #handle). */
const DIGEST = true;

class StreamFactory {
  #engine;
  /** The pool's kernel and what it runs with (its `params`), as Pool keeps them. */
  #defaults;
  /** What the streams ask of the engine (made on first use). */
  #port = undefined;

  constructor(engine, defaults) {
    this.#engine = engine;
    this.#defaults = defaults;
  }

  /** createHash(kernel[, options]) (lib/streams/hash.js). */
  hash(kernel, options) {
    if (typeof kernel !== 'string') throw invalidArgType('kernel', 'of type string', kernel);
    const id = kernelId(kernel, 'kernel');
    const builtinHash = factsOf(kernel)?.kind === 'hash';
    if (!builtinHash && !kernel.includes('/')) {
      throw invalidArgValue(
        'kernel',
        `is not a hash kernel ('${kernel}'; the hashes: ${hashNames().join(', ')}, or a loaded kernel)`,
      );
    }
    const o = streamOptions(options, HASH_OPTIONS, 'createHash');
    // A loaded kernel's state is its own: it has no copy.
    const copier = builtinHash ? this.#copier : undefined;
    return this.#watched(
      new Hash(
        this.#ports(),
        this.#handle(id, o.params, undefined, DIGEST),
        streamBuffers(o.highWaterMark),
        copier,
      ),
      o.signal,
    );
  }

  /**
   * hash.copy([options]): its options checked, then the Hash over the
   * handle `fork()` makes (lib/streams/hash.js), watched as its own.
   */
  #copier = (options, fork) => {
    const o = streamOptions(options, HMAC_OPTIONS, 'copy');
    const handle = fork();
    return this.#watched(
      new Hash(this.#ports(), handle, streamBuffers(o.highWaterMark), this.#copier),
      o.signal,
    );
  };

  /**
   * createHmac(algorithm, key[, options]), as node:crypto's: createHash('hmac')
   * with `{ hash: algorithm, key }`. `key`: a string (its UTF-8 bytes), a
   * binary, or a secret KeyObject.
   */
  hmac(algorithm, key, options) {
    if (typeof algorithm !== 'string') throw invalidArgType('hmac', 'of type string', algorithm);
    if (key instanceof KeyObject) {
      if (key.type !== 'secret') {
        throw makeError(
          TypeError,
          'ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE',
          `Invalid key object type ${key.type}, expected secret.`,
        );
      }
      key = key.export();
    }
    const o = streamOptions(options, HMAC_OPTIONS, 'createHmac');
    const handle = this.#handle(
      kernelId('hmac', 'kernel'),
      { hash: algorithm, key },
      undefined,
      DIGEST,
    );
    return this.#watched(
      new Hash(this.#ports(), handle, streamBuffers(o.highWaterMark), this.#copier),
      o.signal,
    );
  }

  /**
   * A Transform stream that runs `kernel` (a codec) over what is written,
   * on the pool's threads, one chunk at a time and in order, the codec's
   * state kept in Rust between chunks (lib/streams/codec.js). Behind
   * createGzip() and the others, named as in node:zlib.
   */
  codec(kernel, options) {
    const method = `create${kernel[0].toUpperCase()}${kernel.slice(1)}`;
    // node:zlib's own names (level, windowBits...) are taken too, as params.
    const zlib = zlibParams(kernel, options, method);
    const o = streamOptions(zlib.rest, CODEC_STREAM_OPTIONS, method);
    // A stream's limit counts its whole output, not one Buffer: it may pass buffer.constants.MAX_LENGTH.
    const maxOutputBytes = checkOutputLimit(o.maxOutputBytes, Number.MAX_SAFE_INTEGER);
    const params = zlib.params === undefined ? o.params : { ...o.params, ...zlib.params };
    const handle = this.#handle(kernelId(kernel, 'kernel'), params, maxOutputBytes);
    return this.#watched(
      new CodecStream(this.#ports(), handle, kernel, streamBuffers(o.highWaterMark)),
      o.signal,
    );
  }

  /**
   * For lib/zlib/'s classes: `{ port, handle }` of a codec stream with
   * `params` (checked). node:zlib's streams have no output limit (its
   * `maxOutputLength` is for one-shots): neither has this one, whatever the
   * pool's `maxOutputBytes` and `maxExpandedBytes`; the reader bounds the
   * memory it holds.
   */
  open(kernel, params) {
    const handle = this.#handle(kernelId(kernel, 'kernel'), params, UNLIMITED);
    return { port: this.#ports(), handle };
  }

  /**
   * A stream's native handle: its kernel, params (checked here, once),
   * output limit, and whether it is a digest's (DIGEST: its kernel may
   * write only when it finishes, which the core checks whatever the
   * chunking).
   */
  #handle(id, params, maxOutputBytes, digest = false) {
    let handle;
    const defaults = this.#defaults;
    if (params !== undefined) handle = paramsHandle(id, params, 'options.params', false);
    else if (id === defaults.kernel && defaults.extra !== undefined) handle = defaults.extra.params;
    else checkDefaults(id, 'options.params');
    return this.#engine.native.newStream(id, handle, maxOutputBytes, digest);
  }

  #ports() {
    this.#port ??= new StreamPort(this.#engine);
    return this.#port;
  }

  /** `stream`, its signal (if any) watched: it is destroyed when it fires. */
  #watched(stream, signal) {
    if (signal !== undefined) this.#engine.aborts.watchStream(signal, stream);
    return stream;
  }
}

module.exports = { StreamFactory };
