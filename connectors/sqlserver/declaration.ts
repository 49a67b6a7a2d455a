import { cursorCheckNote, cursorCheckUnsupported } from '../shared/sql/sql-cursor.js';
import { z } from 'zod';
import { host, identifier, name, port, secret, username, writeMode } from '../shared/fields.js';
import { cursorColumn, cursorIncrementalNote, selectQuery } from '../shared/sql/sql.js';
import { declareConnector } from '../types.js';

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

/** What the registry knows of sqlserver without loading its behaviour (index.ts) or its SDK. */
export const sqlserverDeclaration = declareConnector({
  type: 'sqlserver',
  label: 'Microsoft SQL Server',
  description: 'Tables of a SQL Server or Azure SQL database (geometry or geography columns).',
  configuration,
  secrets: ['password'],
  example: { host: 'sql.example.org', port: 1433, database: 'gis', username: 'loader', password: '…', encrypt: true, trust_server_certificate: false },
  implemented: true,
  verifiedAgainst:
    'no server here: no SQL Server can run on this machine; the statements are unit-tested, a closed port and a silent one are tested through tedious, and test/connectors/sqlserver.contract.spec.ts runs the PostGIS cases when SVC_TEST_SQLSERVER_URL names a server',
  discovers: true,
  source: {
    resource: z.union([
      z.strictObject({
        schema: identifier('Schema').default('dbo'),
        table: identifier('Table or view'),
        geometry_column: identifier('Geometry or geography column (the first one when left out)').optional(),
        cursor_column: cursorColumn(),
      }),
      selectQuery('One SELECT statement (every column named; run as a subquery: no ;, no GO, no CTE, parentheses balanced)'),
    ]),
    shorthand: 'table',
    resourceRequired: true,
    importable: true,
    incremental: true,
    incrementalNote: cursorIncrementalNote,
    changeCheck: {
      note: cursorCheckNote,
      unsupported: cursorCheckUnsupported('sqlserver'),
    },
  },
  destination: {
    target: z.strictObject({
      schema: identifier('Schema (must exist)').default('dbo'),
      table: identifier('Table (created when missing)'),
      write_mode: writeMode,
      spatial_type: z
        .enum(['geometry', 'geography'])
        .default('geometry')
        .describe('Column type of a new table: geometry (planar, any SRID) or geography (WGS 84: the output is reprojected)'),
    }),
    deliverable: true,
  },
});
