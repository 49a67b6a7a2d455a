import { PassThrough } from 'node:stream';
import { describe, expect } from 'vitest';
import { buildApp } from '../../api/app.js';
import { ADMIN, bearer } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest } from '../support/e2e.js';

// The fixture's services; the test builds its own app on them, writing its log where it reads it.
const it = e2eTest();

describe.skipIf(skipWithoutDatabase)('structured logs', () => {
  it('writes JSON lines without passwords, tokens or session cookies', async ({ sut }) => {
    const stream = new PassThrough();
    let output = '';
    stream.on('data', (chunk) => (output += chunk));
    sut.services.config.logLevel = 'debug';
    const app = await buildApp(sut.services, { logStream: stream });
    const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: ADMIN });
    const cookieValue = login.cookies.find((c) => c.name === 'svc_session')!.value;
    const created = await app.inject({
      method: 'POST',
      url: '/api/v1/account/tokens',
      headers: { cookie: `svc_session=${cookieValue}` },
      payload: { name: 'log', scopes: ['account:read'] },
    });
    const token = created.json().token as string;
    await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(token) });
    await app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(`svcpat_${'x'.repeat(43)}`) });
    await app.close();

    const lines = output.trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    // One access line per request, written with the answer: method, URL, status, time, request id.
    const access = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(access.map((l) => `${l.method} ${l.url} ${l.status}`)).toEqual([
      'POST /api/v1/auth/login 200',
      'POST /api/v1/account/tokens 201',
      'GET /api/v1/auth/me 200',
      'GET /api/v1/auth/me 401',
    ]);
    for (const l of access) expect(l).toMatchObject({ reqId: expect.any(String), ms: expect.any(Number) });
    expect(output).not.toContain(ADMIN.password);
    expect(output).not.toContain(token);
    expect(output).not.toContain(cookieValue);
    expect(output).toContain('/api/v1/auth/me');
  });
});
