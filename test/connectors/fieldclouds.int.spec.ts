import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gdrive } from '../../connectors/gdrive/index.js';
import { merginmaps } from '../../connectors/merginmaps/index.js';
import { forgetQfcSessions } from '../../connectors/qfieldcloud/api.js';
import { qfieldcloud } from '../../connectors/qfieldcloud/index.js';
import { gdal } from '../../geo/gdal/gdal.js';
import { fixtureDir, surveyGpkg } from '../support/fixtures.js';
import { startGdrive, type GdriveStandIn } from '../servers/gdrive/server.js';
import { startMerginmaps, type MerginStandIn } from '../servers/merginmaps/server.js';
import { startQfieldcloud, type QfcStandIn } from '../servers/qfieldcloud/server.js';
import { runVendorCheck, vendorClientMissing } from '../servers/vendor-clients/run.js';
import { closedPort, connectorContext, deliverInput, expectConnectorError, silentServer } from './support.js';

/*
 * The qfieldcloud, merginmaps and gdrive connectors against stand-ins of their services (no
 * QFieldCloud or Mergin Maps server is installable here, and Drive cannot run here), and each
 * stand-in checked by the vendor's own Python client, so it answers what the real service does.
 */

/** A configuration as the registry hands it over: parsed by the type's own schema. */
type ConfigOf<T extends { test?: (config: never, ...rest: never[]) => unknown }> = Parameters<NonNullable<T['test']>>[0];

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const sha1 = (b: Buffer) => createHash('sha1').update(b).digest('hex');
const featureCount = (file: string, layer?: string) => {
  const ds = gdal.open(file);
  try {
    return (layer ? ds.layers.get(layer) : ds.layers.get(0)).features.count();
  } finally {
    ds.close();
  }
};

