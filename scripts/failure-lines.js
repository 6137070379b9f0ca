'use strict';
// The lines of a command's output that say why it failed (failing tests,
// panics and their messages, crashes, kills, out-of-memory and compiler
// errors), the last few of them: `npm test` repeats them after its
// summary, as CI keeps only the end of the log.

const { StringDecoder } = require('node:string_decoder');

/** A line that says why, in the output of cargo, rustc, tsc, node --test, bun or deno. */
const WHY = new RegExp(
  [
    'FAILED',
    'FAIL\\b',
    'panicked at',
    "didn't exit successfully",
    'signal: \\d+',
    'memory allocation of',
    'overflowed its stack',
    'fatal runtime error',
    'out of memory',
    '[Kk]illed',
    'Segmentation fault',
    'No space left',
    '^\\s*error',
    'error TS\\d+',
    '\\[ERR_[A-Z_]+\\]',
    '\\w*Error\\b[^:]*:',
    '✖',
    '^not ok',
    '\\(fail\\)',
  ].join('|'),
);
/** A line of a test that passed, whose name happens to match WHY. */
const PASSED = /\.\.\. ok$|\.\.\. ok \(|^\s*✔/;
/** A terminal's colour codes. */
// eslint-disable-next-line no-control-regex
const COLOUR = /\x1b\[[0-9;]*m/g;
/** A line longer than this is cut: it is a hint, not the output. */
const WIDEST = 400;

class FailureLines {
  #limit;
  #lines = [];
  /** Lines still to keep after one that opens a message (a panic, cargo's list of failed targets). */
  #follow = 0;
  /** Whether only indented lines follow. */
  #indented = false;

  constructor(limit) {
    this.#limit = limit;
  }

  /** A reader for one output stream: `feed(chunk)` for each, `end()` once. */
  reader() {
    const decoder = new StringDecoder('utf8');
    let rest = '';
    const scan = (text, final) => {
      const lines = (rest + text).split('\n');
      rest = final ? '' : lines.pop();
      // One unbroken line of megabytes is kept only to its cut.
      if (rest.length > WIDEST) rest = rest.slice(0, WIDEST);
      for (const line of lines) this.#add(line);
    };
    return {
      feed: (chunk) => scan(decoder.write(chunk), false),
      end: () => scan(decoder.end(), true),
    };
  }

  /** The lines kept, oldest first. */
  get lines() {
    return this.#lines.slice();
  }

  #add(raw) {
    const line = raw.replace(COLOUR, '').trimEnd().slice(0, WIDEST);
    if (line === '') return;
    // cargo's list of failed targets is its indented lines.
    if (this.#follow > 0 && this.#indented && !/^\s/.test(line)) this.#follow = 0;
    if (this.#follow > 0) {
      this.#follow--;
      this.#push(`  ${line}`);
    } else if (WHY.test(line) && !PASSED.test(line)) {
      this.#push(line);
      if (line.includes('panicked at')) [this.#follow, this.#indented] = [2, false];
      else if (/targets? failed:$/.test(line)) [this.#follow, this.#indented] = [8, true];
    }
  }

  #push(line) {
    this.#lines.push(line);
    if (this.#lines.length > this.#limit) this.#lines.shift();
  }
}

module.exports = { FailureLines };
