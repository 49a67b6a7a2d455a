import { z } from 'zod';
import { destinationNotImplemented, host, identifier, name, port, secret, sourceNotImplemented, username, writeMode } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const postgis: ConnectorDefinition = {
  type: 'postgis',
  label: 'PostGIS',
  description: 'Tables and views of a PostgreSQL database with PostGIS.',
  configuration: z.strictObject({
    host,
    port: port(5432),
    database: name('Database name'),
    username,
    password: secret('Password'),
    ssl_mode: z.enum(['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full']).default('prefer').describe('libpq sslmode'),
  }),
  secrets: ['password'],
  example: { host: 'db.example.org', port: 5432, database: 'gis', username: 'loader', password: '…', ssl_mode: 'prefer' },
  implemented: false,
  verifiedAgainst: 'PostgreSQL 15 + PostGIS 3 (Debian) started by the tests',
  source: sourceNotImplemented(
    'postgis',
    z.union([
      z.strictObject({ schema: identifier('Schema').default('public'), table: identifier('Table or view'), cursor_column: identifier('Column for incremental reads (a timestamp or increasing id)').optional() }),
      z.strictObject({ query: z.string().min(1).max(100_000).describe('A SELECT statement') }),
    ]),
    true,
    'table',
  ),
  destination: destinationNotImplemented(
    'postgis',
    z.strictObject({
      schema: identifier('Schema').default('public'),
      table: identifier('Table'),
      write_mode: writeMode,
    }),
  ),
};
