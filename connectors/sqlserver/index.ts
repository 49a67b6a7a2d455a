import { z } from 'zod';
import { ConnectorError } from '../../domain/transfers.js';
import { host, name, port, secret, username } from '../shared/fields.js';
import { sqlDestination, sqlSource } from '../shared/sql/definition.js';
import { probeTest } from '../shared/test-result.js';
import { defineConnector } from '../types.js';
import { classifySqlServer, describeServer, query, triedOf, withConnection } from './client.js';
import { deliverSqlServer } from './deliver.js';
import { extractSqlServer, sqlServerChanged } from './extract.js';
import { schemasQuery, tablesQuery } from './sql.js';

const configuration = z.strictObject({
  host,
  port: port(1433),
  database: name('Database name'),
  username,
  password: secret('Password'),
  encrypt: z.boolean().default(true).describe('Encrypt the connection (TLS); on by default'),
  trust_server_certificate: z
    .boolean()
    .default(false)
    .describe("Accept a server certificate that does not verify against the system's CAs (self-signed): opt-in"),
});

const source = sqlSource({
  type: 'sqlserver',
  schema: { default: 'dbo' },
  geometryColumn: { what: 'Geometry or geography column (the first one when left out)' },
  query: 'One SELECT statement (every column named; run as a subquery: no ;, no GO, no CTE, parentheses balanced)',
  extract: extractSqlServer,
  changed: sqlServerChanged,
});

const destination = sqlDestination({
  schema: 'dbo',
  upsert: false,
  extra: {
    spatial_type: z
      .enum(['geometry', 'geography'])
      .default('geometry')
      .describe('Column type of a new table: geometry (planar, any SRID) or geography (WGS 84: the output is reprojected)'),
  },
  deliver: deliverSqlServer,
});

