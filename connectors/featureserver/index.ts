import { z } from 'zod';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { httpUrl, secret } from '../shared/fields.js';
import { testSteps } from '../shared/http/http-test.js';
import { defineConnector, type SourceSupport } from '../types.js';
import { readLayer } from '../shared/arcgis/read-layer.js';
import { arcgis, type RestAccess } from '../shared/arcgis/rest.js';

const configuration = z.strictObject({
  url: httpUrl
    // refinements run even when the URL check failed: an unparsable value is that check's to refuse
    .refine(
      (u) => !URL.canParse(u) || /\/(FeatureServer|MapServer)\/?$/i.test(new URL(u).pathname),
      'the service URL, ending in /FeatureServer or /MapServer (the layer is chosen per use)',
    )
    .describe('Service URL ending in /FeatureServer (or /MapServer)'),
  token: secret('ArcGIS token (sent in the POST body, never in a URL)'),
});
type FeatureServerConfig = z.output<typeof configuration>;

const resource = z.strictObject({
  // a number, or its digits as a string (the shorthand: source_resource "3" means layer 3)
  layer: z
    .union([
      z.number().int().min(0),
      z
        .string()
        .regex(/^\d{1,9}$/, 'a layer id (digits)')
        .transform(Number),
    ])
    .describe('Layer (or table) id, as listed by the service'),
  where: z.string().min(1).max(4000).default('1=1').describe('SQL where clause, evaluated by the server'),
});
type FeatureServerResource = z.infer<typeof resource>;

function accessOf(config: FeatureServerConfig): RestAccess {
  const url = new URL(config.url);
  return { service: `${url.origin}${url.pathname.replace(/\/+$/, '')}`, ...(config.token ? { token: config.token } : {}) };
}

const source: SourceSupport<FeatureServerResource, FeatureServerConfig> = {
  resource,
  shorthand: 'layer',
  resourceRequired: true,
  importable: true,
  incremental: false,
  async extract(config, selector, ctx) {
    const read = await readLayer(accessOf(config), selector.layer, selector.where, ctx);
    return { file: read.file, filename: read.filename, bytes: read.bytes, features: read.features };
  },
};

export const featureserver = defineConnector({
  type: 'featureserver',
  label: 'ArcGIS FeatureServer',
  description: 'Layers of an ArcGIS REST FeatureServer or MapServer (paged queries).',
  configuration,
  secrets: ['token'],
  example: { url: 'https://services.arcgis.com/xyz/arcgis/rest/services/Parcels/FeatureServer' },
  implemented: true,
  verifiedAgainst:
    "real server in npm test: Koop 10.4 (npm @koopjs/koop-core 10.4.19 with @koopjs/output-geoservices 8.1.25 and @koopjs/provider-file-geojson 2.2.0, Esri's open-source FeatureServer implementation) for reads (paging, where, object ids, field types, multipart polygons, layer ids, the size limit); a stand-in only for what Koop lacks (tokens, ArcGIS error objects, layers without pagination read by objectIds batches, tables, projected layers, MapServer); no ArcGIS server can run here, so real ArcGIS Online / Enterprise is not verified",
  notes: [
    'A read asks the layer for its description (`{url}/{layer}`: name, geometry type, `maxRecordCount`, whether it pages), then queries it with `where`, `outFields=*` and `returnGeometry=true`:',
    '',
    "- **Paging**: when the layer supports pagination, `resultOffset` / `resultRecordCount` pages (as large as the layer's `maxRecordCount`, at most 2000), ordered by the object id field, until a page no longer reports `exceededTransferLimit`. Older servers without pagination are read by asking for all object ids (`returnIdsOnly=true`), then querying them in batches.",
    "- **Format**: each page is Esri JSON, read by GDAL's ESRIJSON driver and appended to one GeoPackage named after the layer (layer of the same name; lines and polygons as multi types). Geometries keep the layer's spatial reference, and features keep the server's object ids as their ids on every page. A field declared Integer whose values include decimals (Koop declares a type from the first value it sees) is written as a Real field instead of truncating them, and the Run's log says so.",
    "- **Layer id**: the layer's description must name the layer asked for; a server that answers a missing id with another layer (Koop answers with layer 0) → `not_found`.",
    "- **Requests** are `POST`s with a form body and `f=json`, so the token travels in the body, never in a URL that a proxy or log keeps. Redirects are not followed (a 307 would carry the token elsewhere): the error names the address to save instead. Why not GDAL's ESRIJSON driver on the query URL: it would need the token in the URL and cannot stop at the size limit while paging.",
    '- **Failures**: ArcGIS answers most errors as HTTP 200 with an error object: 498/499 (invalid or missing token) → `authentication_failed`, 403 → `permission_denied`, "Invalid URL" or "not found" (a missing layer or service) → `not_found`, a bad where clause (400) → `invalid_response`, 5xx → `server_error`.',
    '- **Size**: the bytes of the answers count against the upload limit while reading. No incremental reads yet (every read is a full read of the where clause).',
    '- **Connection test**: `{url}?f=json`, which must list `layers` or `tables`.',
  ].join('\n'),
  async test(config, ctx) {
    const c = config;
    const access = accessOf(c);
    const label = publicUrl(access.service);
    return testSteps({ url: label, token: Boolean(c.token) }, label, async () => {
      const { json } = await arcgis<{ layers?: unknown[]; tables?: unknown[] }>(access, '', {}, ctx, 16 * 1024 * 1024);
      if (!Array.isArray(json?.layers) && !Array.isArray(json?.tables)) {
        throw new ConnectorError('invalid_response', `${label} answered JSON without layers or tables: is it a FeatureServer or MapServer?`, {}, false);
      }
      return `${label} has ${json.layers?.length ?? 0} layer(s) and ${json.tables?.length ?? 0} table(s)`;
    });
  },
  source,
});