describe('qfieldcloud', () => {
  let server: QfcStandIn;
  let projectId: string;
  let survey: Buffer;
  const dir = fixtureDir();
  const config = () =>
    qfieldcloud.configuration.parse({ url: server.url, username: server.user.username, password: server.user.password }) as ConfigOf<typeof qfieldcloud>;

  beforeAll(async () => {
    server = await startQfieldcloud();
    projectId = server.addProject('tree-survey', 'Urban trees, spring campaign');
    server.addProject('Hydrants');
    survey = readFileSync(surveyGpkg(dir, 12));
    server.putFile(projectId, 'survey.gpkg', survey);
    server.putFile(projectId, 'tree-survey.qgs', Buffer.from('<qgis/>'));
    server.putFile(projectId, 'DCIM/tree-1.jpg', Buffer.from('jpeg'));
  });
  afterAll(async () => server?.stop());

  it.skipIf(vendorClientMissing('qfieldcloud-sdk'))('the stand-in answers qfieldcloud-sdk: it lists and downloads the project', async () => {
    const seen = await runVendorCheck<{
      projects: { id: string; name: string }[];
      files: { name: string; md5sum: string; versions: number }[];
      downloaded: Record<string, string>;
      wrong_password_status: number;
    }>('qfieldcloud-sdk', 'check_qfieldcloud.py', {
      url: server.url,
      username: server.user.username,
      password: server.user.password,
      project_id: projectId,
      directory: path.join(dir, 'sdk'),
    });
    expect(seen.projects.map((p) => p.name).sort()).toEqual(['Hydrants', 'tree-survey']);
    expect(seen.files.find((f) => f.name === 'survey.gpkg')).toEqual({ name: 'survey.gpkg', md5sum: md5(survey), versions: 1 });
    expect(seen.downloaded['survey.gpkg']).toBe(md5(survey));
    expect(Object.keys(seen.downloaded).sort()).toEqual(['DCIM/tree-1.jpg', 'survey.gpkg', 'tree-survey.qgs']);
    expect(seen.wrong_password_status).toBe(401);
  });

  it('tests: signed in, wrong password, closed port, token', async () => {
    expect(await qfieldcloud.test!(config(), connectorContext())).toMatchObject({ ok: true, status: 'ok', message: expect.stringContaining('2 project(s)') });
    const wrong = await qfieldcloud.test!({ ...config(), password: 'nope' }, connectorContext());
    expect(wrong).toMatchObject({ ok: false, status: 'authentication_failed' });
    expect(JSON.stringify(wrong)).not.toContain(server.user.password);
    const closed = await qfieldcloud.test!({ ...config(), url: `http://127.0.0.1:${await closedPort()}` }, connectorContext());
    expect(closed).toMatchObject({ ok: false, status: 'unreachable' });
    const byToken = qfieldcloud.configuration.parse({ url: server.url, token: server.user.token }) as ConfigOf<typeof qfieldcloud>;
    expect(await qfieldcloud.test!(byToken, connectorContext())).toMatchObject({ ok: true });
    expect(await qfieldcloud.test!({ ...byToken, token: 'bogus' }, connectorContext())).toMatchObject({ ok: false, status: 'authentication_failed' });
  });

  it('lists projects and inspects one: files, and the layers of its GeoPackage', async () => {
    const projects = await qfieldcloud.projects!.list(config(), connectorContext());
    expect(projects.find((p) => p.id === projectId)).toMatchObject({
      name: 'tree-survey',
      owner: 'surveyor',
      description: 'Urban trees, spring campaign',
      version: null,
    });
    const ctx = connectorContext();
    const inspected = await qfieldcloud.projects!.inspect(config(), { project: projectId }, ctx);
    const gpkg = inspected.files.find((f) => f.name === 'survey.gpkg')!;
    expect(gpkg).toMatchObject({ checksum: md5(survey), size: survey.length });
    expect(gpkg.layers).toEqual([
      { name: 'trees', geometry_type: 'POINT', crs: 'EPSG:4326', feature_count: 12 },
      { name: 'plots', geometry_type: 'MULTIPOLYGON', crs: 'EPSG:2056', feature_count: 2 },
    ]);
    expect(inspected.files.find((f) => f.name === 'DCIM/tree-1.jpg')!.layers).toBeNull();
    // by owner/name too; an unknown project is not_found
    expect((await qfieldcloud.projects!.inspect(config(), { project: 'surveyor/tree-survey' }, connectorContext())).project.id).toBe(projectId);
    await expectConnectorError(qfieldcloud.projects!.inspect(config(), { project: 'nobody/Nothing' }, connectorContext()), 'not_found');
  });

  it('never turns a listed file name into a request for another path of the server (issue 32)', async () => {
    const crafted = server.addProject('crafted-names');
    server.putFile(crafted, '../../../../admin/settings.gpkg', survey);
    server.putFile(crafted, 'ok.gpkg', survey);
    const before = server.requests.length;
    const inspected = await qfieldcloud.projects!.inspect(config(), { project: crafted }, connectorContext());
    expect(inspected.files.find((f) => f.name === '../../../../admin/settings.gpkg')).toMatchObject({
      layers: null,
      error: expect.stringContaining('not a path inside the project'),
    });
    expect(inspected.files.find((f) => f.name === 'ok.gpkg')!.layers).toHaveLength(2);
    const paths = server.requests.slice(before).map((r) => r.path);
    expect(paths.filter((p) => !p.startsWith('/api/v1/'))).toEqual([]);
    expect(paths.filter((p) => p.startsWith('/api/v1/files/') && !p.startsWith(`/api/v1/files/${crafted}/`))).toEqual([]);
  });

  it('extracts one layer; the same md5 is unchanged; a new upload is read again', async () => {
    const resource = { project: projectId, file: 'survey.gpkg', layer: 'trees' };
    const first = await qfieldcloud.source!.extract(config(), resource, connectorContext(), {});
    expect(first).toMatchObject({ filename: 'trees.gpkg', sync: { cursor: { project: projectId, file: 'survey.gpkg', md5sum: md5(survey) } } });
    expect(featureCount(first.file)).toBe(12);
    const fileDownloads = () => server.requests.filter((r) => r.path.startsWith(`/api/v1/files/${projectId}/survey.gpkg`)).length;
    const downloads = fileDownloads();
    const again = await qfieldcloud.source!.extract(config(), resource, connectorContext(), { sync: first.sync! });
    expect(again.unchanged).toBe(true);
    expect(fileDownloads()).toBe(downloads);
    const newer = readFileSync(surveyGpkg(dir, 15));
    server.putFile(projectId, 'survey.gpkg', newer);
    const third = await qfieldcloud.source!.extract(config(), resource, connectorContext(), { sync: first.sync! });
    expect(third.unchanged).toBeFalsy();
    expect(featureCount(third.file)).toBe(15);
    expect(fileDownloads()).toBeGreaterThan(downloads);
    await expectConnectorError(qfieldcloud.source!.extract(config(), { ...resource, layer: 'nope' }, connectorContext(), {}), 'not_found');
    await expectConnectorError(qfieldcloud.source!.extract(config(), { ...resource, file: 'missing.gpkg' }, connectorContext(), {}), 'not_found');
    const stranger = { ...config(), username: server.stranger.username, password: server.stranger.password };
    await expectConnectorError(qfieldcloud.source!.extract(stranger, resource, connectorContext(), {}), 'permission_denied');
  });

  it('shares one sign-in between concurrent operations, and signs in again once when the token expired (issue 38)', async () => {
    // QFieldCloud keeps one live token per user for clients it cannot name, and each sign-in
    // expires the others: operations that signed in each for themselves threw each other out.
    forgetQfcSessions();
    const before = server.signIns.get(server.user.username) ?? 0;
    const resource = { project: projectId, file: 'survey.gpkg', layer: 'trees' };
    const results = await Promise.allSettled([
      ...[1, 2, 3, 4].map(() => qfieldcloud.source!.extract(config(), resource, connectorContext(), {})),
      qfieldcloud.projects!.inspect(config(), { project: projectId }, connectorContext()),
      qfieldcloud.projects!.inspect(config(), { project: 'tree-survey' }, connectorContext()),
    ]);
    expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    expect((server.signIns.get(server.user.username) ?? 0) - before).toBe(1);

    // The token expires (or the user's own script signs in with the same kind of client): one more sign-in, and the Run goes on.
    server.expireTokens();
    const after = await qfieldcloud.source!.extract(config(), resource, connectorContext(), {});
    expect(featureCount(after.file)).toBe(15);
    expect((server.signIns.get(server.user.username) ?? 0) - before).toBe(2);
    // A saved API token that expired is not retried: there is nothing to sign in with.
    const byToken = qfieldcloud.configuration.parse({ url: server.url, token: server.user.token }) as ConfigOf<typeof qfieldcloud>;
    await expectConnectorError(qfieldcloud.source!.extract(byToken, resource, connectorContext(), {}), 'authentication_failed');
  });
});

