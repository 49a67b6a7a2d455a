import path from 'node:path';
import { objectKey } from './fields.js';

/*
 * Names of files in object stores and on file servers (s3 keys, Azure blob names, SFTP paths):
 * always relative to the configuration's prefix or base folder, so a Destination's owner decides
 * where a delivery may land and a target cannot climb out of it.
 */

/** A per-use key or path: relative (no leading "/"), no ".." segments; "…/" names a folder. */
export const relativeKey = (what: string) =>
  objectKey(what).refine((k) => !k.startsWith('/'), 'must be relative to the prefix or base folder: drop the leading "/"');

/**
 * The full name of `key` under `prefix`. The prefix is a folder ("nightly" and "nightly/" are the
 * same); a key ending in "/" names a folder too, and the delivered file's name is appended.
 */
export function underPrefix(prefix: string, key: string, filename?: string): string {
  const folder = prefix.replace(/\/+$/, '');
  const name = key.endsWith('/') && filename ? `${key}${filename}` : key;
  return folder ? `${folder}/${name}` : name;
}

/** A path on a file server: base folder joined with the relative path (normalised, never above the base). */
export function underBase(basePath: string, relative: string, filename?: string): string {
  const name = relative.endsWith('/') && filename ? `${relative}${filename}` : relative;
  return path.posix.join(basePath || '.', name);
}
