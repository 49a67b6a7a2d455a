import { familyCode, selectAll, wrap, type Compiled, type Family, type Relation } from '../relation.js';
import { quoteIdent } from '../sql-guard.js';

/* The SQL every geometry operation writes: the geometry column, and a relation with each geometry replaced. */

/** The geometry column of the relation, quoted. */
export const geomOf = (rel: Relation) => quoteIdent(rel.geomName);

/** An operation that replaces each geometry by `call(geometry)` and keeps everything else. */
export const withGeometry = (rel: Relation, call: string, change: Partial<Relation> = {}): Compiled => ({
  rel: { ...rel, ...change, sql: wrap(rel, selectAll(rel, new Map(), call)) },
});

/** A geometry repaired (ST_MakeValid), kept to the layer's kind: repair can turn a polygon into a polygon plus stray lines. */
export function repairedSql(g: string, fam: Family | null): string {
  return fam === 'line' || fam === 'polygon' ? `CollectionExtract(ST_MakeValid(${g}), ${familyCode[fam]})` : `ST_MakeValid(${g})`;
}

/**
 * Like withGeometry, for a call whose result can be invalid (a simplification that crosses
 * itself): an invalid result is repaired, keeping the layer's kind of geometry.
 */
export function withValidGeometry(rel: Relation, call: string, change: Partial<Relation> = {}): Compiled {
  const next = withGeometry(rel, call, change).rel;
  const g = geomOf(next);
  const valid = `CASE WHEN ${g} IS NULL OR ST_IsValid(${g}) = 1 THEN ${g} ELSE ${repairedSql(g, next.geom!.family)} END`;
  return { rel: { ...next, sql: wrap(next, selectAll(next, new Map(), valid)) } };
}
