import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { matcher } from '../featureserver/server.js';
import { listenStandIn, sendJson } from '../standin.js';

/*
 * A stand-in for an ArcGIS portal (ArcGIS Enterprise's Portal, shaped like ArcGIS Online) and the
 * hosted feature services it publishes, for the hub connector's suites. No ArcGIS portal can run
 * here. Written from Esri's REST API reference (sharing API: generateToken, community/self,
 * portals/self, isServiceNameAvailable, search, content/items, content/users with addItem,
 * createFolder, publish, status, share, delete; feature services: service and layer resources,
 * query, applyEdits) and checked by Esri's own client (@esri/arcgis-rest-request, -portal,
 * -feature-service) in test/connectors/hub.int.spec.ts.
 *
 *   {url}/sharing/rest/…                                   the portal (url = http://127.0.0.1:port/portal)
 *   http://127.0.0.1:port/server/rest/services/Hosted/{name}/FeatureServer[/{layer}[/query|/applyEdits]]
 *
 * portals/self/servers lists the servers the portal federates with (ArcGIS Enterprise's answer:
 * id, name, url, adminUrl, isHosted, serverType, serverRole, serverFunction): the stand-in's own
 * /server (its hosting server) and any `federated` server URLs it is started with.
 *
 * Tokens come from generateToken (username/password), or are the API key; they are read from
 * the body, the query or the X-Esri-Authorization header, and recorded as such. Errors are ArcGIS
 * error objects with HTTP 200 (498 invalid token, 499 token required, 400 item does not exist or
 * is inaccessible, 403 no permission). applyEdits applies all of a request or none of it
 * (rollbackOnFailure), in one step, as the hosted layer's edit transaction does.
 */

type Attributes = Record<string, unknown>;
export interface HubFeature {
  attributes: Attributes;
  geometry?: Record<string, unknown>;
}
interface Field {
  name: string;
  type: string;
  alias: string;
  editable?: boolean;
  nullable?: boolean;
}
export interface HubLayer {
  id: number;
  name: string;
  geometryType: string | null;
  spatialReference: { wkid: number; latestWkid: number };
  fields: Field[];
  features: Map<number, HubFeature>;
  nextOid: number;
  lastEditDate: number;
}
interface Service {
  name: string;
  layers: HubLayer[];
}
export interface HubItem {
  id: string;
  owner: string;
  title: string;
  type: string;
  name: string | null;
  url: string | null;
  tags: string[];
  typeKeywords: string[];
  created: number;
  modified: number;
  access: 'private' | 'shared' | 'org' | 'public';
  ownerFolder: string | null;
  data?: Buffer;
  service?: string;
}

export interface HubStandIn {
  /** The portal URL (…/portal): the sharing API is at {url}/sharing/rest. */
  url: string;
  sharing: string;
  apiKey: string;
  users: { username: string; password: string }[];
  items: Map<string, HubItem>;
  /** Every request: path and where its token came from. */
  requests: { method: string; path: string; token: 'body' | 'query' | 'header' | null }[];
  /** A hosted feature layer item owned by `owner`, with one layer of these features. */
  addFeatureLayer(
    owner: string,
    title: string,
    layer: { name: string; geometryType: string | null; wkid: number; fields: Field[]; features: HubFeature[] },
    access?: HubItem['access'],
  ): HubItem;
  /** A Feature Service item whose service lives at `url` (anywhere: anyone who can publish an item can name any URL). */
  addServiceItem(owner: string, title: string, url: string, access?: HubItem['access']): HubItem;
  /** A file item (GeoJson, Shapefile, CSV …) holding `data`. */
  addFileItem(owner: string, title: string, type: string, name: string, data: Buffer, access?: HubItem['access']): HubItem;
  /** The rows of a feature layer item's layer, as stored. */
  rows(itemId: string, layer?: number): HubFeature[];
  layer(itemId: string, layer?: number): HubLayer;
  stop(): Promise<void>;
}

