import { z } from 'zod';
import { host, name, port, secret, username } from '../shared/fields.js';
import { sqlDestinationDeclaration, sqlSourceDeclaration } from '../shared/sql/definition.js';
import { declareConnector } from '../types.js';
import type { SqlServerTarget } from './deliver.js';
import type { SqlServerResource } from './extract.js';

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
  source: sqlSourceDeclaration<SqlServerResource>({
    type: 'sqlserver',
    schema: { default: 'dbo' },
    geometryColumn: { what: 'Geometry or geography column (the first one when left out)' },
    query: 'One SELECT statement (every column named; run as a subquery: no ;, no GO, no CTE, parentheses balanced)',
  }),
  destination: sqlDestinationDeclaration<SqlServerTarget>({
    schema: 'dbo',
    upsert: false,
    extra: {
      spatial_type: z
        .enum(['geometry', 'geography'])
        .default('geometry')
        .describe('Column type of a new table: geometry (planar, any SRID) or geography (WGS 84: the output is reprojected)'),
    },
  }),
});
