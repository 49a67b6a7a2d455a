import { ConnectorError } from '../../../domain/transfers.js';

/*
 * The incremental cursor every SQL Source offers to Jobs (PostGIS, MySQL, SQL Server, Oracle):
 * a Run reads the rows whose cursor column is above the largest value the previous Run read, up
 * to the largest value at its own start, and keeps that largest value for the next Run. Only the
 * quoting and the way the database prints its largest value differ; the window is decided here.
 */

/** What a SQL Source remembers between Runs: the cursor column and the largest value read. */
export interface SqlCursor {
  column: string;
  /** The value as the database prints it; compared in SQL as a quoted literal of the column's type. */
  value: string | null;
}

/** The previous Run's value, when it was kept for this same column (a Job that changed its column starts over). */
export function previousCursorValue(column: string, kept: unknown): string | null {
  const previous = (kept ?? null) as SqlCursor | null;
  return previous?.column === column ? previous.value : null;
}

export interface CursorWindow {
  /** Conditions to AND into the read (none for a first Run of an empty table). */
  where: string[];
  /** The cursor to keep for the next Run. */
  cursor: SqlCursor;
  /** Nothing is newer than what the previous Run read: the rest of the Run is skipped. */
  unchanged: boolean;
}

/**
 * The rows of this Run: above `last` (the previous Run's value) and up to `max` (the largest value
 * when this Run started), so rows committed after the max was read wait for the next Run.
 * `column` is already quoted; `literal` quotes a value for the database's SQL.
 */
export function cursorWindow(column: string, quotedColumn: string, last: string | null, max: string | null, literal: (value: string) => string): CursorWindow {
  const where: string[] = [];
  if (last !== null) where.push(`${quotedColumn} > ${literal(last)}`);
  if (max !== null) where.push(`${quotedColumn} <= ${literal(max)}`);
  return { where, cursor: { column, value: max ?? last }, unchanged: last !== null && max === null };
}

/** `… WHERE a AND b`, or nothing. */
export const whereClause = (conditions: string[]) => (conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '');

/**
 * This Run's window of a read: the previous Run's value (when kept for this column), the largest
 * value above it as `maxAbove` asks the database for it (given the condition to add, or ''), and
 * the window between them.
 */
export async function readWindow(
  column: string,
  quotedColumn: string,
  kept: unknown,
  literal: (value: string) => string,
  maxAbove: (where: string) => Promise<string | null>,
): Promise<CursorWindow> {
  const last = previousCursorValue(column, kept);
  const max = await maxAbove(last !== null ? ` WHERE ${quotedColumn} > ${literal(last)}` : '');
  return cursorWindow(column, quotedColumn, last, max, literal);
}

/** A read (`SELECT … FROM …`) limited to a window, with the cursor to keep. */
export const windowedRead = (select: string, window: CursorWindow) => ({
  sql: `${select}${whereClause(window.where)}`,
  sync: { cursor: window.cursor },
  unchanged: window.unchanged,
});

/** A cursor_column that is not a column of what is read. */
export const cursorColumnMissing = (what: string, layer: string, quotedColumn: string, column: string) =>
  new ConnectorError('not_found', `${what}: ${layer} has no column ${quotedColumn} (cursor_column)`, { cursor_column: column });

/**
 * Which SQL selectors an on-change trigger can check: a table with a cursor column (a newer
 * value is a change, asked for as the incremental read asks for it); a query cannot tell.
 */
export function cursorCheckUnsupported(type: string) {
  return (resource: { query: string } | { cursor_column?: string | undefined }): string | null => {
    if ('query' in resource) return `on-change for a ${type} Source needs a table with cursor_column; a query cannot tell what changed`;
    if (!resource.cursor_column) {
      return `on-change for a ${type} Source needs cursor_column in source_resource: the column whose larger values mark new or changed rows (an updated_at, an increasing id)`;
    }
    return null;
  };
}

/** The note every SQL Source's change check shares (docs/connectors.md). */
export const cursorCheckNote = "a table with cursor_column: the largest value above the last Run's (one aggregate query, no rows read)";
