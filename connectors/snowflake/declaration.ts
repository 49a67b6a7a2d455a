import { z } from 'zod';
import { httpUrl, identifier, secret, username } from '../shared/fields.js';
import { sqlDestinationDeclaration, sqlSourceDeclaration } from '../shared/sql/definition.js';
import { declareConnector } from '../types.js';
import type { SnowflakeTarget } from './deliver.js';
import type { SnowflakeResource } from './extract.js';

const configuration = z.strictObject({
  account: z.string().min(1).max(255).describe('Account identifier, e.g. myorg-myaccount (or the legacy xy12345.eu-central-1)'),
  username,
  password: secret('Password (or use private_key)'),
  private_key: secret('Private key of key-pair authentication, PEM (PKCS#8, encrypted or not)'),
  private_key_passphrase: secret('Passphrase of an encrypted private_key'),
  warehouse: identifier("Warehouse that runs the statements (default: the user's default warehouse)").optional(),
  database: identifier('Database'),
  schema: identifier('Schema').default('PUBLIC'),
  role: identifier("Role (default: the user's default role)").optional(),
  access_url: httpUrl
    .optional()
    .describe('Address of the account when it is not https://ACCOUNT.snowflakecomputing.com (PrivateLink: https://ACCOUNT.privatelink.snowflakecomputing.com)'),
});

/** What the registry knows of snowflake without loading its behaviour (index.ts) or its SDK. */
export const snowflakeDeclaration = declareConnector({
  type: 'snowflake',
  label: 'Snowflake',
  description: 'Tables of a Snowflake database (GEOGRAPHY/GEOMETRY columns).',
  configuration,
  secrets: ['password', 'private_key', 'private_key_passphrase'],
  example: { account: 'myorg-myaccount', username: 'loader', password: '…', warehouse: 'LOAD_WH', database: 'GIS', schema: 'PUBLIC', role: 'LOADER' },
  implemented: true,
  verifiedAgainst:
    "emulator in npm test: fakesnow 0.12 (PyPI, DuckDB underneath) in server mode, driven through snowflake-sdk; fakesnow checks no password or key, has no GEOGRAPHY type and keeps no SRIDs, so authentication, Snowflake's spatial parsing and SRIDs are not verified (see the notes)",
  discovers: true,
  source: sqlSourceDeclaration<SnowflakeResource>({
    type: 'snowflake',
    table: 'Table or view of the schema',
    geometryColumn: { what: 'GEOGRAPHY or GEOMETRY column to read as the geometry (default: the first one)', onQuery: true },
    query: 'One SELECT statement (run as a subquery, one statement per request)',
  }),
  destination: sqlDestinationDeclaration<SnowflakeTarget>({
    table: 'Table of the schema (created when missing)',
    upsert: false,
    extra: {
      spatial_type: z
        .enum(['auto', 'geography', 'geometry'])
        .default('auto')
        .describe(
          "Type of a new table's geometry column: auto (GEOGRAPHY for WGS 84 data, else GEOMETRY with the SRID), geography (reprojected to WGS 84) or geometry (SRID kept)",
        ),
    },
  }),
});
