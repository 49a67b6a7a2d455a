import type { ColumnKind } from '../shared/sql/table-csv.js';

/*
 * Every statement the Oracle connector sends, built from plain values and unit-tested
 * (oracle.unit.spec.ts) without a server. Identifiers are always double-quoted (`"` doubled), so
 * reserved words (LEVEL, DATE, ORDER …), spaces and case are kept exactly; literals are '…' with
 * `'` doubled.
 */

export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
export const qualified = (owner: string | undefined, table: string) => (owner ? `${ident(owner)}.${ident(table)}` : ident(table));
export const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** Tables of one delivered version, which the target's synonym points to: `_GEOFLOW_V_<tag>`. */
export const VERSION_PREFIX = '_GEOFLOW_V_';
export const versionTable = (tag: string) => `${VERSION_PREFIX}${tag.toUpperCase()}`;
export const LEDGER = '_GEOFLOW_DELIVERIES';

/** Oracle's column types of the delivered layer's kinds but text. */
const columnTypes: Record<Exclude<ColumnKind, 'string'>, string> = {
  integer: 'NUMBER(19)',
  // Declared widths are not kept: shapefiles often hold wider values than they declare.
  real: 'BINARY_DOUBLE',
  boolean: 'NUMBER(1)',
  date: 'DATE',
  datetime: 'TIMESTAMP(3)',
  time: 'VARCHAR2(16 BYTE)',
  binary: 'BLOB',
};

/** Oracle's column type for a kind of the delivered layer (`maxBytes`: the longest string in UTF-8). */
export function columnType(kind: ColumnKind, maxBytes = 0): string {
  // VARCHAR2 holds 4000 bytes everywhere (32767 only with MAX_STRING_SIZE=EXTENDED): longer text is a CLOB.
  if (kind === 'string') return maxBytes > 4000 ? 'CLOB' : 'VARCHAR2(4000 BYTE)';
  return columnTypes[kind];
}

/** The kind of a result column from node-oracledb's metadata; null for SDO_GEOMETRY, undefined for what cannot travel. */
export function kindOfColumn(meta: {
  dbTypeName?: string | undefined;
  precision?: number | undefined;
  scale?: number | undefined;
}): ColumnKind | null | undefined {
  const type = (meta.dbTypeName ?? '').toUpperCase();
  if (/SDO_GEOMETRY$/.test(type)) return null;
  if (type === 'NUMBER') return (meta.scale ?? -127) === 0 && (meta.precision ?? 0) > 0 && (meta.precision ?? 0) <= 18 ? 'integer' : 'real';
  if (/^(FLOAT|BINARY_FLOAT|BINARY_DOUBLE)$/.test(type)) return 'real';
  if (type === 'DATE' || type.startsWith('TIMESTAMP')) return 'datetime';
  if (/^(RAW|LONG RAW|BLOB)$/.test(type)) return 'binary';
  if (/^(VARCHAR2|NVARCHAR2|CHAR|NCHAR|CLOB|NCLOB|LONG|ROWID|UROWID)$/.test(type) || type.startsWith('INTERVAL')) return 'string';
  if (type === 'BOOLEAN') return 'boolean';
  return undefined;
}

/** The select-list entry of a column: SDO_GEOMETRY as WKB (Oracle's own SDO_UTIL.TO_WKBGEOMETRY). */
export const selectExpression = (name: string, from: string, spatial: boolean) =>
  spatial ? `SDO_UTIL.TO_WKBGEOMETRY(${from}.${ident(name)}) AS ${ident(name)}` : `${from}.${ident(name)}`;

/** The largest cursor value as text in the session's ISO formats. */
export const cursorMaxExpression = (quoted: string) => `TO_CHAR(MAX(${quoted}))`;

export interface StageColumn {
  name: string;
  kind: ColumnKind;
  maxBytes: number;
}

export function createTable(table: string, columns: StageColumn[], geometry: string | null): string {
  const defs = columns.map((c) => `${ident(c.name)} ${columnType(c.kind, c.maxBytes)}`);
  if (geometry) defs.push(`${ident(geometry)} MDSYS.SDO_GEOMETRY`);
  return `CREATE TABLE ${ident(table)} (${defs.length ? defs.join(', ') : '"GEOFLOW_EMPTY" NUMBER(1)'})`;
}

/** The INSERT that executeMany runs for a batch: dates bound as ISO text and converted by the server. */
export function insertStatement(table: string, columns: StageColumn[], geometry: string | null): string {
  const names = [...columns.map((c) => ident(c.name)), ...(geometry ? [ident(geometry)] : [])];
  const values = columns.map((c, i) => {
    const bind = `:${i + 1}`;
    if (c.kind === 'date') return `TO_DATE(${bind}, 'YYYY-MM-DD')`;
    if (c.kind === 'datetime') return `TO_TIMESTAMP(${bind}, 'YYYY-MM-DD"T"HH24:MI:SS.FF3')`;
    return bind;
  });
  if (geometry) values.push(`:${columns.length + 1}`);
  return `INSERT /*+ APPEND_VALUES */ INTO ${ident(table)} (${names.join(', ')}) VALUES (${values.join(', ')})`;
}

