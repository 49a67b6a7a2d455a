import { describe, expect } from 'vitest';
import { ADMIN, bearer, createToken, login, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest } from '../support/e2e.js';
import { until } from '../support/until.js';

const it = e2eTest();

describe.skipIf(skipWithoutDatabase)('accounts, sessions and personal access tokens', () => {
  let sut: TestApp;
  let now = Date.now();
  let cookie: string;

  it.beforeAll(async ({ sut: theSut, cookie: theCookie }) => {
    sut = theSut;
    sut.services.clock = () => new Date(now); // tests move time forward
    cookie = theCookie;
  });
  /** POST /account/tokens with the session's cookie. */
  const postToken = (name: string, scopes: string[]) =>
    sut.app.inject({ method: 'POST', url: '/api/v1/account/tokens', headers: { cookie }, payload: { name, scopes } });

  it('logs in with the cookie, answers /auth/me, logs out', async () => {
    const me = await sut.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie } });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ email: ADMIN.email, auth: { kind: 'session' } });

    const own = await login(sut.app);
    const out = await sut.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { cookie: own } });
    expect(out.statusCode).toBe(204);
    expect((await sut.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie: own } })).statusCode).toBe(401);
  });

  it('says in the OpenAPI document that the token routes take the session cookie only (a PAT gets 403 there)', async () => {
    const doc = (await sut.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    for (const [path, method] of [
      ['/api/v1/account/tokens', 'get'],
      ['/api/v1/account/tokens', 'post'],
      ['/api/v1/account/tokens/{id}', 'delete'],
    ] as const) {
      expect(doc.paths[path][method].security, `${method} ${path}`).toEqual([{ session: [] }]);
    }
    // Every other authenticated route takes either.
    expect(doc.security).toEqual([{ bearer: [] }, { session: [] }]);
    expect(doc.paths['/api/v1/recipes'].get.security).toBeUndefined();
  });

  it('sets the session cookie HttpOnly and SameSite=Lax', async () => {
    const res = await sut.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: ADMIN });
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/^svc_session=/);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
  });

  it('shows the token value once, lists without values, keeps only its SHA-256', async () => {
    const created = await postToken('ci', ['account:read']);
    expect(created.statusCode).toBe(201);
    const { token, id } = created.json();
    expect(token).toMatch(/^svcpat_[0-9A-Za-z]{43}$/);
    const list = await sut.app.inject({ method: 'GET', url: '/api/v1/account/tokens', headers: { cookie } });
    expect(list.body).not.toContain(token);
    expect(list.json().items.find((t: { id: string }) => t.id === id)).toMatchObject({ name: 'ci', scopes: ['account:read'], last_used_at: null });
    const events = await sut.services.store.readAll(0n, 1000);
    expect(JSON.stringify(events.map((e) => e.data))).not.toContain(token);

    const me = await sut.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(token) });
    expect(me.json()).toMatchObject({ email: ADMIN.email, auth: { kind: 'token', scopes: ['account:read'] } });
  });

  it('refreshes last_used_at at most once a minute', async () => {
    const token = await createToken(sut.app, cookie, ['account:read']);
    const usedEvents = async () => (await sut.services.store.readAll(0n, 10_000)).filter((e) => e.type === 'TokenUsed').length;
    const before = await usedEvents();
    for (let i = 0; i < 5; i++) await sut.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(token) });
    // "At most once" is a negative: the use is recorded after the answer, so give a second record the time to show.
    await new Promise((r) => setTimeout(r, 300));
    expect(await usedEvents()).toBe(before + 1);
    now += 61_000;
    await sut.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(token) });
    await until('the second use recorded', async () => (await usedEvents()) >= before + 2, 5_000, 50);
    expect(await usedEvents()).toBe(before + 2);
    await sut.services.projections.catchUp();
    const list = await sut.app.inject({ method: 'GET', url: '/api/v1/account/tokens', headers: { cookie } });
    expect(list.json().items[0].last_used_at).not.toBeNull();
  });

  it('answers 401 for revoked, expired and unknown tokens', async () => {
    const revoked = await postToken('r', ['account:read']);
    const del = await sut.app.inject({ method: 'DELETE', url: `/api/v1/account/tokens/${revoked.json().id}`, headers: { cookie } });
    expect(del.statusCode).toBe(204);
    const afterRevoke = await sut.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(revoked.json().token) });
    expect(afterRevoke.statusCode).toBe(401);
    expect(afterRevoke.json().error.message).toMatch(/revoked/);

    const expiring = await createToken(sut.app, cookie, ['account:read'], { expires_in_days: 1 });
    expect((await sut.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(expiring) })).statusCode).toBe(200);
    now += 86_400_000 + 1000;
    const expired = await sut.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(expiring) });
    expect(expired.statusCode).toBe(401);
    expect(expired.json().error.message).toMatch(/expired/);
    cookie = await login(sut.app); // the session expired too

    const unknown = await sut.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(`svcpat_${'A'.repeat(43)}`) });
    expect(unknown.statusCode).toBe(401);
  });

  it('refuses a session cookie value sent as a Bearer token', async () => {
    const value = cookie.split('=')[1]!;
    const res = await sut.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(value) });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('unauthorized');
  });

  it('refuses a PAT on the token routes, whatever its scopes', async () => {
    const token = await createToken(sut.app, cookie, ['account:read', 'recipes:write']);
    for (const req of [
      { method: 'GET' as const, url: '/api/v1/account/tokens' },
      { method: 'POST' as const, url: '/api/v1/account/tokens', payload: { name: 'x', scopes: ['account:read'] } },
      { method: 'DELETE' as const, url: '/api/v1/account/tokens/tok_x' },
    ]) {
      const res = await sut.app.inject({ ...req, headers: bearer(token) });
      expect(res.statusCode, `${req.method} ${req.url}`).toBe(403);
    }
  });

  it('answers anonymous calls with the JSON envelope, never HTML', async () => {
    for (const url of ['/api/v1/auth/me', '/api/v1/recipes', '/api/v1/transformations', '/api/v1/account/tokens']) {
      const res = await sut.app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
      expect(res.statusCode, url).toBe(401);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.json().error.code).toBe('unauthorized');
    }
  });

  it('refuses a cross-origin cookie write', async () => {
    const res = await sut.app.inject({
      method: 'POST',
      url: '/api/v1/recipes',
      headers: { cookie, origin: 'https://evil.example' },
      payload: { name: 'x', operations: [] },
    });
    expect(res.statusCode).toBe(403);
  });

  it('validates token bodies: unknown scopes and empty names are 422', async () => {
    const res = await sut.app.inject({ method: 'POST', url: '/api/v1/account/tokens', headers: { cookie }, payload: { name: '', scopes: ['jobs:delete'] } });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.details.issues.map((i: { path: string }) => i.path)).toEqual(expect.arrayContaining(['body.name', 'body.scopes.0']));
  });

  it('throttles repeated failed logins per account and address, with growing waits, and says when to retry', async () => {
    const from = (remoteAddress: string, payload: object) => sut.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload, remoteAddress });
    const wrong = { email: 'nobody@example.com', password: 'wrong password!' };
    for (let i = 0; i < 5; i++) expect((await from('192.0.2.50', wrong)).statusCode).toBe(401);
    const throttled = await from('192.0.2.50', wrong);
    expect(throttled.statusCode).toBe(401);
    expect(throttled.json().error.details.retry_after_seconds).toBeGreaterThan(0);
    expect(throttled.headers['retry-after']).toBe(String(throttled.json().error.details.retry_after_seconds));
    // another account from the same client still works
    expect((await from('192.0.2.50', ADMIN)).statusCode).toBe(200);
  });

  it('throttles a burst of concurrent guesses like a sequence: only the free ones reach the password check', async () => {
    const from = (remoteAddress: string, payload: object) => sut.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload, remoteAddress });
    const guesses = await Promise.all(Array.from({ length: 15 }, (_, i) => from('192.0.2.77', { email: ADMIN.email, password: `guess number ${i}` })));
    expect(guesses.every((r) => r.statusCode === 401)).toBe(true);
    const checked = guesses.filter((r) => r.json().error.message === 'The e-mail or password is wrong');
    expect(checked).toHaveLength(5);
    // Every other answer is the throttle's, and the right password from elsewhere still works.
    expect(guesses.filter((r) => /Too many failed logins/.test(r.json().error.message))).toHaveLength(10);
    expect((await from('192.0.2.78', ADMIN)).statusCode).toBe(200);
  });

  it('cannot be turned against the admin: 25 wrong passwords from one address leave the right password working from another', async () => {
    const from = (remoteAddress: string, payload: object) => sut.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload, remoteAddress });
    const guess = { email: ADMIN.email, password: 'not the password' };
    for (let i = 0; i < 25; i++) expect((await from('203.0.113.66', guess)).statusCode).toBe(401);
    const attacker = await from('203.0.113.66', ADMIN);
    expect(attacker.statusCode).toBe(401);
    expect(attacker.json().error.message).toMatch(/Too many failed logins/);
    expect((await from('198.51.100.7', ADMIN)).statusCode).toBe(200);
  });
});
