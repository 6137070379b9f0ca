// Types of require('@tidepool-rs/pool/password'): password hashing on a
// tidepool, stored as Argon2's PHC string or bcrypt's modular crypt string.
import type { Pool } from './index';

type Bytes = string | ArrayBuffer | SharedArrayBuffer | NodeJS.ArrayBufferView;

/** What every call takes. */
interface CallOptions {
  /** The pool to run on. @default @tidepool-rs/pool/crypto's pool */
  pool?: Pool<any, any>;
  /** Stops the call: a queued hash never runs; a running one's result is dropped. */
  signal?: AbortSignal;
}

/** hash()'s options for Argon2 (the default). */
export interface Argon2HashOptions extends CallOptions {
  /** @default 'argon2id' */
  algorithm?: 'argon2id' | 'argon2i' | 'argon2d';
  /** KiB of memory, at least 8 × parallelism. @default 19456 (19 MiB) */
  memoryCost?: number;
  /** Passes over the memory, 1 or more. @default 2 */
  timeCost?: number;
  /** Lanes, 1 to 2^24 - 1. @default 1 */
  parallelism?: number;
  /** Bytes of hash, 4 or more. @default 32 */
  hashLength?: number;
  /** Bytes of random salt, 8 to 1024. @default 16 */
  saltLength?: number;
  /** A key (a pepper) kept apart from the stored strings; verify() needs the same. */
  secret?: Bytes;
  /** At most 32 bytes, written into the string (`data=`). */
  associatedData?: Bytes;
}

/** hash()'s options for bcrypt. */
export interface BcryptHashOptions extends CallOptions {
  algorithm: 'bcrypt';
  /** log2 of the rounds, 4 to 31. @default 10 */
  cost?: number;
  /** @default '2b' */
  version?: '2a' | '2b' | '2y';
}

export type HashOptions = Argon2HashOptions | BcryptHashOptions;

/** verify()'s options. */
export interface VerifyOptions extends CallOptions {
  /** The `secret` the string was hashed with (Argon2; refused for a bcrypt string). */
  secret?: Bytes;
  /**
   * The highest costs a stored string may ask for (a running hash cannot be
   * stopped, so one with absurd costs would hold a thread for hours); past
   * them verify() rejects with `ERR_TIDEPOOL_PASSWORD_UNSUPPORTED`.
   */
  limits?: {
    /** KiB. @default 4194304 (4 GiB) */
    memoryCost?: number;
    /** @default 16 */
    timeCost?: number;
    /** @default 64 */
    parallelism?: number;
    /** bcrypt's. @default 20 */
    cost?: number;
  };
}

/**
 * The string `password` is stored as, with a new random salt: Argon2id's
 * PHC string (`$argon2id$v=19$m=19456,t=2,p=1$...`) unless `options` asks
 * for another variant or bcrypt (`$2b$10$...`; bcrypt reads at most the
 * first 72 bytes of a password).
 */
export function hash(password: Bytes, options?: HashOptions): Promise<string>;
/**
 * Whether `password` is the one `encoded` was made from (an Argon2 PHC
 * string, or a bcrypt `$2a$`/`$2b$`/`$2y$` string), compared in constant time.
 */
export function verify(encoded: string, password: Bytes, options?: VerifyOptions): Promise<boolean>;
/** Whether `encoded` was made with other settings than `options` (and the defaults) would use. */
export function needsRehash(encoded: string, options?: HashOptions): boolean;
/** The defaults hash() uses. */
export const defaults: {
  readonly algorithm: 'argon2id';
  readonly memoryCost: number;
  readonly timeCost: number;
  readonly parallelism: number;
  readonly hashLength: number;
  readonly saltLength: number;
  readonly cost: number;
  readonly version: '2b';
};
