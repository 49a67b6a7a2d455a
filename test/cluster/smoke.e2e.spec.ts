import { afterAll, beforeAll, expect, it } from 'vitest';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { fileBody } from '../support/jobs.js';
import { startCluster, waitForRun, type Cluster } from './cluster.js';

let cluster: Cluster;
beforeAll(async () => {
  const t = Date.now();
  cluster = await startCluster();
  console.log('started in', Date.now() - t);
}, 300_000);
afterAll(async () => cluster?.stop(), 120_000);

it('runs', async () => {
  const api = cluster.api('api2');
  cluster.files.put('/p.geojson', fileBody(pointsGeoJson(fixtureDir(), 5)));
  const src = await api.call('POST', '/api/v1/sources', { name: 's', type: 'url', configuration: { url: `${cluster.files.url}/p.geojson` } });
  expect(src.status, src.text).toBe(201);
  const dst = await api.call('POST', '/api/v1/destinations', { name: 'd', type: 'postgis', configuration: cluster.target });
  expect(dst.status, dst.text).toBe(201);
  const job = await api.call('POST', '/api/v1/jobs', { name: 'j', source_id: src.body.id, destination_id: dst.body.id, destination_target: { table: 'p', write_mode: 'append' } });
  expect(job.status, job.text).toBe(201);
  const run = await api.call('POST', `/api/v1/jobs/${job.body.id}/run`);
  const done = await waitForRun(cluster.api('api1'), job.body.id, run.body.id);
  expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
  await cluster.report('smoke');
}, 120_000);
