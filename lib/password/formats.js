'use strict';
// The strings password hashes are stored as: Argon2's PHC string
// (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`, base64 without
// padding, as the reference implementation writes it; parameters in any
// order, as the `argon2` package writes `m,p,t`; `data=` the associated
// data) and bcrypt's modular crypt string (`$2b$10$` + 22 characters of
// salt + 31 of hash, in bcrypt's own base64 alphabet).

const ARGON2 = new Set(['argon2id', 'argon2i', 'argon2d']);
const B64 = /^[A-Za-z0-9+/]*$/;
const BCRYPT = /^\$(2[aby])\$(\d\d)\$([./A-Za-z0-9]{22})([./A-Za-z0-9]{31})$/;
/** bcrypt's base64 alphabet, and the standard one, character for character. */
const BCRYPT_ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const STANDARD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/**
 * Base64 without padding, strict and canonical (the unused low bits of
 * the last character 0, as every encoder writes them): undefined for
 * anything else.
 */
function fromB64(text) {
  if (!B64.test(text) || text.length % 4 === 1) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return toB64(bytes) === text ? bytes : undefined;
}

function toB64(bytes) {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString('base64')
    .replace(/=+$/, '');
}

/**
 * @typedef {{ algorithm: string, version: number, memory: number, passes: number,
 *   parallelism: number, associatedData: Buffer | undefined, keyid: Buffer | undefined,
 *   salt: Buffer | undefined, hash: Buffer | undefined }} Argon2String
 */

/**
 * An Argon2 PHC string's parts, or undefined when it is none.
 * @returns {Argon2String | undefined}
 */
function parseArgon2(encoded) {
  const fields = encoded.split('$');
  // ['', algorithm, v=19 (optional), params, salt, hash]
  if (fields[0] !== '' || !ARGON2.has(fields[1])) return undefined;
  let at = 2;
  let version = 16; // no v=: Argon2 1.0, as the reference reads it
  const v = /^v=([1-9]\d{0,3})$/.exec(fields[at]);
  if (v !== null) {
    version = Number(v[1]);
    at++;
  }
  if (fields.length !== at + 3) return undefined;
  /** @type {Argon2String} */
  const parts = {
    algorithm: fields[1],
    version,
    memory: 0,
    passes: 0,
    parallelism: 0,
    associatedData: undefined,
    keyid: undefined,
    salt: undefined,
    hash: undefined,
  };
  const seen = new Set();
  for (const pair of fields[at].split(',')) {
    const m = /^([a-z]+)=(.*)$/.exec(pair);
    if (m === null || seen.has(m[1])) return undefined;
    seen.add(m[1]);
    const [, key, value] = m;
    if (key === 'm' || key === 't' || key === 'p') {
      if (!/^[1-9]\d{0,9}$/.test(value)) return undefined;
      parts[{ m: 'memory', t: 'passes', p: 'parallelism' }[key]] = Number(value);
    } else if (key === 'data' || key === 'keyid') {
      const bytes = fromB64(value);
      if (bytes === undefined) return undefined;
      parts[key === 'data' ? 'associatedData' : 'keyid'] = bytes;
    } else return undefined;
  }
  if (!seen.has('m') || !seen.has('t') || !seen.has('p')) return undefined;
  parts.salt = fromB64(fields[at + 1]);
  parts.hash = fromB64(fields[at + 2]);
  if (parts.salt === undefined || parts.hash === undefined) return undefined;
  return parts;
}

/** The PHC string of an Argon2 hash. */
function formatArgon2({ algorithm, memory, passes, parallelism, associatedData, salt, hash }) {
  let params = `m=${memory},t=${passes},p=${parallelism}`;
  if (associatedData !== undefined && associatedData.byteLength > 0)
    params += `,data=${toB64(associatedData)}`;
  return `$${algorithm}$v=19$${params}$${toB64(salt)}$${toB64(hash)}`;
}

/**
 * bcrypt's base64 to bytes (a 22-character salt is 16 bytes, a
 * 31-character hash 23), canonical only (as the bcrypt and bcryptjs
 * packages read it): undefined for a last character with unused bits set.
 */
function fromBcryptB64(text) {
  let standard = '';
  for (const c of text) standard += STANDARD_ALPHABET[BCRYPT_ALPHABET.indexOf(c)];
  const bytes = Buffer.from(standard, 'base64');
  return toB64(bytes) === standard ? bytes : undefined;
}

/**
 * A bcrypt string's parts, `{ version, cost, salt, hash }` (the salt 16
 * bytes, the hash 23), or undefined when it is none.
 */
function parseBcrypt(encoded) {
  const m = BCRYPT.exec(encoded);
  if (m === null) return undefined;
  const salt = fromBcryptB64(m[3]);
  const hash = fromBcryptB64(m[4]);
  if (salt === undefined || hash === undefined) return undefined;
  return { version: m[1], cost: Number(m[2]), salt, hash };
}

/**
 * The scheme of a well-formed stored string of a kind verify() does not
 * take ("bcrypt's $2x$"), or undefined.
 */
function unsupportedKind(encoded) {
  const bcrypt = /^\$(2x?)\$\d\d\$/.exec(encoded);
  if (bcrypt !== null) {
    return bcrypt[1] === '2x'
      ? "bcrypt's $2x$ (crypt_blowfish's, with its sign bug)"
      : "bcrypt's original $2$";
  }
  const other = /^\$(scrypt|pbkdf2[-\w]*|[156])\$/.exec(encoded);
  return other === null ? undefined : `'$${other[1]}$' strings`;
}

module.exports = {
  parseArgon2,
  formatArgon2,
  parseBcrypt,
  fromBcryptB64,
  unsupportedKind,
  ARGON2,
};
