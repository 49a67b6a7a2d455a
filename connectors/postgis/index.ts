import { z } from 'zod';
import { host, name, port, secret, username } from '../shared/fields.js';
import { sqlDestination, sqlSource } from '../shared/sql/definition.js';
import { probeTest } from '../shared/test-result.js';
import { defineConnector } from '../types.js';
import { listSchemas, listTables, requireSchema } from './catalog.js';
import { classifyPg, describeServer, triedOf, withClient } from './client.js';
import { deliverPostgis } from './deliver.js';
import { extractPostgis, postgisChanged } from './extract.js';
import { closeIdle } from './pool.js';

const configuration = z.strictObject({
  host,
  port: port(5432),
  database: name('Database name'),
  username,
  password: secret('Password'),
  ssl_mode: z
    .enum(['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'])
    .default('prefer')
    .describe(
      "libpq sslmode: prefer tries TLS and falls back to plain; require needs TLS; verify-ca / verify-full also check the server's certificate against the system's CAs",
    ),
});

const source = sqlSource({
  type: 'postgis',
  schema: { default: 'public' },
  query: 'One SELECT statement (run in a read-only session)',
  extract: extractPostgis,
  changed: postgisChanged,
});

const destination = sqlDestination({ schema: 'public', upsert: true, deliver: deliverPostgis });

