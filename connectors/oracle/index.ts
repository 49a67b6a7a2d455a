import { z } from 'zod';
import { destinationNotImplemented, host, identifier, port, secret, sourceNotImplemented, username, writeMode } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const oracle: ConnectorDefinition = {
  type: 'oracle',
  label: 'Oracle Spatial',
  description: 'Tables of an Oracle database with SDO_GEOMETRY columns.',
  configuration: z.strictObject({
    host,
    port: port(1521),
    service_name: z.string().min(1).max(255).describe('Service name'),
    username,
    password: secret('Password'),
  }),
  secrets: ['password'],
  example: { host: 'ora.example.org', port: 1521, service_name: 'GISPDB', username: 'loader', password: '…' },
  implemented: false,
  verifiedAgainst: 'not verified: Oracle cannot be installed on this machine',
  source: sourceNotImplemented(
    'oracle',
    z.union([
      z.strictObject({ schema: identifier('Owner (schema)').optional(), table: identifier('Table or view') }),
      z.strictObject({ query: z.string().min(1).max(100_000).describe('A SELECT statement') }),
    ]),
    true,
    'table',
  ),
  destination: destinationNotImplemented('oracle', z.strictObject({ schema: identifier('Owner (schema)').optional(), table: identifier('Table'), write_mode: writeMode })),
};
