import type { ColumnKind } from '../shared/sql/table-csv.js';
import type { ColumnInfo } from './client.js';

/*
 * Every statement the SQL Server connector sends, built from plain values so that each one is
 * unit-tested (sqlserver.unit.spec.ts) without a server. Identifiers are always bracket-quoted
 * (QUOTENAME's rule: `]` doubled), so reserved words, spaces and any case are kept; literals are
 * N'…' with `'` doubled. Geometries cross the wire as ISO WKB: read with AsBinaryZM() (Z and M
 * kept) and STSrid, written with geometry::STGeomFromWKB / geography::STGeomFromWKB.
 */

export const ident = (name: string) => `[${name.replace(/]/g, ']]')}]`;
export const qualified = (schema: string, table: string) => `${ident(schema)}.${ident(table)}`;
export const literal = (value: string) => `N'${value.replace(/'/g, "''")}'`;

export type SpatialType = 'geometry' | 'geography';

/** The SQL Server column types of the delivered layer's kinds but text. */
const columnTypes: Record<Exclude<ColumnKind, 'string'>, string> = {
  integer: 'BIGINT',
  // Declared widths are not kept: shapefiles often hold wider values than their DBF declares.
  real: 'FLOAT(53)',
  boolean: 'BIT',
  date: 'DATE',
  // UTC: GDAL's time zones are resolved to UTC before loading.
  datetime: 'DATETIME2(3)',
  time: 'TIME(3)',
  binary: 'VARBINARY(MAX)',
};

/** The SQL Server column type a kind of the delivered layer gets (`maxLength`: the longest string). */
export function columnType(kind: ColumnKind, maxLength = 0): string {
  // NVARCHAR holds any Unicode text; past 4000 characters it must be MAX.
  if (kind === 'string') return maxLength > 4000 ? 'NVARCHAR(MAX)' : 'NVARCHAR(4000)';
  return columnTypes[kind];
}

/** The kind of a result column, from tedious' metadata; null for geometry and geography. */
export function kindOfColumn(column: ColumnInfo): ColumnKind | null {
  const type = column.type.name.replace(/N$/, '');
  if (type === 'UDT') {
    const udt = column.udtInfo?.typeName.toLowerCase();
    return udt === 'geometry' || udt === 'geography' ? null : 'string';
  }
  if (/^(TinyInt|SmallInt|Int|BigInt)$/.test(type)) return 'integer';
  if (type === 'Bit') return 'boolean';
  if (/^(Float|Real|Money|SmallMoney)$/.test(type)) return 'real';
  // Whole numbers a 64-bit integer holds stay integers; other NUMERIC / DECIMAL become doubles.
  if (/^(Decimal|Numeric)$/.test(type)) return (column.scale ?? 0) === 0 && (column.precision ?? 38) <= 18 ? 'integer' : 'real';
  if (type === 'Date') return 'date';
  if (/^(DateTime|DateTime2|SmallDateTime|DateTimeOffset)$/.test(type)) return 'datetime';
  if (type === 'Time') return 'time';
  if (/^(Binary|VarBinary|Image)$/.test(type)) return 'binary';
  return 'string';
}

export const isSpatial = (column: ColumnInfo) => kindOfColumn(column) === null;

/**
 * The select-list entry of a column: geometries as ISO WKB with Z and M; other CLR types
 * (hierarchyid) and sql_variant / xml as text that the CSV carries.
 */
export function selectExpression(column: ColumnInfo, from: string): string {
  const c = `${from}.${ident(column.colName)}`;
  const type = column.type.name.replace(/N$/, '');
  if (type === 'UDT') return isSpatial(column) ? `${c}.AsBinaryZM() AS ${ident(column.colName)}` : `${c}.ToString() AS ${ident(column.colName)}`;
  if (type === 'Variant' || type === 'Xml') return `CAST(${c} AS NVARCHAR(MAX)) AS ${ident(column.colName)}`;
  return `${c} AS ${ident(column.colName)}`;
}

/** The largest cursor value as text that converts back to the column's type (ISO 8601 for dates). */
export function cursorMaxExpression(column: ColumnInfo, quoted: string): string {
  const type = column.type.name.replace(/N$/, '');
  if (/^(Date|DateTime|DateTime2|SmallDateTime|DateTimeOffset|Time)$/.test(type)) return `CONVERT(NVARCHAR(40), MAX(${quoted}), 126)`;
  if (/^(Float|Real)$/.test(type)) return `CONVERT(NVARCHAR(40), MAX(${quoted}), 3)`;
  return `CAST(MAX(${quoted}) AS NVARCHAR(4000))`;
}

