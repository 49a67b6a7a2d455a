import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { bigQueryClient } from '../../connectors/bigquery/client.js';
import { bigquery } from '../../connectors/bigquery/index.js';
import { withSession } from '../../connectors/snowflake/client.js';
import { snowflake } from '../../connectors/snowflake/index.js';
import { bigQueryServerUnavailable, startBigQueryServer } from '../../devservers/bigquery/server.js';
import { fakesnowUnavailable, startFakesnow } from '../../devservers/fakesnow/server.js';
import { fixtureDir } from '../support/fixtures.js';
import { connectorContext, deliverInput } from './support.js';
import { sqlContractSuite, stationsGeoJson } from './sql-contract.js';

/*
 * The warehouses through /api/v1, with the real worker and Temporal: the SQL Destination contract
 * against BigQuery's REST stand-in (devservers/bigquery) and fakesnow (devservers/fakesnow). Both
 * are seeded with the stations by their connector's own delivery: neither takes SQL DDL with
 * geography literals the way the databases do.
 */
const stations = (dir: string) => ({ ...deliverInput(stationsGeoJson(dir), randomUUID()), format: 'GeoJSON' });

sqlContractSuite({
  type: 'bigquery',
  missing: bigQueryServerUnavailable(),
  // Its target takes write modes create, replace and append (connectors/bigquery/index.ts).
  noUpsert: 'the bigquery Destination has no write_mode upsert',
  async start() {
    const server = await startBigQueryServer();
    const configuration = {
      project_id: server.project,
      dataset: 'gis',
      location: 'EU',
      credentials_json: JSON.stringify(server.keys.writer),
      api_endpoint: server.endpoint,
    };
    await bigQueryClient(configuration).createDataset('gis', { location: 'EU' });
    await bigquery.destination!.deliver(configuration, { table: 'stations', write_mode: 'create' }, stations(fixtureDir()), connectorContext());
    const table = (name: string) => bigQueryClient(configuration).dataset('gis').table(name);
    return {
      configuration,
      // The keys' private parts, and the marker of any PEM key.
      secrets: [...Object.values(server.keys).map((key) => key.private_key.split('\n')[1]!), 'PRIVATE KEY'],
      // A key the server never issued.
      wrongCredentials: { ...configuration, credentials_json: JSON.stringify(server.keys.stranger) },
      target: (name, write_mode) => ({ table: name, write_mode }),
      tables: { places: 'places', parcels: 'parcels', job: 'job', upserted: 'upserted' },
      seeded: { resource: 'stations', query: "SELECT name, geom FROM gis.stations WHERE name <> 'Chur'", queryFeatures: 2 },
      async reader() {
        return { count: async (name) => Number((await table(name).getMetadata())[0].numRows), close: async () => undefined };
      },
      closed: (port) => ({ ...configuration, api_endpoint: `http://127.0.0.1:${port}` }),
      unsupported: {
        // A GEOGRAPHY column has no subtype: the extract declares its layer GEOMETRY (connectors/bigquery/extract.ts).
        geometryType: 'GEOGRAPHY declares no geometry subtype',
      },
      // @google-cloud/bigquery retries a refused connection until the deadline.
      closedMayTimeOut: true,
      checks: {
        async discovered({ send, destination }) {
          const tables = await send('GET', `/api/v1/destinations/${destination}/discover?schema=gis`);
          expect(tables.statusCode, tables.body).toBe(200);
          expect(tables.json().tables).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'stations', has_geometry: true })]));
        },
        async parcels(delivered) {
          // GEOGRAPHY is WGS 84: the Swiss parcels were reprojected, and the answer says so.
          expect(delivered.json().target.reprojected).toEqual({ from: 'EPSG:2056', to: 'EPSG:4326' });
        },
      },
      stop: () => server.stop(),
    };
  },
});

sqlContractSuite({
  type: 'snowflake',
  missing: fakesnowUnavailable(),
  // Its target takes write modes create, replace and append (connectors/snowflake/index.ts).
  noUpsert: 'the snowflake Destination has no write_mode upsert',
  async start() {
    const server = await startFakesnow();
    const configuration = {
      account: 'geoflow',
      username: 'loader',
      password: 'e2e-snowflake-password',
      database: 'GIS',
      schema: 'PUBLIC',
      access_url: server.accessUrl,
    };
    await snowflake.destination!.deliver(
      configuration,
      { table: 'STATIONS', write_mode: 'create', spatial_type: 'auto' },
      stations(fixtureDir()),
      connectorContext(),
    );
    return {
      configuration,
      secrets: [configuration.password],
      // fakesnow accepts any account, user and password: a refused login cannot be shown here.
      wrongCredentials: null,
      target: (table, write_mode) => ({ table, write_mode }),
      // Unquoted Snowflake names are upper case.
      tables: { places: 'PLACES', parcels: 'PARCELS', job: 'JOB', upserted: 'UPSERTED' },
      seeded: { resource: 'STATIONS', query: `SELECT "name", "geom" FROM STATIONS WHERE "name" <> 'Chur'`, queryFeatures: 2 },
      async reader() {
        return {
          count: (table) => withSession(configuration, connectorContext(), async (s) => Number((await s.query(`SELECT COUNT(*) AS N FROM "${table}"`))[0]!.N)),
          close: async () => undefined,
        };
      },
      closed: (port) => ({ ...configuration, access_url: `http://127.0.0.1:${port}` }),
      // snowflake-sdk retries a refused login until the deadline.
      closedMayTimeOut: true,
      unsupported: {
        // fakesnow keeps no SRID (and has no GEOGRAPHY type): the imported layer has no CRS to compare.
        crs: 'fakesnow keeps no SRID',
        // A GEOGRAPHY or GEOMETRY column has no subtype: the extract declares its layer GEOMETRY (connectors/snowflake/extract.ts).
        geometryType: 'GEOGRAPHY and GEOMETRY declare no subtype',
      },
      checks: {
        async discovered({ send, destination }) {
          const tables = await send('GET', `/api/v1/destinations/${destination}/discover?schema=PUBLIC`);
          expect(tables.statusCode, tables.body).toBe(200);
          expect(tables.json().tables).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'STATIONS', has_geometry: true })]));
        },
      },
      stop: () => server.stop(),
    };
  },
});
