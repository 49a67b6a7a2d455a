import { z } from 'zod';
import { CURSOR_PATTERN, type Page } from '../projections/pagination.js';

/** ?limit= and ?cursor= on every list (docs/api-conventions.md; the cursor: projections/pagination.ts). */
export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Items per page, 1..200 (default 50)'),
  cursor: z.string().regex(CURSOR_PATTERN, 'not a cursor this server issues').optional().describe('Opaque cursor from the previous page (its next_cursor)'),
});
export type PageQuery = z.infer<typeof pageQuery>;

export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), next_cursor: z.string().nullable().describe('Pass as ?cursor= for the next page; null on the last page') });

/** A page of read-model rows as the API shows it: each row through its representation. */
export const pageView = <R, T>(page: Page<R>, represent: (row: R) => T) => ({ items: page.items.map(represent), next_cursor: page.next_cursor });
