import type { FastifyInstance } from 'fastify';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../../api/app.js';
import { createServices } from '../../application/bootstrap.js';
import type { Services } from '../../application/services.js';
import { loadConfig } from '../../platform/config.js';
import { createTestDatabase } from './database.js';

export const ADMIN = { email: 'admin@example.com', password: 'correct horse battery' };

export interface TestApp {
  app: FastifyInstance;
  services: Services;
  /** The environment the app's configuration was read from (a worker process started with it joins this app). */
  env: Record<string, string>;
  /** Stops the app and starts a new one on the same database and data folder (a service restart). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** The real app on a fresh database; Temporal only when the test asks for it. */
export async function createTestApp(options: { temporal?: boolean; env?: Record<string, string>; databaseUrl?: string } = {}): Promise<TestApp> {
  // A database of the suite's cluster, or one the test runs itself (to restart it).
  const db = options.databaseUrl ? { url: options.databaseUrl, drop: async () => undefined } : await createTestDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-test-'));
  const env: Record<string, string> = {
    SVC_DATA_DIR: dataDir,
    SVC_DATABASE_URL: db.url,
    SVC_ADMIN_EMAIL: ADMIN.email,
    SVC_ADMIN_PASSWORD: ADMIN.password,
    SVC_LOG_LEVEL: 'silent',
    SVC_TEMPORAL_ADDRESS: process.env.SVC_TEST_TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    SVC_TASK_QUEUE: `test-${path.basename(dataDir)}`,
    // npm test allows its cluster's port (scripts/test.ts): the suites' PostGIS is the services' own database.
    SVC_OUTBOUND_ALLOW: process.env.SVC_OUTBOUND_ALLOW ?? '',
    ...options.env,
  };
  const config = loadConfig(env);
  let services = await createServices(config, { temporal: options.temporal ?? false });
  const sut: TestApp = {
    app: await buildApp(services, { logger: false }),
    services,
    env,
    async restart() {
      await sut.app.close();
      await services.close();
      services = await createServices(config, { temporal: options.temporal ?? false });
      sut.services = services;
      sut.app = await buildApp(services, { logger: false });
    },
    async close() {
      await sut.app.close();
      await services.close();
      await db.drop();
    },
  };
  return sut;
}

/** Logs in through the API and returns the Cookie header value. */
export async function login(app: FastifyInstance, credentials = ADMIN): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: credentials });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
  const cookie = res.cookies.find((c) => c.name === 'svc_session');
  if (!cookie) throw new Error('no session cookie');
  return `svc_session=${cookie.value}`;
}

/** Creates a PAT through the session-only route and returns its value. */
export async function createToken(app: FastifyInstance, cookie: string, scopes: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/account/tokens', headers: { cookie }, payload: { name: 'test', scopes, ...extra } });
  if (res.statusCode !== 201) throw new Error(`token creation failed: ${res.statusCode} ${res.body}`);
  return res.json().token as string;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
