import pg from 'pg';
import { expect } from 'vitest';
import { skipWithoutDatabase } from '../support/database.js';
import { createPostgisDatabase } from '../support/postgis.js';
import { sqlContractSuite } from './sql-contract.js';

/** PostGIS Sources and Destinations through /api/v1, with the real worker and Temporal: the SQL Destination contract and PostGIS's own checks. */
sqlContractSuite({
  type: 'postgis',
  missing: skipWithoutDatabase,
  async start() {
    const db = await createPostgisDatabase();
    await db.sql(`CREATE TABLE public.stations (id serial PRIMARY KEY, name text, geom geometry(Point, 4326));
      ALTER TABLE public.stations OWNER TO ${db.config.username};
      INSERT INTO public.stations (name, geom) VALUES ('Bern', ST_SetSRID(ST_MakePoint(7.44, 46.95), 4326)), ('Chur', ST_SetSRID(ST_MakePoint(9.53, 46.85), 4326)), ('Genève', ST_SetSRID(ST_MakePoint(6.14, 46.2), 4326));`);
    return {
      configuration: db.config,
      secrets: [db.config.password],
      wrongCredentials: { ...db.config, password: 'wrong' },
      target: (table, write_mode) => ({ table, write_mode }),
      // A table name that is not ASCII, as given.
      tables: { places: 'places', parcels: 'Flurstücke', job: 'job', upserted: 'upserted' },
      seeded: { resource: { schema: 'public', table: 'stations' }, query: "SELECT name, geom FROM public.stations WHERE name <> 'Chur'", queryFeatures: 2 },
      async reader() {
        // A reader in its own connection, as a dashboard would be.
        const reader = new pg.Client({
          host: db.config.host,
          port: db.config.port,
          database: db.config.database,
          user: db.config.username,
          password: db.config.password,
        });
        await reader.connect();
        return {
          count: async (table) => Number((await reader.query<{ n: string }>(`SELECT count(*) AS n FROM public."${table}"`)).rows[0]!.n),
          close: () => reader.end(),
        };
      },
      checks: {
        async discovered({ send, destination, tested, schemas }) {
          expect(tested.json()).toMatchObject({ tried: { database: db.config.database } });
          expect(schemas.json()).toMatchObject({ host: db.config.host, database: db.config.database, schemas: expect.arrayContaining(['public']) });
          const missing = await send('GET', `/api/v1/destinations/${destination}/discover?schema=nowhere`);
          expect(missing.statusCode).toBe(422);
          expect(missing.json().error).toMatchObject({ code: 'postgis_failed', details: { reason: 'not_found' } });
          expect(missing.body).not.toContain(db.config.password);
        },
        async imported({ send, source, workspace }) {
          expect(workspace).toMatchObject({ status: 'inspected', filename: 'stations.gpkg', driver: 'GPKG' });
          expect(workspace.layers[0]).toMatchObject({ name: 'stations' });
          const shorthand = await send('POST', '/api/v1/workspaces', { source_id: source, source_resource: 'stations' });
          expect(shorthand.statusCode, shorthand.body).toBe(201);
          const missing = await send('POST', '/api/v1/workspaces', { source_id: source, source_resource: 'no_such_table' });
          expect(missing.statusCode).toBe(422);
          expect(missing.json().error).toMatchObject({ code: 'source_failed', details: { reason: 'not_found', retryable: false } });
          const noSelector = await send('POST', '/api/v1/workspaces', { source_id: source });
          expect(noSelector.statusCode).toBe(400);
        },
        async created(created) {
          expect(created.json()).toMatchObject({ target: { schema: 'public', table: 'places', write_mode: 'create' } });
        },
        async replaced(seen) {
          // Both whole tables were seen while the reader polled.
          expect([...seen.keys()].sort((a, b) => a - b)).toEqual([12, 20_000]);
          expect([...seen.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(10);
          const [geometry] = await db.sql<{ type: string; srid: number }>("SELECT type, srid FROM geometry_columns WHERE f_table_name = 'places'");
          expect(geometry).toEqual({ type: 'POINT', srid: 4326 });
        },
        async parcels() {
          // Mixed polygons arrive as MULTIPOLYGON in their CRS, with field names and text as given.
          const [geometry] = await db.sql<{ type: string; srid: number }>("SELECT type, srid FROM geometry_columns WHERE f_table_name = 'Flurstücke'");
          expect(geometry).toEqual({ type: 'MULTIPOLYGON', srid: 2056 });
          const rows = await db.sql<{ parcel_identifier_long_name: string; owner: string }>(
            'SELECT parcel_identifier_long_name, owner FROM public."Flurstücke" ORDER BY 1',
          );
          expect(rows).toEqual([
            { parcel_identifier_long_name: 'A-1', owner: 'Müller' },
            { parcel_identifier_long_name: 'B-2', owner: 'Løvland' },
          ]);
        },
      },
      stop: () => db.drop(),
    };
  },
  closed: (port) => ({ host: '127.0.0.1', port, database: 'gis', username: 'loader', password: 'contract-secret-password', ssl_mode: 'disable' }),
});
