import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, skipWithoutDatabase } from '../support/database.js';
import { loadConfig } from '../../platform/config.js';
import { pingWorkflow } from '../../workflows/index.js';
import { createWorker } from '../../worker/worker.js';

const address = process.env.SVC_TEST_TEMPORAL_ADDRESS;

const skip = skipWithoutDatabase || (!address && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts a Temporal dev server');

describe.skipIf(skip)('Temporal worker wiring', () => {
  it('runs a workflow whose activity reaches GDAL on the worker', async () => {
    const taskQueue = `test-${randomBytes(4).toString('hex')}`;
    const db = await createTestDatabase();
    const config = loadConfig({
      SVC_DATABASE_URL: db.url,
      SVC_TEMPORAL_ADDRESS: address,
      SVC_TASK_QUEUE: taskQueue,
      SVC_DATA_DIR: '.data/test-worker',
      SVC_LOG_LEVEL: 'silent',
    });
    const { worker, close } = await createWorker(config);
    const clientConnection = await Connection.connect({ address });
    const client = new Client({ connection: clientConnection });
    try {
      const result = await worker.runUntil(client.workflow.execute(pingWorkflow, { taskQueue, workflowId: `ping-${taskQueue}`, args: ['hello'] }));
      expect(result.echo).toBe('hello');
      expect(result.gdal).toMatch(/^3\./);
      expect(result.worker).toMatch(/^worker@/);
    } finally {
      await clientConnection.close();
      await close();
      await db.drop();
    }
  }, 120_000);
});
