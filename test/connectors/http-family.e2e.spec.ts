import gdal from 'gdal-async';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { Send } from '../support/e2e.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { startFeatureServer, type FeatureServerFixture } from '../servers/featureserver/server.js';
import { startHttpFixtureServer, type HttpFixtureServer } from '../servers/http/server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../servers/http/webhook-receiver.js';
import { placesCollection, skipWithoutPygeoapi, startPygeoapi, type Pygeoapi } from '../servers/pygeoapi/server.js';
import { startStacServer, type StacServer } from '../servers/stac/server.js';
import { type ConnectorApi, connectorTest, skipWithoutWorker, startAppBeforeAll } from './e2e.js';

/*
 * The HTTP-family connectors through /api/v1, as a user drives them: create the Source, test it,
 * import it into a Workspace, preview and convert; upload → convert → deliver to a webhook whose
 * receiver checks the signature and the body. One app and one worker for all six types.
 */

const it = connectorTest({ env: { SVC_MAX_UPLOAD_MB: '1' } });
const SECRETS = { password: 'e2e-pw-3c9a1f', bearer: 'e2e-bearer-77d2e0', token: 'e2e-token-1b5c4d', signing: 'e2e-sign-0f6e2a' };

describe.skipIf(skipWithoutWorker)('HTTP-family Sources and the webhook Destination through /api/v1', () => {
  startAppBeforeAll(it);
  let files: HttpFixtureServer;
  let catalog: StacServer;
  let arcgis: FeatureServerFixture;
  let ogc: Pygeoapi | undefined;
  const receivers: WebhookReceiver[] = [];
  const dir = fixtureDir();

  beforeAll(async () => {
    pointsGeoJson(dir, 25);
    files = await startHttpFixtureServer({ dir, basic: { username: 'reader', password: SECRETS.password }, bearer: SECRETS.bearer });
    catalog = await startStacServer({ bearer: SECRETS.token });
    arcgis = await startFeatureServer({ token: SECRETS.token });
    if (!skipWithoutPygeoapi) ogc = await startPygeoapi([placesCollection(60)]);
  });
  afterAll(async () => {
    for (const r of receivers) await r.stop();
    await ogc?.stop();
    await arcgis?.stop();
    await catalog?.stop();
    await files?.stop();
  });

  const noSecrets = (body: string) => {
    for (const s of Object.values(SECRETS)) expect(body).not.toContain(s);
  };

  /** Create → test (saved) → import → preview → convert; returns the Workspace after convert. */
  async function importAndConvert(
    call: Send,
    type: string,
    configuration: Record<string, unknown>,
    resource: unknown,
    expected: { features: number; layer?: string },
  ) {
    const created = await call('POST', '/api/v1/sources', { name: `${type} source`, type, configuration });
    expect(created.statusCode, created.body).toBe(201);
    noSecrets(created.body);
    const source = created.json();
    const tested = await call('POST', `/api/v1/sources/${source.id}/test`);
    expect(tested.json(), tested.body).toMatchObject({ ok: true, status: 'ok' });
    noSecrets(tested.body);

    const imported = await call('POST', '/api/v1/workspaces', { source_id: source.id, ...(resource === undefined ? {} : { source_resource: resource }) });
    expect(imported.statusCode, imported.body).toBe(201);
    noSecrets(imported.body);
    const ws = imported.json();
    expect(ws.status).toBe('inspected');
    const layer = ws.layers[0];
    expect(layer.feature_count).toBe(expected.features);
    if (expected.layer) expect(layer.name).toBe(expected.layer);

    const preview = await call('GET', `/api/v1/workspaces/${ws.id}/data-preview?limit=5`);
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json()).toMatchObject({ row_count: expected.features, preview_row_count: Math.min(5, expected.features) });
    if (layer.has_geometry) {
      const map = await call('GET', `/api/v1/workspaces/${ws.id}/spatial-preview`);
      expect(map.statusCode, map.body).toBe(200);
      expect(map.json().returned_count).toBe(expected.features);
    }
    const converted = await call('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GeoJSON' });
    expect(converted.statusCode, converted.body).toBe(200);
    expect(converted.json()).toMatchObject({ status: 'completed', output: { format: 'GeoJSON' } });
    const download = await call('GET', `/api/v1/workspaces/${ws.id}/download`);
    expect(JSON.parse(download.body).features).toHaveLength(expected.features);
    return { source, ws };
  }

  it('url: a file behind redirects', async ({ send }) => {
    await importAndConvert(send, 'url', { url: `${files.url}/redirect/2/files/places.geojson` }, undefined, { features: 25, layer: 'places' });
  });

  it('http: basic auth and a POST export', async ({ send }) => {
    await importAndConvert(
      send,
      'http',
      { url: `${files.url}/basic/files/places.geojson`, auth: 'basic', username: 'reader', password: SECRETS.password },
      undefined,
      { features: 25 },
    );
    await importAndConvert(
      send,
      'http',
      { url: `${files.url}/bearer/export`, method: 'POST', body: '{"count": 9}', auth: 'bearer', bearer_token: SECRETS.bearer },
      undefined,
      { features: 9, layer: 'export' },
    );
  });

  it.skipIf(skipWithoutPygeoapi)('ogcfeatures: a pygeoapi collection, read page by page', async ({ send }) => {
    await importAndConvert(send, 'ogcfeatures', { url: ogc!.url }, 'places', { features: 60, layer: 'places' });
  });

  it('stac: an asset of an item in a token-protected static catalog', async ({ send }) => {
    await importAndConvert(
      send,
      'stac',
      { url: catalog.url, token: SECRETS.token },
      { collection: 'parcels', item: 'parcels-2024', asset: 'archive' },
      { features: 12, layer: 'parcels' },
    );
  });

  it('featureserver: a paged layer (shorthand: the layer id)', async ({ send: call }) => {
    const { ws } = await importAndConvert(
      call,
      'featureserver',
      { url: arcgis.url, token: SECRETS.token },
      { layer: 0, where: "zone = 'residential'" },
      { features: 77, layer: 'Parcels' },
    );
    expect(ws.layers[0].crs).toBe('EPSG:2056');
    // a missing layer id is the spec's invalid_parameter, naming what to send
    const source = (
      await call('POST', '/api/v1/sources', { name: 'fs', type: 'featureserver', configuration: { url: arcgis.url, token: SECRETS.token } })
    ).json();
    const missing = await call('POST', '/api/v1/workspaces', { source_id: source.id });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error).toMatchObject({ code: 'invalid_parameter', details: { parameter: 'source_resource' } });
    // a plain string is the layer id
    const owners = await call('POST', '/api/v1/workspaces', { source_id: source.id, source_resource: '2' });
    expect(owners.statusCode, owners.body).toBe(201);
    expect(owners.json().layers[0]).toMatchObject({ name: 'Owners', feature_count: 5, has_geometry: false });
  });

  it('import failures: source_failed with the reason, upload_too_large while streaming, nothing kept', async ({ send: call }) => {
    const gone = (await call('POST', '/api/v1/sources', { name: 'gone', type: 'url', configuration: { url: `${files.url}/files/gone.geojson` } })).json();
    const notFound = await call('POST', '/api/v1/workspaces', { source_id: gone.id });
    expect(notFound.statusCode).toBe(422);
    expect(notFound.json().error).toMatchObject({ code: 'source_failed', details: { reason: 'not_found', retryable: false, http_status: 404 } });

    const wrong = (
      await call('POST', '/api/v1/sources', { name: 'wrong', type: 'featureserver', configuration: { url: arcgis.url, token: 'not-the-token' } })
    ).json();
    const denied = await call('POST', '/api/v1/workspaces', { source_id: wrong.id, source_resource: { layer: 1 } });
    expect(denied.statusCode, denied.body).toBe(422);
    expect(denied.json().error.details.reason).toBe('authentication_failed');
    expect(denied.body).not.toContain('not-the-token');

    const big = (
      await call('POST', '/api/v1/sources', { name: 'big', type: 'url', configuration: { url: `${files.url}/stream?bytes=${4 * 1024 * 1024}` } })
    ).json();
    const tooLarge = await call('POST', '/api/v1/workspaces', { source_id: big.id });
    expect(tooLarge.statusCode).toBe(400);
    expect(tooLarge.json().error).toMatchObject({ code: 'upload_too_large', details: { max_bytes: 1024 * 1024 } });
  });

  describe('webhook', () => {
    const convertedWorkspace = (api: ConnectorApi) => api.convertedUpload(path.join(dir, 'places.geojson'), 'GPKG', 'Zürich places.geojson');
    async function destination(call: Send, configuration: Record<string, unknown>) {
      const created = await call('POST', '/api/v1/destinations', { name: 'hook', type: 'webhook', configuration });
      expect(created.statusCode, created.body).toBe(201);
      noSecrets(created.body);
      return created.json().id as string;
    }
    const receiver = async (options: Parameters<typeof startWebhookReceiver>[0]) => {
      const r = await startWebhookReceiver(options);
      receivers.push(r);
      return r;
    };

    it('upload → convert → deliver: the receiver gets the converted file, signed', async ({ send: call, api }) => {
      const hook = await receiver({ secret: SECRETS.signing, bearer: SECRETS.bearer });
      const wsId = await convertedWorkspace(api);
      const dst = await destination(call, { url: hook.url, signing_secret: SECRETS.signing, bearer_token: SECRETS.bearer });
      const tested = await call('POST', `/api/v1/destinations/${dst}/test`);
      expect(tested.json()).toMatchObject({ ok: true });

      const delivered = await call('POST', `/api/v1/workspaces/${wsId}/deliver`, { destination_id: dst });
      expect(delivered.statusCode, delivered.body).toBe(200);
      noSecrets(delivered.body);
      const result = delivered.json();
      const download = await call('GET', `/api/v1/workspaces/${wsId}/download`);
      expect(result).toMatchObject({
        destination_id: dst,
        destination_type: 'webhook',
        target: { url: hook.url, http_status: 200 },
        format: 'GPKG',
        bytes_written: download.rawPayload.length,
      });

      const got = hook.received.filter((r) => r.headers['x-geoflow-event'] === 'delivery');
      expect(got).toHaveLength(1);
      expect(got[0]!.signatureValid).toBe(true);
      expect(got[0]!.body.equals(download.rawPayload)).toBe(true);
      expect(got[0]!.headers).toMatchObject({
        'x-geoflow-delivery': result.delivery_id,
        'x-geoflow-format': 'GPKG',
        'content-type': 'application/geopackage+sqlite3',
      });
      expect(decodeURIComponent(String(got[0]!.headers['x-geoflow-filename']))).toBe(result.filename);
      // and what arrived is the GeoPackage, whole
      const file = path.join(dir, 'received.gpkg');
      writeFileSync(file, got[0]!.body);
      const ds = gdal.open(file);
      expect(ds.layers.get(0).features.count()).toBe(25);
      ds.close();
    });

    it('a 5xx is retried with the same delivery id; a 4xx is delivery_failed at once', async ({ send: call, api }) => {
      const flaky = await receiver({ secret: SECRETS.signing, answers: [503] });
      const wsId = await convertedWorkspace(api);
      const dst = await destination(call, { url: flaky.url, signing_secret: SECRETS.signing });
      const delivered = await call('POST', `/api/v1/workspaces/${wsId}/deliver`, { destination_id: dst });
      expect(delivered.statusCode, delivered.body).toBe(200);
      expect(flaky.received.map((r) => [r.status, r.headers['x-geoflow-delivery']])).toEqual([
        [503, delivered.json().delivery_id],
        [200, delivered.json().delivery_id],
      ]);
      expect(flaky.accepted()).toHaveLength(1);

      const refusing = await receiver({ answers: [422, 422, 422] });
      const dst2 = await destination(call, { url: refusing.url, bearer_token: SECRETS.bearer });
      const failed = await call('POST', `/api/v1/workspaces/${wsId}/deliver`, { destination_id: dst2 });
      expect(failed.statusCode).toBe(422);
      expect(failed.json().error).toMatchObject({ code: 'delivery_failed', details: { reason: 'invalid_response', retryable: false, http_status: 422 } });
      expect(refusing.received).toHaveLength(1);
      noSecrets(failed.body);
    });
  });
});