const now = () => Date.now();
const newId = () => randomBytes(16).toString('hex');
const esriType = (v: unknown) => (typeof v === 'number' ? (Number.isInteger(v) ? 'esriFieldTypeInteger' : 'esriFieldTypeDouble') : 'esriFieldTypeString');

/** GeoJSON (from a published file) to Esri JSON, independently of the connector's own conversion. */
function esriOf(g: { type: string; coordinates: unknown } | null): { geometry?: Record<string, unknown>; type: string | null } {
  if (!g) return { type: null };
  const c = g.coordinates as never;
  switch (g.type) {
    case 'Point':
      return { geometry: { x: (c as number[])[0], y: (c as number[])[1] }, type: 'esriGeometryPoint' };
    case 'MultiPoint':
      return { geometry: { points: c }, type: 'esriGeometryMultipoint' };
    case 'LineString':
      return { geometry: { paths: [c] }, type: 'esriGeometryPolyline' };
    case 'MultiLineString':
      return { geometry: { paths: c }, type: 'esriGeometryPolyline' };
    case 'Polygon':
      return { geometry: { rings: c }, type: 'esriGeometryPolygon' };
    case 'MultiPolygon':
      return { geometry: { rings: (c as unknown[][]).flat() }, type: 'esriGeometryPolygon' };
    default:
      throw new Error(`unsupported geometry ${g.type}`);
  }
}

/** Whether an Esri JSON geometry has the layer's geometry type. */
function geometryFits(type: string | null, g: Record<string, unknown> | undefined): boolean {
  if (!g) return true;
  if (type === 'esriGeometryPoint') return typeof g.x === 'number' && typeof g.y === 'number';
  if (type === 'esriGeometryMultipoint') return Array.isArray(g.points);
  if (type === 'esriGeometryPolyline') return Array.isArray(g.paths);
  if (type === 'esriGeometryPolygon') return Array.isArray(g.rings);
  return false;
}

