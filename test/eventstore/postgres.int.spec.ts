import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PostgresEventStore } from '../../eventstore/postgres.js';
import { createTestDatabase, skipWithoutDatabase } from '../support/database.js';
import { eventStoreContract } from './contract.js';

describe.skipIf(skipWithoutDatabase)('PostgreSQL adapter', async () => {
  if (skipWithoutDatabase) return;
  const db = await createTestDatabase();

  it('stays append-only for every DELETE but deleteStream’s own', async () => {
    const store = new PostgresEventStore(db.url);
    await store.init();
    await store.appendToStream('keep-me', [{ type: 'Happened', data: { n: 1 } }], 'no_stream');
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const r = await client.query("DELETE FROM events WHERE stream_id = 'keep-me'");
      expect(r.rowCount).toBe(0);
      // The setting names another stream: still nothing.
      await client.query('BEGIN');
      await client.query("SELECT set_config('svc.delete_stream', 'other', true)");
      expect((await client.query("DELETE FROM events WHERE stream_id = 'keep-me'")).rowCount).toBe(0);
      await client.query('COMMIT');
    } finally {
      await client.end();
    }
    expect(await store.readStream('keep-me')).toHaveLength(1);
    await store.close();
  });
  // Last: the contract's suite drops the database when it is done.
  eventStoreContract('postgres', async () => new PostgresEventStore(db.url), db.drop);
});
