import type pg from 'pg';
import type { Discovery } from '../types.js';
import { ConnectorError } from '../../domain/transfers.js';

/*
 * What a PostGIS database holds, read from its catalogues: the schemas a role may use, the tables
 * and views of one schema with their geometry, and a table's geometry column. Shared by
 * discovery, extract (geometry type of a table) and delivery (the target's geometry column).
 */

/** Tables the service itself keeps beside a delivery target: not shown by discovery. */
export { INTERNAL_PREFIX } from '../shared/sql/sql-delivery.js';

/** PostGIS type + coordinate dimension as WKT labels: MULTIPOLYGON, POINT Z, LINESTRING M. */
export function geometryLabel(type: string, dims: number): string {
  const upper = type.toUpperCase();
  // No base name ends in M, so a trailing M is PostGIS's "measured" suffix (POINTM).
  const measured = upper.endsWith('M');
  const base = measured ? upper.slice(0, -1) : upper;
  if (dims >= 4) return `${base} ZM`;
  if (measured) return `${base} M`;
  if (dims === 3) return `${base} Z`;
  return base;
}

export async function listSchemas(client: pg.Client): Promise<string[]> {
  const r = await client.query<{ name: string }>(
    `SELECT nspname AS name FROM pg_namespace
      WHERE nspname NOT IN ('pg_catalog', 'information_schema') AND nspname NOT LIKE 'pg\\_toast%' AND nspname NOT LIKE 'pg\\_temp\\_%'
        AND has_schema_privilege(oid, 'USAGE')
      ORDER BY nspname`,
  );
  return r.rows.map((row) => row.name);
}

export async function schemaExists(client: pg.Client, schema: string): Promise<boolean> {
  const r = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  return (r.rowCount ?? 0) > 0;
}

export async function requireSchema(client: pg.Client, schema: string, database: string): Promise<void> {
  if (!(await schemaExists(client, schema))) throw schemaMissing(schema, database);
}

export const schemaMissing = (schema: string, database: string) =>
  new ConnectorError('not_found', `Schema "${schema}" does not exist in database ${database}`, { schema, database });

interface GeometryColumn {
  column: string;
  type: string;
  dims: number;
  srid: number;
}

const hasPostgis = async (client: pg.Client) => ((await client.query("SELECT 1 FROM pg_extension WHERE extname = 'postgis'")).rowCount ?? 0) > 0;

/**
 * The query for the geometry and geography columns of a schema's relations (of one, when `table`
 * is given), first one per relation by column order. Parameters $1 and $2 by default; literals
 * when it travels with other statements in one round trip (a delivery's checks).
 */
export function geometryColumnsSql(schema = '$1', table = '$2::text'): string {
  return `SELECT g.f_table_name AS table, g.f_geometry_column AS column, g.type, g.coord_dimension AS dims, g.srid
       FROM (SELECT f_table_schema, f_table_name, f_geometry_column, type, coord_dimension, srid FROM geometry_columns
             UNION ALL
             SELECT f_table_schema, f_table_name, f_geography_column, type, coord_dimension, srid FROM geography_columns) g
       JOIN pg_namespace n ON n.nspname = g.f_table_schema
       JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = g.f_table_name
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = g.f_geometry_column
      WHERE g.f_table_schema = ${schema} AND (${table} IS NULL OR g.f_table_name = ${table})
      ORDER BY g.f_table_name, a.attnum`;
}

/** Rows of geometryColumnsSql, by relation. */
export function geometryColumnsOf(rows: { table: string; column: string; type: string; dims: number; srid: number }[]): Map<string, GeometryColumn> {
  const out = new Map<string, GeometryColumn>();
  for (const row of rows) if (!out.has(row.table)) out.set(row.table, { column: row.column, type: row.type, dims: Number(row.dims), srid: Number(row.srid) });
  return out;
}

/** Geometry and geography columns of a schema's relations (first one per relation, by column order). */
async function geometryColumns(client: pg.Client, schema: string, table?: string): Promise<Map<string, GeometryColumn>> {
  if (!(await hasPostgis(client))) return new Map();
  const r = await client.query<{ table: string; column: string; type: string; dims: number; srid: number }>(geometryColumnsSql(), [schema, table ?? null]);
  return geometryColumnsOf(r.rows);
}

export async function geometryColumnOf(client: pg.Client, schema: string, table: string): Promise<GeometryColumn | null> {
  return (await geometryColumns(client, schema, table)).get(table) ?? null;
}

/** Tables, partitioned tables, views, materialized views and foreign tables of a schema (not those of extensions). */
export async function listTables(client: pg.Client, schema: string): Promise<NonNullable<Discovery['tables']>> {
  const r = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
        AND c.relname NOT LIKE '\\_geoflow\\_%'
        -- PostGIS's own spatial_ref_sys, geometry_columns … belong to the extension, not to the user
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
      ORDER BY c.relname`,
    [schema],
  );
  const geometry = await geometryColumns(client, schema);
  return r.rows.map((row) => {
    const g = geometry.get(row.name);
    return { schema, name: row.name, has_geometry: Boolean(g), geometry_type: g ? geometryLabel(g.type, g.dims) : null };
  });
}