describe('merginmaps', () => {
  let server: MerginStandIn;
  let v1: Buffer;
  const dir = fixtureDir();
  const config = () =>
    merginmaps.configuration.parse({
      url: server.url,
      username: server.user.username,
      password: server.user.password,
      workspace: server.workspace,
    }) as ConfigOf<typeof merginmaps>;

  beforeAll(async () => {
    server = await startMerginmaps();
    server.addProject('street-trees');
    v1 = readFileSync(surveyGpkg(dir, 10));
    server.push('street-trees', { 'survey.gpkg': v1, 'project.qgz': Buffer.from('qgz') });
  });
  afterAll(async () => server?.stop());

  it.skipIf(vendorClientMissing('mergin-client'))('the stand-in answers mergin-client: it lists projects and downloads a project version', async () => {
    const seen = await runVendorCheck<{
      projects: { name: string; namespace: string; version: string }[];
      versions: string[];
      files: Record<string, string>;
      wrong_password: string | null;
    }>('mergin-client', 'check_merginmaps.py', {
      url: server.url,
      username: server.user.username,
      password: server.user.password,
      workspace: server.workspace,
      project: 'street-trees',
      version: 'v1',
      directory: path.join(dir, 'mergin'),
    });
    expect(seen.projects).toEqual([{ name: 'street-trees', namespace: server.workspace, version: 'v1' }]);
    // the history starts at v1, as the real server lists it
    expect(seen.versions).toEqual(['v1']);
    expect(seen.files).toEqual({ 'survey.gpkg': sha1(v1), 'project.qgz': sha1(Buffer.from('qgz')) });
    expect(seen.wrong_password).toBeTruthy();
  });

  it('tests: signed in, wrong password, closed port', async () => {
    expect(await merginmaps.test!(config(), connectorContext())).toMatchObject({ ok: true, status: 'ok' });
    expect(await merginmaps.test!({ ...config(), password: 'nope' }, connectorContext())).toMatchObject({ ok: false, status: 'authentication_failed' });
    expect(await merginmaps.test!({ ...config(), url: `http://127.0.0.1:${await closedPort()}` }, connectorContext())).toMatchObject({
      ok: false,
      status: 'unreachable',
    });
  });

  it('inspects a version: files, versions, GeoPackage layers', async () => {
    const projects = await merginmaps.projects!.list(config(), connectorContext());
    expect(projects).toEqual([expect.objectContaining({ id: 'street-trees', owner: server.workspace, version: 'v1' })]);
    const inspected = await merginmaps.projects!.inspect(config(), { project: 'street-trees' }, connectorContext());
    expect(inspected.version).toBe('v1');
    expect(inspected.versions.map((v) => v.name)).toEqual(['v1']);
    // the list's RFC 1123 date comes out as ISO 8601, like the detail's
    expect(projects[0]!.updated).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(inspected.files.find((f) => f.name === 'survey.gpkg')).toMatchObject({
      checksum: sha1(v1),
      layers: [expect.objectContaining({ name: 'trees', feature_count: 10 }), expect.objectContaining({ name: 'plots', feature_count: 2 })],
    });
    await expectConnectorError(merginmaps.projects!.inspect(config(), { project: 'street-trees', version: 'v9' }, connectorContext()), 'not_found');
  });

  it('extracts a layer at the latest or a pinned version; the unchanged skip follows versions and checksums', async () => {
    const resource = { project: 'street-trees', file: 'survey.gpkg', layer: 'trees' };
    const first = await merginmaps.source!.extract(config(), resource, connectorContext(), {});
    expect(first.sync!.cursor).toEqual({ project: 'street-trees', file: 'survey.gpkg', version: 'v1', checksum: sha1(v1) });
    expect(featureCount(first.file)).toBe(10);
    expect((await merginmaps.source!.extract(config(), resource, connectorContext(), { sync: first.sync! })).unchanged).toBe(true);
    // A new version that leaves the file alone is still unchanged; one that changes it is read.
    server.push('street-trees', { 'notes.txt': Buffer.from('rain') });
    expect((await merginmaps.source!.extract(config(), resource, connectorContext(), { sync: first.sync! })).unchanged).toBe(true);
    server.push('street-trees', { 'survey.gpkg': readFileSync(surveyGpkg(dir, 14)) });
    const third = await merginmaps.source!.extract(config(), resource, connectorContext(), { sync: first.sync! });
    expect(third.unchanged).toBeFalsy();
    expect(third.sync!.cursor).toMatchObject({ version: 'v3' });
    expect(featureCount(third.file)).toBe(14);
    const pinned = await merginmaps.source!.extract(config(), { ...resource, version: 'v1' }, connectorContext(), {});
    expect(featureCount(pinned.file)).toBe(10);
    const stranger = { ...config(), username: server.stranger.username, password: server.stranger.password };
    await expectConnectorError(merginmaps.source!.extract(stranger, resource, connectorContext(), {}), 'permission_denied');
  });

  it('checks the workspace through /v1/workspaces, and signs a stale session in again once (issue 38)', async () => {
    // The server lists an unknown only_namespace as empty: without the check this said "0 project(s)".
    const elsewhere = { ...config(), workspace: 'no-such-team' };
    const test = await merginmaps.test!(elsewhere, connectorContext());
    expect(test).toMatchObject({ ok: false, status: 'not_found' });
    expect(test.message).toContain('no-such-team');
    expect(test.message).toContain(server.workspace);
    await expectConnectorError(merginmaps.projects!.list(elsewhere, connectorContext()), 'not_found');
    const stranger = { ...config(), username: server.stranger.username, password: server.stranger.password };
    await expectConnectorError(merginmaps.projects!.list(stranger, connectorContext()), 'not_found');

    // A session that went stale mid-operation answers 403 or empty lists (not 401): one more sign-in, then on.
    const signInsBefore = server.signIns;
    server.expireSessionsAt('/v1/workspaces');
    expect((await merginmaps.projects!.list(config(), connectorContext())).map((p) => p.id)).toEqual(['street-trees']);
    server.expireSessionsAt('/v1/project/raw/');
    const got = await merginmaps.source!.extract(config(), { project: 'street-trees', file: 'survey.gpkg', layer: 'trees' }, connectorContext(), {});
    expect(featureCount(got.file)).toBe(14);
    // each operation signed in, and again once when its session went stale
    expect(server.signIns - signInsBefore).toBe(4);
  });
});

