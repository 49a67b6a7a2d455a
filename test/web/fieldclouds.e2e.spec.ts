import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQfieldcloud, type QfcStandIn } from '../servers/qfieldcloud/server.js';
import { fixtureDir, surveyGpkg } from '../support/fixtures.js';
import { apiAsUser, chooseConnection, closeAll, loggedInBrowser, skipReason, startServer, unlabelledControls, type Browser, type Server } from './browser.js';

const skip = skipReason();

/*
 * Issue 19 in the browser: a QFieldCloud Source's page lists its projects and inspects one
 * (files, layers with geometry type, CRS and feature count), and the Job editor fills project,
 * file and layer from the same browser.
 */
describe.skipIf(skip)(`browser: QFieldCloud projects on the Source page and in the Job editor${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let server: Server;
  let browser: Browser;
  let qfc: QfcStandIn;
  let projectId: string;
  let sourceId: string;

  beforeAll(async () => {
    qfc = await startQfieldcloud();
    projectId = qfc.addProject('street-trees', 'Spring campaign');
    qfc.putFile(projectId, 'survey.gpkg', readFileSync(surveyGpkg(fixtureDir(), 7)));
    qfc.putFile(projectId, 'street-trees.qgs', Buffer.from('<qgis/>'));
    server = await startServer();
    browser = await loggedInBrowser(server);
    const created = await apiAsUser(browser, server, 'POST', '/sources', {
      name: 'Field survey',
      type: 'qfieldcloud',
      configuration: { url: qfc.url, username: qfc.user.username, password: qfc.user.password },
    });
    expect(created.statusCode, created.body).toBe(201);
    sourceId = created.json().id;
  });
  afterAll(() => closeAll(browser, server, () => qfc?.stop()));

  it("the Source page lists the account's projects and inspects one", async () => {
    const { page } = browser;
    await page.goto(`${server.url}/#/sources/${sourceId}`);
    await page.getByRole('heading', { level: 1, name: 'Source “Field survey”' }).waitFor();
    const projects = page.getByTestId('project-browser');
    await projects.getByRole('button', { name: 'Projects' }).click();
    await projects.locator(`tr[data-project="${projectId}"]`).waitFor({ timeout: 20_000 });
    await projects.getByRole('button', { name: 'Inspect street-trees' }).click();
    const trees = projects.locator('tr[data-file="survey.gpkg"][data-layer="trees"]');
    await trees.waitFor({ timeout: 30_000 });
    expect(await trees.textContent()).toContain('POINT');
    expect(await trees.textContent()).toContain('EPSG:4326');
    expect(await trees.textContent()).toContain('7');
    expect(await projects.locator('tr[data-file="street-trees.qgs"]').textContent()).toContain('not a vector file');
    expect(await page.content()).not.toContain(qfc.user.password);
    expect(await unlabelledControls(page)).toEqual([]);
  });

  it('the Job editor picks project, file and layer from the project browser', async () => {
    const { page } = browser;
    await page.goto(`${server.url}/#/jobs/new`);
    await page.getByRole('heading', { level: 1, name: 'New Job' }).waitFor();
    await chooseConnection(page.getByLabel(/^Source/), 'Field survey', 'QFieldCloud');
    await page.getByText('Pick a project, file and layer of “Field survey”').click();
    const picker = page.getByTestId('project-browser');
    await picker.getByRole('button', { name: 'Projects' }).click();
    await picker.getByRole('button', { name: 'Inspect street-trees' }).click();
    await picker.getByRole('button', { name: 'Use survey.gpkg › trees' }).click();
    expect(await page.getByRole('textbox', { name: /^Project/ }).inputValue()).toBe(projectId);
    expect(await page.getByRole('textbox', { name: /^File/ }).inputValue()).toBe('survey.gpkg');
    expect(await page.getByRole('textbox', { name: /^Layer/ }).inputValue()).toBe('trees');
  });
});
