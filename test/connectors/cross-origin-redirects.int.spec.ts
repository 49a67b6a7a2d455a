import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorByType } from '../../connectors/registry.js';
import type { ConnectorContext } from '../../connectors/types.js';
import { startCrossOriginRedirect, type CrossOriginRedirect } from '../servers/http/redirects.js';
import { connectorContext } from './support.js';

/*
 * Issue 32, finding 5: credentials stay with the origin they were configured for. Every connector
 * that signs in or sends a secret over HTTP is pointed at a server that answers each request with
 * `307 Location: <another port of loopback>/<same path>` (and, in a second round, 302 and 308); the
 * other port records everything it receives. Whatever the connector then does (follow without
 * credentials, or refuse with an error), no planted secret, no Authorization, Cookie or Esri
 * token header, and no sign-in body reaches the other origin. Before this issue the Snowflake
 * login body with its password, the Mergin Maps and QFieldCloud passwords, Drive's
 * client_secret and refresh_token, and BigQuery's bearer token went there.
 */

const credentialHeaders = ['authorization', 'proxy-authorization', 'cookie', 'x-esri-authorization', 'x-api-key', 'x-ckan-api-key', 'x-amz-security-token'];

const plant = (what: string) => `planted-${what}-${randomBytes(6).toString('hex')}`;

const serviceAccount = (secret: string) => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return JSON.stringify({
    type: 'service_account',
    client_email: `${secret}@geoflow-test.iam.gserviceaccount.com`,
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    private_key_id: secret,
  });
};

interface Case {
  name: string;
  type: string;
  /** The configuration, pointed at `url` (the redirecting server), with its secrets planted. */
  configuration(url: string, secrets: (field: string) => string): Record<string, unknown>;
  /** What to call besides the connection test (a read, a browse …). */
  also?(config: any, ctx: ConnectorContext): Promise<unknown>;
}

const cases: Case[] = [
  {
    name: 'http, basic auth',
    type: 'http',
    configuration: (url, s) => ({ url: `${url}/data.geojson`, auth: 'basic', username: 'reader', password: s('password') }),
  },
  { name: 'http, bearer', type: 'http', configuration: (url, s) => ({ url: `${url}/data.geojson`, auth: 'bearer', bearer_token: s('bearer_token') }) },
  {
    name: 'http, API key header, POST with a body',
    type: 'http',
    configuration: (url, s) => ({ url: `${url}/export`, method: 'POST', body: '{"layer":"roads"}', api_key_header: 'X-Api-Key', api_key: s('api_key') }),
    also: (c, ctx) => connectorByType('http')!.source!.extract(c, undefined, ctx, {}),
  },
  {
    name: 'webhook',
    type: 'webhook',
    configuration: (url, s) => ({ url: `${url}/hook`, bearer_token: s('bearer_token'), signing_secret: s('signing_secret') }),
  },
  { name: 'ogcfeatures', type: 'ogcfeatures', configuration: (url, s) => ({ url: `${url}/ogc`, api_key: s('api_key'), api_key_header: 'X-Api-Key' }) },
  { name: 'stac', type: 'stac', configuration: (url, s) => ({ url: `${url}/catalog.json`, token: s('token') }) },
  {
    name: 'featureserver',
    type: 'featureserver',
    configuration: (url, s) => ({ url: `${url}/arcgis/rest/services/Parcels/FeatureServer`, token: s('token') }),
  },
  {
    name: 'geoserver',
    type: 'geoserver',
    configuration: (url, s) => ({ url: `${url}/geoserver`, username: 'admin', password: s('password'), workspace: 'topp' }),
  },
  { name: 'geonode, password', type: 'geonode', configuration: (url, s) => ({ url, username: 'editor', password: s('password') }) },
  { name: 'geonode, API key', type: 'geonode', configuration: (url, s) => ({ url, username: 'editor', api_key: s('api_key') }) },
  { name: 'ckan', type: 'ckan', configuration: (url, s) => ({ url, api_key: s('api_key') }) },
  { name: 'hub, API key', type: 'hub', configuration: (url, s) => ({ url: `${url}/portal`, api_key: s('api_key') }) },
  { name: 'hub, username and password', type: 'hub', configuration: (url, s) => ({ url: `${url}/portal`, username: 'gis', password: s('password') }) },
  { name: 'qfieldcloud, password', type: 'qfieldcloud', configuration: (url, s) => ({ url, username: 'surveyor', password: s('password') }) },
  { name: 'qfieldcloud, token', type: 'qfieldcloud', configuration: (url, s) => ({ url, token: s('token') }) },
  { name: 'merginmaps', type: 'merginmaps', configuration: (url, s) => ({ url, username: 'surveyor', password: s('password'), workspace: 'team' }) },
  {
    name: 'gdrive, OAuth',
    type: 'gdrive',
    configuration: (url, s) => ({
      client_id: s('client_id'),
      client_secret: s('client_secret'),
      refresh_token: s('refresh_token'),
      token_url: `${url}/token`,
      api_url: `${url}/`,
    }),
  },
  {
    name: 'gdrive, service account',
    type: 'gdrive',
    configuration: (url, s) => ({ credentials_json: serviceAccount(s('credentials_json')), api_url: `${url}/` }),
  },
  {
    name: 'bigquery',
    type: 'bigquery',
    configuration: (url, s) => ({ project_id: 'geoflow-test', dataset: 'gis', credentials_json: serviceAccount(s('credentials_json')), api_endpoint: url }),
  },
  {
    name: 'snowflake',
    type: 'snowflake',
    configuration: (url, s) => ({ account: 'acme', username: 'loader', password: s('password'), database: 'GIS', schema: 'PUBLIC', access_url: url }),
  },
  {
    name: 's3',
    type: 's3',
    configuration: (url, s) => ({
      bucket: 'exports',
      region: 'us-east-1',
      endpoint: url,
      force_path_style: true,
      access_key: 'AKIAPLANTED',
      secret_key: s('secret_key'),
      session_token: s('session_token'),
    }),
  },
  {
    name: 'azureblob',
    type: 'azureblob',
    configuration: (url, s) => ({
      account_name: 'devstoreaccount1',
      container: 'exports',
      endpoint: `${url}/devstoreaccount1`,
      account_key: Buffer.from(s('account_key')).toString('base64'),
    }),
  },
  {
    name: 'azureblob, SAS',
    type: 'azureblob',
    configuration: (url, s) => ({
      account_name: 'devstoreaccount1',
      container: 'exports',
      endpoint: `${url}/devstoreaccount1`,
      sas_token: `sv=2022-11-02&sig=${s('sas_token')}`,
    }),
  },
];