/** The expression that turns a WKB column into the target's spatial type (geography: the left-hand rule fixed). */
export function fromWkb(spatial: SpatialType, wkb: string, srid: number): string {
  if (spatial === 'geometry') return `geometry::STGeomFromWKB(${wkb}, ${srid})`;
  // geography reads a ring's orientation as "interior on the left": a ring drawn the other way
  // (as shapefiles draw outer rings) would mean the rest of the globe, more than a hemisphere.
  return `CASE WHEN g.v.EnvelopeAngle() > 90 THEN g.v.ReorientObject() ELSE g.v END`;
}

export interface StageColumn {
  /** The name in the target (mapped: see sql-names). */
  name: string;
  kind: ColumnKind;
  maxLength: number;
}

/** The bulk-load table: the attributes as they are and the geometry as WKB. */
export function createLoadTable(schema: string, load: string, columns: StageColumn[], wkb: string | null): string {
  const defs = columns.map((c) => `${ident(c.name)} ${columnType(c.kind, c.maxLength)} NULL`);
  if (wkb) defs.push(`${ident(wkb)} VARBINARY(MAX) NULL`);
  return `CREATE TABLE ${qualified(schema, load)} (${defs.length ? defs.join(', ') : '[geoflow_empty] BIT NULL'})`;
}

/**
 * The staging table, as the target will be: a clustered integer key (a spatial index needs one),
 * the attributes, and the geometry in the database's own spatial type.
 */
export function createStageTable(
  schema: string,
  stage: string,
  tag: string,
  fid: string,
  columns: StageColumn[],
  geometry: { name: string; spatial: SpatialType } | null,
): string {
  const defs = [`${ident(fid)} INT IDENTITY(1,1) NOT NULL CONSTRAINT ${ident(`PK__geoflow_${tag}`)} PRIMARY KEY CLUSTERED`];
  defs.push(...columns.map((c) => `${ident(c.name)} ${columnType(c.kind, c.maxLength)} NULL`));
  if (geometry) defs.push(`${ident(geometry.name)} ${geometry.spatial} NULL`);
  return `CREATE TABLE ${qualified(schema, stage)} (${defs.join(', ')})`;
}

/** Fills the staging table from the load table in one set-based statement (the server parses the WKB). */
export function fillStage(
  schema: string,
  stage: string,
  load: string,
  columns: StageColumn[],
  geometry: { name: string; spatial: SpatialType; wkb: string; srid: number } | null,
): string {
  const names = columns.map((c) => ident(c.name));
  const into = [...names, ...(geometry ? [ident(geometry.name)] : [])];
  const select = [...names.map((n) => `l.${n}`), ...(geometry ? [fromWkb(geometry.spatial, `l.${ident(geometry.wkb)}`, geometry.srid)] : [])];
  const apply = geometry?.spatial === 'geography' ? ` CROSS APPLY (SELECT geography::STGeomFromWKB(l.${ident(geometry.wkb)}, ${geometry.srid}) AS v) g` : '';
  return `INSERT INTO ${qualified(schema, stage)} WITH (TABLOCK) (${into.join(', ')}) SELECT ${select.join(', ')} FROM ${qualified(schema, load)} l${apply}`;
}

/** A spatial index: geometry needs the data's bounds (padded so a single point has an area), geography does not. */
export function createSpatialIndex(
  schema: string,
  table: string,
  tag: string,
  column: string,
  spatial: SpatialType,
  bounds: { minX: number; minY: number; maxX: number; maxY: number } | null,
): string | null {
  const name = ident(`SIDX__geoflow_${tag}`);
  if (spatial === 'geography') return `CREATE SPATIAL INDEX ${name} ON ${qualified(schema, table)} (${ident(column)}) USING GEOGRAPHY_AUTO_GRID`;
  if (!bounds) return null;
  const padX = Math.max((bounds.maxX - bounds.minX) * 0.01, 1e-6);
  const padY = Math.max((bounds.maxY - bounds.minY) * 0.01, 1e-6);
  const box = [bounds.minX - padX, bounds.minY - padY, bounds.maxX + padX, bounds.maxY + padY].map((v) => String(v)).join(', ');
  return `CREATE SPATIAL INDEX ${name} ON ${qualified(schema, table)} (${ident(column)}) USING GEOMETRY_AUTO_GRID WITH (BOUNDING_BOX = (${box}))`;
}

