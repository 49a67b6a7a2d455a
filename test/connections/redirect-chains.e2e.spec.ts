import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skipWithoutDatabase } from '../support/database.js';
import { finished, startFileServer, type FileServer } from '../support/jobs.js';
import { startServiceProcesses, type ServiceProcesses } from '../support/service-processes.js';
import { untilRead } from '../support/until.js';
import { temporalAddress } from '../support/worker.js';
import { startRedirectChain, type RedirectChain } from '../servers/http/redirects.js';

/*
 * Issue 32, finding 2: a Google Drive connection test whose token_url answers 307 and then another
 * redirect threw an uncaught TypeError inside node-fetch 3.3.2 (under gaxios and BigQuery's
 * teeny-request): the API process ended, and a Run reading Drive or BigQuery would end the worker
 * the same way. Here the API and the worker run as their own processes, as `npm start` runs them,
 * and every Google request meets a 307 → 302 → 400 chain: each caller gets a clear error, both
 * processes stay up, and each answers what comes next.
 */

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');

const serviceAccountKey = () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return JSON.stringify({
    type: 'service_account',
    client_email: 'reader@geoflow-test.iam.gserviceaccount.com',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    private_key_id: 'k1',
  });
};

describe.skipIf(skip)('a redirect chain from a Google endpoint ends no process (issue 32)', () => {
  let svc: ServiceProcesses;
  let chain: RedirectChain;
  let files: FileServer;
  const drive = () => ({
    client_id: 'client.apps.example',
    client_secret: 'drive-client-secret',
    refresh_token: 'drive-refresh-token',
    token_url: `${chain.url}/token`,
    api_url: `${chain.url}/`,
  });
  const bigquery = () => ({ project_id: 'geoflow-test', dataset: 'gis', credentials_json: serviceAccountKey(), api_endpoint: chain.url });

  beforeAll(async () => {
    chain = await startRedirectChain();
    files = await startFileServer();
    files.put(
      '/points.geojson',
      JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', properties: { n: 1 }, geometry: { type: 'Point', coordinates: [7, 46] } }] }),
    );
    svc = await startServiceProcesses();
  }, 240_000);
  afterAll(async () => {
    await svc?.stop();
    await chain?.stop();
    await files?.close();
  });

  it('the worker: Runs reading Drive and BigQuery fail with the error, and the same worker runs the next Run', async () => {
    const pid = svc.worker.pid;
    const destination = await svc.call('POST', '/api/v1/destinations', { name: 'hook', type: 'webhook', configuration: { url: `${files.url}/hook` } });
    expect(destination.status, destination.text).toBe(201);
    const job = async (type: string, configuration: Record<string, unknown>, source_resource?: Record<string, unknown>) => {
      const source = await svc.call('POST', '/api/v1/sources', { name: `${type} source`, type, configuration });
      expect(source.status, source.text).toBe(201);
      const created = await svc.call('POST', '/api/v1/jobs', {
        name: `${type} job`,
        source_id: source.json().id,
        ...(source_resource ? { source_resource } : {}),
        destination_id: destination.json().id,
        pipeline: { transform: false, convert: false },
      });
      expect(created.status, created.text).toBe(201);
      return created.json().id as string;
    };
    const run = async (jobId: string) => {
      const started = await svc.call('POST', `/api/v1/jobs/${jobId}/run`);
      expect(started.status, started.text).toBe(201);
      return untilRead(
        'the Run finished',
        async () => {
          const got = (await svc.call('GET', `/api/v1/jobs/${jobId}/runs/${started.json().id}`)).json();
          if (!finished(got.status)) expect(svc.running(svc.worker), svc.output().slice(-3000)).toBe(true);
          return got;
        },
        (got) => finished(got.status),
        120_000,
      );
    };

    const driveRun = await run(await job('gdrive', drive(), { file_id: 'abc' }));
    expect(driveRun.status).toBe('failed');
    expect(driveRun.error).toMatchObject({ code: 'source_failed', step: 'extract' });
    expect(driveRun.error.message).toContain('HTTP 400');
    const queryRun = await run(await job('bigquery', bigquery(), { query: 'SELECT 1 AS x' }));
    expect(queryRun.status).toBe('failed');
    expect(queryRun.error).toMatchObject({ code: 'source_failed', step: 'extract' });

    const next = await run(await job('url', { url: `${files.url}/points.geojson` }));
    expect(next.status, JSON.stringify(next.error)).toBe('succeeded');
    expect(svc.running(svc.worker)).toBe(true);
    expect(svc.worker.pid).toBe(pid);
  });
  it('the API: a Drive connection test and a BigQuery import answer an error, and the API answers the next request', async () => {
    const pid = svc.api.pid;
    const seen = () => chain.received.slice(before);
    const before = chain.received.length;
    const tested = await svc.call('POST', '/api/v1/sources/test', { type: 'gdrive', configuration: drive() });
    expect(tested.status, tested.text).toBe(200);
    expect(tested.json()).toMatchObject({ ok: false, status: 'invalid_response' });
    expect(tested.json().message).toContain('HTTP 400');
    // The chain was walked to its end: the 307 repeated the token request, the 302 made it a GET.
    expect(seen().map((r) => `${r.method} ${r.path}`)).toEqual(['POST /token', 'POST /token', 'GET /token']);
    expect((await fetch(`${svc.base}/healthz`)).status).toBe(200);

    const source = await svc.call('POST', '/api/v1/sources', { name: 'bq', type: 'bigquery', configuration: bigquery() });
    expect(source.status, source.text).toBe(201);
    const imported = await svc.call('POST', '/api/v1/workspaces', { source_id: source.json().id, source_resource: { query: 'SELECT 1 AS x' } });
    expect(imported.status, imported.text).toBe(422);
    expect(imported.json().error).toMatchObject({ code: 'source_failed' });
    expect(
      seen()
        .filter((r) => r.path.endsWith('/jobs'))
        .map((r) => r.method),
    ).toEqual(['POST', 'POST', 'GET']);

    expect(svc.running(svc.api), svc.output().slice(-3000)).toBe(true);
    expect(svc.api.pid).toBe(pid);
    expect((await svc.call('GET', '/api/v1/sources')).status).toBe(200);
  });
});
