import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeAll,
  loggedInBrowser,
  overflowsHorizontally,
  skipReason,
  snapBoth,
  startServer,
  unlabelledControls,
  type Browser,
  type Server,
} from './browser.js';

const skip = skipReason({ temporal: true });

/** Three cities, two of them far from Switzerland, with field names longer than a Shapefile keeps. */
function cities(): string {
  const places: [string, number, number][] = [
    ['Zurich', 8.54, 47.37],
    ['Tokyo', 139.69, 35.69],
    ['Wellington', 174.78, -41.29],
  ];
  return JSON.stringify({
    type: 'FeatureCollection',
    features: places.map(([name, x, y], i) => ({
      type: 'Feature',
      properties: { city_name_official: name, city_population_total: 1000 * (i + 1) },
      geometry: { type: 'Point', coordinates: [x, y] },
    })),
  });
}

/*
 * The Workspace's convert says what it changed (issue 34): the warnings of the result listed
 * under it (the PROJ operation with its pipeline, features outside the target's area of use, the
 * Shapefile's field names), and a transformation pipeline can be given beside the target CRS.
 */
describe.skipIf(skip)(`browser: convert warnings${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let server: Server;
  let browser: Browser;

  beforeAll(async () => {
    server = await startServer({ temporal: true });
    browser = await loggedInBrowser(server);
  });
  afterAll(() => closeAll(browser, server));

  it('lists the warnings of a convert under its result, and refuses a transformation that is not a PROJ pipeline at its field', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/#/workspace`);
    await page.getByRole('heading', { level: 1, name: 'Workspace' }).waitFor();
    await page.setInputFiles('#upload-file', { name: 'cities.geojson', mimeType: 'application/geo+json', buffer: Buffer.from(cities()) });
    await page.getByRole('heading', { level: 1, name: 'cities.geojson' }).waitFor({ timeout: 30_000 });
    expect(await unlabelledControls(page)).toEqual([]);

    const convert = page.getByTestId('convert');
    await page.getByLabel('Output format').selectOption('ESRI Shapefile');
    await page.getByLabel('Target CRS').fill('EPSG:2056');
    // Not a pipeline: a 400 shown at the transformation field, no output.
    await page.getByLabel('Transformation (PROJ pipeline)').fill('+proj=utm +zone=32');
    await page.getByRole('button', { name: 'Convert' }).click();
    await expect
      .poll(() => convert.locator('.field-error:not([hidden])').textContent(), { timeout: 30_000 })
      .toMatch(/transformation must be a PROJ pipeline/i);
    expect(await page.getByTestId('download').count()).toBe(0);

    await page.getByLabel('Transformation (PROJ pipeline)').fill('');
    await page.getByRole('button', { name: 'Convert' }).click();
    const list = page.getByTestId('output-warnings');
    await list.waitFor({ timeout: 90_000 });
    const text = (await list.textContent()) ?? '';
    expect(text).toContain('2 features lie partly or wholly outside its area of use (Liechtenstein; Switzerland)');
    expect(text).toContain('city_name_official → city_name_');
    expect(await list.locator('li[data-code=crs_operation]').count()).toBe(1);
    expect(await list.locator('li[data-code=crs_outside_area]').count()).toBe(1);
    expect(await list.locator('li[data-code=field_renamed]').count()).toBe(1);
    // The pipeline PROJ used, to paste into the transformation field.
    await list.locator('li[data-code=crs_operation] summary').click();
    expect(await list.locator('li[data-code=crs_operation] pre').textContent()).toMatch(/^\+proj=pipeline /);
    expect(await page.getByTestId('download').textContent()).toMatch(/Download .*\.zip/);
    await snapBoth(page, 'workspace-convert-warnings', { mobileShows: list });
    expect(await overflowsHorizontally(page)).toBe(false);
    expect(browser.problems).toEqual([]);
  });

  it('a transformation pipeline given is used, and the result says so', async () => {
    // Continues on the canvas of the test above, whose result lists the pipeline PROJ chose.
    const { page } = browser;
    const list = page.getByTestId('output-warnings');
    const pipeline = (await list.locator('li[data-code=crs_operation] pre').textContent())!;
    await page.getByLabel('Transformation (PROJ pipeline)').fill(pipeline);
    await page.getByRole('button', { name: 'Convert' }).click();
    // The status line and the result as they are (a refusal would show in the former).
    const state = async () =>
      `${await page.getByTestId('convert').locator('.status, [role=status], [role=alert]').allTextContents()} | ${
        (await list.count()) ? await list.textContent() : ''
      }`;
    await expect.poll(state, { timeout: 50_000 }).toContain('with the transformation given');
    expect(browser.problems).toEqual([]);
  });
});
