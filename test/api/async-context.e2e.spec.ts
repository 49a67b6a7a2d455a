import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect } from 'vitest';
import { ADMIN, login } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest } from '../support/e2e.js';
import { temporalAddress } from '../support/worker.js';

/*
 * On Node 20, an AsyncLocalStorage once entered (run or enterWith) stays enabled until it is
 * disabled, and while one is enabled every promise of the process pays an init hook: about a
 * tenth of a small request's CPU in the API (bench/api/NOTES.md). slonik's pool.transaction and
 * the Temporal client's connect each enter one. This records every storage entered while the API
 * starts, projects events and answers requests, and asks that none is left enabled.
 */
const entered = new Map<AsyncLocalStorage<unknown>, string>();
for (const method of ['run', 'enterWith'] as const) {
  const original = AsyncLocalStorage.prototype[method] as (...args: unknown[]) => unknown;
  (AsyncLocalStorage.prototype as unknown as Record<string, unknown>)[method] = function (this: AsyncLocalStorage<unknown>, ...args: unknown[]) {
    if (!entered.has(this)) entered.set(this, new Error('entered here').stack ?? '');
    return original.apply(this, args);
  };
}
const stillEnabled = () => [...entered].filter(([storage]) => (storage as unknown as { enabled?: boolean }).enabled === true).map(([, stack]) => stack);
// `enabled` is Node 20's own field; a Node without it (AsyncContextFrame, Node 24) has no such cost.
const skip =
  skipWithoutDatabase ||
  (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal') ||
  (!('enabled' in new AsyncLocalStorage()) && 'this Node has no AsyncLocalStorage `enabled` field (its storages cost nothing while unused)');

// The app starts when the test asks for it: after the recording above is in place.
const it = e2eTest({ temporal: true });

describe.skipIf(skip)('the API leaves no AsyncLocalStorage enabled', () => {
  it('after start, projecting, a login and requests', async ({ sut }) => {
    const cookie = await login(sut.app, ADMIN);
    const created = await sut.app.inject({
      method: 'POST',
      url: '/api/v1/recipes',
      headers: { cookie },
      payload: { name: 'async context', operations: [{ type: 'reproject', target_crs: 'EPSG:3857' }] },
    });
    expect(created.statusCode).toBe(201);
    // The recipe is read back through the projection: the runner's transactions have run.
    expect((await sut.app.inject({ method: 'GET', url: `/api/v1/recipes/${created.json().id}`, headers: { cookie } })).statusCode).toBe(200);
    expect((await sut.app.inject({ method: 'GET', url: '/api/v1/system' })).statusCode).toBe(200);
    expect(entered.size).toBeGreaterThan(0);
    expect(stillEnabled()).toEqual([]);
  });
});
