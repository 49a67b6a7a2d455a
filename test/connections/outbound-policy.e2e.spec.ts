import { generateKeyPairSync } from 'node:crypto';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { bearer, type TestApp } from '../support/app.js';
import { adminUrl, skipWithoutDatabase } from '../support/database.js';
import { e2eTest } from '../support/e2e.js';
import { closedPort } from '../connectors/support.js';

/*
 * The outbound policy (connectors/shared/policy/egress.ts) through /api/v1, one connection test per
 * connector family and one through a redirect. Only loopback addresses are used: the servers
 * below count the connections they are sent, so "refused" means nothing reached them, and the
 * deny list names them (SVC_OUTBOUND_DENY). The metadata and link-local cases are refused before
 * any packet leaves, so they send no traffic either.
 */

/** A TCP server that counts the connections it accepts (and closes them). */
async function countingServer(): Promise<{ port: number; connections: () => number; close(): void }> {
  let count = 0;
  const server: Server = createServer((s) => {
    count++;
    s.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, connections: () => count, close: () => server.close() };
}

// The app's settings name the servers' ports, so its environment is read once they listen (below).
let settings: Record<string, string>;
const it = e2eTest({ scopes: ['sources:read', 'sources:write', 'destinations:read', 'destinations:write'], env: () => settings });

describe.skipIf(skipWithoutDatabase)('the outbound policy', () => {
  let sut: TestApp;
  let token: string;
  let open: Awaited<ReturnType<typeof countingServer>>;
  let closed: number;
  let denied: Awaited<ReturnType<typeof countingServer>>;
  let redirector: HttpServer;
  let redirectorPort: number;
  let apiPort: number;
  let temporalUi: Awaited<ReturnType<typeof countingServer>>;
  let temporalHttp: Awaited<ReturnType<typeof countingServer>>;
  const ownDatabasePort = Number(new URL(adminUrl ?? 'postgres://127.0.0.1:5432').port || 5432);

  beforeAll(async () => {
    open = await countingServer();
    denied = await countingServer();
    temporalUi = await countingServer();
    temporalHttp = await countingServer();
    closed = await closedPort();
    apiPort = await closedPort();
    // An allowed server that sends every request on to the denied one.
    redirector = createHttpServer((_request, response) => {
      response.writeHead(302, { location: `http://127.0.0.1:${denied.port}/data.geojson` }).end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    redirectorPort = (redirector.address() as { port: number }).port;
    settings = {
      // Not the test run's allowance for its cluster: this app's own database port is refused, as on a real install.
      SVC_OUTBOUND_ALLOW: '',
      SVC_OUTBOUND_DENY: `127.0.0.1:${open.port}, 127.0.0.1:${closed}, [::1]:${open.port}, 127.0.0.1:${denied.port}`,
      SVC_PORT: String(apiPort),
      // npm start serves Temporal's web UI here; it answers GETs about every Run without credentials.
      SVC_TEMPORAL_UI_URL: `http://127.0.0.1:${temporalUi.port}`,
      // Temporal's HTTP API beside its gRPC port (the test's Temporal is on 127.0.0.1): it lists,
      // starts, signals and terminates workflows for whoever asks.
      SVC_TEMPORAL_HTTP_PORT: String(temporalHttp.port),
    };
  });
  it.beforeAll(async ({ sut: theSut, token: theToken }) => {
    sut = theSut;
    token = theToken;
  });
  afterAll(async () => {
    open?.close();
    denied?.close();
    temporalUi?.close();
    temporalHttp?.close();
    redirector?.close();
  });

  const test = (kind: 'sources' | 'destinations', type: string, configuration: Record<string, unknown>) =>
    sut.app.inject({ method: 'POST', url: `/api/v1/${kind}/test`, headers: bearer(token), payload: { type, configuration } });

  /** A refusal: 403, naming the settings, and nothing reached the counting server. */
  function expectRefused(res: Awaited<ReturnType<typeof test>>) {
    expect(res.statusCode, res.body).toBe(403);
    const error = res.json().error;
    expect(error.code).toBe('forbidden');
    expect(error.message).toMatch(/outbound policy/);
    expect(error.message).toContain('SVC_OUTBOUND_ALLOW');
    expect(error.details).toMatchObject({ reason: 'refused_by_policy' });
    return error as { message: string; details: Record<string, unknown> };
  }

  it('HTTP family: a url test aimed at a denied port is a 403, the same whether the port is open or closed', async () => {
    const atOpen = expectRefused(await test('sources', 'url', { url: `http://127.0.0.1:${open.port}/data.geojson` }));
    const atClosed = expectRefused(await test('sources', 'url', { url: `http://127.0.0.1:${closed}/data.geojson` }));
    expect(atOpen.message.replaceAll(String(open.port), 'PORT')).toBe(atClosed.message.replaceAll(String(closed), 'PORT'));
    expect(atOpen.details).toEqual({ ...atClosed.details });
    // A host name is checked after resolution: localhost is 127.0.0.1 (or ::1), both denied here.
    expectRefused(await test('sources', 'url', { url: `http://localhost:${open.port}/data.geojson` }));
    expectRefused(await test('sources', 'stac', { url: `http://127.0.0.1:${open.port}/catalog.json` }));
    expectRefused(await test('destinations', 'webhook', { url: `http://127.0.0.1:${open.port}/hook` }));
    expect(open.connections()).toBe(0);
  });

  it('a redirect from an allowed server to a denied one is refused at the hop', async () => {
    expectRefused(await test('sources', 'url', { url: `http://127.0.0.1:${redirectorPort}/data.geojson` }));
    expectRefused(await test('sources', 'http', { url: `http://127.0.0.1:${redirectorPort}/export`, method: 'GET' }));
    expect(denied.connections()).toBe(0);
  });

  it('object stores: s3 and azureblob endpoints on a denied port are refused (through the SDKs)', async () => {
    expectRefused(await test('sources', 's3', { bucket: 'bucket', region: 'us-east-1', endpoint: `http://127.0.0.1:${open.port}`, force_path_style: true }));
    expectRefused(
      await test('sources', 'azureblob', { account_name: 'devstoreaccount1', container: 'ctr', endpoint: `http://127.0.0.1:${open.port}/devstoreaccount1` }),
    );
    expect(open.connections()).toBe(0);
  });

  it("databases and SFTP: mysql and sftp on a denied port, PostGIS at the service's own database (refused by default)", async () => {
    expectRefused(await test('sources', 'mysql', { host: '127.0.0.1', port: open.port, database: 'gis', username: 'u', password: 'p' }));
    expectRefused(await test('destinations', 'sftp', { host: '127.0.0.1', port: open.port, username: 'u', password: 'p' }));
    // Before the policy this answered authentication_failed: it had connected to the service's own PostgreSQL.
    const own = expectRefused(
      await test('sources', 'postgis', {
        host: '127.0.0.1',
        port: ownDatabasePort,
        database: 'postgres',
        username: 'nobody',
        password: 'p',
        ssl_mode: 'disable',
      }),
    );
    expect(own.message).toContain("service's own PostgreSQL");
    expect(open.connections()).toBe(0);
  });

  it('sqlserver and oracle: a denied port is refused before tedious or oracledb connect (descriptor and Easy Connect alike)', async () => {
    expectRefused(await test('sources', 'sqlserver', { host: '127.0.0.1', port: open.port, database: 'gis', username: 'u', password: 'p', encrypt: false }));
    expectRefused(await test('destinations', 'oracle', { host: '127.0.0.1', port: open.port, service_name: 'GIS', username: 'u', password: 'p' }));
    expectRefused(await test('sources', 'oracle', { connect_string: `127.0.0.1:${open.port}/GIS`, username: 'u', password: 'p' }));
    expect(open.connections()).toBe(0);
  });

  /** A service-account key file as Google issues them (signed locally: no token request is needed). */
  const serviceAccountKey = () => {
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    return JSON.stringify({ type: 'service_account', client_email: 'loader@geoflow.iam.gserviceaccount.com', private_key: privateKey, private_key_id: 'k1' });
  };

  it('bigquery: an api_endpoint on a denied port is refused (through @google-cloud/bigquery)', async () => {
    const configuration = { project_id: 'geoflow', dataset: 'gis', credentials_json: serviceAccountKey(), api_endpoint: `http://127.0.0.1:${open.port}` };
    expectRefused(await test('sources', 'bigquery', configuration));
    expectRefused(await test('destinations', 'bigquery', configuration));
    expect(open.connections()).toBe(0);
  });

  it("gdrive: a denied api_url (a service account's first request) and a denied token_url (OAuth's) are refused", async () => {
    const at = `http://127.0.0.1:${open.port}`;
    expectRefused(
      await test('sources', 'gdrive', { credentials_json: serviceAccountKey(), folder_id: '1AbCdEfGhIjKlMnOp', api_url: at, token_url: `${at}/token` }),
    );
    // The API is allowed here: the refusal is the token endpoint's.
    expectRefused(
      await test('destinations', 'gdrive', {
        client_id: 'c',
        client_secret: 's',
        refresh_token: 'r',
        api_url: `http://127.0.0.1:${redirectorPort}`,
        token_url: `${at}/token`,
      }),
    );
    expect(open.connections()).toBe(0);
  });

  it('snowflake: an access_url on a denied port is refused (through snowflake-sdk)', async () => {
    expectRefused(
      await test('sources', 'snowflake', {
        account: 'geoflow',
        username: 'loader',
        password: 'p',
        database: 'GIS',
        schema: 'PUBLIC',
        access_url: `http://127.0.0.1:${open.port}`,
      }),
    );
    expect(open.connections()).toBe(0);
  });

  it("by default: the service's own API port, link-local and the cloud metadata addresses, however they are spelled", async () => {
    expectRefused(await test('sources', 'url', { url: `http://127.0.0.1:${apiPort}/api/v1/system` }));
    expectRefused(await test('sources', 'url', { url: `http://[::1]:${apiPort}/api/v1/system` }));
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://0xa9fea9fe/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://169.254.10.1/',
      'http://[fe80::1]/',
    ]) {
      expectRefused(await test('sources', 'url', { url }));
    }
    expectRefused(
      await test('destinations', 'postgis', { host: '169.254.169.254', port: 5432, database: 'd', username: 'u', password: 'p', ssl_mode: 'disable' }),
    );
  });

  it("by default: the Temporal web UI the service links to (SVC_TEMPORAL_UI_URL), which lists every user's Runs to any GET", async () => {
    const ui = expectRefused(await test('sources', 'url', { url: `http://127.0.0.1:${temporalUi.port}/api/v1/namespaces/default/workflows` }));
    expect(ui.message).toContain("service's own Temporal UI");
    expectRefused(await test('sources', 'url', { url: `http://localhost:${temporalUi.port}/api/v1/namespaces/default/workflows` }));
    expect(temporalUi.connections()).toBe(0);
  });

  it("by default: Temporal's HTTP API (SVC_TEMPORAL_HTTP_PORT on Temporal's host), where a POST can start or terminate any workflow", async () => {
    const terminate = { url: `http://127.0.0.1:${temporalHttp.port}/api/v1/namespaces/default/workflows/x/terminate`, method: 'POST', body: '{}' };
    const refused = expectRefused(await test('sources', 'http', terminate));
    expect(refused.message).toContain("service's own Temporal HTTP API");
    expectRefused(await test('sources', 'url', { url: `http://localhost:${temporalHttp.port}/api/v1/namespaces/default/workflows` }));
    expect(temporalHttp.connections()).toBe(0);
  });
});
