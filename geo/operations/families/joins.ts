import { z } from 'zod';
import { findColumn, invalid, type AttachedLayer, type FieldSpec, type Relation } from '../relation.js';
import { quoteIdent, quoteString } from '../sql-guard.js';
import { define } from './definition.js';
import { geomOf } from './geometry-sql.js';
import { column, metresPer, otherLayer, units, workspaceId } from './parameters.js';

/* Operations that bring in another layer: its attributes by place or by key, or its features appended. */

export const spatialJoin = define({
  id: 'spatial_join',
  label: 'Spatial join',
  description:
    'Adds the attributes of the features of another layer that intersect, contain, lie within or are nearest to each feature; one row per feature (the first match) or per match.',
  category: 'geometry',
  requiresGeometry: true,
  parameters: z.object({
    join_layer: otherLayer,
    workspace_id: workspaceId,
    predicate: z
      .enum(['intersects', 'contains', 'within', 'nearest'])
      .default('intersects')
      .describe('contains: the feature contains the joined one; within: it lies within it'),
    columns: z.array(column).optional().describe('Columns of the joined layer to add; all by default'),
    one_to_many: z
      .enum(['first', 'all'])
      .default('first')
      .describe('first: one row per feature, with its first match (in the joined layer order; nearest: the nearest); all: one row per match'),
    keep_unmatched: z.boolean().default(true).describe('Keep features without a match (joined columns null)'),
    max_distance: z.number().finite().positive().optional().describe('nearest: farthest match, in `units`'),
    units,
    distance_column: z.string().min(1).max(255).nullable().default(null).describe('nearest: name of a column receiving the distance, in `units`'),
  }),
  example: { type: 'spatial_join', join_layer: 'districts', predicate: 'intersects', columns: ['district'] },
  async compile(p, given, ctx) {
    const {
      rel,
      layers: [other],
    } = await ctx.attach(given, [p.join_layer], p.workspace_id, 'spatial_join');
    if (!other) throw invalid('spatial_join: no join layer');
    if (!other.geom) throw invalid(`spatial_join: layer ${p.join_layer} has no geometries; use attribute_join for a table`);
    const added = joinedColumns(rel, other, p.columns, 'spatial_join');
    const g = `t.${geomOf(rel)}`;
    const jg = `j.${quoteIdent(other.geomName!)}`;
    const geographic = rel.crs?.geographic === true;
    const factor = p.units === 'source' ? 1 : metresPer[p.units]!;
    if (p.predicate === 'nearest' && p.units !== 'source' && !rel.crs)
      throw invalid('spatial_join: the layer has no CRS, so distances can only be in units "source"');
    // Distances in metres: on the ellipsoid for longitude/latitude, in the CRS unit otherwise.
    // (SpatiaLite's ellipsoidal distance to a line or polygon goes to its nearest vertex: measured
    // instead between the two closest points, found with longitudes scaled by the cosine of the
    // latitude, as the ground has them there.)
    const closest = (x: string, y: string, k: string) => `ScaleCoords(ST_ClosestPoint(ScaleCoords(${x}, ${k}, 1), ScaleCoords(${y}, ${k}, 1)), 1.0 / ${k}, 1)`;
    const metres = (a: string, b: string) => {
      const k = `max(Cos(Radians((MbrMinY(${a}) + MbrMaxY(${a})) / 2.0)), 0.01)`;
      return geographic
        ? `(CASE WHEN ST_Intersects(${a}, ${b}) = 1 THEN 0.0 ELSE ST_Distance(${closest(a, b, k)}, ${closest(b, a, k)}, 1) END)`
        : `(ST_Distance(${a}, ${b}) * ${rel.crs?.metresPerUnit ?? 1})`;
    };
    const distance = (a: string, b: string) => (p.units === 'source' ? `ST_Distance(${a}, ${b})` : `(${metres(a, b)} / ${factor})`);
    let on: string;
    let nearest: string | null = null;
    if (p.predicate === 'nearest') {
      // The nearest feature's id, found per row before the join.
      // The nearest is found per row in three passes, each materialised (a window function keeps
      // SQLite from folding them into one, which would repeat the work per candidate): the least
      // planar distance; on longitude/latitude, the least ellipsoidal distance among the
      // candidates no farther than that by the shrinking of a degree of longitude there; the
      // feature at that distance. (SQLite resolves no outer column in a subquery's ORDER BY.)
      const other_g = quoteIdent(other.geomName!);
      const gq = geomOf(rel);
      const stretch = (x: string) => `(1.0 / max(Cos(Radians(min(max(abs(MbrMaxY(${x})), abs(MbrMinY(${x}))), 89.0))), 0.01))`;
      const candidate = (row: string, y: string) =>
        geographic ? `ST_Distance(${row}.${gq}, ${y}) <= ${row}."_join_pmin" * ${stretch(`${row}.${gq}`)} + 1e-9` : '1';
      const first = `SELECT n.*, ROW_NUMBER() OVER () AS "_join_row", (SELECT min(ST_Distance(n.${gq}, b.${other_g})) FROM ${other.table} b WHERE b.${other_g} IS NOT NULL) AS "_join_pmin" FROM (${rel.sql}) n`;
      const second = `SELECT m.*, ROW_NUMBER() OVER () AS "_join_w2", (SELECT min(${distance(`m.${gq}`, `c.${other_g}`)}) FROM ${other.table} c WHERE c.${other_g} IS NOT NULL AND ${candidate('m', `c.${other_g}`)}) AS "_join_dmin" FROM (${first}) m`;
      nearest = `SELECT k.*, ROW_NUMBER() OVER () AS "_join_w3", (SELECT a.fid FROM ${other.table} a WHERE a.${other_g} IS NOT NULL AND ${candidate('k', `a.${other_g}`)} AND ${distance(`k.${gq}`, `a.${other_g}`)} = k."_join_dmin" ORDER BY a.fid LIMIT 1) AS "_join_near" FROM (${second}) k`;
      const within = p.max_distance === undefined ? '' : ` AND ${distance(g, jg)} <= ${p.max_distance}`;
      on = `j.fid = t."_join_near"${within}`;
    } else {
      const test = { intersects: ['MbrIntersects', 'ST_Intersects'], contains: ['MbrContains', 'ST_Contains'], within: ['MbrWithin', 'ST_Within'] }[
        p.predicate
      ];
      on = `${test[0]}(${g}, ${jg}) AND ${test[1]}(${g}, ${jg}) = 1`;
    }
    const distanceField = p.predicate === 'nearest' && p.distance_column ? p.distance_column : null;
    if (distanceField && [...rel.fields, ...added.map((a) => a.spec)].some((f) => f.name.toLowerCase() === distanceField.toLowerCase())) {
      throw invalid(`spatial_join: a column named ${JSON.stringify(distanceField)} already exists`);
    }
    const extra = distanceField ? [`CASE WHEN j.fid IS NULL THEN NULL ELSE ${distance(g, jg)} END AS ${quoteIdent(distanceField)}`] : [];
    const fields = [...rel.fields, ...added.map((a) => a.spec), ...(distanceField ? [{ name: distanceField, type: 'Real', width: 0, precision: 0 }] : [])];
    return { rel: { ...rel, fields, sql: joinSql(rel, other, added, on, extra, p.keep_unmatched, p.one_to_many, nearest) } };
  },
});

