'use strict';
// Adapted from nodejs/node test/parallel/test-zlib-zstd-from-zstd.js: a
// zstd file made by another zstd library, piped from disk through
// ZstdDecompress to disk, as fast as the streams go, comes out byte for
// byte.
//
// Upstream's fixture person.jpg.zst (person.jpg by the reference CLI,
// `zstd -19`) is not here. Its stand-in is below: 16 KiB of text made in
// the test (words of a small vocabulary picked by a seeded xorshift32),
// compressed by the reference CLI (zstd 1.5.4, `zstd -19`: one frame, its
// content size and an XXH64 checksum) and kept as base64; it is written to
// a temporary file for each run. zstd is node:zlib's from Node 22.15 and
// 23.8: before, the drop-in's run goes alone.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const nodeZlib = require('node:zlib');
const { both } = require('./harness');

const NODE_HAS_ZSTD = typeof nodeZlib.createZstdCompress === 'function';

/** `size` bytes of text: words of a small vocabulary, picked by xorshift32. */
function sample(size = 16 * 1024, seed = 0x510e527f) {
  const words = [
    'tide',
    'pool',
    'zstd',
    'frame',
    'block',
    'window',
    'literal',
    'match',
    'offset',
    'sequence',
    'entropy',
    'huffman',
    'checksum',
    'dictionary',
    'stream',
    'thread',
  ];
  let x = seed;
  const out = Buffer.alloc(size);
  let at = 0;
  while (at < size) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const word = words[(x >>> 0) % words.length];
    at += out.write((at % 64 < 8 ? '\n' : ' ') + word, at);
  }
  return out;
}

