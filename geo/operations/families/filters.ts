import { z } from 'zod';
import { findColumn, invalid, selectAll, wrap } from '../relation.js';
import { checkSqlExpression, quoteIdent } from '../sql-guard.js';
import { define } from './definition.js';
import { geomOf } from './geometry-sql.js';
import { column, sqlExpression } from './parameters.js';

/* Operations that keep some rows: by a condition, or the first of equal ones. */

export const filter = define({
  id: 'filter',
  label: 'Filter rows',
  description: 'Keeps the rows for which the expression is true.',
  category: 'filter',
  requiresGeometry: false,
  parameters: z.object({ where: sqlExpression }),
  example: { type: 'filter', where: "status = 'active' AND population > 1000" },
  async compile({ where: condition }, rel, { probe }) {
    const where = checkSqlExpression(condition, 'filter condition');
    // Run the condition once now, so a wrong column is reported as such rather than mid-convert.
    await probe(rel, `SELECT 1 AS t FROM (${rel.sql}) WHERE ${where} LIMIT 1`);
    return { rel: { ...rel, sql: wrap(rel, selectAll(rel), ` WHERE ${where}`) } };
  },
});

export const deduplicate = define({
  id: 'deduplicate',
  label: 'Remove duplicates',
  description: 'Keeps the first of rows that are equal in the given columns (all attribute columns by default) and, unless told otherwise, in their geometry.',
  category: 'filter',
  requiresGeometry: false,
  parameters: z.object({
    columns: z.array(column).default([]).describe('Columns compared; all attribute columns when empty'),
    compare_geometry: z.boolean().default(true).describe('Compare geometries too (equal vertices in the same order)'),
  }),
  example: { type: 'deduplicate', columns: ['region'], compare_geometry: false },
  compile({ columns, compare_geometry }, rel) {
    const by = (columns.length ? [...new Set(columns.map((c) => findColumn(rel, c, 'deduplicate')))] : rel.fields).map((f) => quoteIdent(f.name));
    if (compare_geometry && rel.geom) by.push(`AsBinary(${geomOf(rel)})`);
    if (by.length === 0) throw invalid('deduplicate: nothing to compare: the layer has no columns; name some, or compare geometries');
    const numbered = `SELECT *, ROW_NUMBER() OVER () AS "_dedup_row" FROM (${rel.sql})`;
    const ranked = `SELECT *, ROW_NUMBER() OVER (PARTITION BY ${by.join(', ')} ORDER BY "_dedup_row") AS "_dedup_rank" FROM (${numbered})`;
    return { rel: { ...rel, sql: `SELECT ${selectAll(rel).join(', ')} FROM (${ranked}) WHERE "_dedup_rank" = 1 ORDER BY "_dedup_row"` } };
  },
});
