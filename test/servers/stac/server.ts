import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../../../devservers/ports.js';
import { untilServing } from '../serving.js';
import { pointsGeoJson, constantGeoTiff } from '../../support/fixtures.js';
import { startHttpFixtureServer, type HttpFixtureServer } from '../http/server.js';

/*
 * A static STAC catalog (STAC 1.0.0, relative links, the best-practice folder layout) written
 * into a temp folder and served by the local HTTP server:
 *
 *   catalog.json                              Catalog "geoflow-test"
 *   ├── parcels/collection.json               Collection "parcels"
 *   │   ├── parcels-2024/parcels-2024.json    Item: data (GeoJSON), thumbnail (PNG), archive (GeoPackage)
 *   │   ├── misc/odd-name.json                Item "renamed-item" (its path does not name it)
 *   │   └── (an item link to a missing file)
 *   └── imagery/catalog.json                  Catalog "imagery"
 *       └── scenes/collection.json            Collection "scenes"
 *           └── scene-1/scene-1.json          Item: visual (GeoTIFF, no extension, typed) and cloud (s3:// with an
 *                                             https alternate), both data; raw (s3:// only)
 *
 * With `bearer`, the catalog is served under /bearer/files/ and needs the token; the GeoTIFF of
 * scene-1 can be placed on another origin (`assetsElsewhere`) to check where the token goes.
 */

export interface StacServer {
  /** URL of catalog.json. */
  url: string;
  files: HttpFixtureServer;
  dir: string;
  stop(): Promise<void>;
}

const stacVersion = '1.0.0';
const link = (rel: string, href: string, type = 'application/json') => ({ rel, href, type });

function item(id: string, collection: string, assets: Record<string, unknown>, bbox = [7.4, 46.9, 7.5, 47.0]) {
  return {
    type: 'Feature',
    stac_version: stacVersion,
    id,
    collection,
    bbox,
    geometry: {
      type: 'Polygon',
      coordinates: [
        [
          [bbox[0], bbox[1]],
          [bbox[2], bbox[1]],
          [bbox[2], bbox[3]],
          [bbox[0], bbox[3]],
          [bbox[0], bbox[1]],
        ],
      ],
    },
    properties: { datetime: '2024-05-01T00:00:00Z' },
    links: [link('root', '../../catalog.json'), link('parent', '../collection.json'), link('collection', '../collection.json')],
    assets,
  };
}

const catalog = (id: string, description: string, links: ReturnType<typeof link>[]) => ({ type: 'Catalog', stac_version: stacVersion, id, description, links });

function collection(id: string, items: string[], rootHref: string) {
  return {
    type: 'Collection',
    stac_version: stacVersion,
    id,
    description: `${id} (test data)`,
    license: 'CC0-1.0',
    extent: { spatial: { bbox: [[7.4, 46.9, 7.5, 47.0]] }, temporal: { interval: [['2024-01-01T00:00:00Z', null]] } },
    links: [link('root', rootHref), link('parent', '../catalog.json'), ...items.map((href) => link('item', href, 'application/geo+json'))],
  };
}

const write = (file: string, json: unknown) => {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(json, null, 2));
};

