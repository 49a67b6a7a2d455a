import gdal from 'gdal-async';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { cleanupExpiredWorkspaces } from '../../application/workspace-cleanup.js';
import { createTestApp, login, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest, type E2eFixtures, type Send } from '../support/e2e.js';
import {
  boroughsShapefileZip,
  fixtureDir,
  latLonCsv,
  mixedKindsGpkg,
  mixedPolygonsGeoJson,
  pointsGeoJson,
  twoLayerGpkg,
  zippedShapefile,
} from '../support/fixtures.js';
import { multipartFile } from '../support/multipart.js';
import { temporalAddress } from '../support/worker.js';

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');
const it = e2eTest({ worker: true, scopes: ['workspaces:read', 'workspaces:write', 'workspaces:run'], env: { SVC_MAX_UPLOAD_MB: '2' } });

describe.skipIf(skip)('Workspaces through /api/v1', () => {
  let sut: TestApp;
  let fixtures: Pick<E2eFixtures, 'get' | 'upload' | 'tokenFor'>;
  let send: Send;
  const dir = fixtureDir();
  let now = Date.now();

  it.beforeAll(async ({ sut: theSut, send: theSend, get: theGet, upload: theUpload, tokenFor }) => {
    sut = theSut;
    sut.services.clock = () => new Date(now);
    send = theSend;
    fixtures = { get: theGet, upload: theUpload, tokenFor };
  });

  const upload = (file: string, filename?: string, token?: string) => fixtures.upload(file, { filename, token });
  const get = (url: string, token?: string) => fixtures.get(url, token);

  it('uploads, inspects, previews, transforms, converts and downloads a GeoJSON', async () => {
    const created = await upload(pointsGeoJson(dir));
    expect(created.statusCode, created.body).toBe(201);
    const ws = created.json();
    expect(ws).toMatchObject({ status: 'inspected', filename: 'places.geojson', dataset_type: 'vector', driver: 'GeoJSON' });
    expect(ws.layers).toHaveLength(1);
    expect(ws.layers[0]).toMatchObject({ name: 'places', has_geometry: true, feature_count: 25, crs: 'EPSG:4326' });
    expect(ws.layers[0].fields.map((f: { name: string }) => f.name)).toEqual(['id', 'name', 'population']);
    expect(ws.expires_at).toBeDefined();
    expect(created.body).not.toContain(sut.services.config.dataDir);

    const preview = await get(`/api/v1/workspaces/${ws.id}/data-preview?limit=10`);
    expect(preview.statusCode).toBe(200);
    expect(preview.json()).toMatchObject({
      workspace_id: ws.id,
      layer: 'places',
      has_geometry: true,
      row_count: 25,
      preview_row_count: 10,
      limit: 10,
      truncated: true,
    });
    expect(JSON.stringify(preview.json().rows)).not.toMatch(/\d+\.\d+,\s*\d+\.\d+/);
    expect(Object.values(preview.json().rows[0])).toContain('POINT');

    const map = await get(`/api/v1/workspaces/${ws.id}/spatial-preview`);
    expect(map.statusCode).toBe(200);
    expect(map.json()).toMatchObject({ preview_crs: 'EPSG:4326', returned_count: 25, feature_count: 25, truncated: false });
    expect(map.json().geojson.features[0].properties.name).toBe('Genève 0');

    const pipeline = await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, {
      operations: [
        { type: 'filter', where: 'population > 20000' },
        { type: 'rename_column', from: 'name', to: 'label' },
      ],
    });
    expect(pipeline.statusCode, pipeline.body).toBe(200);
    expect((await get(`/api/v1/workspaces/${ws.id}/transformations`)).json().operations).toHaveLength(2);

    const tPreview = await get(`/api/v1/workspaces/${ws.id}/transform-preview`);
    expect(tPreview.statusCode, tPreview.body).toBe(200);
    expect(tPreview.json().fields.map((f: { name: string }) => f.name)).toContain('label');
    expect(tPreview.json().preview_row_count).toBe(5);

    const before = await get(`/api/v1/workspaces/${ws.id}/download`);
    expect(before.statusCode).toBe(409);
    expect(before.json().error.code).toBe('job_not_ready');

    const converted = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG' });
    expect(converted.statusCode, converted.body).toBe(200);
    expect(converted.json()).toMatchObject({ status: 'completed', output: { format: 'GPKG' } });

    const download = await get(`/api/v1/workspaces/${ws.id}/download`);
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('application/octet-stream');
    expect(download.headers['content-disposition']).toMatch(/attachment; filename=".+\.gpkg"/);
    expect(Number(download.headers['content-length'])).toBe(download.rawPayload.length);
    const out = path.join(dir, 'out.gpkg');
    writeFileSync(out, download.rawPayload);
    const ds = gdal.open(out);
    const layer = ds.layers.get(0);
    expect(layer.features.count()).toBe(5);
    expect(layer.fields.getNames()).toContain('label');
    ds.close();

    // the upload is untouched: the original preview still sees 25 rows and the old column
    expect((await get(`/api/v1/workspaces/${ws.id}/data-preview`)).json().row_count).toBe(25);

    // clearing the pipeline and converting again starts from the upload, not from the last output
    expect((await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, { operations: [] })).statusCode).toBe(200);
    await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'geojson' });
    const again = await get(`/api/v1/workspaces/${ws.id}/download`);
    expect(JSON.parse(again.body).features).toHaveLength(25);
  });

  it('runs a SQL pipeline and a Python step through convert, refusing what the sandbox forbids', async () => {
    const ws = (await upload(pointsGeoJson(dir))).json();
    const refused = await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, { sql: "SELECT load_extension('x') FROM source" });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().error.code).toBe('invalid_transformation');

    const sql = await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, {
      sql: "SELECT id, name || ' (' || population || ')' AS label, geometry FROM source WHERE population >= 24000",
    });
    expect(sql.statusCode, sql.body).toBe(200);
    const preview = await get(`/api/v1/workspaces/${ws.id}/transform-preview`);
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json().rows.map((r: { label: string }) => r.label)).toEqual(['Zürich 23 (24000)', 'Genève 24 (25000)']);
    expect(preview.json().rows[0].geometry).toBe('POINT');

    const script = [
      'import sys',
      'import geopandas as gpd',
      'df = gpd.read_file(sys.argv[1])',
      "df['doubled'] = df['population'] * 2",
      "df.to_file(sys.argv[2], driver='GPKG')",
    ].join('\n');
    const py = await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, { python: { script, filename: 'double.py' } });
    expect(py.statusCode, py.body).toBe(200);
    // The script names no layer (geopandas would call it "output"): the layer keeps its name.
    const byName = await get(`/api/v1/workspaces/${ws.id}/transform-preview?layer=places&limit=1`);
    expect(byName.statusCode, byName.body).toBe(200);
    expect(byName.json()).toMatchObject({ layer: 'places' });
    const converted = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'CSV' });
    expect(converted.statusCode, converted.body).toBe(200);
    expect(converted.json().output.layers).toEqual(['places']);
    const csv = (await get(`/api/v1/workspaces/${ws.id}/download`)).body;
    expect(csv.split('\n')[0]).toContain('doubled');
    expect(csv).toContain('50000');

    const failing = await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, {
      python: { script: 'import sys\nprint("about to fail")\nraise SystemExit(3)', filename: 'fail.py' },
    });
    expect(failing.statusCode).toBe(200);
    const failed = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG' });
    expect(failed.statusCode).toBe(422);
    expect(failed.json().error).toMatchObject({ code: 'invalid_transformation' });
    expect(JSON.stringify(failed.json().error.details)).toContain('about to fail');
    // The failure is recorded; the last good output (the CSV) stays downloadable.
    const after = (await get(`/api/v1/workspaces/${ws.id}`)).json();
    expect(after).toMatchObject({ status: 'failed', output: { format: 'CSV' }, errors: [{ code: 'invalid_transformation' }] });
    const kept = await get(`/api/v1/workspaces/${ws.id}/download`);
    expect(kept.statusCode).toBe(200);
    expect(kept.body).toBe(csv);
  });

  it('reads a multi-layer GeoPackage and asks which layer', async () => {
    const ws = (await upload(twoLayerGpkg(dir))).json();
    expect(ws.layers.map((l: { name: string }) => l.name).sort()).toEqual(['owners', 'places']);
    const owners = ws.layers.find((l: { name: string }) => l.name === 'owners');
    expect(owners.has_geometry).toBe(false);

    const noLayer = await get(`/api/v1/workspaces/${ws.id}/data-preview`);
    expect(noLayer.statusCode).toBe(400);
    expect(noLayer.json().error.code).toBe('invalid_parameter');

    const table = await get(`/api/v1/workspaces/${ws.id}/data-preview?layer=owners`);
    expect(table.statusCode).toBe(200);
    expect(table.json()).toMatchObject({ has_geometry: false, row_count: 3 });
    expect(table.json().rows.map((r: { owner_name: string }) => r.owner_name)).toContain('Çelik');

    const flat = await get(`/api/v1/workspaces/${ws.id}/spatial-preview?layer=owners`);
    expect(flat.statusCode).toBe(400);
    expect(flat.json().error.code).toBe('invalid_parameter');

    // One check for stored and run pipelines (geo/operations/pipeline-check.ts): layer names answer as
    // previews and convert do, 400 invalid_parameter with the layers.
    const needsLayers = await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, { operations: [{ type: 'centroid' }] });
    expect(needsLayers.statusCode).toBe(400);
    expect(needsLayers.json().error).toMatchObject({
      code: 'invalid_parameter',
      details: { parameter: 'layers', layers: expect.arrayContaining(['owners', 'places']) },
    });
    const unknownLayer = await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, { layers: ['nope'], operations: [{ type: 'centroid' }] });
    expect(unknownLayer.statusCode).toBe(400);
    expect(unknownLayer.json().error).toMatchObject({
      code: 'invalid_parameter',
      message: expect.stringContaining('"nope"'),
      details: { parameter: 'layers' },
    });
    const geomOnTable = await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, { layers: ['owners'], operations: [{ type: 'buffer', distance: 1 }] });
    expect(geomOnTable.statusCode).toBe(422);
    expect(geomOnTable.json().error.code).toBe('invalid_transformation');
    const attrOnTable = await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, {
      layers: ['owners'],
      operations: [{ type: 'rename_column', from: 'owner_name', to: 'name' }],
    });
    expect(attrOnTable.statusCode).toBe(200);
    const both = await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, {
      layers: ['owners'],
      operations: [{ type: 'centroid' }],
      sql: 'SELECT * FROM source',
    });
    expect(both.statusCode).toBe(422);
    expect(both.json().error).toMatchObject({ code: 'validation_error', details: { issues: [{ path: 'body.sql' }] } });
  });

  it('converts a shapefile after a buffer into single-type formats (NYC boroughs, EPSG:2263)', async () => {
    const ws = (await upload(boroughsShapefileZip(dir))).json();
    expect(ws.layers[0]).toMatchObject({ name: 'nybb', crs: 'EPSG:2263', geometry_type: 'POLYGON' });
    const pipeline = await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, { operations: [{ type: 'buffer', distance: 10, units: 'source' }] });
    expect(pipeline.statusCode, pipeline.body).toBe(200);
    for (const [format, file] of [
      ['FlatGeobuf', 'nybb_16a.fgb'],
      ['GPKG', 'nybb_16a.gpkg'],
    ] as const) {
      const converted = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: format });
      expect(converted.statusCode, converted.body).toBe(200);
      expect(converted.json()).toMatchObject({ status: 'completed', output: { format, filename: file, layers: ['nybb'] } });
      const out = path.join(dir, `buffered-${file}`);
      writeFileSync(out, (await get(`/api/v1/workspaces/${ws.id}/download`)).rawPayload);
      const ds = gdal.open(out);
      const layer = ds.layers.get('nybb');
      // Declared as what the rows are: multipolygons, not POLYGON.
      expect(gdal.Geometry.getName(layer.geomType), format).toBe('Multi Polygon');
      expect(
        layer.features.map((f) => f.getGeometry()?.name),
        format,
      ).toEqual(['MULTIPOLYGON', 'MULTIPOLYGON']);
      if (format === 'GPKG') expect(layer.geomColumn).toBe('geom');
      ds.close();
    }
  });

  it('answers conversion_failed naming the layer, and keeps the last good output', async () => {
    const ws = (await upload(mixedKindsGpkg(dir))).json();
    const good = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG' });
    expect(good.statusCode, good.body).toBe(200);
    const failed = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'ESRI Shapefile' });
    expect(failed.statusCode).toBe(422);
    expect(failed.json().error).toMatchObject({
      code: 'conversion_failed',
      message: expect.stringMatching(/^Layer "things" holds POINT, POLYGON geometries/),
      details: { layer: 'things', format: 'ESRI Shapefile' },
    });
    const after = (await get(`/api/v1/workspaces/${ws.id}`)).json();
    expect(after).toMatchObject({ status: 'failed', output: { format: 'GPKG', filename: 'things-gpkg.gpkg' }, errors: [{ code: 'conversion_failed' }] });
    const download = await get(`/api/v1/workspaces/${ws.id}/download`);
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.subarray(0, 15).toString()).toBe('SQLite format 3');
  });

  it('refuses a bad target_crs or layer before converting: the Workspace and its output stay as they were', async () => {
    const ws = (await upload(pointsGeoJson(dir))).json();
    const good = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'FlatGeobuf' });
    expect(good.statusCode, good.body).toBe(200);
    const before = (await get(`/api/v1/workspaces/${ws.id}`)).json();
    for (const body of [{ target_crs: 'EPSG:999999' }, { target_crs: 'not a crs' }, { layers: ['nope'] }]) {
      const res = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG', ...body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'invalid_parameter', details: { parameter: 'target_crs' in body ? 'target_crs' : 'layers' } });
    }
    const after = (await get(`/api/v1/workspaces/${ws.id}`)).json();
    expect(after).toEqual(before);
    expect(after).toMatchObject({ status: 'completed', output: { format: 'FlatGeobuf' }, errors: [] });
    expect((await get(`/api/v1/workspaces/${ws.id}/download`)).statusCode).toBe(200);
  });

  it('reads a one-column CSV, and says a 5-row table previewed with limit 5 is whole', async () => {
    const ids = path.join(dir, 'ids.csv');
    writeFileSync(ids, 'id\n1\n2\n');
    const one = await upload(ids);
    expect(one.statusCode, one.body).toBe(201);
    expect(one.json()).toMatchObject({
      driver: 'CSV',
      layers: [{ name: 'ids', has_geometry: false, feature_count: 2, fields: [{ name: 'id', type: 'Integer' }] }],
    });
    const rows = await get(`/api/v1/workspaces/${one.json().id}/data-preview`);
    expect(rows.json()).toMatchObject({ rows: [{ id: 1 }, { id: 2 }], truncated: false });

    const five = (await upload(pointsGeoJson(fixtureDir(), 5))).json();
    const exact = await get(`/api/v1/workspaces/${five.id}/data-preview?limit=5`);
    expect(exact.json()).toMatchObject({ row_count: 5, preview_row_count: 5, limit: 5, truncated: false });
    const cut = await get(`/api/v1/workspaces/${five.id}/data-preview?limit=4`);
    expect(cut.json()).toMatchObject({ row_count: 5, preview_row_count: 4, truncated: true });
  });

  it('checks data preview limits', async () => {
    const ws = (await upload(latLonCsv(dir))).json();
    for (const bad of ['0', '-3', 'abc']) {
      const res = await get(`/api/v1/workspaces/${ws.id}/data-preview?limit=${bad}`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().error.code).toBe('invalid_parameter');
    }
    expect((await get(`/api/v1/workspaces/${ws.id}/data-preview?limit=500`)).statusCode).toBe(200);
    // above the maximum the limit is capped, and the response says which limit applied
    const capped = await get(`/api/v1/workspaces/${ws.id}/data-preview?limit=5000`);
    expect(capped.statusCode).toBe(200);
    expect(capped.json().limit).toBe(500);
    // lat/lon columns become a point geometry
    expect(ws.layers[0].has_geometry).toBe(true);
  });

  it('converts mixed Polygon/MultiPolygon with long field names into a zipped Shapefile', async () => {
    const ws = (await upload(mixedPolygonsGeoJson(dir))).json();
    const res = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'ESRI Shapefile', target_crs: 'EPSG:4326' });
    expect(res.statusCode, res.body).toBe(200);
    const download = await get(`/api/v1/workspaces/${ws.id}/download`);
    expect(download.headers['content-disposition']).toMatch(/\.zip"/);
    const zip = path.join(dir, 'parcels-out.zip');
    writeFileSync(zip, download.rawPayload);
    const ds = gdal.open(`/vsizip/${zip}`);
    const layer = ds.layers.get(0);
    expect(layer.features.count()).toBe(2);
    const owners = layer.features.map((f) => f.fields.get('owner'));
    expect(owners).toEqual(expect.arrayContaining(['Müller', 'Løvland']));
    ds.close();
  });

  it('accepts a zipped Shapefile and refuses what GDAL cannot open, leaving nothing behind', async () => {
    const ok = await upload(zippedShapefile(dir));
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json().layers[0].feature_count).toBe(25);

    const before = readdirSync(path.join(sut.services.config.dataDir, 'workspaces')).length;
    const junk = path.join(dir, 'junk.geojson');
    writeFileSync(junk, 'this is not geojson');
    const bad = await upload(junk);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('invalid_source');
    expect(readdirSync(path.join(sut.services.config.dataDir, 'workspaces')).length).toBe(before);
  });

  it('answers upload_too_large with max_bytes while streaming, leaving no file', async () => {
    const big = path.join(dir, 'big.geojson');
    writeFileSync(big, Buffer.alloc(3 * 1024 * 1024, 32));
    const before = readdirSync(path.join(sut.services.config.dataDir, 'workspaces')).length;
    const res = await upload(big);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({
      code: 'upload_too_large',
      message: 'The file is larger than this server accepts: uploads are limited to 2 MB',
      details: { max_bytes: 2 * 1024 * 1024 },
    });
    expect(readdirSync(path.join(sut.services.config.dataDir, 'workspaces')).length).toBe(before);
  });

  it('applies scopes and ownership', async () => {
    const ws = (await upload(pointsGeoJson(dir))).json();
    const readOnly = await fixtures.tokenFor(['workspaces:read']);
    expect((await get(`/api/v1/workspaces/${ws.id}`, readOnly)).statusCode).toBe(200);
    expect((await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG' }, readOnly)).statusCode).toBe(403);
    expect((await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, { operations: [] }, readOnly)).statusCode).toBe(403);
    const runOnly = await fixtures.tokenFor(['workspaces:run']);
    expect((await get(`/api/v1/workspaces/${ws.id}`, runOnly)).statusCode).toBe(403);
    const jobsToken = await fixtures.tokenFor(['jobs:read', 'jobs:write', 'jobs:run']);
    expect((await upload(pointsGeoJson(dir), undefined, jobsToken)).statusCode).toBe(403);

    const other = await fixtures.tokenFor(['workspaces:read'], { email: 'other@example.com', password: 'other long password' });
    const foreign = await get(`/api/v1/workspaces/${ws.id}`, other);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('job_not_found');
    const anonymous = await sut.app.inject({ method: 'GET', url: `/api/v1/workspaces/${ws.id}` });
    expect(anonymous.statusCode).toBe(401);
  });

  it('refuses deliver before convert with job_not_ready', async () => {
    const t = await fixtures.tokenFor(['workspaces:read', 'workspaces:write', 'workspaces:run', 'destinations:read']);
    const ws = (await upload(pointsGeoJson(dir), undefined, t)).json();
    const res = await send('POST', `/api/v1/workspaces/${ws.id}/deliver`, { destination_id: 'dst_x', destination_target: { table: 'x' } }, t);
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('job_not_ready');
  });

  it('keeps live Workspaces, their pipeline and output across a service restart', async () => {
    const ws = (await upload(pointsGeoJson(dir))).json();
    await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, { operations: [{ type: 'centroid' }] });
    await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'FlatGeobuf' });
    await sut.restart();
    sut.services.clock = () => new Date(now);
    const after = await get(`/api/v1/workspaces/${ws.id}`);
    expect(after.statusCode).toBe(200);
    expect(after.json()).toMatchObject({ status: 'completed', output: { format: 'FlatGeobuf' } });
    expect((await get(`/api/v1/workspaces/${ws.id}/transformations`)).json().operations).toEqual([{ type: 'centroid' }]);
    expect((await get(`/api/v1/workspaces/${ws.id}/data-preview`)).statusCode).toBe(200);
    expect((await get(`/api/v1/workspaces/${ws.id}/download`)).statusCode).toBe(200);
  });

  it('expires after SVC_JOB_TTL: every call answers job_expired and the cleanup removes the files', async () => {
    const ws = (await upload(pointsGeoJson(dir))).json();
    const folder = path.join(sut.services.config.dataDir, 'workspaces', ws.id);
    expect(existsSync(folder)).toBe(true);
    now += 61 * 60_000;
    const res = await get(`/api/v1/workspaces/${ws.id}`);
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('job_expired');
    expect((await get(`/api/v1/workspaces/${ws.id}/data-preview`)).json().error.code).toBe('job_expired');
    const { expired } = await cleanupExpiredWorkspaces(sut.services);
    expect(expired).toBeGreaterThan(0);
    expect(existsSync(folder)).toBe(false);
    expect((await get(`/api/v1/workspaces/${ws.id}`)).json().error.code).toBe('job_expired');
  });
});

// An app with no worker on its task queue: its own setup, not the file's fixture (which has one).
describe.skipIf(skip)('convert without a worker', () => {
  test('says at once that no worker is running, and records nothing', async () => {
    const sut = await createTestApp({ temporal: true }); // its own task queue, no worker on it
    try {
      const cookie = await login(sut.app);
      const m = multipartFile(pointsGeoJson(fixtureDir(), 3));
      const ws = (await sut.app.inject({ method: 'POST', url: '/api/v1/workspaces', payload: m.payload, headers: { ...m.headers, cookie } })).json();
      const res = await sut.app.inject({ method: 'POST', url: `/api/v1/workspaces/${ws.id}/convert`, headers: { cookie }, payload: { output_format: 'GPKG' } });
      expect(res.statusCode).toBe(500);
      expect(res.json().error.message).toMatch(/No worker is running/);
      const after = await sut.app.inject({ method: 'GET', url: `/api/v1/workspaces/${ws.id}`, headers: { cookie } });
      expect(after.json().status).toBe('inspected');
    } finally {
      await sut.close();
    }
  });
});
