import { z } from 'zod';
import { ConnectorError } from '../../domain/transfers.js';
import { httpUrl, secret } from '../shared/fields.js';
import { testSteps } from '../shared/http/http-test.js';
import { defineConnector, type DestinationSupport, type SourceSupport } from '../types.js';
import { deliverHub, type HubTarget } from './deliver.js';
import { extractHub, hubChanged, type HubResource } from './extract.js';
import { openPortal, portalCall } from './portal.js';

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
const configuration = hubConfiguration;
type HubConfigParsed = z.output<typeof configuration>;

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

const source: SourceSupport<HubResource, HubConfigParsed> = {
  resource,
  shorthand: 'item_id',
  resourceRequired: true,
  importable: true,
  incremental: true,
  incrementalNote: "a feature layer's last edit date (a file item's modified date): unchanged, the rest of the Run is skipped",
  extract: (config, selector, ctx, options) => extractHub(config, selector, ctx, options),
  changeCheck: {
    note: "the item's modified date (a hosted feature layer: its last edit date), and which item a search finds",
    changed: (config, selector, ctx, sync) => hubChanged(config, selector, ctx, sync?.cursor),
  },
};

const destination: DestinationSupport<HubTarget, HubConfigParsed> = {
  target,
  deliverable: true,
  deliver: (config, t, input, ctx) => deliverHub(config, t, input, ctx),
};

export const hub = defineConnector({
  type: 'hub',
  label: 'ArcGIS Online / Hub',
  description: 'Items of an ArcGIS Online or Enterprise portal (Hub): hosted feature layers and data files read, feature layers published and updated.',
  configuration,
  secrets: ['password', 'api_key'],
  example: { url: 'https://www.arcgis.com', api_key: '…' },
  implemented: true,
  verifiedAgainst:
    "stand-in checked with the vendor's client: a stand-in for the portal's sharing REST API (generateToken, community/self, portals/self, portals/self/servers, search, content/items, content/users with addItem, createFolder, publish, status, share) and the hosted FeatureServer (query with paging, applyEdits) started by the tests, written from Esri's REST API reference and checked in the same suite by driving it with Esri's own client, @esri/arcgis-rest-request, -portal and -feature-service 4.10.2 (npm); no ArcGIS portal can run here, so ArcGIS Online / Enterprise themselves are not verified",
  notes: [
    "**Authentication**: `api_key` is sent as the token; else `username` + `password` get a token from `{portal}/sharing/rest/generateToken` for each use (a one-hour referer token); without either, only public items can be read. Tokens travel in POST bodies (and in the `X-Esri-Authorization` header for file downloads, to the portal's origin only), never in a URL. A token goes only where Esri's own client sends one: the portal's origin, the servers the portal federates with (`portals/self/servers`, ArcGIS Enterprise) and, for ArcGIS Online, its services on `*.arcgis.com`; a feature service an item names anywhere else (an item's `url` is whatever its publisher wrote) is read without the token, and if it wants one the error says the credentials were kept back (`credentials_withheld` in its details). `url` is the portal (`https://www.arcgis.com`, or an Enterprise portal such as `https://gis.example.org/portal`); the sharing API is `{url}/sharing/rest`.",
    '',
    '**Source** (`source_resource`): `{"item_id": "…"}` (the string means that) or `{"search": "title:\\"Parcels\\" AND owner:gis"}` (the newest match by modified date). A hosted feature layer (`Feature Service` item) is read through its FeatureServer like a `featureserver` Source (paged queries, `layer` default 0, `where`); a data file item (GeoJson, Shapefile, CSV, GeoPackage, File Geodatabase, KML) is downloaded from `content/items/{id}/data` and inspected like an upload. Incremental: the layer\'s `editingInfo.lastEditDate` (a file item\'s `modified`) is kept; unchanged, the Run ends early.',
    '',
    '**Destination** (`destination_target`): `{"title": "Parcels", "tags": ["cadastre"], "folder": "nightly", "sharing": "org", "write_mode": "replace"}` or `{"item_id": "…", "layer": 0}`.',
    '',
    '- **New layer** (no item of that exact title owned by the user, or `write_mode: create`): the output is written as GeoJSON (WGS 84), added as a `GeoJson` item (`addItem`, in `folder`, created when missing), published as a hosted feature layer (`publish`, the service named after the title, made unique with `isServiceNameAvailable`), waited for (`status`) and shared (`share`: private, org or public). `create` fails with `target_exists` when the title exists.',
    "- **Existing layer**: `replace` sends one `applyEdits` request with `rollbackOnFailure=true` that deletes the layer's features and adds the output's: the service applies it as one edit transaction, so readers see the old rows or the new ones, never a missing layer or half of it; `append` adds the output's features the same way. Features are reprojected to the layer's spatial reference (102100 as EPSG:3857); attributes go to the layer's fields by name (without case); an output field the layer lacks fails with `invalid_data` before anything is sent. A refused feature rolls the whole request back.",
    "- **Limits**: one `applyEdits` request per delivery (the portal's request size limit applies; very large layers are better published anew). A retried `append` after the portal applied it adds the rows again (the portal keeps no delivery ids).",
    '',
    "**Browse** (the pickers): `GET /api/v1/sources/{id}/hub/items?q=` (search, newest first, paged with `start`), `…/hub/folders` (the signed-in user's folders), `…/hub/items/{item_id}/layers`; the same under `/api/v1/destinations/{id}/hub/…`.",
    '',
    '**Failures**: ArcGIS error objects are classified like `featureserver`\'s (498/499 → `authentication_failed`, 403 → `permission_denied`, "does not exist or is inaccessible" → `not_found`); a refused username or password → `authentication_failed`. **Connection test**: a token (when credentials are set), then `portals/self`, naming the portal and the signed-in user.',
  ].join('\n'),
  test(config, ctx) {
    const label = (() => {
      try {
        return new URL(config.url).origin + new URL(config.url).pathname.replace(/\/+$/, '');
      } catch {
        return config.url;
      }
    })();
    return testSteps({ url: label, username: config.username ?? null, api_key: Boolean(config.api_key) }, label, async () => {
      const portal = await openPortal(config, ctx);
      const { json } = await portalCall<{ name?: string; isPortal?: boolean; user?: { username?: string } }>(portal, 'portals/self', {}, ctx);
      if (!json || typeof json !== 'object' || (json.name === undefined && json.isPortal === undefined)) {
        throw new ConnectorError(
          'invalid_response',
          `${portal.label} answered portals/self without a portal: is it an ArcGIS portal?`,
          { url: portal.label },
          false,
        );
      }
      // A generated token always belongs to a user; an API key need not (a wrong one is error 498 above).
      if (portal.token && !config.api_key && !json.user?.username) {
        throw new ConnectorError(
          'authentication_failed',
          `${portal.label} did not accept the credentials (portals/self names no user)`,
          { url: portal.label },
          false,
        );
      }
      const who = json.user?.username ? `, signed in as ${json.user.username}` : config.api_key ? ', with an API key' : ', anonymous: public items only';
      return `${portal.label} is ${json.isPortal ? 'ArcGIS Enterprise' : 'ArcGIS Online'} (${json.name ?? 'unnamed'})${who}`;
    });
  },
  source,
  destination,
});
