'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-dictionary.js: Deflate
// and DeflateRaw with a dictionary (SPDY's header dictionary), inflated
// with the same dictionary, give the input back, the dictionary given as a
// Buffer and as every kind of ArrayBufferView and an ArrayBuffer; and so
// after a reset() mid-stream (the output after it alone inflates to the
// input: reset() keeps the dictionary).

const test = require('node:test');
const assert = require('node:assert/strict');
const { both } = require('./harness');

const spdyDict = Buffer.from(
  [
    'optionsgetheadpostputdeletetraceacceptaccept-charsetaccept-encodingaccept-',
    'languageauthorizationexpectfromhostif-modified-sinceif-matchif-none-matchi',
    'f-rangeif-unmodifiedsincemax-forwardsproxy-authorizationrangerefererteuser',
    '-agent10010120020120220320420520630030130230330430530630740040140240340440',
    '5406407408409410411412413414415416417500501502503504505accept-rangesageeta',
    'glocationproxy-authenticatepublicretry-afterservervarywarningwww-authentic',
    'ateallowcontent-basecontent-encodingcache-controlconnectiondatetrailertran',
    'sfer-encodingupgradeviawarningcontent-languagecontent-lengthcontent-locati',
    'oncontent-md5content-rangecontent-typeetagexpireslast-modifiedset-cookieMo',
    'ndayTuesdayWednesdayThursdayFridaySaturdaySundayJanFebMarAprMayJunJulAugSe',
    'pOctNovDecchunkedtext/htmlimage/pngimage/jpgimage/gifapplication/xmlapplic',
    'ation/xhtmltext/plainpublicmax-agecharset=iso-8859-1utf-8gzipdeflateHTTP/1',
    '.1statusversionurl\0',
  ].join(''),
);

const input = ['HTTP/1.1 200 Ok', 'Server: node.js', 'Content-Length: 0', ''].join('\r\n');

/**
 * `input` through `deflate` piped by hand into `inflate` (ended at the
 * deflate's end); with `reset`, written once, flushed, reset(), written
 * again, and only what comes after the reset goes to the inflate. Resolves
 * with the inflate's output at its end.
 */
function roundTrip(common, deflate, inflate, { reset = false } = {}) {
  return new Promise((resolve, reject) => {
    let doneReset = !reset;
    let output = '';
    inflate.setEncoding('utf-8');
    deflate.on('error', reject);
    inflate.on('error', reject);
    deflate.on('data', (chunk) => {
      if (doneReset) inflate.write(chunk);
    });
    inflate.on('data', (chunk) => (output += chunk));
    deflate.on('end', () => inflate.end());
    inflate.on(
      'end',
      common.mustCall(() => resolve(output)),
    );
    deflate.write(input);
    if (!reset) {
      deflate.end();
      return;
    }
    deflate.flush(() => {
      try {
        deflate.reset();
        doneReset = true;
        deflate.write(input);
        deflate.end();
      } catch (err) {
        reject(err);
      }
    });
  });
}

/** The dictionary as a Buffer, as each kind of view, and as an ArrayBuffer. */
const dictionaries = (common) => [spdyDict, ...common.getBufferSources(spdyDict)];

test('a dictionary, with Deflate/Inflate and DeflateRaw/InflateRaw, with and without a reset()', async () => {
  await both(async (zlib, common, who) => {
    for (const dictionary of dictionaries(common)) {
      const kind = Object.prototype.toString.call(dictionary);
      for (const reset of [false, true]) {
        const what = `${who}: ${kind}${reset ? ', reset()' : ''}`;
        const basic = await roundTrip(
          common,
          zlib.createDeflate({ dictionary }),
          zlib.createInflate({ dictionary }),
          { reset },
        );
        assert.equal(basic, input, `${what}: deflate`);
        const raw = await roundTrip(
          common,
          zlib.createDeflateRaw({ dictionary }),
          zlib.createInflateRaw({ dictionary }),
          { reset },
        );
        assert.equal(raw, input, `${what}: deflateRaw`);
      }
    }
  });
});
