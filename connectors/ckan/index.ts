import path from 'node:path';
import { z } from 'zod';
import { download } from '../shared/download.js';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/fetch.js';
import { httpUrl, secret } from '../shared/fields.js';
import { testSteps } from '../shared/http-test.js';
import { defineConnector, type SourceSupport } from '../types.js';
import { action, authHeaders, portalOf, type CkanAccess, type CkanDataset, type CkanResource } from './action.js';
import { pickResource, unchangedByMetadata, type CkanCursor } from './pick.js';

const configuration = z.strictObject({
  url: httpUrl.describe('CKAN portal URL (its home page, e.g. https://data.example.org)'),
  api_key: secret('API token (for private datasets), sent to the portal only'),
});
type CkanConfig = z.output<typeof configuration>;

const text = (what: string) => z.string().min(1).max(255).describe(what);
const resource = z
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
type CkanSelector = z.output<typeof resource>;

const accessOf = (c: CkanConfig): CkanAccess => ({ portal: portalOf(c.url), ...(c.api_key ? { token: c.api_key } : {}) });

/** Usual CKAN formats and the extension GDAL recognises them by (a zipped shapefile is a .zip). */
const extensions: Record<string, string> = {
  csv: 'csv',
  geojson: 'geojson',
  json: 'json',
  shp: 'zip',
  zip: 'zip',
  gpkg: 'gpkg',
  geopackage: 'gpkg',
  kml: 'kml',
  kmz: 'kmz',
  gml: 'gml',
  fgb: 'fgb',
  parquet: 'parquet',
  tif: 'tif',
  tiff: 'tif',
  geotiff: 'tif',
};

/** The downloaded file's name: the URL's last segment when it has an extension, else the resource's name plus one from its format. */
export function resourceFilename(r: CkanResource): string {
  let base = '';
  try {
    base = decodeURIComponent(path.posix.basename(new URL(r.url ?? '').pathname));
  } catch {
    // no usable URL: the name decides
  }
  if (path.extname(base)) return base;
  const extension = extensions[(r.format ?? '').trim().toLowerCase().replace(/^\./, '')];
  const name = (r.name || base || r.id).replace(/[/\\]/g, '_');
  return extension && !name.toLowerCase().endsWith(`.${extension}`) ? `${name}.${extension}` : name;
}

async function findResource(
  access: CkanAccess,
  selector: CkanSelector,
  ctx: Parameters<typeof action>[3],
): Promise<{ dataset?: CkanDataset; resource: CkanResource }> {
  if (selector.dataset === undefined) return { resource: await action<CkanResource>(access, 'resource_show', { id: selector.resource }, ctx) };
  const dataset = await action<CkanDataset>(access, 'package_show', { id: selector.dataset }, ctx);
  return { dataset, resource: pickResource(dataset, selector) };
}

const source: SourceSupport<CkanSelector, CkanConfig> = {
  resource,
  shorthand: 'resource',
  resourceRequired: true,
  // The spec refuses ckan for Workspace import: a Job Source only.
  importable: false,
  incremental: true,
  incrementalNote: "the resource's last_modified and hash (else the file's ETag): an unchanged resource skips the rest of the Run",
  async extract(config, selector, ctx, options) {
    const access = accessOf(config);
    const { resource: found } = await findResource(access, selector, ctx);
    if (!found.url) throw new ConnectorError('not_found', `resource ${found.id} has no URL to download`, { resource: found.id }, false);
    const previous = (options.sync?.cursor ?? null) as CkanCursor | null;
    const cursor = (etag: string | null, httpLastModified: string | null): CkanCursor => ({
      resource_id: found.id,
      last_modified: found.last_modified ?? null,
      hash: found.hash || null,
      etag,
      http_last_modified: httpLastModified,
    });
    if (unchangedByMetadata(previous, found)) return { file: '', filename: '', bytes: 0, sync: { cursor: previous }, unchanged: true };
    let target: URL;
    try {
      target = new URL(found.url, `${access.portal}/`);
    } catch {
      throw new ConnectorError(
        'invalid_response',
        `resource ${found.id} has a URL that cannot be read: ${found.url.slice(0, 100)}`,
        { resource: found.id },
        false,
      );
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      throw new ConnectorError(
        'invalid_response',
        `resource ${found.id} links to a ${target.protocol} URL, which is not downloaded`,
        { resource: found.id },
        false,
      );
    }
    // The token goes to the portal's own origin only (uploaded files); a link elsewhere gets none.
    const own = target.origin === new URL(access.portal).origin;
    const same = previous?.resource_id === found.id ? previous : null;
    const got = await download(
      {
        url: target.toString(),
        headers: own ? authHeaders(access) : {},
        ifNoneMatch: same?.etag,
        ifModifiedSince: same?.http_last_modified,
        filename: resourceFilename(found),
        label: publicUrl(target.toString()),
      },
      ctx,
    );
    const sync = { cursor: cursor(got.etag, got.lastModified) };
    if (!got.file) return { file: '', filename: '', bytes: 0, sync, unchanged: true };
    return { file: got.file, filename: got.filename, bytes: got.bytes, sync };
  },
};

