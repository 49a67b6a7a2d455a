import { z } from 'zod';
import { castExpression, findColumn, invalid, selectAll, wrap, type Compiled, type FieldSpec, type Relation } from '../relation.js';
import { checkSqlExpression, quoteIdent } from '../sql-guard.js';
import { define } from './definition.js';
import { geomOf } from './geometry-sql.js';
import { column, columns, sqlExpression } from './parameters.js';

/* Operations on the attribute columns: rename, keep, drop, change type, calculate, sort. */

export const renameColumn = define({
  id: 'rename_column',
  label: 'Rename column',
  description: 'Renames one attribute column.',
  category: 'attribute',
  requiresGeometry: false,
  parameters: z.object({ from: column, to: z.string().min(1).max(255).describe('New column name') }),
  example: { type: 'rename_column', from: 'NAME_EN', to: 'name' },
  compile({ from: fromName, to }, rel) {
    const from = findColumn(rel, fromName, 'rename_column');
    if (rel.fields.some((f) => f !== from && f.name.toLowerCase() === to.toLowerCase()))
      throw invalid(`rename_column: a column named ${JSON.stringify(to)} already exists`);
    if (rel.geom && to.toLowerCase() === rel.geomName.toLowerCase()) throw invalid(`rename_column: ${JSON.stringify(to)} is the name of the geometry column`);
    const select = rel.fields.map((f) => (f === from ? `${quoteIdent(f.name)} AS ${quoteIdent(to)}` : quoteIdent(f.name)));
    if (rel.geom) select.push(geomOf(rel));
    return { rel: { ...rel, sql: wrap(rel, select), fields: rel.fields.map((f) => (f === from ? { ...f, name: to } : f)) } };
  },
});

export const selectColumns = define({
  id: 'select_columns',
  label: 'Keep columns',
  description: 'Keeps only the listed attribute columns (and the geometry), in that order.',
  category: 'attribute',
  requiresGeometry: false,
  parameters: z.object({ columns }),
  example: { type: 'select_columns', columns: ['id', 'name'] },
  compile({ columns }, rel) {
    return withFields(rel, [...new Set(columns.map((c) => findColumn(rel, c, 'select_columns')))]);
  },
});

export const dropColumns = define({
  id: 'drop_columns',
  label: 'Drop columns',
  description: 'Removes the listed attribute columns.',
  category: 'attribute',
  requiresGeometry: false,
  parameters: z.object({ columns }),
  example: { type: 'drop_columns', columns: ['tmp', 'shape_area'] },
  compile({ columns }, rel) {
    const drop = new Set(columns.map((c) => findColumn(rel, c, 'drop_columns')));
    return withFields(
      rel,
      rel.fields.filter((f) => !drop.has(f)),
    );
  },
});

export const castColumn = define({
  id: 'cast_column',
  label: 'Change column type',
  description: 'Converts a column to another type; values that do not convert become null.',
  category: 'attribute',
  requiresGeometry: false,
  parameters: z.object({ column, to: z.enum(['integer', 'integer64', 'real', 'string', 'date', 'datetime']) }),
  example: { type: 'cast_column', column: 'population', to: 'integer' },
  compile({ column, to }, rel) {
    const col = findColumn(rel, column, 'cast_column');
    const cast = castExpression(col.name, to);
    const fields = rel.fields.map((f) => (f === col ? { name: f.name, type: cast.type, width: 0, precision: 0 } : f));
    return { rel: { ...rel, fields, sql: wrap(rel, selectAll(rel, new Map([[col.name, cast.sql]]))) } };
  },
});

export const computeColumn = define({
  id: 'compute_column',
  label: 'Calculate column',
  description: 'Adds or replaces a column with the value of an expression.',
  category: 'attribute',
  requiresGeometry: false,
  parameters: z.object({ column: z.string().min(1).max(255).describe('Column to write'), expression: sqlExpression }),
  example: { type: 'compute_column', column: 'density', expression: 'population / area_km2' },
  async compile({ column: name, expression }, rel, { probe }) {
    const expr = checkSqlExpression(expression, 'compute_column expression');
    if (rel.geom && name.toLowerCase() === rel.geomName.toLowerCase())
      throw invalid(`compute_column: ${JSON.stringify(name)} is the name of the geometry column`);
    // The type is the first non-null value's: GDAL would guess it from the first row (NULL → String).
    const typeName = await probe(rel, `SELECT typeof(v) AS t FROM (SELECT ${expr} AS v FROM (${rel.sql})) WHERE v IS NOT NULL LIMIT 1`);
    const type = typeName === 'integer' ? 'Integer64' : typeName === 'real' ? 'Real' : typeName === 'blob' ? 'Binary' : 'String';
    const existing = rel.fields.find((f) => f.name.toLowerCase() === name.toLowerCase());
    const spec: FieldSpec = { name: existing?.name ?? name, type, width: 0, precision: 0 };
    const fields = existing ? rel.fields.map((f) => (f === existing ? spec : f)) : [...rel.fields, spec];
    const select = fields.map((f) => (f === spec ? `${expr} AS ${quoteIdent(f.name)}` : quoteIdent(f.name)));
    if (rel.geom) select.push(geomOf(rel));
    return { rel: { ...rel, fields, sql: wrap(rel, select) } };
  },
});

export const sort = define({
  id: 'sort',
  label: 'Sort',
  description: 'Orders the rows by columns (empty values last); the output keeps that order.',
  category: 'attribute',
  requiresGeometry: false,
  parameters: z.object({
    by: z
      .array(z.object({ column, descending: z.boolean().default(false) }).strict())
      .min(1)
      .max(20)
      .describe('Sort keys, most significant first'),
  }),
  example: { type: 'sort', by: [{ column: 'population', descending: true }, { column: 'NAME_EN' }] },
  compile({ by }, rel) {
    const keys = by.map((k) => `${quoteIdent(findColumn(rel, k.column, 'sort').name)} ${k.descending ? 'DESC' : 'ASC'} NULLS LAST`);
    return { rel: { ...rel, sql: wrap(rel, selectAll(rel), ` ORDER BY ${keys.join(', ')}`) } };
  },
});

/** The relation with only these attribute columns (and the geometry), in this order. */
function withFields(rel: Relation, fields: FieldSpec[]): Compiled {
  return { rel: { ...rel, fields, sql: wrap(rel, selectAll({ ...rel, fields })) } };
}
