import { z } from 'zod';
import { host, name, port, secret, username } from '../shared/fields.js';
import { sqlDestination, sqlSource } from '../shared/sql/definition.js';
import { probeTest } from '../shared/test-result.js';
import { defineConnector } from '../types.js';
import { classifyMysql, describeServer, triedOf, withConnection } from './client.js';
import { deliverMysql } from './deliver.js';
import { extractMysql, mysqlChanged } from './extract.js';

const configuration = z.strictObject({
  host,
  port: port(3306),
  database: name('Database name'),
  username,
  password: secret('Password'),
  ssl: z.boolean().default(false).describe("Require TLS, the certificate verified against the system's CAs (connection tests only: see the notes)"),
});

const source = sqlSource({ type: 'mysql', extract: extractMysql, changed: mysqlChanged });

const destination = sqlDestination({ upsert: true, deliver: deliverMysql });

export const mysql = defineConnector({
  type: 'mysql',
  label: 'MySQL / MariaDB',
  description: 'Tables of a MySQL or MariaDB database with spatial columns.',
  configuration,
  secrets: ['password'],
  example: { host: 'mysql.example.org', port: 3306, database: 'gis', username: 'loader', password: '…' },
  implemented: true,
  verifiedAgainst: 'real server in npm test: MariaDB 10.11 (Debian) started by the tests',
  notes: [
    "**Test** connects (mysql2) and reports the server version. Failures are classified by the server's error codes:",
    '`authentication_failed` (wrong password, unknown user), `not_found` (no such database), `permission_denied` (no',
    'privilege on the database), `tls_error` (`ssl: true` against a server without TLS), `unreachable`, `timeout`.',
    '',
    '**Import** (`source_resource`): `{"table": "parcels"}` (the string `"parcels"` means that) or `{"query": "SELECT …"}`',
    "(one SELECT; it is checked in a read-only transaction first and run as a subquery, so it cannot write). GDAL's MySQL",
    'driver reads it into one GeoPackage layer named after the table (`query` for a query). GDAL does not read the CRS of',
    'MariaDB columns: the SRID of the first geometry is read and assigned (SRID 0 means no CRS). With `cursor_column`, a',
    "Job's Run reads the rows above the largest value the previous Run read, up to the largest value at its start; the",
    'new largest value is kept as the Job\'s cursor (`{"column", "value"}`), and no newer rows skips the rest of the Run.',
    '',
    '**Deliver** (`destination_target`): `{"table": "parcels", "write_mode": "replace"}`. The output (one layer) is first',
    'loaded into a staging table `_geoflow_stage_…` (InnoDB), then: `replace` swaps it in with one atomic',
    '`RENAME TABLE target TO old, staging TO target` and drops the old table (readers see the old or the new table,',
    'never none; grants, which MySQL keeps by table name, still apply); `append` inserts the staging rows (columns matched',
    'by name; every output column must exist in the target) in one transaction that also records the delivery; a missing',
    'target is created; `create` fails with `target_exists` when the table exists. A failed load leaves the target',
    'untouched. `upsert` (with `upsert_keys`, optionally `delete_marker`) keeps one row per key: in one transaction with',
    'the ledger, staging rows whose marker is true (`true`, `t`, `1`, `yes`, `y`) delete the target rows with their key, the',
    'others update the rows with their key or are inserted (of several rows with one key, the last wins; a row without a',
    'key value fails the delivery with `invalid_data` before the target changes). A missing target is created from the',
    'rows not marked deleted, without the marker column (no unique index is added: MySQL indexes text columns by prefix',
    'only; add one yourself to enforce the keys). The Run records the rows inserted, updated and deleted (MySQL counts an',
    'updated row whose values did not change as not updated).',
    'Idempotent per delivery: appends and upserts record their id in `_geoflow_deliveries` in the same transaction; a',
    "replaced or created table carries the delivery's mark in its table comment, so a retry after the rename only records",
    'it. New tables get `geom` (with a spatial index when every feature has a geometry) and `ogc_fid` (`geometry` and `fid` when an attribute already has that name); a replaced table',
    "keeps its geometry column name; field names are kept (quoted), text is utf8mb4; a new table's numbers are DOUBLE and its text TEXT (declared widths are not kept: shapefiles often hold wider values than they declare). On MariaDB GDAL keeps its own",
    '`geometry_columns` / `spatial_ref_sys` tables in the database, and writes its own ids there as SRIDs: the staged',
    "geometries are given the EPSG code of the output's CRS before the swap. GDAL inserts row by row, so large loads",
    'are slower than into PostGIS (about as fast as the server commits). Not verified against MySQL 8, whose geographic',
    'CRSs have latitude-first axis order.',
    '',
    "**Credentials and TLS**: mysql2 gets the password in memory; GDAL's ogr2ogr child gets it in the MYSQL_PWD variable of",
    "its own environment (built from nothing, readable only by the service's user), never on its command line or in a",
    "log. GDAL's MySQL driver has no TLS settings, so with `ssl: true` tests run over TLS but imports and deliveries are",
    'refused with `tls_error` rather than sent in the clear: use a trusted network or an SSH tunnel.',
  ].join('\n'),
  test(c, ctx) {
    return probeTest(
      triedOf(c),
      async () => {
        const version = await withConnection(c, ctx, async (connection) => {
          const [r] = await connection.query('SELECT VERSION() AS version');
          return String((r as { version: string }[])[0]!.version);
        });
        return { message: `Connected to ${/mariadb/i.test(version) ? 'MariaDB' : 'MySQL'} ${version} as ${c.username}${c.ssl ? ' over TLS' : ''}` };
      },
      (error) => classifyMysql(error, describeServer(c)),
    );
  },
  source,
  destination,
});
