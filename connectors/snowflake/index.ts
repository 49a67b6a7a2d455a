import { z } from 'zod';
import { destinationNotImplemented, identifier, secret, sourceNotImplemented, username, writeMode } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const snowflake: ConnectorDefinition = {
  type: 'snowflake',
  label: 'Snowflake',
  description: 'Tables of a Snowflake database (GEOGRAPHY/GEOMETRY columns).',
  configuration: z.strictObject({
    account: z.string().min(1).max(255).describe('Account identifier, e.g. xy12345.eu-central-1'),
    warehouse: identifier('Warehouse'),
    database: identifier('Database'),
    schema: identifier('Schema').default('PUBLIC'),
    role: identifier('Role').optional(),
    username,
    password: secret('Password'),
  }),
  secrets: ['password'],
  example: { account: 'xy12345.eu-central-1', warehouse: 'LOAD_WH', database: 'GIS', schema: 'PUBLIC', username: 'loader', password: '…' },
  implemented: false,
  verifiedAgainst: 'not verified: no Snowflake server can run here',
  source: sourceNotImplemented(
    'snowflake',
    z.union([z.strictObject({ table: identifier('Table') }), z.strictObject({ query: z.string().min(1).max(100_000).describe('A SELECT statement') })]),
    true,
    'table',
  ),
  destination: destinationNotImplemented('snowflake', z.strictObject({ table: identifier('Table'), write_mode: writeMode })),
};
