import path from 'node:path';
import { ConnectorError } from '../../../domain/transfers.js';
import { objectKey } from '../fields.js';

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

/**
 * A relative path a server listed (a project file's name) as the path segments of a URL on that
 * server, each percent-encoded. A name with an empty, "." or ".." segment is refused: URL
 * resolution would climb out of the folder it belongs to, to another path of the same server,
 * with our credentials on the request (issue 32).
 */
export function listedPathSegments(name: string, label: string): string {
  const segments = name.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..' || s.includes('\\'))) {
    throw new ConnectorError(
      'invalid_response',
      `${label} lists a file named ${JSON.stringify(name.slice(0, 200))}, which is not a path inside the project: not requested`,
      {},
      false,
    );
  }
  return segments.map(encodeURIComponent).join('/');
}
