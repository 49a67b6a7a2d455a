import { describe } from 'vitest';
import { PostgresEventStore } from '../../eventstore/postgres.js';
import { createTestDatabase, skipWithoutDatabase } from '../support/database.js';
import { eventStoreContract } from './contract.js';

describe.skipIf(skipWithoutDatabase)('PostgreSQL adapter', async () => {
  if (skipWithoutDatabase) return;
  const db = await createTestDatabase();
  eventStoreContract('postgres', async () => new PostgresEventStore(db.url), db.drop);
});
