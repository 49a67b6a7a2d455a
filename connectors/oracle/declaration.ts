import { z } from 'zod';
import { host, port, secret, username } from '../shared/fields.js';
import { sqlDestinationDeclaration, sqlSourceDeclaration } from '../shared/sql/definition.js';
import { declareConnector } from '../types.js';
import type { OracleTarget } from './deliver.js';
import type { OracleResource } from './extract.js';

const configuration = z.strictObject({
  host: host.optional(),
  port: port(1521),
  service_name: z.string().min(1).max(255).optional().describe('Service name (with host and port)'),
  connect_string: z
    .string()
    .min(1)
    .max(2000)
    // SQL*Plus's user/password@service would be stored and shown in plain text (this field is not secret), like a URL with credentials.
    .refine((s) => !s.includes('@'), 'put the user name and password in username and password, not in connect_string (no "user/password@")')
    .optional()
    .describe('Instead of host, port and service_name: an Easy Connect string such as db.example.org:1521/GISPDB or tcps://db.example.org:2484/GISPDB'),
  username,
  password: secret('Password'),
});

/** What the registry knows of oracle without loading its behaviour (index.ts) or its SDK. */
export const oracleDeclaration = declareConnector({
  type: 'oracle',
  label: 'Oracle Spatial',
  description: 'Tables of an Oracle database with SDO_GEOMETRY columns.',
  configuration,
  secrets: ['password'],
  example: { host: 'ora.example.org', port: 1521, service_name: 'GISPDB', username: 'loader', password: '…' },
  implemented: true,
  verifiedAgainst:
    'no server here: no Oracle Database can run on this machine; the statements and the WKB → SDO_GEOMETRY conversion are unit-tested, a closed port and a silent one are tested through node-oracledb, and test/connectors/oracle.contract.spec.ts runs the PostGIS cases when SVC_TEST_ORACLE_URL names a server',
  discovers: true,
  source: sqlSourceDeclaration<OracleResource>({
    type: 'oracle',
    schema: { optional: 'Owner (schema); the connecting user when left out' },
    table: 'Table, view or synonym (as stored: plain names are upper case)',
    geometryColumn: { what: 'SDO_GEOMETRY column (the first one when left out)' },
    query: 'One SELECT statement (run as a subquery)',
  }),
  destination: sqlDestinationDeclaration<OracleTarget>({
    table: "Table in the connecting user's schema (as stored: plain names are upper case); created when missing",
    upsert: false,
  }),
});
