import { z } from 'zod';
import { httpUrl } from '../shared/fields.js';
import { declareConnector } from '../types.js';

export const configuration = z.strictObject({
  url: httpUrl.describe('Address of the file: GeoJSON, a zipped shapefile, GeoPackage, CSV, KML … (redirects are followed)'),
});

/** What the registry knows of url without loading its behaviour (index.ts) or its SDK. */
export const urlDeclaration = declareConnector({
  type: 'url',
  label: 'File at a URL',
  description: 'Downloads one file from an http(s) URL on every use (streamed to disk, size-limited).',
  configuration,
  secrets: [],
  example: { url: 'https://example.org/data/parcels.geojson' },
  implemented: true,
  verifiedAgainst: 'real server in npm test: a local HTTP server in the tests (redirects, ETag and Last-Modified, large files streamed, 401/404/5xx)',
  source: {
    resource: z.strictObject({}),
    resourceRequired: false,
    importable: true,
    incremental: true,
    incrementalNote: 'ETag / Last-Modified: an unchanged file (HTTP 304) skips the rest of the Run',
    changeCheck: {
      note: 'a HEAD with the last ETag / Last-Modified: 304 (or the same validators) is unchanged',
    },
  },
});
