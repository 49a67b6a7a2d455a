import gdal from 'gdal-async';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, logIn, overflowsHorizontally, skipReason, snap, startServer, unlabelledControls, type Browser, type Server } from './browser.js';

const skip = skipReason({ temporal: true });

/** Four ~100 m squares in Zürich, with a few attributes. */
function squares(): string {
  const names = ['Alpha', 'Bravo', 'Charlie', 'Delta'];
  const features = names.map((name, i) => {
    const x = 8.535 + (i % 2) * 0.004;
    const y = 47.37 + Math.floor(i / 2) * 0.003;
    const d = 0.0012;
    return {
      type: 'Feature',
      properties: { name, population: 100 * (i + 1), code: `Z${i + 1}` },
      geometry: {
        type: 'Polygon',
        coordinates: [
          [
            [x, y],
            [x + d, y],
            [x + d, y + d],
            [x, y + d],
            [x, y],
          ],
        ],
      },
    };
  });
  return JSON.stringify({ type: 'FeatureCollection', features });
}

/** A table without geometry, large enough (≈300 KB) for the upload progress to be seen. */
function table(): string {
  const lines = ['id,name,value'];
  for (let i = 0; i < 12_000; i++) lines.push(`${i},row number ${i},${(i * 1.5).toFixed(1)}`);
  return `${lines.join('\n')}\n`;
}

/** A 20×20 one-band GeoTIFF in EPSG:4326, made with GDAL in memory. */
function geotiff(): Buffer {
  const name = `/vsimem/e2e-${process.pid}.tif`;
  const ds = gdal.open(name, 'w', 'GTiff', 20, 20, 1, gdal.GDT_Byte);
  ds.srs = gdal.SpatialReference.fromEPSG(4326);
  ds.geoTransform = [8.5, 0.001, 0, 47.4, 0, -0.001];
  const band = ds.bands.get(1);
  band.pixels.write(
    0,
    0,
    20,
    20,
    new Uint8Array(400).map((_, i) => i % 256),
  );
  ds.close();
  return gdal.vsimem.release(name);
}

