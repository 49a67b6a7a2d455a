import gdal from 'gdal-async';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { FetchSource, PMTiles } from 'pmtiles';
import { describe, expect } from 'vitest';
import { convertDataset } from '../../geo/datasets/convert.js';
import { datasetAt } from '../../geo/datasets/dataset-files.js';
import { engineAvailable, engineVenv } from '../../geo/formats/engine.js';
import { bearer, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest, type Send, type Upload } from '../support/e2e.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { fileBody } from '../support/jobs.js';
import { temporalAddress } from '../support/worker.js';

/*
 * Issue 35 through the API: a GeoParquet upload inspected and previewed, the formats catalogue,
 * creation options checked before a conversion starts, GeoParquet and PMTiles downloads.
 */
const skip =
  skipWithoutDatabase ||
  (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal') ||
  (!engineAvailable() && 'the formats engine is not installed (scripts/ensure.sh installs it)');
const it = e2eTest({
  worker: true,
  scopes: ['workspaces:read', 'workspaces:write', 'workspaces:run', 'sources:write', 'jobs:read', 'jobs:write', 'jobs:run', 'destinations:write'],
});

describe.skipIf(skip)('GeoParquet and PMTiles through /api/v1', () => {
  let sut: TestApp;
  let token: string;
  let send: Send;
  let upload: Upload;
  const dir = fixtureDir();
  let parquet: string;

  it.beforeAll(async ({ sut: theSut, token: theToken, send: theSend, upload: theUpload }) => {
    sut = theSut;
    token = theToken;
    send = theSend;
    upload = theUpload;
    // The fixture: the service's own GeoParquet of 25 points (interop.int.spec.ts checks it against other readers).
    const written = await convertDataset(datasetAt(pointsGeoJson(dir)), { outputFormat: 'GeoParquet' }, path.join(dir, 'parquet'));
    parquet = path.join(dir, 'parquet', written.filename);
  });

  const get = (url: string) => send('GET', url);
  const post = (url: string, payload: object) => send('POST', url, payload);

  it('lists GeoParquet (read and write), PMTiles and vector MBTiles among the formats', async () => {
    const formats = (await get('/api/v1/formats')).json().items as {
      id: string;
      kind: string;
      read: boolean;
      write: boolean;
      extensions: string[];
      media_type: string;
    }[];
    expect(formats.find((f) => f.id === 'GeoParquet')).toMatchObject({ kind: 'vector', read: true, write: true, extensions: ['parquet', 'geoparquet'] });
    expect(formats.find((f) => f.id === 'PMTiles')).toMatchObject({ kind: 'vector', read: false, write: true, media_type: 'application/vnd.pmtiles' });
    expect(formats.find((f) => f.id === 'MBTiles' && f.kind === 'vector')).toMatchObject({ write: true });
  });

  it('uploads a GeoParquet file, previews it, refuses bad creation options, converts to GeoParquet and PMTiles', async () => {
    const created = await upload(parquet, { filename: 'places.parquet' });
    expect(created.statusCode, created.body).toBe(201);
    const ws = created.json();
    expect(ws).toMatchObject({ status: 'inspected', filename: 'places.parquet', driver: 'GeoParquet', format: 'GeoParquet 1.1.0', crs: 'EPSG:4326' });
    expect(ws.layers[0]).toMatchObject({ name: 'places', feature_count: 25, geometry_type: 'POINT', has_geometry: true });
    expect(ws.layers[0].extent).toEqual([6, 46, 8.4, 47.2]);

    const map = await get(`/api/v1/workspaces/${ws.id}/spatial-preview`);
    expect(map.statusCode).toBe(200);
    expect(map.json()).toMatchObject({ returned_count: 25, feature_count: 25 });

    const bad = await post(`/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GeoParquet', creation_options: { dataset: { ROW_GROUPS: '10' } } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'invalid_parameter', details: { parameter: 'creation_options', option: 'ROW_GROUPS' } });
    const notForGpkg = await post(`/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG', creation_options: { dataset: { MAXZOOM: '3' } } });
    expect(notForGpkg.statusCode).toBe(400);
    // Refused before anything started: the Workspace is as it was.
    expect((await get(`/api/v1/workspaces/${ws.id}`)).json()).toMatchObject({ status: 'inspected', output: null });

    const toParquet = await post(`/api/v1/workspaces/${ws.id}/convert`, { output_format: 'parquet', creation_options: { dataset: { COMPRESSION: 'SNAPPY' } } });
    expect(toParquet.statusCode, toParquet.body).toBe(200);
    expect(toParquet.json().output).toMatchObject({
      format: 'GeoParquet',
      filename: 'places-geoparquet.parquet',
      media_type: 'application/vnd.apache.parquet',
    });
    const parquetBytes = (await get(`/api/v1/workspaces/${ws.id}/download`)).rawPayload;
    expect(parquetBytes.subarray(0, 4).toString('latin1')).toBe('PAR1');
    expect(parquetBytes.subarray(-4).toString('latin1')).toBe('PAR1');

    const toTiles = await post(`/api/v1/workspaces/${ws.id}/convert`, {
      output_format: 'PMTiles',
      creation_options: { dataset: { MINZOOM: '0', MAXZOOM: '6' } },
    });
    expect(toTiles.statusCode, toTiles.body).toBe(200);
    expect(toTiles.json().output).toMatchObject({ format: 'PMTiles', filename: 'places.pmtiles', layers: ['places'] });
    const tiles = (await get(`/api/v1/workspaces/${ws.id}/download`)).rawPayload;
    // PMTiles v3: "PMTiles" then the version byte 3; header bytes 100/101 hold the min and max zoom.
    expect(tiles.subarray(0, 7).toString('latin1')).toBe('PMTiles');
    expect([tiles[7], tiles[100], tiles[101]]).toEqual([3, 0, 6]);
  });

  it('serves a PMTiles output by byte ranges: the pmtiles client reads it in place through the API', async () => {
    const ws = (await upload(parquet, { filename: 'places.parquet' })).json();
    const converted = await post(`/api/v1/workspaces/${ws.id}/convert`, {
      output_format: 'PMTiles',
      creation_options: { dataset: { MINZOOM: '0', MAXZOOM: '6' } },
    });
    expect(converted.statusCode, converted.body).toBe(200);
    const url = `/api/v1/workspaces/${ws.id}/download`;
    const whole = await get(url);
    expect(whole.headers['accept-ranges']).toBe('bytes');
    const size = whole.rawPayload.length;

    const ranged = (range: string) => sut.app.inject({ method: 'GET', url, headers: { ...bearer(token), range } });
    const head = await ranged('bytes=0-126');
    expect(head.statusCode).toBe(206);
    expect(head.headers['content-range']).toBe(`bytes 0-126/${size}`);
    expect(head.rawPayload).toEqual(whole.rawPayload.subarray(0, 127));
    const tail = await ranged('bytes=-10');
    expect([tail.statusCode, tail.headers['content-range']]).toEqual([206, `bytes ${size - 10}-${size - 1}/${size}`]);
    expect(tail.rawPayload).toEqual(whole.rawPayload.subarray(size - 10));
    const beyond = await ranged(`bytes=${size}-`);
    expect(beyond.statusCode).toBe(416);
    expect(beyond.headers['content-range']).toBe(`bytes */${size}`);
    expect(beyond.json().error).toMatchObject({ code: 'range_not_satisfiable', details: { size } });
    // Several ranges in one header: answered with the whole file, as RFC 9110 allows.
    expect((await ranged('bytes=0-1,5-6')).statusCode).toBe(200);

    // The client library, over real HTTP: it reads the header, the directories and each tile by ranges.
    const base = await sut.app.listen({ port: 0, host: '127.0.0.1' });
    const archive = new PMTiles(new FetchSource(`${base}${url}`, new Headers({ authorization: `Bearer ${token}` })));
    const header = await archive.getHeader();
    expect([header.minZoom, header.maxZoom]).toEqual([0, 6]);
    const featuresIn = async (z: number, x: number, y: number) => {
      const tile = await archive.getZxy(z, x, y);
      expect(tile, `tile ${z}/${x}/${y}`).toBeDefined();
      const layer = new VectorTile(new PbfReader(new Uint8Array(tile!.data))).layers.places!;
      return Array.from({ length: layer.length }, (_, i) => layer.feature(i).properties);
    };
    // The 25 points lie in Switzerland (6–8.4° E, 46–47.2° N): the one tile at zoom 0 and tile 33/22 at zoom 6.
    expect(await featuresIn(0, 0, 0)).toHaveLength(25);
    expect(await featuresIn(6, 33, 22)).toHaveLength(25);
  });

  it('takes the same creation options on a Job as on a Workspace convert, checked by the same rules', async () => {
    const source = (await post('/api/v1/sources', { name: 'parquet', type: 'url', configuration: { url: 'http://127.0.0.1:9/places.parquet' } })).json();
    const job = (body: object) => post('/api/v1/jobs', { name: 'to parquet', source_id: source.id, ...body });
    const bad = await job({ output_format: 'GeoParquet', creation_options: { dataset: { ROW_GROUPS: '10' } } });
    expect(bad.statusCode, bad.body).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'invalid_parameter', details: { parameter: 'creation_options', option: 'ROW_GROUPS' } });
    const level = await job({ output_format: 'GeoParquet', creation_options: { dataset: { COMPRESSION: 'GZIP', COMPRESSION_LEVEL: '12' } } });
    expect(level.statusCode).toBe(400);
    expect(level.json().error.message).toContain('COMPRESSION_LEVEL for GZIP is 1–9');
    const gdalOption = await job({ output_format: 'GPKG', creation_options: { layer: { NO_SUCH_OPTION: 'YES' } } });
    expect(gdalOption.statusCode).toBe(400);
    const withoutFormat = await job({ creation_options: { dataset: { COMPRESSION: 'SNAPPY' } } });
    expect(withoutFormat.statusCode).toBe(422);
    expect(withoutFormat.json().error.details.issues[0]).toMatchObject({ path: 'body.creation_options' });

    const created = await job({ output_format: 'parquet', creation_options: { dataset: { COMPRESSION: 'SNAPPY', ROW_GROUP_SIZE: '5000' } } });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ output_format: 'GeoParquet', creation_options: { dataset: { COMPRESSION: 'SNAPPY', ROW_GROUP_SIZE: '5000' } } });
    expect((await get(`/api/v1/jobs/${created.json().id}`)).json().creation_options).toEqual({ dataset: { COMPRESSION: 'SNAPPY', ROW_GROUP_SIZE: '5000' } });
  });

  it("a Job's creation options reach the file it delivers: GeoParquet row groups, codec, order and column; GeoPackage column names", async ({
    files,
    jobs: api,
  }) => {
    // 2,500 points from a url Source, each Run's output POSTed to a webhook on the same local server.
    files.put('/many.geojson', fileBody(pointsGeoJson(fixtureDir(), 2500)));
    const source = (
      await api.call('POST', '/api/v1/sources', { name: 'many places', type: 'url', configuration: { url: `${files.url}/many.geojson` } })
    ).json();
    const hook = (await api.call('POST', '/api/v1/destinations', { name: 'hook', type: 'webhook', configuration: { url: `${files.url}/hook` } })).json();
    const delivered = async (body: object, ext: string): Promise<string> => {
      const created = await api.call('POST', '/api/v1/jobs', { name: `to ${ext}`, source_id: source.id, destination_id: hook.id, ...body });
      expect(created.statusCode, created.body).toBe(201);
      const run = await api.runNow(created.json().id);
      expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
      const received = files.received.find((r) => r.headers['x-geoflow-delivery'] === run.id);
      expect(received, `the webhook got Run ${run.id}'s file`).toBeDefined();
      const file = path.join(dir, `${run.id}.${ext}`);
      writeFileSync(file, received!.body);
      return file;
    };

    const parquetFile = await delivered(
      {
        output_format: 'GeoParquet',
        creation_options: { dataset: { ROW_GROUP_SIZE: '1000', COMPRESSION: 'SNAPPY', SORT: 'NONE', GEOMETRY_NAME: 'geom' } },
      },
      'parquet',
    );
    // Read back by pyarrow (the engine's environment, outside the sandbox): the footer says what was written.
    const footer = JSON.parse(
      execFileSync(
        path.join(engineVenv()!, 'bin', 'python'),
        [
          '-I',
          '-c',
          `import json, sys, pyarrow.parquet as pq
f = pq.ParquetFile(sys.argv[1]); md = f.metadata; geo = json.loads(f.schema_arrow.metadata[b"geo"])
print(json.dumps({"rows": [md.row_group(i).num_rows for i in range(md.num_row_groups)],
  "codecs": sorted({md.row_group(i).column(j).compression for i in range(md.num_row_groups) for j in range(md.num_columns)}),
  "primary": geo["primary_column"], "ids": f.read(columns=["id"]).column("id").to_pylist()}))`,
          parquetFile,
        ],
        { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } },
      ),
    ) as { rows: number[]; codecs: string[]; primary: string; ids: number[] };
    expect(footer.rows).toEqual([1000, 1000, 500]);
    expect(footer.codecs).toEqual(['SNAPPY']);
    expect(footer.primary).toBe('geom');
    // SORT=NONE: the input order, not the Hilbert order the default would give these points.
    expect(footer.ids).toEqual(Array.from({ length: 2500 }, (_, i) => i + 1));

    // The defaults, for contrast: one row group of 2,500 in ZSTD, rows reordered along the curve.
    const defaults = await delivered({ output_format: 'GeoParquet' }, 'parquet');
    const defaultFooter = execFileSync(
      path.join(engineVenv()!, 'bin', 'python'),
      [
        '-I',
        '-c',
        'import sys, pyarrow.parquet as pq; md = pq.ParquetFile(sys.argv[1]).metadata; print(md.num_row_groups, md.row_group(0).column(0).compression)',
        defaults,
      ],
      { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } },
    );
    expect(defaultFooter.trim()).toBe('1 ZSTD');

    // GDAL's own creation options, through the same Job field: GeoPackage layer options.
    const gpkgFile = await delivered({ output_format: 'GPKG', creation_options: { layer: { GEOMETRY_NAME: 'shape', FID: 'row_id' } } }, 'gpkg');
    const ds = gdal.open(gpkgFile);
    try {
      const layer = ds.layers.get(0);
      expect([layer.geomColumn, layer.fidColumn, layer.features.count()]).toEqual(['shape', 'row_id', 2500]);
    } finally {
      ds.close();
    }
  });
});