async function formOf(req: IncomingMessage, url: URL): Promise<{ fields: Map<string, string>; files: Map<string, { name: string; data: Buffer }> }> {
  const fields = new Map<string, string>(url.searchParams);
  const files = new Map<string, { name: string; data: Buffer }>();
  if (req.method === 'POST') {
    const request = new Request('http://x/', {
      method: 'POST',
      headers: req.headers as Record<string, string>,
      body: Readable.toWeb(req) as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    const form = await request.formData();
    for (const [k, v] of form.entries()) {
      if (typeof v === 'string') fields.set(k, v);
      else files.set(k, { name: (v as File).name, data: Buffer.from(await (v as File).arrayBuffer()) });
    }
  }
  return { fields, files };
}

export async function startHubStandIn(
  options: { users?: { username: string; password: string }[]; apiKeyUser?: string; federated?: string[] } = {},
): Promise<HubStandIn> {
  const users = options.users ?? [
    { username: 'gis_team', password: `pw-${newId().slice(0, 8)}` },
    { username: 'other_user', password: `pw-${newId().slice(0, 8)}` },
  ];
  const apiKey = `AAPK${newId()}`;
  const tokens = new Map<string, string>([[apiKey, options.apiKeyUser ?? users[0]!.username]]);
  const items = new Map<string, HubItem>();
  const services = new Map<string, Service>();
  const folders = new Map<string, { id: string; title: string; username: string; created: number }[]>();
  const publishing = new Map<string, number>(); // serviceItemId → status polls left before "completed"
  const requests: HubStandIn['requests'] = [];
  let origin = '';

  const serviceUrl = (name: string) => `${origin}/server/rest/services/Hosted/${name}/FeatureServer`;
  const itemJson = (i: HubItem) => {
    const { data: _d, service: _s, ...rest } = i;
    return { ...rest, size: i.data?.length ?? 0, snippet: null, description: null, numViews: 0 };
  };

  function createService(name: string, layer: Omit<HubLayer, 'id' | 'features' | 'nextOid' | 'lastEditDate'>, features: HubFeature[]): Service {
    const l: HubLayer = { ...layer, id: 0, features: new Map(), nextOid: 1, lastEditDate: now() };
    for (const f of features) {
      const oid = l.nextOid++;
      l.features.set(oid, { attributes: { ...f.attributes, OBJECTID: oid }, ...(f.geometry ? { geometry: f.geometry } : {}) });
    }
    const service = { name, layers: [l] };
    services.set(name, service);
    return service;
  }

  const oidField: Field = { name: 'OBJECTID', type: 'esriFieldTypeOID', alias: 'OBJECTID', editable: false, nullable: false };

  function addFeatureLayer(owner: string, title: string, layer: Parameters<HubStandIn['addFeatureLayer']>[2], access: HubItem['access'] = 'private'): HubItem {
    const name = `${title.replace(/\W+/g, '_')}_${newId().slice(0, 6)}`;
    createService(
      name,
      {
        name: layer.name,
        geometryType: layer.geometryType,
        spatialReference: { wkid: layer.wkid, latestWkid: layer.wkid },
        fields: [oidField, ...layer.fields],
      },
      layer.features,
    );
    const item: HubItem = {
      id: newId(),
      owner,
      title,
      type: 'Feature Service',
      name,
      url: serviceUrl(name),
      tags: [],
      typeKeywords: ['ArcGIS Server', 'Data', 'Feature Access', 'Feature Service', 'Hosted Service', 'Service'],
      created: now(),
      modified: now(),
      access,
      ownerFolder: null,
      service: name,
    };
    items.set(item.id, item);
    return item;
  }

  function addServiceItem(owner: string, title: string, url: string, access: HubItem['access'] = 'public'): HubItem {
    const item: HubItem = {
      id: newId(),
      owner,
      title,
      type: 'Feature Service',
      name: null,
      url,
      tags: [],
      typeKeywords: ['ArcGIS Server', 'Data', 'Feature Access', 'Feature Service', 'Service'],
      created: now(),
      modified: now(),
      access,
      ownerFolder: null,
    };
    items.set(item.id, item);
    return item;
  }

  function addFileItem(owner: string, title: string, type: string, name: string, data: Buffer, access: HubItem['access'] = 'private'): HubItem {
    const item: HubItem = {
      id: newId(),
      owner,
      title,
      type,
      name,
      url: null,
      tags: [],
      typeKeywords: ['Data'],
      created: now(),
      modified: now(),
      access,
      ownerFolder: null,
      data,
    };
    items.set(item.id, item);
    return item;
  }

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL) {
    const path = url.pathname.replace(/\/+$/, '');
    const { fields, files } = await formOf(req, url);
    const header = /^Bearer (.+)$/.exec(String(req.headers['x-esri-authorization'] ?? ''))?.[1];
    const token = fields.get('token') ?? header;
    requests.push({ method: req.method!, path, token: fields.has('token') ? (url.searchParams.has('token') ? 'query' : 'body') : header ? 'header' : null });
    const json = (body: unknown) => sendJson(res, 200, body, { 'content-type': 'application/json; charset=utf-8' });
    const error = (code: number, message: string, details: string[] = [], messageCode?: string) =>
      json({ error: { code, ...(messageCode ? { messageCode } : {}), message, details } });
    if (fields.get('f') !== 'json' && fields.get('f') !== 'pjson' && !/\/data$/.test(path))
      return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>ArcGIS Portal Directory</html>');
    if (token !== undefined && !tokens.has(token)) return error(498, 'Invalid token.');
    const user = token ? tokens.get(token)! : null;
    const canRead = (i: HubItem) => i.access === 'public' || (user !== null && (i.owner === user || i.access === 'org' || i.access === 'shared'));
    const inaccessible = () => error(400, 'Item does not exist or is inaccessible.', [], 'CONT_0001');

    const sharing = /^\/portal\/sharing\/rest(\/.*)?$/.exec(path);
    if (sharing) {
      const rest = (sharing[1] ?? '').split('/').filter(Boolean).map(decodeURIComponent);
      const route = rest.join('/');
      if (route === 'generateToken') {
        const u = users.find((x) => x.username === fields.get('username') && x.password === fields.get('password'));
        if (!u) return error(400, 'Unable to generate token.', ['Invalid username or password.']);
        const t = newId();
        tokens.set(t, u.username);
        return json({ token: t, expires: now() + Number(fields.get('expiration') ?? 60) * 60_000, ssl: false });
      }
      if (route === 'portals/self') {
        return json({
          id: 'org0stand',
          name: 'City GIS (stand-in)',
          isPortal: true,
          currentVersion: '2024.1',
          urlKey: null,
          ...(user ? { user: { username: user, role: 'org_admin', orgId: 'org0stand' } } : {}),
        });
      }
      if (route === 'portals/self/servers') {
        if (!user) return error(499, 'Token Required');
        const servers = [`${origin}/server`, ...(options.federated ?? [])];
        return json({
          servers: servers.map((url, i) => ({
            id: `srv${i}stand`,
            name: new URL(url).host,
            url,
            adminUrl: url,
            isHosted: i === 0,
            serverType: 'ArcGIS',
            serverRole: i === 0 ? 'HOSTING_SERVER' : 'FEDERATED_SERVER',
            serverFunction: '',
          })),
        });
      }
      if (route === 'community/self') {
        if (!user) return error(499, 'Token Required');
        return json({
          username: user,
          fullName: user,
          role: 'org_admin',
          orgId: 'org0stand',
          privileges: ['portal:user:createItem', 'portal:publisher:publishFeatures'],
        });
      }
      if (route === 'portals/self/isServiceNameAvailable') {
        if (!user) return error(499, 'Token Required');
        return json({ available: !services.has(fields.get('name') ?? '') });
      }
      if (route === 'search') {
        const q = fields.get('q') ?? '';
        const clauses = q
          .split(/\s+AND\s+/)
          .map((c) => c.trim())
          .filter((c) => c && c !== '*');
        const tests = clauses.map((c) => {
          const m = /^(\w+):(?:"([^"]*)"|(\S+))$/.exec(c);
          if (m) {
            const [, field, quoted, bare] = m;
            const value = (quoted ?? bare ?? '').toLowerCase();
            return (i: HubItem) =>
              field === 'title'
                ? i.title.toLowerCase().includes(value)
                : field === 'owner'
                  ? i.owner.toLowerCase() === value
                  : field === 'type'
                    ? i.type.toLowerCase() === value
                    : field === 'id'
                      ? i.id === value
                      : field === 'tags'
                        ? i.tags.some((t) => t.toLowerCase() === value)
                        : false;
          }
          const words = c.toLowerCase().split(/\s+/);
          return (i: HubItem) => words.every((w) => `${i.title} ${i.tags.join(' ')} ${i.type}`.toLowerCase().includes(w));
        });
        let found = [...items.values()].filter((i) => canRead(i) && tests.every((t) => t(i)));
        const sortField = fields.get('sortField');
        if (sortField === 'modified' || sortField === 'title') {
          const dir = fields.get('sortOrder') === 'desc' ? -1 : 1;
          found = [...found].sort((a, b) => (a[sortField] < b[sortField] ? -dir : a[sortField] > b[sortField] ? dir : 0));
        }
        const start = Number(fields.get('start') ?? 1);
        const num = Math.min(Number(fields.get('num') ?? 10), 100);
        const page = found.slice(start - 1, start - 1 + num);
        return json({ query: q, total: found.length, start, num, nextStart: start - 1 + num < found.length ? start + num : -1, results: page.map(itemJson) });
      }
      if (rest[0] === 'content' && rest[1] === 'items' && rest[2]) {
        const item = items.get(rest[2]);
        if (!item) return inaccessible();
        if (!canRead(item))
          return user
            ? error(403, 'You do not have permissions to access this resource or perform this operation.', [], 'GWM_0003')
            : error(499, 'Token Required');
        if (rest.length === 3) return json(itemJson(item));
        if (rest.length === 4 && rest[3] === 'data') {
          if (!item.data) return json({});
          return void res
            .writeHead(200, {
              'content-type': 'application/octet-stream',
              'content-length': item.data.length,
              'content-disposition': `attachment; filename="${item.name}"`,
            })
            .end(item.data);
        }
      }
      if (rest[0] === 'content' && rest[1] === 'users' && rest[2]) {
        const owner = rest[2];
        if (!user) return error(499, 'Token Required');
        if (owner !== user) return error(403, 'You do not have permissions to access this resource or perform this operation.', [], 'GWM_0003');
        const own = folders.get(owner) ?? [];
        const tail = rest.slice(3);
        const folder = tail[0] && own.find((f) => f.id === tail[0]) ? tail.shift()! : null;
        const op = tail.join('/');
        if (op === '') {
          const mine = [...items.values()].filter((i) => i.owner === owner && (i.ownerFolder ?? null) === folder);
          const start = Number(fields.get('start') ?? 1);
          const num = Number(fields.get('num') ?? 10);
          return json({
            username: owner,
            total: mine.length,
            start,
            num,
            nextStart: start - 1 + num < mine.length ? start + num : -1,
            currentFolder: folder ? own.find((f) => f.id === folder) : null,
            items: mine.slice(start - 1, start - 1 + num).map(itemJson),
            folders: folder ? [] : own,
          });
        }
        if (op === 'createFolder') {
          const title = fields.get('title') ?? '';
          if (!title) return error(400, 'Unable to create folder.', ["'title' must be specified."]);
          if (own.some((f) => f.title === title)) return error(400, 'Unable to create folder.', [`Folder title '${title}' not available.`]);
          const f = { id: newId(), title, username: owner, created: now() };
          folders.set(owner, [...own, f]);
          return json({ success: true, folder: f });
        }
        if (op === 'addItem') {
          const file = files.get('file');
          const title = fields.get('title');
          const type = fields.get('type');
          if (!title || !type) return error(400, 'Unable to add item.', ["'title' and 'type' must be specified."]);
          const split = (v: string | undefined) =>
            v
              ? v
                  .split(',')
                  .map((s) => s.trim())
                  .filter(Boolean)
              : [];
          const item: HubItem = {
            id: newId(),
            owner,
            title,
            type,
            name: file?.name ?? fields.get('filename') ?? null,
            url: null,
            tags: split(fields.get('tags')),
            typeKeywords: split(fields.get('typeKeywords')),
            created: now(),
            modified: now(),
            access: 'private',
            ownerFolder: folder,
            ...(file ? { data: file.data } : fields.has('text') ? { data: Buffer.from(fields.get('text')!) } : {}),
          };
          items.set(item.id, item);
          return json({ success: true, id: item.id, folder });
        }
        if (op === 'publish') {
          const source = items.get(fields.get('itemId') ?? '');
          if (!source || source.owner !== owner) return inaccessible();
          if (fields.get('filetype') !== 'geojson' || source.type !== 'GeoJson')
            return json({
              services: [{ success: false, error: { code: 400, message: `filetype ${fields.get('filetype')} is not supported by this stand-in` } }],
            });
          const parameters = JSON.parse(fields.get('publishParameters') ?? '{}') as { name?: string };
          const name = parameters.name ?? '';
          if (!name || services.has(name))
            return json({ services: [{ success: false, error: { code: 400, message: `Service name '${name}' already exists for '${owner}'` } }] });
          const collection = JSON.parse(source.data!.toString('utf8')) as {
            features: { properties: Attributes | null; geometry: { type: string; coordinates: unknown } | null }[];
          };
          const first = collection.features.find((f) => f.geometry);
          const attributeNames = [...new Set(collection.features.flatMap((f) => Object.keys(f.properties ?? {})))];
          const layerFields: Field[] = [
            oidField,
            ...attributeNames.map((n) => ({
              name: n,
              type: esriType(collection.features.map((f) => f.properties?.[n]).find((v) => v !== null && v !== undefined)),
              alias: n,
              editable: true,
              nullable: true,
            })),
          ];
          const converted = collection.features.map((f) => ({ attributes: { ...(f.properties ?? {}) }, ...esriOf(f.geometry) }));
          createService(
            name,
            { name: name, geometryType: first ? esriOf(first.geometry).type : null, spatialReference: { wkid: 4326, latestWkid: 4326 }, fields: layerFields },
            converted.map(({ type: _t, ...f }) => f),
          );
          const item: HubItem = {
            id: newId(),
            owner,
            title: source.title,
            type: 'Feature Service',
            name,
            url: serviceUrl(name),
            tags: source.tags,
            typeKeywords: ['ArcGIS Server', 'Data', 'Feature Access', 'Feature Service', 'Hosted Service', 'Service'],
            created: now(),
            modified: now(),
            access: 'private',
            ownerFolder: source.ownerFolder,
            service: name,
          };
          items.set(item.id, item);
          publishing.set(item.id, 1);
          return json({
            services: [
              { type: 'Feature Service', serviceurl: item.url, size: source.data!.length, jobId: newId(), serviceItemId: item.id, encodedServiceURL: item.url },
            ],
          });
        }
        const itemOp = /^items\/([^/]+)\/(status|share|delete)$/.exec(op);
        if (itemOp) {
          const item = items.get(itemOp[1]!);
          if (!item || item.owner !== owner) return inaccessible();
          if (itemOp[2] === 'status') {
            const left = publishing.get(item.id) ?? 0;
            if (left > 0) {
              publishing.set(item.id, left - 1);
              return json({ status: 'processing', statusMessage: 'processing', itemId: item.id });
            }
            return json({ status: 'completed', statusMessage: 'completed', itemId: item.id });
          }
          if (itemOp[2] === 'share') {
            item.access =
              fields.get('everyone') === 'true' ? 'public' : fields.get('org') === 'true' ? 'org' : fields.get('groups')?.trim() ? 'shared' : 'private';
            return json({ notSharedWith: [], itemId: item.id });
          }
          items.delete(item.id);
          if (item.service) services.delete(item.service);
          return json({ success: true, itemId: item.id });
        }
      }
      return error(400, 'Invalid URL', ['Invalid URL']);
    }

    const fs = /^\/server\/rest\/services\/Hosted\/([^/]+)\/FeatureServer(?:\/(\d+))?(?:\/(query|applyEdits))?$/.exec(path);
    if (fs) {
      const service = services.get(fs[1]!);
      const item = [...items.values()].find((i) => i.service === fs[1]);
      if (!service || !item) return error(400, 'Invalid URL', ['Invalid URL']);
      if (!canRead(item))
        return error(user ? 403 : 499, user ? 'You do not have permissions to access this resource or perform this operation.' : 'Token Required');
      if (fs[2] === undefined) {
        if (fs[3]) return error(400, 'Invalid URL', ['Invalid URL']);
        return json({
          currentVersion: 11.3,
          serviceDescription: '',
          hasVersionedData: false,
          supportsApplyEditsWithGlobalIds: true,
          maxRecordCount: 2000,
          spatialReference: service.layers[0]!.spatialReference,
          layers: service.layers.map((l) => ({ id: l.id, name: l.name, geometryType: l.geometryType })),
          tables: [],
        });
      }
      const layer = service.layers.find((l) => String(l.id) === fs[2]);
      if (!layer) return error(400, 'Invalid URL', ['Invalid URL']);
      if (!fs[3]) {
        return json({
          id: layer.id,
          name: layer.name,
          type: 'Feature Layer',
          geometryType: layer.geometryType,
          spatialReference: layer.spatialReference,
          objectIdField: 'OBJECTID',
          fields: layer.fields,
          maxRecordCount: 50,
          advancedQueryCapabilities: { supportsPagination: true },
          capabilities: 'Query,Editing,Create,Update,Delete',
          editingInfo: { lastEditDate: layer.lastEditDate },
        });
      }
      if (fs[3] === 'query') {
        const match = matcher(fields.get('where') ?? '1=1');
        if (!match) return error(400, 'Unable to complete operation.', ['Unable to perform query operation.', 'Invalid query']);
        let rows = [...layer.features.values()].filter((f) => match(f.attributes as never));
        if (fields.get('returnCountOnly') === 'true') return json({ count: rows.length });
        if (fields.get('returnIdsOnly') === 'true') return json({ objectIdFieldName: 'OBJECTID', objectIds: rows.map((f) => f.attributes.OBJECTID) });
        rows.sort((a, b) => (a.attributes.OBJECTID as number) - (b.attributes.OBJECTID as number));
        const offset = Number(fields.get('resultOffset') ?? 0);
        const count = Math.min(Number(fields.get('resultRecordCount') ?? 50), 50);
        const exceeded = rows.length > offset + count;
        rows = rows.slice(offset, offset + count);
        const withGeometry = fields.get('returnGeometry') !== 'false' && layer.geometryType;
        return json({
          objectIdFieldName: 'OBJECTID',
          geometryType: layer.geometryType,
          spatialReference: layer.spatialReference,
          fields: layer.fields,
          features: rows.map((f) => (withGeometry ? f : { attributes: f.attributes })),
          ...(exceeded ? { exceededTransferLimit: true } : {}),
        });
      }
      // applyEdits: all of it or none of it, in one step
      if (!user || item.owner !== user)
        return error(user ? 403 : 499, user ? 'You do not have permissions to access this resource or perform this operation.' : 'Token Required');
      let adds: HubFeature[];
      let deletes: number[];
      try {
        adds = JSON.parse(fields.get('adds') || '[]');
        const raw = fields.get('deletes') ?? '';
        deletes = raw.startsWith('[') ? JSON.parse(raw) : raw.split(',').filter(Boolean).map(Number);
      } catch {
        return error(400, 'Unable to complete operation.', ['Invalid parameters']);
      }
      const editable = new Map(layer.fields.filter((f) => f.editable !== false).map((f) => [f.name.toLowerCase(), f.name]));
      const next = new Map(layer.features);
      const deleteResults = deletes.map((oid) =>
        next.delete(oid) ? { objectId: oid, success: true } : { objectId: oid, success: false, error: { code: 1019, description: 'Object is missing.' } },
      );
      let oid = layer.nextOid;
      const addResults = adds.map((f) => {
        const unknown = Object.keys(f.attributes ?? {}).filter((k) => !editable.has(k.toLowerCase()));
        if (unknown.length) return { objectId: null, success: false, error: { code: 1000, description: `Invalid column name '${unknown[0]}'.` } };
        if (!geometryFits(layer.geometryType, f.geometry))
          return { objectId: null, success: false, error: { code: 1000, description: 'Geometry type does not match the layer.' } };
        const id = oid++;
        next.set(id, { attributes: { ...f.attributes, OBJECTID: id }, ...(f.geometry ? { geometry: f.geometry } : {}) });
        return { objectId: id, success: true };
      });
      const failed = [...addResults, ...deleteResults].some((r) => !r.success);
      if (failed && fields.get('rollbackOnFailure') !== 'false') {
        return json({
          addResults: addResults.map((r) => (r.success ? { ...r, success: false, error: { code: 1003, description: 'Operation rolled back.' } } : r)),
          updateResults: [],
          deleteResults,
        });
      }
      layer.features = next;
      layer.nextOid = oid;
      layer.lastEditDate = now();
      return json({ addResults, updateResults: [], deleteResults });
    }
    res.writeHead(404, { 'content-type': 'text/html' }).end('<html>Not found</html>');
  }

  const standIn = await listenStandIn(handle);
  origin = standIn.url;
  const layerOf = (itemId: string, l = 0) => services.get(items.get(itemId)!.service!)!.layers[l]!;
  return {
    url: `${origin}/portal`,
    sharing: `${origin}/portal/sharing/rest`,
    apiKey,
    users,
    items,
    requests,
    addFeatureLayer,
    addServiceItem,
    addFileItem,
    layer: layerOf,
    rows: (itemId, l = 0) => [...layerOf(itemId, l).features.values()],
    stop: standIn.stop,
  };
}
