import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrincipalCache } from '../../application/principal-cache.js';
import { createTestDatabase, skipWithoutDatabase } from '../support/database.js';
import { until } from '../support/until.js';

/** The cache on its own: what it does when its LISTEN connection stops answering. */
describe.skipIf(skipWithoutDatabase)('principal cache, LISTEN connection', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let cache: PrincipalCache;
  beforeAll(async () => {
    db = await createTestDatabase();
    cache = new PrincipalCache(db.url, pino({ level: 'silent' }));
    await cache.start();
  });
  afterAll(async () => {
    await cache?.close();
    await db?.drop();
  });

  const entry = {
    principal: { userId: 'usr', email: 'a@example.org', name: 'A', kind: 'token' as const, scopes: [], tokenId: 'tok' },
    tokenId: 'tok',
    ownerId: 'usr',
    expiresAt: null,
    lastUsedAt: null,
  };

  it('answers a hit after a round trip, and turns hits into misses when the connection stops answering', async () => {
    cache.set('sha', entry, cache.mark());
    expect(await cache.get('sha')).toEqual(entry);
    // A partition: the client stops reading its socket, so the barrier's answer never arrives.
    const listener = (cache as unknown as { listener: { connection: { stream: { pause(): void } } } }).listener;
    listener.connection.stream.pause();
    // The hit waits out the barrier's timeout, then is a miss (the caller reads the database).
    expect(await cache.get('sha')).toBeUndefined();
    // Nothing is cached while the connection is being replaced…
    cache.set('sha', entry, cache.mark());
    expect(await cache.get('sha')).toBeUndefined();
    // …and caching resumes once a new connection listens.
    await until(
      'caching to resume',
      async () => {
        cache.set('sha', entry, cache.mark());
        return (await cache.get('sha')) !== undefined;
      },
      10_000,
    );
    expect(await cache.get('sha')).toEqual(entry);
  }, 30_000);
});
