import { execFileSync } from 'node:child_process';
import { Agent, fetch } from 'undici';
import type { startStack } from '../scripts/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
export type BenchService = ReturnType<typeof benchService>;

const s = (ms: number) => (ms / 1000).toFixed(1);
/** The Run's steps and how long each took (from the Run record), for where a Job's time goes. */
const stepTimes = (run: { steps: { name: string; duration_ms: number | null }[] }) =>
  run.steps.map((st) => `${st.name} ${s(st.duration_ms ?? 0)} s`).join(', ');

/**
 * A bench's calls to the service under test (a stack started with `databases: ['target']`), and
 * the PostGIS database `target` its Jobs deliver to, as the service and the baseline script see it.
 */
export function benchService(stack: Stack) {
  const targetUrl = new URL(stack.databaseUrlOf('target'));
  const pgConnection = `PG:host=${targetUrl.hostname} port=${targetUrl.port} dbname=target user=${decodeURIComponent(targetUrl.username)} password=${decodeURIComponent(targetUrl.password)}`;
  /*
   * A convert answers when it is done: 10M points to a GeoPackage took over 300 s on a loaded
   * machine, the default wait for response headers, so the bench waits as long as the service does.
   */
  const patient = new Agent({ headersTimeout: 0, bodyTimeout: 0 });
  const api = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${stack.base}${url}`, {
      dispatcher: patient,
      method,
      headers: { authorization: `Bearer ${stack.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
    return res.status === 204 ? null : ((await res.json()) as any);
  };

  /** Run Now, then polls the Run every `pollMs` until it succeeded (anything else ends the bench). */
  async function runToSuccess(jobId: string, pollMs: number) {
    let seen = await api('POST', `/api/v1/jobs/${jobId}/run`);
    while (seen.status !== 'succeeded') {
      if (seen.status === 'failed' || seen.status === 'cancelled') throw new Error(`Run ${seen.id} ${seen.status}: ${JSON.stringify(seen.error)}`);
      await new Promise((r) => setTimeout(r, pollMs));
      seen = await api('GET', `/api/v1/jobs/${jobId}/runs/${seen.id}`);
    }
    return seen;
  }

  /** Throws unless a table of `target` holds `expected` rows; `what` names who wrote it. */
  function expectRows(table: string, expected: number, what = '') {
    const rows = execFileSync('psql', [targetUrl.toString(), '-qAtc', `SELECT count(*) FROM ${table}`])
      .toString()
      .trim();
    if (Number(rows) !== expected) throw new Error(`${table} holds ${rows} rows, expected ${expected}${what}`);
  }

  /** Runs a Job to success (polling every 200 ms) and checks the rows that reached the table; logs its steps' times. */
  async function runJob(jobId: string, table: string, features: number) {
    const seen = await runToSuccess(jobId, 200);
    expectRows(table, features, ` (Run ${seen.id})`);
    console.log(`    Run ${seen.id}: ${stepTimes(seen)}`);
    return seen;
  }

  /** A Workspace deleted, if there is one (a row's earlier repetition left it). */
  const dropWorkspace = (ws?: { id: string }) => (ws ? api('DELETE', `/api/v1/workspaces/${ws.id}`).catch(() => undefined) : undefined);

  /** The PostGIS Destination of the bench's Jobs. */
  const createDestination = () =>
    api('POST', '/api/v1/destinations', {
      name: 'target',
      type: 'postgis',
      configuration: {
        host: targetUrl.hostname,
        port: Number(targetUrl.port),
        database: 'target',
        username: decodeURIComponent(targetUrl.username),
        password: decodeURIComponent(targetUrl.password),
        ssl_mode: 'disable',
      },
    });

  /** The baseline script's load of a file into a table of `target` (ogr2ogr), and its count of the rows (psql). */
  const baselineLoad = (file: string, table: string) =>
    `ogr2ogr -f PostgreSQL '${pgConnection}' '${file}' -nln ${table} -overwrite -lco GEOMETRY_NAME=geom && psql '${targetUrl.toString()}' -qAtc 'SELECT count(*) FROM ${table}' >/dev/null`;

  return { targetUrl, api, runToSuccess, expectRows, runJob, dropWorkspace, createDestination, baselineLoad };
}
