import gdal from 'gdal-async';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeAll, loggedInBrowser, skipReason, snapBoth, startServer, type Browser, type Server } from './browser.js';

/*
 * Issue 34, finding 6: the operator's tile service (SVC_BASEMAP_URL) is what the maps draw, with
 * its attribution; without it nothing outside this server is asked for anything; and a layer with
 * many long-named columns keeps the preview usable (the table scrolls, the page does not).
 */

const skip = skipReason({ temporal: true });

/** A 256 px PNG tile (a pale fill with a darker frame, so the tile grid shows), made with GDAL. */
function tilePng(): Buffer {
  const mem = gdal.open('tile', 'w', 'MEM', 256, 256, 3, gdal.GDT_Byte);
  const fill = [220, 232, 214];
  for (let b = 1; b <= 3; b++) {
    const pixels = new Uint8Array(256 * 256).fill(fill[b - 1]!);
    for (let i = 0; i < 256; i++) for (const j of [0, 1, 254, 255]) pixels[j * 256 + i] = pixels[i * 256 + j] = 150;
    mem.bands.get(b).pixels.write(0, 0, 256, 256, pixels);
  }
  const name = `/vsimem/tile-${process.pid}.png`;
  gdal.drivers.get('PNG').createCopy(name, mem).close();
  mem.close();
  return gdal.vsimem.release(name);
}

