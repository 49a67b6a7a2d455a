import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { test } from 'vitest';
import { registerUser } from '../../application/accounts.js';
import { multipartFile } from './multipart.js';
import { bearer, createTestApp, createToken, login, type TestApp } from './app.js';
import { jobsClient, startFileServer, type FileServer } from './jobs.js';
import { startTestWorker } from './worker.js';

/**
 * One request through the app as the spec's token: `payload` is sent only when given; the
 * fourth argument is another token (a string) or the whole header set (to send other or no credentials).
 */
export type Send = (method: InjectOptions['method'], url: string, payload?: unknown, as?: string | Record<string, string>) => Promise<LightMyRequestResponse>;

/** Uploads a file as a new Workspace (the raw answer: specs assert on it). */
export type Upload = (file: string, options?: { filename?: string; fields?: Record<string, string>; token?: string }) => Promise<LightMyRequestResponse>;

/** Another user of the same install (registered on first use), as `tokenFor` takes them. */
export interface User {
  email: string;
  password: string;
}

/** What a spec that creates Sources, Destinations and Jobs and runs them needs. */
export const JOB_SCOPES = ['jobs:read', 'jobs:write', 'jobs:run', 'sources:write', 'destinations:write'];

export interface E2eOptions {
  /** The scopes of the token `send` uses (none: no token is created). */
  scopes?: string[];
  /** A real worker on the app's task queue (implies Temporal). */
  worker?: boolean;
  /** Temporal clients without a worker of this spec (a worker process the spec spawns itself). */
  temporal?: boolean;
  /**
   * Environment the app's configuration is read from, on top of the test defaults; a function is
   * called when the app starts (for ports of servers the spec's earlier beforeAll started).
   */
  env?: Record<string, string> | (() => Record<string, string>);
}

export interface E2eFixtures {
  sut: TestApp;
  worker: Awaited<ReturnType<typeof startTestWorker>> | undefined;
  /** The admin's session cookie. */
  cookie: string;
  token: string;
  send: Send;
  /** `send('GET', url)`, the most frequent request. */
  get: (url: string, as?: string | Record<string, string>) => Promise<LightMyRequestResponse>;
  upload: Upload;
  /** The Job calls (`call`, `waitForRun`, `runNow`) as the spec's token. */
  jobs: ReturnType<typeof jobsClient>;
  /** A file server for url Sources and webhook Destinations, started when a test first asks for it. */
  files: FileServer;
  /** A token of other scopes: the admin's, or another user's (registered the first time it is named). */
  tokenFor: (scopes: string[], user?: User) => Promise<string>;
}

/**
 * The end-to-end harness as a vitest fixture: one app (and worker) per spec file, set up when a
 * test first asks for it and torn down after the file (the worker before the app it serves).
 *
 *   const it = e2eTest({ scopes: ['recipes:read'] });
 *   it('…', async ({ send }) => { … });
 *
 * One e2eTest per spec file: vitest keeps file-scoped fixtures by name for the file, so a second
 * e2eTest in the same file would be handed the first one's app. Suite hooks get the fixtures
 * too (`it.beforeAll(async ({ sut, jobs }) => …)`).
 */
export function e2eTest(options: E2eOptions = {}) {
  return test.extend<{ $file: E2eFixtures }>({
    sut: [
      // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixture's dependencies from this pattern.
      async ({}, use) => {
        const env = typeof options.env === 'function' ? options.env() : options.env;
        const sut = await createTestApp({ temporal: options.worker || options.temporal, env });
        try {
          await use(sut);
        } finally {
          await sut.close();
        }
      },
      { scope: 'file' },
    ],
    worker: [
      async ({ sut }, use) => {
        if (!options.worker) return use(undefined);
        const worker = await startTestWorker(sut.services.config);
        try {
          await use(worker);
        } finally {
          await worker.stop();
        }
      },
      { scope: 'file' },
    ],
    cookie: [async ({ sut }, use) => use(await login(sut.app)), { scope: 'file' }],
    token: [async ({ sut, cookie }, use) => use(await createToken(sut.app, cookie, options.scopes ?? [])), { scope: 'file' }],
    send: [
      // The worker is asked for so that a spec's first request already has one polling.
      async ({ sut, token, worker: _worker }, use) =>
        use((method, url, payload, as = token) =>
          sut.app.inject({
            method,
            url,
            headers: typeof as === 'string' ? bearer(as) : as,
            ...(payload === undefined ? {} : { payload: payload as InjectOptions['payload'] }),
          }),
        ),
      { scope: 'file' },
    ],
    get: [async ({ send }, use) => use((url, as) => send('GET', url, undefined, as)), { scope: 'file' }],
    jobs: [async ({ sut, token, worker: _worker }, use) => use(jobsClient(() => sut.app, token)), { scope: 'file' }],
    files: [
      // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixture's dependencies from this pattern.
      async ({}, use) => {
        const files = await startFileServer();
        try {
          await use(files);
        } finally {
          await files.close();
        }
      },
      { scope: 'file' },
    ],
    tokenFor: [
      async ({ sut, cookie }, use) => {
        const registered = new Set<string>();
        await use(async (scopes, user) => {
          if (user && !registered.has(user.email)) {
            await registerUser(sut.services, user);
            registered.add(user.email);
          }
          return createToken(sut.app, user ? await login(sut.app, user) : cookie, scopes);
        });
      },
      { scope: 'file' },
    ],
    upload: [
      async ({ sut, token, worker: _worker }, use) =>
        use((file, { filename, fields, token: as = token } = {}) => {
          const m = multipartFile(file, filename, 'file', fields);
          return sut.app.inject({ method: 'POST', url: '/api/v1/workspaces', payload: m.payload, headers: { ...m.headers, ...bearer(as) } });
        }),
      { scope: 'file' },
    ],
  });
}
