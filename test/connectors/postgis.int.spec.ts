import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { postgis } from '../../connectors/postgis/index.js';
import { closeIdle, idleCount, poolLimits } from '../../connectors/postgis/pool.js';
import { stagingNames } from '../../connectors/shared/sql/sql-delivery.js';
import { inProcessLimits, translatedHere } from '../../connectors/shared/files/translate-here.js';
import { closedPort, connectorContext, expectConnectorError, silentServer, stallingPgProxy } from './support.js';
import { skipWithoutDatabase } from '../support/database.js';
import {
  boroughsShapefileZip,
  fixtureDir,
  layerFromWktCsv,
  constantGeoTiff,
  manyPointsGpkg,
  mixedPolygonsGeoJson,
  pointsGeoJson,
  zippedShapefile,
} from '../support/fixtures.js';
import { createPostgisDatabase, type PostgisDatabase, untilStagingTable } from '../support/postgis.js';
import { geoJsonFile, layerInput as deliverInput, readLayer as read } from './sql-fixtures.js';

type PostgisTarget = Parameters<NonNullable<typeof postgis.destination>['deliver']>[1];

/** The postgis connector against the suite's real PostgreSQL 15 + PostGIS 3. */
describe.skipIf(skipWithoutDatabase)('postgis connector', () => {
  let db: PostgisDatabase;
  let dir: string;

  /** A delivery of `file` to `target` in the suite's database (deliverInput's options after the file). */
  const deliverTo = (target: PostgisTarget, ...input: Parameters<typeof deliverInput>) =>
    postgis.destination!.deliver(db.config, target, deliverInput(...input), connectorContext());

  beforeAll(async () => {
    db = await createPostgisDatabase();
    dir = fixtureDir();
    await db.sql(`
      CREATE SCHEMA "Bäume";
      CREATE TABLE "Bäume"."Parzellen Ü" (id serial PRIMARY KEY, "Name" text, "größe" numeric, updated integer NOT NULL DEFAULT 0, geom geometry(MultiPolygon, 2056));
      INSERT INTO "Bäume"."Parzellen Ü" ("Name", "größe", updated, geom) VALUES
        ('Zürich', 12.5, 1, ST_Multi(ST_GeomFromText('POLYGON((2600000 1200000,2600100 1200000,2600100 1200100,2600000 1200000))', 2056))),
        ('Genève', 3, 2, ST_Multi(ST_GeomFromText('POLYGON((2500000 1100000,2500100 1100000,2500100 1100100,2500000 1100000))', 2056)));
      CREATE VIEW "Bäume".punkte AS SELECT id, ST_Centroid(geom)::geometry(Point, 2056) AS geom FROM "Bäume"."Parzellen Ü";
      CREATE TABLE "Bäume".plain (a int);
      ALTER SCHEMA "Bäume" OWNER TO ${db.config.username};
      ALTER TABLE "Bäume"."Parzellen Ü" OWNER TO ${db.config.username};
      ALTER VIEW "Bäume".punkte OWNER TO ${db.config.username};
      ALTER TABLE "Bäume".plain OWNER TO ${db.config.username};
    `);
  });
  afterAll(async () => {
    await db?.drop();
  });

  describe('test', () => {
    it('connects and names the server and PostGIS versions', async () => {
      const r = await postgis.test!(db.config, connectorContext());
      expect(r).toMatchObject({ ok: true, status: 'ok', tried: { host: db.config.host, port: db.config.port, database: db.config.database, tls: false } });
      expect(r.message).toMatch(/PostgreSQL 15.*PostGIS 3/);
      expect(JSON.stringify(r)).not.toContain(db.config.password);
    });

    it('classifies a wrong password, a missing database, a refused CONNECT, TLS, a closed port and a silent server', async () => {
      const ctx = () => connectorContext();
      const wrong = await postgis.test!({ ...db.config, password: 'not-the-password' }, ctx());
      expect(wrong).toMatchObject({ ok: false, status: 'authentication_failed' });
      expect(JSON.stringify(wrong)).not.toContain('not-the-password');
      expect((await postgis.test!({ ...db.config, database: `${db.config.database}_missing` }, ctx())).status).toBe('not_found');

      await db.sql(`CREATE DATABASE ${db.config.database}_closed`);
      await db.sql(`REVOKE CONNECT ON DATABASE ${db.config.database}_closed FROM PUBLIC`);
      try {
        expect((await postgis.test!({ ...db.config, database: `${db.config.database}_closed` }, ctx())).status).toBe('permission_denied');
      } finally {
        await db.sql(`DROP DATABASE ${db.config.database}_closed`);
      }

      // The suite's cluster has no TLS: require must fail, prefer falls back to plain.
      expect((await postgis.test!({ ...db.config, ssl_mode: 'require' }, ctx())).status).toBe('tls_error');
      expect((await postgis.test!({ ...db.config, ssl_mode: 'prefer' }, ctx())).status).toBe('ok');

      expect((await postgis.test!({ ...db.config, port: await closedPort() }, ctx())).status).toBe('unreachable');

      const silent = await silentServer();
      try {
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 1000);
        const hung = await postgis.test!({ ...db.config, port: silent.port }, connectorContext({ signal: controller.signal }));
        expect(hung).toMatchObject({ ok: false, status: 'timeout', tried: { port: silent.port } });
      } finally {
        silent.close();
      }
    });
  });

  describe('discover', () => {
    it('lists schemas, then the tables and views of one with their geometry', async () => {
      const top = await postgis.discover!(db.config, {}, connectorContext());
      expect(top).toMatchObject({ host: db.config.host, database: db.config.database });
      expect(top.schemas).toEqual(expect.arrayContaining(['Bäume', 'public']));
      expect(top.schemas).not.toContain('pg_catalog');
      expect(top).not.toHaveProperty('tables');

      const one = await postgis.discover!(db.config, { schema: 'Bäume' }, connectorContext());
      expect(one.schema).toBe('Bäume');
      expect(one.tables).toEqual([
        { schema: 'Bäume', name: 'Parzellen Ü', has_geometry: true, geometry_type: 'MULTIPOLYGON' },
        { schema: 'Bäume', name: 'plain', has_geometry: false, geometry_type: null },
        { schema: 'Bäume', name: 'punkte', has_geometry: true, geometry_type: 'POINT' },
      ]);
      // PostGIS's own tables and views (spatial_ref_sys, geometry_columns …) are not the user's data
      const pub = await postgis.discover!(db.config, { schema: 'public' }, connectorContext());
      expect(pub.tables!.map((t) => t.name)).not.toContain('spatial_ref_sys');
      expect(pub.tables!.map((t) => t.name)).not.toContain('geometry_columns');
    });

    it('answers not_found for a missing schema', async () => {
      const e = await expectConnectorError(postgis.discover!(db.config, { schema: 'nowhere' }, connectorContext()), 'not_found');
      expect(e.message).toContain('nowhere');
    });
  });

  describe('extract', () => {
    it('reads a table into a GeoPackage, keeping names, geometry type, CRS and non-ASCII text', async () => {
      const ctx = connectorContext();
      const r = await postgis.source!.extract(db.config, { schema: 'Bäume', table: 'Parzellen Ü' }, ctx, {});
      expect(r).toMatchObject({ filename: 'Parzellen Ü.gpkg', features: 2 });
      expect(r.file.startsWith(ctx.workDir)).toBe(true);
      expect(r.sync).toBeUndefined();
      const got = await read(r.file);
      expect(got).toMatchObject({ driver: 'GPKG', name: 'Parzellen Ü', geomType: 'Multi Polygon', srs: '2056' });
      expect(got.fields).toEqual(['id', 'Name', 'größe', 'updated']);
      expect(got.rows.map((row) => row.Name).sort()).toEqual(['Genève', 'Zürich']);
    });

    it('reads a query; a failing or writing query is classified, and the session cannot write', async () => {
      const r = await postgis.source!.extract(
        db.config,
        { query: 'SELECT "Name", geom -- the big ones\nFROM "Bäume"."Parzellen Ü" WHERE "größe" > 10;\n' },
        connectorContext(),
        {},
      );
      expect(r).toMatchObject({ filename: 'query.gpkg', features: 1 });
      expect((await read(r.file)).rows[0]!.Name).toBe('Zürich');

      await expectConnectorError(postgis.source!.extract(db.config, { query: 'SELECT * FROM nowhere' }, connectorContext(), {}), 'not_found');
      await expectConnectorError(postgis.source!.extract(db.config, { query: 'SELEKT 1' }, connectorContext(), {}), 'invalid_data');
      await expectConnectorError(
        postgis.source!.extract(
          db.config,
          { query: 'WITH gone AS (DELETE FROM "Bäume"."Parzellen Ü" RETURNING *) SELECT * FROM gone' },
          connectorContext(),
          {},
        ),
        'invalid_data',
      );
      // A write that a subquery allows is stopped by the read-only session.
      await expectConnectorError(
        postgis.source!.extract(db.config, { query: `SELECT nextval('"Bäume"."Parzellen Ü_id_seq"') AS n` }, connectorContext(), {}),
        'permission_denied',
      );
      expect((await db.sql<{ n: string }>('SELECT count(*) AS n FROM "Bäume"."Parzellen Ü"'))[0]!.n).toBe('2');
    });

    it('a query that closes its subquery and commits its way out of the read-only transaction is one statement too many (issue 32)', async () => {
      const escapes = [
        'SELECT 1 AS x) AS a; COMMIT; CREATE TABLE "Bäume".escaped (x int); SELECT * FROM (SELECT 1 AS y',
        'SELECT 1 AS x) AS a; COMMIT; DELETE FROM "Bäume"."Parzellen Ü"; SELECT * FROM (SELECT 1 AS y',
      ];
      for (const query of escapes) {
        const attempt = postgis.source!.extract(db.config, { query }, connectorContext(), {});
        await attempt.catch(() => undefined);
        expect((await db.sql<{ n: string }>(`SELECT count(*) AS n FROM pg_tables WHERE tablename = 'escaped'`))[0]!.n, query).toBe('0');
        expect((await db.sql<{ n: string }>('SELECT count(*) AS n FROM "Bäume"."Parzellen Ü"'))[0]!.n, query).toBe('2');
        const error = await expectConnectorError(attempt, 'invalid_data');
        expect(error.message).toContain('one SELECT statement');
      }
    });

    it('reads an empty table and a table with two geometry columns (the first one is kept)', async () => {
      await db.sql(`CREATE TABLE public.empty_one (id int, geom geometry(Point, 4326)); ALTER TABLE public.empty_one OWNER TO ${db.config.username};
        CREATE TABLE public.two_geoms (id int, area geometry(Polygon, 2056), centre geometry(Point, 2056)); ALTER TABLE public.two_geoms OWNER TO ${db.config.username};
        INSERT INTO public.two_geoms VALUES (1, ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))', 2056), ST_GeomFromText('POINT(0.5 0.3)', 2056));`);
      const empty = await postgis.source!.extract(db.config, { schema: 'public', table: 'empty_one' }, connectorContext(), {});
      expect(empty.features).toBe(0);
      expect(await read(empty.file)).toMatchObject({ geomType: 'Point', srs: '4326', rows: [] });
      const two = await postgis.source!.extract(db.config, { schema: 'public', table: 'two_geoms' }, connectorContext(), {});
      expect(two.features).toBe(1);
      expect(await read(two.file)).toMatchObject({ geomType: 'Polygon', srs: '2056' });
    });

    it('answers not_found for a missing table and permission_denied for one it may not read', async () => {
      await expectConnectorError(postgis.source!.extract(db.config, { schema: 'public', table: 'missing' }, connectorContext(), {}), 'not_found');
      await db.sql('CREATE TABLE public.secret_table (a int)');
      await expectConnectorError(postgis.source!.extract(db.config, { schema: 'public', table: 'secret_table' }, connectorContext(), {}), 'permission_denied');
    });

    it('reads incrementally with cursor_column: new rows only, then unchanged', async () => {
      await db.sql(`CREATE TABLE public.events (id serial PRIMARY KEY, seen_at timestamptz NOT NULL, label text, geom geometry(Point, 4326));
        ALTER TABLE public.events OWNER TO ${db.config.username};
        INSERT INTO public.events (seen_at, label, geom) VALUES ('2024-01-01T10:00:00Z', 'a', ST_SetSRID(ST_MakePoint(7, 46), 4326)), ('2024-01-02T10:00:00Z', 'b', ST_SetSRID(ST_MakePoint(8, 47), 4326));`);
      const resource = { schema: 'public', table: 'events', cursor_column: 'seen_at' };
      const first = await postgis.source!.extract(db.config, resource, connectorContext(), { sync: null });
      expect(first.features).toBe(2);
      expect(first.sync?.cursor).toMatchObject({ column: 'seen_at', value: expect.stringContaining('2024-01-02') });

      await db.sql(`INSERT INTO public.events (seen_at, label, geom) VALUES ('2024-01-03T10:00:00Z', 'c''s', ST_SetSRID(ST_MakePoint(9, 48), 4326))`);
      const second = await postgis.source!.extract(db.config, resource, connectorContext(), { sync: first.sync! });
      expect(second.features).toBe(1);
      expect((await read(second.file)).rows.map((row) => row.label)).toEqual(["c's"]);
      expect(second.sync?.cursor).toMatchObject({ value: expect.stringContaining('2024-01-03') });

      const third = await postgis.source!.extract(db.config, resource, connectorContext(), { sync: second.sync! });
      expect(third).toMatchObject({ unchanged: true, features: 0 });
      expect(third.sync).toEqual(second.sync);
    });

    it('stops at the size limit while writing (too_large)', async () => {
      await db.sql(`CREATE TABLE public.big AS SELECT i AS id, repeat('x', 200) AS filler, ST_SetSRID(ST_MakePoint(i % 180, (i % 90)), 4326)::geometry(Point, 4326) AS geom FROM generate_series(1, 50000) i;
        ALTER TABLE public.big OWNER TO ${db.config.username};`);
      const big = await expectConnectorError(
        postgis.source!.extract(db.config, { table: 'big', schema: 'public' }, connectorContext({ maxBytes: 256 * 1024 }), {}),
        'too_large',
      );
      expect(big.retryable).toBe(false);
    });
  });

  describe('deliver', () => {
    const count = async (table: string, schema = 'public') => Number((await db.sql<{ n: string }>(`SELECT count(*) AS n FROM "${schema}"."${table}"`))[0]!.n);
    const columnType = async (table: string) =>
      (
        await db.sql<{ type: string; srid: number; column: string }>(
          'SELECT type, srid, f_geometry_column AS column FROM geometry_columns WHERE f_table_name = $1',
          [table],
        )
      )[0];
    const indexesOf = async (table: string, schema = 'public') =>
      (await db.sql<{ def: string }>('SELECT indexdef AS def FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY 1', [schema, table])).map(
        (r) => r.def,
      );

    it('replace creates the table, then swaps in new data keeping grants; geometry type promoted to multi, CRS and names kept', async () => {
      const parcels = mixedPolygonsGeoJson(dir);
      const first = await deliverTo({ schema: 'public', table: 'Parcels', write_mode: 'replace' }, parcels, { format: 'GeoJSON' });
      expect(first).toEqual({ target: { schema: 'public', table: 'Parcels', write_mode: 'replace' }, rows_written: 2 });
      expect(await columnType('Parcels')).toEqual({ type: 'MULTIPOLYGON', srid: 2056, column: 'geom' });
      const rows = await db.sql<{ owner: string; parcel_identifier_long_name: string }>(
        'SELECT owner, parcel_identifier_long_name FROM public."Parcels" ORDER BY 2',
      );
      expect(rows.map((r) => r.owner)).toEqual(['Müller', 'Løvland']);

      await db.sql(`CREATE ROLE reader_${db.config.database} NOLOGIN`);
      await db.sql(`GRANT SELECT ON public."Parcels" TO reader_${db.config.database}`);
      const points = pointsGeoJson(dir, 7);
      const second = await deliverTo({ schema: 'public', table: 'Parcels', write_mode: 'replace' }, points, { format: 'GeoJSON' });
      expect(second.rows_written).toBe(7);
      expect(await count('Parcels')).toBe(7);
      expect(await columnType('Parcels')).toEqual({ type: 'POINT', srid: 4326, column: 'geom' });
      const granted = await db.sql<{ ok: boolean }>(`SELECT has_table_privilege('reader_${db.config.database}', 'public."Parcels"', 'SELECT') AS ok`);
      expect(granted[0]!.ok).toBe(true);
      // Only the target and the delivery ledger remain: no staging or old tables, indexes named after the target.
      const tables = await db.sql<{ relname: string }>(
        "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'i', 'S') ORDER BY relname",
      );
      const names = tables.map((t) => t.relname);
      expect(names.filter((n) => n.includes('stage') || n.includes('old_'))).toEqual([]);
      expect(names).toEqual(expect.arrayContaining(['Parcels', 'Parcels_pkey', 'Parcels_geom_geom_idx', '_geoflow_deliveries']));
      // The spatial index is built after the rows (not by GDAL before them), and renamed with the table.
      expect(await indexesOf('Parcels')).toEqual([
        'CREATE INDEX "Parcels_geom_geom_idx" ON public."Parcels" USING gist (geom)',
        'CREATE UNIQUE INDEX "Parcels_pkey" ON public."Parcels" USING btree (ogc_fid)',
      ]);
      await db.sql(`DROP OWNED BY reader_${db.config.database}; DROP ROLE reader_${db.config.database}`);
    });

    it('loads a shapefile whose numbers are wider than its DBF declares (as NYC boroughs), as float8 and unbounded text', async () => {
      const made = await deliverTo({ schema: 'public', table: 'boroughs', write_mode: 'replace' }, boroughsShapefileZip(dir), { format: 'ESRI Shapefile' });
      expect(made.rows_written).toBe(2);
      const columns = await db.sql(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'boroughs' AND column_name IN ('BoroName', 'Shape_Area') ORDER BY 1",
      );
      expect(columns).toEqual([
        { column_name: 'BoroName', data_type: 'character varying' },
        { column_name: 'Shape_Area', data_type: 'double precision' },
      ]);
      expect(await db.sql('SELECT "BoroName", "Shape_Area" FROM public.boroughs ORDER BY "BoroCode"')).toEqual([
        { BoroName: 'Manhattan', Shape_Area: 1623819823.81 },
        { BoroName: 'The Brönx', Shape_Area: 1186924586.14 },
      ]);
      expect(await columnType('boroughs')).toEqual({ type: 'MULTIPOLYGON', srid: 2263, column: 'geom' });
    });

    it("says what the server refused when a load fails (the database's own message, not only GDAL's)", async () => {
      await db.sql(`CREATE TABLE public.strict_names ("BoroCode" integer, "BoroName" varchar(3), "Shape_Area" float8, geom geometry(MultiPolygon, 2263));
        ALTER TABLE public.strict_names OWNER TO ${db.config.username}`);
      const error = await expectConnectorError(
        deliverTo({ schema: 'public', table: 'strict_names', write_mode: 'append' }, boroughsShapefileZip(dir), { format: 'ESRI Shapefile' }),
        'invalid_data',
      );
      expect(error.message).toMatch(/value too long for type character varying\(3\)/);
      expect(await count('strict_names')).toBe(0);
    });

    it('a CRS without an EPSG code: refused with what to do when the role may not add it to spatial_ref_sys, loaded once it may', async () => {
      const csv = path.join(dir, 'custom-crs.csv');
      writeFileSync(csv, 'name,wkt\nMitte,"POINT (500000 200000)"\n');
      const gpkg = path.join(dir, 'custom-crs.gpkg');
      const customLcc =
        'PROJCS["Custom LCC",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],' +
        'PROJECTION["Lambert_Conformal_Conic"],PARAMETER["False_Easting",500000.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",-96.123],' +
        'PARAMETER["Standard_Parallel_1",33.0],PARAMETER["Standard_Parallel_2",45.0],PARAMETER["Latitude_Of_Origin",39.0],UNIT["Meter",1.0]]';
      layerFromWktCsv('GPKG', gpkg, csv, customLcc, 'custom');
      const target = { schema: 'public', table: 'custom_crs', write_mode: 'replace' as const };
      const refused = await expectConnectorError(postgis.destination!.deliver(db.config, target, deliverInput(gpkg), connectorContext()), 'permission_denied');
      expect(refused.message).toMatch(/CRS has no EPSG code.*reproject the layer.*GRANT INSERT ON spatial_ref_sys TO loader_\w+/);
      expect(refused.retryable).toBe(false);

      await db.sql(`GRANT INSERT ON spatial_ref_sys TO ${db.config.username}`);
      const loaded = await postgis.destination!.deliver(db.config, target, deliverInput(gpkg), connectorContext());
      expect(loaded.rows_written).toBe(1);
      const [srs] = await db.sql<{ srtext: string }>(
        "SELECT s.srtext FROM geometry_columns g JOIN spatial_ref_sys s ON s.srid = g.srid WHERE g.f_table_name = 'custom_crs'",
      );
      expect(srs!.srtext).toMatch(/-96\.123/);
    });

    it('attributes named like the columns the loader adds (geom, ogc_fid) keep their names and values', async () => {
      const file = geoJsonFile(dir, 'clash.geojson', [
        { type: 'Feature', properties: { geom: 'as text', ogc_fid: 'A-17', name: 'Zürich' }, geometry: { type: 'Point', coordinates: [8.54, 47.37] } },
      ]);
      const loaded = await deliverTo({ schema: 'public', table: 'clash', write_mode: 'replace' }, file, { format: 'GeoJSON' });
      expect(loaded.rows_written).toBe(1);
      expect(await columnType('clash')).toEqual({ type: 'POINT', srid: 4326, column: 'geometry' });
      expect(await db.sql('SELECT geom, ogc_fid, name, ST_AsText(geometry) AS wkt FROM public.clash')).toEqual([
        { geom: 'as text', ogc_fid: 'A-17', name: 'Zürich', wkt: 'POINT(8.54 47.37)' },
      ]);
      const again = await deliverTo({ schema: 'public', table: 'clash', write_mode: 'append' }, file, { format: 'GeoJSON' });
      expect(again.rows_written).toBe(1);
      expect(await count('clash')).toBe(2);
      // The appended rows went through the target's own index: no second one.
      expect(await indexesOf('clash')).toEqual([
        'CREATE INDEX clash_geometry_geom_idx ON public.clash USING gist (geometry)',
        'CREATE UNIQUE INDEX clash_pkey ON public.clash USING btree (fid)',
      ]);
    });

    it('a raster output is refused in words that say where rasters go', async () => {
      const tif = path.join(dir, 'raster.tif');
      constantGeoTiff(tif, { size: [4, 4], burn: [3], srs: 'EPSG:4326', ullr: [0, 4, 4, 0] });
      const refused = await expectConnectorError(
        deliverTo({ schema: 'public', table: 'raster', write_mode: 'replace' }, tif, { format: 'GTiff' }),
        'invalid_data',
      );
      expect(refused.message).toBe(
        'The output is a raster (GTiff); a database table takes vector features: deliver rasters to a file Destination (s3, azureblob, sftp)',
      );
    });

    it('keeps the Z dimension', async () => {
      const file = geoJsonFile(dir, 'heights.geojson', [
        { type: 'Feature', properties: { peak: 'Säntis' }, geometry: { type: 'Point', coordinates: [9.34, 47.25, 2502] } },
      ]);
      await postgis.destination!.deliver(db.config, { schema: 'public', table: 'peaks', write_mode: 'create' }, deliverInput(file), connectorContext());
      const [column] = await db.sql<{ type: string; dims: number }>("SELECT type, coord_dimension AS dims FROM geometry_columns WHERE f_table_name = 'peaks'");
      expect(column).toEqual({ type: 'POINT', dims: 3 });
      expect((await db.sql<{ z: number; peak: string }>('SELECT ST_Z(geom) AS z, peak FROM public.peaks'))[0]).toEqual({ z: 2502, peak: 'Säntis' });
    });

    it('append adds rows, and a retried delivery (same id) writes nothing twice', async () => {
      const points = pointsGeoJson(dir, 5);
      const input = deliverInput(points, { format: 'GeoJSON' });
      const target = { schema: 'Bäume', table: 'Orte', write_mode: 'append' as const };
      expect((await postgis.destination!.deliver(db.config, target, input, connectorContext())).rows_written).toBe(5);
      expect((await postgis.destination!.deliver(db.config, target, deliverInput(points, { format: 'GeoJSON' }), connectorContext())).rows_written).toBe(5);
      expect(await count('Orte', 'Bäume')).toBe(10);
      const retried = await postgis.destination!.deliver(db.config, target, input, connectorContext());
      expect(retried).toEqual({ target: { schema: 'Bäume', table: 'Orte', write_mode: 'append' }, rows_written: 5 });
      expect(await count('Orte', 'Bäume')).toBe(10);
      const names = await db.sql<{ name: string }>('SELECT name FROM "Bäume"."Orte" ORDER BY ogc_fid LIMIT 2');
      expect(names.map((n) => n.name)).toEqual(['Genève 0', 'Zürich 1']);
    });

    it('a retry is not held up by an earlier attempt cut off mid-load (its own staging table), and drops the leftovers nothing holds', async () => {
      const input = deliverInput(pointsGeoJson(dir, 4), { format: 'GeoJSON' });
      const target = { schema: 'public', table: 'cut_off', write_mode: 'replace' as const };
      const { stage: prefix } = stagingNames(input.deliveryId);
      // An attempt cut off the network in its first transaction: its staging table created, never
      // committed, and its session kept by the server (it has not noticed the client is gone).
      const cut = await db.admin();
      await cut.query('BEGIN');
      await cut.query(`CREATE TABLE public."${prefix}" (id int)`);
      // One cut off later: its table committed, a later chunk of rows still being written.
      await db.sql(`CREATE TABLE public."${prefix}_0a0b0c" (id int)`);
      const writing = await db.admin();
      await writing.query('BEGIN');
      await writing.query(`LOCK TABLE public."${prefix}_0a0b0c" IN ROW EXCLUSIVE MODE`);
      // And one whose worker died between two chunks: nobody holds it.
      await db.sql(`CREATE TABLE public."${prefix}_dead00" (id int)`);
      const stages = async () =>
        (await db.sql<{ name: string }>('SELECT relname AS name FROM pg_class WHERE starts_with(relname, $1) ORDER BY 1', [prefix])).map((r) => r.name);
      try {
        const held = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the delivery waited for the cut-off attempt')), 30_000).unref());
        const delivered = await Promise.race([postgis.destination!.deliver(db.config, target, input, connectorContext()), held]);
        expect(delivered.rows_written).toBe(4);
        expect(await count('cut_off')).toBe(4);
        expect(await stages()).toEqual([`${prefix}_0a0b0c`]);
      } finally {
        await cut.query('ROLLBACK');
        await writing.query('ROLLBACK');
        await cut.end();
        await writing.end();
      }
      // The same delivery again (a cut-off attempt coming back): nothing twice, nothing left.
      expect((await postgis.destination!.deliver(db.config, target, input, connectorContext())).rows_written).toBe(4);
      expect(await count('cut_off')).toBe(4);
      expect(await stages()).toEqual([]);
    });

    it('append with columns the target lacks fails and leaves the target as it was', async () => {
      const e = await expectConnectorError(deliverTo({ schema: 'Bäume', table: 'Orte', write_mode: 'append' }, mixedPolygonsGeoJson(dir)), 'invalid_data');
      expect(e.message).toContain('parcel_identifier_long_name');
      expect(await count('Orte', 'Bäume')).toBe(10);
      const leftovers = await db.sql("SELECT relname FROM pg_class WHERE relname LIKE '\\_geoflow\\_stage%'");
      expect(leftovers).toEqual([]);
    });

    it('append with reinitialize rebuilds the table (staged replace)', async () => {
      const r = await deliverTo({ schema: 'Bäume', table: 'Orte', write_mode: 'append' }, pointsGeoJson(dir, 3), { reinitialize: true });
      expect(r).toEqual({ target: { schema: 'Bäume', table: 'Orte', write_mode: 'replace' }, rows_written: 3 });
      expect(await count('Orte', 'Bäume')).toBe(3);
    });

    it('create makes a new table and refuses an existing one with target_exists', async () => {
      const shp = zippedShapefile(dir);
      const made = await deliverTo({ schema: 'public', table: 'places_from_shp', write_mode: 'create' }, shp, { format: 'ESRI Shapefile' });
      expect(made.rows_written).toBe(25);
      await expectConnectorError(
        postgis.destination!.deliver(db.config, { schema: 'public', table: 'places_from_shp', write_mode: 'create' }, deliverInput(shp), connectorContext()),
        'target_exists',
      );
      expect(await count('places_from_shp')).toBe(25);
    });

    it('into a database without PostGIS: a layer with geometry is refused before anything is written, a table without geometry loads', async () => {
      const plain = await createPostgisDatabase({ postgis: false });
      try {
        const target = { schema: 'public', table: 'places', write_mode: 'replace' as const };
        const refused = await expectConnectorError(
          postgis.destination!.deliver(plain.config, target, deliverInput(pointsGeoJson(dir, 3)), connectorContext()),
          'not_found',
        );
        expect(refused.message).toMatch(/PostGIS is not installed in database gis_\w+, and the layer has geometry.*CREATE EXTENSION postgis/);
        expect(await plain.sql("SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace")).toEqual([]);

        const csv = path.join(dir, 'no-geometry.csv');
        writeFileSync(csv, 'name,n\nZürich,1\nGenève,2\n');
        const loaded = await postgis.destination!.deliver(
          plain.config,
          { ...target, table: 'names' },
          deliverInput(csv, { format: 'CSV' }),
          connectorContext(),
        );
        expect(loaded.rows_written).toBe(2);
        expect(await plain.sql('SELECT name FROM public.names ORDER BY n')).toEqual([{ name: 'Zürich' }, { name: 'Genève' }]);
        expect(await plain.sql("SELECT indexname FROM pg_indexes WHERE tablename = 'names'")).toEqual([{ indexname: 'names_pkey' }]);
        expect((await postgis.test!(plain.config, connectorContext())).message).toMatch(
          /PostGIS is not installed in this database \(it can hold tables without geometry only\)/,
        );
      } finally {
        await plain.drop();
      }
    });

    describe("a small layer, loaded by ogr2ogr's library call in the worker's process", () => {
      /** The table as a reader sees it: columns, geometry column, indexes, rows. */
      const tableShape = async (table: string) => ({
        columns: await db.sql(
          "SELECT column_name, data_type, udt_name, is_nullable FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position",
          [table],
        ),
        geometry: await db.sql('SELECT type, srid, coord_dimension, f_geometry_column FROM geometry_columns WHERE f_table_name = $1', [table]),
        indexes: (await indexesOf(table)).map((def) => def.replaceAll(table, 'T')),
        rows: (await db.sql<{ r: string }>(`SELECT row_to_json(t)::text AS r FROM public."${table}" t ORDER BY 1`)).map((x) => x.r),
      });
      const withEnv = async <T>(name: string, value: string, fn: () => Promise<T>): Promise<T> => {
        const before = process.env[name];
        process.env[name] = value;
        try {
          return await fn();
        } finally {
          if (before === undefined) delete process.env[name];
          else process.env[name] = before;
        }
      };

      it.each([
        ['a shapefile in a projected CRS with wide numbers', 'nybb', () => deliverInput(boroughsShapefileZip(fixtureDir()), { format: 'ESRI Shapefile' }), 2],
        [
          'GeoJSON with non-ASCII field names and text, polygons and multipolygons',
          'strassen',
          () => {
            const square = (x: number) => [
              [
                [x, 47],
                [x + 0.01, 47],
                [x + 0.01, 47.01],
                [x, 47],
              ],
            ];
            const file = geoJsonFile(dir, 'strassen.geojson', [
              {
                type: 'Feature',
                properties: { Straßenname: 'Zürichstraße', höhe: 412.5, n: 3, seit: '2024-05-01' },
                geometry: { type: 'Polygon', coordinates: square(8.5) },
              },
              {
                type: 'Feature',
                properties: { Straßenname: 'Åsgatan', höhe: null, n: 4, seit: null },
                geometry: { type: 'MultiPolygon', coordinates: [square(8.6), square(8.7)] },
              },
            ]);
            return deliverInput(file, { format: 'GeoJSON' });
          },
          2,
        ],
      ])('makes the same table as the ogr2ogr program: %s', async (_, name, input, rows) => {
        const target = (table: string) => ({ schema: 'public', table, write_mode: 'replace' as const });
        const before = translatedHere();
        const here = await postgis.destination!.deliver(db.config, target(`${name}_here`), input(), connectorContext());
        expect(translatedHere()).toBe(before + 1);
        const program = await withEnv('SVC_GDAL_IN_PROCESS', '0', () =>
          postgis.destination!.deliver(db.config, target(`${name}_program`), input(), connectorContext()),
        );
        expect(translatedHere()).toBe(before + 1);
        expect(here.rows_written).toBe(rows);
        expect(program.rows_written).toBe(rows);
        const [a, b] = [await tableShape(`${name}_here`), await tableShape(`${name}_program`)];
        expect(a.rows).toHaveLength(rows);
        expect(a).toEqual(b);
      });

      it('at the size limit (100,000 points) the load runs here and never holds the event loop for a second', async () => {
        const points = manyPointsGpkg(fixtureDir(), 100_000);
        const before = translatedHere();
        const histogram = monitorEventLoopDelay({ resolution: 20 });
        histogram.enable();
        const loaded = await deliverTo({ schema: 'public', table: 'hundred_thousand', write_mode: 'replace' }, points);
        await new Promise((resolve) => setTimeout(resolve, 50));
        histogram.disable();
        expect(translatedHere()).toBe(before + 1);
        expect(loaded.rows_written).toBe(100_000);
        expect(await count('hundred_thousand')).toBe(100_000);
        expect(histogram.max / 1e6).toBeLessThan(1_000);
      });

      it("takes the target's password from its own file, never PGPASSWORD from the worker's environment", async () => {
        const before = translatedHere();
        const loaded = await withEnv('PGPASSWORD', 'the-services-own-database-password', () =>
          deliverTo({ schema: 'public', table: 'env_password', write_mode: 'replace' }, pointsGeoJson(dir, 3), { format: 'GeoJSON' }),
        );
        expect(loaded.rows_written).toBe(3);
        expect(translatedHere()).toBe(before + 1);
      });

      it('a call the server never answers fails the delivery with timeout, and loads run as ogr2ogr until it returns', async () => {
        // Between the delivery and the database: the first connection (the checks) passes through;
        // a later one (GDAL's) is answered until it sends its first query, which then never arrives.
        const proxy = await stallingPgProxy(db.config, 1);
        const limits = { ...inProcessLimits };
        inProcessLimits.stuckAfterMs = 1_500;
        try {
          const before = translatedHere();
          const stuck = await expectConnectorError(
            postgis.destination!.deliver(
              { ...db.config, port: proxy.port },
              { schema: 'public', table: 'never', write_mode: 'replace' },
              deliverInput(pointsGeoJson(dir, 3), { format: 'GeoJSON' }),
              connectorContext(),
            ),
            'timeout',
          );
          expect(stuck.message).toMatch(/did not finish the load within 1\.5 s/);
          expect(proxy.connections()).toBeGreaterThan(1);
          // While the call is stuck, a small load goes to the program, and succeeds.
          const meanwhile = await deliverTo({ schema: 'public', table: 'meanwhile', write_mode: 'replace' }, pointsGeoJson(dir, 2), { format: 'GeoJSON' });
          expect(meanwhile.rows_written).toBe(2);
          expect(translatedHere()).toBe(before);
          // Once the server hangs up, the call returns and loads run here again.
          proxy.close();
          let here = false;
          for (let i = 0; i < 50 && !here; i++) {
            await deliverTo({ schema: 'public', table: 'afterwards', write_mode: 'replace' }, pointsGeoJson(dir, 2), { format: 'GeoJSON' });
            here = translatedHere() > before;
            if (!here) await new Promise((r) => setTimeout(r, 100));
          }
          expect(here).toBe(true);
          expect(await count('afterwards')).toBe(2);
        } finally {
          Object.assign(inProcessLimits, limits);
          proxy.close();
        }
      });
    });

    describe('connections left open between deliveries', () => {
      // Every connection to the database goes through a proxy that counts them (none is held back).
      const proxies: { close(): void }[] = [];
      const through = async () => {
        const proxy = await stallingPgProxy(db.config, Number.POSITIVE_INFINITY);
        proxies.push(proxy);
        const deliver = (table: string, write_mode: 'replace' | 'create' = 'replace') =>
          postgis.destination!.deliver(
            { ...db.config, port: proxy.port },
            { schema: 'public', table, write_mode },
            deliverInput(pointsGeoJson(dir, 2), { format: 'GeoJSON' }),
            connectorContext(),
          );
        return { proxy, deliver };
      };
      const limits = { ...poolLimits };
      afterEach(async () => {
        Object.assign(poolLimits, limits);
        await closeIdle();
        for (const proxy of proxies.splice(0)) proxy.close();
      });

      it("a later delivery into the same database runs its checks on the connection the last one left; only GDAL's is new", async () => {
        const { proxy, deliver } = await through();
        await deliver('pooled');
        expect(proxy.connections()).toBe(2);
        await deliver('pooled');
        await deliver('pooled');
        expect(proxy.connections()).toBe(4);
        expect(await count('pooled')).toBe(2);
      });

      it('an idle connection is closed after its time, and one the server ended is not used again', async () => {
        poolLimits.idleMs = 300;
        const { proxy, deliver } = await through();
        await deliver('idle_closed');
        expect(idleCount()).toBe(1);
        await new Promise((r) => setTimeout(r, 600));
        expect(idleCount()).toBe(0);
        await deliver('idle_closed');
        expect(proxy.connections()).toBe(4);

        poolLimits.idleMs = 60_000;
        await deliver('idle_closed');
        expect(proxy.connections()).toBe(5);
        const ended = await db.sql(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'geoflow' AND state = 'idle'",
        );
        expect(ended.length).toBeGreaterThan(0);
        for (let i = 0; i < 100 && idleCount() > 0; i++) await new Promise((r) => setTimeout(r, 50));
        expect(idleCount()).toBe(0);
        await deliver('idle_closed');
        expect(proxy.connections()).toBe(7);
        expect(await count('idle_closed')).toBe(2);
      });

      it('a delivery that failed closes its connection instead of leaving it for the next one', async () => {
        const { proxy, deliver } = await through();
        await deliver('refused');
        await expectConnectorError(deliver('refused', 'create'), 'target_exists');
        // The refusal came on the connection the first delivery left; the next one connects anew.
        expect(proxy.connections()).toBe(2);
        expect(idleCount()).toBe(0);
        await deliver('refused');
        expect(proxy.connections()).toBe(4);
      });
    });

    it('a missing schema is not_found; a load stopped midway leaves the old table untouched', async () => {
      await expectConnectorError(deliverTo({ schema: 'nowhere', table: 't', write_mode: 'replace' }, pointsGeoJson(dir, 2)), 'not_found');

      const many = manyPointsGpkg(dir, 150_000);
      const controller = new AbortController();
      const stopped = postgis.destination!.deliver(
        db.config,
        { schema: 'public', table: 'Parcels', write_mode: 'replace' },
        deliverInput(many),
        connectorContext({ signal: controller.signal }),
      );
      // Cancel once the staging table exists (the load is under way).
      await untilStagingTable((text) => db.sql(text));
      controller.abort();
      await expectConnectorError(stopped, 'timeout');
      expect(await count('Parcels')).toBe(7);
      expect(await columnType('Parcels')).toMatchObject({ type: 'POINT' });
      const leftovers = await db.sql("SELECT relname FROM pg_class WHERE relname LIKE '\\_geoflow\\_stage%'");
      expect(leftovers).toEqual([]);
    });

    it("a delivery stopped while the staging table's index is built leaves no staging table: the server's statement is cancelled", async () => {
      const slow = await createPostgisDatabase();
      try {
        // Every CREATE INDEX in this database keeps its table locked for a minute once built, as
        // the index of a very big layer would: PostgreSQL notices a closed connection only when it
        // next writes to it, so a delivery that just hangs up leaves the statement running.
        await slow.sql('CREATE FUNCTION linger() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(60); END $$');
        await slow.sql("CREATE EVENT TRIGGER linger ON ddl_command_end WHEN TAG IN ('CREATE INDEX') EXECUTE FUNCTION linger()");
        const building = () =>
          slow.sql("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND query LIKE 'CREATE INDEX%'");
        const controller = new AbortController();
        const stopped = postgis.destination!.deliver(
          slow.config,
          { schema: 'public', table: 'late', write_mode: 'replace' },
          deliverInput(pointsGeoJson(dir, 3)),
          connectorContext({ signal: controller.signal }),
        );
        let seen = false;
        for (let i = 0; i < 200 && !seen; i++) {
          seen = (await building()).length > 0;
          if (!seen) await new Promise((r) => setTimeout(r, 50));
        }
        expect(seen).toBe(true);
        controller.abort();
        await expectConnectorError(stopped, 'timeout');
        expect(await slow.sql("SELECT relname FROM pg_class WHERE relname LIKE '\\_geoflow\\_stage%'")).toEqual([]);
        expect(await building()).toEqual([]);
      } finally {
        await slow.drop();
      }
    });
  });
});