/** A tile server on loopback that counts what it serves. */
async function startTileServer(): Promise<{ url: string; served: string[]; close(): Promise<void> }> {
  const png = tilePng();
  const served: string[] = [];
  const server: HttpServer = createServer((req, res) => {
    const match = /^\/tiles\/(\d+)\/(\d+)\/(\d+)\.png$/.exec(req.url ?? '');
    if (!match) return res.writeHead(404).end();
    served.push(req.url!);
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Four points in Zürich. */
function points(): string {
  const features = [0, 1, 2, 3].map((i) => ({
    type: 'Feature',
    properties: { name: `P${i}` },
    geometry: { type: 'Point', coordinates: [8.535 + i * 0.002, 47.37 + i * 0.001] },
  }));
  return JSON.stringify({ type: 'FeatureCollection', features });
}

/** 60 columns with 60-character names and long non-ASCII values. */
const WIDE_COLUMNS = Array.from({ length: 60 }, (_, i) =>
  `${String(i + 1).padStart(2, '0')}_Straßenabschnitt_Länge_Gemeindegrenze_Zürich_Москва_Ωμέγα_xyz`.slice(0, 60),
);

function wideLayer(): string {
  const features = [0, 1, 2, 3, 4].map((row) => ({
    type: 'Feature',
    properties: Object.fromEntries(
      WIDE_COLUMNS.map((c, i) => [c, i % 3 === 0 ? row * 1000 + i : `Übergangsbestimmung für Grundstücke – Санкт-Петербург – Ελλάδα ${row}-${i}`]),
    ),
    geometry: { type: 'Point', coordinates: [8.535 + row * 0.002, 47.37] },
  }));
  return JSON.stringify({ type: 'FeatureCollection', features });
}

const pageOverflows = (browser: Browser) => browser.page.evaluate('document.scrollingElement.scrollWidth > window.innerWidth');

async function upload(browser: Browser, server: Server, name: string, content: string): Promise<void> {
  const { page } = browser;
  await page.goto(`${server.url}/#/workspace`);
  await page.getByRole('heading', { level: 1, name: 'Workspace' }).waitFor();
  await page.setInputFiles('#upload-file', { name, mimeType: 'application/geo+json', buffer: Buffer.from(content) });
  await page.getByRole('heading', { level: 1, name }).waitFor({ timeout: 30_000 });
}

/** The four points uploaded, once the Workspace's map of the original has drawn them: that map. */
async function pointsOnMap(browser: Browser, server: Server) {
  await upload(browser, server, 'points.geojson', points());
  const map = browser.page.getByTestId('original-map');
  await map.locator('.leaflet-overlay-pane path').first().waitFor();
  return map;
}

describe.skipIf(skip)(`browser: the operator's basemap (SVC_BASEMAP_URL)${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let tiles: Awaited<ReturnType<typeof startTileServer>>;
  let server: Server;
  let browser: Browser;

  beforeAll(async () => {
    tiles = await startTileServer();
    server = await startServer({
      temporal: true,
      env: { SVC_BASEMAP_URL: `${tiles.url}/tiles/{z}/{x}/{y}.png`, SVC_BASEMAP_ATTRIBUTION: '© Kartenwerk der Prüfung' },
    });
    browser = await loggedInBrowser(server);
  });
  afterAll(() => closeAll(browser, server, tiles));

  it('the map starts on the tile service, loads its tiles and credits it', async () => {
    const { page } = browser;
    const map = await pointsOnMap(browser, server);
    expect(await map.getAttribute('data-basemap')).toBe('tiles');
    // Tiles the browser asked for and drew, from the operator's server only
    await expect.poll(() => map.locator('img.leaflet-tile-loaded').count()).toBeGreaterThan(0);
    const sources = await map.locator('img.leaflet-tile').evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).src));
    expect(sources.length).toBeGreaterThan(0);
    for (const src of sources) expect(src.startsWith(`${tiles.url}/tiles/`), src).toBe(true);
    expect(tiles.served.length).toBeGreaterThan(0);
    expect(await map.locator('.leaflet-control-attribution').textContent()).toContain('© Kartenwerk der Prüfung');
    // The shipped basemap stays a choice in the layer switch
    const switchLabels = await map.locator('.leaflet-control-layers-base label').allTextContents();
    expect(switchLabels.map((l) => l.trim())).toEqual(['Tiles', 'Natural Earth (offline)', 'None']);
    await snapBoth(page, 'workspace-basemap-tiles', { mobileShows: map });
    expect(browser.problems).toEqual([]);
  });
});

describe.skipIf(skip)(`browser: the shipped basemap contacts no other host; wide preview tables${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let server: Server;
  let browser: Browser;
  const hosts = new Set<string>();

  beforeAll(async () => {
    server = await startServer({ temporal: true });
    // Every request of the context (pages, workers), from the login on
    browser = await loggedInBrowser(server, (b) =>
      b.context.on('request', (request) => {
        const url = new URL(request.url());
        if (url.protocol === 'http:' || url.protocol === 'https:') hosts.add(url.host);
      }),
    );
  });
  afterAll(() => closeAll(browser, server));

  it('without SVC_BASEMAP_URL the map draws Natural Earth and asks no host but this server', async () => {
    const map = await pointsOnMap(browser, server);
    await expect.poll(() => map.getAttribute('data-natural-earth')).toBe('drawn');
    expect(await map.getAttribute('data-basemap')).toBe('natural-earth');
    expect(await map.locator('img.leaflet-tile').count()).toBe(0);
    expect(await map.locator('.leaflet-control-attribution').textContent()).toContain('Natural Earth');
    // Zoomed out to the world and back: still nothing but this server
    await map.locator('.leaflet-control-zoom-out').click();
    await map.locator('.leaflet-control-zoom-out').click();
    await map.getByTestId('zoom-to-layer').click();
    expect([...hosts]).toEqual([new URL(server.url).host]);
    expect(browser.problems).toEqual([]);
  });

  it('a layer of 60 long-named columns: the preview table scrolls inside its frame, headers whole, the page never sideways', async () => {
    const { page } = browser;
    await upload(browser, server, 'wide.geojson', wideLayer());
    const table = page.getByTestId('original-table');
    await table.locator('tbody tr').first().waitFor();
    const wrap = table.locator('.preview-table');
    const headers = wrap.locator('thead th');
    expect(await headers.count()).toBeGreaterThanOrEqual(60);
    const names = await headers.evaluateAll((ths) => ths.map((th) => th.getAttribute('title')));
    for (const c of WIDE_COLUMNS) expect(names).toContain(c);

    for (const width of [1280, 375]) {
      await page.setViewportSize({ width, height: width === 375 ? 800 : 860 });
      await expect.poll(() => pageOverflows(browser), { message: `page overflow at ${width} px` }).toBe(false);
      // The table is wider than its frame, which scrolls sideways (and is reachable by keyboard)
      const frame = await wrap.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth, tabindex: el.getAttribute('tabindex') }));
      expect(frame.scroll).toBeGreaterThan(frame.client);
      expect(frame.tabindex).toBe('0');
      await wrap.evaluate((el) => el.scrollBy(400, 0));
      await expect.poll(() => wrap.evaluate((el) => el.scrollLeft)).toBeGreaterThan(0);
      await wrap.evaluate((el) => el.scrollTo(0, 0));
      expect(await pageOverflows(browser)).toBe(false);
      // Every column name is shown whole (wrapped, not cut), non-ASCII included
      const cut = await headers.evaluateAll((ths) =>
        ths.filter((th) => th.scrollWidth > th.clientWidth + 1 || th.scrollHeight > th.clientHeight + 1).map((th) => th.getAttribute('title')),
      );
      expect(cut).toEqual([]);
      expect(await headers.first().textContent()).toContain(WIDE_COLUMNS[0]);
      // The field list wraps the long names too
      expect(await page.getByTestId('fields').evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
    }
    await page.setViewportSize({ width: 1280, height: 860 });
    await snapBoth(page, 'workspace-wide-table', { mobileShows: table });
    expect([...hosts]).toEqual([new URL(server.url).host]);
    expect(browser.problems).toEqual([]);
  });
});
