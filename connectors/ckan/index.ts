import path from 'node:path';
import type { z } from 'zod';
import { changedSince, download } from '../shared/http/download.js';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { testSteps } from '../shared/http/http-test.js';
import { action, authHeaders, portalOf, type CkanAccess, type CkanDataset, type CkanResource } from './action.js';
import { ckanFormat } from './formats.js';
import { pickResource, unchangedByMetadata, type CkanCursor } from './pick.js';
import { type configuration, type resource, ckanDeclaration } from './declaration.js';
import { defineConnector, type SourceBehaviour } from '../types.js';

type CkanConfig = z.output<typeof configuration>;

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
  const extension = extensions[ckanFormat(r.format ?? '').toLowerCase()];
  const name = (r.name || base || r.id).replace(/[/\\]/g, '_');
  return extension && !name.toLowerCase().endsWith(`.${extension}`) ? `${name}.${extension}` : name;
}

interface CkanStatus {
  ckan_version?: string;
  site_title?: string;
  site_url?: string | null;
}

const originOf = (url: string | null | undefined): string | null => {
  try {
    return url ? new URL(url).origin : null;
  } catch {
    return null;
  }
};

/**
 * The error of a portal file that could not be read without the token because CKAN names it on
 * another origin than the Source's (CKAN builds upload URLs from its `ckan.site_url`; behind a
 * proxy or under an internal host name that is not the URL the Source uses). The token never
 * follows it there: the user chooses which URL is right.
 */
export function siteUrlMismatch(resourceId: string, fileUrl: string, portal: string, siteUrl: string | null, cause: ConnectorError): ConnectorError {
  const site = siteUrl ? ` (its ckan.site_url is ${publicUrl(siteUrl)})` : '';
  return new ConnectorError(
    'permission_denied',
    `CKAN at ${publicUrl(portal)} gives resource ${resourceId}'s file as ${publicUrl(fileUrl)}${site}, another origin than the Source's url, so the API token was not sent there and the file was refused without it (${cause.message}). ` +
      `Set the Source's url to ${siteUrl ? publicUrl(siteUrl) : 'the origin the portal uses'}, or set ckan.site_url in the portal's configuration to ${publicUrl(portal)}.`,
    {
      resource: resourceId,
      url: publicUrl(fileUrl),
      portal: publicUrl(portal),
      site_url: siteUrl ? publicUrl(siteUrl) : null,
      http_status: cause.details.http_status ?? null,
    },
    false,
  );
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

/**
 * Whose the API token is. CKAN treats an unknown token as no token (anonymous), so the Action API
 * answers public data either way; user_show without an id answers the signed-in user, and
 * anonymous callers get Not Found (or Authorization Error where user details are not public).
 */
async function tokenUser(access: CkanAccess, ctx: Parameters<typeof action>[3]): Promise<string> {
  try {
    const user = await action<{ name?: string }>(access, 'user_show', {}, ctx);
    if (user?.name) return user.name;
  } catch (error) {
    if (!(error instanceof ConnectorError) || !['not_found', 'permission_denied', 'authentication_failed'].includes(error.reason)) throw error;
  }
  throw new ConnectorError(
    'authentication_failed',
    `CKAN at ${publicUrl(access.portal)} did not accept the API token (it reads an unknown or expired token as no token): create a new one under the user's API Tokens`,
    { url: publicUrl(access.portal) },
    false,
  );
}

const source = {
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
    const target = downloadUrl(found, access.portal);
    // The token goes to the portal's own origin only (uploaded files); a link elsewhere gets none.
    const own = target.origin === new URL(access.portal).origin;
    const same = previous?.resource_id === found.id ? previous : null;
    const read = () =>
      download(
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
    let got: Awaited<ReturnType<typeof read>>;
    try {
      got = await read();
    } catch (error) {
      // A refused file elsewhere: the portal's own upload under its site_url (another origin than the Source's), or a link?
      const refused = error instanceof ConnectorError && [401, 403, 404].includes(Number(error.details.http_status));
      if (own || !refused || !access.token) throw error;
      const status = await action<CkanStatus>(access, 'status_show', {}, ctx).catch(() => null);
      const siteOrigin = originOf(status?.site_url);
      if (found.url_type === 'upload' || (siteOrigin !== null && siteOrigin === target.origin))
        throw siteUrlMismatch(found.id, target.toString(), access.portal, status?.site_url ?? null, error);
      throw error;
    }
    const sync = { cursor: cursor(got.etag, got.lastModified) };
    if (!got.file) return { file: '', filename: '', bytes: 0, sync, unchanged: true };
    return { file: got.file, filename: got.filename, bytes: got.bytes, sync };
  },
  changeCheck: {
    async changed(config, selector, ctx, sync) {
      const access = accessOf(config);
      const { resource: found } = await findResource(access, selector, ctx);
      const previous = (sync?.cursor ?? null) as CkanCursor | null;
      if (!previous || previous.resource_id !== found.id) return true;
      if (unchangedByMetadata(previous, found)) return false;
      if (found.last_modified || found.hash || !found.url) return true;
      const target = downloadUrl(found, access.portal);
      const own = target.origin === new URL(access.portal).origin;
      return changedSince({ url: target.toString(), headers: own ? authHeaders(access) : {}, label: publicUrl(target.toString()) }, ctx, {
        cursor: { etag: previous.etag, last_modified: previous.http_last_modified },
      });
    },
  },
} satisfies SourceBehaviour<CkanSelector, CkanConfig>;

/** The resource's file as a URL that may be downloaded (http or https, relative ones on the portal). */
function downloadUrl(found: { id: string; url?: string | null | undefined }, portal: string): URL {
  let target: URL;
  try {
    target = new URL(found.url!, `${portal}/`);
  } catch {
    throw new ConnectorError(
      'invalid_response',
      `resource ${found.id} has a URL that cannot be read: ${String(found.url).slice(0, 100)}`,
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
  return target;
}

export const ckan = defineConnector(ckanDeclaration, {
  test(config, ctx) {
    const access = accessOf(config);
    const label = publicUrl(access.portal);
    return testSteps({ url: label, api_key: Boolean(config.api_key) }, label, async () => {
      const status = await action<CkanStatus>(access, 'status_show', {}, ctx);
      if (!status?.ckan_version)
        throw new ConnectorError('invalid_response', `${label} answered status_show without ckan_version: is it a CKAN portal?`, { url: label }, false);
      let message = `${label} is CKAN ${status.ckan_version}${status.site_title ? ` (${status.site_title})` : ''}`;
      if (access.token) message += `; the API token signs in as ${await tokenUser(access, ctx)}`;
      const siteOrigin = originOf(status.site_url);
      if (siteOrigin && siteOrigin !== new URL(access.portal).origin)
        message += `. Note: its ckan.site_url is ${publicUrl(status.site_url!)}, another origin; private uploads can be read only when the Source's url and ckan.site_url agree`;
      return message;
    });
  },
  source,
});