describe.skipIf(skip)(`browser: Workspace canvas${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let server: Server;
  let browser: Browser;

  beforeAll(async () => {
    server = await startServer({ temporal: true });
    browser = await launchBrowser();
    await logIn(browser.page, server.url);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('upload → layers and fields → data preview → map → buffer → transformed preview → convert to GPKG → download', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/#/workspace`);
    await page.getByRole('heading', { level: 1, name: 'Workspace' }).waitFor();
    expect(await unlabelledControls(page)).toEqual([]);
    await snap(page, 'workspace-upload');

    await page.setInputFiles('#upload-file', { name: 'squares.geojson', mimeType: 'application/geo+json', buffer: Buffer.from(squares()) });
    await page.getByRole('heading', { level: 1, name: 'squares.geojson' }).waitFor({ timeout: 30_000 });
    expect(page.url()).toMatch(/#\/workspace\/ws_/);
    const workspaceId = decodeURIComponent(page.url().split('#/workspace/')[1]!);

    // Layers and fields
    const layers = page.getByTestId('layers');
    expect(await layers.locator('tbody tr').count()).toBe(1);
    expect(await layers.textContent()).toContain('squares');
    const fields = await page.getByTestId('fields').textContent();
    for (const f of ['name', 'population', 'code']) expect(fields).toContain(f);

    // Data preview
    const originalTable = page.getByTestId('original-table');
    await originalTable.locator('tbody tr').first().waitFor();
    expect(await originalTable.locator('tbody tr').count()).toBe(4);
    expect(await originalTable.textContent()).toContain('Charlie');

    // Map: Leaflet draws the four polygons as SVG paths
    const originalMap = page.getByTestId('original-map');
    await originalMap.locator('svg path').first().waitFor();
    expect(await originalMap.locator('svg path').count()).toBe(4);
    expect(await page.locator('[data-testid=original] .map-note').textContent()).toContain('4 of 4 features');
    expect(await originalMap.locator('.leaflet-control-scale').count()).toBe(1);
    const originalPaths = await originalMap.locator('svg path').evaluateAll((paths) => paths.map((p) => p.getAttribute('d')));

    // The transformed side waits for a pipeline
    expect(await page.getByTestId('transformed-table').textContent()).toContain('No pipeline yet');

    // Pipeline from the catalog form: buffer 100 m
    await page.getByLabel('Add an operation').selectOption({ label: 'Buffer' });
    await page.getByRole('button', { name: 'Add operation' }).click();
    const buffer = page.locator('li.op', { hasText: 'Buffer' });
    await buffer.getByLabel('Distance').fill('100');
    await buffer.getByLabel('Units').selectOption('meters');
    await page.getByRole('button', { name: 'Apply and preview' }).click();

    const transformedMap = page.getByTestId('transformed-map');
    await transformedMap.locator('svg path').first().waitFor({ timeout: 30_000 });
    expect(await transformedMap.locator('svg path').count()).toBe(4);
    const transformedPaths = await transformedMap.locator('svg path').evaluateAll((paths) => paths.map((p) => p.getAttribute('d')));
    expect(transformedPaths).not.toEqual(originalPaths);
    const transformedTable = page.getByTestId('transformed-table');
    await transformedTable.locator('tbody tr').first().waitFor();
    expect(await transformedTable.locator('tbody tr').count()).toBe(4);
    const stored = await server.sut.app.inject({
      method: 'GET',
      url: `/api/v1/workspaces/${workspaceId}/transformations`,
      headers: { cookie: await cookie() },
    });
    expect(stored.json().operations).toEqual([{ type: 'buffer', distance: 100, units: 'meters', segments: 8 }]);

    // Save the tried pipeline as a Recipe in one step
    await page.getByLabel('Recipe name').fill('Buffer 100 m');
    await page.getByRole('button', { name: 'Save as Recipe' }).click();
    await expect.poll(() => page.locator('.save-recipe .status').textContent()).toContain('Saved as Recipe');
    const recipes = await server.sut.app.inject({ method: 'GET', url: '/api/v1/recipes', headers: { cookie: await cookie() } });
    expect(recipes.json().items.map((r: { name: string }) => r.name)).toContain('Buffer 100 m');

    // No Destination saved yet: the delivery card says where to add one (delivery itself is in connections.e2e)
    await expect.poll(() => page.locator('section[aria-labelledby=deliver-title]').textContent()).toContain('No Destinations saved yet');

    // Convert with the format picker (write-capable vector formats only)
    const formatOptions = await page.getByLabel('Output format').locator('option').allTextContents();
    expect(formatOptions).toContain('GeoPackage (.gpkg)');
    expect(formatOptions.some((o) => o.includes('GeoTIFF'))).toBe(false);
    await page.getByLabel('Output format').selectOption('GPKG');
    await page.getByRole('button', { name: 'Convert' }).click();
    const download = page.getByTestId('download');
    await download.waitFor({ timeout: 90_000 });
    expect(await download.textContent()).toMatch(/Download .*\.gpkg/);

    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    const bytes = await readFile((await file.path())!);
    expect(bytes.subarray(0, 16).toString('latin1')).toBe('SQLite format 3\0');
    expect(file.suggestedFilename()).toMatch(/\.gpkg$/);

    expect(await unlabelledControls(page)).toEqual([]);
    await snap(page, 'workspace-canvas');

    await page.setViewportSize({ width: 375, height: 800 });
    await page.waitForTimeout(200);
    expect(await overflowsHorizontally(page)).toBe(false);
    await snap(page, 'workspace-mobile', { fullPage: false });
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it('drag and drop with a progress bar; a table without geometry shows "no geometry" instead of a map', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/#/workspace`);
    await page.getByRole('heading', { level: 1, name: 'Workspace' }).waitFor();
    // Slow the upload down so the progress bar can be seen moving.
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: -1, uploadThroughput: 200 * 1024 });
    const content = table();
    const transfer = await page.evaluateHandle(`(() => {
      const dt = new DataTransfer();
      dt.items.add(new File([${JSON.stringify(content)}], 'table.csv', { type: 'text/csv' }));
      return dt;
    })()`);
    await page.dispatchEvent('[data-testid=dropzone]', 'drop', { dataTransfer: transfer });
    await expect
      .poll(() => page.evaluate('(() => { const p = document.getElementById("upload-progress"); return p && p.offsetParent ? p.value : -1; })()'), {
        timeout: 10_000,
        interval: 50,
      })
      .toBeGreaterThan(0);
    expect(await page.locator('.upload-progress label').textContent()).toMatch(/Upload(ing|ed) table\.csv/);
    await snap(page, 'workspace-upload-progress', { fullPage: false });
    await page.getByRole('heading', { level: 1, name: 'table.csv' }).waitFor({ timeout: 30_000 });
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });

    expect(await page.getByTestId('layers').textContent()).toContain('None (table)');
    await expect.poll(() => page.locator('[data-testid=original] .map-note').textContent()).toContain('No geometry');
    expect(await page.getByTestId('original-map').isVisible()).toBe(false);
    await page.getByTestId('original-table').locator('tbody tr').first().waitFor();
    expect(await page.getByTestId('original-table').locator('caption').textContent()).toContain('100 of 12,000 rows');

    // A geometry operation on a table: the server's invalid_transformation sentence
    await page.getByLabel('Add an operation').selectOption({ label: 'Centroids' });
    await page.getByRole('button', { name: 'Add operation' }).click();
    await page.getByRole('button', { name: 'Apply and preview' }).click();
    await expect.poll(() => page.getByTestId('pipeline').locator('.form-summary').textContent()).toContain('non-spatial table');
    expect(browser.problems).toEqual([]);
  });

  it('a raster upload shows its metadata and converts with raster formats only', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/#/workspace`);
    await page.getByRole('heading', { level: 1, name: 'Workspace' }).waitFor();
    await page.setInputFiles('#upload-file', { name: 'grid.tif', mimeType: 'image/tiff', buffer: geotiff() });
    await page.getByRole('heading', { level: 1, name: 'grid.tif' }).waitFor({ timeout: 30_000 });
    expect(await page.locator('.facts').first().textContent()).toContain('Raster');
    expect(await page.getByTestId('raster').textContent()).toContain('20 × 20 pixels');
    expect(await page.getByRole('heading', { name: 'Pipeline' }).count()).toBe(0);
    const options = await page.getByLabel('Output format').locator('option').allTextContents();
    expect(options.some((o) => o.includes('GeoPackage'))).toBe(true); // GPKG writes rasters too
    expect(options.some((o) => o.includes('(.shp)'))).toBe(false);
    expect(await page.getByLabel('Output format').inputValue()).toBe('GTiff');
    await page.getByRole('button', { name: 'Convert' }).click();
    const download = page.getByTestId('download');
    await download.waitFor({ timeout: 90_000 });
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    const bytes = await readFile((await file.path())!);
    expect(bytes.subarray(0, 4).toString('latin1')).toMatch(/^(II\*\0|MM\0\*)$/);
    expect(browser.problems).toEqual([]);
  });

  async function cookie(): Promise<string> {
    const cookies = await browser.context.cookies(server.url);
    return `svc_session=${cookies.find((c) => c.name === 'svc_session')?.value}`;
  }
});
