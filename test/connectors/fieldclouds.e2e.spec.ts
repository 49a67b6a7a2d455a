import gdal from 'gdal-async';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { fixtureDir, surveyGpkg } from '../support/fixtures.js';
import { createPostgisTarget } from '../support/jobs.js';
import { startGdrive, type GdriveStandIn } from '../servers/gdrive/server.js';
import { startMerginmaps, type MerginStandIn } from '../servers/merginmaps/server.js';
import { startQfieldcloud, type QfcStandIn } from '../servers/qfieldcloud/server.js';
import { s3ServerUnavailable, startS3Server, type S3Server } from '../../devservers/s3/server.js';
import { connectorTest, skipWithoutWorker, startAppBeforeAll } from './e2e.js';
import { bucketOf } from './s3-bucket.js';
import { closedPort } from './support.js';

/*
 * Issue 19 through /api/v1 with the real worker and Temporal: the catalogue, classified tests,
 * POST /sources/{id}/projects and /inspect-project (scope, ownership, type), and three nightly
 * Jobs through Run Now, each checked at the far end: a QFieldCloud project's GeoPackage layer into
 * PostGIS, a Mergin Maps project into S3, a Drive file into Drive (replace keeps the file id).
 * A second Run with nothing changed is skipped as unchanged; a new version is picked up.
 */

const it = connectorTest();