export const ckan = defineConnector({
  type: 'ckan',
  label: 'CKAN',
  description: 'Resources of a CKAN open-data portal, read through its Action API.',
  configuration,
  secrets: ['api_key'],
  example: { url: 'https://data.example.org' },
  implemented: true,
  verifiedAgainst:
    "a stand-in for CKAN's Action API (status_show, package_show, resource_show, uploads) started by the tests, written from CKAN 2.11's ckan/logic/action/get.py and checked in the same suite by driving it with ckanapi 4.11 (PyPI); real CKAN needs Solr, which Debian does not package",
  notes: [
    'A Job Source only: the spec refuses ckan for Workspace import (`source_resource` is checked when a Job is saved).',
    '',
    '- **`source_resource`**: `{"resource": "<id>"}` (the string `"<id>"` means that; read with `resource_show`), `{"dataset": "nyc-boroughs", "resource": "Boroughs 2024"}` (a resource id or name within the dataset, read with `package_show`), or `{"dataset": "nyc-boroughs", "format": "CSV"}`: the newest resource of that format, by `last_modified` (else `metadata_modified`, else `created`). Formats compare loosely (`CSV`, `csv`, `.csv`, `text/csv`).',
    "- **Download**: the resource's `url` is streamed to disk with the upload size limit and inspected like an upload; its name comes from the URL, else the resource's name plus an extension from its format (`SHP` → `.zip`). Redirects are followed.",
    "- **Private datasets**: `api_key` (a CKAN API token) is sent in the `Authorization` header to the portal's own origin only: to the Action API and to uploaded files (`url_type: upload`), never to a link on another host, and never after a redirect to another origin.",
    "- **Incremental reads** (Jobs): the resource's id, `last_modified` and `hash` are kept; the same resource with the same values ends the Run early as unchanged without downloading. When the portal keeps neither, the file's `ETag` / `Last-Modified` are sent back and a 304 does the same. Choosing by format follows a newer resource as soon as one is added.",
    '- **Failures**: CKAN error objects are classified: `Not Found Error` → `not_found`, `Authorization Error` → `authentication_failed` without a token, `permission_denied` with one; a selector that matches nothing names what the dataset has.',
    "- **Connection test**: `status_show`, which must answer CKAN's envelope with `ckan_version`.",
  ].join('\n'),
  test(config, ctx) {
    const access = accessOf(config);
    const label = publicUrl(access.portal);
    return testSteps({ url: label, api_key: Boolean(config.api_key) }, label, async () => {
      const status = await action<{ ckan_version?: string; site_title?: string }>(access, 'status_show', {}, ctx);
      if (!status?.ckan_version)
        throw new ConnectorError('invalid_response', `${label} answered status_show without ckan_version: is it a CKAN portal?`, { url: label }, false);
      return `${label} is CKAN ${status.ckan_version}${status.site_title ? ` (${status.site_title})` : ''}`;
    });
  },
  source,
});