export const attributeJoin = define({
  id: 'attribute_join',
  label: 'Join attributes',
  description:
    'Adds the columns of a table (a layer of the same dataset, or of another Workspace: a CSV, a spreadsheet) to the rows whose key matches; one row per row (the first match) or per match.',
  category: 'attribute',
  requiresGeometry: false,
  parameters: z.object({
    join_layer: otherLayer,
    workspace_id: workspaceId,
    key: column.describe('Key column of this layer'),
    join_key: column.optional().describe('Key column of the joined table; the same name by default'),
    columns: z.array(column).optional().describe('Columns of the joined table to add; all but its key by default'),
    one_to_many: z.enum(['first', 'all']).default('first').describe('first: one row per row, with its first match; all: one row per match'),
    keep_unmatched: z.boolean().default(true).describe('Keep rows without a match (joined columns null)'),
  }),
  example: { type: 'attribute_join', join_layer: 'owners', key: 'owner_id' },
  async compile(p, given, ctx) {
    const key = findColumn(given, p.key, 'attribute_join');
    const {
      rel,
      layers: [other],
    } = await ctx.attach(given, [p.join_layer], p.workspace_id, 'attribute_join');
    if (!other) throw invalid('attribute_join: no join layer');
    const otherKey = findColumn({ ...rel, fields: other.fields }, p.join_key ?? p.key, 'attribute_join (join_key)');
    const chosen = p.columns ?? other.fields.filter((f) => f !== otherKey).map((f) => f.name);
    const added = joinedColumns(rel, other, chosen, 'attribute_join');
    // Keys of different kinds (a CSV's text against integers) compare as trimmed text.
    const numeric = (f: FieldSpec) => /^(Integer|Integer64|Real)$/.test(f.type);
    const a = `t.${quoteIdent(key.name)}`;
    const b = `j.${quoteIdent(otherKey.name)}`;
    const on = numeric(key) === numeric(otherKey) ? `${a} = ${b}` : `trim(CAST(${a} AS TEXT)) = trim(CAST(${b} AS TEXT))`;
    const fields = [...rel.fields, ...added.map((x) => x.spec)];
    return { rel: { ...rel, fields, sql: joinSql(rel, other, added, on, [], p.keep_unmatched, p.one_to_many) } };
  },
});

