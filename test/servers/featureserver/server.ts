import type { IncomingMessage } from 'node:http';
import { listenStandIn, readBody, sendJson } from '../standin.js';

/*
 * A stand-in for an ArcGIS Server FeatureServer (the REST API as Esri's reference documents it for
 * ArcGIS Enterprise 11.x), kept only for what Koop 10.4 (test/servers/koop, the real
 * FeatureServer the connector's reads run against) lacks: tokens (499 Token Required, 498
 * Invalid Token, sent in the POST body), ArcGIS error objects (HTTP 200 with {"error": {code,
 * message, details}}, e.g. an invalid where clause), layers without pagination (read by
 * returnIdsOnly + objectIds), tables without geometry, projected layers (EPSG:2056) and
 * MapServer URLs. The reads themselves (paging, object ids, field types, multipart polygons,
 * where, layer ids, the size limit) are tested against Koop. The hub suite also uses it for the
 * services a portal federates.
 *
 *   /arcgis/rest/services/City/FeatureServer         (and …/City/MapServer, the same layers)
 *                                                     layers 0 Parcels (polygons, EPSG:2056, paging)
 *                                                     and 1 Hydrants (points, WGS 84, no paging: objectIds)
 *                                                     table 2 Owners (no geometry)
 */

type Attributes = Record<string, string | number | null>;
interface Feature {
  attributes: Attributes;
  geometry?: Record<string, unknown>;
}
interface Layer {
  id: number;
  name: string;
  type: 'Feature Layer' | 'Table';
  geometryType?: string;
  spatialReference?: { wkid: number; latestWkid: number };
  maxRecordCount: number;
  supportsPagination: boolean;
  fields: { name: string; type: string; alias: string; length?: number }[];
  features: Feature[];
}

const square = (x: number, y: number, s: number) => [
  [
    [x, y],
    [x, y + s],
    [x + s, y + s],
    [x + s, y],
    [x, y],
  ],
];

function parcels(count: number): Feature[] {
  return Array.from({ length: count }, (_, i) => {
    const x = 2600000 + (i % 20) * 100;
    const y = 1200000 + Math.floor(i / 20) * 100;
    // every tenth parcel has two parts (a multipart polygon in Esri JSON: several outer rings)
    const rings = i % 10 === 9 ? [...square(x, y, 40), ...square(x + 50, y + 50, 40)] : square(x, y, 80);
    return {
      attributes: {
        OBJECTID: i + 1,
        parcel_id: `P-${String(i + 1).padStart(4, '0')}`,
        zone: ['residential', 'commercial', 'agricultural'][i % 3]!,
        area: i % 10 === 9 ? 3200 : 6400,
      },
      geometry: { rings },
    };
  });
}

function hydrants(count: number): Feature[] {
  return Array.from({ length: count }, (_, i) => ({
    attributes: { OBJECTID: i + 1, hydrant_id: `H${i + 1}`, pressure: 4 + (i % 5) },
    geometry: { x: 7.43 + i * 0.001, y: 46.94 + (i % 7) * 0.001 },
  }));
}

const oid = { name: 'OBJECTID', type: 'esriFieldTypeOID', alias: 'OBJECTID' };

function featureLayer(
  id: number,
  name: string,
  geometryType: string,
  wkid: number,
  paging: Pick<Layer, 'maxRecordCount' | 'supportsPagination'>,
  fields: Layer['fields'],
  features: Feature[],
): Layer {
  return { id, name, type: 'Feature Layer', geometryType, spatialReference: { wkid, latestWkid: wkid }, ...paging, fields: [oid, ...fields], features };
}

export function cityLayers(): Layer[] {
  return [
    featureLayer(
      0,
      'Parcels',
      'esriGeometryPolygon',
      2056,
      { maxRecordCount: 100, supportsPagination: true },
      [
        { name: 'parcel_id', type: 'esriFieldTypeString', alias: 'Parcel', length: 20 },
        { name: 'zone', type: 'esriFieldTypeString', alias: 'Zone', length: 20 },
        { name: 'area', type: 'esriFieldTypeDouble', alias: 'Area' },
      ],
      parcels(230),
    ),
    featureLayer(
      1,
      'Hydrants',
      'esriGeometryPoint',
      4326,
      { maxRecordCount: 20, supportsPagination: false },
      [
        { name: 'hydrant_id', type: 'esriFieldTypeString', alias: 'Hydrant', length: 10 },
        { name: 'pressure', type: 'esriFieldTypeInteger', alias: 'Pressure' },
      ],
      hydrants(45),
    ),
    {
      id: 2,
      name: 'Owners',
      type: 'Table',
      maxRecordCount: 1000,
      supportsPagination: true,
      fields: [oid, { name: 'owner', type: 'esriFieldTypeString', alias: 'Owner', length: 50 }],
      features: ['Ana', 'Bo', 'Çelik', 'Dana', 'Émile'].map((owner, i) => ({ attributes: { OBJECTID: i + 1, owner } })),
    },
  ];
}

/** Where clauses of the form `1=1` or `field op literal [AND …]` (op: = <> < <= > >=); anything else is refused as ArcGIS does. */
export function matcher(where: string): ((a: Attributes) => boolean) | null {
  const clauses = where.split(/\s+AND\s+/i).map((c) => c.trim());
  const tests: ((a: Attributes) => boolean)[] = [];
  for (const clause of clauses) {
    if (/^1\s*=\s*1$/.test(clause)) continue;
    const m = /^(\w+)\s*(=|<>|<=|>=|<|>)\s*('(?:[^']|'')*'|-?\d+(?:\.\d+)?)$/.exec(clause);
    if (!m) return null;
    const [, field, op, raw] = m;
    const value = raw!.startsWith("'") ? raw!.slice(1, -1).replace(/''/g, "'") : Number(raw);
    tests.push((a) => {
      const v = a[field!];
      if (v === undefined || v === null) return false;
      switch (op) {
        case '=':
          return v === value;
        case '<>':
          return v !== value;
        case '<':
          return v < value;
        case '<=':
          return v <= value;
        case '>':
          return v > value;
        default:
          return v >= value;
      }
    });
  }
  return (a) => tests.every((t) => t(a));
}

