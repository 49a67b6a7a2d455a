import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, waitForPort } from '../../../devservers/ports.js';
import { stopProcess, tail } from '../../../devservers/processes.js';

/*
 * Azurite's Blob service (the npm devDependency) on a free loopback port, its data in a temporary
 * folder, with one storage account whose key is new on every start (not the emulator's
 * well-known development key). Telemetry off: the tests talk to nothing outside the machine.
 */

const bin = path.resolve('node_modules/.bin/azurite-blob');

export interface AzuriteServer {
  /** The account's blob endpoint, path-style as Azurite serves it: http://127.0.0.1:PORT/ACCOUNT */
  endpoint: string;
  accountName: string;
  accountKey: string;
  stop(): Promise<void>;
}

export function azuriteUnavailable(): string | false {
  return existsSync(bin) ? false : 'Azurite is not installed: it is a devDependency (npm install)';
}

export async function startAzurite(): Promise<AzuriteServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'azurite-'));
  const port = await freePort();
  const accountName = 'geoflowtest';
  const accountKey = randomBytes(64).toString('base64');
  const child = spawn(
    bin,
    ['--blobHost', '127.0.0.1', '--blobPort', String(port), '--location', dir, '--silent', '--disableTelemetry', '--skipApiVersionCheck'],
    { env: { ...process.env, AZURITE_ACCOUNTS: `${accountName}:${accountKey}` }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const log = tail(child);
  try {
    await waitForPort(port, '127.0.0.1', 30_000);
  } catch (error) {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`Azurite did not start: ${(error as Error).message}\n${log()}`);
  }
  return {
    endpoint: `http://127.0.0.1:${port}/${accountName}`,
    accountName,
    accountKey,
    async stop() {
      await stopProcess(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
