import pg from 'pg';
import { sql } from 'slonik';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';

/*
 * Closing the services while a query is in flight on a connection the database then drops (a
 * partition healed as the process stops, or the database's idle-in-transaction limit): slonik's
 * pool end waits for that query and fails with it. The query fails its own caller; the shutdown
 * goes on and ends every pool (test/api/unavailable.e2e.spec.ts met this under load).
 */
describe.skipIf(skipWithoutDatabase)('closing the services', () => {
  it('ends every pool though a query in flight fails as its connection is dropped', async () => {
    const sut = await createTestApp();
    const { pool, reads } = sut.services;
    const marker = `close-test-${Date.now()}`;
    const inFlight = pool.query(sql.unsafe`SELECT pg_sleep(30), ${marker}::text`).then(
      () => 'answered',
      (error: Error) => error.message,
    );
    const admin = new pg.Client({ connectionString: process.env.SVC_TEST_DATABASE_URL });
    await admin.connect();
    try {
      const running = async () =>
        (await admin.query(`SELECT pid FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()`)).rows as { pid: number }[];
      for (let i = 0; i < 100 && (await running()).length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      const [session] = await running();
      expect(session, 'the query in flight, seen by the database').toBeDefined();
      const closing = sut.close();
      await new Promise((r) => setTimeout(r, 200));
      await admin.query('SELECT pg_terminate_backend($1)', [session!.pid]);
      await expect(closing).resolves.toBeUndefined();
      expect(await inFlight).toMatch(/terminat/i);
      // Both pools ended: nothing more runs on them.
      await expect(pool.query(sql.unsafe`SELECT 1`)).rejects.toThrow();
      await expect(reads.maybeOne(z.object({ x: z.number() }), 'SELECT 1 AS x', [])).rejects.toThrow();
    } finally {
      await admin.end();
    }
  });
});
