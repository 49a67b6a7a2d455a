import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectors } from '../../connectors/registry.js';
import type { ConnectorDefinition } from '../../connectors/types.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { startServiceProcesses, type ServiceProcesses } from '../support/service-processes.js';
import { until } from '../support/until.js';
import { temporalAddress } from '../support/worker.js';
import { readFileSync } from 'node:fs';

/*
 * Issue 9, point 3: a unique secret planted in every secret field of every connection type must
 * appear nowhere — not in responses, the events table (only sealed), the read models, the logs of
 * the API and the worker (at debug level), nor Temporal's workflow histories. The service runs as
 * real processes, exactly as npm start runs it, and every route that touches a connection is
 * called: create, get, list, update, test (saved and draft), discover, the hub browse helpers,
 * import, deliver, and a Job's Run of every Source type.
 */

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Every Uint8Array in a history (payload data) as text, so a plain search sees what it holds. */
function readable(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (Array.isArray(value)) return value.map(readable);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, readable(v)]));
  return value;
}

describe.skipIf(skip)('planted secrets appear nowhere', () => {
  const planted: string[] = [];
  const responses: string[] = [];
  let svc: ServiceProcesses;
  let closedPort: number;

  const plant = (type: string, field: string) => {
    const value = `PLANTED-${type}-${field}-${randomBytes(8).toString('hex')}`;
    planted.push(value);
    return value;
  };

  /** A configuration that validates and points at a closed port on loopback, secrets planted. */
  function configurationFor(c: ConnectorDefinition): Record<string, unknown> {
    const config: Record<string, unknown> = { ...c.example };
    const shape = c.configuration.shape as Record<string, unknown>;
    if ('host' in shape) config.host = '127.0.0.1';
    if ('port' in shape) config.port = closedPort;
    for (const field of ['url', 'endpoint', 'api_endpoint', 'access_url', 'api_url', 'token_url'])
      if (field in shape) config[field] = `http://127.0.0.1:${closedPort}/${c.type}`;
    if ('force_path_style' in shape) config.force_path_style = true;
    for (const field of c.secrets) config[field] = plant(c.type, field);
    return config;
  }

  /** Browse routes of the types that have them, below /sources/{id}/ and /destinations/{id}/. */
  const browseRoutes: Record<string, string[]> = {
    geoserver: ['geoserver/workspaces', 'geoserver/workspaces/topp/stores', 'geoserver/workspaces/topp/layers'],
    geonode: ['geonode/datasets?search=x'],
  };
  /** Targets of the types whose target has required fields, so the delivery reaches the remote (and fails there). */
  const deliveryTargets: Record<string, Record<string, unknown>> = { geoserver: { layer: 'planted' }, geonode: { title: 'planted' } };

  /** A selector the type's schema accepts (a name, or a layer number), for a Job. */
  function resourceFor(c: ConnectorDefinition): Record<string, unknown> | undefined {
    const key = c.source?.shorthand;
    if (!key) {
      // Types without a shorthand: the field platforms (project + file) and Drive (a file id).
      return [{ project: 'thing', file: 'thing.gpkg' }, { file_id: 'thing' }].find((r) => c.source?.resource.safeParse(r).success);
    }
    const value = ['thing', 0].find((v) => c.source!.resource.safeParse({ [key]: v }).success);
    return { [key]: value };
  }

  async function call(method: string, url: string, body?: unknown) {
    const res = await svc.call(method, url, body);
    responses.push(res.text);
    return res;
  }

  beforeAll(async () => {
    closedPort = await freePort();
    // The API and the worker as processes, logging at debug: the secrets must not be there either.
    svc = await startServiceProcesses({ SVC_LOG_LEVEL: 'debug' });
  }, 180_000);

  afterAll(async () => {
    await svc?.stop();
  });

  it('through every route that touches a connection, for every type', async () => {
    // A Workspace with a converted output, to deliver.
    const file = pointsGeoJson(fixtureDir(), 3);
    const form = new FormData();
    form.append('file', new Blob([readFileSync(file)]), 'places.geojson');
    const uploaded = await fetch(`${svc.base}/api/v1/workspaces`, { method: 'POST', headers: svc.headers, body: form });
    expect(uploaded.status).toBe(201);
    const workspace = (await uploaded.json()) as { id: string };
    expect((await call('POST', `/api/v1/workspaces/${workspace.id}/convert`, { output_format: 'GeoJSON' })).status).toBe(200);

    const sources: { type: string; id: string; resource: Record<string, unknown> | undefined }[] = [];
    let webhook = '';
    for (const c of connectors) {
      for (const kind of ['source', 'destination'] as const) {
        if (!(kind === 'source' ? c.source : c.destination)) continue;
        const plural = `${kind}s`;
        const created = await call('POST', `/api/v1/${plural}`, { name: `${c.type} ${kind}`, type: c.type, configuration: configurationFor(c) });
        expect(created.status, `${c.type} ${kind}: ${created.text}`).toBe(201);
        const id = created.json().id as string;
        for (const field of c.secrets) expect(created.json().configuration[`has_${field}`]).toBe(true);
        await call('GET', `/api/v1/${plural}/${id}`);
        await call('PUT', `/api/v1/${plural}/${id}`, {
          name: `${c.type} ${kind} 2`,
          type: c.type,
          configuration: { ...configurationFor(c), ...Object.fromEntries(c.secrets.map((s) => [s, undefined])) },
        });
        await call('POST', `/api/v1/${plural}/${id}/test`);
        await call('POST', `/api/v1/${plural}/test`, { type: c.type, configuration: configurationFor(c) });
        await call('GET', `/api/v1/${plural}/${id}/discover?schema=public`);
        // The browse helpers open the connection (decrypted) too.
        for (const route of browseRoutes[c.type] ?? []) await call('GET', `/api/v1/${plural}/${id}/${route}`);
        if (kind === 'source' && c.projects) {
          await call('POST', `/api/v1/sources/${id}/projects`);
          await call('POST', `/api/v1/sources/${id}/inspect-project`, { project: 'thing' });
        }
        if (c.type === 'hub') {
          // the hub browse helpers open the connection too; and a password alone goes to generateToken
          for (const sub of ['hub/items?q=parcels', 'hub/folders', 'hub/items/abc123/layers'])
            expect((await call('GET', `/api/v1/${plural}/${id}/${sub}`)).status).toBe(422);
          await call('POST', `/api/v1/${plural}/test`, {
            type: 'hub',
            configuration: { url: `http://127.0.0.1:${closedPort}/portal`, username: 'gis', password: plant('hub', 'password') },
          });
        }
        if (kind === 'source') await call('POST', '/api/v1/workspaces', { source_id: id, source_resource: c.source!.shorthand ? 'thing' : null });
        else await call('POST', `/api/v1/workspaces/${workspace.id}/deliver`, { destination_id: id, destination_target: deliveryTargets[c.type] ?? {} });
        if (kind === 'source') sources.push({ type: c.type, id, resource: resourceFor(c) });
        if (kind === 'destination' && c.type === 'webhook') webhook = id;
      }
    }

    // Jobs: a Run of every Source type, reading with its planted secrets. The remotes are closed
    // ports, which a Run retries for minutes: the Runs are cancelled (the Jobs deleted) once each
    // has made its first attempt, after the state of their pending attempts is kept for the search.
    const runs: { job: string; run: string }[] = [];
    for (const source of sources) {
      const job = await call('POST', '/api/v1/jobs', {
        name: `planted ${source.type}`,
        source_id: source.id,
        source_resource: source.resource,
        destination_id: webhook,
      });
      expect(job.status, `${source.type} Job: ${job.text}`).toBe(201);
      const run = await call('POST', `/api/v1/jobs/${job.json().id}/run`);
      expect(run.status, run.text).toBe(201);
      runs.push({ job: job.json().id, run: run.json().id });
    }
    // Until every attempt still pending has failed once (its last failure is what gets searched).
    const pending: string[] = [];
    const runsConnection = await Connection.connect({ address: temporalAddress! });
    try {
      const temporal = new Client({ connection: runsConnection });
      await until(
        'every pending attempt failed once',
        async () => {
          pending.length = 0;
          let waiting = 0;
          for await (const wf of temporal.workflow.list({ query: `TaskQueue = "${svc.env.SVC_TASK_QUEUE}" AND ExecutionStatus = "Running"` })) {
            const raw = (await temporal.workflow.getHandle(wf.workflowId, wf.runId).describe()).raw;
            waiting += (raw.pendingActivities ?? []).filter((a) => !a.lastFailure).length;
            pending.push(JSON.stringify(readable(raw)));
          }
          return waiting === 0 && pending.some((p) => p.includes('lastFailure'));
        },
        90_000,
        1_000,
      );
    } finally {
      await runsConnection.close();
    }
    expect(pending.join('\n'), 'pending Run attempts').toContain('lastFailure');
    for (const { job, run } of runs) {
      await call('GET', `/api/v1/jobs/${job}/runs/${run}`);
      await call('DELETE', `/api/v1/jobs/${job}`);
    }
    await call('GET', '/api/v1/jobs?limit=200');
    await call('GET', '/api/v1/sources?limit=200');
    await call('GET', '/api/v1/destinations?limit=200');
    expect(planted.length).toBeGreaterThan(40);

    // Responses
    const everything = responses.join('\n');
    for (const secret of planted) expect(everything, 'a response').not.toContain(secret);

    // Events (sealed values only) and every read model
    const client = new pg.Client({ connectionString: svc.env.SVC_DATABASE_URL });
    await client.connect();
    try {
      const events = (await client.query('SELECT data::text AS d FROM events')).rows.map((r) => r.d as string).join('\n');
      expect(events).toMatch(/"v1\./);
      const tables = (
        await client.query(`SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`)
      ).rows;
      let rows = '';
      for (const t of tables) {
        const r = await client.query(`SELECT row_to_json(x)::text AS j FROM ${pg.escapeIdentifier(t.table_schema)}.${pg.escapeIdentifier(t.table_name)} x`);
        rows += r.rows.map((x) => x.j).join('\n');
      }
      for (const secret of planted) {
        expect(events, 'the events table').not.toContain(secret);
        expect(rows, 'a table').not.toContain(secret);
      }
      const readModels = (await client.query(`SELECT row_to_json(c)::text AS j FROM rm.connections c`)).rows.map((r) => r.j).join('\n');
      expect(readModels).not.toContain('v1.');
    } finally {
      await client.end();
    }

    // Temporal workflow histories of this service's task queue
    const connection = await Connection.connect({ address: temporalAddress! });
    try {
      const temporal = new Client({ connection });
      let histories = '';
      let count = 0;
      for await (const wf of temporal.workflow.list({ query: `TaskQueue = "${svc.env.SVC_TASK_QUEUE}"` })) {
        const history = await temporal.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
        histories += JSON.stringify(readable(history));
        count += 1;
      }
      expect(count, 'workflows on the task queue (convert + deliveries)').toBeGreaterThan(0);
      expect(histories).toContain(workspace.id);
      for (const secret of planted) expect(histories, 'a workflow history').not.toContain(secret);
    } finally {
      await connection.close();
    }

    for (const secret of planted) expect(pending.join('\n'), 'a pending Run attempt (its last failure)').not.toContain(secret);

    // Logs of both processes, at debug level
    expect(svc.output()).toContain('"level"');
    for (const secret of planted) expect(svc.output(), 'the logs').not.toContain(secret);
  }, 600_000);
});
