import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectCommand, GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3ServerUnavailable, startS3Server, type S3Server } from '../../devservers/s3/server.js';
import { bucketAdmin } from '../support/s3.js';
import { createPostgisDatabase, type PostgisDatabase } from '../support/postgis.js';
import type { Locator, Page } from 'playwright-core';
import path from 'node:path';
import {
  apiAsUser,
  chooseConnection,
  closeAll,
  loggedInBrowser,
  newConnectionForm,
  newFromEmptyList,
  screenshotsDir,
  skipReason,
  snapBoth,
  startServer,
  unlabelledControls,
  type Browser,
  type Server,
} from './browser.js';

const skip = skipReason({ temporal: true }) || s3ServerUnavailable();
const BUCKET = 'gis-exports';
const KEY = 'nightly/parcels.geojson';
const TEMPORAL_UI = 'http://127.0.0.1:8233';

/** Twelve places as GeoJSON: what the url Source of the sync test serves. */
const PLACES = JSON.stringify({
  type: 'FeatureCollection',
  features: Array.from({ length: 12 }, (_, i) => ({
    type: 'Feature',
    properties: { id: i + 1, name: `Place ${i + 1}` },
    geometry: { type: 'Point', coordinates: [8.5 + i * 0.01, 47.37] },
  })),
});

