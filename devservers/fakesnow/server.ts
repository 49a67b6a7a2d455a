import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '../ports.js';
import { stopProcess } from '../processes.js';

/*
 * fakesnow's Snowflake server (serve.py: fakesnow plus what its server lacks for the Node.js
 * driver) on a free loopback port. Its databases live in memory (DuckDB) and go with it; it
 * accepts any account, user and password.
 */

const python = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'tools/fakesnow/bin/python');

export interface FakesnowServer {
  accessUrl: string;
  stop(): Promise<void>;
}

export function fakesnowUnavailable(): string | false {
  return existsSync(python)
    ? false
    : `fakesnow is not installed in ${path.dirname(path.dirname(python))}: devservers/fakesnow/install.sh (run by \`npm test\`) installs it`;
}

export async function startFakesnow(): Promise<FakesnowServer> {
  const port = await freePort();
  // stdin stays open while the suite runs: serve.py stops when it closes, even if we crash.
  const child = spawn(python, [path.join(import.meta.dirname, 'serve.py'), String(port)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`fakesnow did not start in 60 s\n${log}`)), 60_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve(line);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`fakesnow exited with ${code}\n${log}`));
    });
  });
  return {
    accessUrl: `http://127.0.0.1:${port}`,
    async stop() {
      await stopProcess(child, () => child.stdin!.end());
    },
  };
}
