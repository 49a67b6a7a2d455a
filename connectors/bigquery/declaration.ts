import { z } from 'zod';
import { httpUrl, identifier, secret } from '../shared/fields.js';
import { sqlDestinationDeclaration, sqlSourceDeclaration } from '../shared/sql/definition.js';
import { declareConnector } from '../types.js';
import type { BigQueryTarget } from './deliver.js';
import type { BigQueryResource } from './extract.js';

const configuration = z.strictObject({
  project_id: z.string().min(1).max(255).describe('Google Cloud project id (jobs run and are billed there)'),
  dataset: identifier('Dataset'),
  location: z.string().max(64).optional().describe('Dataset location, e.g. EU or europe-west3 (jobs run there)'),
  credentials_json: secret('Service account key as JSON (the whole key file)'),
  api_endpoint: httpUrl.optional().describe("BigQuery API endpoint, for Private Service Connect (https://bigquery-NAME.p.googleapis.com); default Google's"),
});

/** What the registry knows of bigquery without loading its behaviour (index.ts) or its SDK. */
export const bigqueryDeclaration = declareConnector({
  type: 'bigquery',
  label: 'Google BigQuery',
  description: 'Tables of a BigQuery dataset (GEOGRAPHY columns).',
  configuration,
  secrets: ['credentials_json'],
  example: { project_id: 'my-project', dataset: 'gis', location: 'EU', credentials_json: '{"type": "service_account", …}' },
  implemented: true,
  verifiedAgainst:
    "stand-in checked with the vendor's client: a BigQuery REST API stand-in written from Google's API reference (devservers/bigquery), whose answers the suite checks with Google's own Python client (google-cloud-bigquery 3.47); not verified against BigQuery itself, and the stand-in runs GoogleSQL on SQLite (no ST_ functions). `replace` (a copy job with WRITE_TRUNCATE), the retried-delivery protection (repeated job ids answered 409 duplicate) and GEOGRAPHY values are verified by the stand-in only: goccy's bigquery-emulator v0.6.6 cannot show them",
  discovers: true,
  source: sqlSourceDeclaration<BigQueryResource>({
    type: 'bigquery',
    table: 'Table or view of the dataset',
    geometryColumn: { what: 'GEOGRAPHY column to read as the geometry (default: the first one)', onQuery: true },
    query: "One GoogleSQL SELECT statement (BigQuery's dry run must call it a SELECT: scripts, DML and DDL are refused before anything runs)",
  }),
  destination: sqlDestinationDeclaration<BigQueryTarget>({ table: 'Table of the dataset (created when missing)', upsert: false }),
});
