import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listenStandIn, readBody, sendJson } from '../standin.js';

/*
 * A stand-in for CKAN's Action API (API version 3) and its file store, for the ckan connector's
 * suites. It follows CKAN 2.12 as ckan/ckan's source reads at commit 2dbe2c1 (August 2026, master,
 * 2.13.0a0; the parts below are as in 2.12.0): ckan/logic/action/get.py (status_show, package_show,
 * resource_show, package_search, user_show), ckan/logic/auth/get.py, ckan/views/resource.py
 * (download), ckan/logic/validators.py (if_empty_guess_format, clean_format) and
 * ckan/config/resource_formats.json. It is checked by ckanapi (PyPI) in
 * test/connectors/ckan.int.spec.ts, and what it answers was compared with a real CKAN 2.12.0
 * (PyPI, with Solr 9.10.1) in this repository's test/connectors/ckan-real.e2e.spec.ts: private
 * downloads without a token 403, formats ("csv" → "CSV", "Shapefile" → "SHP", ".csv" kept as
 * typed, none → guessed from the file name), upload URLs under ckan.site_url, Last-Modified and
 * 304 on downloads, an unknown token read as anonymous.
 *
 * The real CKAN runs in npm test (test/servers/ckan/real.ts); this stand-in is kept only for what
 * the real one cannot show: resources dated at will (CKAN stamps last_modified with the upload's
 * own time, so "the newest of a format" among older dates, and a re-upload under a chosen date,
 * cannot be arranged), and a log of which requests carried the API token (the real portal keeps
 * none). It also runs where Java or the CKAN install is missing.
 *
 * - POST (JSON or form body) or GET (query) /api/3/action/{name}; answers
 *   {"help": …, "success": true, "result": …} or {"help": …, "success": false, "error":
 *   {"__type": "Not Found Error" | "Authorization Error" | "Validation Error", …}} with 404 / 403 / 409.
 * - status_show (with site_url), package_show (id or name), resource_show, package_search (q, rows,
 *   start), package_list, user_show (no id: the token's user; anonymous: Not Found).
 * - An unknown API token is anonymous, as CKAN treats it. Private datasets are readable with the
 *   API token in Authorization (or X-CKAN-API-Key); others get Authorization Error from the API and
 *   403 "Not authorized to download resource" from the download.
 * - Formats are stored as CKAN stores them: typed names become the short name of
 *   resource_formats.json ("csv" → "CSV", "Shapefile" → "SHP"), and a resource without a format
 *   gets the one guessed from its URL's file name.
 * - Uploaded files at {site_url}/dataset/{id}/resource/{rid}/download/{name}: CKAN builds the URL
 *   from ckan.site_url (option siteUrl; default the stand-in's own URL), whatever host the request
 *   used. Downloads send ETag and Last-Modified and answer If-None-Match / If-Modified-Since with
 *   304, as Flask's send_file does. Links elsewhere are stored as given (the suites point one at
 *   http://localhost:port/external/…, another origin).
 */

export interface StandInResource {
  id: string;
  package_id: string;
  name: string;
  format: string;
  url: string;
  url_type: 'upload' | null;
  last_modified: string | null;
  metadata_modified: string;
  created: string;
  hash: string;
  size: number | null;
  mimetype: string | null;
  position: number;
  description: string;
  state: 'active';
}

interface Dataset {
  id: string;
  name: string;
  title: string;
  private: boolean;
  resources: StandInResource[];
  metadata_modified: string;
}

export interface CkanStandIn {
  url: string;
  /** The same server under another origin (http://localhost:port): for links to "another host". */
  otherOrigin: string;
  token: string;
  /** The user the token belongs to. */
  user: string;
  /** ckan.site_url: where upload URLs point. */
  siteUrl: string;
  addDataset(d: { name: string; title: string; private?: boolean }): Dataset;
  /** Adds an uploaded resource (its file served by the stand-in); `at` is its last_modified. */
  upload(dataset: string, r: { name: string; format: string; filename: string; body: Buffer; at: string; mimetype?: string }): StandInResource;
  /** Replaces an uploaded resource's file (last_modified moves on). */
  reupload(resourceId: string, body: Buffer, at: string): void;
  /** Adds a link resource to any URL. */
  link(dataset: string, r: { name: string; format: string; url: string; at: string | null }): StandInResource;
  /** Serves `body` at /external/{name} (on either origin): the target of link resources. */
  external(name: string, body: Buffer): void;
  /** Requests received: path and whether they carried the token. */
  requests: { method: string; path: string; authorized: boolean }[];
  stop(): Promise<void>;
}

const help = (base: string, name: string) => `${base}/api/3/action/help_show?name=${name}`;

async function paramsOf(req: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
  if (req.method !== 'POST') return params;
  const text = (await readBody(req)).toString();
  if (!text) return params;
  if (/json/.test(req.headers['content-type'] ?? '')) return { ...params, ...JSON.parse(text) };
  return { ...params, ...Object.fromEntries(new URLSearchParams(text)) };
}

