import { cursorCheckNote, cursorCheckUnsupported } from '../shared/sql/sql-cursor.js';
import { z } from 'zod';
import { host, identifier, port, secret, username, writeMode } from '../shared/fields.js';
import { cursorColumn, cursorIncrementalNote, selectQuery } from '../shared/sql/sql.js';
import { declareConnector } from '../types.js';

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
  source: {
    resource: z.union([
      z.strictObject({
        schema: identifier('Owner (schema); the connecting user when left out').optional(),
        table: identifier('Table, view or synonym (as stored: plain names are upper case)'),
        geometry_column: identifier('SDO_GEOMETRY column (the first one when left out)').optional(),
        cursor_column: cursorColumn(),
      }),
      selectQuery('One SELECT statement (run as a subquery)'),
    ]),
    shorthand: 'table',
    resourceRequired: true,
    importable: true,
    incremental: true,
    incrementalNote: cursorIncrementalNote,
    changeCheck: {
      note: cursorCheckNote,
      unsupported: cursorCheckUnsupported('oracle'),
    },
  },
  destination: {
    target: z.strictObject({
      table: identifier("Table in the connecting user's schema (as stored: plain names are upper case); created when missing"),
      write_mode: writeMode,
    }),
    deliverable: true,
  },
});
