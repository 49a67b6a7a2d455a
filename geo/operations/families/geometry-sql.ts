import { familyCode, selectAll, wrap, type Compiled, type Family, type Relation } from '../relation.js';
import { quoteIdent } from '../sql-guard.js';

/* The SQL every geometry operation writes: the geometry column, and a relation with each geometry replaced. */

/** The geometry column of the relation, quoted. */
export const geomOf = (rel: Relation) => quoteIdent(rel.geomName);

/** An operation that replaces each geometry by `call(geometry)` and keeps everything else. */
export const withGeometry = (rel: Relation, call: string, change: Partial<Relation> = {}): Compiled => ({
  rel: { ...rel, ...change, sql: wrap(rel, selectAll(rel, new Map(), call)) },
});

/**
 * A geometry repaired (ST_MakeValid), kept to the layer's kind: repair can turn a polygon into a
 * polygon plus stray lines, or a multipolygon into one polygon (kept multi, as the layer declares).
 */
export function repairedSql(g: string, fam: Family | null): string {
  return keptMulti(g, fam === 'line' || fam === 'polygon' ? `CollectionExtract(ST_MakeValid(${g}), ${familyCode[fam]})` : `ST_MakeValid(${g})`);
}

/** `result` (of the kind of `g`) made multi when `g` is: the type a multi layer declares stays its features' type. */
export function keptMulti(g: string, result: string): string {
  return `(CASE WHEN GeometryType(${g}) LIKE 'MULTI%' THEN CastToMulti(${result}) ELSE ${result} END)`;
}

/**
 * The geometry itself when valid (or null), else repaired; one no repair answers anything for
 * (a polygon collapsed to a line, kept to polygons) stays as it was, for the check after the
 * write to report, rather than turn into a feature without geometry.
 */
export function validSql(g: string, fam: Family | null): string {
  // SpatiaLite's ST_MakeValid (RTTOPO's) can answer a stray point for a large polygon folded over
  // itself (Russia in EPSG:3031); a zero buffer then repairs it, as the geo step does.
  const zero = `ST_Buffer(${g}, 0)`;
  const buffered = fam === 'polygon' ? `(CASE WHEN ST_IsValid(${zero}) = 1 AND NOT ST_IsEmpty(${zero}) THEN ${keptMulti(g, zero)} END), ` : '';
  return `(CASE WHEN ${g} IS NULL OR ST_IsValid(${g}) = 1 THEN ${g} ELSE coalesce(${repairedSql(g, fam)}, ${buffered}${g}) END)`;
}

/**
 * Like withGeometry, for a call whose result can be invalid (a simplification that crosses
 * itself, a reprojection that folds a ring over the antimeridian): an invalid result is repaired,
 * keeping the layer's kind of geometry, and the written output is checked (checkValidity).
 */
export function withValidGeometry(rel: Relation, call: string, change: Partial<Relation> = {}): Compiled {
  return validated(withGeometry(rel, call, change).rel);
}

/** The relation with each invalid geometry repaired, to be checked once written. */
export function validated(rel: Relation): Compiled {
  const valid = validSql(geomOf(rel), rel.geom!.family);
  return { rel: { ...rel, sql: wrap(rel, selectAll(rel, new Map(), valid), '', true) }, checkValidity: true };
}
