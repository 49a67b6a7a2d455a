import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgisDatabase, type PostgisDatabase } from '../support/postgis.js';
import {
  apiAsUser,
  chooseConnection,
  closeAll,
  loggedInBrowser,
  newConnectionForm,
  newFromEmptyList,
  skipReason,
  snapBoth,
  startServer,
  unlabelledControls,
  type Browser,
  type Server,
} from './browser.js';

const skip = skipReason({ temporal: true });
const PASSWORD = 'pw-9a8b7c-never-shown';

/** Three points in Zürich as GeoJSON: what the url Source serves. */
const POINTS = JSON.stringify({
  type: 'FeatureCollection',
  features: ['Alpha', 'Bravo', 'Charlie'].map((name, i) => ({
    type: 'Feature',
    properties: { name },
    geometry: { type: 'Point', coordinates: [8.53 + i * 0.01, 47.37] },
  })),
});

describe.skipIf(skip)(`browser: Sources and Destinations from the connector catalogue${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let server: Server;
  let browser: Browser;
  let files: HttpServer;
  let fileUrl: string;
  let db: PostgisDatabase;

  beforeAll(async () => {
    files = createServer((req, res) => {
      if (req.url === '/points.geojson') return res.writeHead(200, { 'content-type': 'application/geo+json' }).end(POINTS);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    fileUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/points.geojson`;
    db = await createPostgisDatabase();
    server = await startServer({ temporal: true });
    browser = await loggedInBrowser(server);
  });
  afterAll(() => closeAll(browser, server, () => db?.drop(), files));

  /** Runs an action that re-renders the page (a save navigates to the same page) and waits for the new page. */
  const rerendered = async (action: () => Promise<void>) => {
    await browser.page.evaluate(`document.querySelector('main h1')?.setAttribute('data-stale', '')`);
    await action();
    await browser.page.locator('main h1:not([data-stale])').waitFor();
  };

  const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) => apiAsUser(browser, server, method, url, payload);

  it('creates a url Source: the form comes from the catalogue, errors sit next to fields, the draft and the saved one are tested', async () => {
    const { page } = browser;
    await newFromEmptyList(page, 'Sources', 'Source');

    // Every Source type of the catalogue is offered, and only those.
    const catalogue = (await (await api('GET', '/connectors')).json()).items as { type: string; kinds: string[] }[];
    const offered = await page
      .getByLabel('Type')
      .locator('option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(offered.sort()).toEqual(
      catalogue
        .filter((c) => c.kinds.includes('source'))
        .map((c) => c.type)
        .sort(),
    );
    expect(offered).not.toContain('webhook'); // a Destination-only type

    await page.getByRole('textbox', { name: /^Name/ }).fill('Zürich points');
    await page.getByLabel('Type').selectOption('url');
    // Saved without its URL: the 422's issue body.configuration.url lands on that field.
    await page.getByRole('button', { name: 'Create Source' }).click();
    const urlField = page.getByRole('textbox', { name: /^URL/ });
    await expect.poll(() => urlField.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field', { has: urlField }).locator('.field-error').textContent()).toContain('Required');

    await urlField.fill(fileUrl);
    await page.getByRole('button', { name: 'Test connection' }).click();
    const result = page.locator('.test-box .test-result');
    await result.waitFor();
    expect(await result.getAttribute('data-status')).toBe('ok');
    expect(await result.textContent()).toContain('nothing was saved');
    expect((await (await api('GET', '/sources')).json()).items).toEqual([]);
    expect(await unlabelledControls(page)).toEqual([]);
    await snapBoth(page, 'source-editor');

    await page.getByRole('button', { name: 'Create Source' }).click();
    await page.getByRole('heading', { level: 1, name: 'Source “Zürich points”' }).waitFor();
    expect(await page.locator('.notice').first().textContent()).toContain('saved');
    await page.getByRole('button', { name: 'Test connection' }).click();
    await result.waitFor();
    expect(await result.textContent()).toContain('Tested the saved settings');

    const saved = (await (await api('GET', '/sources')).json()).items;
    expect(saved).toMatchObject([{ name: 'Zürich points', type: 'url', configuration: { url: fileUrl } }]);
  });

  it('a failed test is a classified result, not an error', async () => {
    const { page } = browser;
    await page.getByRole('textbox', { name: /^URL/ }).fill(fileUrl.replace('points', 'missing'));
    await page.getByRole('button', { name: 'Test connection' }).click();
    const result = page.locator('.test-box .test-result');
    await expect.poll(() => result.getAttribute('data-status')).toBe('not_found');
    expect(await result.textContent()).toContain('Not found.');
    expect(await result.textContent()).toContain('unsaved settings');
    await page.getByRole('link', { name: 'Cancel' }).click();
  });

  it('keeps secrets write-only: "Stored", Replace and Clear', async () => {
    const { page } = browser;
    await newConnectionForm(page, server.url, 'Destination', 'Warehouse', 'postgis');
    await page.getByRole('textbox', { name: /^Host/ }).fill('db.example.org');
    await page.getByRole('textbox', { name: /^Database/ }).fill('gis');
    await page.getByRole('textbox', { name: /^Username/ }).fill('loader');
    const password = page.getByLabel(/^Password/);
    expect(await password.getAttribute('type')).toBe('password');
    expect(await password.getAttribute('autocomplete')).toBe('new-password');
    await password.fill(PASSWORD);
    // Defaults of the schema are shown: port 5432, ssl_mode prefer.
    expect(await page.getByRole('spinbutton', { name: /^Port/ }).inputValue()).toBe('5432');
    expect(await page.getByLabel(/^SSL mode/).inputValue()).toBe('prefer');
    await page.getByRole('button', { name: 'Create Destination' }).click();
    await page.getByRole('heading', { level: 1, name: 'Destination “Warehouse”' }).waitFor();

    // The value never comes back: a "Stored" badge instead, and no input holds it.
    const stored = page.getByRole('group', { name: 'Stored password' });
    expect(await stored.textContent()).toContain('Stored');
    expect(await password.isVisible()).toBe(false);
    expect(await page.content()).not.toContain(PASSWORD);
    const [destination] = (await (await api('GET', '/destinations')).json()).items;
    expect(destination.configuration).toMatchObject({ host: 'db.example.org', port: 5432, has_password: true });
    await snapBoth(page, 'destination-secrets', { mobileShows: stored });

    // Saving other changes keeps the stored secret (the field is left out of the body).
    await page.getByRole('textbox', { name: /^Database/ }).fill('gis2');
    await rerendered(() => page.getByRole('button', { name: 'Save changes' }).click());
    expect((await (await api('GET', `/destinations/${destination.id}`)).json()).configuration).toMatchObject({ database: 'gis2', has_password: true });

    // Replace shows an empty input; "Keep the stored value" takes it back.
    await stored.getByRole('button', { name: 'Replace' }).click();
    expect(await password.isVisible()).toBe(true);
    expect(await password.inputValue()).toBe('');
    await stored.getByRole('button', { name: 'Keep the stored value' }).click();
    expect(await password.isVisible()).toBe(false);

    // Clear sends null: the secret is gone.
    await stored.getByRole('button', { name: 'Clear' }).click();
    expect(await stored.textContent()).toContain('to be cleared');
    await rerendered(() => page.getByRole('button', { name: 'Save changes' }).click());
    expect((await (await api('GET', `/destinations/${destination.id}`)).json()).configuration.has_password).toBe(false);
    expect(await stored.isVisible()).toBe(false);
    expect(await password.isVisible()).toBe(true);
  });

  it('lists connections with a test per row, and works at 375 px', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/#/sources`);
    const row = page.locator('tr', { hasText: 'Zürich points' });
    await row.waitFor();
    expect(await row.textContent()).toContain('File at a URL');
    expect(await row.textContent()).toContain(fileUrl);
    await row.getByRole('button', { name: 'Test Zürich points' }).click();
    await expect.poll(() => row.locator('.test-result').getAttribute('data-status')).toBe('ok');
    await snapBoth(page, 'sources');
    await page.goto(`${server.url}/#/destinations`);
    await page.locator('tr', { hasText: 'Warehouse' }).waitFor();
    await snapBoth(page, 'destinations');
  });

  it('imports from the Source into a Workspace', async () => {
    const { page } = browser;
    await page.getByRole('link', { name: 'Workspace' }).click();
    const form = page.getByTestId('import');
    await form.waitFor();
    // The picker and the line under it say where the Source points
    expect(await chooseConnection(form.getByLabel(/^Source/), 'Zürich points', 'File at a URL')).toMatch(
      /^Zürich points \(File at a URL: http:\/\/127\.0\.0\.1:\d+\//,
    );
    expect(await form.getByTestId('connection-where').textContent()).toMatch(/^File at a URL: http:\/\/127\.0\.0\.1:\d+\//);
    expect(await form.textContent()).toContain('needs nothing more');
    // The reading options go with the import, in source_resource; a bad one is shown on its field
    await form.getByTestId('reading-options').locator('summary').click();
    const crs = form.getByLabel('CRS of the coordinates');
    await crs.fill('EPSG:nope');
    await form.getByRole('button', { name: 'Import' }).click();
    await expect.poll(() => crs.getAttribute('aria-invalid')).toBe('true');
    expect(await form.locator('.field.has-error').textContent()).toContain('source_crs');
    await crs.fill('EPSG:4326');
    expect(await unlabelledControls(page)).toEqual([]);
    await snapBoth(page, 'workspace-import');
    await form.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('heading', { level: 1, name: 'points.geojson' }).waitFor({ timeout: 30_000 });
    const imported = decodeURIComponent(page.url().split('#/workspace/')[1]!);
    expect((await (await api('GET', `/workspaces/${imported}`)).json()).source).toMatchObject({ resource: { source_crs: 'EPSG:4326' } });
    expect(await page.locator('.notice').first().textContent()).toContain('imported from “Zürich points”');
    await page.getByTestId('original-table').locator('tbody tr').first().waitFor();
    expect(await page.getByTestId('original-table').locator('tbody tr').count()).toBe(3);
  });

  it('delivers the converted Workspace to a PostGIS Destination with the target and write mode from its schema', async () => {
    const { page } = browser;
    // A Destination that can really connect: the suite's own PostGIS database.
    const created = await api('POST', '/destinations', { name: 'City GIS', type: 'postgis', configuration: db.config });
    expect(created.statusCode, created.body).toBe(201);

    // The Workspace from the previous test, opened again so its delivery card lists the new Destination.
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'points.geojson' }).waitFor();
    await page.getByLabel('Output format').selectOption('GPKG');
    await page.getByRole('button', { name: 'Convert' }).click();
    await page.getByTestId('download').waitFor({ timeout: 90_000 });
    const deliver = page.getByTestId('deliver');
    const destination = deliver.getByLabel(/^Destination/);
    await chooseConnection(destination, 'City GIS', 'PostGIS');
    expect(await deliver.getByRole('textbox', { name: /^Schema/ }).inputValue()).toBe('public');
    expect(
      await deliver
        .getByLabel(/^Write mode/)
        .locator('option')
        .allTextContents(),
    ).toEqual(['replace', 'append', 'create', 'upsert']);
    await deliver.getByRole('textbox', { name: /^Table/ }).fill('points');
    await deliver.getByLabel(/^Write mode/).selectOption('create');
    await deliver.getByRole('button', { name: 'Deliver' }).click();
    const result = page.getByTestId('delivery-result');
    await result.waitFor({ timeout: 60_000 });
    expect(await result.textContent()).toContain('points');
    expect(await result.textContent()).toMatch(/rows written\s*3/);
    expect(await db.sql('SELECT name FROM public.points ORDER BY name')).toEqual([{ name: 'Alpha' }, { name: 'Bravo' }, { name: 'Charlie' }]);
    await snapBoth(page, 'workspace-deliver', { mobileShows: result });

    // "create" onto the table that now exists: the server's target_exists, in the form.
    await deliver.getByRole('button', { name: 'Deliver' }).click();
    await expect.poll(() => deliver.locator('.form-summary').textContent(), { timeout: 60_000 }).toMatch(/exists/i);
    expect(await result.isVisible()).toBe(false);
    // "replace" swaps it in.
    await deliver.getByLabel(/^Write mode/).selectOption('replace');
    await deliver.getByRole('button', { name: 'Deliver' }).click();
    await result.waitFor({ timeout: 60_000 });
    expect(await db.sql('SELECT count(*)::int AS n FROM public.points')).toEqual([{ n: 3 }]);
  });

  it('a new Job from a database to a database has no output format preselected', async () => {
    const { page } = browser;
    const created = await api('POST', '/sources', { name: 'City GIS tables', type: 'postgis', configuration: db.config });
    expect(created.statusCode, created.body).toBe(201);
    try {
      await page.goto(`${server.url}/#/jobs/new`);
      await page.getByRole('heading', { level: 1, name: 'New Job' }).waitFor();
      const convert = page.getByLabel('Convert to a format');
      const format = page.getByLabel(/^Output format/, { exact: false });
      // Nothing chosen yet, or a file Source: GeoPackage is suggested
      expect(await convert.isChecked()).toBe(true);
      expect(await format.inputValue()).toBe('GPKG');
      // PostGIS → PostGIS: tables to tables, no format and the stage off
      await chooseConnection(page.getByLabel(/^Source/), 'City GIS tables', 'PostGIS');
      await chooseConnection(page.getByLabel(/^Destination/), 'City GIS', 'PostGIS');
      expect(await convert.isChecked()).toBe(false);
      expect(await format.inputValue()).toBe('');
      // A file Source again: the suggestion comes back, until the user sets the stage themselves
      await chooseConnection(page.getByLabel(/^Source/), 'Zürich points', 'File at a URL');
      expect(await convert.isChecked()).toBe(true);
      expect(await format.inputValue()).toBe('GPKG');
      await format.selectOption('FlatGeobuf');
      await chooseConnection(page.getByLabel(/^Source/), 'City GIS tables', 'PostGIS');
      expect(await format.inputValue()).toBe('FlatGeobuf');
      // GeoPackage (vector and raster) is offered once
      expect((await format.locator('option').allTextContents()).filter((o) => o.startsWith('GeoPackage'))).toHaveLength(1);
    } finally {
      await api('DELETE', `/sources/${created.json().id}`);
    }
  });

  it('deletes a Source after a confirmation', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/#/sources`);
    await page.getByRole('link', { name: 'Zürich points' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete Source' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sources' }).waitFor();
    expect(await page.locator('.status').textContent()).toContain('deleted');
    await expect.poll(() => page.locator('main').textContent()).toContain('No Sources yet');
    expect(browser.problems).toEqual([]);
  });
});