/** What the other origin saw, with Basic credentials decoded (a password does not appear in them as sent). */
function seenText(redirect: CrossOriginRedirect): string {
  return redirect.received
    .map((r) => {
      const auth = String(r.headers.authorization ?? '');
      const basic = /^basic\s+(.+)$/i.exec(auth);
      return `${r.method} ${decodeURIComponent(r.path)}\n${JSON.stringify(r.headers)}\n${r.body}\n${basic ? Buffer.from(basic[1]!, 'base64').toString('utf8') : ''}`;
    })
    .join('\n');
}

for (const status of [307, 308, 302]) {
  describe(`a ${status} to another origin carries no credential, for every connector that signs in`, () => {
    let redirect: CrossOriginRedirect;
    beforeAll(async () => {
      redirect = await startCrossOriginRedirect({ status });
    });
    afterAll(async () => {
      await redirect?.stop();
    });

    for (const c of cases) {
      it(c.name, async () => {
        const connector = connectorByType(c.type)!;
        const planted: string[] = [];
        const secrets = (field: string) => {
          const value = plant(`${c.type}-${field}`);
          planted.push(value);
          return value;
        };
        const config = connector.configuration.parse(c.configuration(redirect.url, secrets));
        const before = redirect.received.length;
        const ctx = () => connectorContext({ signal: AbortSignal.timeout(20_000) });
        const tested = await connector.test!(config as never, ctx());
        // A failed connection test, whatever it says (refused redirect, 401 from the other origin …), never with a secret in it.
        expect(tested.ok, JSON.stringify(tested)).toBe(false);
        await c.also?.(config, ctx()).catch(() => undefined);
        const arrived = redirect.received.slice(before);
        const text = seenText({ ...redirect, received: arrived });
        for (const secret of planted) expect(text, `${secret} reached ${redirect.elsewhere}`).not.toContain(secret);
        for (const r of arrived) for (const h of credentialHeaders) expect(r.headers[h], `${h} on ${r.method} ${r.path}`).toBeUndefined();
        // What came of it is said without the secret, too.
        for (const secret of planted) expect(JSON.stringify(tested)).not.toContain(secret);
      }, 30_000);
    }
  });
}
