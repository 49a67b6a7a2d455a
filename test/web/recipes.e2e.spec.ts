import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeAll,
  loggedInBrowser,
  newFromEmptyList,
  overflowsHorizontally,
  sessionCookie,
  skipReason,
  snap,
  startServer,
  unlabelledControls,
  type Browser,
  type Server,
} from './browser.js';

const skip = skipReason();

describe.skipIf(skip)(`browser: Recipes with the catalog-driven operation editor${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let server: Server;
  let browser: Browser;

  beforeAll(async () => {
    server = await startServer();
    browser = await loggedInBrowser(server);
  });
  afterAll(() => closeAll(browser, server));

  const addOperation = async (label: string) => {
    const { page } = browser;
    await page.getByLabel('Add an operation').selectOption({ label });
    await page.getByRole('button', { name: 'Add operation' }).click();
  };

  it('creates a Recipe from the editor, with the server’s field errors next to the fields', async () => {
    const { page } = browser;
    await newFromEmptyList(page, 'Recipes', 'Recipe');

    // Every operation of the catalog is offered, grouped by category.
    const catalog = (await (await fetch(`${server.url}/api/v1/formats`)).ok) && (await page.locator('select[id^="op-picker"] option').count());
    expect(catalog).toBeGreaterThan(10);

    await page.getByRole('textbox', { name: /^Name/ }).fill('Tidy parcels');
    await addOperation('Buffer');
    // The parameters come from the catalog's JSON Schema: a number, an enum, an integer with bounds.
    const buffer = page.locator('li.op', { hasText: 'Buffer' });
    expect(await buffer.getByLabel('Distance').getAttribute('type')).toBe('number');
    expect(await buffer.getByLabel('Units').locator('option').allTextContents()).toEqual(['meters', 'kilometers', 'feet', 'miles', 'source']);
    expect(await buffer.getByLabel('Segments').inputValue()).toBe('8');
    expect(await buffer.getByLabel('Segments').getAttribute('max')).toBe('64');

    // Distance left empty: the 422's issue path body.operations.0.distance lands on that field.
    await page.getByRole('button', { name: 'Create Recipe' }).click();
    const error = buffer.locator('.field', { has: page.getByLabel('Distance') }).locator('.field-error');
    await expect.poll(() => error.isVisible()).toBe(true);
    expect(await buffer.getByLabel('Distance').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.form-summary').textContent()).toContain('needs attention');

    await buffer.getByLabel('Distance').fill('5');
    await buffer.getByLabel('Units').selectOption('meters');
    await addOperation('Rename column');
    const rename = page.locator('li.op', { hasText: 'Rename column' });
    await rename.getByLabel('From').fill('PARCEL_ID');
    await rename.getByLabel('To').fill('parcel_id');
    // Reorder with the keyboard: focus "Up" on step 2 and press Enter.
    await rename.getByRole('button', { name: /up$/ }).focus();
    await page.keyboard.press('Enter');
    expect(await page.locator('li.op .op-title').allTextContents()).toEqual(['1. Rename column', '2. Buffer']);
    expect(await page.evaluate('document.activeElement.getAttribute("aria-label")')).toBe('Move step 1, Rename column, down'); // at the top: focus moves to its twin
    expect(await unlabelledControls(page)).toEqual([]);
    await snap(page, 'recipe-editor');

    await page.getByRole('button', { name: 'Create Recipe' }).click();
    await page.getByRole('heading', { level: 1, name: 'Recipes' }).waitFor();
    expect(await page.locator('.status').textContent()).toContain('Recipe “Tidy parcels” saved');
    const row = page.locator('tr', { hasText: 'Tidy parcels' });
    expect(await row.textContent()).toContain('Rename column → Buffer');
    await snap(page, 'recipes');

    const saved = await server.sut.app.inject({ method: 'GET', url: '/api/v1/recipes', headers: { cookie: await sessionCookie(browser, server) } });
    expect(saved.json().items[0].operations).toEqual([
      { type: 'rename_column', from: 'PARCEL_ID', to: 'parcel_id' },
      { type: 'buffer', distance: 5, units: 'meters', segments: 8 },
    ]);
  });

  it('edits a Recipe', async () => {
    const { page } = browser;
    await page.getByRole('link', { name: 'Tidy parcels' }).click();
    await page.getByRole('heading', { level: 1, name: 'Edit “Tidy parcels”' }).waitFor();
    expect(await page.locator('li.op', { hasText: 'Buffer' }).getByLabel('Distance').inputValue()).toBe('5');
    await page.getByRole('textbox', { name: /^Name/ }).fill('Tidy parcels v2');
    await page.getByRole('button', { name: 'Remove step 1, Rename column' }).click();
    await addOperation('Simplify');
    await page.locator('li.op', { hasText: 'Simplify' }).getByLabel('Tolerance').fill('1.5');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { level: 1, name: 'Recipes' }).waitFor();
    expect(await page.locator('tr', { hasText: 'Tidy parcels v2' }).textContent()).toContain('Buffer → Simplify');
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await overflowsHorizontally(page)).toBe(false);
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it('deletes a Recipe after a confirmation', async () => {
    const { page } = browser;
    await page.getByRole('link', { name: 'Tidy parcels v2' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete Recipe' }).click();
    await page.getByRole('heading', { level: 1, name: 'Recipes' }).waitFor();
    expect(await page.locator('.status').textContent()).toContain('deleted');
    await expect.poll(() => page.locator('main').textContent()).toContain('No Recipes yet');
    expect(browser.problems).toEqual([]);
  });
});
