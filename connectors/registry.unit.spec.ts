import * as nodeModule from 'node:module';
import { describe, expect, it } from 'vitest';

/*
 * The registry's promise: importing it loads declarations only, and a type's behaviour module
 * (with its SDK) loads the first time that type is used. What the module runner imports from
 * node_modules goes through Node's own loader, so a resolve hook registered before the registry is
 * imported sees every package it pulls in; it writes each URL into shared memory (synchronously,
 * before the import goes on), where this spec reads them.
 */
const VENDORS: Record<string, string[]> = {
  postgis: ['pg'],
  mysql: ['mysql2'],
  sqlserver: ['tedious'],
  oracle: ['oracledb'],
  bigquery: ['@google-cloud/bigquery'],
  snowflake: ['snowflake-sdk'],
  s3: ['@aws-sdk/client-s3'],
  azureblob: ['@azure/storage-blob'],
  sftp: ['ssh2-sftp-client', 'ssh2'],
  gdrive: ['@googleapis/drive', 'google-auth-library'],
};
const sdks = [...new Set([...Object.values(VENDORS).flat(), 'gdal-async'])];

const memory = new SharedArrayBuffer(4 + (1 << 20));
const used = new Int32Array(memory, 0, 1);
const text = new Uint8Array(memory, 4);
const hook = `
let used, text;
export function initialize({ memory }) { used = new Int32Array(memory, 0, 1); text = new Uint8Array(memory, 4); }
export async function resolve(specifier, context, next) {
  const found = await next(specifier, context);
  const line = new TextEncoder().encode(found.url + '\\n');
  const at = Atomics.load(used, 0);
  if (at + line.length <= text.length) { text.set(line, at); Atomics.store(used, 0, at + line.length); }
  return found;
}`;
// module.register arrived in Node 20.6; package.json allows 20.3.
const register = (nodeModule as { register?: typeof nodeModule.register }).register;
register?.(`data:text/javascript,${encodeURIComponent(hook)}`, import.meta.url, { data: { memory } });

/** The vendor packages resolved since the hook was registered. */
function loadedSdks(): string[] {
  const urls = new TextDecoder().decode(text.slice(0, Atomics.load(used, 0))).split('\n');
  return sdks.filter((name) => urls.some((url) => url.includes(`/node_modules/${name}/`))).sort();
}

describe.skipIf(!register && 'node:module register() (Node 20.6 or later) is needed to watch what is imported')(
  'connector registry: declarations now, behaviour on first use',
  () => {
    it('imports no vendor SDK and no behaviour module', async () => {
      const registry = await import('./registry.js');
      expect(registry.connectors.length).toBeGreaterThan(20);
      // What the API builds from the registry right away needs declarations only.
      expect(registry.publicConnectorCatalog().find((c) => c.type === 'postgis')?.capabilities.discover).toBe(true);
      expect(registry.typesWithChangeCheck()).toContain('s3');
      expect(registry.loadedTypes()).toEqual([]);
      expect(loadedSdks()).toEqual([]);
    });

    it("loads one type's behaviour and its SDK, and only those, on first use", async () => {
      const registry = await import('./registry.js');
      const s3 = await registry.loadConnector('s3');
      expect(s3?.type).toBe('s3');
      expect(typeof s3?.destination?.deliver).toBe('function');
      expect(registry.loadedTypes()).toEqual(['s3']);
      expect(loadedSdks()).toEqual(VENDORS.s3);
      // Cached: the same module, and no other type loaded by asking again.
      expect(await registry.loadConnector('s3')).toBe(s3);
      expect(registry.loadedTypes()).toEqual(['s3']);
    });
  },
);
