import { sql, type ValueExpression } from 'slonik';
import { z } from 'zod';
import { invalidParameter } from './errors.js';

/**
 * A cursor is `<created_at in epoch ms>.<id>`: opaque to clients, but every string of this shape
 * is one the server can page from, so the OpenAPI pattern says exactly what is accepted.
 */
const CURSOR_PATTERN = /^[0-9]{1,13}\.[A-Za-z0-9_]{1,100}$/;

/** ?limit= and ?cursor= on every list (docs/api-conventions.md). */
export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Items per page, 1..200 (default 50)'),
  cursor: z.string().regex(CURSOR_PATTERN, 'not a cursor this server issues').optional().describe('Opaque cursor from the previous page (its next_cursor)'),
});
export type PageQuery = z.infer<typeof pageQuery>;

export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), next_cursor: z.string().nullable().describe('Pass as ?cursor= for the next page; null on the last page') });

interface Cursor {
  t: number;
  id: string;
}

function decodeCursor(cursor: string): Cursor {
  if (!CURSOR_PATTERN.test(cursor)) throw invalidParameter('The cursor is not one this server issued; start again without it', { parameter: 'cursor' });
  const dot = cursor.indexOf('.');
  return { t: Number(cursor.slice(0, dot)), id: cursor.slice(dot + 1) };
}

const encodeCursor = (c: Cursor) => `${c.t}.${c.id}`;

/** Newest first; keyset pagination on (created_at, id) so pages stay stable while rows are added. */
export function keysetWhere(query: PageQuery, table?: string) {
  if (!query.cursor) return sql.fragment`TRUE`;
  const c = decodeCursor(query.cursor);
  const column = (name: string) => sql.identifier(table ? [table, name] : [name]);
  return sql.fragment`(${column('created_at')}, ${column('id')}) < (${new Date(c.t).toISOString()}::timestamptz, ${c.id})`;
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
