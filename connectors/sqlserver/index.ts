import { z } from 'zod';
import { destinationNotImplemented, host, identifier, name, port, secret, sourceNotImplemented, username, writeMode } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const sqlserver: ConnectorDefinition = {
  type: 'sqlserver',
  label: 'Microsoft SQL Server',
  description: 'Tables of a SQL Server database (geometry or geography columns).',
  configuration: z.strictObject({
    host,
    port: port(1433),
    database: name('Database name'),
    username,
    password: secret('Password'),
    encrypt: z.boolean().default(true).describe('Encrypt the connection (TLS)'),
    trust_server_certificate: z.boolean().default(false).describe('Accept a self-signed server certificate'),
  }),
  secrets: ['password'],
  example: { host: 'sql.example.org', port: 1433, database: 'gis', username: 'loader', password: '…', encrypt: true },
  implemented: false,
  verifiedAgainst: 'not verified: SQL Server cannot be installed on this machine',
  source: sourceNotImplemented(
    'sqlserver',
    z.union([
      z.strictObject({ schema: identifier('Schema').default('dbo'), table: identifier('Table or view') }),
      z.strictObject({ query: z.string().min(1).max(100_000).describe('A SELECT statement') }),
    ]),
    true,
    'table',
  ),
  destination: destinationNotImplemented('sqlserver', z.strictObject({ schema: identifier('Schema').default('dbo'), table: identifier('Table'), write_mode: writeMode })),
};
