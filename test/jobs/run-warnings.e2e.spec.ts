import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest, JOB_SCOPES } from '../support/e2e.js';
import { fixtureDir, layerFromWktCsv } from '../support/fixtures.js';
import { fileBody } from '../support/jobs.js';
import { temporalAddress } from '../support/worker.js';

/*
 * A Run says what its steps changed without failing (issue 34): the coordinate operation PROJ
 * used to reproject, the Shapefile's ten-character field names with the mapping, each naming its
 * step; its log gives each layer's CRS with name and unit. Through the API, with a real worker.
 */
const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');
const it = e2eTest({ worker: true, scopes: [...JOB_SCOPES, 'workspaces:read', 'workspaces:write', 'workspaces:run'] });

interface Warning {
  step: string;
  code: string;
  message: string;
  layer?: string;
  details?: Record<string, unknown>;
}

describe.skipIf(skip)("a Run's warnings and its log's CRS", () => {
  const dir = fixtureDir();

  it('reprojecting long-named fields to a Shapefile: the PROJ operation and the field-name mapping', async ({ files, jobs, get }) => {
    // NYC boroughs as nybb has them: long field names, EPSG:2263 (US survey feet).
    const csv = path.join(dir, 'boroughs-long.csv');
    writeFileSync(
      csv,
      [
        'borough_name_long,borough_name_code,wkt',
        'Manhattan,1,"POLYGON ((980000 190000,1000000 190000,1000000 220000,980000 220000,980000 190000))"',
        'Brooklyn,3,"POLYGON ((980000 150000,1020000 150000,1020000 190000,980000 190000,980000 150000))"',
        '',
      ].join('\n'),
    );
    const gpkg = layerFromWktCsv('GPKG', path.join(dir, 'boroughs-long.gpkg'), csv, 'EPSG:2263', 'boroughs', ['-nlt', 'POLYGON']);
    files.put('/boroughs-long.gpkg', fileBody(gpkg));
    const source = await jobs.call('POST', '/api/v1/sources', { name: 'boroughs', type: 'url', configuration: { url: `${files.url}/boroughs-long.gpkg` } });
    expect(source.statusCode, source.body).toBe(201);
    const hook = await jobs.call('POST', '/api/v1/destinations', { name: 'hook', type: 'webhook', configuration: { url: `${files.url}/hook` } });
    const created = await jobs.call('POST', '/api/v1/jobs', {
      name: 'Boroughs to UTM shapefile',
      source_id: source.json().id,
      transform_mode: 'manual',
      operations: [{ type: 'reproject', target_crs: 'EPSG:32618' }],
      output_format: 'ESRI Shapefile',
      destination_id: hook.json().id,
    });
    expect(created.statusCode, created.body).toBe(201);
    const job = created.json();

    const run = await jobs.runNow(job.id);
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    // The Run as GET answers it (the same read as the polling, asked once more to show the route).
    const answered = (await get(`/api/v1/jobs/${job.id}/runs/${run.id}`)).json() as { warnings: Warning[]; steps: { name: string; log?: any }[] };
    const warnings = answered.warnings;

    const operation = warnings.find((w) => w.code === 'crs_operation');
    expect(operation).toMatchObject({
      step: 'transform',
      message: expect.stringContaining('reproject to EPSG:32618: PROJ uses'),
      details: { chosen_by: 'proj', pipeline: expect.stringMatching(/^\+proj=pipeline /) },
    });
    const renamed = warnings.find((w) => w.code === 'field_renamed');
    expect(renamed).toMatchObject({
      step: 'convert',
      layer: 'boroughs',
      details: { mapping: { borough_name_long: 'borough_na', borough_name_code: 'borough__1' } },
      message: expect.stringContaining('borough_name_long → borough_na'),
    });

    // The log: the layer read in EPSG:2263 with its name and unit, written in UTM 18N metres.
    const log = (name: string) => answered.steps.find((s) => s.name === name)!.log;
    expect(log('extract').read.layers[0]).toMatchObject({
      name: 'boroughs',
      crs: 'EPSG:2263',
      crs_info: { code: 'EPSG:2263', name: 'NAD83 / New York Long Island (ftUS)', unit: 'US survey foot', geographic: false },
    });
    expect(log('transform').wrote.layers[0]).toMatchObject({
      crs: 'EPSG:32618',
      crs_info: { code: 'EPSG:32618', name: 'WGS 84 / UTM zone 18N', unit: 'metre' },
    });

    // The delivered Shapefile really has the names the warning gives.
    const delivery = files.received.find((r) => r.headers['x-geoflow-delivery'] === run.id)!;
    const zip = path.join(dir, `${run.id}.zip`);
    writeFileSync(zip, delivery.body);
    const info = execFileSync('ogrinfo', ['-so', '-al', `/vsizip/${zip}`], { encoding: 'utf8' });
    expect(info).toMatch(/^borough_na: String/m);
    expect(info).toMatch(/^borough__1: String/m);
    expect(info).not.toMatch(/borough_name/);
    expect(info).toMatch(/UTM zone 18N/);
    await jobs.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  it('a Workspace convert with target_crs warns of features outside its area, and reprojects with the transformation given', async ({ upload, send }) => {
    const csv = path.join(dir, 'cities-world.csv');
    writeFileSync(csv, ['name,wkt', 'Zurich,POINT (8.54 47.37)', 'Tokyo,POINT (139.69 35.69)', 'Wellington,POINT (174.78 -41.29)', ''].join('\n'));
    const gpkg = layerFromWktCsv('GPKG', path.join(dir, 'cities-world.gpkg'), csv, 'EPSG:4326', 'cities', ['-nlt', 'POINT']);
    const ws = (await upload(gpkg)).json();
    const first = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG', target_crs: 'EPSG:2056' });
    expect(first.statusCode, first.body).toBe(200);
    const warnings = first.json().output.warnings as Warning[];
    expect(warnings.find((w) => w.code === 'crs_outside_area')).toMatchObject({ layer: 'cities', details: { features: 2, target_crs: 'EPSG:2056' } });
    const chosen = warnings.find((w) => w.code === 'crs_operation')!;
    expect(chosen.details).toMatchObject({ chosen_by: 'proj' });
    // The pipeline PROJ chose, given back: used and said so.
    const again = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, {
      output_format: 'GPKG',
      target_crs: 'EPSG:2056',
      transformation: chosen.details!.pipeline,
    });
    expect(again.statusCode, again.body).toBe(200);
    expect((again.json().output.warnings as Warning[]).find((w) => w.code === 'crs_operation')).toMatchObject({
      details: { chosen_by: 'request', pipeline: chosen.details!.pipeline },
    });
    // A pipeline that moves everything elsewhere shows in the file: the one given is really used.
    const shifted = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, {
      output_format: 'CSV',
      target_crs: 'EPSG:2056',
      transformation: '+proj=pipeline +step +proj=affine +xoff=1000 +yoff=2000',
    });
    expect(shifted.statusCode, shifted.body).toBe(200);
    const text = (await send('GET', `/api/v1/workspaces/${ws.id}/download`)).body;
    expect(text).toContain('POINT (1008.54 2047.37)');
  });
});
