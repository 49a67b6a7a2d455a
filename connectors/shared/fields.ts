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

/** A file of a field-data project (QFieldCloud, Mergin Maps) and, optionally, one layer of it. */
export const projectFile = {
  file: objectKey('File in the project, e.g. survey.gpkg'),
  layer: z.string().min(1).max(255).optional().describe('Layer of the file (a GeoPackage holds several); default: the whole file'),
};

/** Database identifiers: kept as given and always quoted when used, so any name works. */
export const identifier = (what: string) => z.string().min(1).max(63).describe(what);

const writeModeHelp = 'replace: load into a staging table, then swap in one transaction; append: add rows; create: fail if the table exists';

/** The write modes of a database Destination that cannot upsert here: upsert is refused with a sentence that says so. */
export const writeMode = z
  .enum(['replace', 'append', 'create'], {
    error: (issue) =>
      issue.input === 'upsert'
        ? 'upsert is not available for this Destination type: use replace, append or create (docs/connectors.md says which types upsert)'
        : 'must be replace, append or create',
  })
  .default('replace')
  .describe(writeModeHelp);

/**
 * A database target that can upsert: `write_mode` with `upsert`, the key columns, and the
 * optional column whose true values delete rows (connectors/shared/sql/sql-delivery.ts, upsertPlan).
 */
export function upsertTarget<S extends z.ZodRawShape>(shape: S) {
  return z
    .strictObject({
      ...shape,
      write_mode: z
        .enum(['replace', 'append', 'create', 'upsert'], { error: 'must be replace, append, create or upsert' })
        .default('replace')
        .describe(`${writeModeHelp}; upsert: update the rows whose upsert_keys match, insert the others (one row per key)`),
      upsert_keys: z
        .array(z.string().min(1).max(63))
        .min(1)
        .max(16)
        .refine((keys) => new Set(keys).size === keys.length, 'names a column twice')
        .optional()
        .describe('With upsert: the columns whose values identify a row (every row of the output needs a value in each)'),
      delete_marker: z
        .string()
        .min(1)
        .max(63)
        .optional()
        .describe(
          'With upsert: a column of the output whose true values (true, t, 1, yes, y) delete the row with that key instead of writing it; the column itself is not written',
        ),
    })
    .superRefine((target, ctx) => {
      const t = target as { write_mode?: string; upsert_keys?: string[]; delete_marker?: string };
      if (t.write_mode === 'upsert' && !t.upsert_keys?.length) {
        ctx.addIssue({ code: 'custom', path: ['upsert_keys'], message: 'write_mode upsert needs upsert_keys: the columns that identify a row' });
      }
      if (t.write_mode !== 'upsert') {
        for (const field of ['upsert_keys', 'delete_marker'] as const) {
          if (t[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: `${field} is used with write_mode upsert` });
        }
      }
      if (t.delete_marker && t.upsert_keys?.includes(t.delete_marker)) {
        ctx.addIssue({ code: 'custom', path: ['delete_marker'], message: 'the delete marker cannot be a key column' });
      }
    });
}
