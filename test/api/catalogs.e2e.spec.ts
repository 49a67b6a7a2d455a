import { describe, expect } from 'vitest';
import { buildApp } from '../../api/app.js';
import { operationCatalog } from '../../geo/operations/catalog.js';
import { bearer, createTestApp, createToken, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest } from '../support/e2e.js';

// The suite's app; the tests about a setting start an app of their own with it.
const it = e2eTest();

describe.skipIf(skipWithoutDatabase)('catalogs, OpenAPI, errors', () => {
  let sut: TestApp;
  let cookie: string;
  it.beforeAll(async ({ sut: theSut, cookie: theCookie }) => {
    sut = theSut;
    cookie = theCookie;
  });

  it('serves the format catalog from GDAL without credentials', async () => {
    const res = await sut.app.inject({ method: 'GET', url: '/api/v1/formats' });
    expect(res.statusCode).toBe(200);
    const items = res.json().items as { id: string; kind: string; write: boolean; extensions: string[] }[];
    for (const id of ['GPKG', 'GeoJSON', 'ESRI Shapefile', 'FlatGeobuf', 'CSV', 'GTiff']) {
      expect(
        items.some((f) => f.id === id),
        id,
      ).toBe(true);
    }
    // File formats only: databases and in-memory drivers are not something convert writes.
    for (const id of ['PostgreSQL', 'MySQL', 'Memory', 'Carto'])
      expect(
        items.some((f) => f.id === id),
        id,
      ).toBe(false);
    expect(items.find((f) => f.id === 'GPKG' && f.kind === 'vector')).toMatchObject({ read: true, write: true, multi_layer: true, extensions: ['gpkg'] });
  });

  it('serves system capabilities without credentials or secrets', async () => {
    const res = await sut.app.inject({ method: 'GET', url: '/api/v1/system' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.gdal.version).toMatch(/^3\./);
    expect(body.gdal.drivers.total).toBeGreaterThan(100);
    expect(body.features).toHaveProperty('raster_processing');
    expect(body).toHaveProperty('edition');
    expect(body).toHaveProperty('container_image');
    expect(body.temporal_ui).toBeNull(); // SVC_TEMPORAL_UI_URL is not set here
    expect(body.basemap).toBeNull(); // SVC_BASEMAP_URL neither: the browser draws its own Natural Earth basemap
    expect(body.limits).toEqual({ max_upload_bytes: sut.services.config.maxUploadBytes });
    expect(JSON.stringify(body)).not.toMatch(/postgres:\/\/|password|secret/i);
  });

  it('tells the browser where the Temporal UI is when SVC_TEMPORAL_UI_URL is set', async () => {
    const other = await createTestApp({ env: { SVC_TEMPORAL_UI_URL: 'http://127.0.0.1:8233/' } });
    try {
      const res = await other.app.inject({ method: 'GET', url: '/api/v1/system' });
      expect(res.json().temporal_ui).toEqual({ url: 'http://127.0.0.1:8233', namespace: 'default' });
    } finally {
      await other.close();
    }
  });

  it('tells the browser the tile service and the upload limit the operator set; the page may load images from that origin only', async () => {
    const other = await createTestApp({
      env: { SVC_BASEMAP_URL: 'http://127.0.0.1:8099/tiles/{z}/{x}/{y}.png', SVC_BASEMAP_ATTRIBUTION: '© Test tiles', SVC_MAX_UPLOAD_MB: '3' },
    });
    try {
      const system = (await other.app.inject({ method: 'GET', url: '/api/v1/system' })).json();
      expect(system.basemap).toEqual({ url: 'http://127.0.0.1:8099/tiles/{z}/{x}/{y}.png', attribution: '© Test tiles' });
      expect(system.limits).toEqual({ max_upload_bytes: 3 * 1024 * 1024 });
      const page = await other.app.inject({ method: 'GET', url: '/' });
      expect(page.headers['content-security-policy']).toContain("img-src 'self' data: blob: http://127.0.0.1:8099;");
    } finally {
      await other.close();
    }
    const page = await sut.app.inject({ method: 'GET', url: '/' });
    expect(page.headers['content-security-policy']).toContain("img-src 'self' data: blob:;");
  });

  it('describes a CRS by its code (name and unit), without credentials; other input is refused', async () => {
    const lirr = await sut.app.inject({ method: 'GET', url: '/api/v1/crs/EPSG:2263' });
    expect(lirr.statusCode).toBe(200);
    expect(lirr.json()).toEqual({ code: 'EPSG:2263', name: 'NAD83 / New York Long Island (ftUS)', unit: 'US survey foot', geographic: false });
    expect((await sut.app.inject({ method: 'GET', url: '/api/v1/crs/EPSG:4326' })).json()).toMatchObject({
      code: 'EPSG:4326',
      unit: 'degree',
      geographic: true,
    });
    const unknown = await sut.app.inject({ method: 'GET', url: '/api/v1/crs/EPSG:999999' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toMatchObject({ code: 'not_found' });
    expect(unknown.json().error.message).toContain('EPSG:999999');
    for (const bad of ['%2Fetc%2Fpasswd', 'http:%2F%2Fexample.org%2Fcrs', '%2Bproj%3Dlonglat']) {
      const res = await sut.app.inject({ method: 'GET', url: `/api/v1/crs/${bad}` });
      expect(res.statusCode, bad).toBe(400);
    }
  });

  it('lists every catalog operation with id, label, parameters and an example, behind workspaces:read', async () => {
    const denied = await sut.app.inject({
      method: 'GET',
      url: '/api/v1/transformations',
      headers: bearer(await createToken(sut.app, cookie, ['recipes:read'])),
    });
    expect(denied.statusCode).toBe(403);
    const token = await createToken(sut.app, cookie, ['workspaces:read']);
    const res = await sut.app.inject({ method: 'GET', url: '/api/v1/transformations', headers: bearer(token) });
    expect(res.statusCode).toBe(200);
    const items = res.json().items;
    expect(items.map((i: { id: string }) => i.id)).toEqual(operationCatalog.map((d) => d.id));
    for (const id of ['buffer', 'simplify', 'rename_column', 'reproject', 'filter', 'dissolve', 'clip_bbox', 'make_valid']) {
      expect(
        items.some((i: { id: string }) => i.id === id),
        id,
      ).toBe(true);
    }
    const buffer = items.find((i: { id: string }) => i.id === 'buffer');
    expect(buffer.requires_geometry).toBe(true);
    expect(buffer.parameters.properties.distance.type).toBe('number');
    expect(buffer.parameters.required).toEqual(['distance']);
  });

  it('publishes an OpenAPI 3.1 document generated from the route schemas, and a docs page', async () => {
    const res = await sut.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    for (const path of ['/api/v1/recipes', '/api/v1/recipes/{id}', '/api/v1/auth/me', '/api/v1/account/tokens', '/api/v1/formats', '/api/v1/transformations']) {
      expect(doc.paths, path).toHaveProperty([path]);
    }
    // public routes say so; the rest inherit the Bearer/cookie requirement
    expect(doc.paths['/api/v1/formats'].get.security).toEqual([]);
    expect(doc.paths['/api/v1/system'].get.security).toEqual([]);
    expect(doc.paths['/api/v1/recipes'].get.security).toBeUndefined();
    expect(Object.keys(doc.paths['/api/v1/workspaces'].post.requestBody.content)).toEqual(['multipart/form-data', 'application/json']);
    const post = doc.paths['/api/v1/recipes'].post;
    expect(post.requestBody.content['application/json'].schema).toBeDefined();
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['201', '403', '422']));
    const page = await sut.app.inject({ method: 'GET', url: '/api/v1/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
  });

  it('answers unknown routes, bad JSON and crashes with the envelope', async () => {
    const unknown = await sut.app.inject({ method: 'GET', url: '/api/v1/nothing-here', headers: { cookie } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('not_found');

    // A raw POST of `payload` as `contentType`, with the session's cookie.
    const post = (url: string, contentType: string, payload: string) =>
      sut.app.inject({ method: 'POST', url, headers: { cookie, 'content-type': contentType }, payload });
    const badJson = await post('/api/v1/recipes', 'application/json', '{"name": ');
    expect(badJson.statusCode).toBe(422);
    expect(badJson.json().error.code).toBe('validation_error');

    const nul = await sut.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: '{"email":"a\\u0000b","password":"x"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(nul.statusCode).toBe(422);
    expect(nul.json().error.code).toBe('validation_error');
    const emptyBody = await post('/api/v1/recipes', 'application/json', '');
    expect(emptyBody.statusCode).toBe(422);

    const longId = await sut.app.inject({ method: 'GET', url: `/api/v1/recipes/${'0'.repeat(300)}`, headers: { cookie } });
    expect(longId.statusCode).toBe(400);
    expect(longId.json().error.code).toBe('invalid_parameter');

    const badEncoding = await sut.app.inject({ method: 'GET', url: '/api/v1/recipes/%E0%A4%A', headers: { cookie } });
    expect(badEncoding.statusCode).toBe(400);
    expect(badEncoding.json().error).toBeDefined();

    const noBoundary = await post('/api/v1/workspaces', 'multipart/form-data', 'x');
    expect(noBoundary.statusCode).toBe(422);
    expect(noBoundary.json().error.code).toBe('validation_error');

    const withCrash = await buildApp(sut.services, {
      logger: false,
      extraRoutes: [
        () => async (app) => {
          app.get('/__boom', { config: { auth: { public: true } } }, async () => {
            throw new Error('password=hunter2 at /srv/secret/path');
          });
        },
      ],
    });
    const boom = await withCrash.inject({ method: 'GET', url: '/api/v1/__boom' });
    await withCrash.close();
    expect(boom.statusCode).toBe(500);
    expect(boom.json().error.code).toBe('internal_error');
    expect(boom.body).not.toMatch(/hunter2|\/srv/);
  });
});