async function paramsOf(req: IncomingMessage): Promise<URLSearchParams> {
  const url = new URL(req.url!, 'http://x');
  if (req.method !== 'POST') return url.searchParams;
  const form = new URLSearchParams((await readBody(req)).toString());
  url.searchParams.forEach((v, k) => {
    form.set(k, v);
  });
  return form;
}

export interface FeatureServerFixture {
  /** The service URL (…/FeatureServer). */
  url: string;
  layers: Layer[];
  /** How each request sent its token: "body", "query", or null. */
  requests: { method: string; path: string; token: 'body' | 'query' | null }[];
  stop(): Promise<void>;
}

export async function startFeatureServer(options: { token?: string } = {}): Promise<FeatureServerFixture> {
  const layers = cityLayers();
  const requests: FeatureServerFixture['requests'] = [];
  // The same layers as a MapServer too (ArcGIS Server publishes a map service beside each feature
  // service, whose layers answer the same query): Koop has no MapServer.
  const base = /^\/arcgis\/rest\/services\/City\/(FeatureServer|MapServer)/;
  const standIn = await listenStandIn(async (req, res, url) => {
    const path = url.pathname.replace(/\/+$/, '');
    const params = await paramsOf(req);
    requests.push({ method: req.method!, path, token: params.has('token') ? (url.searchParams.has('token') ? 'query' : 'body') : null });
    const json = (status: number, body: unknown) => sendJson(res, status, body, { 'content-type': 'application/json; charset=utf-8' });
    const error = (code: number, message: string, details: string[] = []) => json(200, { error: { code, message, details } });
    if (params.get('f') !== 'json' && params.get('f') !== 'pjson')
      return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>ArcGIS REST Services Directory</html>');
    if (!path.startsWith('/arcgis/rest/services/')) return error(400, 'Invalid URL', ['Invalid URL']);
    const service = base.exec(path)?.[0];
    if (!service) return error(500, `Service ${path.slice('/arcgis/rest/services/'.length)} not found`);
    if (options.token) {
      if (!params.get('token')) return error(499, 'Token Required');
      if (params.get('token') !== options.token) return error(498, 'Invalid Token');
    }
    const rest = path.slice(service.length).split('/').filter(Boolean);
    if (rest.length === 0) {
      return json(200, {
        currentVersion: 11.1,
        serviceDescription: 'geoflow test service',
        layers: layers.filter((l) => l.type !== 'Table').map((l) => ({ id: l.id, name: l.name, geometryType: l.geometryType })),
        tables: layers.filter((l) => l.type === 'Table').map((l) => ({ id: l.id, name: l.name })),
      });
    }
    const layer = layers.find((l) => String(l.id) === rest[0]);
    if (!layer) return error(400, 'Invalid URL', ['Invalid URL']);
    const { features: _all, supportsPagination, ...described } = layer;
    if (rest.length === 1) return json(200, { ...described, objectIdField: 'OBJECTID', advancedQueryCapabilities: { supportsPagination } });
    if (rest[1] !== 'query' || rest.length > 2) return error(400, 'Invalid URL', ['Invalid URL']);

    const match = matcher(params.get('where') ?? '');
    if (!match) return error(400, 'Unable to complete operation.', ['Unable to perform query operation.', 'Invalid query']);
    let rows = layer.features.filter((f) => match(f.attributes));
    if (params.get('returnIdsOnly') === 'true') return json(200, { objectIdFieldName: 'OBJECTID', objectIds: rows.map((f) => f.attributes.OBJECTID) });
    if (params.get('objectIds')) {
      const ids = new Set(params.get('objectIds')!.split(',').map(Number));
      rows = rows.filter((f) => ids.has(f.attributes.OBJECTID as number));
    }
    const order = params.get('orderByFields');
    if (order) rows = [...rows].sort((a, b) => ((a.attributes[order] as number) < (b.attributes[order] as number) ? -1 : 1));
    let exceeded = false;
    if (params.has('resultOffset') || params.has('resultRecordCount')) {
      if (!supportsPagination) return error(400, 'Pagination is not supported.');
      const offset = Number(params.get('resultOffset') ?? 0);
      const count = Math.min(Number(params.get('resultRecordCount') ?? layer.maxRecordCount), layer.maxRecordCount);
      exceeded = rows.length > offset + count;
      rows = rows.slice(offset, offset + count);
    } else if (rows.length > layer.maxRecordCount) {
      exceeded = true;
      rows = rows.slice(0, layer.maxRecordCount);
    }
    const withGeometry = params.get('returnGeometry') !== 'false' && layer.geometryType;
    return json(200, {
      objectIdFieldName: 'OBJECTID',
      ...(layer.geometryType ? { geometryType: layer.geometryType, spatialReference: layer.spatialReference } : {}),
      fields: layer.fields,
      features: rows.map((f) => (withGeometry ? f : { attributes: f.attributes })),
      ...(exceeded ? { exceededTransferLimit: true } : {}),
    });
  });
  return { url: `${standIn.url}/arcgis/rest/services/City/FeatureServer`, layers, requests, stop: standIn.stop };
}