describe.skipIf(skip)(`browser: a scheduled Job from a PostGIS table to an S3 bucket, its Runs${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let server: Server;
  let browser: Browser;
  let s3: S3Server;
  let admin: S3Client;
  let files: HttpServer;
  let fileUrl: string;
  let flakyAnswers = 0;
  let jobId: string;
  let db: PostgisDatabase;

  beforeAll(async () => {
    files = createServer((req, res) => {
      if (req.url === '/places.geojson') return res.writeHead(200, { 'content-type': 'application/geo+json' }).end(PLACES);
      // A flaky remote: its first two answers are 503.
      if (req.url === '/flaky.geojson')
        return flakyAnswers++ < 2 ? res.writeHead(503).end() : res.writeHead(200, { 'content-type': 'application/geo+json' }).end(PLACES);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    fileUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/places.geojson`;
    // Twelve parcels in a PostGIS table the Source's own login role owns.
    db = await createPostgisDatabase();
    await db.sql(`CREATE TABLE public.parcels (id serial PRIMARY KEY, name text, geom geometry(Polygon, 4326));
      INSERT INTO public.parcels (name, geom)
        SELECT 'Parcel ' || i, ST_MakeEnvelope(8.5 + i * 0.002, 47.37, 8.501 + i * 0.002, 47.371, 4326) FROM generate_series(1, 12) AS i;
      ALTER TABLE public.parcels OWNER TO ${db.config.username};`);
    s3 = await startS3Server();
    admin = await bucketAdmin(s3, BUCKET);
    server = await startServer({ temporal: true, env: { SVC_TEMPORAL_UI_URL: TEMPORAL_UI } });
    browser = await loggedInBrowser(server);
  });
  afterAll(() =>
    closeAll(
      browser,
      server,
      () => admin?.destroy(),
      () => s3?.stop(),
      () => db?.drop(),
      files,
    ),
  );

  const api = async (url: string) => (await apiAsUser(browser, server, 'GET', url)).json();
  const post = async (url: string, payload: object = {}) => (await apiAsUser(browser, server, 'POST', url, payload)).json();
  const delivered = async () => JSON.parse(await (await admin.send(new GetObjectCommand({ Bucket: BUCKET, Key: KEY }))).Body!.transformToString());

  it('creates an S3 Destination from the catalogue form and tests it', async () => {
    const { page } = browser;
    await newConnectionForm(page, server.url, 'Destination', 'Data lake', 's3');
    await page.getByRole('textbox', { name: /^Bucket/ }).fill(BUCKET);
    await page.getByRole('textbox', { name: /^Endpoint/ }).fill(s3.endpoint);
    await page.getByLabel(/^Force path style/).check();
    await page.getByRole('textbox', { name: /^Access key/ }).fill(s3.writer.access_key);
    await page.getByLabel(/^Secret key/).fill(s3.writer.secret_key);
    await page.getByRole('button', { name: 'Test connection' }).click();
    const result = page.locator('.test-box .test-result');
    await expect.poll(() => result.getAttribute('data-status'), { timeout: 20_000 }).toBe('ok');
    await page.getByRole('button', { name: 'Create Destination' }).click();
    await page.getByRole('heading', { level: 1, name: 'Destination “Data lake”' }).waitFor();
    expect(await page.getByRole('group', { name: 'Stored secret key' }).textContent()).toContain('Stored');
  });

  it('creates a PostGIS Source, tests it and discovers its tables', async () => {
    const { page } = browser;
    await newConnectionForm(page, server.url, 'Source', 'City parcels', 'postgis');
    await page.getByRole('textbox', { name: /^Host/ }).fill(db.config.host);
    await page.getByRole('spinbutton', { name: /^Port/ }).fill(String(db.config.port));
    await page.getByRole('textbox', { name: /^Database/ }).fill(db.config.database);
    await page.getByRole('textbox', { name: /^Username/ }).fill(db.config.username);
    await page.getByLabel(/^SSL mode/).selectOption('disable');
    // A wrong password first: the test classifies it.
    await page.getByLabel(/^Password/).fill('not the password');
    await page.getByRole('button', { name: 'Test connection' }).click();
    const result = page.locator('.test-box .test-result');
    await expect.poll(() => result.getAttribute('data-status'), { timeout: 20_000 }).toBe('authentication_failed');
    await page.getByLabel(/^Password/).fill(db.config.password);
    await page.getByRole('button', { name: 'Test connection' }).click();
    await expect.poll(() => result.getAttribute('data-status'), { timeout: 20_000 }).toBe('ok');
    await page.getByRole('button', { name: 'Create Source' }).click();
    await page.getByRole('heading', { level: 1, name: 'Source “City parcels”' }).waitFor();
    await page.getByRole('button', { name: 'Test connection' }).click();
    await expect.poll(() => result.getAttribute('data-status'), { timeout: 20_000 }).toBe('ok');

    // Discovery: schemas, then the tables of public with their geometry type.
    const discover = page.getByTestId('discover');
    await discover.getByRole('button', { name: 'Browse the database' }).click();
    const parcels = discover.locator('tr[data-table="public.parcels"]');
    await parcels.waitFor({ timeout: 20_000 });
    expect(await discover.getByLabel('Schema').inputValue()).toBe('public');
    expect((await parcels.textContent())?.toLowerCase()).toContain('polygon');
    expect(await page.content()).not.toContain(db.config.password);
    await snapBoth(page, 'source-discover', { mobileShows: parcels });
  });

  it('the Workspace imports from the Source and delivers its converted file to the Destination', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/#/workspace`);
    const importForm = page.getByTestId('import');
    await chooseConnection(importForm.getByLabel(/^Source/), 'City parcels', 'PostGIS');
    // The table comes from the discovery browser inside the picker.
    await importForm.getByText('Browse the tables of “City parcels”').click();
    await importForm.getByRole('button', { name: 'Browse the database' }).click();
    await importForm.getByRole('button', { name: 'Use public.parcels' }).click();
    expect(await importForm.getByRole('textbox', { name: /^Table/ }).inputValue()).toBe('parcels');
    await importForm.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('heading', { level: 1, name: /parcels/ }).waitFor({ timeout: 30_000 });
    expect(await page.locator('.notice').first().textContent()).toContain('imported from “City parcels”');
    await page.getByLabel('Output format').selectOption('GeoJSON');
    await page.getByRole('button', { name: 'Convert' }).click();
    await page.getByTestId('download').waitFor({ timeout: 90_000 });

    const deliver = page.getByTestId('deliver');
    await chooseConnection(deliver.getByLabel(/^Destination/), 'Data lake', 'Amazon S3 (or S3-compatible)');
    await deliver.getByRole('textbox', { name: /^Key/ }).fill('adhoc/parcels.geojson');
    await deliver.getByRole('button', { name: 'Deliver' }).click();
    const result = page.getByTestId('delivery-result');
    await result.waitFor({ timeout: 60_000 });
    expect(await result.textContent()).toContain('adhoc/parcels.geojson');
    expect(await result.textContent()).toContain('bytes written');
    const object = await admin.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'adhoc/parcels.geojson' }));
    expect(JSON.parse(await object.Body!.transformToString()).features).toHaveLength(12);
  });

  it('builds a scheduled Job in the editor', async () => {
    const { page } = browser;
    await newFromEmptyList(page, 'Jobs', 'Job');

    await page.getByRole('textbox', { name: /^Name/ }).fill('Parcels to the data lake');
    // 1. Source, and its table picked from the discovery browser
    // The picker says where each Source points: host and database
    expect(await chooseConnection(page.getByLabel(/^Source/), 'City parcels', 'PostGIS')).toMatch(/^City parcels \(PostGIS: 127\.0\.0\.1 · \w+/);
    await page.getByText('Browse the tables of “City parcels”').click();
    await page.getByRole('button', { name: 'Browse the database' }).click();
    await page.getByRole('button', { name: 'Use public.parcels' }).click();
    expect(await page.getByRole('textbox', { name: /^Table/ }).inputValue()).toBe('parcels');
    // The reading options (source CRS, X/Y/Z columns) are offered beside it, folded: a table says its own
    expect(await stageOf(page, 'Source').getByTestId('reading-options').getAttribute('open')).toBeNull();
    // 2. Transform: a buffer from the same catalogue-driven editor as the canvas
    await page.getByLabel('Transform the data').check();
    await page.getByLabel('Add an operation').selectOption({ label: 'Buffer' });
    await page.getByRole('button', { name: 'Add operation' }).click();
    const buffer = page.locator('li.op', { hasText: 'Buffer' });
    await buffer.getByLabel('Distance').fill('50');
    await buffer.getByLabel('Units').selectOption('meters');
    // 4. Output format, with a GDAL layer creation option (a line that is not KEY=VALUE is shown at the field first)
    await page.getByLabel(/^Output format/).selectOption('GeoJSON');
    await page.getByLabel('Creation options').fill('layer:COORDINATE_PRECISION 3');
    await page.getByRole('button', { name: 'Create Job' }).click();
    await expect.poll(() => stageOf(page, 'Output format').textContent()).toContain('Line 1 is not KEY=VALUE');
    await page.getByLabel('Creation options').fill('layer:COORDINATE_PRECISION=3');
    // 5. Destination and its target, from the s3 connector's schema
    await chooseConnection(page.getByLabel(/^Destination/), 'Data lake', 'Amazon S3 (or S3-compatible)');
    await page.getByRole('textbox', { name: /^Key/ }).fill(KEY);
    // 6. Schedule: a cron expression the server refuses is explained beside it, then daily at 02:30 in Zürich's time
    const preview = page.locator('.schedule-preview');
    await page.getByLabel('Runs', { exact: true }).selectOption('cron');
    await page.getByRole('combobox', { name: /^Timezone/ }).fill('Europe/Zurich');
    await page.getByRole('textbox', { name: /^Cron expression/ }).fill('0 25 * * *');
    await expect.poll(() => preview.textContent()).toContain('hour: 25 is outside 0–23');
    await page.getByLabel('Runs', { exact: true }).selectOption('daily');
    await page.getByLabel(/^Hour/).selectOption('2');
    await page.getByLabel(/^Minute/).selectOption('30');
    await expect.poll(() => preview.textContent()).toContain('Runs every day at 02:30 (Europe/Zurich)');
    expect(await preview.getByTestId('next-runs').locator('li').count()).toBe(5);
    // 7. Triggers: on change needs a cursor column on a table Source; the server says so at the field.
    await page.getByLabel('Run when the Source changes').check();
    expect(await unlabelledControls(page)).toEqual([]);
    await snapBoth(page, 'job-editor');
    await snapSections(page, 'job-editor-schedule', [stageOf(page, 'Schedule'), stageOf(page, 'Triggers')]);
    await page.getByRole('button', { name: 'Create Job' }).click();
    // (the field's message is the server's, made a sentence: capitalized)
    await expect.poll(() => page.locator('form').textContent()).toContain('On-change for a postgis Source needs cursor_column');
    await page.getByLabel('Run when the Source changes').uncheck();

    await page.getByRole('button', { name: 'Create Job' }).click();
    await page.getByRole('heading', { level: 1, name: 'Parcels to the data lake' }).waitFor();
    jobId = decodeURIComponent(page.url().split('#/jobs/')[1]!);
    const job = await api(`/jobs/${jobId}`);
    // Nothing typed in the reading options, nothing of them sent
    expect(job.source_resource).toEqual({ schema: 'public', table: 'parcels' });
    expect(job).toMatchObject({
      source_resource: { schema: 'public', table: 'parcels' },
      transform_mode: 'manual',
      operations: [{ type: 'buffer', distance: 50, units: 'meters' }],
      output_format: 'GeoJSON',
      creation_options: { layer: { COORDINATE_PRECISION: '3' } },
      destination_target: { key: KEY },
      schedule: { kind: 'daily', timezone: 'Europe/Zurich', hour: 2, minute: 30 },
      pipeline: { transform: true, python: false, convert: true },
      enabled: true,
    });
    expect(job.next_run_at).not.toBeNull();
    const facts = await page.locator('.job-facts').textContent();
    expect(facts).toContain('Every day at 02:30 (Europe/Zurich)');
    expect(facts).toContain('Never run');
    // The next runs in the browser's time (UTC here): 02:30 in Zürich is 00:30 or 01:30 UTC.
    expect(await page.locator('.job-facts').getByTestId('next-runs').locator('li').count()).toBe(5);
    expect(facts).toMatch(/0[01]:30/);
  });

  it('Run now: the Runs table follows the Run to succeeded', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Run now' }).click();
    const row = page.locator('.runs tbody tr').first();
    await row.waitFor();
    await expect.poll(() => row.getAttribute('data-status'), { timeout: 120_000, interval: 500 }).toBe('succeeded');
    expect(await row.textContent()).toMatch(/12 (read|written)/);
    await expect.poll(() => page.locator('.job-facts').textContent()).toContain('Succeeded');
    const geojson = await delivered();
    expect(geojson.features).toHaveLength(12);
    expect(geojson.features[0].geometry.type).toBe('Polygon'); // buffered
    // The Job's creation option reached the file: three decimals at most in every coordinate.
    const decimals = (geojson.features[0].geometry.coordinates[0] as number[][]).flat().map((c) => String(c).split('.')[1]?.length ?? 0);
    expect(Math.max(...decimals)).toBe(3);
    await snapBoth(page, 'job');
  });

  it('opens the Run: steps, durations, counts and the Temporal workflow', async () => {
    const { page } = browser;
    await page.locator('.runs tbody tr').first().getByRole('link').click();
    await page.getByTestId('run-status').waitFor();
    expect(await page.getByTestId('run-status').textContent()).toBe('Succeeded');
    for (const step of ['extract', 'transform', 'convert', 'deliver']) {
      expect(await page.locator(`tr[data-step=${step}]`).getAttribute('data-status'), step).toBe('succeeded');
    }
    expect(await page.locator('.run-facts').textContent()).toContain('Features read12');
    const link = page.getByTestId('temporal-link');
    const run = await api(`/jobs/${jobId}/runs/${decodeURIComponent(page.url().split('/runs/')[1]!)}`);
    expect(await link.getAttribute('href')).toBe(
      `${TEMPORAL_UI}/namespaces/default/workflows/${encodeURIComponent(run.workflow.workflow_id)}/${encodeURIComponent(run.workflow.run_id)}/history`,
    );
    // The Log: what each step read and wrote, as the Run recorded it.
    const log = page.getByTestId('run-log');
    await log.waitFor();
    const extract = run.steps.find((s: { name: string }) => s.name === 'extract').log;
    const deliver = run.steps.find((s: { name: string }) => s.name === 'deliver').log;
    expect(extract.read).toMatchObject({ features: 12, location: { schema: 'public', table: 'parcels' } });
    expect(deliver.wrote).toMatchObject({ location: { key: KEY } });
    const extractText = await log.locator('li[data-step=extract]').textContent();
    expect(extractText).toContain('Read: ');
    expect(extractText).toContain('table: parcels');
    expect(extractText).toContain('12 features');
    const deliverText = await log.locator('li[data-step=deliver]').textContent();
    expect(deliverText).toContain('Wrote: ');
    expect(deliverText).toContain(`key: ${KEY}`);
    await snapBoth(page, 'run');
  });

  it('a failed Run shows what went wrong; Retry starts a new Run that succeeds', async () => {
    const { page } = browser;
    // The bucket goes away: the deliver step fails, classified.
    for (const Key of [KEY, 'adhoc/parcels.geojson']) await admin.send(new DeleteObjectCommand({ Bucket: BUCKET, Key }));
    await admin.send(new DeleteBucketCommand({ Bucket: BUCKET }));
    await page.goto(`${server.url}/#/jobs/${encodeURIComponent(jobId)}`);
    await page.getByRole('button', { name: 'Run now' }).click();
    const row = page.locator('.runs tbody tr').first();
    await expect.poll(() => row.getAttribute('data-status'), { timeout: 120_000, interval: 500 }).toBe('failed');
    await row.getByRole('link').click();
    const error = page.getByTestId('run-error');
    await error.waitFor();
    expect(await error.textContent()).toContain('Deliver to the Destination');
    expect(await page.locator('tr[data-step=deliver]').getAttribute('data-status')).toBe('failed');
    await snapBoth(page, 'run-failed', { mobileShows: error });

    // Put the bucket back and retry: a new Run, linked to the failed one.
    await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
    const failedUrl = page.url();
    await error.getByRole('button', { name: 'Retry', exact: true }).click();
    await expect.poll(() => page.url()).not.toBe(failedUrl);
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 120_000, interval: 500 }).toBe('Succeeded');
    expect(await page.locator('.run-page').textContent()).toContain('with the Job as it was when retried');
    expect(await page.locator('.run-facts').textContent()).toContain('Retry');
    expect((await delivered()).features).toHaveLength(12);
  });

  it('disables and enables the Job', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/#/jobs/${encodeURIComponent(jobId)}`);
    await page.getByRole('button', { name: 'Disable' }).click();
    await expect.poll(() => page.locator('.job-facts').textContent()).toContain('Disabled');
    expect((await api(`/jobs/${jobId}`)).enabled).toBe(false);
    await page.getByRole('button', { name: 'Enable' }).click();
    await expect.poll(() => page.locator('.job-facts').textContent()).toContain('Enabled');
    expect((await api(`/jobs/${jobId}`)).enabled).toBe(true);
  });

  it('reset and reinitialize of an incremental Job say what they do before they do it', async () => {
    const { page } = browser;
    // A url Source reads incrementally (ETag / Last-Modified); this Job is made through the API.
    const source = await post('/sources', { name: 'Places', type: 'url', configuration: { url: fileUrl } });
    const destination = (await api('/destinations')).items.find((d: { name: string }) => d.name === 'Data lake');
    const job = await post('/jobs', {
      name: 'Places mirror',
      source_id: source.id,
      transform_mode: 'manual',
      output_format: 'GeoJSON',
      destination_id: destination.id,
      destination_target: { key: 'mirror/places.geojson' },
    });
    await page.goto(`${server.url}/#/jobs/${encodeURIComponent(job.id)}`);
    await page.getByRole('heading', { level: 1, name: 'Places mirror' }).waitFor();

    await page.getByRole('button', { name: 'Reset sync…' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.textContent()).toContain('reads the whole Source again');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await api(`/jobs/${job.id}`)).sync.reset_pending).toBe(false);
    await page.getByRole('button', { name: 'Reinitialize…' }).click();
    expect(await dialog.textContent()).toContain('rebuilds the target');
    await dialog.getByRole('button', { name: 'Reinitialize' }).click();
    await expect.poll(() => page.locator('main').textContent()).toContain('The next Run rebuilds the target.');
    expect((await api(`/jobs/${job.id}`)).sync.reinitialize_pending).toBe(true);
  });

  it('a parameter in the target: declared in the editor, asked for by Run now; the webhook secret is shown once', async () => {
    const { page } = browser;
    const job = (await api('/jobs')).items.find((j: { name: string }) => j.name === 'Places mirror');
    await page.goto(`${server.url}/#/jobs/${encodeURIComponent(job.id)}/edit`);
    await page.getByRole('heading', { level: 1, name: 'Edit “Places mirror”' }).waitFor();
    await page.getByRole('button', { name: 'Add a parameter' }).click();
    await page.getByRole('textbox', { name: 'Parameter name' }).fill('folder');
    await page.getByRole('textbox', { name: 'Default' }).fill('mirror');
    await page.getByRole('textbox', { name: /^Key/ }).fill('{{folder}}/places.geojson');
    expect(await unlabelledControls(page)).toEqual([]);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { level: 1, name: 'Places mirror', exact: true }).waitFor();
    expect(await api(`/jobs/${job.id}`)).toMatchObject({
      parameters: [{ name: 'folder', type: 'string', default: 'mirror' }],
      destination_target: { key: '{{folder}}/places.geojson' },
    });
    expect(await page.locator('main').textContent()).toContain('{{folder}} string, default mirror');

    await page.getByRole('button', { name: 'Run now…' }).click();
    const dialog = page.getByRole('dialog');
    expect(await dialog.getByLabel('folder').inputValue()).toBe('mirror');
    await dialog.getByLabel('folder').fill('custom');
    await dialog.getByRole('button', { name: 'Run now' }).click();
    const row = page.locator('.runs tbody tr').first();
    await expect.poll(() => row.getAttribute('data-status'), { timeout: 120_000, interval: 500 }).toBe('succeeded');
    const object = await admin.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'custom/places.geojson' }));
    expect(JSON.parse(await object.Body!.transformToString()).features).toHaveLength(12);

    await page.getByRole('button', { name: 'Issue a webhook (signed)' }).click();
    const secret = page.getByTestId('webhook-secret');
    await secret.waitFor();
    expect(await secret.textContent()).toMatch(/^whsec_/);
    expect((await api(`/jobs/${job.id}`)).webhook).toMatchObject({ auth: 'hmac' });
    await snapBoth(page, 'job-triggers', { mobileShows: secret });
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Places mirror' }).waitFor();
    expect(await page.getByTestId('webhook-secret').count()).toBe(0);
    expect(await page.locator('main').textContent()).toContain('signed with HMAC');
  });

  it('a Run whose Source fails twice shows the failed attempts under the step while Temporal retries it', async () => {
    const { page } = browser;
    const source = await post('/sources', { name: 'Flaky places', type: 'url', configuration: { url: fileUrl.replace('places.geojson', 'flaky.geojson') } });
    const destination = (await api('/destinations')).items.find((d: { name: string }) => d.name === 'Data lake');
    const job = await post('/jobs', {
      name: 'Flaky mirror',
      source_id: source.id,
      output_format: 'GeoJSON',
      destination_id: destination.id,
      destination_target: { key: 'flaky/places.geojson' },
    });
    const run = await post(`/jobs/${job.id}/run`);
    await page.goto(`${server.url}/#/jobs/${encodeURIComponent(job.id)}/runs/${encodeURIComponent(run.id)}`);
    const note = page.locator('tr[data-step=extract]').getByTestId('failed-attempts');
    await expect
      .poll(() => note.textContent().catch(() => ''), { timeout: 60_000, interval: 250 })
      .toMatch(/^Retrying after (one failed attempt|2 failed attempts): .*503/);
    await expect.poll(() => page.getByTestId('run-status').textContent(), { timeout: 120_000, interval: 500 }).toBe('Succeeded');
    expect(await note.textContent()).toMatch(/^Succeeded after 2 failed attempts \(the last: .*503/);
  });

  it('lists the Jobs with their route, schedule, next run and last Run', async () => {
    const { page } = browser;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Jobs' }).click();
    const row = page.locator('tr', { hasText: 'Parcels to the data lake' });
    await row.waitFor();
    const text = await row.textContent();
    expect(text).toContain('City parcels → Data lake');
    expect(text).toContain('Every day at 02:30 (Europe/Zurich)');
    expect(text).toContain('Enabled');
    expect(await row.locator('[data-status]').getAttribute('data-status')).toBe('succeeded');
    expect(await page.locator('tr', { hasText: 'Places mirror' }).textContent()).toContain('No schedule');
    await snapBoth(page, 'jobs');
    expect(browser.problems).toEqual([]);
  });

  it('a deleted Job’s Run stays readable: its page says the Job is gone, with its steps and log', async () => {
    const { page } = browser;
    const job = (await api('/jobs')).items.find((j: { name: string }) => j.name === 'Flaky mirror');
    const [run] = (await api(`/jobs/${job.id}/runs`)).items;
    expect((await apiAsUser(browser, server, 'DELETE', `/jobs/${job.id}`)).statusCode).toBe(204);
    expect((await api(`/jobs/${job.id}`)).error.code).toBe('job_not_found');
    await page.goto(`${server.url}/#/jobs/${encodeURIComponent(job.id)}/runs/${encodeURIComponent(run.id)}`);
    await page.getByTestId('run-status').waitFor();
    expect(await page.getByTestId('run-status').textContent()).toBe('Succeeded');
    const crumbs = page.locator('.run-page .breadcrumb');
    expect(await crumbs.textContent()).toContain('Flaky mirror (deleted)');
    expect(await crumbs.getByRole('link', { name: 'Flaky mirror' }).count()).toBe(0);
    expect(await page.locator(`tr[data-step=extract]`).getAttribute('data-status')).toBe('succeeded');
    expect(await page.getByTestId('run-log').locator('li[data-step=extract]').textContent()).toContain('12 features');
    expect(browser.problems).toEqual([]);
  });
});

