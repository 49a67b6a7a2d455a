import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/config.js';
import { pingWorkflow } from '../../workflows/index.js';
import { createWorker } from '../../workflows/worker.js';

const address = process.env.SVC_TEST_TEMPORAL_ADDRESS;

describe.skipIf(!address)('Temporal worker wiring (needs SVC_TEST_TEMPORAL_ADDRESS: run with `npm test`, which starts a dev server)', () => {
  it('runs a workflow whose activity reaches GDAL on the worker', async () => {
    const taskQueue = `test-${randomBytes(4).toString('hex')}`;
    const config = loadConfig({ SVC_DATABASE_URL: 'postgres://unused', SVC_TEMPORAL_ADDRESS: address, SVC_TASK_QUEUE: taskQueue, SVC_DATA_DIR: '.data/test-worker' });
    const { worker, connection } = await createWorker(config);
    const clientConnection = await Connection.connect({ address });
    const client = new Client({ connection: clientConnection });
    try {
      const result = await worker.runUntil(
        client.workflow.execute(pingWorkflow, { taskQueue, workflowId: `ping-${taskQueue}`, args: ['hello'] }),
      );
      expect(result.echo).toBe('hello');
      expect(result.gdal).toMatch(/^3\./);
      expect(result.worker).toMatch(/^worker@/);
    } finally {
      await clientConnection.close();
      await connection.close();
    }
  }, 120_000);
});
