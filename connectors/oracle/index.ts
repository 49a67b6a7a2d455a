import { z } from 'zod';
import { ConnectorError } from '../../domain/transfers.js';
import { host, port, secret, username } from '../shared/fields.js';
import { sqlDestination, sqlSource } from '../shared/sql/definition.js';
import { probeTest } from '../shared/test-result.js';
import { defineConnector } from '../types.js';
import { classifyOracle, describeServer, rows, triedOf, withConnection } from './client.js';
import { deliverOracle } from './deliver.js';
import { extractOracle, oracleChanged } from './extract.js';
import { schemasQuery, tablesQuery } from './sql.js';

const configuration = z.strictObject({
  host: host.optional(),
  port: port(1521),
  service_name: z.string().min(1).max(255).optional().describe('Service name (with host and port)'),
  connect_string: z
    .string()
    .min(1)
    .max(2000)
    // SQL*Plus's user/password@service would be stored and shown in plain text (this field is not secret), like a URL with credentials.
    .refine((s) => !s.includes('@'), 'put the user name and password in username and password, not in connect_string (no "user/password@")')
    .optional()
    .describe('Instead of host, port and service_name: an Easy Connect string such as db.example.org:1521/GISPDB or tcps://db.example.org:2484/GISPDB'),
  username,
  password: secret('Password'),
});

const source = sqlSource({
  type: 'oracle',
  schema: { optional: 'Owner (schema); the connecting user when left out' },
  table: 'Table, view or synonym (as stored: plain names are upper case)',
  geometryColumn: { what: 'SDO_GEOMETRY column (the first one when left out)' },
  query: 'One SELECT statement (run as a subquery)',
  extract: extractOracle,
  changed: oracleChanged,
});

const destination = sqlDestination({
  table: "Table in the connecting user's schema (as stored: plain names are upper case); created when missing",
  upsert: false,
  deliver: deliverOracle,
});

