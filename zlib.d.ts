// Types of require('@tidepool-rs/pool/zlib'): node:zlib's API, running on a
// tidepool. Everything node:zlib declares is re-exported as it is; the
// declarations below add what this module has beyond it.
import type { Transform } from 'node:stream';
import type { Pool } from './index';

export * from 'node:zlib';

/** zstd's options, as node:zlib takes them (Node 22.15+; here on every Node). */
export interface ZstdOptions {
  /** @default constants.ZSTD_e_continue */
  flush?: number | undefined;
  /** Only `constants.ZSTD_e_end` (the default). */
  finishFlush?: number | undefined;
  chunkSize?: number | undefined;
  /** Keyed by `constants.ZSTD_c_*`: `ZSTD_c_compressionLevel` and `ZSTD_c_checksumFlag` here. */
  params?: { [key: number]: number | boolean } | undefined;
  maxOutputLength?: number | undefined;
  info?: boolean | undefined;
  pledgedSrcSize?: number | undefined;
  signal?: AbortSignal | undefined;
  highWaterMark?: number | undefined;
}

/** node:zlib's constants, with zstd's (`ZSTD_*`) where this Node's have none. */
export const constants: typeof import('node:zlib').constants & {
  readonly [name: `ZSTD_${string}`]: number;
  readonly ZSTD_e_continue: number;
  readonly ZSTD_e_flush: number;
  readonly ZSTD_e_end: number;
  readonly ZSTD_c_compressionLevel: number;
  readonly ZSTD_c_checksumFlag: number;
  readonly ZSTD_d_windowLogMax: number;
  readonly ZSTD_CLEVEL_DEFAULT: number;
};

export interface ZstdCompress extends Transform {
  flush(kind?: number, callback?: () => void): void;
  flush(callback?: () => void): void;
  close(callback?: () => void): void;
  readonly bytesWritten: number;
}
export interface ZstdDecompress extends ZstdCompress {}

type OneShotCallback = (error: Error | null, result: Buffer) => void;
type Input = string | ArrayBuffer | NodeJS.ArrayBufferView;

export function createZstdCompress(options?: ZstdOptions): ZstdCompress;
export function createZstdDecompress(options?: ZstdOptions): ZstdDecompress;
export function zstdCompress(buf: Input, callback: OneShotCallback): void;
export function zstdCompress(buf: Input, options: ZstdOptions, callback: OneShotCallback): void;
export function zstdDecompress(buf: Input, callback: OneShotCallback): void;
export function zstdDecompress(buf: Input, options: ZstdOptions, callback: OneShotCallback): void;

/** zstd's compressed bytes of `buf`, on the calling thread (node:zlib's from Node 22.15; here on every Node). */
export function zstdCompressSync(buf: Input, options?: ZstdOptions): Buffer;
/** What zstd's `buf` decodes to, on the calling thread. */
export function zstdDecompressSync(buf: Input, options?: ZstdOptions): Buffer;
/** The classes, with or without `new`, as node:zlib's. */
export const ZstdCompress: {
  new (options?: ZstdOptions): ZstdCompress;
  (options?: ZstdOptions): ZstdCompress;
};
export const ZstdDecompress: {
  new (options?: ZstdOptions): ZstdDecompress;
  (options?: ZstdOptions): ZstdDecompress;
};

export interface InstallOptions {
  /**
   * The pool node:zlib's async work runs on; it must give Buffers
   * (`encoding: 'buffer'`, no `select`). @default this module's own pool
   */
  pool?: Pool<any, any>;
}

/**
 * Routes node:zlib's async one-shots (`gzip()`...) and stream factories
 * (`createGzip()`...) to this module for the whole process, so libraries
 * that call `require('zlib')` run on a tidepool. The `*Sync` functions,
 * the classes and the constants stay node:zlib's. Throws
 * `ERR_TIDEPOOL_ZLIB_INSTALLED` when already installed with another pool.
 */
export function install(options?: InstallOptions): void;
/** Puts node:zlib's own functions back (nothing when not installed). */
export function uninstall(): void;
/** The pool this module's work runs on: install()'s, or the module's own (made when first used). */
export const pool: Pool<any, any>;
