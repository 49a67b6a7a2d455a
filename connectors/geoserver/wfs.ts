import { open } from 'node:fs/promises';
import { ConnectorError } from '../../domain/transfers.js';
import { fetchJson, httpRequest, failUnlessOk, publicUrl, readText } from '../shared/http/fetch.js';
import type { ConnectorContext } from '../types.js';
import type { GeoserverAccess } from './rest.js';

/*
 * Reading one layer through WFS 2.0 GetFeature, page by page (count + startIndex), as GeoJSON
 * (GeoServer's `application/json` output), written feature by feature into one GeoJSON file.
 * The layer's CRS is its DefaultCRS in the capabilities of its own virtual service; the features are asked for
 * in it (srsName=EPSG:<code>, the short form, which keeps x/y order) and the file names it in a
 * `crs` member, so a layer in EPSG:2263 stays in EPSG:2263.
 */

export interface WfsQuery {
  workspace: string;
  /** The layer's name inside the workspace. */
  layer: string;
  bbox?: [number, number, number, number];
  bboxCrs?: string;
  cqlFilter?: string;
  pageSize: number;
}

interface Feature {
  type?: string;
}

interface Page {
  type?: string;
  features?: Feature[];
}

/**
 * The layer's own OWS endpoint (GeoServer's per-layer virtual service, {base}/{workspace}/{layer}/ows),
 * whose capabilities list that one layer; without a layer, the server-wide {base}/ows.
 */
export function owsUrl(access: GeoserverAccess, at: { workspace: string; layer: string } | null, params: Record<string, string>): string {
  const url = new URL(at ? `${access.base}/${encodeURIComponent(at.workspace)}/${encodeURIComponent(at.layer)}/ows` : `${access.base}/ows`);
  for (const [k, v] of Object.entries({ service: 'WFS', version: '2.0.0', ...params })) url.searchParams.set(k, v);
  return url.toString();
}

/** The EPSG code of a layer's DefaultCRS in WFS 2.0 capabilities (urn:ogc:def:crs:EPSG::2263, EPSG:2263 …). */
export function defaultCrsOf(capabilities: string, qualifiedName: string): number | null | undefined {
  const blocks = capabilities.split(/<(?:\w+:)?FeatureType[\s>]/).slice(1);
  for (const block of blocks) {
    const name = /<(?:\w+:)?Name>\s*([^<]+?)\s*<\/(?:\w+:)?Name>/.exec(block)?.[1];
    if (name !== qualifiedName && name !== qualifiedName.split(':')[1]) continue;
    const crs = /<(?:\w+:)?(?:DefaultCRS|DefaultSRS)>\s*([^<]+?)\s*</.exec(block)?.[1] ?? '';
    const code = /EPSG:(?:[\d.]*:)?:?(\d+)$/i.exec(crs)?.[1] ?? /epsg\.xml#(\d+)$/i.exec(crs)?.[1];
    return code ? Number(code) : null;
  }
  return undefined;
}

/** Reads the capabilities of the workspace and returns the layer's EPSG code (null when it has none); not_found when it is not offered. */
export async function layerCrs(access: GeoserverAccess, query: Pick<WfsQuery, 'workspace' | 'layer'>, ctx: ConnectorContext): Promise<number | null> {
  const url = owsUrl(access, query, { request: 'GetCapabilities' });
  const label = publicUrl(url);
  const got = await httpRequest({ url, headers: { ...access.headers, accept: 'application/xml, text/xml' }, label }, ctx.signal);
  await failUnlessOk(got, label);
  const { text } = await readText(got.response, 64 * 1024 * 1024, label);
  if (!/WFS_Capabilities/.test(text)) {
    throw new ConnectorError(
      'invalid_response',
      `${label} did not answer WFS capabilities: is ${publicUrl(access.base)} a GeoServer with a layer ${query.workspace}:${query.layer}?`,
      { url: label },
      false,
    );
  }
  const crs = defaultCrsOf(text, `${query.workspace}:${query.layer}`);
  if (crs === undefined) {
    throw new ConnectorError(
      'not_found',
      `The WFS of ${publicUrl(access.base)} offers no layer ${query.workspace}:${query.layer}`,
      { url: label, layer: `${query.workspace}:${query.layer}` },
      false,
    );
  }
  return crs;
}