describe.skipIf(skipWithoutWorker)('field data platforms and Google Drive through /api/v1', () => {
  startAppBeforeAll(it);
  let qfc: QfcStandIn;
  let mergin: MerginStandIn;
  let drive: GdriveStandIn;
  const dir = fixtureDir();

  beforeAll(async () => {
    [qfc, mergin, drive] = await Promise.all([startQfieldcloud(), startMerginmaps(), startGdrive()]);
  });
  afterAll(async () => {
    await Promise.all([qfc?.stop(), mergin?.stop(), drive?.stop()]);
  });

  it('lists the three types as implemented; a draft against a closed port is a classified failure', async ({ api }) => {
    const items = (await api.call('GET', '/api/v1/connectors')).json().items as { type: string; implemented: boolean; capabilities: Record<string, boolean> }[];
    for (const type of ['qfieldcloud', 'merginmaps', 'gdrive'])
      expect(
        items.find((c) => c.type === type),
        type,
      ).toMatchObject({ implemented: true, capabilities: { test: true, import: false } });
    const port = await closedPort();
    const drafts: [string, object][] = [
      ['qfieldcloud', { url: `http://127.0.0.1:${port}`, username: 'u', password: 'p' }],
      ['merginmaps', { url: `http://127.0.0.1:${port}`, username: 'u', password: 'p', workspace: 'w' }],
      ['gdrive', { credentials_json: JSON.stringify(drive.serviceAccountKey), api_url: `http://127.0.0.1:${port}` }],
    ];
    for (const [type, configuration] of drafts) {
      const res = await api.call('POST', '/api/v1/sources/test', { type, configuration });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json(), type).toMatchObject({ ok: false, status: 'unreachable' });
    }
  });

  it('projects and inspect-project: field Sources answer; other types are invalid_source; another user gets 404; no sources:read is 403', async ({
    api,
    send,
  }) => {
    const field = await api.create('sources', 'qfieldcloud', { url: qfc.url, username: qfc.user.username, password: qfc.user.password });
    expect(field.configuration).toMatchObject({ has_password: true, has_token: false });
    const id = qfc.addProject('Parks', 'Benches and bins');
    qfc.putFile(id, 'parks.gpkg', readFileSync(surveyGpkg(dir, 4)));
    const projects = await api.call('POST', `/api/v1/sources/${field.id}/projects`);
    expect(projects.statusCode, projects.body).toBe(200);
    expect(projects.json().items).toContainEqual({
      id,
      name: 'Parks',
      owner: 'surveyor',
      description: 'Benches and bins',
      updated: expect.any(String),
      version: null,
    });
    const inspected = await api.call('POST', `/api/v1/sources/${field.id}/inspect-project`, { project: id });
    expect(inspected.statusCode, inspected.body).toBe(200);
    expect(inspected.json().files).toEqual([
      expect.objectContaining({
        name: 'parks.gpkg',
        layers: [expect.objectContaining({ name: 'trees', feature_count: 4, crs: 'EPSG:4326' }), expect.objectContaining({ name: 'plots' })],
      }),
    ]);
    expect(inspected.body).not.toContain(qfc.user.password);
    const unknown = await api.call('POST', `/api/v1/sources/${field.id}/inspect-project`, { project: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().error).toMatchObject({ code: 'source_failed', details: { reason: 'not_found' } });

    mergin.addProject('benches');
    mergin.push('benches', { 'benches.gpkg': readFileSync(surveyGpkg(dir, 3)) });
    const mm = await api.create('sources', 'merginmaps', {
      url: mergin.url,
      username: mergin.user.username,
      password: mergin.user.password,
      workspace: mergin.workspace,
    });
    expect((await api.call('POST', `/api/v1/sources/${mm.id}/projects`)).json().items).toContainEqual(
      expect.objectContaining({ id: 'benches', version: 'v1' }),
    );
    const mInspected = (await api.call('POST', `/api/v1/sources/${mm.id}/inspect-project`, { project: 'benches', version: 'v1' })).json();
    expect(mInspected).toMatchObject({
      version: 'v1',
      versions: [{ name: 'v1' }],
      files: [
        {
          name: 'benches.gpkg',
          layers: [
            { name: 'trees', feature_count: 3 },
            { name: 'plots', feature_count: 2 },
          ],
        },
      ],
    });

    const other = await api.create('sources', 'url', { url: 'http://127.0.0.1:9/x.geojson' });
    for (const route of ['projects', 'inspect-project']) {
      const res = await api.call('POST', `/api/v1/sources/${other.id}/${route}`, route === 'projects' ? undefined : { project: 'x' });
      expect(res.statusCode, route).toBe(400);
      expect(res.json().error.code).toBe('invalid_source');
    }
    const stranger = await api.tokenFor(['sources:read', 'sources:write'], 'field-other@example.com');
    const foreign = await send('POST', `/api/v1/sources/${field.id}/projects`, undefined, stranger);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('source_not_found');
    expect((await send('POST', '/api/v1/sources/src_nope/inspect-project', { project: 'x' }, stranger)).json().error.code).toBe('source_not_found');
    const writeOnly = await api.tokenFor(['sources:write']);
    expect((await send('POST', `/api/v1/sources/${field.id}/projects`, undefined, writeOnly)).statusCode).toBe(403);
    expect((await send('POST', `/api/v1/sources/${field.id}/inspect-project`, { project: id }, writeOnly)).statusCode).toBe(403);
  });

  it('a Job from a QFieldCloud GeoPackage layer into PostGIS: succeeded, unchanged on a second Run, a new upload picked up', async ({ api }) => {
    const target = await createPostgisTarget();
    try {
      const projectId = qfc.addProject('street-trees-2026');
      qfc.putFile(projectId, 'survey.gpkg', readFileSync(surveyGpkg(dir, 12)));
      const source = await api.create('sources', 'qfieldcloud', { url: qfc.url, username: qfc.user.username, password: qfc.user.password });
      const destination = await api.create('destinations', 'postgis', target.configuration);
      const jobId = await api.createJob({
        name: "The day's QField survey into PostGIS",
        source_id: source.id,
        source_resource: { project: projectId, file: 'survey.gpkg', layer: 'trees' },
        destination_id: destination.id,
        destination_target: { schema: 'public', table: 'trees', write_mode: 'replace' },
        schedule: { kind: 'daily', timezone: 'Europe/Zurich', hour: 22, minute: 0 },
      });
      const first = await api.runNow(jobId);
      expect(first.status, JSON.stringify(first.error)).toBe('succeeded');
      expect(await target.query('SELECT count(*)::int AS n FROM public.trees')).toEqual([{ n: 12 }]);
      const second = await api.runNow(jobId);
      expect(second).toMatchObject({ status: 'succeeded', skipped_reason: 'source_unchanged' });
      qfc.putFile(projectId, 'survey.gpkg', readFileSync(surveyGpkg(dir, 17)));
      const third = await api.runNow(jobId);
      expect(third).toMatchObject({ status: 'succeeded', skipped_reason: null });
      expect(await target.query('SELECT count(*)::int AS n FROM public.trees')).toEqual([{ n: 17 }]);
      await api.call('DELETE', `/api/v1/jobs/${jobId}`);
    } finally {
      await target.drop();
    }
  });

  describe.skipIf(s3ServerUnavailable())('into S3', () => {
    let s3: S3Server;
    let exports: Awaited<ReturnType<typeof bucketOf>>;
    beforeAll(async () => {
      s3 = await startS3Server();
      exports = await bucketOf(s3, 'field-exports');
    });
    afterAll(async () => {
      exports?.client.destroy();
      await s3?.stop();
    });

    it('a Job from a Mergin Maps project into S3: succeeded, unchanged on a second Run, a new project version picked up', async ({ api }) => {
      mergin.addProject('hedges');
      mergin.push('hedges', { 'survey.gpkg': readFileSync(surveyGpkg(dir, 8)), 'project.qgz': Buffer.from('qgz') });
      const source = await api.create('sources', 'merginmaps', {
        url: mergin.url,
        username: mergin.user.username,
        password: mergin.user.password,
        workspace: mergin.workspace,
      });
      const destination = await api.create('destinations', 's3', { bucket: 'field-exports', endpoint: s3.endpoint, force_path_style: true, ...s3.writer });
      const jobId = await api.createJob({
        name: 'Hedges to S3',
        source_id: source.id,
        source_resource: { project: 'hedges', file: 'survey.gpkg', layer: 'trees' },
        output_format: 'GeoJSON',
        destination_id: destination.id,
        destination_target: { key: 'hedges/trees.geojson' },
      });
      const read = async () => JSON.parse((await exports.read('hedges/trees.geojson')).toString('utf8')) as { features: unknown[] };
      const first = await api.runNow(jobId);
      expect(first.status, JSON.stringify(first.error)).toBe('succeeded');
      expect((await read()).features).toHaveLength(8);
      expect(await api.runNow(jobId)).toMatchObject({ status: 'succeeded', skipped_reason: 'source_unchanged' });
      mergin.push('hedges', { 'survey.gpkg': readFileSync(surveyGpkg(dir, 11)) });
      const third = await api.runNow(jobId);
      expect(third).toMatchObject({ status: 'succeeded', skipped_reason: null });
      expect((await read()).features).toHaveLength(11);
      expect((await api.call('GET', `/api/v1/jobs/${jobId}`)).json().sync.cursor).toMatchObject({ version: 'v2' });
      await api.call('DELETE', `/api/v1/jobs/${jobId}`);
    });
  });

  it('a Job from a Drive file into Drive with replace: the file keeps its id; unchanged skipped; an edit picked up', async ({ api }) => {
    const folder = drive.addFolder('Nightly');
    const fileId = drive.addFile(folder, 'survey.gpkg', readFileSync(surveyGpkg(dir, 6)));
    const configuration = { credentials_json: JSON.stringify(drive.serviceAccountKey), folder_id: folder, api_url: drive.url };
    const source = await api.create('sources', 'gdrive', configuration);
    expect(source.configuration).toMatchObject({ has_credentials_json: true, has_refresh_token: false });
    const destination = await api.create('destinations', 'gdrive', { ...drive.oauth, folder_id: folder, api_url: drive.url, token_url: `${drive.url}/token` });
    const jobId = await api.createJob({
      name: 'Survey to the shared folder',
      source_id: source.id,
      source_resource: { file_id: fileId },
      transform_mode: 'manual',
      operations: [],
      output_format: 'GPKG',
      destination_id: destination.id,
      destination_target: { filename: 'survey-clean.gpkg', write_mode: 'replace' },
    });
    const first = await api.runNow(jobId);
    expect(first.status, JSON.stringify(first.error)).toBe('succeeded');
    const delivered = drive.filesIn(folder).find((f) => f.name === 'survey-clean.gpkg')!;
    expect(delivered).toBeDefined();
    const count = (id: string) => {
      const out = path.join(dir, `${id}-${Date.now()}.gpkg`);
      writeFileSync(out, drive.file(id)!.body);
      const ds = gdal.open(out);
      try {
        return ds.layers.get(0).features.count();
      } finally {
        ds.close();
      }
    };
    expect(count(delivered.id)).toBe(6);
    expect(await api.runNow(jobId)).toMatchObject({ status: 'succeeded', skipped_reason: 'source_unchanged' });
    drive.edit(fileId, readFileSync(surveyGpkg(dir, 9)));
    const third = await api.runNow(jobId);
    expect(third).toMatchObject({ status: 'succeeded', skipped_reason: null });
    // replace: the same file, a new revision; nothing else was created in the folder
    expect(drive.filesIn(folder).filter((f) => f.name === 'survey-clean.gpkg')).toEqual([delivered]);
    expect(drive.file(delivered.id)).toMatchObject({ revisions: 2 });
    expect(count(delivered.id)).toBe(9);
    await api.call('DELETE', `/api/v1/jobs/${jobId}`);
  });
});
