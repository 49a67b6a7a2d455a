import { mkdtempSync, rmSync, writeFileSync, readFileSync, renameSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import gdal from 'gdal-async';
import { ogrLayerInfo } from '../ogrinfo.js';
import { basicAuth, readBody, sendJson, serveStandIn, type StandIn } from '../standin.js';

/*
 * A stand-in for GeoNode's REST API v2 (GeoNode itself needs a GeoServer, which cannot run here),
 * written from GeoNode's API reference and its code: /api/v2/datasets (dynamic-rest filters
 * `filter{name}` and `filter{alternate}`, `search`, `page`, `page_size`), PATCH of a dataset's
 * metadata, /api/v2/uploads/upload (multipart `base_file`, `action` upload or replace with
 * `resource_pk`) answered with an `execution_id`, and /api/v2/executionrequest/{id}, which says
 * `running` once before `finished` (imports are asynchronous in GeoNode). Each dataset advertises
 * a `data` link to its GeoPackage and a `download_url`. Authentication: HTTP Basic or a Bearer
 * token. The suite checks its answers with the geonodectl client library (check-client.py).
 */

interface Dataset {
  pk: number;
  name: string;
  title: string;
  abstract: string;
  file: string;
  features: number;
  epsg: number | null;
}

export interface GeonodeStandIn extends StandIn {
  username: string;
  password: string;
  token: string;
  /** The stored GeoPackage of a dataset, for server-side checks. */
  fileOf(pk: number): string | null;
  /** Seeds a dataset from a local GeoPackage (as an earlier upload would have). */
  add(name: string, title: string, gpkg: string): number;
}

function inspect(file: string): { features: number; epsg: number | null; table: string } {
  const ds = gdal.open(file);
  try {
    const layer = ds.layers.get(0);
    return { features: layer.features.count(), epsg: ogrLayerInfo(file, layer.name).epsg, table: layer.name };
  } finally {
    ds.close();
  }
}

export async function startGeonode(): Promise<GeonodeStandIn> {
  const username = 'editor';
  const password = 'geonode-test-password';
  const token = 'geonode-test-token-8d1f';
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-geonode-'));
  const datasets = new Map<number, Dataset>();
  const executions = new Map<
    string,
    { polls: number; status: 'running' | 'finished' | 'failed'; resources: number[]; log: string | null; name: string; created: string }
  >();
  let nextPk = 1;
  let nextExec = 1;
  let base = '';

  const represent = (d: Dataset) => ({
    pk: String(d.pk),
    uuid: `00000000-0000-4000-8000-${String(d.pk).padStart(12, '0')}`,
    name: d.name,
    alternate: `geonode:${d.name}`,
    title: d.title,
    abstract: d.abstract,
    resource_type: 'dataset',
    subtype: 'vector',
    srid: d.epsg ? `EPSG:${d.epsg}` : null,
    detail_url: `/catalogue/#/dataset/${d.pk}`,
    download_url: `${base}/datasets/geonode:${d.name}/dataset_download`,
    links: [
      { extension: 'gpkg', link_type: 'data', name: 'GeoPackage', mime: 'application/geopackage+sqlite3', url: `${base}/download/${d.pk}/${d.name}.gpkg` },
      { extension: 'html', link_type: 'html', name: d.name, mime: 'text/html', url: `${base}/catalogue/#/dataset/${d.pk}` },
    ],
    owner: { pk: 1000, username },
    is_published: true,
    is_approved: true,
    state: 'PROCESSED',
  });
  const store = (name: string, title: string, source: Buffer, pk?: number): Dataset => {
    const id = pk ?? nextPk++;
    const file = path.join(dir, `${id}-${Date.now()}.gpkg`);
    writeFileSync(`${file}.part`, source);
    const info = inspect(`${file}.part`);
    renameSync(`${file}.part`, file);
    const d: Dataset = { pk: id, name, title, abstract: datasets.get(id)?.abstract ?? '', file, features: info.features, epsg: info.epsg };
    datasets.set(id, d);
    return d;
  };

  const authorized = (req: IncomingMessage) => req.headers.authorization === basicAuth(username, password) || req.headers.authorization === `Bearer ${token}`;

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL) {
    const body = await readBody(req);
    const method = req.method ?? 'GET';
    const parts = url.pathname.replace(/\/+$/, '').split('/').slice(1).map(decodeURIComponent);
    if (!authorized(req)) return sendJson(res, 401, { detail: 'Authentication credentials were not provided.' });
    if (parts[0] === 'download' || (parts[0] === 'datasets' && parts[2] === 'dataset_download')) {
      const d = parts[0] === 'download' ? datasets.get(Number(parts[1])) : [...datasets.values()].find((x) => `geonode:${x.name}` === parts[1]);
      if (!d) return sendJson(res, 404, { detail: 'Not found.' });
      const bytes = readFileSync(d.file);
      res.writeHead(200, {
        'content-type': 'application/geopackage+sqlite3',
        'content-disposition': `attachment; filename="${d.name}.gpkg"`,
        'content-length': bytes.length,
      });
      return res.end(bytes);
    }
    if (parts[0] !== 'api' || parts[1] !== 'v2') return sendJson(res, 404, { detail: 'Not found.' });
    const [, , what, id] = parts;
    if (what === 'datasets' && !id && method === 'GET') {
      let list = [...datasets.values()].sort((a, b) => b.pk - a.pk);
      const byName = url.searchParams.get('filter{name}');
      const byAlternate = url.searchParams.get('filter{alternate}');
      const search = url.searchParams.get('search')?.toLowerCase();
      if (byName) list = list.filter((d) => d.name === byName);
      if (byAlternate) list = list.filter((d) => `geonode:${d.name}` === byAlternate);
      if (search) list = list.filter((d) => `${d.title} ${d.abstract} ${d.name}`.toLowerCase().includes(search));
      const page = Number(url.searchParams.get('page') ?? 1);
      const size = Number(url.searchParams.get('page_size') ?? 10);
      if (!(page >= 1) || !(size >= 1)) return sendJson(res, 400, { detail: 'Invalid page.' });
      if (page > 1 && (page - 1) * size >= list.length) return sendJson(res, 404, { detail: 'Invalid page.' });
      const next = page * size < list.length ? `${base}/api/v2/datasets?page=${page + 1}&page_size=${size}` : null;
      const previous = page > 1 ? `${base}/api/v2/datasets?page=${page - 1}&page_size=${size}` : null;
      return sendJson(res, 200, {
        links: { next, previous },
        total: list.length,
        page,
        page_size: size,
        datasets: list.slice((page - 1) * size, page * size).map(represent),
      });
    }
    if (what === 'datasets' && id) {
      const d = datasets.get(Number(id));
      if (!d) return sendJson(res, 404, { detail: 'No Dataset matches the given query.' });
      if (method === 'GET') return sendJson(res, 200, { dataset: represent(d) });
      if (method === 'PATCH') {
        const patch = JSON.parse(body.toString('utf8') || '{}') as { title?: string; abstract?: string };
        if (patch.title !== undefined) d.title = patch.title;
        if (patch.abstract !== undefined) d.abstract = patch.abstract;
        return sendJson(res, 200, { dataset: represent(d) });
      }
    }
    if (what === 'uploads' && id === 'upload' && method === 'POST') {
      const form = await new Response(new Uint8Array(body), { headers: { 'content-type': req.headers['content-type'] ?? '' } }).formData().catch(() => null);
      const file = form?.get('base_file');
      if (!form || !(file instanceof Blob)) return sendJson(res, 400, { success: false, errors: ['base_file: No file was submitted.'] });
      const action = String(form.get('action') ?? 'upload');
      const fileName = (file as File).name ?? 'upload.gpkg';
      const execId = `${String(nextExec++).padStart(8, '0')}-0000-4000-8000-000000000000`;
      const bytes = Buffer.from(await file.arrayBuffer());
      const created = new Date().toISOString();
      try {
        if (action === 'replace') {
          const target = datasets.get(Number(form.get('resource_pk')));
          if (!target) return sendJson(res, 400, { success: false, errors: ['resource_pk: the resource to replace does not exist'] });
          store(target.name, target.title, bytes, target.pk);
          executions.set(execId, { polls: 0, status: 'finished', resources: [target.pk], log: null, name: fileName, created });
        } else {
          const name = path
            .basename(fileName, path.extname(fileName))
            .toLowerCase()
            .replace(/[^a-z0-9_]/g, '_');
          if (!/\.(gpkg|geojson|json|zip|csv|shp)$/i.test(fileName)) return sendJson(res, 400, { success: false, errors: ['Unsupported file type'] });
          const d = store(name, name, bytes);
          executions.set(execId, { polls: 0, status: 'finished', resources: [d.pk], log: null, name: fileName, created });
        }
      } catch (error) {
        executions.set(execId, { polls: 0, status: 'failed', resources: [], log: `Invalid dataset: ${(error as Error).message}`, name: fileName, created });
      }
      return sendJson(res, 201, { success: true, status: 'ready', execution_id: execId });
    }
    if (what === 'executionrequest' && id && method === 'GET') {
      const e = executions.get(id);
      if (!e) return sendJson(res, 404, { detail: 'Not found.' });
      // GeoNode imports in the background: the first look finds it still running.
      const status = e.polls++ === 0 ? 'running' : e.status;
      return sendJson(res, 200, {
        request: {
          exec_id: id,
          user: username,
          status,
          func_name: 'import_orchestrator',
          created: e.created,
          name: e.name,
          source: 'upload',
          step: status === 'running' ? 'importer.import_resource' : 'end',
          log: status === 'failed' ? e.log : null,
          link: `${base}/api/v2/executionrequest/${id}`,
          output_params: status === 'finished' ? { resources: e.resources.map((pk) => ({ id: pk, detail_url: `/catalogue/#/dataset/${pk}` })) } : {},
        },
      });
    }
    return sendJson(res, 404, { detail: 'Not found.' });
  }

  const standIn = await serveStandIn(handle);
  base = standIn.url;
  return {
    ...standIn,
    username,
    password,
    token,
    fileOf: (pk) => datasets.get(pk)?.file ?? null,
    add: (name, title, gpkg) => store(name, title, readFileSync(gpkg)).pk,
    async stop() {
      await standIn.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
