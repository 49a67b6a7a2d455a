/**
 * End-to-end support for the browser app: the real API (test database, optional Temporal
 * worker) listening on a loopback port, and Debian's Chromium driven by playwright-core.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { ADMIN, createTestApp, type TestApp } from '../support/app.js';

export const CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser suites cannot run here, or false when they can. */
export function skipReason(options: { temporal?: boolean } = {}): string | false {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is absent: install Debian's chromium (apt-get install chromium) to run the browser tests`;
  if (!process.env.SVC_TEST_DATABASE_URL) return 'SVC_TEST_DATABASE_URL is not set: run the suite with `npm test`, which starts PostgreSQL';
  if (options.temporal && !process.env.SVC_TEST_TEMPORAL_ADDRESS)
    return 'SVC_TEST_TEMPORAL_ADDRESS is not set: run the suite with `npm test`, which starts Temporal';
  return false;
}

export interface Server {
  url: string;
  sut: TestApp;
  close(): Promise<void>;
}

/** The app on a fresh database, serving the browser app, reachable by Chromium. */
export async function startServer(options: { temporal?: boolean; env?: Record<string, string> } = {}): Promise<Server> {
  const sut = await createTestApp({ temporal: options.temporal ?? false, ...(options.env ? { env: options.env } : {}) });
  let stopWorker = async () => {};
  if (options.temporal) {
    // Same data folder and task queue as the app: conversions and Runs run here.
    const { startTestWorker } = await import('../support/worker.js');
    const worker = await startTestWorker(sut.services.config);
    stopWorker = () => worker.stop();
  }
  const url = await sut.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    sut,
    async close() {
      await stopWorker();
      await sut.close();
    },
  };
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Browser-side failures (uncaught errors, console errors) seen so far. */
  problems: string[];
  close(): Promise<void>;
}

