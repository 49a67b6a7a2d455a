import { mkdirSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Koop from '@koopjs/koop-core';
import provider from '@koopjs/provider-file-geojson';

/*
 * Koop 10.4 (@koopjs/koop-core 10.4.19 with @koopjs/output-geoservices 8.1.25, Esri's own
 * open-source FeatureServer implementation) serving GeoJSON files through
 * @koopjs/provider-file-geojson 2.2.0: a real FeatureServer for the featureserver connector's
 * reads. Each `<name>.geojson` in the data folder is the service
 * /file-geojson/rest/services/<name>/FeatureServer (one layer, 0); a top-level "metadata" object
 * in the file sets Koop's layer metadata (idField, maxRecordCount, name). What Koop lacks (tokens,
 * ArcGIS error objects, MapServer, services without pagination) stays with the stand-in in
 * test/servers/featureserver.
 */

export const KOOP_VERSION = '10.4.19';

export interface KoopServer {
  /** The service URL of a file (…/FeatureServer). */
  serviceUrl(name: string): string;
  /** Writes a GeoJSON file Koop serves as a service named `name`. */
  addGeoJson(name: string, collection: Record<string, unknown>): void;
  /** How long Koop took to start, in ms (printed in the test log). */
  startupMs: number;
  stop(): Promise<void>;
}

export async function startKoop(dataDir: string): Promise<KoopServer> {
  const started = performance.now();
  mkdirSync(dataDir, { recursive: true });
  // Koop's own logger writes every request at info level: keep the test log for failures.
  const koop = new Koop({ logLevel: 'error' });
  // The provider joins its dataDir to the working directory: hand it a relative path.
  koop.register(provider, { dataDir: path.relative(process.cwd(), dataDir) });
  const server: Server = await new Promise((resolve) => {
    const s = koop.server.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    serviceUrl: (name) => `http://127.0.0.1:${port}/file-geojson/rest/services/${encodeURIComponent(name)}/FeatureServer`,
    addGeoJson(name, collection) {
      writeFileSync(path.join(dataDir, `${name}.geojson`), JSON.stringify(collection));
    },
    startupMs: Math.round(performance.now() - started),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