/** Most pages read for one layer: a server that ignores startIndex would otherwise loop forever. */
const MAX_PAGES = 100_000;

/**
 * Streams every page into `file` as one FeatureCollection. A page shorter than the page size
 * is the last (WFS 2.0 has no `next` link in GeoJSON). The size limit counts the bytes sent.
 */
export async function readLayer(
  access: GeoserverAccess,
  query: WfsQuery,
  file: string,
  ctx: ConnectorContext,
): Promise<{ features: number; bytes: number; epsg: number | null }> {
  const epsg = await layerCrs(access, query, ctx);
  const typeName = `${query.workspace}:${query.layer}`;
  const params: Record<string, string> = { request: 'GetFeature', typeNames: typeName, outputFormat: 'application/json', count: String(query.pageSize) };
  if (epsg) params.srsName = `EPSG:${epsg}`;
  if (query.bbox) params.bbox = [...query.bbox, ...(query.bboxCrs ? [query.bboxCrs] : [])].join(',');
  if (query.cqlFilter) params.CQL_FILTER = query.cqlFilter;
  const label = publicUrl(owsUrl(access, query, {}));
  const tooLarge = () =>
    new ConnectorError(
      'too_large',
      `${typeName} at ${label} holds more than the limit of ${ctx.maxBytes} bytes`,
      { url: label, max_bytes: ctx.maxBytes },
      false,
    );
  const out = await open(file, 'w');
  let features = 0;
  let bytes = 0;
  try {
    const crs = epsg && epsg !== 4326 ? `"crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:EPSG::${epsg}"}},` : '';
    await out.write(`{"type":"FeatureCollection",${crs}"features":[\n`);
    for (let page = 0; page < MAX_PAGES; page++) {
      const url = owsUrl(access, query, { ...params, startIndex: String(page * query.pageSize) });
      const got = await fetchJson<Page>({ url, headers: { ...access.headers, accept: 'application/json' }, label }, ctx.signal, ctx.maxBytes - bytes).catch(
        (error) => {
          if (error instanceof ConnectorError && error.reason === 'too_large') throw tooLarge();
          if (error instanceof ConnectorError && error.reason === 'invalid_response') {
            throw new ConnectorError(
              'invalid_response',
              `${label} did not answer GetFeature of ${typeName} with GeoJSON (a filter the server cannot parse is answered with an XML exception)`,
              { url: label },
              false,
            );
          }
          throw error;
        },
      );
      bytes += got.bytes;
      const body = got.json;
      if (body?.type !== 'FeatureCollection' || !Array.isArray(body.features)) {
        throw new ConnectorError('invalid_response', `${label} did not answer a GeoJSON FeatureCollection for ${typeName}`, { url: label }, false);
      }
      if (body.features.length) {
        const text = body.features.map((f) => JSON.stringify(f)).join(',\n');
        await out.write(features ? `,\n${text}` : text);
        features += body.features.length;
      }
      ctx.progress?.({ features, bytes });
      if (body.features.length < query.pageSize) break;
    }
    await out.write('\n]}\n');
  } finally {
    await out.close();
  }
  return { features, bytes, epsg };
}

/** A server-wide WFS GetCapabilities (the connection test without a user name). */
export async function wfsCapabilities(access: GeoserverAccess, ctx: ConnectorContext): Promise<number> {
  const url = owsUrl(access, null, { request: 'GetCapabilities' });
  const label = publicUrl(url);
  const got = await httpRequest({ url, headers: { ...access.headers, accept: 'application/xml, text/xml' }, label }, ctx.signal);
  await failUnlessOk(got, label);
  const { text } = await readText(got.response, 64 * 1024 * 1024, label);
  if (!/WFS_Capabilities/.test(text))
    throw new ConnectorError('invalid_response', `${label} did not answer WFS capabilities: is ${publicUrl(access.base)} a GeoServer?`, { url: label }, false);
  return text.split(/<(?:\w+:)?FeatureType[\s>]/).length - 1;
}