export const oracle = defineConnector({
  type: 'oracle',
  label: 'Oracle Spatial',
  description: 'Tables of an Oracle database with SDO_GEOMETRY columns.',
  configuration,
  secrets: ['password'],
  example: { host: 'ora.example.org', port: 1521, service_name: 'GISPDB', username: 'loader', password: '…' },
  implemented: true,
  verifiedAgainst:
    'no server here: no Oracle Database can run on this machine; the statements and the WKB → SDO_GEOMETRY conversion are unit-tested, a closed port and a silent one are tested through node-oracledb, and test/connectors/oracle.contract.spec.ts runs the PostGIS cases when SVC_TEST_ORACLE_URL names a server',
  notes: [
    '**Driver**: node-oracledb in Thin mode (pure JavaScript: no Instant Client, no wallet), Oracle Database 12.1 or',
    'later. Connect with `host`, `port` and `service_name`, or an Easy Connect `connect_string` (`tcps://…` for TLS,',
    "verified against the system's CAs). **Test** logs in and reports the server version within 10 s. Failures are",
    'classified by ORA- and NJS- codes: `authentication_failed` (ORA-01017, locked or expired accounts), `not_found`',
    '(ORA-12514 unknown service), `permission_denied` (ORA-01045 no CREATE SESSION), `unreachable` (refused, no',
    'listener), `tls_error`, `timeout`. Each session uses ISO 8601 date formats, `.` as decimal mark and UTC.',
    '',
    "**Discover** lists the owners whose tables the user may read (not Oracle's own); with `?schema=` (an owner) its",
    "tables, views and synonyms with `has_geometry` (an `SDO_GEOMETRY` column; for a synonym, its table's) and",
    '`geometry_type` `GEOMETRY`.',
    '',
    '**Import** (`source_resource`): `{"schema": "GIS", "table": "PARCELS"}` (the string `"PARCELS"` means that, in the',
    "connecting user's schema; names are as stored, so plain ones are upper case), with `geometry_column` to pick one",
    'of several, or `{"query": "SELECT …"}` (one statement per call by the driver, wrapped in a SELECT, read in a',
    "`SET TRANSACTION READ ONLY` transaction). The geometry comes as WKB from Oracle's `SDO_UTIL.TO_WKBGEOMETRY` (points,",
    "lines, polygons and their collections, 2D and 3D; arcs are refused by Oracle), the SRID from the first row (Oracle's",
    '8307, 8265 … read as EPSG:4326, 4269 …). Types: NUMBER with scale 0 up to 18 digits → Integer64, other NUMBER,',
    'FLOAT, BINARY_DOUBLE/FLOAT → Real, DATE and TIMESTAMP → DateTime (UTC), VARCHAR2, NVARCHAR2, CHAR, CLOB, INTERVAL →',
    "String, RAW and BLOB → hex text; other object columns are left out. With `cursor_column`, a Job's Run reads the",
    "rows above the largest value the previous Run read (`TO_CHAR` in the session's ISO formats), up to the largest",
    'value at its start.',
    '',
    '**Deliver** (`destination_target`): `{"table": "PARCELS", "write_mode": "replace"}`, in the connecting user\'s',
    "schema (Oracle lets only a table's owner write its `USER_SDO_GEOM_METADATA` row). Each delivery loads a new table",
    '`_GEOFLOW_V_<tag>` with `executeMany` (array binding, 5,000 rows a round trip, committed batch by batch with the',
    "`APPEND_VALUES` hint), its `SDO_GEOMETRY` values built from the output's WKB (SDO_GTYPE, SDO_ELEM_INFO and",
    'SDO_ORDINATES; exterior rings counter-clockwise, interior rings clockwise, as Oracle requires), then its',
    "`USER_SDO_GEOM_METADATA` row (the whole globe with 0.05 m tolerance for a geodetic SRID, the data's bounds with",
    '0.0005 otherwise) and a spatial index (`SPATIAL_INDEX_V2` from 12.2 on). The target name is a synonym for that',
    'table. `replace` runs `CREATE OR REPLACE SYNONYM target FOR _GEOFLOW_V_<tag>`: one dictionary change, since',
    "Oracle's DDL commits statement by statement and two tables cannot be renamed in one transaction; a query resolves",
    'the synonym when it is parsed and reads the old version or the new one, both complete and indexed, so a reader never',
    "sees the target empty, missing or half-written. The old version's grants are given to the new one first, and the",
    'old version is kept until the next replace (Oracle would let a DROP run under a query still reading it). `append`',
    'inserts the rows into the target (columns matched by name; geometries reprojected with `SDO_CS.TRANSFORM` when the',
    'SRIDs differ) and records the delivery in the same transaction; a missing target is created; `create` fails with',
    "`target_exists`. A target that is a table of the user's own can be appended to but not replaced (say so; rename it",
    'once). Each delivery is recorded in `_GEOFLOW_DELIVERIES`; a retry after the switch finds the synonym pointing at',
    'its own version and only records it.',
    '',
    '**Type and name mapping** (new tables): Integer/Integer64 → NUMBER(19), Real → BINARY_DOUBLE (declared NUMERIC',
    'widths are not kept), String → VARCHAR2(4000 BYTE), or CLOB when a value is longer than 4000 bytes (values up to',
    '32 KB), Boolean → NUMBER(1), Date → DATE, DateTime → TIMESTAMP(3) in UTC, Time → VARCHAR2(16), Binary → BLOB.',
    'Names are double-quoted, so reserved words (LEVEL, DATE, ORDER) and spaces stay; plain names',
    '(`[A-Za-z][A-Za-z0-9_$#]*`) are upper-cased so that they can be queried without quotes; longer than 128 bytes they',
    'are cut, and names equal without case get `_2`, `_3` …; the geometry column is `GEOM`.',
    '',
    '**Credentials**: user and password, held in memory by node-oracledb only; never in a connect string or a log.',
  ].join('\n'),
  test(c, ctx) {
    return probeTest(
      triedOf(c),
      async () => {
        const version = await withConnection(
          c,
          ctx,
          async (connection) =>
            connection.oracleServerVersionString ?? String((await rows(connection, 'SELECT banner FROM v$version WHERE ROWNUM = 1'))[0]?.[0] ?? ''),
        );
        return { message: `Connected to Oracle Database ${version} as ${c.username}` };
      },
      (error) => classifyOracle(error, describeServer(c)),
    );
  },
  async discover(c, q, ctx) {
    return withConnection(c, ctx, async (connection) => {
      const schemas = (await rows(connection, schemasQuery)).map((r) => String(r[0]));
      const database = c.service_name ?? c.connect_string ?? '';
      const host = c.host ?? c.connect_string ?? '';
      if (q.schema === undefined) return { host, database, schemas };
      if (!(await rows(connection, 'SELECT 1 FROM all_users WHERE username = :u', { u: q.schema })).length) {
        throw new ConnectorError('not_found', `Schema "${q.schema}" does not exist in database ${database}`, { schema: q.schema, database });
      }
      const tables = (await rows(connection, tablesQuery, { owner: q.schema })).map((r) => ({
        schema: q.schema!,
        name: String(r[0]),
        has_geometry: r[1] !== null,
        geometry_type: r[1] !== null ? 'GEOMETRY' : null,
      }));
      return { host, database, schemas, schema: q.schema, tables };
    });
  },
  source,
  destination,
});
