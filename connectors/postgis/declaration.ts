import { cursorCheckNote, cursorCheckUnsupported } from '../shared/sql/sql-cursor.js';
import { z } from 'zod';
import { host, identifier, name, port, secret, upsertTarget, username } from '../shared/fields.js';
import { cursorColumn, cursorIncrementalNote, selectQuery } from '../shared/sql/sql.js';
import { declareConnector } from '../types.js';

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
  source: {
    resource: z.union([
      z.strictObject({
        schema: identifier('Schema').default('public'),
        table: identifier('Table or view'),
        cursor_column: cursorColumn(),
      }),
      selectQuery('One SELECT statement (run in a read-only session)'),
    ]),
    shorthand: 'table',
    resourceRequired: true,
    importable: true,
    incremental: true,
    incrementalNote: cursorIncrementalNote,
    changeCheck: {
      note: cursorCheckNote,
      unsupported: cursorCheckUnsupported('postgis'),
    },
  },
  destination: {
    target: upsertTarget({
      schema: identifier('Schema (must exist)').default('public'),
      table: identifier('Table (created when missing)'),
    }),
    deliverable: true,
  },
});
