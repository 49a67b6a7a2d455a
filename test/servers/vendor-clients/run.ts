import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/*
 * Runs one of the check_*.py scripts with the vendor's own client (installed by install.sh in a
 * venv of its own), JSON in on stdin, JSON out on stdout.
 */

export type VendorClient = 'qfieldcloud-sdk' | 'mergin-client' | 'google-api-python-client';

const python = (client: VendorClient) => path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'tools', client, 'bin', 'python');

/** Why a vendor client cannot run (for skipIf), or false. */
export function vendorClientMissing(client: VendorClient): string | false {
  return existsSync(python(client))
    ? false
    : `${client} is not installed in ${path.dirname(path.dirname(python(client)))}: test/servers/vendor-clients/install.sh (run by \`npm test\`) installs it`;
}

export async function runVendorCheck<T>(client: VendorClient, script: string, input: unknown): Promise<T> {
  const child = spawn(python(client), [path.join(import.meta.dirname, script)], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', NO_PROXY: '*' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-8000)));
  child.stdin.end(JSON.stringify(input));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`${script} (${client}) exited with ${code}:\n${stderr}`);
  return JSON.parse(stdout) as T;
}
