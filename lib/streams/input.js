'use strict';
// What a stream's caller hands it, made into what its tasks read: a
// Writable's chunks as items (their bytes read in place later, by
// lib/streams/tasks.js) and update()'s data (copied or hashed before
// update() returns). Checked as Node's own streams check them; apart from
// the tasks, which only ever see bytes.

const { Buffer } = require('node:buffer');
const { snapshot, checkInput, ANY_LENGTH } = require('../engine/binary');
const { ownArray } = require('../base/own-array');
const { invalidArgType, makeError } = require('../errors');
const { Item } = require('./items');

const isEncoding = Buffer.isEncoding;
const bufferFrom = Buffer.from;
const isArray = Array.isArray;
const Uint8ArrayCtor = Uint8Array;
const { isAnyArrayBuffer, isArrayBufferView } = require('node:util').types;

/** A written chunk as a task reads it: a string encoded, a binary checked (read in place later). */
function chunkOf(data, encoding) {
  if (typeof data === 'string') return bufferFrom(data, encoding);
  if (isArray(data)) {
    throw invalidArgType(
      'data',
      'of type string or an instance of Buffer, TypedArray, DataView or ArrayBuffer',
      data,
    );
  }
  const chunk = snapshot(data, 'data');
  checkInput(chunk, 'data', ANY_LENGTH);
  return chunk;
}

/**
 * A Writable's chunks ({ chunk, encoding } each) as items, the first
 * `accepted` of them accepted work; `flushKind(chunk)`: the flush a chunk
 * marks, or -1. Checked all first: throws the first refusal.
 */
function writtenItems(chunks, flushKind, accepted) {
  const items = ownArray(chunks.length);
  for (let i = 0; i < chunks.length; i++) {
    const { chunk, encoding } = chunks[i];
    const kind = flushKind(chunk);
    if (kind >= 0) {
      items[i] = new Item(undefined, 0, kind, undefined, 0, i < accepted);
    } else {
      const data = chunkOf(chunk, encoding === 'buffer' ? undefined : encoding);
      items[i] = new Item(
        data,
        checkInput(data, 'data', ANY_LENGTH),
        0,
        undefined,
        0,
        i < accepted,
      );
    }
  }
  return items;
}

/**
 * update()'s data as node:crypto takes it: a string in `inputEncoding`
 * (an unknown one is utf8, as there; hex of odd length refused, as there),
 * or any binary as a view of its bytes now (copied or hashed before
 * update() returns, so resizable or shared memory is fine).
 */
function updateBytes(data, inputEncoding) {
  if (typeof data === 'string') {
    const encoding =
      typeof inputEncoding === 'string' && isEncoding(inputEncoding) ? inputEncoding : 'utf8';
    if (encoding.toLowerCase() === 'hex' && data.length % 2 !== 0) {
      throw makeError(
        TypeError,
        'ERR_INVALID_ARG_VALUE',
        `The argument 'encoding' is invalid for data of length ${data.length}. Received '${inputEncoding}'`,
      );
    }
    return bufferFrom(data, encoding);
  }
  if (isArrayBufferView(data))
    return new Uint8ArrayCtor(data.buffer, data.byteOffset, data.byteLength);
  if (isAnyArrayBuffer(data)) return new Uint8ArrayCtor(data);
  throw invalidArgType(
    'data',
    'of type string or an instance of Buffer, TypedArray, DataView or ArrayBuffer',
    data,
  );
}

module.exports = { writtenItems, updateBytes };
