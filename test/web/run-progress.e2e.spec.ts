import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allScopes } from '../../domain/accounts/scopes.js';
import { createToken, login } from '../support/app.js';
import { fixtureDir, manyPointsGpkg } from '../support/fixtures.js';
import { fileBody, jobsClient, startFileServer, type FileServer } from '../support/jobs.js';
import { startHeldReceiver } from '../support/held-servers.js';
import { closeAll, loggedInBrowser, skipReason, snapBoth, startServer, type Browser, type Server } from './browser.js';

/*
 * Issue 34, finding 6: a Run's page while it runs — the running step's progress with its total
 * and percentage, and the log of the steps already done. The Run delivers a GeoJSON of 200,000
 * points (≈ 24 MB) to a webhook whose receiver stops reading after a few MB until the test has
 * looked, so the deliver step is seen mid-way on every machine, however fast.
 */

const skip = skipReason({ temporal: true });
const POINTS = 200_000;
/** The receiver stops reading here: past the connector's first progress report (every 4 MiB). */
const PAUSE_AT = 10 * 1024 * 1024;

describe.skipIf(skip)(`browser: a Run's page while it runs${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let server: Server;
  let browser: Browser;
  let files: FileServer;
  let receiver: Awaited<ReturnType<typeof startHeldReceiver>>;

  beforeAll(async () => {
    files = await startFileServer();
    files.put('/points.gpkg', fileBody(manyPointsGpkg(fixtureDir(), POINTS)), 'application/geopackage+sqlite3');
    receiver = await startHeldReceiver(PAUSE_AT);
    server = await startServer({ temporal: true });
    browser = await loggedInBrowser(server);
  }, 180_000);
  afterAll(() => closeAll(() => receiver?.release(), browser, server, receiver, files));

  it('shows the deliver step’s progress with total and percentage, and the log of extract and convert; then the finished Run', async () => {
    const app = server.sut.app;
    const token = await createToken(app, await login(app), [...allScopes]);
    const api = jobsClient(() => app, token);
    const source = (
      await api.call('POST', '/api/v1/sources', { name: 'World points', type: 'url', configuration: { url: `${files.url}/points.gpkg` } })
    ).json();
    const hook = (await api.call('POST', '/api/v1/destinations', { name: 'Ingest hook', type: 'webhook', configuration: { url: receiver.url } })).json();
    const job = await api.call('POST', '/api/v1/jobs', {
      name: 'World points to the ingest hook',
      source_id: source.id,
      transform_mode: 'manual',
      operations: [],
      output_format: 'GeoJSON',
      destination_id: hook.id,
    });
    expect(job.statusCode, job.body).toBe(201);
    const jobId = job.json().id as string;
    const started = await api.call('POST', `/api/v1/jobs/${jobId}/run`);
    expect(started.statusCode, started.body).toBe(201);
    const runId = started.json().id as string;

    const { page } = browser;
    await page.goto(`${server.url}/#/jobs/${encodeURIComponent(jobId)}/runs/${encodeURIComponent(runId)}`);
    await page.getByTestId('run-status').waitFor();
    // The page follows the Run by itself: no reload from here on
    const deliver = page.locator('tr[data-step=deliver]');
    await expect.poll(() => deliver.getAttribute('data-status'), { timeout: 180_000, interval: 500 }).toBe('running');
    expect(await page.getByTestId('run-status').textContent()).toBe('Running');
    const progress = deliver.getByTestId('step-progress');
    await expect.poll(() => progress.textContent().catch(() => ''), { timeout: 60_000, interval: 500 }).toMatch(/^\d+(\.\d)? of \d+(\.\d)? MB written · \d+%$/);
    expect(receiver.holding()).toBe(1);
    const [written, total, percent] = (await progress.textContent())!.match(/[\d.]+/g)!.map(Number) as [number, number, number];
    expect(total).toBeGreaterThan(PAUSE_AT / 1024 / 1024);
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(total);
    expect(percent).toBe(Math.floor((100 * written) / total));

    // The log of the steps already done: what extract read from the url Source, what convert wrote
    const log = page.getByTestId('run-log');
    const extract = await log.locator('li[data-step=extract]').textContent();
    expect(extract).toContain('points.gpkg');
    expect(extract).toContain(`${POINTS.toLocaleString('en')} features`);
    // Each layer's CRS with its name and unit, as the Workspace shows it.
    expect(extract).toContain('EPSG:4326 · WGS 84 · degree');
    const convert = await log.locator('li[data-step=convert]').textContent();
    expect(convert).toContain('GeoJSON');
    expect(await log.locator('li[data-step=deliver]').count()).toBe(0);
    await snapBoth(page, 'run-running', { mobileShows: deliver });
    expect(receiver.holding()).toBe(1); // still held while the pictures were taken

    // Let the receiver read on: the page reaches Succeeded and the deliver step joins the log
    receiver.release();
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 180_000, interval: 500 }).toBe('Succeeded');
    expect(await deliver.getByTestId('step-progress').count()).toBe(0);
    await log.locator('li[data-step=deliver]').waitFor();
    expect(await log.locator('li[data-step=deliver]').textContent()).toContain(receiver.url.replace('/hook', ''));
    expect(receiver.bodies).toHaveLength(1);
    expect(receiver.bodies[0]).toBeGreaterThan(PAUSE_AT);
    expect(browser.problems).toEqual([]);
  }, 420_000);
});