export interface Bounds {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

/** The spatial metadata row: geodetic SRIDs get the whole globe (tolerance in metres), others the data's padded bounds. */
export function geomMetadataInsert(table: string, column: string, srid: number | null, geodetic: boolean, bounds: Bounds | null, z: boolean): string {
  let dims: string[];
  if (geodetic) {
    dims = [`SDO_DIM_ELEMENT('X', -180, 180, 0.05)`, `SDO_DIM_ELEMENT('Y', -90, 90, 0.05)`];
  } else {
    const b = bounds ?? { minX: -1e7, minY: -1e7, maxX: 1e7, maxY: 1e7 };
    const padX = Math.max((b.maxX - b.minX) * 0.01, 1);
    const padY = Math.max((b.maxY - b.minY) * 0.01, 1);
    dims = [`SDO_DIM_ELEMENT('X', ${b.minX - padX}, ${b.maxX + padX}, 0.0005)`, `SDO_DIM_ELEMENT('Y', ${b.minY - padY}, ${b.maxY + padY}, 0.0005)`];
  }
  if (z) dims.push(`SDO_DIM_ELEMENT('Z', -100000, 100000, 0.0005)`);
  return `INSERT INTO USER_SDO_GEOM_METADATA (TABLE_NAME, COLUMN_NAME, DIMINFO, SRID) VALUES (${literal(table)}, ${literal(column)}, SDO_DIM_ARRAY(${dims.join(', ')}), ${srid ?? 'NULL'})`;
}

/** The spatial index (SPATIAL_INDEX_V2 from 12.2 on, as Oracle recommends; the classic one before). */
export function spatialIndex(table: string, column: string, tag: string, serverVersion: number): string {
  const indexType = serverVersion >= 1202000000 ? 'MDSYS.SPATIAL_INDEX_V2' : 'MDSYS.SPATIAL_INDEX';
  return `CREATE INDEX ${ident(`_GEOFLOW_SX_${tag.toUpperCase()}`)} ON ${ident(table)} (${ident(column)}) INDEXTYPE IS ${indexType}`;
}

/**
 * The switch of `replace`: one DDL statement that points the target's synonym at the new version.
 * A query resolves the synonym when it is parsed, so it reads the old version or the new one,
 * each complete and indexed; the old version is kept until the next replace, so a query still
 * running on it finishes.
 */
export const switchSynonym = (synonym: string, table: string) => `CREATE OR REPLACE SYNONYM ${ident(synonym)} FOR ${ident(table)}`;

export const createLedger = `CREATE TABLE ${ident(LEDGER)} (DELIVERY_ID VARCHAR2(255) PRIMARY KEY, TARGET_TABLE VARCHAR2(128) NOT NULL, WRITE_MODE VARCHAR2(16) NOT NULL, ROWS_WRITTEN NUMBER(19) NOT NULL, DELIVERED_AT TIMESTAMP DEFAULT SYSTIMESTAMP NOT NULL)`;

/** Appends the new version's rows into the target (through its synonym or as a table), reprojecting when the SRIDs differ. */
export function appendStatement(target: string, version: string, columns: string[], geometry: { name: string; transformTo: number | null } | null): string {
  const names = [...columns, ...(geometry ? [geometry.name] : [])].map(ident);
  const select = [
    ...columns.map(ident),
    ...(geometry ? [geometry.transformTo ? `SDO_CS.TRANSFORM(${ident(geometry.name)}, ${geometry.transformTo})` : ident(geometry.name)] : []),
  ];
  return `INSERT INTO ${ident(target)} (${names.join(', ')}) SELECT ${select.join(', ')} FROM ${ident(version)}`;
}

export const dropVersion = (table: string) => [
  `DROP TABLE ${ident(table)} CASCADE CONSTRAINTS PURGE`,
  `DELETE FROM USER_SDO_GEOM_METADATA WHERE TABLE_NAME = ${literal(table)}`,
];

/** Owners whose tables the user may read (schemas), without Oracle's own. */
export const schemasQuery = `SELECT DISTINCT owner FROM all_tables WHERE owner NOT IN (SELECT username FROM all_users WHERE oracle_maintained = 'Y') ORDER BY owner`;

/** Tables, views and the target synonyms of an owner, with their first SDO_GEOMETRY column (a synonym: its table's). */
export const tablesQuery = `SELECT o.object_name,
    (SELECT MIN(c.column_name) KEEP (DENSE_RANK FIRST ORDER BY c.column_id) FROM all_tab_columns c
      WHERE c.owner = NVL(s.table_owner, o.owner) AND c.table_name = NVL(s.table_name, o.object_name) AND c.data_type = 'SDO_GEOMETRY') AS geometry
  FROM all_objects o LEFT JOIN all_synonyms s ON o.object_type = 'SYNONYM' AND s.owner = o.owner AND s.synonym_name = o.object_name
  WHERE o.owner = :owner AND o.object_type IN ('TABLE', 'VIEW', 'MATERIALIZED VIEW', 'SYNONYM') AND o.object_name NOT LIKE '\\_GEOFLOW\\_%' ESCAPE '\\'
    AND (o.object_type <> 'SYNONYM' OR s.table_name IS NOT NULL)
  ORDER BY o.object_name`;
