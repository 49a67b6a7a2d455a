import { readFile } from 'node:fs/promises';
import { afterAll, describe, expect } from 'vitest';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest, JOB_SCOPES } from '../support/e2e.js';
import { fixtureDir, manyPointsGpkg } from '../support/fixtures.js';
import { startHeldFileServer, startHeldReceiver } from '../support/held-servers.js';
import { temporalAddress } from '../support/worker.js';

/*
 * Issue 34, finding 6: progress with total and percentage for the Workspace's long requests. An
 * import from a url Source is held by its file server after 9 MiB (past the download's first
 * report, every 8 MiB), and a delivery by its webhook receiver after 10 MiB (the webhook reports
 * every 4 MiB): each is seen mid-way through GET /api/v1/progress/{id} on any machine, however
 * fast, and released once the test has looked.
 */

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');
const it = e2eTest({ worker: true, scopes: [...JOB_SCOPES, 'workspaces:read', 'workspaces:write', 'workspaces:run', 'sources:read', 'destinations:read'] });

const MiB = 1024 * 1024;
const POINTS = 200_000;

interface Progress {
  progress_id: string;
  operation: string;
  status: string;
  phase: string | null;
  bytes_written: number | null;
  bytes_total: number | null;
  features_written: number | null;
  percent: number | null;
}

describe.skipIf(skip)('GET /api/v1/progress/{id}: a Workspace import, convert and delivery followed while they run', () => {
  const closers: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  /** Polls until `seen` holds (or the request ended), returning every answer it got. */
  async function follow(
    get: (url: string) => Promise<{ statusCode: number; json(): unknown }>,
    id: string,
    seen: (p: Progress) => boolean,
    ended: () => boolean,
  ) {
    const answers: Progress[] = [];
    for (let i = 0; i < 1200 && !ended(); i++) {
      const res = await get(`/api/v1/progress/${id}`);
      if (res.statusCode === 200) {
        const p = res.json() as Progress;
        answers.push(p);
        if (seen(p)) break;
      } else {
        expect(res.statusCode).toBe(404); // not begun yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return answers;
  }

  it('import, convert and deliver each show their total and share done, and end completed', async ({ send, get, jobs }) => {
    const gpkg = await readFile(manyPointsGpkg(fixtureDir(), POINTS));
    expect(gpkg.length).toBeGreaterThan(10 * MiB);
    const remote = await startHeldFileServer(gpkg, 9 * MiB, 'application/geopackage+sqlite3');
    closers.push(() => remote.release(), remote.close);
    const source = (
      await jobs.call('POST', '/api/v1/sources', { name: 'Points, slowly', type: 'url', configuration: { url: `${remote.url}/points.gpkg` } })
    ).json();

    // Import: the download's own declared size is its total.
    let importDone = false;
    const importing = send('POST', '/api/v1/workspaces', { source_id: source.id, progress_id: 'import-points-1' }).finally(() => {
      importDone = true;
    });
    const during = await follow(
      get,
      'import-points-1',
      (p) => (p.bytes_written ?? 0) >= 8 * MiB,
      () => importDone,
    );
    const mid = during.at(-1)!;
    expect(importDone, 'the import finished while held: the server did not hold it').toBe(false);
    expect(mid).toMatchObject({ operation: 'import', status: 'running', phase: 'transfer', bytes_total: gpkg.length });
    expect(mid.bytes_written).toBeGreaterThanOrEqual(8 * MiB);
    expect(mid.bytes_written).toBeLessThanOrEqual(9 * MiB);
    expect(mid.percent).toBeCloseTo((100 * mid.bytes_written!) / gpkg.length, 0);
    expect(mid.percent).toBeLessThan(100);
    remote.release();
    const created = await importing;
    expect(created.statusCode, created.body).toBe(201);
    const workspace = created.json();
    const afterImport = (await get('/api/v1/progress/import-points-1')).json() as Progress;
    expect(afterImport).toMatchObject({ status: 'completed', percent: 100 });

    // Convert: GDAL's own share; seen here at its end (a convert cannot be held mid-way).
    const converted = await send('POST', `/api/v1/workspaces/${workspace.id}/convert`, { output_format: 'geojson', progress_id: 'convert-points-1' });
    expect(converted.statusCode, converted.body).toBe(200);
    const output = converted.json().output;
    expect(output.size).toBeGreaterThan(12 * MiB);
    expect((await get('/api/v1/progress/convert-points-1')).json()).toMatchObject({ operation: 'convert', status: 'completed', percent: 100 });

    // Deliver: the output's size is the total from the start.
    const receiver = await startHeldReceiver(10 * MiB);
    closers.push(() => receiver.release(), receiver.close);
    const hook = (await jobs.call('POST', '/api/v1/destinations', { name: 'Ingest hook', type: 'webhook', configuration: { url: receiver.url } })).json();
    let deliverDone = false;
    const delivering = send('POST', `/api/v1/workspaces/${workspace.id}/deliver`, { destination_id: hook.id, progress_id: 'deliver-points-1' }).finally(() => {
      deliverDone = true;
    });
    const sending = await follow(
      get,
      'deliver-points-1',
      (p) => (p.bytes_written ?? 0) >= 4 * MiB,
      () => deliverDone,
    );
    expect(sending[0], 'the delivery was never seen').toBeDefined();
    expect(sending[0]).toMatchObject({ operation: 'deliver', status: 'running', phase: 'transfer', bytes_total: output.size });
    const sent = sending.at(-1)!;
    expect(deliverDone, 'the delivery finished while held: the receiver did not hold it').toBe(false);
    expect(sent.bytes_written).toBeGreaterThanOrEqual(4 * MiB);
    expect(sent.percent).toBeGreaterThan(0);
    expect(sent.percent).toBeLessThan(100);
    expect(sent.percent).toBeCloseTo((100 * sent.bytes_written!) / output.size, 0);
    receiver.release();
    const delivered = await delivering;
    expect(delivered.statusCode, delivered.body).toBe(200);
    expect((await get('/api/v1/progress/deliver-points-1')).json()).toMatchObject({ status: 'completed', percent: 100 });
  });

  it('a failed request ends failed; a bad id is refused; another user cannot see one', async ({ send, get, jobs, tokenFor }) => {
    const source = (await jobs.call('POST', '/api/v1/sources', { name: 'Gone', type: 'url', configuration: { url: 'http://127.0.0.1:9/gone.gpkg' } })).json();
    const failed = await send('POST', '/api/v1/workspaces', { source_id: source.id, progress_id: 'import-gone-1' });
    expect(failed.statusCode).toBeGreaterThanOrEqual(400);
    expect((await get('/api/v1/progress/import-gone-1')).json()).toMatchObject({ operation: 'import', status: 'failed' });

    const bad = await send('POST', '/api/v1/workspaces', { source_id: source.id, progress_id: 'a b' });
    // A body the schema refuses is a 422 (as every body is here), a bad path parameter a 400.
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('progress_id');
    expect((await get('/api/v1/progress/short')).statusCode).toBe(400);
    expect((await get('/api/v1/progress/never-started-1')).json().error.code).toBe('not_found');

    const other = await tokenFor(['workspaces:read'], { email: 'progress-other@example.com', password: 'another long passphrase 1' });
    expect((await get('/api/v1/progress/import-gone-1', other)).statusCode).toBe(404);
  });
});
