import { sql, type ValueExpression } from 'slonik';
import { z } from 'zod';
import { invalidParameter } from './errors.js';

/** ?limit= and ?cursor= on every list (docs/api-conventions.md). */
export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Items per page, 1..200 (default 50)'),
  cursor: z.string().max(200).optional().describe('Opaque cursor from the previous page'),
});
export type PageQuery = z.infer<typeof pageQuery>;

export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), next_cursor: z.string().nullable().describe('Pass as ?cursor= for the next page; null on the last page') });

interface Cursor {
  t: number;
  id: string;
}

function decodeCursor(cursor: string): Cursor {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Cursor;
    if (typeof value.t === 'number' && typeof value.id === 'string') return value;
  } catch {
    /* fall through */
  }
  throw invalidParameter('The cursor is not one this server issued; start again without it', { parameter: 'cursor' });
}

const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString('base64url');

/** Newest first; keyset pagination on (created_at, id) so pages stay stable while rows are added. */
export function keysetWhere(query: PageQuery) {
  if (!query.cursor) return sql.fragment`TRUE`;
  const c = decodeCursor(query.cursor);
  return sql.fragment`(created_at, id) < (${new Date(c.t).toISOString()}::timestamptz, ${c.id})`;
}

export function toPage<R extends { id: string; created_at: string }, T>(rows: R[], query: PageQuery, map: (r: R) => T) {
  const more = rows.length > query.limit;
  const items = more ? rows.slice(0, query.limit) : rows;
  const last = items[items.length - 1];
  return {
    items: items.map(map),
    next_cursor: more && last ? encodeCursor({ t: Date.parse(last.created_at), id: last.id }) : null,
  };
}

export const limitPlusOne = (query: PageQuery): ValueExpression => query.limit + 1;
