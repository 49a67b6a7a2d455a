import { z } from 'zod';
import { nonBlank, noWhiteSpace } from '../../platform/text.js';

/*
 * Field builders the connector modules share, so the same kind of field (a host, a port, a
 * secret) is described and bounded the same way in every type's JSON Schema and form.
 */

export const host = z
  .string()
  .max(255)
  .regex(noWhiteSpace('/@'), 'a host name or IP address, without scheme, path or white space')
  .describe('Host name or IP address');
export const port = (fallback: number) => z.number().int().min(1).max(65535).default(fallback).describe(`TCP port (default ${fallback})`);
export const username = z.string().min(1).max(255).describe('User name');
export const name = (what: string) => nonBlank(255).describe(what);

/** A secret: write-only. Responses show has_<field> instead; an update that omits it keeps it. */
export const secret = (what: string) => z.string().min(1).max(65_536).optional().describe(`${what} (secret: write-only)`);

export const httpUrl = z
  .url({ protocol: /^https?$/ })
  .max(4000)
  // Refinements run even when .url() failed: an unparsable value is that check's to refuse, not a throw (a 500).
  .refine((u) => !URL.canParse(u) || (!new URL(u).username && !new URL(u).password), 'put credentials in their own fields, not in the URL')
  .describe('http:// or https:// URL');

/** A path inside a bucket, container or server: no leading slash games, no NUL, no "..". */
export const objectKey = (what: string) =>
  z
    .string()
    .min(1)
    .max(1024)
    .refine((k) => !k.split('/').includes('..'), 'must not contain ".." segments')
    .describe(what);

/** Database identifiers: kept as given and always quoted when used, so any name works. */
export const identifier = (what: string) => z.string().min(1).max(63).describe(what);

export const writeMode = z
  .enum(['replace', 'append', 'create'])
  .default('replace')
  .describe('replace: load into a staging table, then swap in one transaction; append: add rows; create: fail if the table exists');