export const postgis = defineConnector({
  type: 'postgis',
  label: 'PostGIS',
  description: 'Tables and views of a PostgreSQL database with PostGIS.',
  configuration,
  secrets: ['password'],
  example: { host: 'db.example.org', port: 5432, database: 'gis', username: 'loader', password: '…', ssl_mode: 'prefer' },
  implemented: true,
  verifiedAgainst: 'real server in npm test: PostgreSQL 15 + PostGIS 3 (Debian) started by the tests',
  notes: [
    '**Test** connects with the configuration and reports the server and PostGIS versions. Failures are classified by',
    'SQLSTATE: `authentication_failed` (wrong password, unknown role), `not_found` (no such database), `permission_denied`',
    '(no CONNECT privilege), `tls_error` (`ssl_mode` require or verify-* against a server without TLS, or a certificate',
    'that does not verify), `unreachable`, `timeout`.',
    '',
    '**Discover** (Sources and Destinations) lists the schemas the role may use; with `?schema=` the tables, views,',
    'materialized views and foreign tables of that schema, each with `has_geometry` and `geometry_type` (the first',
    'geometry or geography column, in WKT spelling such as `MULTIPOLYGON` or `POINT Z`; `GEOMETRY` for an untyped',
    'column). A missing schema is `postgis_failed` with `details.reason` `not_found`.',
    '',
    '**Import** (`source_resource`): `{"schema": "public", "table": "parcels"}` (the string `"parcels"` means that) or',
    '`{"query": "SELECT …"}`. The data is read by GDAL\'s PostgreSQL driver (ogr2ogr) into one GeoPackage layer named',
    'after the table (`query` for a query), keeping column names, types, the geometry type and the CRS. The session is',
    "read-only (`default_transaction_read_only`), and a query is first planned as one statement over PostgreSQL's extended",
    'protocol (which takes no second statement: `; COMMIT; …` cannot leave the read-only transaction), so it cannot write',
    "(docs/security.md says what still can: functions with their own connections, such as dblink). With `cursor_column`, a Job's Run reads the",
    'rows above the largest value the previous Run read, up to the largest value at the start of this Run; the new',
    'largest value is kept as the Job\'s cursor (`{"column", "value"}`). No newer rows: the Run skips its remaining',
    'steps. Rows whose cursor value is below one already read (a transaction that committed late) are not read. A',
    'GeoPackage layer holds one geometry column: of a table with several, the first is kept (select another with a query).',
    '',
    '**Deliver** (`destination_target`): `{"schema": "public", "table": "parcels", "write_mode": "replace"}`. The output',
    '(one layer; convert a single layer from a multi-layer dataset) is first loaded by ogr2ogr into a staging table',
    "`_geoflow_stage_…` in the target schema (a layer of at most 100,000 features and 64 MB by ogr2ogr's library",
    'call inside the worker, which saves starting the program, about 70 ms; `SVC_GDAL_IN_PROCESS=0` turns that off),',
    "its GiST spatial index built once the rows are in (GDAL's own index, made before the rows, took 2.3× as long for",
    'a million points), then the target changes in one short transaction:',
    "`replace` renames the old table away, renames the staging table in its place, grants it the old table's",
    'privileges and drops the old one; `append` inserts the staging rows (columns matched by name; every output column',
    "must exist in the target; geometries are reprojected to the target's SRID and promoted to multi when the target is",
    'multi); a missing target is created; `create` fails with `target_exists` when the table exists. Readers never see',
    'the target empty, missing or half-written, and a failed load leaves it untouched. Field names are kept as given',
    "(quoted), text stays UTF-8 (a new table's text columns are `varchar` without a width and its real numbers `double precision`: shapefiles often hold wider values than they declare), the CRS is kept, and the geometry column type follows the data: single and multi parts",
    "of one kind become the multi type, unrelated kinds a generic `geometry` column. A new table's geometry column is",
    '`geom` and its key `ogc_fid` (`geometry` and `fid` when an attribute already has that name); a replaced table keeps its geometry column name. Triggers, comments, row-level',
    'security and dependent views of a replaced table are not carried over (a view that depends on it stops the',
    'replace: use `append`). `upsert` (with `upsert_keys`, and optionally `delete_marker`) keeps one row per key: in',
    'the same transaction, the staging rows whose marker is true (`true`, `t`, `1`, `yes`, `y`) delete the target rows',
    'with their key, the rows whose key is in the target update every column of the output there (keys compared in the',
    "target column's type), the others are inserted; of several rows with one key in one output the last wins, and a row",
    'without a key value fails the delivery (`invalid_data`) before the target changes. A missing target is created from',
    'the rows not marked deleted, without the marker column, with a unique index on the keys. The Run records how many',
    'rows were inserted, updated and deleted. An incremental Job (a `cursor_column` Source) with `upsert` therefore keeps',
    'one row per key however often a row changes; `sync/reinitialize` rebuilds the table (replace) once.',
    'Each delivery records its id in `"<schema>"."_geoflow_deliveries"` in the same',
    'transaction, so a retried delivery never writes twice. The checks and the swap run on a connection a finished',
    'delivery into the same database left open, when there is one: each worker keeps at most 8 idle connections per',
    'database (`SVC_POSTGIS_IDLE_CONNECTIONS`, 0 for none), each closed after 10 s unused (a new connection costs the server a process, authentication and loading',
    "PostGIS's library); GDAL's connection for the load is always a new one.",
    'The role needs CREATE on the schema. A layer with geometry',
    'needs PostGIS in the target database: without it the delivery fails with `not_found` before anything is written',
    '(the connection test says so too); a table without geometry loads into plain PostgreSQL. A CRS without an EPSG',
    'code (a custom projection) needs a new row in `spatial_ref_sys`: a role that may not insert there gets',
    '`permission_denied` saying so (reproject the layer, or grant INSERT on `spatial_ref_sys`).',
    '',
    '**Credentials**: node-postgres gets the password in memory; GDAL (libpq) reads it from a password file (mode 0600,',
    "in a private folder of the transfer, removed afterwards) named by the connection string's `passfile`, so it is never",
    "on a command line, in the service's environment or in a log.",
  ].join('\n'),
  test(c, ctx) {
    return probeTest(
      triedOf(c),
      async () => {
        const found = await withClient(c, ctx, async (client) => {
          const r = await client.query<{ server: string; postgis: string | null; tls: boolean }>(
            `SELECT current_setting('server_version') AS server,
                    (SELECT extversion FROM pg_extension WHERE extname = 'postgis') AS postgis,
                    COALESCE((SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), false) AS tls`,
          );
          return r.rows[0]!;
        });
        const postgisNote = found.postgis ? `PostGIS ${found.postgis}` : 'PostGIS is not installed in this database (it can hold tables without geometry only)';
        return {
          message: `Connected to PostgreSQL ${found.server} as ${c.username}${found.tls ? ' over TLS' : ''}; ${postgisNote}`,
          tried: { tls: found.tls },
        };
      },
      (error) => classifyPg(error, describeServer(c)),
    );
  },
  async discover(c, query, ctx) {
    return withClient(c, ctx, async (client) => {
      const schemas = await listSchemas(client);
      if (query.schema === undefined) return { host: c.host, database: c.database, schemas };
      await requireSchema(client, query.schema, c.database);
      return { host: c.host, database: c.database, schemas, schema: query.schema, tables: await listTables(client, query.schema) };
    });
  },
  source,
  destination,
  closeIdle,
});
