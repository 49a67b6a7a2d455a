import gdal from 'gdal-async';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeAll,
  loggedInBrowser,
  overflowsHorizontally,
  sessionCookie,
  skipReason,
  snap,
  snapBoth,
  startServer,
  unlabelledControls,
  apiAsUser,
  type Browser,
  type Server,
} from './browser.js';
import { engineVenv } from '../../geo/formats/engine.js';

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

/** Runs Python in the formats engine's environment (pyarrow, shapely), outside the sandbox: test fixtures and read-backs. */
function enginePython(code: string, ...args: string[]): string {
  return execFileSync(path.join(engineVenv()!, 'bin', 'python'), ['-I', '-c', code, ...args], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
}

/** Plain Parquet (no GeoParquet metadata) with four points as WKB in a column the service cannot guess: shape_wkb. */
function plainParquet(): Buffer {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-parquet-'));
  const file = path.join(dir, 'sites.parquet');
  try {
    enginePython(
      `import sys, pyarrow as pa, pyarrow.parquet as pq, shapely
points = [shapely.Point(8.53 + i * 0.01, 47.37) for i in range(4)]
pq.write_table(pa.table({"name": ["A", "B", "C", "D"], "shape_wkb": pa.array(shapely.to_wkb(points), pa.binary())}), sys.argv[1])`,
      file,
    );
    return readFileSync(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(skip)(`browser: Workspace canvas${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let server: Server;
  let browser: Browser;

  beforeAll(async () => {
    // A 1 MB upload limit: the page says it and refuses a bigger file before sending it.
    server = await startServer({ temporal: true, env: { SVC_MAX_UPLOAD_MB: '1' } });
    browser = await loggedInBrowser(server);
  });
  afterAll(() => closeAll(browser, server));

  it('upload → layers and fields → data preview → map → buffer → transformed preview → convert to GPKG → download', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/#/workspace`);
    await page.getByRole('heading', { level: 1, name: 'Workspace' }).waitFor();
    expect(await unlabelledControls(page)).toEqual([]);
    await expect.poll(() => page.getByTestId('upload-limit').textContent()).toBe('Files up to 1 MB.');
    await snap(page, 'workspace-upload');

    // Too big: refused in the page, in MB, without a request to the server
    const uploads: string[] = [];
    const watch = (request: { method(): string; url(): string }) => {
      if (request.method() === 'POST' && request.url().endsWith('/api/v1/workspaces')) uploads.push(request.url());
    };
    page.on('request', watch);
    await page.setInputFiles('#upload-file', { name: 'big.csv', mimeType: 'text/csv', buffer: Buffer.alloc(1536 * 1024, 'a') });
    await expect.poll(() => page.locator('[role=alert]').first().textContent()).toContain('big.csv is 1.5 MB: this server accepts uploads up to 1 MB');
    page.off('request', watch);
    expect(uploads).toEqual([]);
    expect(await page.locator('.upload-progress').isVisible()).toBe(false);
    await snapBoth(page, 'workspace-upload-limit');

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

    // Map: Leaflet draws the four polygons as SVG paths, over the shipped Natural Earth basemap
    const originalMap = page.getByTestId('original-map');
    const drawn = (map: typeof originalMap) => map.locator('.leaflet-overlay-pane svg path');
    await drawn(originalMap).first().waitFor();
    expect(await drawn(originalMap).count()).toBe(4);
    expect(await page.locator('[data-testid=original] .map-note').textContent()).toContain('4 of 4 features');
    expect(await page.locator('[data-testid=original] .map-note').textContent()).toContain('EPSG:4326 · WGS 84 · degree');
    expect(await originalMap.locator('.leaflet-control-scale').count()).toBe(1);
    await expect.poll(() => originalMap.getAttribute('data-natural-earth')).toBe('drawn');
    expect(await originalMap.getAttribute('data-basemap')).toBe('natural-earth');
    expect(await originalMap.locator('.leaflet-control-attribution').textContent()).toContain('Natural Earth');
    // The facts and the layer table name the CRS and its unit
    expect(await page.locator('.facts').textContent()).toContain('WGS 84 · degree');
    // The coordinate readout: the view's centre lies among the squares (8.535–8.540° E, 47.370–47.374° N)
    const readout = (map: typeof originalMap) => map.getByTestId('coordinates');
    const centre = async (map: typeof originalMap) => ({
      lon: Number(await readout(map).getAttribute('data-lon')),
      lat: Number(await readout(map).getAttribute('data-lat')),
    });
    await expect.poll(() => readout(originalMap).textContent()).toMatch(/^Centre: 47\.37\d*° N, 8\.53\d*° E \(WGS 84, degrees\)$/);
    const home = await centre(originalMap);
    // The map opens on the layer's extent: the squares fill much of it, not a dot in a country.
    const fill = async (map: typeof originalMap) => {
      const box = (await map.boundingBox())!;
      const drawnBox = await drawn(map).evaluateAll((paths) => {
        const rects = paths.map((p) => p.getBoundingClientRect());
        return {
          w: Math.max(...rects.map((r) => r.right)) - Math.min(...rects.map((r) => r.left)),
          h: Math.max(...rects.map((r) => r.bottom)) - Math.min(...rects.map((r) => r.top)),
        };
      });
      return Math.max(drawnBox.w / box.width, drawnBox.h / box.height);
    };
    expect(await fill(originalMap)).toBeGreaterThan(0.5);
    const originalPaths = await drawn(originalMap).evaluateAll((paths) => paths.map((p) => p.getAttribute('d')));

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
    await drawn(transformedMap).first().waitFor({ timeout: 30_000 });
    expect(await drawn(transformedMap).count()).toBe(4);
    const transformedPaths = await drawn(transformedMap).evaluateAll((paths) => paths.map((p) => p.getAttribute('d')));
    expect(transformedPaths).not.toEqual(originalPaths);

    // Linked maps: dragging the original moves the transformed map to the same place
    expect(await page.getByTestId('link-maps').isChecked()).toBe(true);
    const drag = async (map: typeof originalMap) => {
      const box = (await map.boundingBox())!;
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width / 2 - 150, box.y + box.height / 2 + 80, { steps: 8 });
      await page.mouse.up();
      await page.mouse.move(0, 0);
    };
    // Linked views agree to a pixel (each map rounds its own pixel origin): ≈ 2e-5° at this zoom, the drag moves 150 px
    const apart = async () => {
      const [a, b] = [await centre(originalMap), await centre(transformedMap)];
      return Math.max(Math.abs(a.lon - b.lon), Math.abs(a.lat - b.lat));
    };
    await drag(originalMap);
    await expect.poll(async () => (await centre(originalMap)).lon).toBeGreaterThan(home.lon + 0.0005);
    await expect.poll(apart).toBeLessThan(5e-5);
    // Zoom to the layer brings the view back to the features (both maps)
    await originalMap.getByTestId('zoom-to-layer').click();
    await expect.poll(async () => Math.abs((await centre(originalMap)).lon - home.lon)).toBeLessThan(0.0002);
    await expect.poll(apart).toBeLessThan(5e-5);
    // Unlinked, the transformed map stays; linked again, it joins the original
    await page.getByTestId('link-maps').uncheck();
    await drag(originalMap);
    await expect.poll(async () => (await centre(originalMap)).lon).toBeGreaterThan(home.lon + 0.0005);
    expect(Math.abs((await centre(transformedMap)).lon - home.lon)).toBeLessThan(0.0002);
    await page.getByTestId('link-maps').check();
    await expect.poll(apart).toBeLessThan(5e-5);
    // For the picture: both maps on the layer's extent, as they open
    await originalMap.getByTestId('zoom-to-layer').click();
    await expect.poll(apart).toBeLessThan(5e-5);
    await page.mouse.move(0, 0);
    await snapBoth(page, 'workspace-linked-maps', {
      mobileShows: originalMap,
      atPhoneWidth: async () => {
        await originalMap.getByTestId('zoom-to-layer').click();
        await expect.poll(apart).toBeLessThan(5e-5);
      },
    });
    const transformedTable = page.getByTestId('transformed-table');
    await transformedTable.locator('tbody tr').first().waitFor();
    expect(await transformedTable.locator('tbody tr').count()).toBe(4);
    const stored = await server.sut.app.inject({
      method: 'GET',
      url: `/api/v1/workspaces/${workspaceId}/transformations`,
      headers: { cookie: await sessionCookie(browser, server) },
    });
    expect(stored.json().operations).toEqual([{ type: 'buffer', distance: 100, units: 'meters', segments: 8 }]);

    // Save the tried pipeline as a Recipe in one step
    await page.getByLabel('Recipe name').fill('Buffer 100 m');
    await page.getByRole('button', { name: 'Save as Recipe' }).click();
    await expect.poll(() => page.locator('.save-recipe .status').textContent()).toContain('Saved as Recipe');
    const recipes = await server.sut.app.inject({ method: 'GET', url: '/api/v1/recipes', headers: { cookie: await sessionCookie(browser, server) } });
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

  it('a second convert withdraws the first output until its own is ready; a typed CRS is named', async () => {
    // Continues on the canvas of the first test, which converted to GeoPackage.
    const { page } = browser;
    const download = page.getByTestId('download');
    expect(await download.textContent()).toMatch(/Download .*\.gpkg/);
    // A second convert withdraws the first output's download until its own is ready
    await page.getByLabel('Output format').selectOption('GeoJSON');
    await page.getByLabel('Target CRS').fill('EPSG:4326');
    await page.getByLabel('Target CRS').blur();
    await expect.poll(() => page.getByTestId('target-crs-name').textContent()).toContain('WGS 84 · degree');
    // Checked in the same task as the click: the old link is gone before the request leaves
    const linksDuringConvert = await page.evaluate(`(() => {
      document.querySelector('[data-testid=convert] button[type=submit]').click();
      return document.querySelectorAll('[data-testid=download]').length;
    })()`);
    expect(linksDuringConvert).toBe(0);
    await expect.poll(() => download.textContent(), { timeout: 90_000 }).toMatch(/Download .*\.geojson/);
    expect(browser.problems).toEqual([]);
  });

  it('the transformed preview lists what the pipeline warns about, above its rows', async () => {
    // Continues on the same canvas: a 1-degree simplify in the layer's own units (degrees) warns.
    const { page } = browser;
    const workspaceId = decodeURIComponent(page.url().split('#/workspace/')[1]!);
    const set = await apiAsUser(browser, server, 'PUT', `/workspaces/${workspaceId}/transformations`, {
      operations: [{ type: 'simplify', tolerance: 1, units: 'source' }],
    });
    expect(set.statusCode, set.body).toBe(200);
    await page.reload();
    const warnings = page.getByTestId('transformed-table').getByTestId('preview-warnings');
    await warnings.waitFor({ timeout: 30_000 });
    expect(await warnings.locator('li').getAttribute('data-code')).toBe('units_degrees');
    expect(await warnings.textContent()).toContain('for a distance on the ground use {"units": "meters"}');
    // The original column has no pipeline, so nothing to warn about.
    expect(await page.getByTestId('original-table').getByTestId('preview-warnings').count()).toBe(0);
    expect(browser.problems).toEqual([]);
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

  it.skipIf(!engineVenv() && 'the formats engine is not installed (scripts/ensure.sh installs it)')(
    'a plain Parquet upload with its geometry column named in the reading options; a GeoParquet convert with creation options',
    async () => {
      const { page } = browser;
      await page.goto(`${server.url}/#/workspace`);
      await page.getByRole('heading', { level: 1, name: 'Workspace' }).waitFor();
      await page.getByTestId('reading-options').locator('summary').click();
      await page.getByLabel('Geometry column').fill('shape_wkb');
      await page.getByLabel('CRS of the coordinates').fill('EPSG:4326');
      expect(await unlabelledControls(page)).toEqual([]);
      await snapBoth(page, 'workspace-upload-reading-options', { mobileShows: page.getByTestId('reading-options') });
      await page.setInputFiles('#upload-file', { name: 'sites.parquet', mimeType: 'application/vnd.apache.parquet', buffer: plainParquet() });
      await page.getByRole('heading', { level: 1, name: 'sites.parquet' }).waitFor({ timeout: 60_000 });
      const workspaceId = decodeURIComponent(page.url().split('#/workspace/')[1]!);
      const ws = (
        await server.sut.app.inject({ method: 'GET', url: `/api/v1/workspaces/${workspaceId}`, headers: { cookie: await sessionCookie(browser, server) } })
      ).json();
      // Read through the named column: four points with their CRS, the WKB column not an attribute.
      expect(ws).toMatchObject({ driver: 'GeoParquet', crs: 'EPSG:4326' });
      expect(ws.layers[0]).toMatchObject({ feature_count: 4, has_geometry: true });
      expect(ws.layers[0].fields.map((f: { name: string }) => f.name)).toEqual(['name']);

      await page.getByLabel('Output format').selectOption('GeoParquet');
      const options = page.getByLabel('Creation options');
      const convert = page.getByTestId('convert');
      // A line that is not KEY=VALUE is shown at the field, nothing sent; an option GeoParquet lacks is the server's sentence there.
      await options.fill('ROW GROUP=3');
      await page.getByRole('button', { name: 'Convert' }).click();
      await expect.poll(() => convert.locator('.field-error:not([hidden])').textContent()).toContain('Line 1 is not KEY=VALUE');
      await options.fill('ROWS=5');
      await page.getByRole('button', { name: 'Convert' }).click();
      await expect
        .poll(() => convert.locator('.field-error:not([hidden])').textContent(), { timeout: 30_000 })
        .toContain('GeoParquet has no creation option "ROWS"');
      await options.fill('COMPRESSION=SNAPPY\nGEOMETRY_NAME=geom');
      await page.getByRole('button', { name: 'Convert' }).click();
      const download = page.getByTestId('download');
      await expect.poll(() => download.textContent(), { timeout: 90_000 }).toMatch(/Download .*\.parquet/);
      const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
      const footer = enginePython(
        `import sys, json, pyarrow.parquet as pq
f = pq.ParquetFile(sys.argv[1]); md = f.metadata
print(json.dumps([md.row_group(0).column(0).compression, json.loads(f.schema_arrow.metadata[b"geo"])["primary_column"], md.num_rows]))`,
        (await file.path())!,
      );
      expect(JSON.parse(footer)).toEqual(['SNAPPY', 'geom', 4]);

      // The same points as PMTiles, drawn on the map from byte ranges of the download (206), not the whole file.
      await page.getByLabel('Output format').selectOption('PMTiles');
      await options.fill('MAXZOOM=8');
      await page.getByRole('button', { name: 'Convert' }).click();
      await expect.poll(() => download.textContent(), { timeout: 90_000 }).toMatch(/Download .*\.pmtiles/);
      const ranges: { range: string | undefined; status: number }[] = [];
      page.on('response', (response) => {
        if (response.url().endsWith(`/workspaces/${workspaceId}/download`))
          ranges.push({ range: response.request().headers().range, status: response.status() });
      });
      await page.getByTestId('show-pmtiles').click();
      await expect
        .poll(
          () =>
            page
              .getByTestId('pmtiles-map')
              .locator('canvas[data-features]')
              .evaluateAll((c) => c.some((e) => Number((e as HTMLElement).dataset.features) > 0)),
          {
            timeout: 30_000,
          },
        )
        .toBe(true);
      expect(ranges.length).toBeGreaterThan(0);
      expect(ranges.every((r) => r.status === 206 && /^bytes=\d+-\d+$/.test(r.range ?? ''))).toBe(true);
      expect(browser.problems).toEqual([]);
    },
  );
});
