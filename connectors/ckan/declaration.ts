import { z } from 'zod';
import { httpUrl, secret } from '../shared/fields.js';
import { declareConnector } from '../types.js';

export const configuration = z.strictObject({
  url: httpUrl.describe('CKAN portal URL (its home page, e.g. https://data.example.org)'),
  api_key: secret('API token (for private datasets), sent to the portal only'),
});

const text = (what: string) => z.string().min(1).max(255).describe(what);

export const resource = z
  .strictObject({
    dataset: text('Dataset id or name (package_show)').optional(),
    resource: text("Resource id; with dataset, also the resource's name").optional(),
    format: z.string().min(1).max(50).optional().describe('With dataset: take the newest resource of this format (CSV, GeoJSON, SHP …)'),
  })
  .refine(
    (r) => r.resource !== undefined || (r.dataset !== undefined && r.format !== undefined),
    'give resource (an id), dataset + resource (id or name), or dataset + format',
  )
  .refine((r) => !(r.resource !== undefined && r.format !== undefined), 'give resource or format, not both');

/** What the registry knows of ckan without loading its behaviour (index.ts) or its SDK. */
export const ckanDeclaration = declareConnector({
  type: 'ckan',
  label: 'CKAN',
  description: 'Resources of a CKAN open-data portal, read through its Action API.',
  configuration,
  secrets: ['api_key'],
  example: { url: 'https://data.example.org' },
  implemented: true,
  verifiedAgainst:
    "real server in npm test: CKAN 2.12.0 (PyPI ckan[requirements]) with Solr 9.10.1 (Maven Central, JettySolrRunner, CKAN's own schema.xml), Redis and PostgreSQL, started by the tests and seeded with ckanapi 4.11 (connection test and wrong tokens, formats as CKAN stores them, private uploads through ckan.site_url, Last-Modified / If-Modified-Since, a Job into PostGIS); a stand-in of its Action API, checked with ckanapi, only for resources dated at will and the log of which requests carried the token",
  source: {
    resource,
    shorthand: 'resource',
    resourceRequired: true,
    // The spec refuses ckan for Workspace import: a Job Source only.
    importable: false,
    incremental: true,
    incrementalNote: "the resource's last_modified and hash (else the file's ETag): an unchanged resource skips the rest of the Run",
    changeCheck: {
      note: "the resource's last_modified and hash from the Action API (a portal that keeps neither: a HEAD of its file with the last ETag / Last-Modified)",
    },
  },
});
