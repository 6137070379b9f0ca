'use strict';
// pool.createGzip() and the other codec streams: a Transform whose chunks
// run on the pool's threads, the codec's state kept in Rust between them
// (the core's stream/), its chunks handled by lib/streams/tasks.js.
//
// node:zlib's contract: a write's callback runs once its bytes were
// consumed and their output pushed; a step of a task stops once its output
// passes the reader's room, and goes on when the reader reads, so memory
// stays near highWaterMark on both sides whatever the compression ratio; a
// decoder whose format ends with input left ends the readable side (the
// rest is not read), as node:zlib's do.

const { Buffer } = require('node:buffer');
const { Transform, finished } = require('node:stream');
const { StreamTasks } = require('./tasks');
const { noted, notedEnd } = require('./debts');
const { ABORT, WHEN_OVER } = require('../symbols');
const { makeError, stacklessError, invalidArgType, outOfRange } = require('../errors');
const { viewByteLength } = require('../engine/binary');
const { factsOf } = require('../addon/binding');
const { flushesOf, marker, markedKind, deflateMarkedKind, PARAMS, RESET } = require('./flushes');

const nextTick = process.nextTick;
/**
 * The least output a step may make before it stops for a full reader: a
 * task per few KiB would cost more than it does. See BENCHMARKS.md
 * ("Streams: bounded output").
 */
const OUTPUT_BLOCK = 64 * 1024;
/**
 * The most output a step of a compressor in blocks may hand on at once
 * while its reader flows (see Codec#budget): a write's blocks, made
 * together, go out in one piece and one turn of the event loop, not a
 * piece per OUTPUT_BLOCK. See docs/benchmarks-history.md ("`createGzip()` in
 * blocks").
 */
const FLOWING_OUTPUT = 4 * 1024 * 1024;
/**
 * A pool stream's habits: no flush after writes, output as the pool makes it.
 * @type {{ readonly writeFlush: number, readonly chunkSize: number }}
 */
const NO_ZLIB = Object.freeze({ writeFlush: 0, chunkSize: 0 });

/**
 * Whether `chunk` is data with bytes in it (not a flush's marker, not
 * empty): its length as the engine knows it, whatever its own properties say.
 */
function hasBytes(chunk) {
  if (typeof chunk === 'string') return chunk.length !== 0;
  return viewByteLength(chunk) > 0;
}

/** The tick after write() corked an idle stream: its cork goes, if it holds. */
function uncorkTurn(stream) {
  const codec = stream[CODEC];
  if (!codec.autoCorked) return;
  codec.autoCorked = false;
  Transform.prototype.uncork.call(stream);
}

/** end(chunk, encoding, callback) of `stream`, whose tasks are `tasks`. */
function endStream(stream, tasks, chunk, encoding, callback) {
  const data = chunk !== undefined && chunk !== null && typeof chunk !== 'function';
  // A body written whole (end(body) on an idle stream): one task, not two.
  // Not while corked: flushes may wait in the Writable (they have no
  // length), and the end must follow them.
  if (
    data &&
    tasks.idle &&
    stream.writableLength === 0 &&
    !stream.writableCorked &&
    !stream.writableEnded &&
    !stream.destroyed
  )
    return tasks.endWith(() => notedEnd(stream, tasks, chunk, encoding, callback));
  return notedEnd(stream, tasks, chunk, encoding, callback);
}

/**
 * Whether `chunks` are the last of `stream`'s writes and its end() was
 * called: node:zlib finishes the stream with them (a flush queued just
 * before end() carries the trailer), when the Writable holds nothing else.
 */
function lastWrites(stream, chunks) {
  // (`ending`: end() uncorks a stream before the Writable says it ended.)
  if (!stream.writableEnded && !stream[CODEC].ending) return false;
  let bytes = 0;
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i].chunk;
    bytes +=
      typeof chunk === 'string'
        ? Buffer.byteLength(chunk, chunks[i].encoding)
        : viewByteLength(chunk);
  }
  return stream.writableLength === bytes;
}

/** A codec stream's own state (a property, not #private fields: see CodecStream). */
const CODEC = Symbol('tidepool.codec');