/** The editor's numbered stage titled `title` (its section). */
const stageOf = (page: Page, title: string) => page.locator('section.job-stage', { has: page.getByRole('heading', { level: 2, name: title }) });

/**
 * Pictures of parts of a page for the docs, when SVC_UPDATE_SCREENSHOTS=1: the sections together
 * at the desktop width, then at 375 px (`name.png`, `name-mobile.png`), as snapBoth does for pages.
 */
async function snapSections(page: Page, name: string, sections: Locator[]): Promise<void> {
  if (process.env.SVC_UPDATE_SCREENSHOTS !== '1') return;
  const shoot = async (file: string) => {
    await sections[0]!.scrollIntoViewIfNeeded();
    const boxes = (await Promise.all(sections.map((l) => l.boundingBox()))).filter((b) => b !== null);
    const scroll = (await page.evaluate('[window.scrollX, window.scrollY]')) as [number, number];
    const x = Math.min(...boxes.map((b) => b.x));
    const y = Math.min(...boxes.map((b) => b.y));
    const clip = {
      x: x + scroll[0],
      y: y + scroll[1],
      width: Math.max(...boxes.map((b) => b.x + b.width)) - x,
      height: Math.max(...boxes.map((b) => b.y + b.height)) - y,
    };
    await page.waitForTimeout(300);
    await page.screenshot({ path: path.join(screenshotsDir, `${file}.png`), clip, fullPage: true });
  };
  await shoot(name);
  const size = page.viewportSize() ?? { width: 1280, height: 860 };
  await page.setViewportSize({ width: 375, height: 800 });
  try {
    await shoot(`${name}-mobile`);
  } finally {
    await page.setViewportSize(size);
  }
}
