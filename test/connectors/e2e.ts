import { expect } from 'vitest';
import { registerUser } from '../../application/accounts.js';
import { bearer, createToken, login, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest, type E2eOptions } from '../support/e2e.js';
import { jobsClient, type RunJson } from '../support/jobs.js';
import { multipartFile } from '../support/multipart.js';
import { temporalAddress } from '../support/worker.js';

/*
 * The connector end-to-end specs' harness: the e2e fixture (one app, one real worker, one token
 * per spec file) plus what every such spec does through /api/v1: create a Source or Destination,
 * create a Job, Run Now and wait, upload and convert a file, and get the token of another user or
 * of narrower scopes.
 */

/** Why a spec that needs PostgreSQL and Temporal (the worker) cannot run here, or false. */
export const skipWithoutWorker =
  skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');

/** The spec's token may do all a user of connections does: Sources, Destinations, Workspaces, Jobs. */
export const CONNECTOR_SCOPES = ['sources', 'destinations', 'workspaces', 'jobs']
  .flatMap((r) => [`${r}:read`, `${r}:write`])
  .concat('workspaces:run', 'jobs:run');

/** The part of a Job body that copies data as read: no operations, a GeoPackage in between. */
export const AS_READ = { output_format: 'GPKG', transform_mode: 'manual', operations: [] };

/** A connection as the API answers it (the fields the specs read). */
export interface ConnectionJson {
  id: string;
  configuration: Record<string, unknown>;
}

function connectorApi(sut: TestApp, token: string, cookie: string) {
  const jobs = jobsClient(() => sut.app, token);
  const registered = new Set<string>();
  return {
    call: jobs.call,
    waitForRun: jobs.waitForRun,
    /** Run Now on a Job (answered 201), then that Run once it has finished. */
    async runNow(jobId: string): Promise<RunJson> {
      const started = await jobs.call('POST', `/api/v1/jobs/${jobId}/run`);
      expect(started.statusCode, started.body).toBe(201);
      return jobs.waitForRun(jobId, started.json().id);
    },
    /** Creates a Source or Destination (answered 201). */
    async create(kind: 'sources' | 'destinations', type: string, configuration: object, name = `${type} ${kind}`): Promise<ConnectionJson> {
      const res = await jobs.call('POST', `/api/v1/${kind}`, { name, type, configuration });
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as ConnectionJson;
    },
    /** Creates a Job (answered 201) and answers its id. */
    async createJob(body: Record<string, unknown>): Promise<string> {
      const res = await jobs.call('POST', '/api/v1/jobs', body);
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as string;
    },
    /** Uploads `file` as a Workspace (named `filename`) and converts it to `format` (answered 200); answers the Workspace's id. */
    async convertedUpload(file: string, format = 'GPKG', filename?: string): Promise<string> {
      const m = multipartFile(file, filename);
      const ws = await sut.app.inject({ method: 'POST', url: '/api/v1/workspaces', payload: m.payload, headers: { ...m.headers, ...bearer(token) } });
      expect(ws.statusCode, ws.body).toBe(201);
      const converted = await jobs.call('POST', `/api/v1/workspaces/${ws.json().id}/convert`, { output_format: format });
      expect(converted.statusCode, converted.body).toBe(200);
      return ws.json().id as string;
    },
    /** A token with `scopes`: the admin's, or with `email` another user's (registered on first use). */
    async tokenFor(scopes: string[], email?: string): Promise<string> {
      if (!email) return createToken(sut.app, cookie, scopes);
      const credentials = { email, password: 'another long password' };
      if (!registered.has(email)) await registerUser(sut.services, credentials);
      registered.add(email);
      return createToken(sut.app, await login(sut.app, credentials), scopes);
    },
  };
}

export type ConnectorApi = ReturnType<typeof connectorApi>;

/**
 * e2eTest with the real worker and CONNECTOR_SCOPES, plus `api` (the calls above as the spec's
 * token):
 *
 *   const it = connectorTest();
 *   it('…', async ({ api, send }) => { … });
 */
export function connectorTest(options: E2eOptions = {}) {
  return e2eTest({ scopes: CONNECTOR_SCOPES, worker: true, ...options }).extend<{ api: ConnectorApi }>({
    // The worker is asked for so that a Run started through `api` finds one polling.
    api: [async ({ sut, token, cookie, worker: _worker }, use) => use(connectorApi(sut, token, cookie)), { scope: 'file' }],
  });
}

export type ConnectorTest = ReturnType<typeof connectorTest>;

/**
 * Starts the spec file's app and worker in a beforeAll of the calling describe, so that their
 * start counts against the hook's time (hookTimeout), not against the first test's.
 */
export function startAppBeforeAll(it: ConnectorTest): void {
  it.beforeAll(async ({ api: _api }) => undefined);
}