/** What a codec stream keeps, and its output's way to the reader. */
class Codec {
  tasks;
  /** The codec's flush kinds (see family()). */
  flushes;
  /** Flush markers written and not yet taken by _write (see `_writev`). */
  markers = 0;
  /** The caller's cork() calls not yet undone by its uncork() (see write()). */
  corks = 0;
  /** write() corked the idle stream until the next tick, and that cork holds. */
  autoCorked = false;
  /** end() was called (and did not throw): the writes it uncorks are the last. */
  ending = false;
  /** The flush kind that follows each write (node:zlib's `flush` option; 0: none). */
  writeFlush;
  /** What a written chunk stands for (markedKind, or deflateMarkedKind). */
  kindOf;
  /** The largest output chunk pushed (node:zlib's `chunkSize`), or 0: as the pool makes them. */
  chunkSize;
  /**
   * With chunkSize: output not pushed yet, because the reader was full
   * (node:zlib pushes a piece at a time and stops at a full reader); and
   * what waits for it to be pushed (the end). At most one step's output.
   */
  unpushed = [];
  afterUnpushed = [];
  /** The writes buffered while a task ran, as one task (see `_writev`). */
  writev;
  /** A compressor a pool may run in blocks (the kernel table's `inBlocks`). */
  inBlocks;

  constructor(stream, port, handle, kernel, zlib) {
    this.flushes = flushesOf(kernel);
    this.writeFlush = zlib.writeFlush;
    this.kindOf = this.flushes.deflate ? deflateMarkedKind : markedKind;
    this.chunkSize = zlib.chunkSize;
    this.inBlocks = factsOf(kernel)?.inBlocks === true;
    this.writev = (chunks, callback) => {
      if (lastWrites(stream, chunks))
        this.tasks.writeWithEnd(chunks, callback, this.kindOf, this.writeFlush);
      else this.tasks.write(chunks, callback, this.kindOf, this.writeFlush);
    };
    this.tasks = new StreamTasks(
      port,
      handle,
      {
        // Nothing pushed: nothing to wait for (Transform calls back such a write at once).
        output: (result) => {
          if (result.length === 0) return true;
          if (this.chunkSize === 0) return stream.push(result);
          if (this.unpushed.length !== 0) {
            this.unpushed.push(result);
            return false;
          }
          return this.pushPieces(stream, result);
        },
        // As node:zlib: a decoder past the end of its format ends the readable side.
        ended: () => this.whenPushed(() => stream.push(null)),
        failed: (err) => stream.destroy(err),
        budget: () => this.budget(stream),
      },
      () => makeError(Error, 'ERR_STREAM_WRITE_AFTER_END', 'write after end'),
    );
  }

  /**
   * The output a step may make before it stops: the reader's room, and at
   * least OUTPUT_BLOCK. A compressor in blocks whose reader flows with
   * nothing buffered may make up to FLOWING_OUTPUT: each push reaches such
   * a reader as 'data' at once, so its buffer stays empty, and the output
   * was made already by the blocks (it waits in Rust otherwise). A reader
   * that pauses or buffers gets the room-sized steps again.
   */
  budget(stream) {
    const room = stream.readableHighWaterMark - stream.readableLength;
    if (this.inBlocks && stream.readableFlowing === true && stream.readableLength === 0)
      return Math.max(room, FLOWING_OUTPUT);
    return Math.max(room, OUTPUT_BLOCK);
  }

  /**
   * `result` pushed to `stream` in pieces of chunkSize (views of it) while
   * the reader has room; the rest goes to the front of `unpushed`. Whether
   * the reader has room.
   */
  pushPieces(stream, result) {
    const size = this.chunkSize;
    for (let at = 0; at < result.length; at += size) {
      const end = Math.min(at + size, result.length);
      if (!stream.push(result.subarray(at, end))) {
        if (end < result.length) this.unpushed.unshift(result.subarray(end));
        return false;
      }
    }
    return true;
  }

  /**
   * Pushes what `unpushed` holds while the reader has room; once it is all
   * pushed, runs what waited for that (the end). Whether it is all pushed
   * and the reader has room left.
   */
  pushUnpushed(stream) {
    let room = true;
    while (room && this.unpushed.length !== 0)
      room = this.pushPieces(stream, /** @type {Buffer} */ (this.unpushed.shift()));
    if (this.unpushed.length !== 0) return false;
    const after = this.afterUnpushed;
    this.afterUnpushed = [];
    for (let i = 0; i < after.length; i++) after[i]();
    return room;
  }

  /** `fn()` once `unpushed` is pushed (at once when it is empty). */
  whenPushed(fn) {
    if (this.unpushed.length === 0) fn();
    else this.afterUnpushed.push(fn);
  }
}

/**
 * The methods of a codec stream. Its constructor is CodecStream below, a
 * function as node:zlib's are, so that a subclass written the old way
 * (`Gzip.call(this, options)`) initializes its `this`; an ES class with
 * #private fields cannot.
 */
class CodecStreamMethods extends Transform {
  /** Its signal fired: destroyed with `err`, as node:zlib's streams are. */
  [ABORT](err) {
    this.destroy(err);
  }

  /** `fn()` once the stream's tasks are over (pool.js lets go of its signal then). */
  [WHEN_OVER](fn) {
    this[CODEC].tasks.whenOver(fn);
  }