/** sample() by the reference CLI: `zstd -19` (zstd 1.5.4). */
const FIXTURE_ZST =
  'KLUv/WQAPx1QALKHFRGw6+ShaGLZHAwUrU6SqAQHdP////9/5JoJSwJkmrh0KOKHWf0o2y5HdItpAh+QFI3hyIrSeaTL' +
  'up2EVvRYpPJyQ1q3tmVvG4MTKmadNhcpGxe6jPQDhNeoc09Jkgz7HTMgEEBBQoMFIzLJ0n0TgIBARYdCQCEgYKQAl0BQ' +
  'isQgaTMkxt0e63+Gk3H2L0YooVSC9yYkI20v+UmF3pnis50k8ZQjuVzcwcOShZLZMFRxrJ5fcR4JctfQK62WmbIi1QNX' +
  'CxfvSMBd8ADSEOASm3VGm7N0ZGm33+QOshUMCNe5pG3YznIgb4h/kbXR2wJJceocJbn70jApaEKG9AeUYCycBcsUwStc' +
  'LQNyzB1RIsKh+7UnbPM2WY9umRQE/Qgc4wqJiZEOrX6i5S7nf8Z8q+NIeRfvA8CmcfuBCMKoy2ETF03rAoICYGuxIfXd' +
  'XipY6VEKOQsHT8ZACGbEx2Wh3aqvhy4Mw1NYaJp/BCmzj6YhGTweK4Ly8lQ530E9cT425hIvBMZRkDTMcBjaWMqFw2fK' +
  'apCJpR6cFwG9YHb1WnBc8Gsvgt8aqBxjyB/TZonAztsRM6oSfoShiwMSn6Vn1cxQG4zIFDIyH9t26wolOtfHjBNkNZTx' +
  'ieDAF5jfAVs7/PM8E1pD64gGV9iGjkbt1L/oPTTKv6InXESBO2MRNh4yKW4NE6egXJWiliIGhtuDSHgjkEpH26VOCju/' +
  'WmJhjlkU5LTrzwoZnuYbIzugVW1DC16/Ll9TT0aNJsNSxrmV9xAhj0xjaVjIT2iZUK2T9uDAJ1EgjvosSrJoGQdB1ahR' +
  'tlLwDh/hpiCHz6UN6m0LbEzdtJkLOwkgek0ch8nzMMPuqnFAsIn11w/ssGAqgXcI0cpWUlanEqaMn9bKMHieJd1zF94D' +
  '8O39OHmJQg4MW476BxzdqPEE73kEIQJKE2FuEyZnGe4ECpDwUc352YBOZp8GZwDqLApwrU7Q5uuLeCcPQVs93crXq8Il' +
  'IVRR47b4mkg6TnqQtn5Qoz4vTb7f7EbgWfNoCupDw61A0vaeLDM5R/cpEC5T3zdEDfclgz88WsYT9daWEJ+AS0gYH/wY' +
  'gWyvZl+WMv+b6ASyhzhEhwbgHfTBIZkHMwgtnrlofOfRKaYy9CSva4J8Ck7454PPiHJKGvACsUMrRNpKc4KdsgknjE5m' +
  'IHHOmo5FJybEr2fjtznjAB4QcmCkH7IK5IGaf1jqcIBUbQ03E83FUMS/AbnU7IoeC+ws/tB/Mvh7PxX7EuEbqNog8neY' +
  'ESwVpGESl6wwcFBOBllHa1KPVQRZv5T4btyh0TFCQN6z6Kqkkv/8SmdSP9jo0ytGIBq4LWRTYGImGlgOJF/QAYKRxT66' +
  'au/GhW4FPDBT8ydqkcUfTU5DDhRohppBoIAn0R83sOTaF9QyXufgv1oZvDaJx1IzJ5RdeUKR1tAUw0xRWBLg8WUFNNia' +
  'o171A5NmqFDAtYVAZayDwKPntxVwKF+taxLiMFLYq7AiAMLVQawoPsPVb4xLcOg00cCMgYgDrkisC2pdqofumeIRd8cV' +
  'PHUJPm7xP/dqZvYn/rWaho4AUnNauF/FHCCmeYvi0iO0Ctlka2xQw4BRQoiKVW2DC5zXJLc96WpnaRbdh2fb/Wnm4f4/' +
  'YoCTwhz4007EkN9jjsUuIDj2VG7/D260Fx2EYJ8dNqY4yVvwk0VFTn4K4s5VbGoMbfLl6uHErqqaQkf0P7vAM1+VcWcn' +
  'D1qjlTQgrjLCI8Pygjm2H70ufIEAEAKUNbLkT74WCatgQbEbp/EaEpKtBUoaw0rKmXgaU8/b3s6YmVA2mTBUw0bl5Y18' +
  'D/xGWojKvJEBR8nb6BeJcNXJfms29o3lY/iYMyJnPf4AWRW0pEAZpoAGCySW+rFVTLveZFKQSgOdDzY48/XSEspMUve4' +
  '1aowRA6GsvcBMJJBjoGlInRKANeyM+gIsBkMbmzaM2QOjKZgywpcFQTipb1MAIVl42HJS5nkspDFBne7U+kcGKuyeDmE' +
  'Kq5+8w7jqOvX/CGfE0AMXPtPPujW/woep2yggjr3mfrwCoFWvQfZ97WAifllHxh6j2ceDxqgGMDAfPhAQLADAuqPYyIE' +
  'QbLK5YFhFhgmMRI3+117gXqSu8qwWBaqnOMhefMACvAoixR7SmKm4eIX9NW0uQ737XZUFdwK0Vx9BQ2otwAPOfJGSSEb' +
  'mpQY369bZfCjT7l32If9KYu+/9SKIVzOM7QSEgTELC8g6fBzS3hkYO7HfBeaSsWadKsR+KdJDJI7P15p9mu1z+BFGSHA' +
  '7KlGSUktQ1Bsk2Guo68HATOm+EOTSJfJJwB4xBYHGGiDC1xxuATowA64mPAk5kDAQhs1IAiXOe1o/GsiQNpuLCnRvDKE' +
  'O0mZn+BOteUIy0olkR85A9oMR1cSvLC51h2CRcz7wXxkWSXRGIBrjWMPcCLT9gvQaM3BJB8aIAuAjU79UPDGLhgTKBd+' +
  'HuGXC5xh8syID6kH6fP85oLQMffDjdZ8MOwyHRXFwbjPR5OGSp2vjRmr4f2Ih88NVZY7sIaA5Jm+33AEcWJJl/NagdcE' +
  '0lKAkGg91mXr2q57iyEHJ3QlXIjIQdlX42xKHPOHzbLKS57npKp8JxkEkGtmdl48CU1TDNlW2qUpAj4DcGBRRijk5ftm' +
  'GBLRXmhvGxdZ4lVDfBVvUg6chl7VYABmh8PobRBBxwzcYP10HlsvsEqEGVU49Sye4akogOHF+Mk0BIaHfus8I0aibvcg' +
  'z/B2Tdqhg2+KGxp50W2wFj01izHHNg2092usNOPbTmjAgtMWUVw/szbeABSpyij/kjDK7AX4J2Aywn7QIGyLE/42Oknj' +
  'Sec63YwRR+1A5VbC3w58BcEo3ix9EgchAcYHX7Ewk5Yp3SF6YhQbn9QyOG/irk1+vAdvjUNPD+wpfTsq1G04fhYBOREv' +
  'CByzuEMe95uobqjCrEbR6QM7fbHFSlomoexZX5FoJFJ6hfD/sx8+I9Y6pZ1A5ht1rfLgKAL0VrnO2zx2AMsk8ZZcWHAP' +
  'pD00A8bn7uevNgMp/B2aS4ItbHFBL0H1HLG8jwduhDzAQOmoMbZK+5Nj8iL88IAtdv1CCkqjszEUKjP6p73paBHgTkML' +
  'JTyc+INnEcdNeuduYrnzAO+FjIP3G5OE8wJ0gQUDTcgFAl2/ycKnS0uf8wbS2KEDQnWiWRMaq2CmFi6P0g1lcWojFyJk' +
  'dcrEudIYh1eDb/RjWwuTpBGpcYUzCLgFA3Tr5KMAN5qGhyuCnRAMYBRAVKEy6ktQ8tYbRWz96AK8wrogCi0qhTGzZmGh' +
  'HJibySzuFhVbdRQfPmgWcJWWgoERr1qPgm5YPboF9l0a4p7JETJhRSnQBAqm4oDIYxK4rrDkvNgGBb8Ewk/7Zjr9JhA9' +
  '2mF6+EG2clSAjkO5gONdqHlHXQHeoftC';

test('a zstd file piped through ZstdDecompress comes out whole', async (t) => {
  if (!NODE_HAS_ZSTD) t.diagnostic('node:zlib has no zstd here: the drop-in runs alone');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidepool-zlib-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const expect = sample();
  const fixture = path.join(dir, 'sample.zst');
  fs.writeFileSync(fixture, Buffer.from(FIXTURE_ZST, 'base64'));

  await both(async (zlib, common, who) => {
    if (zlib === nodeZlib && !NODE_HAS_ZSTD) return;
    const outputFile = path.join(dir, `sample-${who.replace(':', '-')}`);
    const decompress = new zlib.ZstdDecompress();
    const inp = fs.createReadStream(fixture);
    const out = fs.createWriteStream(outputFile);
    await new Promise((resolve, reject) => {
      decompress.on('error', reject);
      out.on('close', common.mustCall(resolve));
      inp.pipe(decompress).pipe(out);
    });
    const actual = fs.readFileSync(outputFile);
    assert.equal(actual.length, expect.length, who);
    for (let i = 0; i < actual.length; i++) {
      if (actual[i] !== expect[i]) assert.equal(actual[i], expect[i], `${who}: byte[${i}]`);
    }
  });
});
