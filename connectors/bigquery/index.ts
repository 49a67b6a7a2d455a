import { z } from 'zod';
import { destinationNotImplemented, identifier, secret, sourceNotImplemented, writeMode } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const bigquery: ConnectorDefinition = {
  type: 'bigquery',
  label: 'Google BigQuery',
  description: 'Tables of a BigQuery dataset (GEOGRAPHY columns).',
  configuration: z.strictObject({
    project_id: z.string().min(1).max(255).describe('Google Cloud project id'),
    dataset: identifier('Dataset'),
    location: z.string().max(64).optional().describe('Dataset location, e.g. EU'),
    credentials_json: secret('Service account key as JSON'),
  }),
  secrets: ['credentials_json'],
  example: { project_id: 'my-project', dataset: 'gis', credentials_json: '{"type": "service_account", …}' },
  implemented: false,
  verifiedAgainst: 'not verified: no BigQuery server can run here',
  source: sourceNotImplemented(
    'bigquery',
    z.union([z.strictObject({ table: identifier('Table') }), z.strictObject({ query: z.string().min(1).max(100_000).describe('A SELECT statement') })]),
    true,
    'table',
  ),
  destination: destinationNotImplemented('bigquery', z.strictObject({ table: identifier('Table'), write_mode: writeMode })),
};