export const merge = define({
  id: 'merge',
  label: 'Merge layers',
  description:
    'Appends the features of other layers (of the same dataset, or of another Workspace) to this one: columns matched by name, missing ones null, types widened where they differ, geometries reprojected to this layer CRS.',
  category: 'attribute',
  requiresGeometry: false,
  parameters: z.object({
    merge_layers: z.array(otherLayer).min(1).max(50).describe('Layers whose features are appended, in order'),
    workspace_id: workspaceId,
    source_column: z.string().min(1).max(255).nullable().default(null).describe('Name of a column receiving each row’s layer name; none by default'),
  }),
  example: { type: 'merge', merge_layers: ['roads_north', 'roads_south'], source_column: 'source' },
  async compile(p, given, ctx) {
    const { rel, layers: others } = await ctx.attach(given, p.merge_layers, p.workspace_id, 'merge');
    // The columns: this layer's, then new ones in the order the others bring them.
    const fields: FieldSpec[] = rel.fields.map((f) => ({ ...f }));
    for (const other of others) {
      for (const f of other.fields) {
        const same = fields.find((x) => x.name.toLowerCase() === f.name.toLowerCase());
        if (same) Object.assign(same, { type: widerType(same.type, f.type), width: 0, precision: 0 });
        else fields.push({ ...f });
      }
    }
    if (p.source_column && fields.some((f) => f.name.toLowerCase() === p.source_column!.toLowerCase())) {
      throw invalid(`merge: a column named ${JSON.stringify(p.source_column)} already exists`);
    }
    const all = p.source_column ? [...fields, { name: p.source_column, type: 'String', width: 0, precision: 0 }] : fields;
    const g = geomOf(rel);
    const pick = (have: FieldSpec[], layerName: string, geometry: string | null) => [
      ...fields.map((f) => {
        const own = have.find((x) => x.name.toLowerCase() === f.name.toLowerCase());
        return `${own ? quoteIdent(own.name) : 'NULL'} AS ${quoteIdent(f.name)}`;
      }),
      ...(p.source_column ? [`${quoteString(layerName)} AS ${quoteIdent(p.source_column)}`] : []),
      ...(rel.geom ? [`${geometry ?? 'NULL'} AS ${g}`] : []),
    ];
    const parts = [
      `SELECT ${pick(rel.fields, ctx.layer, rel.geom ? g : null).join(', ')} FROM (${rel.sql})`,
      ...others.map((o) => `SELECT ${pick(o.fields, o.name, o.geomName ? quoteIdent(o.geomName) : null).join(', ')} FROM ${o.table}`),
    ];
    const families = new Set([rel.geom?.family, ...others.filter((o) => o.geom).map((o) => o.geom!.family)]);
    const geom = rel.geom ? { ...rel.geom, family: families.size === 1 ? rel.geom.family : null } : null;
    return { rel: { ...rel, fields: all, geom, sql: `SELECT * FROM (${parts.join(' UNION ALL ')})` } };
  },
});

