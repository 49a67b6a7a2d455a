import { execFileSync } from 'node:child_process';
import { Agent, fetch } from 'undici';
import type { startStack } from '../../scripts/stack.js';
import { s } from './measure.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
export type ScaleService = ReturnType<typeof scaleService>;

/** The Run's steps and how long each took (from the Run record), for where a Job's time goes. */
const stepTimes = (run: { steps: { name: string; duration_ms: number | null }[] }) =>
  run.steps.map((st) => `${st.name} ${s(st.duration_ms ?? 0)} s`).join(', ');

/** The bench's calls to the service under test, and the PostGIS database its Jobs deliver to (`target`). */
export function scaleService(stack: Stack) {
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

  /** Runs a Job and waits for its Run to succeed; checks the rows that reached the table. */
  async function runJob(jobId: string, table: string, features: number) {
    let seen = await api('POST', `/api/v1/jobs/${jobId}/run`);
    while (seen.status !== 'succeeded') {
      if (seen.status === 'failed' || seen.status === 'cancelled') throw new Error(`Run ${seen.id} ${seen.status}: ${JSON.stringify(seen.error)}`);
      await new Promise((r) => setTimeout(r, 200));
      seen = await api('GET', `/api/v1/jobs/${jobId}/runs/${seen.id}`);
    }
    const rowsIn = execFileSync('psql', [targetUrl.toString(), '-qAtc', `SELECT count(*) FROM ${table}`])
      .toString()
      .trim();
    if (Number(rowsIn) !== features) throw new Error(`${table} holds ${rowsIn} rows, expected ${features} (Run ${seen.id})`);
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

  /** The baseline's load of a GeoPackage into a table of `target`, and its count of the rows. */
  const baselineLoad = (file: string, table: string) =>
    `ogr2ogr -f PostgreSQL '${pgConnection}' '${file}' -nln ${table} -overwrite -lco GEOMETRY_NAME=geom && psql '${targetUrl.toString()}' -qAtc 'SELECT count(*) FROM ${table}' >/dev/null`;

  return { api, runJob, dropWorkspace, createDestination, baselineLoad };
}
