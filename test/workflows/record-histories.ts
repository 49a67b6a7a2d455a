import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { resetDir, startPostgres, startTemporal } from '../../scripts/local-services.js';
import { freePort } from '../../devservers/ports.js';

/**
 * `npm run histories:record`: runs the Job workflows through their main paths against a
 * throwaway PostgreSQL and Temporal dev server, and writes each workflow's history to
 * test/workflows/histories/ for the replay test (replay.int.spec.ts). Re-record when a workflow
 * changes on purpose (and keep the old files, renamed, while Runs recorded with them may still be open).
 */
const root = process.cwd();
const dataDir = path.resolve(process.env.SVC_DATA_DIR ?? '.data');
const work = path.join(dataDir, 'record-histories');
resetDir(work);
const pg = await startPostgres(path.join(work, 'pg'), await freePort(), ['postgres'], { fresh: true, durable: false });
const temporal = await startTemporal(dataDir, await freePort());
process.env.SVC_TEST_DATABASE_URL = pg.url('postgres');
process.env.SVC_TEST_TEMPORAL_ADDRESS = temporal.address;

const { createTestApp, createToken, login } = await import('../support/app.js');
const { startTestWorker } = await import('../support/worker.js');
const { fixtureDir, pointsGeoJson } = await import('../support/fixtures.js');
const { fileBody, finished, jobsClient, startFileServer } = await import('../support/jobs.js');
const { until, untilRead } = await import('../support/until.js');

// Files of this recording replace those of the same name; older ones stay (renamed by whoever
// changed the workflow, e.g. *-before-local-bookkeeping.json) while Runs recorded with them may be open.
const out = path.join(root, 'test/workflows/histories');
mkdirSync(out, { recursive: true });

const sut = await createTestApp({ temporal: true });
const worker = await startTestWorker(sut.services.config);
const files = await startFileServer();
const client = sut.services.temporal!;
/** The history as `temporal workflow show --output json` prints it, which the replayer reads. */
const save = async (name: string, workflowId: string) => {
  const json = execFileSync(
    path.join(dataDir, 'tools/venv/bin/temporal'),
    ['workflow', 'show', '--address', temporal.address, '--workflow-id', workflowId, '--output', 'json'],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  ).toString();
  writeFileSync(path.join(out, `${name}.json`), json);
  console.log(`recorded ${name} (${(JSON.parse(json) as { events: unknown[] }).events.length} events)`);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

try {
  files.put('/places.geojson', fileBody(pointsGeoJson(fixtureDir(), 12)));
  const api = jobsClient(
    () => sut.app,
    await createToken(sut.app, await login(sut.app), ['jobs:read', 'jobs:write', 'jobs:run', 'sources:write', 'destinations:write']),
  );
  const source = (await api.call('POST', '/api/v1/sources', { name: 'places', type: 'url', configuration: { url: `${files.url}/places.geojson` } })).json();
  const missing = (await api.call('POST', '/api/v1/sources', { name: 'gone', type: 'url', configuration: { url: `${files.url}/gone.geojson` } })).json();
  const destination = (await api.call('POST', '/api/v1/destinations', { name: 'hook', type: 'webhook', configuration: { url: `${files.url}/hook` } })).json();
  const job = async (extra: Record<string, unknown>) =>
    (
      await api.call('POST', '/api/v1/jobs', {
        name: 'recorded',
        source_id: source.id,
        destination_id: destination.id,
        operations: [{ type: 'rename_column', from: 'name', to: 'label' }],
        output_format: 'GPKG',
        ...extra,
      })
    ).json();
  const runNow = async (jobId: string) => (await api.call('POST', `/api/v1/jobs/${jobId}/run`)).json().id as string;

  // Every step (extract, transform, python, convert, deliver), twice in one coordinator: the second queued behind the first.
  const full = await job({ python_script: 'import shutil, sys\nshutil.copy(sys.argv[1], sys.argv[2])\n' });
  const first = await runNow(full.id);
  const second = await runNow(full.id);
  const a = await api.waitForRun(full.id, first);
  await api.waitForRun(full.id, second);
  await save(`run-${a.status}-all-steps`, `run-${first}`);
  // The same file again: the Source is unchanged and the later steps are skipped.
  const unchanged = await runNow(full.id);
  await api.waitForRun(full.id, unchanged);
  await save('run-skipped-unchanged', `run-${unchanged}`);
  // The coordinator takes in the Run's end a moment after the Run reads finished, with nothing the
  // script can see to wait on: a pause, kept from the recording as it was.
  await sleep(500);
  await save('coordinator-two-runs', `job-${full.id}`);

  // A Source that is not there: extract fails, classified and final.
  const broken = await job({ source_id: missing.id, pipeline: { transform: false, convert: false } });
  const failed = await runNow(broken.id);
  await api.waitForRun(broken.id, failed);
  await save('run-failed-extract', `run-${failed}`);
  // Once the file is there, the retry of the failed Run succeeds.
  files.put('/gone.geojson', fileBody(pointsGeoJson(fixtureDir(), 2)));
  const retry = (await api.call('POST', `/api/v1/jobs/${broken.id}/runs/${failed}/retry`)).json().id;
  await api.waitForRun(broken.id, retry);
  await save('run-retry', `run-${retry}`);

  // A Job deleted while its Run waits on the Source and another Run waits behind it.
  const doomed = await job({ pipeline: { transform: false, convert: false } });
  const gate = files.hold('/places.geojson');
  const held = await runNow(doomed.id);
  await api.waitForRun(doomed.id, held, (r) => r.status === 'running');
  await until('the Source request held', () => gate.waiting() > 0);
  await runNow(doomed.id);
  await api.call('DELETE', `/api/v1/jobs/${doomed.id}`);
  await until('the coordinator ended', async () => (await client.workflow.getHandle(`job-${doomed.id}`).describe()).status.name !== 'RUNNING', 20_000, 200);
  gate.release();
  await save('run-cancelled', `run-${held}`);
  await save('coordinator-cancelled', `job-${doomed.id}`);

  // A schedule fire: the trigger workflow asks for a Run like Run Now does.
  const scheduled = await job({ schedule: { kind: 'daily', timezone: 'Europe/Berlin', hour: 2, minute: 30 }, pipeline: { transform: false, convert: false } });
  await client.schedule.getHandle(`schedule-job-${scheduled.id}`).trigger();
  await untilRead(
    'the scheduled Run finished',
    async () => (await api.call('GET', `/api/v1/jobs/${scheduled.id}/runs`)).json().items as { id: string; status: string }[],
    (runs) => runs.length > 0 && finished(runs[0]!.status),
    50_000,
  );
  // Visibility (the list) lags a little behind.
  const triggerId = await until(
    'the scheduled trigger workflow listed',
    async () => {
      let id: string | undefined;
      for await (const w of client.workflow.list({ query: `WorkflowType = 'scheduledRunWorkflow'` })) id = w.workflowId;
      return id;
    },
    10_000,
    200,
  );
  await save('scheduled-trigger', triggerId);
} finally {
  await worker.stop();
  await files.close();
  await sut.close();
  temporal.stop();
  pg.stop();
}
