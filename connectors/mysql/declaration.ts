import { z } from 'zod';
import { host, name, port, secret, username } from '../shared/fields.js';
import { sqlDestinationDeclaration, sqlSourceDeclaration } from '../shared/sql/definition.js';
import { declareConnector } from '../types.js';
import type { MysqlTarget } from './deliver.js';
import type { MysqlResource } from './extract.js';

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
  source: sqlSourceDeclaration<MysqlResource>({ type: 'mysql' }),
  destination: sqlDestinationDeclaration<MysqlTarget>({ upsert: true }),
});
