import { z } from 'zod';
import { httpUrl, secret } from '../shared/fields.js';
import { declareConnector } from '../types.js';

/** Exported for the browse helpers (application/hub-browse.ts), which parse a saved configuration with it. */
export const hubConfiguration = z.strictObject({
  url: httpUrl.default('https://www.arcgis.com').describe('Portal URL: https://www.arcgis.com, or an Enterprise portal (https://gis.example.org/portal)'),
  username: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe('Portal user (with password: a token is generated per use; with api_key: the owner of what is published)'),
  password: secret('Password of username'),
  api_key: secret('API key (used instead of username/password)'),
});

const itemId = z.string().regex(/^[A-Za-z0-9]{1,64}$/, 'a portal item id (letters and digits)');

const layerId = z.number().int().min(0).max(100_000);

const resource = z
  .strictObject({
    item_id: itemId.optional().describe('Item id: a hosted feature layer, or a data file item (GeoJSON, Shapefile, CSV, GeoPackage …)'),
    search: z.string().min(1).max(1000).optional().describe('Portal search (q syntax, e.g. title:"Parcels" AND owner:gis_team): the newest match is read'),
    layer: layerId.optional().describe('Layer or table id of a feature layer item (default 0)'),
    where: z.string().min(1).max(4000).default('1=1').describe('SQL where clause of a feature layer, evaluated by the server'),
  })
  .refine((r) => (r.item_id === undefined) !== (r.search === undefined), 'give item_id or search (one of them)');

const target = z
  .strictObject({
    item_id: itemId.optional().describe('Hosted feature layer item to update in place'),
    title: z
      .string()
      .min(1)
      .max(250)
      .optional()
      .describe('Title of the hosted feature layer: updated when the user owns one of that exact title, published from the output otherwise'),
    tags: z.array(z.string().min(1).max(128)).max(50).default([]).describe('Tags of a newly published item'),
    folder: z.string().min(1).max(255).optional().describe("Folder (title) of the user's content for a new item; created when missing"),
    sharing: z.enum(['private', 'org', 'public']).optional().describe('Sharing set after each delivery; absent: left as it is (new items are private)'),
    layer: layerId.default(0).describe('Layer of the hosted feature layer to update (default 0)'),
    write_mode: z
      .enum(['replace', 'append', 'create'])
      .default('replace')
      .describe(
        'replace: old features out and new ones in, in one edit transaction; append: add features; create: publish a new layer, failing if the title exists',
      ),
  })
  .refine((t) => t.item_id !== undefined || t.title !== undefined, 'give item_id (an existing layer) or title');

/** What the registry knows of hub without loading its behaviour (index.ts) or its SDK. */
export const hubDeclaration = declareConnector({
  type: 'hub',
  label: 'ArcGIS Online / Hub',
  description: 'Items of an ArcGIS Online or Enterprise portal (Hub): hosted feature layers and data files read, feature layers published and updated.',
  configuration: hubConfiguration,
  secrets: ['password', 'api_key'],
  example: { url: 'https://www.arcgis.com', api_key: '…' },
  implemented: true,
  verifiedAgainst:
    "stand-in checked with the vendor's client: a stand-in for the portal's sharing REST API (generateToken, community/self, portals/self, portals/self/servers, search, content/items, content/users with addItem, createFolder, publish, status, share) and the hosted FeatureServer (query with paging, applyEdits) started by the tests, written from Esri's REST API reference and checked in the same suite by driving it with Esri's own client, @esri/arcgis-rest-request, -portal and -feature-service 4.10.2 (npm); no ArcGIS portal can run here, so ArcGIS Online / Enterprise themselves are not verified",
  source: {
    resource,
    shorthand: 'item_id',
    resourceRequired: true,
    importable: true,
    incremental: true,
    incrementalNote: "a feature layer's last edit date (a file item's modified date): unchanged, the rest of the Run is skipped",
    changeCheck: {
      note: "the item's modified date (a hosted feature layer: its last edit date), and which item a search finds",
    },
  },
  destination: {
    target,
    deliverable: true,
  },
});
