import { z } from 'zod';
import { httpUrl, identifier, secret, username } from '../shared/fields.js';
import { sqlDestination, sqlSource } from '../shared/sql/definition.js';
import { ConnectorError } from '../../domain/transfers.js';
import { probeTest } from '../shared/test-result.js';
import { defineConnector } from '../types.js';
import { classifySnowflake, describeServer, triedOf, withSession } from './client.js';
import { deliverSnowflake, INTERNAL_PREFIX } from './deliver.js';
import { extractSnowflake, snowflakeChanged } from './extract.js';

const configuration = z.strictObject({
  account: z.string().min(1).max(255).describe('Account identifier, e.g. myorg-myaccount (or the legacy xy12345.eu-central-1)'),
  username,
  password: secret('Password (or use private_key)'),
  private_key: secret('Private key of key-pair authentication, PEM (PKCS#8, encrypted or not)'),
  private_key_passphrase: secret('Passphrase of an encrypted private_key'),
  warehouse: identifier("Warehouse that runs the statements (default: the user's default warehouse)").optional(),
  database: identifier('Database'),
  schema: identifier('Schema').default('PUBLIC'),
  role: identifier("Role (default: the user's default role)").optional(),
  access_url: httpUrl
    .optional()
    .describe('Address of the account when it is not https://ACCOUNT.snowflakecomputing.com (PrivateLink: https://ACCOUNT.privatelink.snowflakecomputing.com)'),
});

const source = sqlSource({
  type: 'snowflake',
  table: 'Table or view of the schema',
  geometryColumn: { what: 'GEOGRAPHY or GEOMETRY column to read as the geometry (default: the first one)', onQuery: true },
  query: 'One SELECT statement (run as a subquery, one statement per request)',
  extract: extractSnowflake,
  changed: snowflakeChanged,
});

const destination = sqlDestination({
  table: 'Table of the schema (created when missing)',
  upsert: false,
  extra: {
    spatial_type: z
      .enum(['auto', 'geography', 'geometry'])
      .default('auto')
      .describe(
        "Type of a new table's geometry column: auto (GEOGRAPHY for WGS 84 data, else GEOMETRY with the SRID), geography (reprojected to WGS 84) or geometry (SRID kept)",
      ),
  },
  deliver: deliverSnowflake,
});