export const sqlserver = defineConnector({
  type: 'sqlserver',
  label: 'Microsoft SQL Server',
  description: 'Tables of a SQL Server or Azure SQL database (geometry or geography columns).',
  configuration,
  secrets: ['password'],
  example: { host: 'sql.example.org', port: 1433, database: 'gis', username: 'loader', password: '…', encrypt: true, trust_server_certificate: false },
  implemented: true,
  verifiedAgainst:
    'no server here: no SQL Server can run on this machine; the statements are unit-tested, a closed port and a silent one are tested through tedious, and test/connectors/sqlserver.contract.spec.ts runs the PostGIS cases when SVC_TEST_SQLSERVER_URL names a server',
  notes: [
    "**Driver**: tedious (Microsoft's TDS client for Node), SQL Server 2016 or later and Azure SQL. **Test** logs in and",
    "reports the server version within 10 s. Failures are classified by SQL Server's error numbers and tedious' codes:",
    '`authentication_failed` (18456 login failed), `not_found` (4060 no such database), `permission_denied` (916, 229),',
    '`tls_error` (a certificate that does not verify: set `trust_server_certificate` only for a server you trust),',
    '`unreachable` (refused, no route), `timeout`.',
    '',
    '**Discover** lists the schemas (not `sys`, `INFORMATION_SCHEMA`, `guest` or the `db_*` role schemas); with `?schema=`',
    'its tables and views with `has_geometry` (a `geometry` or `geography` column) and `geometry_type` `GEOMETRY` (SQL',
    "Server's spatial columns hold any geometry type).",
    '',
    '**Import** (`source_resource`): `{"schema": "dbo", "table": "parcels"}` (the string `"parcels"` means that), with',
    '`geometry_column` to pick one of several, or `{"query": "SELECT …"}` (run as a subquery: every column named, no',
    'ORDER BY without TOP, no CTE). The query is read as SQL Server reads it before anything is sent: outside strings,',
    'quoted names and comments it must hold no `;` and no `GO` line, and its parentheses must balance, so it cannot close',
    'the subquery and add statements to the batch (`invalid_data` otherwise); it then runs in a transaction that is',
    'rolled back. The geometry comes as ISO WKB with Z and M (`AsBinaryZM()`), its SRID from the first row that',
    'has one (`STSrid`); other spatial columns are left out. Types: integers and NUMERIC/DECIMAL up to 18 digits without',
    'scale → Integer64; wider or scaled NUMERIC, MONEY, FLOAT, REAL → Real; BIT → Boolean; DATE → Date; DATETIME,',
    'DATETIME2, SMALLDATETIME, DATETIMEOFFSET → DateTime (UTC); TIME → Time; binary types → hex text; hierarchyid,',
    'xml, sql_variant and text types → String. The rows stream into one GeoPackage layer named after the table (`query`',
    "for a query); the layer's geometry type is the one the rows have (POLYGON and MULTIPOLYGON → MULTIPOLYGON).",
    "With `cursor_column`, a Job's Run reads the rows above the largest value the previous Run read (kept as ISO 8601",
    'for dates), up to the largest value at its start.',
    '',
    '**Deliver** (`destination_target`): `{"schema": "dbo", "table": "parcels", "write_mode": "replace", "spatial_type":',
    '"geometry"}`. The output is bulk-loaded with TDS bulk insert (tedious\' BulkLoad, as bcp does) into a load table',
    '(geometry as WKB), turned into a staging table by one set-based INSERT with `geometry::STGeomFromWKB(wkb, srid)`',
    '(or `geography::STGeomFromWKB`, rings reoriented with `ReorientObject()` when drawn against the left-hand rule),',
    "with a clustered `fid` key and a spatial index (`GEOMETRY_AUTO_GRID` over the data's bounds, or",
    '`GEOGRAPHY_AUTO_GRID`). Then one transaction: `replace` runs `sp_rename` target → `_geoflow_old_…`, staging →',
    "target, grants the old table's object permissions to the new one and drops the old one; `append` inserts the",
    "staging rows (columns matched by name; the target's SRID must match: SQL Server cannot reproject); a missing target",
    "is created; `create` fails with `target_exists`. SQL Server's DDL is transactional and `sp_rename` holds a",
    'schema-modification lock to the commit, so a reader waits for the swap and then reads the new table: it never sees',
    'the target empty, missing or half-written. Each delivery records its id in `[schema].[_geoflow_deliveries]` in the',
    'same transaction (a retried delivery writes nothing twice); one delivery per target at a time (`sp_getapplock`).',
    '`spatial_type: "geography"` reprojects the output to WGS 84 (EPSG:4326) and says so in the result',
    '(`reprojected_to`); a replaced or appended table keeps its own spatial type and geometry column name.',
    '',
    '**Type and name mapping** (new tables): Integer/Integer64 → BIGINT, Real → FLOAT(53) (declared NUMERIC widths are',
    'not kept: shapefiles often hold wider values than they declare), String → NVARCHAR(4000) or NVARCHAR(MAX) when a',
    'value is longer, Boolean → BIT, Date → DATE, DateTime → DATETIME2(3) in UTC, Time → TIME(3), Binary →',
    'VARBINARY(MAX). Names are kept as given and bracket-quoted (reserved words, spaces and case stay); longer than 128',
    'characters they are cut, and names equal without case get `_2`, `_3` …',
    '',
    '**Credentials and TLS**: user and password (SQL Server authentication), held in memory by tedious only. TLS is on',
    "(`encrypt: true`) and the certificate is verified against the system's CAs; `trust_server_certificate: true` accepts",
    'a self-signed one (opt-in).',
  ].join('\n'),
  test(c, ctx) {
    return probeTest(
      triedOf(c),
      async () => {
        const version = await withConnection(c, ctx, async (connection) =>
          String((await query(connection, "SELECT CAST(SERVERPROPERTY('ProductVersion') AS NVARCHAR(128))")).rows[0]![0]),
        );
        return { message: `Connected to SQL Server ${version} as ${c.username}${c.encrypt ? ' over TLS' : ''}`, tried: { tls: c.encrypt } };
      },
      (error) => classifySqlServer(error, describeServer(c)),
    );
  },
  async discover(c, q, ctx) {
    return withConnection(c, ctx, async (connection) => {
      const schemas = (await query(connection, schemasQuery)).rows.map((r) => String(r[0]));
      if (q.schema === undefined) return { host: c.host, database: c.database, schemas };
      if ((await query(connection, 'SELECT SCHEMA_ID(@s)', { s: q.schema })).rows[0]?.[0] === null) {
        throw new ConnectorError('not_found', `Schema "${q.schema}" does not exist in database ${c.database}`, { schema: q.schema, database: c.database });
      }
      const tables = (await query(connection, tablesQuery, { schema: q.schema })).rows.map((r) => ({
        schema: q.schema!,
        name: String(r[0]),
        has_geometry: r[1] !== null,
        geometry_type: r[1] !== null ? 'GEOMETRY' : null,
      }));
      return { host: c.host, database: c.database, schemas, schema: q.schema, tables };
    });
  },
  source,
  destination,
});
