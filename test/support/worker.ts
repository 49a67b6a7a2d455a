import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Worker } from '@temporalio/worker';
import type { Config } from '../../platform/config.js';
import { createWorker } from '../../worker/worker.js';
import { waitForPollers } from '../../devservers/temporal.js';

/** A real worker on the app's task queue and data folder, running until stop(). */
export async function startTestWorker(config: Config): Promise<{ worker: Worker; stop(): Promise<void> }> {
  const { worker, close } = await createWorker(config);
  const running = worker.run();
  await waitForPollers(config);
  return {
    worker,
    async stop() {
      worker.shutdown();
      await running;
      await close();
    },
  };
}

export const temporalAddress = process.env.SVC_TEST_TEMPORAL_ADDRESS;

/** Why a suite that starts Temporal dev servers of its own cannot (the CLI scripts/ensure.sh installs), or false. */
const temporalCli = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'tools/venv/bin/temporal');
export const temporalMissing = !existsSync(temporalCli) && `the Temporal CLI is missing at ${temporalCli} (scripts/ensure.sh installs it)`;

/**
 * The worker as its own process (`node worker/worker.ts`), as `npm start` runs it: for tests
 * that kill it. Resolves once it polls the task queue.
 */
export async function spawnWorkerProcess(
  env: Record<string, string>,
  config: Config,
): Promise<{ child: ChildProcess; exited: Promise<number | null>; kill(signal: NodeJS.Signals): Promise<void> }> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'worker/worker.ts'], {
    env: { ...process.env, ...env, UV_THREADPOOL_SIZE: '8' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await waitForPollers(config, { timeoutMs: 60_000 });
  return {
    child,
    exited,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
