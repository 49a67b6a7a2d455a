import gdal from 'gdal-async';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { connectorByType } from '../../connectors/registry.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest, JOB_SCOPES } from '../support/e2e.js';
import { boroughsShapefileZip, fixtureDir } from '../support/fixtures.js';
import { createPostgisTarget, type FileServer, type jobsClient } from '../support/jobs.js';
import { temporalAddress } from '../support/worker.js';

const skip =
  skipWithoutDatabase ||
  (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal') ||
  (connectorByType('postgis')?.implemented !== true && 'the postgis Destination cannot deliver yet (connectors/postgis: implemented false)');
const it = e2eTest({
  worker: true,
  scopes: [...JOB_SCOPES, 'workspaces:read', 'workspaces:write', 'workspaces:run', 'sources:read', 'destinations:read'],
});

/** Survey stations in EPSG:2263 (US feet), as a city's CSV publishes them: easting/northing columns. */
const STATIONS = [
  { id: 1, name: 'Midtown', easting: 988_214.4, northing: 211_939.2, elevation: 57.1 },
  { id: 2, name: 'Battery', easting: 980_542.9, northing: 195_601.7, elevation: 3.5 },
  { id: 3, name: 'Flushing', easting: 1_030_105.2, northing: 215_347.8, elevation: 12.0 },
];
const stationsCsv = () =>
  `${['id,name,easting,northing,elevation', ...STATIONS.map((s) => [s.id, s.name, s.easting, s.northing, s.elevation].join(','))].join('\n')}\n`;
const STATION_OPTIONS = { source_crs: 'EPSG:2263', x_column: 'easting', y_column: 'northing' };

/*
 * Issue 34: the reading options (source_crs, x_column, y_column, z_column) on a Workspace import
 * from a saved Source and on a Job's source_resource, read from a url Source on a local server.
 * The reference coordinates come from PostGIS (ST_Transform), not from the GDAL the service uses.
 */
describe.skipIf(skip)('reading options on Workspace import and Job source_resource', () => {
  let files: FileServer;
  let api: ReturnType<typeof jobsClient>;
  let target: Awaited<ReturnType<typeof createPostgisTarget>>;
  const dir = fixtureDir();

  it.beforeAll(async ({ files: theFiles, jobs }) => {
    files = theFiles;
    api = jobs;
    target = await createPostgisTarget();
    files.put('/stations.csv', stationsCsv(), 'text/csv');
    files.put('/nybb_noprj.zip', readFileSync(withoutPrj()), 'application/zip');
  });
  afterAll(async () => {
    await target?.drop();
  });

  /** NYC boroughs (EPSG:2263) zipped without their .prj. */
  function withoutPrj(): string {
    const own = path.join(dir, 'noprj');
    mkdirSync(own, { recursive: true });
    const zip = boroughsShapefileZip(own);
    execFileSync('zip', ['-q', '-d', zip, 'nybb.prj']);
    return zip;
  }

  const urlSource = async (name: string, file: string) => {
    const res = await api.call('POST', '/api/v1/sources', { name, type: 'url', configuration: { url: `${files.url}/${file}` } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };

  /** Where PostGIS puts an EPSG:2263 point in WGS 84 (lon, lat). */
  const toWgs84 = async (x: number, y: number) => {
    const [row] = await target.query<{ lon: number; lat: number }>(
      'SELECT ST_X(p) AS lon, ST_Y(p) AS lat FROM (SELECT ST_Transform(ST_SetSRID(ST_MakePoint($1, $2), 2263), 4326) AS p) t',
      [x, y],
    );
    return row!;
  };

  it('imports a CSV of EPSG:2263 X/Y columns as points in EPSG:2263 at the right places', async ({ send, get }) => {
    const sourceId = await urlSource('stations', 'stations.csv');
    const created = await send('POST', '/api/v1/workspaces', { source_id: sourceId, source_resource: { ...STATION_OPTIONS, z_column: 'elevation' } });
    expect(created.statusCode, created.body).toBe(201);
    const ws = created.json();
    expect(ws.layers[0]).toMatchObject({
      feature_count: 3,
      crs: 'EPSG:2263',
      crs_info: { code: 'EPSG:2263', name: 'NAD83 / New York Long Island (ftUS)', unit: 'US survey foot' },
    });
    // z_column makes them 3D points.
    expect(ws.layers[0].geometry_type).toBe('POINT Z');
    // The spatial preview is in WGS 84: each station where PostGIS puts it.
    const map = (await get(`/api/v1/workspaces/${ws.id}/spatial-preview`)).json();
    expect(map.source_crs).toBe('EPSG:2263');
    const byId = new Map(
      map.geojson.features.map((f: { properties: { id: unknown }; geometry: { coordinates: number[] } }) => [String(f.properties.id), f.geometry.coordinates]),
    );
    for (const s of STATIONS) {
      const expected = await toWgs84(s.easting, s.northing);
      const got = byId.get(String(s.id)) as number[];
      expect(got[0]).toBeCloseTo(expected.lon, 6);
      expect(got[1]).toBeCloseTo(expected.lat, 6);
    }
    // Converted without a target CRS, the points stay in EPSG:2263 at the CSV's own numbers, Z from elevation.
    const converted = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG' });
    expect(converted.statusCode, converted.body).toBe(200);
    const gpkg = path.join(dir, 'stations-out.gpkg');
    writeFileSync(gpkg, (await get(`/api/v1/workspaces/${ws.id}/download`)).rawPayload);
    const ds = gdal.open(gpkg);
    try {
      const layer = ds.layers.get(0);
      expect(layer.srs?.getAuthorityCode(null)).toBe('2263');
      const points = layer.features.map((f) => ({ id: Number(f.fields.get('id')), g: f.getGeometry() as gdal.Point }));
      for (const s of STATIONS) {
        const p = points.find((q) => q.id === s.id)!.g;
        expect([p.x, p.y, p.z]).toEqual([s.easting, s.northing, s.elevation]);
      }
    } finally {
      ds.close();
      rmSync(gpkg);
    }
    // A column that is not there is refused before anything is stored, naming the columns.
    const bad = await send('POST', '/api/v1/workspaces', { source_id: sourceId, source_resource: { ...STATION_OPTIONS, y_column: 'north' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'invalid_parameter', details: { columns: expect.arrayContaining(['northing']) } });
  });

  it('imports a shapefile ZIP without .prj with source_crs, and says it has no CRS without it', async ({ send, get }) => {
    const sourceId = await urlSource('boroughs without prj', 'nybb_noprj.zip');
    const plain = await send('POST', '/api/v1/workspaces', { source_id: sourceId });
    expect(plain.statusCode, plain.body).toBe(201);
    expect(plain.json().layers[0]).toMatchObject({ crs: null, crs_info: null });
    const created = await send('POST', '/api/v1/workspaces', { source_id: sourceId, source_resource: { source_crs: 'EPSG:2263' } });
    expect(created.statusCode, created.body).toBe(201);
    const ws = created.json();
    expect(ws.layers[0]).toMatchObject({ crs: 'EPSG:2263', crs_info: { unit: 'US survey foot' } });
    expect(ws.source).toMatchObject({ id: sourceId, resource: { source_crs: 'EPSG:2263' } });
    // Manhattan's first ring starts at (980000, 190000) US feet.
    const map = (await get(`/api/v1/workspaces/${ws.id}/spatial-preview`)).json();
    const manhattan = map.geojson.features.find((f: { properties: { BoroName: string } }) => f.properties.BoroName === 'Manhattan');
    const expected = await toWgs84(980_000, 190_000);
    const first = manhattan.geometry.coordinates[0][0][0] as number[];
    expect(first[0]).toBeCloseTo(expected.lon, 6);
    expect(first[1]).toBeCloseTo(expected.lat, 6);
  });

  it("runs a Job whose source_resource carries the reading options into PostGIS: SRID 2263 at the CSV's coordinates", async () => {
    const sourceId = await urlSource('stations for the Job', 'stations.csv');
    const destination = (await api.call('POST', '/api/v1/destinations', { name: 'gis', type: 'postgis', configuration: target.configuration })).json();
    const body = {
      name: 'Stations to PostGIS',
      source_id: sourceId,
      source_resource: STATION_OPTIONS,
      destination_id: destination.id,
      destination_target: { schema: 'public', table: 'stations', write_mode: 'replace' },
      transform_mode: 'manual',
      operations: [],
    };
    const created = await api.call('POST', '/api/v1/jobs', body);
    expect(created.statusCode, created.body).toBe(201);
    const job = created.json();
    expect(job.source_resource).toMatchObject(STATION_OPTIONS);
    const done = await api.runNow(job.id);
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    expect(done.stats).toMatchObject({ features_read: 3, features_written: 3 });
    const [column] = await target.query<{ name: string; srid: number }>(
      "SELECT f_geometry_column AS name, srid FROM geometry_columns WHERE f_table_name = 'stations'",
    );
    // The table has a geometry column: the CSV's X/Y became points, their CRS the source_crs.
    expect(column?.srid).toBe(2263);
    const g = `"${column!.name}"`;
    const rows = await target.query<{ id: number; srid: number; x: number; y: number; kind: string }>(
      `SELECT id::int AS id, ST_SRID(${g}) AS srid, ST_X(${g}) AS x, ST_Y(${g}) AS y, GeometryType(${g}) AS kind FROM public.stations ORDER BY id`,
    );
    expect(rows).toEqual(STATIONS.map((s) => ({ id: s.id, srid: 2263, x: s.easting, y: s.northing, kind: 'POINT' })));
    // Columns the file does not have fail the Run at extract, naming the columns it has.
    const wrong = await api.call('POST', '/api/v1/jobs', {
      ...body,
      name: 'Stations, wrong column',
      source_resource: { ...STATION_OPTIONS, x_column: 'east' },
      destination_target: { schema: 'public', table: 'stations_wrong', write_mode: 'replace' },
    });
    expect(wrong.statusCode, wrong.body).toBe(201);
    const failed = await api.runNow(wrong.json().id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({ step: 'extract', code: 'invalid_parameter' });
    expect(await target.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'stations_wrong'")).toEqual([]);
  });
});
