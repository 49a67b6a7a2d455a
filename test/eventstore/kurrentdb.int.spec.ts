import { describe, it } from 'vitest';
import { KurrentEventStore } from '../../eventstore/kurrentdb.js';
import { eventStoreContract } from './contract.js';

const url = process.env.SVC_TEST_ESDB_URL;

if (url) {
  eventStoreContract('kurrentdb', async () => new KurrentEventStore(url));
} else {
  describe('KurrentDB adapter', () => {
    it.skip('needs SVC_TEST_ESDB_URL=esdb://… pointing at a KurrentDB/EventStoreDB server (none can be installed on this machine)', () => {});
  });
}