/** Writes the catalog into `dir`; `sceneHref` is where scene-1's GeoTIFF is said to be. */
export function writeStaticCatalog(dir: string, sceneHref = './scene.tif'): void {
  write(
    path.join(dir, 'catalog.json'),
    catalog('geoflow-test', 'geoflow test catalog', [
      link('root', './catalog.json'),
      link('child', './parcels/collection.json'),
      link('child', './imagery/catalog.json'),
    ]),
  );

  const parcels = path.join(dir, 'parcels');
  write(
    path.join(parcels, 'collection.json'),
    collection('parcels', ['./parcels-2024/parcels-2024.json', './missing/missing.json', './misc/odd-name.json'], '../catalog.json'),
  );
  const p2024 = path.join(parcels, 'parcels-2024');
  mkdirSync(p2024, { recursive: true });
  const geojson = pointsGeoJson(p2024, 12);
  execFileSync('ogr2ogr', ['-f', 'GPKG', path.join(p2024, 'parcels.gpkg'), geojson, '-nln', 'parcels']);
  writeFileSync(path.join(p2024, 'thumb.png'), Buffer.from('89504e470d0a1a0a', 'hex'));
  write(
    path.join(p2024, 'parcels-2024.json'),
    item('parcels-2024', 'parcels', {
      data: { href: './places.geojson', type: 'application/geo+json', roles: ['data'], title: 'Parcels 2024' },
      thumbnail: { href: './thumb.png', type: 'image/png', roles: ['thumbnail'] },
      archive: { href: './parcels.gpkg', type: 'application/geopackage+sqlite3', roles: ['archive'] },
    }),
  );
  const misc = path.join(parcels, 'misc');
  mkdirSync(misc, { recursive: true });
  pointsGeoJson(misc, 3);
  write(path.join(misc, 'odd-name.json'), {
    ...item('renamed-item', 'parcels', { data: { href: './places.geojson', type: 'application/geo+json', roles: ['data'] } }),
  });

  const imagery = path.join(dir, 'imagery');
  write(
    path.join(imagery, 'catalog.json'),
    catalog('imagery', 'imagery', [link('root', '../catalog.json'), link('parent', '../catalog.json'), link('child', './scenes/collection.json')]),
  );
  const scenes = path.join(imagery, 'scenes');
  write(path.join(scenes, 'collection.json'), collection('scenes', ['./scene-1/scene-1.json'], '../../catalog.json'));
  const scene = path.join(scenes, 'scene-1');
  mkdirSync(scene, { recursive: true });
  constantGeoTiff(path.join(scene, 'scene.tif'), { size: [20, 20], burn: [7], srs: 'EPSG:2056', ullr: [2600000, 1200100, 2600100, 1200000] });
  execFileSync('cp', [path.join(scene, 'scene.tif'), path.join(scene, 'visual')]);
  write(path.join(scene, 'scene-1.json'), {
    ...item('scene-1', 'scenes', {
      visual: { href: sceneHref === './scene.tif' ? './visual' : sceneHref, type: 'image/tiff; application=geotiff', roles: ['data', 'visual'] },
      cloud: {
        href: 's3://bucket/scenes/scene-1.tif',
        type: 'image/tiff; application=geotiff',
        roles: ['data', 'overview'],
        alternate: { https: { href: './scene.tif' } },
      },
      raw: { href: 's3://bucket/scenes/raw.tif', type: 'image/tiff', roles: ['metadata'] },
    }),
    links: [link('root', '../../../catalog.json'), link('parent', '../collection.json')],
  });
}

export async function startStacServer(options: { bearer?: string; sceneHref?: string } = {}): Promise<StacServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-stac-'));
  writeStaticCatalog(dir, options.sceneHref);
  const files = await startHttpFixtureServer({ dir, ...(options.bearer ? { bearer: options.bearer } : {}) });
  return {
    url: `${files.url}/${options.bearer ? 'bearer/' : ''}files/catalog.json`,
    files,
    dir,
    stop: () => files.stop(),
  };
}

const stacApiVenv = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'tools', 'stac-fastapi');

/** Why the STAC API part cannot run, or false. */
export const skipWithoutStacApi = existsSync(path.join(stacApiVenv, 'bin', 'python'))
  ? false
  : `stac-fastapi-static is not installed in ${stacApiVenv}: run \`npm test\` (test/servers/stac/install.sh installs it)`;

/**
 * stac-fastapi-static (from PyPI) serving the same catalog as a STAC API on a free loopback port;
 * it also serves the catalog's files, so asset hrefs point at it.
 */
export async function startStacApi(): Promise<{ url: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-stac-api-'));
  writeStaticCatalog(dir);
  const port = await freePort();
  const child = spawn(path.join(stacApiVenv, 'bin', 'python'), ['-m', 'stac_fastapi.static.app'], {
    env: { ...process.env, CATALOG_HREF: `file://${dir}/catalog.json`, APP_HOST: '127.0.0.1', APP_PORT: String(port), RELOAD: 'false', LOG_LEVEL: 'warning' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = `http://127.0.0.1:${port}/`;
  return { url, stop: await untilServing('stac-fastapi', child, dir, url) };
}
