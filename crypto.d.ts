// Types of require('@tidepool-rs/pool/crypto'): node:crypto's key
// derivations, running on a tidepool, declared as node:crypto declares
// them; and install(), uninstall() and the pool.
import type { Pool } from './index';

export { pbkdf2, pbkdf2Sync, scrypt, scryptSync, hkdf, hkdfSync } from 'node:crypto';
export type { ScryptOptions } from 'node:crypto';

/** node:crypto's argon2() parameters (Node 24.7+). */
export interface Argon2Parameters {
  message: string | ArrayBuffer | NodeJS.ArrayBufferView;
  nonce: string | ArrayBuffer | NodeJS.ArrayBufferView;
  parallelism: number;
  tagLength: number;
  memory: number;
  passes: number;
  secret?: string | ArrayBuffer | NodeJS.ArrayBufferView;
  associatedData?: string | ArrayBuffer | NodeJS.ArrayBufferView;
}
type Argon2Algorithm = 'argon2d' | 'argon2i' | 'argon2id';

/**
 * node:crypto's argon2() on the pool, where node:crypto has it (Node 24.7+);
 * undefined elsewhere, as node:crypto's is.
 */
export const argon2:
  | ((
      algorithm: Argon2Algorithm,
      parameters: Argon2Parameters,
      callback: (err: Error | null, derivedKey: Buffer) => void,
    ) => void)
  | undefined;
/** node:crypto's own argon2Sync(), where it has one. */
export const argon2Sync:
  ((algorithm: Argon2Algorithm, parameters: Argon2Parameters) => Buffer) | undefined;

export interface InstallOptions {
  /**
   * The pool node:crypto's key derivations run on; it must give Buffers
   * (`encoding: 'buffer'`, no `select`). @default this module's own pool
   */
  pool?: Pool<any, any>;
}

/**
 * Routes node:crypto's own `pbkdf2`, `scrypt` and `hkdf` to this module for
 * the whole process, so that libraries that call `require('crypto')` derive
 * keys on a tidepool. The `*Sync` functions stay node:crypto's. Throws
 * `ERR_TIDEPOOL_CRYPTO_INSTALLED` when already installed with another pool,
 * `ERR_TIDEPOOL_CRYPTO_UNSUPPORTED` where node:crypto cannot be changed (Deno).
 */
export function install(options?: InstallOptions): void;
/** Puts node:crypto's own functions back (nothing when not installed). */
export function uninstall(): void;
/** The pool this module's work runs on: install()'s, or the module's own (made when first used). */
export const pool: Pool<any, any>;