  /** Input bytes the codec has taken, as node:zlib's `bytesWritten`. */
  get bytesWritten() {
    return this[CODEC].tasks.consumed;
  }

  /**
   * node:zlib's flush([kind, ]callback): what was written so far comes out
   * (decodable on its own) before `callback`. `kind` is the codec family's
   * constant (see family()); by default node:zlib's for the family.
   */
  flush(kind, callback) {
    if (typeof kind === 'function' || (kind === undefined && callback === undefined)) {
      callback = kind;
      kind = this[CODEC].flushes.fallback;
    } else if (kind === undefined) {
      kind = this[CODEC].flushes.fallback;
    }
    if (typeof kind !== 'number') throw invalidArgType('kind', 'of type number', kind);
    const kinds = this[CODEC].flushes.kinds;
    let known = false;
    for (let i = 0; i < kinds.length; i++) known ||= kinds[i] === kind;
    if (!known) throw outOfRange('kind', this[CODEC].flushes.names, kind);
    if (callback !== undefined && typeof callback !== 'function')
      throw invalidArgType('callback', 'of type function', callback);
    // As node:zlib: after the end, the callback waits for it (or runs at once).
    if (this.writableFinished) {
      if (callback !== undefined) nextTick(callback);
    } else if (this.writableEnded) {
      if (callback !== undefined) this.once('end', callback);
    } else {
      this[CODEC].markers++;
      this.write(marker(kind), callback);
    }
  }

  /** node:zlib's close([callback]): destroys the stream; `callback` once it has closed. */
  close(callback) {
    if (callback !== undefined) {
      if (typeof callback !== 'function')
        throw invalidArgType('callback', 'of type function', callback);
      finished(this, callback);
    }
    this.destroy();
  }

  /**
   * node:zlib's params(level, strategy[, callback]): what was written so far
   * is flushed (Z_SYNC_FLUSH), then the level and strategy change, and
   * `callback` runs. The deflate family only; a decoder takes and ignores
   * it, as node:zlib's. Others throw ERR_METHOD_NOT_IMPLEMENTED.
   */
  params(level, strategy, callback) {
    if (!this[CODEC].flushes.deflate) {
      throw makeError(
        Error,
        'ERR_METHOD_NOT_IMPLEMENTED',
        'The params() method is not implemented for this codec: create a new stream instead',
      );
    }
    if (typeof level !== 'number') throw invalidArgType('level', 'of type number', level);
    if (!Number.isInteger(level) || level < -1 || level > 9)
      throw outOfRange('level', '>= -1 and <= 9', level);
    if (typeof strategy !== 'number') throw invalidArgType('strategy', 'of type number', strategy);
    if (!Number.isInteger(strategy) || strategy < 0 || strategy > 4)
      throw outOfRange('strategy', '>= 0 and <= 4', strategy);
    if (callback !== undefined && typeof callback !== 'function')
      throw invalidArgType('callback', 'of type function', callback);
    if (this.destroyed)
      throw makeError(
        Error,
        'ERR_STREAM_DESTROYED',
        'Cannot call params after a stream was destroyed',
      );
    // As flush(): after the end, nothing changes; the callback waits for it.
    if (this.writableFinished) {
      if (callback !== undefined) nextTick(callback);
    } else if (this.writableEnded) {
      if (callback !== undefined) this.once('end', callback);
    } else {
      this[CODEC].markers++;
      this.write(marker(PARAMS + (level + 1) * 8 + strategy), callback);
    }
  }

  /**
   * node:zlib's reset(): the codec starts over, as a new stream would (its
   * dictionary set again), for what is written after this call. node:zlib
   * resets at once, under writes still queued; here the writes before the
   * call are consumed first. Every codec (the core's stream::RESET).
   */
  reset() {
    if (this.destroyed)
      throw makeError(
        Error,
        'ERR_STREAM_DESTROYED',
        'Cannot call reset after a stream was destroyed',
      );
    if (this.writableEnded) return;
    this[CODEC].markers++;
    this.write(marker(RESET));
  }

  /** A write counts for the pool's close() (the work given before it finishes). */
  write(chunk, encoding, callback) {
    // In object mode the Writable takes anything: refused here, at once,
    // as node:zlib's do.
    if (this.writableObjectMode && typeof chunk !== 'string' && !ArrayBuffer.isView(chunk)) {
      throw invalidArgType(
        'chunk',
        'of type string or an instance of Buffer, TypedArray, or DataView',
        chunk,
      );
    }
    const codec = this[CODEC];
    if (
      codec.inBlocks &&
      hasBytes(chunk) &&
      codec.tasks.idle &&
      this.writableLength === 0 &&
      !this.writableCorked &&
      !this.writableEnded &&
      !this.destroyed
    ) {
      // A write to an idle stream waits for the rest of this turn's writes,
      // which then go as one task: their blocks share the pool's threads
      // in one job, not a write's blocks at a time (node:http corks a
      // socket's writes until the next tick likewise).
      codec.autoCorked = true;
      super.cork();
      nextTick(uncorkTurn, this);
    }
    return noted(this, codec.tasks, chunk, encoding, callback);
  }