/** The rows of resource_formats.json the suites use: every spelling → CKAN's short name. */
const FORMATS: Record<string, string> = {
  csv: 'CSV',
  'comma separated values file': 'CSV',
  'text/csv': 'CSV',
  geojson: 'GeoJSON',
  'application/geo+json': 'GeoJSON',
  json: 'JSON',
  'application/json': 'JSON',
  shp: 'SHP',
  shapefile: 'SHP',
  'esri shapefile': 'SHP',
  zip: 'ZIP',
  'application/zip': 'ZIP',
  kml: 'KML',
};
/** Python's mimetypes.guess_type for the extensions the suites use (what if_empty_guess_format stores before clean_format). */
const GUESSED: Record<string, string> = { csv: 'text/csv', json: 'application/json', zip: 'application/zip', kml: 'application/vnd.google-earth.kml+xml' };
const cleanFormat = (format: string, url: string): string => {
  const typed = format || GUESSED[/\.([a-z0-9]+)$/i.exec(new URL(url, 'http://x').pathname)?.[1]?.toLowerCase() ?? ''] || '';
  return FORMATS[typed.toLowerCase()] ?? typed;
};

export async function startCkanStandIn(options: { token?: string; version?: string; siteUrl?: (base: string) => string } = {}): Promise<CkanStandIn> {
  const token = options.token ?? `ckan-token-${randomUUID()}`;
  const user = 'publisher';
  let siteUrl = '';
  const datasets = new Map<string, Dataset>();
  const files = new Map<string, { body: Buffer; type: string; etag: string }>();
  const externals = new Map<string, Buffer>();
  const requests: CkanStandIn['requests'] = [];
  let base = '';

  const findDataset = (idOrName: string) => [...datasets.values()].find((d) => d.id === idOrName || d.name === idOrName);
  const findResource = (id: string) => {
    for (const d of datasets.values()) {
      const r = d.resources.find((x) => x.id === id);
      if (r) return { dataset: d, resource: r };
    }
    return undefined;
  };
  const packageDict = (d: Dataset) => ({
    id: d.id,
    name: d.name,
    title: d.title,
    private: d.private,
    state: 'active',
    type: 'dataset',
    license_id: 'cc-by',
    notes: '',
    num_resources: d.resources.length,
    num_tags: 0,
    metadata_created: d.resources[0]?.created ?? d.metadata_modified,
    metadata_modified: d.metadata_modified,
    organization: { name: 'city', title: 'City' },
    tags: [],
    extras: [],
    groups: [],
    resources: d.resources,
  });

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL) {
    const presented = req.headers.authorization ?? req.headers['x-ckan-api-key'];
    const authorized = presented === token;
    requests.push({ method: req.method!, path: url.pathname, authorized: presented !== undefined });
    const json = (status: number, body: unknown) => sendJson(res, status, body, { 'content-type': 'application/json;charset=utf-8' });

    const action = /^\/api\/(?:3\/)?action\/(\w+)$/.exec(url.pathname);
    if (action) {
      const name = action[1]!;
      const params = await paramsOf(req, url);
      const ok = (result: unknown) => json(200, { help: help(base, name), success: true, result });
      const fail = (status: number, error: Record<string, unknown>) => json(status, { help: help(base, name), success: false, error });
      const notFound = (what = 'Not found') => fail(404, { __type: 'Not Found Error', message: what });
      const missing = (field: string) => fail(409, { __type: 'Validation Error', [field]: ['Missing value'] });
      const readable = (d: Dataset) => !d.private || authorized;
      switch (name) {
        case 'status_show':
          return ok({
            site_title: 'City Open Data (stand-in)',
            site_description: '',
            site_url: siteUrl,
            ckan_version: options.version ?? '2.12.0',
            error_emails_to: null,
            locale_default: 'en',
            extensions: ['stats', 'text_view'],
          });
        case 'package_list':
          return ok(
            [...datasets.values()]
              .filter((d) => !d.private)
              .map((d) => d.name)
              .sort(),
          );
        case 'package_show': {
          const id = String(params.id ?? params.name_or_id ?? '');
          if (!id) return missing('name_or_id');
          const d = findDataset(id);
          if (!d) return notFound();
          if (!readable(d)) return fail(403, { __type: 'Authorization Error', message: `Access denied: User  not authorized to read package ${d.id}` });
          return ok(packageDict(d));
        }
        case 'resource_show': {
          const id = String(params.id ?? '');
          if (!id) return missing('id');
          const found = findResource(id);
          if (!found) return notFound('Resource was not found.');
          if (!readable(found.dataset))
            return fail(403, { __type: 'Authorization Error', message: `Access denied: User  not authorized to read resource ${id}` });
          return ok(found.resource);
        }
        case 'package_search': {
          const q = String(params.q ?? '').toLowerCase();
          const rows = Math.min(Number(params.rows ?? 10), 1000);
          const start = Number(params.start ?? 0);
          const all = [...datasets.values()].filter(
            (d) =>
              (!d.private || (authorized && String(params.include_private) === 'true')) &&
              (!q || q === '*:*' || `${d.name} ${d.title}`.toLowerCase().includes(q)),
          );
          return ok({
            count: all.length,
            facets: {},
            search_facets: {},
            sort: 'score desc, metadata_modified desc',
            results: all.slice(start, start + rows).map(packageDict),
          });
        }
        case 'user_show': {
          // No id: the requesting user; anonymous (no token, or one CKAN does not know) has none.
          const id = String(params.id ?? (authorized ? user : ''));
          if (id !== user) return notFound('User not found');
          return ok({
            id: 'u-1',
            name: user,
            display_name: 'Publisher',
            state: 'active',
            sysadmin: false,
            ...(authorized ? { email: `${user}@example.org` } : {}),
          });
        }
        default:
          return fail(400, { __type: 'Bad request', message: `Bad request - Action name not known: ${name}` });
      }
    }

    const download = /^\/dataset\/([^/]+)\/resource\/([^/]+)\/download\/[^/]+$/.exec(url.pathname);
    if (download) {
      const found = findResource(download[2]!);
      const file = files.get(download[2]!);
      if (!found || !file) return res.writeHead(404, { 'content-type': 'text/html' }).end('Resource not found');
      // views/resource.py: NotAuthorized → 403.
      if (found.dataset.private && !authorized) return res.writeHead(403, { 'content-type': 'text/html' }).end('Not authorized to download resource');
      const lastModified = new Date(`${found.resource.last_modified ?? found.resource.created}Z`);
      lastModified.setMilliseconds(0);
      const validators = { etag: file.etag, 'last-modified': lastModified.toUTCString() };
      const since = Date.parse(req.headers['if-modified-since'] ?? '');
      const notModified = req.headers['if-none-match'] !== undefined ? req.headers['if-none-match'] === file.etag : since >= lastModified.getTime();
      if (notModified) return res.writeHead(304, validators).end();
      return res.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length, ...validators }).end(file.body);
    }
    const external = /^\/external\/(.+)$/.exec(url.pathname);
    if (external && externals.has(external[1]!)) {
      const body = externals.get(external[1]!)!;
      return res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
    }
    res.writeHead(404, { 'content-type': 'text/html' }).end('<html>Not found</html>');
  }

  const standIn = await listenStandIn(handle);
  const port = standIn.port;
  base = standIn.url;
  siteUrl = options.siteUrl?.(base) ?? base;
  const etagOf = (body: Buffer) => `"${createHash('sha1').update(body).digest('hex').slice(0, 16)}"`;

  const add = (
    dataset: string,
    r: Omit<StandInResource, 'id' | 'package_id' | 'position' | 'description' | 'state' | 'metadata_modified' | 'created'> & { at: string | null; id?: string },
  ) => {
    const d = datasets.get(dataset);
    if (!d) throw new Error(`no dataset ${dataset}`);
    const { at, ...rest } = r;
    const created = at ?? new Date().toISOString().replace('Z', '');
    const resource: StandInResource = {
      ...rest,
      format: cleanFormat(rest.format, rest.url),
      id: r.id ?? randomUUID(),
      package_id: d.id,
      position: d.resources.length,
      description: '',
      state: 'active',
      created,
      metadata_modified: created,
    };
    d.resources.push(resource);
    d.metadata_modified = created;
    return resource;
  };

  return {
    url: base,
    otherOrigin: `http://localhost:${port}`,
    token,
    user,
    get siteUrl() {
      return siteUrl;
    },
    requests,
    addDataset(d) {
      const dataset: Dataset = {
        id: randomUUID(),
        name: d.name,
        title: d.title,
        private: d.private ?? false,
        resources: [],
        metadata_modified: new Date().toISOString().replace('Z', ''),
      };
      datasets.set(d.name, dataset);
      return dataset;
    },
    upload(dataset, r) {
      const id = randomUUID();
      const packageId = datasets.get(dataset)!.id;
      files.set(id, { body: r.body, type: r.mimetype ?? 'application/octet-stream', etag: etagOf(r.body) });
      return add(dataset, {
        id,
        name: r.name,
        format: r.format,
        url: `${siteUrl}/dataset/${packageId}/resource/${id}/download/${r.filename}`,
        url_type: 'upload',
        last_modified: r.at,
        at: r.at,
        hash: '',
        size: r.body.length,
        mimetype: r.mimetype ?? null,
      });
    },
    reupload(resourceId, body, at) {
      const found = findResource(resourceId)!;
      files.set(resourceId, { ...files.get(resourceId)!, body, etag: etagOf(body) });
      Object.assign(found.resource, { last_modified: at, metadata_modified: at, size: body.length });
    },
    link(dataset, r) {
      return add(dataset, { name: r.name, format: r.format, url: r.url, url_type: null, last_modified: r.at, at: r.at, hash: '', size: null, mimetype: null });
    },
    external(name, body) {
      externals.set(name, body);
    },
    stop: standIn.stop,
  };
}
