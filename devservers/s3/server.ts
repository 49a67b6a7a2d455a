import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '../ports.js';
import { stopProcess, type Wrap } from '../processes.js';

/*
 * moto's S3 API on a free loopback port (serve.py), with IAM authentication on: an access key
 * that moto does not know, or a wrong secret, is refused as AWS would. Its objects live in the
 * server's memory and go with it.
 */

const python = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'tools/moto/bin/python');

export interface S3Keys {
  access_key: string;
  secret_key: string;
}

export interface S3Server {
  endpoint: string;
  /** May do anything in S3. */
  writer: S3Keys;
  /** A valid user without any S3 permission. */
  nobody: S3Keys;
  stop(): Promise<void>;
}

export function s3ServerUnavailable(): string | false {
  return existsSync(python)
    ? false
    : `moto is not installed in ${path.dirname(path.dirname(python))}: devservers/s3/install.sh (run by \`npm test\`) installs it`;
}

/** On loopback, or on another host (the cluster suite's network namespaces: `wrap` runs it there, listening on `host`). */
export async function startS3Server(options: { host?: string; port?: number; wrap?: Wrap } = {}): Promise<S3Server> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? (await freePort());
  const [command, args] = (options.wrap ?? ((c: string, a: string[]) => [c, a] as [string, string[]]))(python, [
    path.join(import.meta.dirname, 'serve.py'),
    String(port),
    host,
  ]);
  // stdin stays open while the suite runs: serve.py stops when it closes, even if we crash.
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000))); // stdout carries the keys
  const first = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`moto did not start in 60 s\n${log}`)), 60_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve(line);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`moto exited with ${code}\n${log}`));
    });
  });
  const keys = JSON.parse(first) as { writer: S3Keys; nobody: S3Keys };
  return {
    endpoint: `http://${host}:${port}`,
    ...keys,
    async stop() {
      await stopProcess(child, () => child.stdin!.end());
    },
  };
}