export async function launchBrowser(viewport = { width: 1280, height: 860 }): Promise<Browser> {
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'svc-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport,
    acceptDownloads: true,
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // 4xx answers the page handles (a wrong password, a revoked token) are logged by Chromium too.
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  page.setDefaultTimeout(15_000);
  return {
    context,
    page,
    problems,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

export const screenshotsDir = path.resolve('docs/screenshots');

/** Saves a screenshot for the README, only when SVC_UPDATE_SCREENSHOTS=1. */
export async function snap(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  if (process.env.SVC_UPDATE_SCREENSHOTS !== '1') return;
  mkdirSync(screenshotsDir, { recursive: true });
  // Let maps finish their fit-to-bounds animation and fonts settle.
  await page.waitForTimeout(400);
  await page.screenshot({ path: path.join(screenshotsDir, `${name}.png`), fullPage: options.fullPage ?? true });
}

export async function logIn(page: Page, url: string, credentials = ADMIN): Promise<void> {
  await page.goto(`${url}/#/login`);
  await page.getByLabel('E-mail').fill(credentials.email);
  await page.getByLabel('Password').fill(credentials.password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor();
}

/** Form controls that no label, aria-label or aria-labelledby names (should be none). */
export async function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll('input, select, textarea')]
    .filter((e) => e.type !== 'hidden' && !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
    .map((e) => e.outerHTML.slice(0, 120))`);
}

/** True when the page is wider than the viewport (horizontal scrolling at 375 px). */
export async function overflowsHorizontally(page: Page): Promise<boolean> {
  return page.evaluate('document.documentElement.scrollWidth > window.innerWidth + 1');
}

/**
 * The page at desktop width and at 375 px: fails when it scrolls sideways on the phone, and saves
 * `name.png` and `name-mobile.png` when screenshots are being refreshed.
 */
export async function snapBoth(
  page: Page,
  name: string,
  options: { mobileShows?: Locator /** Run at 375 px before the phone picture (a map zoomed to its layer again). */; atPhoneWidth?: () => Promise<void> } = {},
): Promise<void> {
  await snap(page, name);
  const size = page.viewportSize() ?? { width: 1280, height: 860 };
  await page.setViewportSize({ width: 375, height: 800 });
  try {
    if (await overflowsHorizontally(page)) throw new Error(`${name} scrolls sideways at 375 px`);
    await options.atPhoneWidth?.();
    // The phone picture shows the top of the page, or the part the test points at.
    if (options.mobileShows) await options.mobileShows.scrollIntoViewIfNeeded();
    else await page.evaluate('window.scrollTo(0, 0)');
    await snap(page, `${name}-mobile`, { fullPage: false });
  } finally {
    await page.setViewportSize(size);
  }
}

/**
 * Chooses a saved connection in a picker by its name and type label. The option also says where
 * the connection points ("City parcels (PostGIS: 127.0.0.1 · gis)"), which varies per run; that
 * text is returned for assertions.
 */
export async function chooseConnection(select: Locator, name: string, typeLabel: string): Promise<string> {
  const prefix = `${name} (${typeLabel}`;
  // The picker fills in once the page has loaded the saved connections.
  await select.locator('option', { hasText: prefix }).first().waitFor({ state: 'attached' });
  const options = await select
    .locator('option')
    .evaluateAll((nodes) => nodes.map((o) => ({ value: (o as HTMLOptionElement).value, text: o.textContent ?? '' })));
  const option = options.find((o) => o.text.startsWith(prefix));
  if (!option) throw new Error(`no option starting with ${JSON.stringify(prefix)} among ${JSON.stringify(options.map((o) => o.text))}`);
  await select.selectOption(option.value);
  return option.text;
}

/** Chromium logged in to `server` as the admin; `beforeLogIn` gets it first (to watch every request from the login on). */
export async function loggedInBrowser(server: Server, beforeLogIn?: (browser: Browser) => void): Promise<Browser> {
  const browser = await launchBrowser();
  beforeLogIn?.(browser);
  await logIn(browser.page, server.url);
  return browser;
}

type Closable = { close(): unknown } | (() => unknown) | undefined;

/** Closes what a suite opened, in the order given (the browser before the server it talks to); one that never started is passed over. */
export async function closeAll(...parts: Closable[]): Promise<void> {
  for (const part of parts) {
    if (typeof part === 'function') await part();
    else await part?.close();
  }
}

/** The session cookie of the browser's logged-in user, for requests to the API beside the page. */
export async function sessionCookie(browser: Browser, server: Server): Promise<string> {
  const cookies = await browser.context.cookies(server.url);
  return `svc_session=${cookies.find((c) => c.name === 'svc_session')?.value}`;
}

/** A request to the API (`/api/v1` + `url`) as the browser's logged-in user. */
export async function apiAsUser(browser: Browser, server: Server, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) {
  const headers = { cookie: await sessionCookie(browser, server) };
  return server.sut.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload === undefined ? {} : { payload }) });
}

/** Opens the New Source (or Destination) page and fills its name and type; the type's fields are then shown. */
export async function newConnectionForm(page: Page, url: string, noun: 'Source' | 'Destination', name: string, type: string): Promise<void> {
  await page.goto(`${url}/#/${noun.toLowerCase()}s/new`);
  await page.getByRole('heading', { level: 1, name: `New ${noun}` }).waitFor();
  await page.getByRole('textbox', { name: /^Name/ }).fill(name);
  await page.getByLabel('Type').selectOption(type);
}

/** From the main menu to a list that is still empty ("No Recipes yet"), then its "New …" page. */
export async function newFromEmptyList(page: Page, plural: string, noun: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: plural }).click();
  await page.getByRole('heading', { level: 1, name: plural }).waitFor();
  await expect.poll(() => page.locator('main').textContent()).toContain(`No ${plural} yet`);
  await page
    .getByRole('link', { name: `New ${noun}` })
    .first()
    .click();
  await page.getByRole('heading', { level: 1, name: `New ${noun}` }).waitFor();
}
