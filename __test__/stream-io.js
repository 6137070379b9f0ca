'use strict';
// What the stream contract tests (stream-buffers, stream-updates,
// stream-contract) do to a stream: fill a producer's Buffer, write and
// wait for the callback, collect the output.

/** Deterministic bytes for round `i`: compressible, never the same twice. */
function fill(buffer, i) {
  let x = (i + 1) * 2654435761;
  for (let at = 0; at < buffer.length; at++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    buffer[at] = 97 + ((x >>> 16) % 7);
  }
  return buffer;
}

/** The stream's output, collected as it comes. */
function collect(stream) {
  const out = [];
  stream.on('data', (chunk) => out.push(chunk));
  return out;
}

/** write() and wait for its callback. */
function written(stream, chunk) {
  return new Promise((resolve, reject) =>
    stream.write(chunk, (err) => (err ? reject(err) : resolve())),
  );
}

module.exports = { fill, collect, written };