/** The wider of two OGR field types, for columns merged from layers that disagree. */
function widerType(a: string, b: string): string {
  if (a === b) return a;
  const numeric = ['Integer', 'Integer64', 'Real'];
  if (numeric.includes(a) && numeric.includes(b)) return numeric[Math.max(numeric.indexOf(a), numeric.indexOf(b))]!;
  if ((a === 'Date' && b === 'DateTime') || (a === 'DateTime' && b === 'Date')) return 'DateTime';
  return 'String';
}

/** The columns a join adds: chosen (all by default), renamed with join_ where this layer has the name. */
function joinedColumns(rel: Relation, other: AttachedLayer, wanted: string[] | undefined, op: string): { from: string; spec: FieldSpec }[] {
  const chosen = wanted ? [...new Set(wanted.map((c) => findColumn({ ...rel, fields: other.fields }, c, `${op} (columns of ${other.name})`)))] : other.fields;
  const taken = new Set(rel.fields.map((f) => f.name.toLowerCase()));
  if (rel.geom) taken.add(rel.geomName.toLowerCase());
  return chosen.map((f) => {
    let name = f.name;
    for (let i = 1; taken.has(name.toLowerCase()); i++) name = `join_${f.name}${i > 1 ? `_${i}` : ''}`;
    taken.add(name.toLowerCase());
    return { from: f.name, spec: { ...f, name } };
  });
}

/**
 * This layer (t) joined with another (j) on a condition: every match, or the first per row (in the
 * other layer's order), unmatched rows kept or dropped. Rows keep their order.
 */
function joinSql(
  rel: Relation,
  other: AttachedLayer,
  added: { from: string; spec: FieldSpec }[],
  on: string,
  extra: string[],
  keep: boolean,
  policy: 'first' | 'all',
  /** The rows numbered (_join_row) with their nearest feature's fid (_join_near), for predicate nearest. */
  nearest: string | null = null,
): string {
  const own = rel.fields.map((f) => `t.${quoteIdent(f.name)} AS ${quoteIdent(f.name)}`);
  const theirs = added.map((a) => `j.${quoteIdent(a.from)} AS ${quoteIdent(a.spec.name)}`);
  const geometry = rel.geom ? [`t.${geomOf(rel)} AS ${geomOf(rel)}`] : [];
  const numbered = nearest ?? `SELECT n.*, ROW_NUMBER() OVER () AS "_join_row" FROM (${rel.sql}) n`;
  const joined = `SELECT ${[...own, ...theirs, ...extra, ...geometry, 't."_join_row" AS "_join_row"', 'j.fid AS "_join_fid"'].join(', ')} FROM (${numbered}) t ${
    keep ? 'LEFT JOIN' : 'JOIN'
  } ${other.table} j ON ${on}`;
  const names = [
    ...rel.fields.map((f) => f.name),
    ...added.map((a) => a.spec.name),
    ...extra.map((e) => /AS ("(?:[^"]|"")+")$/.exec(e)![1]!.slice(1, -1).replace(/""/g, '"')),
  ];
  const out = [...names.map((n) => quoteIdent(n)), ...(rel.geom ? [geomOf(rel)] : [])].join(', ');
  if (policy === 'all') return `SELECT ${out} FROM (${joined}) ORDER BY "_join_row", "_join_fid"`;
  const ranked = `SELECT *, ROW_NUMBER() OVER (PARTITION BY "_join_row" ORDER BY "_join_fid") AS "_join_rank" FROM (${joined})`;
  return `SELECT ${out} FROM (${ranked}) WHERE "_join_rank" = 1 ORDER BY "_join_row"`;
}