/** The delivery ledger, created once per schema. */
export function createLedger(schema: string, ledger: string): string {
  return `IF OBJECT_ID(${literal(qualified(schema, ledger))}, N'U') IS NULL CREATE TABLE ${qualified(schema, ledger)} (delivery_id NVARCHAR(255) NOT NULL PRIMARY KEY, target_table NVARCHAR(128) NOT NULL, write_mode NVARCHAR(16) NOT NULL, rows_written BIGINT NOT NULL, delivered_at DATETIME2 NOT NULL DEFAULT SYSUTCDATETIME())`;
}

export const dropIfExists = (schema: string, table: string) => `DROP TABLE IF EXISTS ${qualified(schema, table)}`;

/** One change of a target at a time, held until the transaction ends. */
export const applock = `DECLARE @r INT; EXEC @r = sp_getapplock @Resource = @resource, @LockMode = 'Exclusive', @LockOwner = 'Transaction', @LockTimeout = 60000; IF @r < 0 THROW 51000, 'another delivery held the target for 60 s', 1;`;

/**
 * The swap of `replace`, run inside the delivery's transaction: the target renamed away, the
 * staging table renamed in its place, the old table's grants given to the new one, the old one
 * dropped. sp_rename takes a schema-modification lock that is held to the commit, so a reader
 * waits for the whole swap and then reads the new table: never an empty, missing or half table.
 */
export function swapStatements(schema: string, table: string, stage: string, old: string): string[] {
  return [
    `EXEC sp_rename @objname = ${literal(qualified(schema, table))}, @newname = ${literal(old)}, @objtype = 'OBJECT'`,
    `EXEC sp_rename @objname = ${literal(qualified(schema, stage))}, @newname = ${literal(table)}, @objtype = 'OBJECT'`,
  ];
}

/** The statement that first puts a staging table in place of a missing target (create, or replace/append of a new table). */
export const renameStatement = (schema: string, stage: string, table: string) =>
  `EXEC sp_rename @objname = ${literal(qualified(schema, stage))}, @newname = ${literal(table)}, @objtype = 'OBJECT'`;

/** The object-level grants and denies of a table, to give to the table that replaces it. */
export const grantsQuery = `SELECT p.state_desc, p.permission_name, USER_NAME(p.grantee_principal_id) AS grantee FROM sys.database_permissions p WHERE p.class = 1 AND p.major_id = OBJECT_ID(@object) AND p.minor_id = 0`;

export function grantStatement(state: string, permission: string, grantee: string, schema: string, table: string): string {
  const verb = state === 'DENY' ? 'DENY' : 'GRANT';
  return `${verb} ${permission} ON ${qualified(schema, table)} TO ${ident(grantee)}${state === 'GRANT_WITH_GRANT_OPTION' ? ' WITH GRANT OPTION' : ''}`;
}

/** Appends the staging rows into an existing target, columns matched by name. */
export function appendStatement(schema: string, table: string, stage: string, columns: string[]): string {
  const list = columns.map(ident).join(', ');
  return `INSERT INTO ${qualified(schema, table)} (${list}) SELECT ${list} FROM ${qualified(schema, stage)}`;
}

/** Schemas a user sees, without the system's and the fixed database roles' own. */
export const schemasQuery = `SELECT s.name FROM sys.schemas s WHERE s.name NOT IN ('sys', 'INFORMATION_SCHEMA', 'guest') AND s.name NOT LIKE 'db[_]%' ORDER BY s.name`;

/** Tables and views of a schema (not the service's own), with their first geometry or geography column. */
export const tablesQuery = `SELECT o.name, (SELECT TOP 1 t.name FROM sys.columns c JOIN sys.types t ON t.user_type_id = c.user_type_id
    WHERE c.object_id = o.object_id AND t.name IN ('geometry', 'geography') ORDER BY c.column_id) AS spatial
  FROM sys.objects o WHERE o.schema_id = SCHEMA_ID(@schema) AND o.type IN ('U', 'V') AND o.is_ms_shipped = 0 AND o.name NOT LIKE '[_]geoflow[_]%'
  ORDER BY o.name`;

/** The geometry or geography columns of one table, in column order. */
export const spatialColumnsQuery = `SELECT c.name, t.name AS type FROM sys.columns c JOIN sys.types t ON t.user_type_id = c.user_type_id
  WHERE c.object_id = OBJECT_ID(@object) AND t.name IN ('geometry', 'geography') ORDER BY c.column_id`;
