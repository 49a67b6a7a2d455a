import { createEventStore } from '../eventstore/index.js';
import { loadConfig } from '../platform/config.js';
import { createDatabasePool } from '../platform/db.js';
import { projectors } from '../projections/index.js';
import { LIVE_SCHEMA, rebuildProjections } from '../projections/runner.js';

/**
 * `npm run projections:rebuild`: replays every event from position zero into a fresh schema and
 * swaps it in for the live read models in one transaction. Safe while the API runs.
 */
const config = loadConfig();
const store = createEventStore(config);
await store.init();
const pool = await createDatabasePool(config.databaseUrl);
const started = Date.now();
await rebuildProjections(store, pool, projectors, { target: `${LIVE_SCHEMA}_rebuild`, swapInto: LIVE_SCHEMA });
console.log(`read models rebuilt from the event store in ${Date.now() - started} ms`);
await pool.end();
await store.close();
