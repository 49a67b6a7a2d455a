import { cursorCheckNote, cursorCheckUnsupported } from '../shared/sql/sql-cursor.js';
import { z } from 'zod';
import { host, identifier, name, port, secret, upsertTarget, username } from '../shared/fields.js';
import { cursorColumn, cursorIncrementalNote, selectQuery } from '../shared/sql/sql.js';
import { declareConnector } from '../types.js';

const configuration = z.strictObject({
  host,
  port: port(3306),
  database: name('Database name'),
  username,
  password: secret('Password'),
  ssl: z.boolean().default(false).describe("Require TLS, the certificate verified against the system's CAs (connection tests only: see the notes)"),
});

/** What the registry knows of mysql without loading its behaviour (index.ts) or its SDK. */
export const mysqlDeclaration = declareConnector({
  type: 'mysql',
  label: 'MySQL / MariaDB',
  description: 'Tables of a MySQL or MariaDB database with spatial columns.',
  configuration,
  secrets: ['password'],
  example: { host: 'mysql.example.org', port: 3306, database: 'gis', username: 'loader', password: '…' },
  implemented: true,
  verifiedAgainst: 'real server in npm test: MariaDB 10.11 (Debian) started by the tests',
  source: {
    resource: z.union([
      z.strictObject({
        table: identifier('Table or view'),
        cursor_column: cursorColumn(),
      }),
      selectQuery(),
    ]),
    shorthand: 'table',
    resourceRequired: true,
    importable: true,
    incremental: true,
    incrementalNote: cursorIncrementalNote,
    changeCheck: {
      note: cursorCheckNote,
      unsupported: cursorCheckUnsupported('mysql'),
    },
  },
  destination: {
    target: upsertTarget({ table: identifier('Table (created when missing)') }),
    deliverable: true,
  },
});
