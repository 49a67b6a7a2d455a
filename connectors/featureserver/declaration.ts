import { z } from 'zod';
import { httpUrl, secret } from '../shared/fields.js';
import { declareConnector } from '../types.js';

export const configuration = z.strictObject({
  url: httpUrl
    // refinements run even when the URL check failed: an unparsable value is that check's to refuse
    .refine(
      (u) => !URL.canParse(u) || /\/(FeatureServer|MapServer)\/?$/i.test(new URL(u).pathname),
      'the service URL, ending in /FeatureServer or /MapServer (the layer is chosen per use)',
    )
    .describe('Service URL ending in /FeatureServer (or /MapServer)'),
  token: secret('ArcGIS token (sent in the POST body, never in a URL)'),
});

export const resource = z.strictObject({
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

/** What the registry knows of featureserver without loading its behaviour (index.ts) or its SDK. */
export const featureserverDeclaration = declareConnector({
  type: 'featureserver',
  label: 'ArcGIS FeatureServer',
  description: 'Layers of an ArcGIS REST FeatureServer or MapServer (paged queries).',
  configuration,
  secrets: ['token'],
  example: { url: 'https://services.arcgis.com/xyz/arcgis/rest/services/Parcels/FeatureServer' },
  implemented: true,
  verifiedAgainst:
    "real server in npm test: Koop 10.4 (npm @koopjs/koop-core 10.4.19 with @koopjs/output-geoservices 8.1.25 and @koopjs/provider-file-geojson 2.2.0, Esri's open-source FeatureServer implementation) for reads (paging, where, object ids, field types, multipart polygons, layer ids, the size limit); a stand-in only for what Koop lacks (tokens, ArcGIS error objects, layers without pagination read by objectIds batches, tables, projected layers, MapServer); no ArcGIS server can run here, so real ArcGIS Online / Enterprise is not verified",
  source: {
    resource,
    shorthand: 'layer',
    resourceRequired: true,
    importable: true,
    incremental: false,
  },
});
