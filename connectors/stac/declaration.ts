import { z } from 'zod';
import { httpUrl, secret } from '../shared/fields.js';
import { declareConnector } from '../types.js';

export const configuration = z.strictObject({
  url: httpUrl.describe('Root catalog (catalog.json of a static catalog) or STAC API landing page'),
  token: secret("Bearer token, sent to the catalog's own origin only"),
});

export const resource = z.strictObject({
  collection: z.string().min(1).max(255).optional().describe('Collection id: narrows the search in a static catalog, required by STAC APIs without search'),
  item: z.string().min(1).max(255).describe('Item id'),
  asset: z.string().min(1).max(255).optional().describe('Asset key; default: the item\'s only asset with the role "data", or its only asset'),
});

/** What the registry knows of stac without loading its behaviour (index.ts) or its SDK. */
export const stacDeclaration = declareConnector({
  type: 'stac',
  label: 'STAC catalog',
  description: 'Assets of items in a STAC catalog or STAC API.',
  configuration,
  secrets: ['token'],
  example: { url: 'https://stac.example.org/catalog.json' },
  implemented: true,
  verifiedAgainst:
    'real server in npm test: a static STAC catalog (catalog → collection → item → assets) served over HTTP by the tests, and the same catalog as a STAC API through stac-fastapi-static 1.0.1 (PyPI)',
  source: {
    resource,
    shorthand: 'item',
    resourceRequired: true,
    importable: true,
    incremental: true,
    incrementalNote: "the asset's ETag / Last-Modified: an unchanged asset (HTTP 304) skips the rest of the Run",
    changeCheck: {
      note: "the item's metadata, then a HEAD of its asset with the last ETag / Last-Modified (an asset at a new address is a change)",
    },
  },
});