describe('gdrive', () => {
  let server: GdriveStandIn;
  let folder: string;
  let shared: string;
  let fileId: string;
  let sheetId: string;
  const dir = fixtureDir();
  let gpkg: Buffer;
  const saConfig = () =>
    gdrive.configuration.parse({
      credentials_json: JSON.stringify(server.serviceAccountKey),
      folder_id: folder,
      api_url: server.url,
      token_url: `${server.url}/token`,
    }) as ConfigOf<typeof gdrive>;
  const oauthConfig = () =>
    gdrive.configuration.parse({ ...server.oauth, folder_id: folder, api_url: server.url, token_url: `${server.url}/token` }) as ConfigOf<typeof gdrive>;

  beforeAll(async () => {
    server = await startGdrive();
    folder = server.addFolder('Field office');
    shared = server.addFolder('Team drive', { sharedDrive: true });
    gpkg = readFileSync(surveyGpkg(dir, 9));
    fileId = server.addFile(folder, 'survey.gpkg', gpkg);
    sheetId = server.addFile(folder, 'Stations', Buffer.alloc(0), {
      mimeType: 'application/vnd.google-apps.spreadsheet',
      csv: 'name,lat,lon\nBern,46.948,7.447\nChur,46.853,9.530\n',
    });
    server.addFile(shared, 'survey.gpkg', gpkg);
  });
  afterAll(async () => server?.stop());

  it.skipIf(vendorClientMissing('google-api-python-client'))(
    'the stand-in answers google-api-python-client: it lists, downloads and uploads (resumable) files',
    async () => {
      const upload = surveyGpkg(dir, 3000);
      const seen = await runVendorCheck<
        Record<
          string,
          {
            listed: string[];
            downloaded_md5: string;
            download_chunks: number;
            created: { id: string; md5Checksum: string };
            updated: { id: string; md5Checksum: string };
          }
        > & { forged_status: number }
      >('google-api-python-client', 'check_gdrive.py', {
        url: server.url,
        service_account_key: server.serviceAccountKey,
        oauth: server.oauth,
        folder_id: folder,
        file_id: fileId,
        upload_path: upload,
        directory: dir,
      });
      for (const way of ['service_account', 'oauth']) {
        const s = seen[way]!;
        expect(s.listed).toEqual(expect.arrayContaining(['Stations', 'survey.gpkg']));
        expect(s.downloaded_md5).toBe(md5(gpkg));
        expect(s.download_chunks).toBeGreaterThan(1);
        expect(s.created.md5Checksum).toBe(md5(readFileSync(upload)));
        expect(s.updated.id).toBe(s.created.id);
        expect(server.file(s.created.id)).toMatchObject({ revisions: 2, name: `from-python-${way}.gpkg` });
      }
      expect(server.resumableUploads()).toBeGreaterThanOrEqual(4);
      expect(seen.forged_status).toBe(401);
    },
  );

  it('tests with a service account and with a refresh token; wrong credentials and a closed port are classified', async () => {
    expect(await gdrive.test!(saConfig(), connectorContext())).toMatchObject({ ok: true, message: expect.stringContaining('Field office') });
    expect(await gdrive.test!(oauthConfig(), connectorContext())).toMatchObject({ ok: true });
    const badRefresh = await gdrive.test!({ ...oauthConfig(), refresh_token: 'revoked' }, connectorContext());
    expect(badRefresh).toMatchObject({ ok: false, status: 'authentication_failed' });
    expect(JSON.stringify(badRefresh)).not.toContain(server.oauth.client_secret);
    const otherKey = { ...server.serviceAccountKey, client_email: 'someone@else.iam.gserviceaccount.com' };
    expect(await gdrive.test!({ ...saConfig(), credentials_json: JSON.stringify(otherKey) }, connectorContext())).toMatchObject({
      ok: false,
      status: 'authentication_failed',
    });
    expect(await gdrive.test!({ ...saConfig(), credentials_json: 'not json' }, connectorContext())).toMatchObject({
      ok: false,
      status: 'authentication_failed',
    });
    const port = await closedPort();
    expect(await gdrive.test!({ ...saConfig(), api_url: `http://127.0.0.1:${port}` }, connectorContext())).toMatchObject({ ok: false, status: 'unreachable' });
  });

  it('reads a file by id and by name, a Sheet as CSV, a shared drive; modifiedTime and md5 feed the unchanged skip', async () => {
    const byId = await gdrive.source!.extract(saConfig(), { file_id: fileId }, connectorContext(), {});
    expect(readFileSync(byId.file).equals(gpkg)).toBe(true);
    expect(byId.sync!.cursor).toMatchObject({ file_id: fileId, md5: md5(gpkg) });
    expect((await gdrive.source!.extract(saConfig(), { file_id: fileId }, connectorContext(), { sync: byId.sync! })).unchanged).toBe(true);
    server.edit(fileId, readFileSync(surveyGpkg(dir, 4)));
    expect((await gdrive.source!.extract(saConfig(), { file_id: fileId }, connectorContext(), { sync: byId.sync! })).unchanged).toBeFalsy();

    // By name: the newest of two files with the name.
    const newest = server.addFile(folder, 'survey.gpkg', readFileSync(surveyGpkg(dir, 6)));
    const byName = await gdrive.source!.extract(oauthConfig(), { name: 'survey.gpkg' }, connectorContext(), {});
    expect(byName.sync!.cursor).toMatchObject({ file_id: newest });
    const sheet = await gdrive.source!.extract(saConfig(), { file_id: sheetId }, connectorContext(), {});
    expect(sheet.filename).toBe('Stations.csv');
    expect(readFileSync(sheet.file, 'utf8')).toContain('Bern,46.948');
    const inShared = await gdrive.source!.extract(saConfig(), { folder_id: shared, name: 'survey.gpkg' }, connectorContext(), {});
    expect(readFileSync(inShared.file).equals(gpkg)).toBe(true);
    await expectConnectorError(gdrive.source!.extract(saConfig(), { name: 'nothing.gpkg' }, connectorContext(), {}), 'not_found');
    await expectConnectorError(gdrive.source!.extract(saConfig(), { file_id: 'unknownFileId' }, connectorContext(), {}), 'not_found');
  });

  it('delivers: create, replace keeps the file id (new revision), create refuses an existing name, a retried delivery is not repeated', async () => {
    const out = path.join(dir, 'trees.gpkg');
    writeFileSync(out, readFileSync(surveyGpkg(dir, 5)));
    const target = gdrive.destination!.target.parse({ filename: 'nightly.gpkg' });
    const first = await gdrive.destination!.deliver(saConfig(), target, deliverInput(out, 'delivery-1'), connectorContext());
    const id = first.target.file_id as string;
    expect(server.file(id)).toMatchObject({ name: 'nightly.gpkg', revisions: 1, parents: [folder] });
    writeFileSync(out, readFileSync(surveyGpkg(dir, 7)));
    const second = await gdrive.destination!.deliver(oauthConfig(), target, deliverInput(out, 'delivery-2'), connectorContext());
    expect(second.target.file_id).toBe(id);
    expect(server.file(id)).toMatchObject({ revisions: 2 });
    expect(server.file(id)!.body.equals(readFileSync(out))).toBe(true);
    // The same delivery again (a retried step): nothing new is written.
    await gdrive.destination!.deliver(saConfig(), target, deliverInput(out, 'delivery-2'), connectorContext());
    expect(server.file(id)).toMatchObject({ revisions: 2 });
    await expectConnectorError(
      gdrive.destination!.deliver(
        saConfig(),
        gdrive.destination!.target.parse({ filename: 'nightly.gpkg', write_mode: 'create' }),
        deliverInput(out, 'delivery-3'),
        connectorContext(),
      ),
      'target_exists',
    );
    // Into a shared drive's folder.
    const inShared = await gdrive.destination!.deliver(
      saConfig(),
      gdrive.destination!.target.parse({ folder_id: shared, filename: 'nightly.gpkg' }),
      deliverInput(out, 'delivery-4'),
      connectorContext(),
    );
    expect(server.file(inShared.target.file_id as string)).toMatchObject({ parents: [shared] });
  });

  it('a large output goes up in a resumable session, and a replace of it keeps the id', async () => {
    const big = path.join(dir, 'big.bin');
    writeFileSync(big, randomBytes(9 * 1024 * 1024));
    const before = server.resumableUploads();
    const target = gdrive.destination!.target.parse({ filename: 'big.bin' });
    const first = await gdrive.destination!.deliver(saConfig(), target, deliverInput(big, 'big-1'), connectorContext());
    writeFileSync(big, randomBytes(9 * 1024 * 1024 + 5));
    const second = await gdrive.destination!.deliver(saConfig(), target, deliverInput(big, 'big-2'), connectorContext());
    expect(server.resumableUploads()).toBe(before + 2);
    expect(second.target.file_id).toBe(first.target.file_id);
    expect(server.file(first.target.file_id as string)!.body.equals(readFileSync(big))).toBe(true);
  });
});

describe('a server that never answers', () => {
  it('is a timeout for each of the three, never a hang', async () => {
    const silent = await silentServer();
    try {
      const url = `http://127.0.0.1:${silent.port}`;
      const ctx = () => connectorContext({ signal: AbortSignal.timeout(500) });
      const configs: [{ test?: (config: never, ctx: ReturnType<typeof connectorContext>) => Promise<{ status: string }> }, object][] = [
        [qfieldcloud, qfieldcloud.configuration.parse({ url, username: 'u', password: 'p' })],
        [merginmaps, merginmaps.configuration.parse({ url, username: 'u', password: 'p', workspace: 'w' })],
        [gdrive, gdrive.configuration.parse({ client_id: 'c', client_secret: 's', refresh_token: 'r', api_url: url, token_url: `${url}/token` })],
      ];
      for (const [connector, config] of configs) expect((await connector.test!(config as never, ctx())).status).toBe('timeout');
    } finally {
      silent.close();
    }
  });
});
