import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../../../devservers/ports.js';
import { untilServing } from '../serving.js';

/*
 * pygeoapi (a real OGC API - Features server, from PyPI; install.sh puts it in a venv) serving
 * local files on loopback. Each collection is a TinyDB file (pygeoapi's JSON-file provider,
 * which also honours the `datetime` parameter on a configured time field).
 */

const venv = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'tools', 'pygeoapi');
const python = path.join(venv, 'bin', 'python');

/** Why the suite cannot run, or false. */
export const skipWithoutPygeoapi = existsSync(path.join(venv, 'bin', 'pygeoapi'))
  ? false
  : `pygeoapi is not installed in ${venv}: run \`npm test\` (test/servers/pygeoapi/install.sh installs it)`;

export interface Collection {
  id: string;
  features: { id: string | number; properties: Record<string, unknown>; geometry: unknown }[];
  /** Property the `datetime` parameter filters on. */
  timeField?: string;
}

export interface Pygeoapi {
  url: string;
  /** Replaces a collection's features (pygeoapi's TinyDB provider reads its file on each request). */
  write(collection: Collection): void;
  stop(): Promise<void>;
}

/** 120 places, one a minute from 2024-03-01T08:00Z, on a 12 × 10 grid around Bern. */
export function placesCollection(count = 120): Collection {
  return {
    id: 'places',
    timeField: 'updated',
    features: Array.from({ length: count }, (_, i) => ({
      id: `p${i + 1}`,
      properties: { name: `Place ${i + 1}`, rank: i % 7, updated: new Date(Date.UTC(2024, 2, 1, 8, i)).toISOString().replace('.000Z', 'Z') },
      geometry: { type: 'Point', coordinates: [7 + (i % 12) * 0.01, 46.9 + Math.floor(i / 12) * 0.01] },
    })),
  };
}

function tinydb(collection: Collection): string {
  const rows = Object.fromEntries(
    collection.features.map((f, i) => [String(i + 1), { type: 'Feature', id: f.id, properties: { id: f.id, ...f.properties }, geometry: f.geometry }]),
  );
  return JSON.stringify({ _default: rows });
}

function configOf(url: string, port: number, dir: string, collections: Collection[]) {
  const contact = Object.fromEntries(
    ['name', 'position', 'address', 'city', 'stateorprovince', 'postalcode', 'country', 'phone', 'fax', 'hours', 'instructions'].map((k) => [k, 'test']),
  );
  return {
    server: {
      bind: { host: '127.0.0.1', port },
      url,
      mimetype: 'application/json; charset=UTF-8',
      encoding: 'utf-8',
      language: 'en-US',
      limits: { default_items: 10, max_items: 50 },
      map: { url: 'http://127.0.0.1/{z}/{x}/{y}.png', attribution: 'none' },
    },
    logging: { level: 'ERROR' },
    metadata: {
      identification: {
        title: 'geoflow tests',
        description: 'test data',
        keywords: ['test'],
        keywords_type: 'theme',
        terms_of_service: 'http://127.0.0.1/',
        url: 'http://127.0.0.1/',
      },
      license: { name: 'CC0', url: 'http://127.0.0.1/' },
      provider: { name: 'geoflow', url: 'http://127.0.0.1/' },
      contact: { ...contact, email: 'test@example.org', url: 'http://127.0.0.1/', role: 'pointOfContact' },
    },
    resources: Object.fromEntries(
      collections.map((c) => [
        c.id,
        {
          type: 'collection',
          title: c.id,
          description: `${c.id} (test data)`,
          keywords: [c.id],
          extents: { spatial: { bbox: [-180, -90, 180, 90], crs: 'http://www.opengis.net/def/crs/OGC/1.3/CRS84' } },
          providers: [
            { type: 'feature', name: 'TinyDB', data: path.join(dir, `${c.id}.json`), id_field: 'id', ...(c.timeField ? { time_field: c.timeField } : {}) },
          ],
        },
      ]),
    ),
  };
}

/**
 * Starts pygeoapi on a free loopback port with `collections`, its files in a temp folder.
 * The server pages with at most 50 items per response (max_items), so paging is exercised.
 */
export async function startPygeoapi(collections: Collection[]): Promise<Pygeoapi> {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-pygeoapi-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const write = (c: Collection) => writeFileSync(path.join(dir, `${c.id}.json`), tinydb(c));
  collections.forEach(write);
  const config = path.join(dir, 'config.yml');
  const openapi = path.join(dir, 'openapi.yml');
  // JSON is YAML: no YAML writer needed
  writeFileSync(config, JSON.stringify(configOf(url, port, dir, collections)));
  const env = { ...process.env, PYGEOAPI_CONFIG: config, PYGEOAPI_OPENAPI: openapi };
  const generated = spawnSync(path.join(venv, 'bin', 'pygeoapi'), ['openapi', 'generate', config, '--output-file', openapi], { env, encoding: 'utf8' });
  if (generated.status !== 0) throw new Error(`pygeoapi openapi generate failed: ${generated.stderr}`);
  // Flask without the reloader (pygeoapi's own `serve` forks a watcher that outlives a kill)
  const child: ChildProcess = spawn(
    python,
    ['-c', `from pygeoapi.flask_app import APP; APP.run(host="127.0.0.1", port=${port}, debug=False, use_reloader=False, threaded=True)`],
    {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const stop = await untilServing('pygeoapi', child, dir, `${url}/collections`, { headers: { accept: 'application/json' } });
  return { url, write, stop };
}
