import { z } from 'zod';
import { identifier } from '../fields.js';

/**
 * A user's SELECT as a subquery `(…)`: trailing semicolons dropped, on lines of its own so that a
 * trailing `--` comment ends before the closing parenthesis. Wrapped like this, the text can only
 * be one query: a second statement or a data-modifying one is a syntax error.
 */
export const asSubquery = (query: string) => `(\n${query.trim().replace(/[;\s]+$/, '')}\n)`;

/**
 * What the SQL Sources (PostGIS, MySQL) say the same way: the incremental cursor column, a query
 * resource, and how incremental reads work.
 */
export const cursorColumn = () =>
  identifier('Column for incremental reads (a timestamp or increasing id): a Run reads the rows above the largest value the previous Run read').optional();
export const selectQuery = (what = 'One SELECT statement') => z.strictObject({ query: z.string().min(1).max(100_000).describe(what) });
export const cursorIncrementalNote =
  'with `cursor_column`: each Run reads the rows whose cursor is above the largest value the previous Run read; no new rows skips the rest of the Run';
