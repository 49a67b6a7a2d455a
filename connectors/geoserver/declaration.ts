import { z } from 'zod';
import { httpUrl, secret, username } from '../shared/fields.js';
import { declareConnector } from '../types.js';

/** GeoServer names (workspaces, stores, layers): XML-name-like, so they are safe in URLs, file names and typeNames. */
const gsName = (what: string) =>
  z
    .string()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'a GeoServer name: letters, digits, _ . - (starting with a letter or _)')
    .describe(what);

export const configuration = z.strictObject({
  url: httpUrl.describe('GeoServer base URL, e.g. https://maps.example.org/geoserver'),
  username: username.optional(),
  password: secret('Password'),
  workspace: gsName('Default GeoServer workspace').optional(),
});

export const resource = z
  .strictObject({
    layer: z
      .string()
      .min(1)
      .max(201)
      .regex(/^([A-Za-z_][A-Za-z0-9_.-]*:)?[A-Za-z_][A-Za-z0-9_.-]*$/, "workspace:layer, or a layer of the connection's workspace")
      .describe("Layer name, workspace:name (or name, in the connection's workspace)"),
    bbox: z.tuple([z.number(), z.number(), z.number(), z.number()]).optional().describe('[minx, miny, maxx, maxy]: only features that intersect it (WFS bbox)'),
    bbox_crs: z
      .string()
      .regex(/^EPSG:\d{1,6}$/, 'EPSG:<code>')
      .optional()
      .describe("CRS of bbox (default: the layer's)"),
    cql_filter: z
      .string()
      .min(1)
      .max(4000)
      .regex(/^[^\u0000]*$/)
      .optional()
      .describe("An ECQL filter (GeoServer's CQL_FILTER), e.g. \"boro_name = 'Brooklyn'\""),
    page_size: z.number().int().min(1).max(10_000).default(1000).describe('Features per GetFeature request (the server may cap it)'),
  })
  .refine((r) => !(r.bbox && r.cql_filter), {
    message: 'GeoServer refuses bbox together with cql_filter: put BBOX(geometry, …) inside cql_filter',
    path: ['bbox'],
  })
  .refine((r) => !r.bbox_crs || r.bbox, { message: 'bbox_crs needs bbox', path: ['bbox_crs'] });

export const target = z.strictObject({
  workspace: gsName("GeoServer workspace (default: the connection's)").optional(),
  store: gsName('GeoPackage data store of the layer (default: the layer name)').optional(),
  layer: gsName('Layer name to publish'),
  write_mode: z
    .enum(['replace', 'create'])
    .default('replace')
    .describe('replace: republish the same layer with the new data (it never goes missing); create: fail if the layer exists'),
  title: z.string().min(1).max(255).optional().describe('Layer title'),
  abstract: z.string().min(1).max(4000).optional().describe('Layer abstract'),
  style: z
    .string()
    .min(1)
    .max(200)
    .regex(/^([A-Za-z_][A-Za-z0-9_.-]*:)?[A-Za-z_][A-Za-z0-9_. -]*$/)
    .optional()
    .describe('Default style (an existing style name)'),
});

/** What the registry knows of geoserver without loading its behaviour (index.ts) or its SDK. */
export const geoserverDeclaration = declareConnector({
  type: 'geoserver',
  label: 'GeoServer',
  description: 'Layers of a GeoServer: read through WFS, published through its REST API.',
  configuration,
  secrets: ['password'],
  example: { url: 'https://maps.example.org/geoserver', username: 'admin', password: '…', workspace: 'topp' },
  implemented: true,
  verifiedAgainst:
    "real server in npm test for reading, stand-in checked with the vendor's client for REST: reading: MapServer 8.0 (Debian cgi-mapserver), a real WFS 2.0 server, started by the tests; REST (test, publish, browse): a stand-in written from GeoServer's REST API reference (test/servers/geoserver), checked in the suite with the geoserver-rest 2.10 client (PyPI), that serves what it publishes through that MapServer",
  source: {
    resource,
    shorthand: 'layer',
    resourceRequired: true,
    importable: true,
    incremental: false,
  },
  destination: {
    target,
    deliverable: true,
  },
});
