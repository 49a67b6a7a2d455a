import { z } from 'zod';
import { host, name, port, secret, username } from '../shared/fields.js';
import { sqlDestinationDeclaration, sqlSourceDeclaration } from '../shared/sql/definition.js';
import { declareConnector } from '../types.js';
import type { PostgisTarget } from './deliver.js';
import type { PostgisResource } from './extract.js';

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

/** What the registry knows of postgis without loading its behaviour (index.ts) or its SDK. */
export const postgisDeclaration = declareConnector({
  type: 'postgis',
  label: 'PostGIS',
  description: 'Tables and views of a PostgreSQL database with PostGIS.',
  configuration,
  secrets: ['password'],
  example: { host: 'db.example.org', port: 5432, database: 'gis', username: 'loader', password: '…', ssl_mode: 'prefer' },
  implemented: true,
  verifiedAgainst: 'real server in npm test: PostgreSQL 15 + PostGIS 3 (Debian) started by the tests',
  discovers: true,
  source: sqlSourceDeclaration<PostgisResource>({
    type: 'postgis',
    schema: { default: 'public' },
    query: 'One SELECT statement (run in a read-only session)',
  }),
  destination: sqlDestinationDeclaration<PostgisTarget>({ schema: 'public', upsert: true }),
});
