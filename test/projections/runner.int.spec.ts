import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresEventStore } from '../../eventstore/postgres.js';
import { createDatabasePool, IDLE_IN_TRANSACTION_MS } from '../../platform/db.js';
import type { Projector } from '../../projections/projector.js';
import { ensureSchema, ProjectionRunner } from '../../projections/runner.js';
import { createTestDatabase, skipWithoutDatabase } from '../support/database.js';

/** A projector that counts the events it applied in a table of its own. */
function counting(name: string, follows?: string[]): Projector {
  const table = (schema: string) => sql.identifier([schema, `${name}_seen`]);
  return {
    name,
    version: 1,
    tables: [`${name}_seen`],
    ...(follows ? { follows } : {}),
    async createTables(tx, schema) {
      await tx.query(sql.unsafe`CREATE TABLE IF NOT EXISTS ${table(schema)} (position bigint PRIMARY KEY)`);
    },
    async apply(tx, schema, event) {
      await tx.query(sql.unsafe`INSERT INTO ${table(schema)} (position) VALUES (${event.position.toString()})`);
    },
  };
}

describe.skipIf(skipWithoutDatabase)('projection runner', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let store: PostgresEventStore;
  let pool: DatabasePool;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PostgresEventStore(db.url);
    await store.init();
    pool = await createDatabasePool(db.url, 4);
  });
  afterAll(async () => {
    await pool?.end();
    await store?.close();
    await db?.drop();
  });

  const seen = async (schema: string, name: string) =>
    pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM ${sql.identifier([schema, `${name}_seen`])}`);

  it('never lets a projector that follows another apply past the other one (a Run seen ended has its Job updated)', async () => {
    const schema = 'rm_follow';
    const leader = counting('leader');
    const follower = counting('follower', ['leader']);
    await ensureSchema(pool, schema, [leader, follower]);
    for (let i = 0; i < 3; i++) await store.appendToStream(`thing-${i}`, [{ type: 'ThingHappened', data: { i } }], 'no_stream');

    // The follower alone (as when another process holds the leader's turn) waits for the leader.
    await new ProjectionRunner(store, pool, [follower], schema).catchUp();
    expect(await seen(schema, 'follower')).toBe(0);

    await new ProjectionRunner(store, pool, [leader], schema).catchUp();
    expect(await seen(schema, 'leader')).toBe(3);
    await store.appendToStream('thing-3', [{ type: 'ThingHappened', data: { i: 3 } }], 'no_stream');

    // Now it follows up to the leader's checkpoint, and not to the event the leader has not applied.
    await new ProjectionRunner(store, pool, [follower], schema).catchUp();
    expect(await seen(schema, 'follower')).toBe(3);

    // Both in one runner, leader first as the registry orders them: everything, in one catch-up.
    await new ProjectionRunner(store, pool, [leader, follower], schema).catchUp();
    expect([await seen(schema, 'leader'), await seen(schema, 'follower')]).toEqual([4, 4]);
  });

  it('lets a follower proceed when the projector it follows is not registered in this schema', async () => {
    const schema = 'rm_alone';
    const follower = counting('follower', ['absent']);
    await ensureSchema(pool, schema, [follower]);
    await store.appendToStream('alone', [{ type: 'ThingHappened', data: {} }], 'no_stream');
    await new ProjectionRunner(store, pool, [follower], schema).catchUp();
    expect(await seen(schema, 'follower')).toBe((await store.readAll(0n, 1000)).length);
  });

  it('applies a pass of every projector in one transaction, and an event one projector cannot apply holds up only that one', async () => {
    const schema = 'rm_isolated';
    const healthy = counting('healthy');
    const picky = counting('picky');
    const failing: Projector = {
      ...picky,
      async apply(tx, s, event) {
        if ((event.data as { poison?: boolean }).poison) throw new Error('cannot apply this one');
        await picky.apply(tx, s, event);
      },
    };
    await ensureSchema(pool, schema, [healthy, failing]);
    const before = (await store.readAll(0n, 100_000)).length;
    await store.appendToStream('isolated-1', [{ type: 'ThingHappened', data: {} }], 'no_stream');
    await new ProjectionRunner(store, pool, [healthy, failing], schema).catchUp();
    expect([await seen(schema, 'healthy'), await seen(schema, 'picky')]).toEqual([before + 1, before + 1]);

    await store.appendToStream('isolated-2', [{ type: 'ThingHappened', data: { poison: true } }], 'no_stream');
    await store.appendToStream('isolated-3', [{ type: 'ThingHappened', data: {} }], 'no_stream');
    await expect(new ProjectionRunner(store, pool, [healthy, failing], schema).catchUp()).rejects.toThrow('cannot apply this one');
    // The healthy projector went on past the event; the other stopped before it, with nothing half-applied.
    expect([await seen(schema, 'healthy'), await seen(schema, 'picky')]).toEqual([before + 3, before + 1]);
  });

  it("says how many events each projector has still to apply (the metrics' projection lag), up to a cap", async () => {
    const schema = 'rm_lag';
    const ahead = counting('ahead');
    const behind = counting('behind');
    await ensureSchema(pool, schema, [ahead, behind]);
    await new ProjectionRunner(store, pool, [ahead, behind], schema).catchUp();
    const both = new ProjectionRunner(store, pool, [ahead, behind], schema);
    expect(await both.lag()).toEqual(
      expect.arrayContaining([
        { projector: 'ahead', events: 0 },
        { projector: 'behind', events: 0 },
      ]),
    );
    for (let i = 0; i < 3; i++) await store.appendToStream(`lag-${i}`, [{ type: 'ThingHappened', data: { i } }], 'no_stream');
    await new ProjectionRunner(store, pool, [ahead], schema).catchUp();
    expect(await both.lag()).toEqual(
      expect.arrayContaining([
        { projector: 'ahead', events: 0 },
        { projector: 'behind', events: 3 },
      ]),
    );
    expect((await both.lag(2)).find((l) => l.projector === 'behind')).toEqual({ projector: 'behind', events: 2 });
    await both.catchUp();
    expect((await both.lag()).map((l) => l.events)).toEqual([0, 0]);
  });

  it('holds up the other replicas only until PostgreSQL ends the session of a replica lost in the middle of a pass', async () => {
    // The service's pools end a session left idle in a transaction after IDLE_IN_TRANSACTION_MS.
    expect(await pool.oneFirst(sql.type(z.object({ t: z.string() }))`SELECT current_setting('idle_in_transaction_session_timeout') AS t`)).toBe(
      `${IDLE_IN_TRANSACTION_MS / 1000}s`,
    );
    const schema = 'rm_lost';
    const projector = counting('lost');
    await ensureSchema(pool, schema, [projector]);
    await new ProjectionRunner(store, pool, [projector], schema).catchUp();
    // The lost replica: its pass locked the checkpoints, then it went silent (a network partition
    // looks the same to the server). Its own pool, with a short limit, so the test is quick.
    const lostPool = await createDatabasePool(db.url, 1, { idleInTransactionMs: 1_500 });
    let lostError: unknown;
    let signalLocked = () => {};
    const locked = new Promise<void>((resolve) => {
      signalLocked = resolve;
    });
    const lost = lostPool
      .connect(async (connection) => {
        await connection.query(sql.unsafe`BEGIN`);
        await connection.query(sql.unsafe`SELECT * FROM ${sql.identifier([schema, 'checkpoints'])} FOR UPDATE`);
        signalLocked();
        // Silent past the limit (the time is what is tested), then its next statement.
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        await connection.query(sql.unsafe`SELECT 1`);
      })
      .catch((error) => {
        lostError = error;
      });
    await locked;
    const runner = new ProjectionRunner(store, pool, [projector], schema);
    runner.start();
    try {
      const appended = await store.appendToStream('lost-1', [{ type: 'ThingHappened', data: {} }], 'no_stream');
      // Without the limit the pass would wait for the lost session (slonik's default: a minute).
      await runner.waitFor(appended.position, 10_000);
      expect(await seen(schema, 'lost')).toBe((await store.readAll(0n, 1000)).length);
    } finally {
      await runner.stop();
      await lost;
      await lostPool.end();
    }
    // PostgreSQL ended the silent session: its next statement found the connection gone.
    expect(String(lostError)).toMatch(/terminat|connection/i);
  });
});