  /** Writable's cork(), counted as the caller's (see uncork()). */
  cork() {
    this[CODEC].corks++;
    super.cork();
  }

  /**
   * Writable's uncork(): it undoes the caller's own cork() first. Without
   * one, it undoes the cork write() put on an idle stream, so the writes
   * go now, as they would on node:zlib's stream (never corked there); the
   * tick's uncork then finds nothing to undo, and so can never undo a
   * cork of the caller's.
   */
  uncork() {
    const codec = this[CODEC];
    if (codec.corks > 0) codec.corks--;
    else codec.autoCorked = false;
    super.uncork();
  }

  /** Its end is asked for: a pool closed from now on finishes it first. */
  end(chunk, encoding, callback) {
    const codec = this[CODEC];
    const ending = codec.ending;
    codec.ending = true;
    try {
      return endStream(this, codec.tasks, chunk, encoding, callback);
    } catch (err) {
      codec.ending = ending;
      throw err;
    }
  }

  // Writes go to the pool as they are (not through Transform's _write,
  // whose callback would not wait for the bytes to be consumed).
  _write(chunk, encoding, callback) {
    const codec = this[CODEC];
    if (markedKind(chunk) >= 0) codec.markers--;
    const chunks = [{ chunk, encoding }];
    if (lastWrites(this, chunks))
      codec.tasks.writeWithEnd(chunks, callback, codec.kindOf, codec.writeFlush);
    else codec.tasks.write(chunks, callback, codec.kindOf, codec.writeFlush);
  }

  /**
   * The writes buffered while a task ran, as one task; but not while a
   * flush is among them: the Writable calls a batch's callbacks together,
   * and a flush's callback must come before the writes after it are
   * consumed (node:zlib's order), so those go one at a time.
   */
  // @ts-expect-error -- Transform reads `_writev` as a property: an accessor may hide it.
  get _writev() {
    const codec = this[CODEC];
    // Once the pool is closed, one at a time too: a batch has one callback,
    // and the writes made before close() are taken, the ones after refused.
    return codec.markers === 0 && codec.tasks.accepting ? codec.writev : undefined;
  }

  _read(size) {
    const codec = this[CODEC];
    if (
      (codec.unpushed.length !== 0 || codec.afterUnpushed.length !== 0) &&
      !codec.pushUnpushed(this)
    )
      return;
    this[CODEC].tasks.resume();
    super._read(size);
  }

  _flush(callback) {
    // The end comes after the output: what a full reader left unpushed too.
    this[CODEC].tasks.finish((err) => {
      if (err) callback(err);
      else this[CODEC].whenPushed(callback);
    });
  }

  _destroy(err, callback) {
    this[CODEC].unpushed = [];
    this[CODEC].afterUnpushed = [];
    // The chunk running stops at its next piece; the state goes with it.
    // (A stream that finished, destroyed by autoDestroy, has nothing to stop.)
    const tasks = this[CODEC].tasks;
    if (err || !tasks.over)
      tasks.fail(
        err ?? stacklessError(Error, 'ERR_STREAM_DESTROYED', 'The stream was destroyed'),
        true,
      );
    callback(err);
  }
}

/**
 * A codec stream: `port`, `handle`: the engine's StreamPort
 * (lib/engine/ports.js) and this stream; `kernel`: the codec's name;
 * `options`: the Transform's; `zlib`: node:zlib's habits, `writeFlush` (the
 * flush kind each write ends with, as its `flush` option; 0: none) and
 * `chunkSize` (output pushed in pieces of at most that many bytes, as its
 * streams push them; 0: as the pool makes them).
 * @this {any}
 */
function CodecStream(port, handle, kernel, options, zlib = NO_ZLIB) {
  if (!(this instanceof CodecStream))
    throw new TypeError("Class constructor CodecStream cannot be invoked without 'new'");
  // The state first: an aborted `signal` in `options` destroys the stream
  // inside Transform's constructor, and _destroy reads it.
  this[CODEC] = new Codec(this, port, handle, kernel, zlib);
  Transform.call(this, options);
}
CodecStream.prototype = CodecStreamMethods.prototype;
Object.defineProperty(CodecStream.prototype, 'constructor', {
  value: CodecStream,
  writable: true,
  configurable: true,
});
Object.setPrototypeOf(CodecStream, Transform);

module.exports = { CodecStream };
