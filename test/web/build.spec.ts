import Fastify from 'fastify';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { registerWeb } from '../../api/web/routes.js';
import { buildWeb, FIRST_PAGE_JS_BUDGET } from '../../web/build.js';

describe('browser app build', () => {
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'svc-web-')), 'dist');
  afterAll(() => rmSync(path.dirname(out), { recursive: true, force: true }));

  it('keeps the first page under its JavaScript budget, with the map in a lazy chunk', async () => {
    const report = await buildWeb(out);
    expect(report.firstPageJsBytes).toBeGreaterThan(1000);
    expect(report.firstPageJsBytes).toBeLessThan(FIRST_PAGE_JS_BUDGET);
    const atStart = report.files.filter((f) => f.loadedAtStart).map((f) => f.file);
    expect(atStart.some((f) => f.includes('leaflet'))).toBe(false);
    expect(report.files.some((f) => /^assets\/leaflet-map-[A-Z0-9]+\.js$/.test(f.file) && !f.loadedAtStart)).toBe(true);
    for (const f of report.files) expect(f.file).toMatch(/^assets\/[\w.-]+-[A-Z0-9]{8}\.\w+/);
    const html = readFileSync(path.join(out, 'index.html'), 'utf8');
    expect(html).toContain(`<script type="module" src="/${report.entry.js}"></script>`);
    expect(html).toContain(`<link rel="stylesheet" href="/${report.entry.css}" />`);
    // The same sources give the same names: concurrent starts agree on them.
    expect((await buildWeb(out)).entry).toEqual(report.entry);
  });
});

describe('serving the browser app', () => {
  it('serves index.html uncached with a CSP, hashed assets immutable, nothing outside assets/', async () => {
    const app = Fastify();
    await registerWeb(app);
    try {
      const index = await app.inject({ method: 'GET', url: '/' });
      expect(index.statusCode).toBe(200);
      expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(index.headers['cache-control']).toBe('no-cache');
      expect(index.headers['content-security-policy']).toContain("script-src 'self'");
      const script = /src="(\/assets\/app-[A-Z0-9]+\.js)"/.exec(index.body)?.[1];
      expect(script).toBeDefined();

      const asset = await app.inject({ method: 'GET', url: script! });
      expect(asset.statusCode).toBe(200);
      expect(asset.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(Number(asset.headers['content-length'])).toBe(asset.rawPayload.length);
      expect((await app.inject({ method: 'HEAD', url: script! })).statusCode).toBe(200);

      for (const url of ['/assets/missing-AAAAAAAA.js', '/assets/../build-report.json', '/assets/..%2fbuild-report.json', '/assets/']) {
        expect((await app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
      }
    } finally {
      await app.close();
    }
  });
});
