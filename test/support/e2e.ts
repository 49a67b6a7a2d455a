import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { test } from 'vitest';
import { multipartFile } from './multipart.js';
import { bearer, createTestApp, createToken, login, type TestApp } from './app.js';
import { startTestWorker } from './worker.js';

/**
 * One request through the app as the spec's token: `payload` is sent only when given; the
 * fourth argument is another token (a string) or the whole header set (to send other or no credentials).
 */
export type Send = (method: InjectOptions['method'], url: string, payload?: unknown, as?: string | Record<string, string>) => Promise<LightMyRequestResponse>;

/** Uploads a file as a new Workspace (the raw answer: specs assert on it). */
export type Upload = (file: string, options?: { filename?: string; fields?: Record<string, string>; token?: string }) => Promise<LightMyRequestResponse>;

export interface E2eOptions {
  /** The scopes of the token `send` uses (none: no token is created). */
  scopes?: string[];
  /** A real worker on the app's task queue (implies Temporal). */
  worker?: boolean;
  /** Temporal clients without a worker of this spec (a worker process the spec spawns itself). */
  temporal?: boolean;
  /** Environment the app's configuration is read from, on top of the test defaults. */
  env?: Record<string, string>;
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
}

/**
 * The end-to-end harness as a vitest fixture: one app (and worker) per spec file, set up when a
 * test first asks for it and torn down after the file (the worker before the app it serves).
 *
 *   const it = e2eTest({ scopes: ['recipes:read'] });
 *   it('…', async ({ send }) => { … });
 */
export function e2eTest(options: E2eOptions = {}) {
  return test.extend<{ $file: E2eFixtures }>({
    sut: [
      // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixture's dependencies from this pattern.
      async ({}, use) => {
        const sut = await createTestApp({ temporal: options.worker || options.temporal, env: options.env });
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
