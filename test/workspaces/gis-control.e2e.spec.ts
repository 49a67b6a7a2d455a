import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest } from '../support/e2e.js';
import { boroughsShapefileZip, fixtureDir } from '../support/fixtures.js';
import { temporalAddress } from '../support/worker.js';

const it = e2eTest({ worker: true, scopes: ['workspaces:read', 'workspaces:write', 'workspaces:run'] });
const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');

/*
 * Issue 34 through the API: reading options on upload, the CRS with its name and unit, creation
 * options checked, the download's name, and a second Workspace read by a clip, on the worker.
 */
describe.skipIf(skip)('CRS control, output options and a second dataset through /api/v1', () => {
  const base = fixtureDir();
  let fresh = 0;
  /** A folder of its own per fixture: the fixture helpers write fixed file names. */
  const dirFor = () => {
    const d = path.join(base, `f${++fresh}`);
    mkdirSync(d, { recursive: true });
    return d;
  };

  /** NYC boroughs (EPSG:2263) zipped without their .prj. */
  function withoutPrj(): string {
    const dir = dirFor();
    const zip = boroughsShapefileZip(dir);
    execFileSync('zip', ['-q', '-d', zip, 'nybb.prj']);
    const renamed = path.join(dir, 'nybb_noprj.zip');
    execFileSync('cp', [zip, renamed]);
    rmSync(zip);
    return renamed;
  }

  it('takes source_crs on upload, shows the CRS with its name and unit, and refuses paths as CRSs', async ({ upload, get }) => {
    const zip = withoutPrj();
    const plain = (await upload(zip)).json();
    expect(plain.layers[0]).toMatchObject({ crs: null, crs_info: null });
    const created = await upload(zip, { fields: { source_crs: 'EPSG:2263' } });
    expect(created.statusCode, created.body).toBe(201);
    const ws = created.json();
    expect(ws.layers[0]).toMatchObject({
      crs: 'EPSG:2263',
      crs_info: { code: 'EPSG:2263', name: 'NAD83 / New York Long Island (ftUS)', unit: 'US survey foot' },
    });
    expect(ws.crs_info).toMatchObject({ code: 'EPSG:2263' });
    const preview = (await get(`/api/v1/workspaces/${ws.id}/data-preview`)).json();
    expect(preview.crs_info).toMatchObject({ unit: 'US survey foot' });
    const map = (await get(`/api/v1/workspaces/${ws.id}/spatial-preview`)).json();
    expect(map.geojson.features[0].geometry.coordinates[0][0][0][0]).toBeCloseTo(-74, 0);
    const refused = await upload(zip, { fields: { source_crs: '/etc/passwd' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'invalid_parameter', details: { parameter: 'body.source_crs' } });
    const unknown = await upload(zip, { fields: { sauce_crs: 'EPSG:2263' } });
    expect(unknown.statusCode).toBe(422);
  });

  it('checks creation options against the driver, applies them, and never names the download after the upload', async ({ upload, get, send }) => {
    const zip = boroughsShapefileZip(dirFor());
    const ws = (await upload(zip)).json();
    const bad = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG', creation_options: { layer: { SPATIAL_INDX: 'NO' } } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({
      code: 'invalid_parameter',
      details: { option: 'SPATIAL_INDX', allowed_options: expect.arrayContaining(['SPATIAL_INDEX', 'FID']) },
    });
    expect((await get(`/api/v1/workspaces/${ws.id}`)).json().status).toBe('inspected');
    const shp = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'shp', target_crs: 'EPSG:4326' });
    expect(shp.statusCode, shp.body).toBe(200);
    expect(shp.json().output).toMatchObject({
      filename: 'nybb_16a-shapefile.zip',
      warnings: [
        expect.objectContaining({ code: 'crs_operation', layer: 'nybb', details: expect.objectContaining({ chosen_by: 'proj' }) }),
        // The fixture's Shape_Area values are wider than its DBF field, as nybb_16a's are.
        expect.objectContaining({ code: 'value_not_written', layer: 'nybb', details: { field: 'Shape_Area', rows: [1, 2], count: 2 } }),
      ],
    });
    const csv = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'CSV', creation_options: { layer: { GEOMETRY: 'AS_XY' } } });
    expect(csv.statusCode, csv.body).toBe(200);
    // X/Y columns hold points: the boroughs' polygons are left out, and the output says so.
    expect(csv.json().output.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'geometry_dropped', layer: 'nybb' })]));
    const text = (await get(`/api/v1/workspaces/${ws.id}/download`)).body;
    expect(text.split('\n')[0]).toBe('BoroCode,BoroName,Shape_Area');
    await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, { operations: [{ type: 'centroid' }] });
    const points = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'CSV', creation_options: { layer: { GEOMETRY: 'AS_XY' } } });
    expect(points.json().output.warnings.map((w: { code: string }) => w.code)).not.toContain('geometry_dropped');
    expect((await get(`/api/v1/workspaces/${ws.id}/download`)).body.split('\n')[0]).toMatch(/^X,Y,BoroCode/);
  });

  it("clips a layer by another Workspace's polygons, in previews and on the worker", async ({ upload, get, send }) => {
    const dir = dirFor();
    const boroughs = (await upload(boroughsShapefileZip(dir))).json();
    // Lower Manhattan's west half, in WGS 84: the clip layer is reprojected to the boroughs' CRS.
    const area = path.join(dir, 'area.geojson');
    writeFileSync(
      area,
      JSON.stringify({
        type: 'FeatureCollection',
        features: [
          {
            type: 'Feature',
            properties: { zone: 'west' },
            geometry: {
              type: 'Polygon',
              coordinates: [
                [
                  [-74.1, 40.5],
                  [-74.0, 40.5],
                  [-74.0, 40.8],
                  [-74.1, 40.8],
                  [-74.1, 40.5],
                ],
              ],
            },
          },
        ],
      }),
    );
    const other = (await upload(area)).json();
    const refused = await send('PUT', `/api/v1/workspaces/${boroughs.id}/transformations`, {
      operations: [{ type: 'clip', clip_layer: 'area', workspace_id: 'ws_nope' }],
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().error).toMatchObject({ code: 'invalid_transformation', details: { workspace_id: 'ws_nope' } });
    const put = await send('PUT', `/api/v1/workspaces/${boroughs.id}/transformations`, {
      operations: [
        { type: 'clip', clip_layer: 'area', workspace_id: other.id },
        { type: 'calculate_geometry', column: 'area_ft2', measure: 'area', units: 'square_feet' },
      ],
    });
    expect(put.statusCode, put.body).toBe(200);
    const preview = (await get(`/api/v1/workspaces/${boroughs.id}/transform-preview`)).json();
    expect(preview.rows.map((r: { BoroName: string }) => r.BoroName)).toEqual(['Manhattan']);
    // -74.0° is the CRS's central meridian, x = 984,250 ft: the clipped Manhattan is its box from
    // x = 980,000 to there, 10,000 ft tall.
    const area_ft2 = preview.rows[0].area_ft2 as number;
    expect(Math.abs(area_ft2 / (4250 * 10_000) - 1)).toBeLessThan(0.005);
    const converted = await send('POST', `/api/v1/workspaces/${boroughs.id}/convert`, { output_format: 'GeoJSON' });
    expect(converted.statusCode, converted.body).toBe(200);
    const features = JSON.parse((await get(`/api/v1/workspaces/${boroughs.id}/download`)).body).features;
    expect(features).toHaveLength(1);
    expect(features[0].properties.area_ft2).toBeCloseTo(area_ft2, 0);
  });
});
