import { z } from 'zod';
import { destinationNotImplemented, host, identifier, name, port, secret, sourceNotImplemented, username, writeMode } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const mysql: ConnectorDefinition = {
  type: 'mysql',
  label: 'MySQL / MariaDB',
  description: 'Tables of a MySQL or MariaDB database with spatial columns.',
  configuration: z.strictObject({
    host,
    port: port(3306),
    database: name('Database name'),
    username,
    password: secret('Password'),
    ssl: z.boolean().default(false).describe('Require TLS'),
  }),
  secrets: ['password'],
  example: { host: 'mysql.example.org', port: 3306, database: 'gis', username: 'loader', password: '…' },
  implemented: false,
  verifiedAgainst: 'MariaDB (Debian) started by the tests',
  source: sourceNotImplemented(
    'mysql',
    z.union([z.strictObject({ table: identifier('Table or view') }), z.strictObject({ query: z.string().min(1).max(100_000).describe('A SELECT statement') })]),
    true,
    'table',
  ),
  destination: destinationNotImplemented('mysql', z.strictObject({ table: identifier('Table'), write_mode: writeMode })),
};
