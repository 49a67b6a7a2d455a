import { sql, type DatabasePool, type FragmentSqlToken, type ValueExpression } from 'slonik';
import type { z } from 'zod';
import { DomainError } from '../domain/errors.js';

/*
 * Pages of a read model's list, newest first: keyset pagination on (created_at, id), so pages stay
 * stable while rows are added. A cursor is `<created_at in epoch ms>.<id>`: opaque to clients,
 * but every string of this shape is one the server can page from, so the API's query schema
 * (api/pagination.ts) says exactly what is accepted.
 */
export const CURSOR_PATTERN = /^[0-9]{1,13}\.[A-Za-z0-9_]{1,100}$/;

/** What a list is asked for (?limit= and ?cursor=). */
export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

/** One page of rows, and where the next one starts (null on the last page). */
export interface Page<R> {
  items: R[];
  next_cursor: string | null;
}

interface Cursor {
  t: number;
  id: string;
}

function decodeCursor(cursor: string): Cursor {
  if (!CURSOR_PATTERN.test(cursor)) {
    throw new DomainError('invalid_parameter', 'The cursor is not one this server issued; start again without it', { parameter: 'cursor' });
  }
  const dot = cursor.indexOf('.');
  return { t: Number(cursor.slice(0, dot)), id: cursor.slice(dot + 1) };
}

const encodeCursor = (c: Cursor) => `${c.t}.${c.id}`;

/** The rows after the cursor, in the list's order (created_at DESC, id DESC). */
export function keysetWhere(query: PageRequest, table?: string) {
  if (!query.cursor) return sql.fragment`TRUE`;
  const c = decodeCursor(query.cursor);
  const column = (name: string) => sql.identifier(table ? [table, name] : [name]);
  return sql.fragment`(${column('created_at')}, ${column('id')}) < (${new Date(c.t).toISOString()}::timestamptz, ${c.id})`;
}

/** One row more than the page holds: whether it comes back says whether there is a next page. */
export const limitPlusOne = (query: PageRequest): ValueExpression => query.limit + 1;

/** The page of rows read with keysetWhere and limitPlusOne. */
export function pageFrom<R extends { id: string; created_at: string }>(rows: readonly R[], query: PageRequest): Page<R> {
  const more = rows.length > query.limit;
  const items = more ? rows.slice(0, query.limit) : [...rows];
  const last = items[items.length - 1];
  return { items, next_cursor: more && last ? encodeCursor({ t: Date.parse(last.created_at), id: last.id }) : null };
}

/**
 * One page of a read model's rows, newest first: `select` is the SELECT … FROM … of the list
 * (its table aliased `table`, when given), `where` what its rows satisfy besides the cursor.
 */
export async function readPage<R extends { id: string; created_at: string }>(
  pool: DatabasePool,
  row: z.ZodType<R>,
  select: FragmentSqlToken,
  where: FragmentSqlToken,
  page: PageRequest,
  table?: string,
): Promise<Page<R>> {
  const column = (name: string) => sql.identifier(table ? [table, name] : [name]);
  const rows = await pool.any(sql.type(row)`${select} WHERE ${where} AND ${keysetWhere(page, table)}
    ORDER BY ${column('created_at')} DESC, ${column('id')} DESC LIMIT ${limitPlusOne(page)}`);
  return pageFrom(rows, page);
}
