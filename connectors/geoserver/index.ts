import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { safeFilename } from '../../geo/datasets/dataset-files.js';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { httpUrl, secret, username } from '../shared/fields.js';
import { testSteps } from '../shared/http/http-test.js';
import { defineConnector, type DestinationSupport, type SourceSupport } from '../types.js';
import { publishLayer, type GeoserverTarget } from './publish.js';
import { accessOf, restGet, wrapped } from './rest.js';
import { readLayer, wfsCapabilities } from './wfs.js';

/** GeoServer names (workspaces, stores, layers): XML-name-like, so they are safe in URLs, file names and typeNames. */
const gsName = (what: string) =>
  z
    .string()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'a GeoServer name: letters, digits, _ . - (starting with a letter or _)')
    .describe(what);

const configuration = z.strictObject({
  url: httpUrl.describe('GeoServer base URL, e.g. https://maps.example.org/geoserver'),
  username: username.optional(),
  password: secret('Password'),
  workspace: gsName('Default GeoServer workspace').optional(),
});
type GeoserverConfig = z.infer<typeof configuration>;

const resource = z
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
type GeoserverResource = z.infer<typeof resource>;

const target = z.strictObject({
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

/** The workspace a selector or target means: its own, else the connection's; none is a clear refusal. */
function workspaceOf(config: GeoserverConfig, given: string | undefined, what: string): string {
  const workspace = given ?? config.workspace;
  if (!workspace) throw new ConnectorError('not_found', `${what} names no workspace and the connection has no default workspace`, {}, false);
  return workspace;
}

function splitLayer(config: GeoserverConfig, layer: string): { workspace: string; layer: string } {
  const [a, b] = layer.split(':');
  return b ? { workspace: a!, layer: b } : { workspace: workspaceOf(config, undefined, `Layer ${layer}`), layer: a! };
}

const source: SourceSupport<GeoserverResource, GeoserverConfig> = {
  resource,
  shorthand: 'layer',
  resourceRequired: true,
  importable: true,
  incremental: false,
  async extract(config, selector, ctx) {
    const { workspace, layer } = splitLayer(config, selector.layer);
    const filename = safeFilename(`${layer}.geojson`);
    const file = path.join(ctx.workDir, filename);
    try {
      const read = await readLayer(
        accessOf(config),
        { workspace, layer, bbox: selector.bbox, bboxCrs: selector.bbox_crs, cqlFilter: selector.cql_filter, pageSize: selector.page_size },
        file,
        ctx,
      );
      return { file, filename, bytes: (await stat(file)).size, features: read.features };
    } catch (error) {
      await rm(file, { force: true });
      throw error;
    }
  },
};

const destination: DestinationSupport<z.infer<typeof target>, GeoserverConfig> = {
  target,
  deliverable: true,
  deliver(config, t, input, ctx) {
    return publishLayer(accessOf(config), workspaceOf(config, t.workspace, 'destination_target'), t as GeoserverTarget, input, ctx);
  },
};

export const geoserver = defineConnector({
  type: 'geoserver',
  label: 'GeoServer',
  description: 'Layers of a GeoServer: read through WFS, published through its REST API.',
  configuration,
  secrets: ['password'],
  example: { url: 'https://maps.example.org/geoserver', username: 'admin', password: '…', workspace: 'topp' },
  implemented: true,
  verifiedAgainst:
    "real server in npm test for reading, stand-in checked with the vendor's client for REST: reading: MapServer 8.0 (Debian cgi-mapserver), a real WFS 2.0 server, started by the tests; REST (test, publish, browse): a stand-in written from GeoServer's REST API reference (test/servers/geoserver), checked in the suite with the geoserver-rest 2.10 client (PyPI), that serves what it publishes through that MapServer",
  notes: [
    "**Test**: with a user name, `GET {url}/rest/about/version.json` (Basic authentication), which reports the GeoServer version; without one, the server's WFS capabilities (`{url}/ows`). `authentication_failed` (401), `permission_denied` (403: the user may not use the REST API), `not_found`, `unreachable`, `timeout`.",
    '',
    '**Import / Source** (`source_resource`): `{"layer": "nyc:boroughs"}` (the string `"nyc:boroughs"` means that; a name without a prefix is in the connection\'s `workspace`). The layer is read through its own WFS 2.0 endpoint (GeoServer\'s per-layer virtual service, `{url}/{workspace}/{layer}/ows`): `GetCapabilities` gives its default CRS, then `GetFeature` with `outputFormat=application/json`, `srsName=EPSG:<code>` (x/y order) and `count`/`startIndex` paging (`page_size`, default 1000) until a page comes back short. Features are written into one GeoJSON file named after the layer, keeping the layer\'s CRS (a `crs` member, e.g. EPSG:2263). Filters: `bbox` `[minx, miny, maxx, maxy]` (optionally `bbox_crs`), or `cql_filter` (GeoServer\'s ECQL vendor parameter, e.g. `"boro_name = \'Brooklyn\'"`); GeoServer refuses both in one request, so they are refused together here. Every read is a full read.',
    '',
    '**Deliver** (`destination_target`): `{"workspace": "nyc", "store": "boroughs", "layer": "boroughs", "write_mode": "replace", "title": "…", "abstract": "…", "style": "polygon"}`. The output (one layer) is written as a GeoPackage whose table is the layer\'s native name and uploaded into a GeoPackage data store through the REST API. A new layer: `PUT /rest/workspaces/{ws}/datastores/{store}/file.gpkg?configure=none` creates the store, `POST …/featuretypes` publishes the layer (with title and abstract), `PUT /rest/layers/{ws}:{layer}` sets the style. `replace` of an existing layer uploads the new GeoPackage into a staging store, then points the layer\'s store at that file with one `PUT` of its connection parameters, removes the staging store entry and deletes the old file (`DELETE /rest/resource/…`), then recalculates the bounding boxes: the layer stays in the catalogue throughout and answers with the old features until the store is switched. `create` fails with `target_exists` when the layer exists. The store must be the layer\'s own (one GeoPackage per layer); a store holding other data is `target_exists`. The workspace must exist (`not_found`). Idempotent per delivery: the uploaded file is named after the delivery id, so a retried delivery that already switched the store only rewrites the metadata.',
    '',
    "**Browse**: `GET /api/v1/sources/{id}/geoserver/workspaces`, `…/geoserver/workspaces/{workspace}/stores` and `…/geoserver/workspaces/{workspace}/layers` (and the same under `/destinations/{id}`), from the REST API: the connection's user needs REST access.",
    '',
    "**Credentials**: the password goes only into the Basic `Authorization` header of requests to the GeoServer's own origin (never after a redirect elsewhere).",
  ].join('\n'),
  test(c, ctx) {
    const access = accessOf(c);
    return testSteps({ url: publicUrl(c.url), username: c.username ?? null, workspace: c.workspace ?? null }, publicUrl(c.url), async () => {
      if (c.username) {
        const body = await restGet<unknown>(access, ['about', 'version.json'], ctx);
        if (body === null)
          throw new ConnectorError(
            'not_found',
            `${publicUrl(c.url)}/rest/about/version answered 404: is the URL the GeoServer web application (…/geoserver)?`,
            { url: publicUrl(c.url) },
            false,
          );
        const resources =
          wrapped<{ resource?: { '@name'?: string; Version?: string }[] }>(body, 'about', `${publicUrl(c.url)}/rest/about/version`).resource ?? [];
        const version = resources.find((r) => r['@name'] === 'GeoServer')?.Version;
        if (c.workspace && !(await restGet(access, ['workspaces', `${c.workspace}.json`], ctx))) {
          throw new ConnectorError(
            'not_found',
            `GeoServer ${version ?? ''} at ${publicUrl(c.url)} has no workspace ${c.workspace}`.replace('  ', ' '),
            { workspace: c.workspace },
            false,
          );
        }
        return `GeoServer ${version ?? '(version not reported)'} at ${publicUrl(c.url)} accepted ${c.username}`;
      }
      const layers = await wfsCapabilities(access, ctx);
      return `The WFS of ${publicUrl(c.url)} answered its capabilities (${layers} layer(s))`;
    });
  },
  source,
  destination,
});
