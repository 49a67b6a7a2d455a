import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '../ports.js';
import { stopProcess } from '../processes.js';

/*
 * The BigQuery REST API stand-in (serve.py) on a free loopback port, with three service-account
 * keys it made at start: `writer` may do anything in the project, `nobody` is a valid account
 * without permission, `stranger` is signed with a key the server never issued. Its tables live in
 * the server's memory (SQLite) and go with it. check.py drives it with Google's Python client.
 */

export const bigQueryPython = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'tools/bigquery/bin/python');

export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id: string;
  [key: string]: string;
}

export interface BigQueryServer {
  endpoint: string;
  project: string;
  keys: { writer: ServiceAccountKey; nobody: ServiceAccountKey; stranger: ServiceAccountKey };
  stop(): Promise<void>;
}

export function bigQueryServerUnavailable(): string | false {
  return existsSync(bigQueryPython)
    ? false
    : `google-cloud-bigquery is not installed in ${path.dirname(path.dirname(bigQueryPython))}: devservers/bigquery/install.sh (run by \`npm test\`) installs it`;
}

export async function startBigQueryServer(project = 'geoflow-test'): Promise<BigQueryServer> {
  const port = await freePort();
  // stdin stays open while the suite runs: serve.py stops when it closes, even if we crash.
  const child = spawn(bigQueryPython, [path.join(import.meta.dirname, 'serve.py'), String(port), project], { stdio: ['pipe', 'pipe', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000))); // stdout carries the keys
  const first = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`the BigQuery stand-in did not start in 60 s\n${log}`)), 60_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      resolve(line);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the BigQuery stand-in exited with ${code}\n${log}`));
    });
  });
  const started = JSON.parse(first) as { keys: BigQueryServer['keys'] };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    project,
    keys: started.keys,
    async stop() {
      await stopProcess(child, () => child.stdin!.end());
    },
  };
}