export const snowflake = defineConnector({
  type: 'snowflake',
  label: 'Snowflake',
  description: 'Tables of a Snowflake database (GEOGRAPHY/GEOMETRY columns).',
  configuration,
  secrets: ['password', 'private_key', 'private_key_passphrase'],
  example: { account: 'myorg-myaccount', username: 'loader', password: '…', warehouse: 'LOAD_WH', database: 'GIS', schema: 'PUBLIC', role: 'LOADER' },
  implemented: true,
  verifiedAgainst:
    "emulator in npm test: fakesnow 0.12 (PyPI, DuckDB underneath) in server mode, driven through snowflake-sdk; fakesnow checks no password or key, has no GEOGRAPHY type and keeps no SRIDs, so authentication, Snowflake's spatial parsing and SRIDs are not verified (see the notes)",
  notes: [
    '**Credentials**: `username` with `password`, or key-pair authentication with `private_key` (PEM, PKCS#8; encrypted',
    'keys with `private_key_passphrase`): the driver signs a JWT with it (`SNOWFLAKE_JWT`); all three are secrets.',
    '`warehouse` runs the statements, `role` is used when given. **Test** opens a session and reports the version, role',
    "and warehouse. Failures are classified by Snowflake's error codes: `authentication_failed` (390100 wrong user or",
    'password, 390144 a key Snowflake does not know), `permission_denied` (role not granted, insufficient',
    'privileges), `not_found` (no such database, schema or warehouse), `unreachable`, `timeout`, `tls_error`.',
    '',
    '**Discover** lists the schemas of `database`; with `?schema=` its tables and views, each with `has_geometry` and',
    '`geometry_type` (`GEOGRAPHY` or `GEOMETRY`: Snowflake does not type them further).',
    '',
    '**Import** (`source_resource`): `{"table": "PARCELS"}` (the string `"PARCELS"` means that; names are used quoted, so',
    'write them in the case Snowflake stores them, upper case for unquoted names) or `{"query": "SELECT …"}` (run as a',
    'subquery, every request with `MULTI_STATEMENT_COUNT` 1 so that Snowflake refuses a second statement whatever the',
    'account sets), each with an optional `geometry_column`. The columns are described',
    'first; the geometry (the GEOGRAPHY or GEOMETRY column named, else the first) is read as WKT, in EPSG:4326 for',
    'GEOGRAPHY and in the SRID of its first value for GEOMETRY; other spatial columns stay WKT text. Rows are streamed',
    'by the driver. NUMBER with scale 0 → Integer64, other numbers → Real, DATE, TIME and TIMESTAMP_* keep their kind,',
    "VARIANT, OBJECT and ARRAY become JSON text. With `cursor_column`, a Job's Run reads the rows above the largest value",
    "the previous Run read (compared in the column's type), up to the largest value at its start; the cursor is kept as",
    '`{"column", "type", "value"}`.',
    '',
    '**Deliver** (`destination_target`): `{"table": "PARCELS", "write_mode": "replace", "spatial_type": "auto"}`. The',
    'output (one layer) is written as CSV (geometry as WKT), `PUT` to a temporary internal stage and loaded with one',
    '`COPY INTO` (no row inserts); `CREATE TABLE … AS SELECT TO_GEOGRAPHY(…)` (or `TO_GEOMETRY(…, srid)`) makes the',
    'new table. `replace` then runs `ALTER TABLE target SWAP WITH new` (one atomic change: readers see the old table or',
    'the new one, never none) and drops the old contents; `append` inserts by column name (every output column must',
    "exist in the target) in one transaction with the delivery's record; a missing target is created; `create` fails",
    'with `target_exists` when the table exists. `spatial_type` `auto` makes GEOGRAPHY for WGS 84 data and GEOMETRY',
    "with the layer's EPSG code as SRID otherwise; `geography` reprojects to WGS 84 (the result then says",
    '`"reprojected": {"from": …, "to": "EPSG:4326"}`); `geometry` keeps the SRID. Idempotent per delivery id:',
    "`_geoflow_deliveries` in the schema records every delivery; a swapped-in or renamed table carries the delivery's",
    'mark in its comment (DDL commits on its own), so a retry after the swap only records it.',
    '',
    '**Column mapping**: names are kept as given and always quoted (so they are case-sensitive; names longer than 255',
    'characters are cut, duplicates after that get `_2`); the geometry column is `geom` (`geometry` when an attribute',
    'has that name). Integer → NUMBER(38, 0), Real → FLOAT, String → VARCHAR, Date → DATE, DateTime → TIMESTAMP_NTZ,',
    'Time → TIME, Binary → VARCHAR (base64). Empty text loads as NULL (`EMPTY_FIELD_AS_NULL`).',
    '',
    '**Verified against fakesnow**, in server mode, through the same driver calls: sessions, statements, streamed',
    'results, PUT to an internal stage, COPY INTO, CREATE TABLE AS, ALTER TABLE … SWAP WITH, transactions, the',
    "information schema. The test setup adds what fakesnow's server lacks for the Node.js driver (JSON result",
    "rowsets, GCS stage details, SWAP WITH as renames in one transaction, spatial functions over DuckDB's GEOMETRY);",
    "fakesnow accepts any password or key, has no GEOGRAPHY type and keeps no SRID, so credentials checks, Snowflake's",
    'GEOGRAPHY/GEOMETRY parsing and SRIDs are verified only in the statements the connector sends, not in their effect.',
    '',
    "**Outbound policy**: every request to the account (`access_url`, else the account's URL: login, statements,",
    "result chunks) opens its socket to an address the policy allowed (the driver's own agents are pinned). Not",
    'covered, because the driver sends them with clients of its own and takes no agent for them: the upload of a `PUT`',
    'to the stage location the account names (S3, Azure or GCS, through their SDKs) and OCSP requests to the',
    'responders a certificate names. Operators who need those held too deny them at the network level.',
  ].join('\n'),
  test(c, ctx) {
    return probeTest(
      triedOf(c),
      async () => {
        const row = await withSession(
          c,
          ctx,
          async (s) => (await s.query('SELECT CURRENT_VERSION() AS V, CURRENT_ROLE() AS R, CURRENT_WAREHOUSE() AS W'))[0] ?? {},
        );
        return {
          message: `Connected to ${describeServer(c)} (Snowflake ${String(row.V ?? 'unknown')}) as ${c.username}, role ${String(row.R ?? 'default')}, warehouse ${String(row.W ?? 'none')}`,
        };
      },
      (error) => classifySnowflake(error, describeServer(c)),
    );
  },
  async discover(c, query, ctx) {
    return withSession(c, ctx, async (s) => {
      const schemas = (await s.query("SELECT SCHEMA_NAME FROM INFORMATION_SCHEMA.SCHEMATA WHERE SCHEMA_NAME <> 'INFORMATION_SCHEMA' ORDER BY SCHEMA_NAME")).map(
        (r) => String(r.SCHEMA_NAME),
      );
      const base = { host: c.access_url ? new URL(c.access_url).host : `${c.account}.snowflakecomputing.com`, database: c.database, schemas };
      if (query.schema === undefined) return base;
      if (!schemas.includes(query.schema))
        throw new ConnectorError('not_found', `Schema ${query.schema} does not exist in database ${c.database}`, {
          schema: query.schema,
          database: c.database,
        });
      const tables = await s.query('SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME', [query.schema]);
      const spatial = await s.query(
        "SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = ? AND DATA_TYPE IN ('GEOGRAPHY', 'GEOMETRY') ORDER BY TABLE_NAME, ORDINAL_POSITION",
        [query.schema],
      );
      const first = new Map<string, string>();
      for (const r of spatial) if (!first.has(String(r.TABLE_NAME))) first.set(String(r.TABLE_NAME), String(r.DATA_TYPE));
      return {
        ...base,
        schema: query.schema,
        tables: tables
          .map((r) => String(r.TABLE_NAME))
          .filter((t) => !t.startsWith(INTERNAL_PREFIX))
          .map((name) => ({ schema: query.schema!, name, has_geometry: first.has(name), geometry_type: first.get(name) ?? null })),
      };
    });
  },
  source,
  destination,
});
