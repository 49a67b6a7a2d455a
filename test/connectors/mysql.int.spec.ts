import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysql as connector } from '../../connectors/mysql/index.js';
import type { DeliverInput } from '../../connectors/types.js';
import { gdal } from '../../geo/gdal/gdal.js';
import { closedPort, connectorContext, expectConnectorError, pollUntilStopped, silentServer } from './support.js';
import { boroughsShapefileZip, fixtureDir, manyPointsGpkg, mixedPolygonsGeoJson, pointsGeoJson } from '../support/fixtures.js';
import { mariadbMissing, startMariadb, type LocalMariadb } from '../servers/mariadb/server.js';

/** The mysql connector against a throwaway MariaDB (Debian's mariadb-server). */
describe.skipIf(mariadbMissing)('mysql connector (MariaDB)', () => {
  let server: LocalMariadb;
  let config: { host: string; port: number; database: string; username: string; password: string; ssl: boolean };
  let dir: string;
  const sql = async (text: string, values: unknown[] = []) => {
    const c = await server.root(server.database);
    try {
      return (await c.query(text, values))[0] as Record<string, unknown>[];
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    server = await startMariadb();
    config = { host: server.host, port: server.port, database: server.database, username: server.username, password: server.password, ssl: false };
    dir = fixtureDir();
    await sql(`CREATE TABLE \`Orte Ü\` (id INT PRIMARY KEY AUTO_INCREMENT, \`Name\` VARCHAR(50), \`größe\` DOUBLE, geom POINT REF_SYSTEM_ID=2056 NOT NULL, SPATIAL INDEX(geom));
      INSERT INTO \`Orte Ü\` (\`Name\`, \`größe\`, geom) VALUES ('Zürich', 12.5, ST_GeomFromText('POINT(2600000 1200000)', 2056)), ('Genève', 3, ST_GeomFromText('POINT(2500000 1100000)', 2056));
      CREATE TABLE plain (a INT, b VARCHAR(10)); INSERT INTO plain VALUES (1, 'x');`);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const deliverInput = (file: string, extra: Partial<DeliverInput> = {}): DeliverInput => ({
    file,
    filename: path.basename(file),
    format: 'GPKG',
    mediaType: null,
    layers: [],
    deliveryId: randomUUID(),
    ...extra,
  });
  const read = async (file: string) => {
    const ds = await gdal.openAsync(file);
    try {
      const layer = ds.layers.get(0);
      const rows = [];
      for await (const f of layer.features) rows.push({ ...f.fields.toObject(), wkt: f.getGeometry()?.toWKT() });
      return { name: layer.name, geomType: gdal.Geometry.getName(layer.geomType), srs: layer.srs?.getAuthorityCode(null) ?? null, rows };
    } finally {
      ds.close();
    }
  };
  const count = async (table: string) => Number((await sql(`SELECT COUNT(*) AS n FROM \`${table}\``))[0]!.n);

  it('test: ok, then wrong password, unknown database, no privilege, TLS, closed port and a silent server, classified', async () => {
    const ok = await connector.test!(config, connectorContext());
    expect(ok).toMatchObject({ ok: true, status: 'ok', tried: { host: config.host, port: config.port, database: 'gis' } });
    expect(ok.message).toMatch(/MariaDB 10\.11/);
    const wrong = await connector.test!({ ...config, password: 'wrong-password' }, connectorContext());
    expect(wrong).toMatchObject({ ok: false, status: 'authentication_failed' });
    expect(JSON.stringify(wrong)).not.toContain('wrong-password');
    expect((await connector.test!({ ...config, database: 'gis_missing' }, connectorContext())).status).toBe('not_found');
    expect((await connector.test!({ ...config, database: 'mysql' }, connectorContext())).status).toBe('permission_denied');
    expect((await connector.test!({ ...config, ssl: true }, connectorContext())).status).toBe('tls_error');
    expect((await connector.test!({ ...config, port: await closedPort() }, connectorContext())).status).toBe('unreachable');
    const silent = await silentServer();
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 1000);
      expect((await connector.test!({ ...config, port: silent.port }, connectorContext({ signal: controller.signal }))).status).toBe('timeout');
    } finally {
      silent.close();
    }
  });

  it('extracts a table into a GeoPackage with its CRS, names and non-ASCII text', async () => {
    const r = await connector.source!.extract(config, { table: 'Orte Ü' }, connectorContext(), {});
    expect(r).toMatchObject({ filename: 'Orte Ü.gpkg', features: 2 });
    const got = await read(r.file);
    expect(got).toMatchObject({ name: 'Orte Ü', geomType: 'Point', srs: '2056' });
    expect(got.rows.map((row) => row.Name).sort()).toEqual(['Genève', 'Zürich']);
    expect(got.rows.find((row) => row.Name === 'Zürich')).toMatchObject({ größe: 12.5, wkt: 'POINT (2600000 1200000)' });
  });

  it('extracts a query and a table without geometry; classifies missing tables, bad queries, and refuses TLS transfers', async () => {
    const q = await connector.source!.extract(config, { query: 'SELECT `Name`, geom FROM `Orte Ü` WHERE `größe` > 10;' }, connectorContext(), {});
    expect(q).toMatchObject({ filename: 'query.gpkg', features: 1 });
    expect(await read(q.file)).toMatchObject({ srs: '2056', rows: [{ Name: 'Zürich' }] });
    const plain = await connector.source!.extract(config, { table: 'plain' }, connectorContext(), {});
    expect(plain.features).toBe(1);
    await expectConnectorError(connector.source!.extract(config, { table: 'missing' }, connectorContext(), {}), 'not_found');
    await expectConnectorError(connector.source!.extract(config, { query: 'SELEKT 1' }, connectorContext(), {}), 'invalid_data');
    await expectConnectorError(connector.source!.extract(config, { query: 'DELETE FROM plain' }, connectorContext(), {}), 'invalid_data');
    expect(await count('plain')).toBe(1);
    await expectConnectorError(connector.source!.extract({ ...config, ssl: true }, { table: 'plain' }, connectorContext(), {}), 'tls_error');
  });

  it('a query that closes its subquery and adds statements is refused: one statement per query (issue 32)', async () => {
    const before = await count('Orte Ü');
    for (const query of [
      'SELECT 1 AS x) AS a; COMMIT; DELETE FROM `Orte Ü`; SELECT * FROM (SELECT 1 AS y',
      'SELECT 1 AS x) AS a; DELETE FROM `Orte Ü`; SELECT * FROM (SELECT 1 AS y',
    ]) {
      const attempt = connector.source!.extract(config, { query }, connectorContext(), {});
      await attempt.catch(() => undefined);
      expect(await count('Orte Ü'), query).toBe(before);
      await expectConnectorError(attempt, 'invalid_data');
    }
  });

  it('reads incrementally with cursor_column: new rows only, then unchanged', async () => {
    await sql(`CREATE TABLE events (id INT PRIMARY KEY AUTO_INCREMENT, seen_at DATETIME NOT NULL, label VARCHAR(20), geom POINT REF_SYSTEM_ID=4326);
      INSERT INTO events (seen_at, label, geom) VALUES ('2024-01-01 10:00:00', 'a', ST_GeomFromText('POINT(7 46)', 4326)), ('2024-01-02 10:00:00', 'b', ST_GeomFromText('POINT(8 47)', 4326));`);
    const resource = { table: 'events', cursor_column: 'seen_at' };
    const first = await connector.source!.extract(config, resource, connectorContext(), { sync: null });
    expect(first.features).toBe(2);
    expect(first.sync?.cursor).toEqual({ column: 'seen_at', value: '2024-01-02 10:00:00' });
    await sql(`INSERT INTO events (seen_at, label, geom) VALUES ('2024-01-03 10:00:00', 'c''s', ST_GeomFromText('POINT(9 48)', 4326))`);
    const second = await connector.source!.extract(config, resource, connectorContext(), { sync: first.sync! });
    expect(second.features).toBe(1);
    expect((await read(second.file)).rows.map((row) => row.label)).toEqual(["c's"]);
    const third = await connector.source!.extract(config, resource, connectorContext(), { sync: second.sync! });
    expect(third).toMatchObject({ unchanged: true, features: 0 });
    expect(third.sync).toEqual(second.sync);
  });

  it('stops an extract at the size limit', async () => {
    await sql(
      `SET SESSION max_recursive_iterations = 100000; CREATE TABLE big AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000) SELECT i AS id, REPEAT('x', 200) AS filler FROM n`,
    );
    await expectConnectorError(connector.source!.extract(config, { table: 'big' }, connectorContext({ maxBytes: 256 * 1024 }), {}), 'too_large');
  });

  it('replace creates, then swaps while a reader polls: never missing or partial; CRS, names and multi-promotion kept', async () => {
    const target = { table: 'Flurstücke', write_mode: 'replace' as const };
    const first = await connector.destination!.deliver(config, target, deliverInput(mixedPolygonsGeoJson(dir), { format: 'GeoJSON' }), connectorContext());
    expect(first).toEqual({ target: { database: 'gis', table: 'Flurstücke', write_mode: 'replace' }, rows_written: 2 });
    const rows = await sql(
      'SELECT parcel_identifier_long_name AS id, owner, ST_GeometryType(geom) AS type, ST_SRID(geom) AS srid FROM `Flurstücke` ORDER BY 1',
    );
    expect(rows).toEqual([
      { id: 'A-1', owner: 'Müller', type: 'MULTIPOLYGON', srid: 2056 },
      { id: 'B-2', owner: 'Løvland', type: 'MULTIPOLYGON', srid: 2056 },
    ]);

    const many = manyPointsGpkg(dir, 5000);
    const reader = await mysql.createConnection({
      host: config.host,
      port: config.port,
      user: config.username,
      password: config.password,
      database: config.database,
    });
    const reading = pollUntilStopped(async () => {
      const [r] = await reader.query('SELECT COUNT(*) AS n FROM `Flurstücke`');
      return Number((r as { n: number }[])[0]!.n);
    });
    try {
      expect((await connector.destination!.deliver(config, target, deliverInput(many), connectorContext())).rows_written).toBe(5000);
      expect((await connector.destination!.deliver(config, target, deliverInput(pointsGeoJson(dir, 9)), connectorContext())).rows_written).toBe(9);
    } finally {
      await reading.stop();
      await reader.end();
    }
    const { seen, errors } = await reading.stop();
    expect(errors).toEqual([]);
    expect([...seen.keys()].every((n) => [2, 5000, 9].includes(n))).toBe(true);
    expect(seen.size).toBeGreaterThan(1);
    expect(await count('Flurstücke')).toBe(9);
    const tables = (await sql("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'gis' AND table_name LIKE '\\_geoflow\\_%'")).map(
      (r) => r.t,
    );
    expect(tables).toEqual(['_geoflow_deliveries']);
  });

  it('append adds rows once per delivery id; reinitialize rebuilds; create refuses an existing table', async () => {
    const target = { table: 'orte', write_mode: 'append' as const };
    const input = deliverInput(pointsGeoJson(dir, 4));
    expect((await connector.destination!.deliver(config, target, input, connectorContext())).rows_written).toBe(4);
    expect((await connector.destination!.deliver(config, target, deliverInput(pointsGeoJson(dir, 4)), connectorContext())).rows_written).toBe(4);
    expect(await connector.destination!.deliver(config, target, input, connectorContext())).toEqual({
      target: { database: 'gis', table: 'orte', write_mode: 'append' },
      rows_written: 4,
    });
    expect(await count('orte')).toBe(8);

    await expectConnectorError(connector.destination!.deliver(config, target, deliverInput(mixedPolygonsGeoJson(dir)), connectorContext()), 'invalid_data');
    expect(await count('orte')).toBe(8);

    const rebuilt = await connector.destination!.deliver(config, target, deliverInput(pointsGeoJson(dir, 3), { reinitialize: true }), connectorContext());
    expect(rebuilt).toMatchObject({ target: { write_mode: 'replace' }, rows_written: 3 });
    expect(await count('orte')).toBe(3);

    await expectConnectorError(
      connector.destination!.deliver(config, { table: 'orte', write_mode: 'create' }, deliverInput(pointsGeoJson(dir, 2)), connectorContext()),
      'target_exists',
    );
    expect(await count('orte')).toBe(3);
    const created = await connector.destination!.deliver(
      config,
      { table: 'neu', write_mode: 'create' },
      deliverInput(pointsGeoJson(dir, 2)),
      connectorContext(),
    );
    expect(created.rows_written).toBe(2);
  });

  it('loads a shapefile whose numbers are wider than its DBF declares (as NYC boroughs)', async () => {
    const made = await connector.destination!.deliver(
      config,
      { table: 'boroughs', write_mode: 'replace' },
      deliverInput(boroughsShapefileZip(dir), { format: 'ESRI Shapefile' }),
      connectorContext(),
    );
    expect(made.rows_written).toBe(2);
    expect(await sql('SELECT `BoroName`, `Shape_Area` FROM boroughs ORDER BY `BoroCode`')).toEqual([
      { BoroName: 'Manhattan', Shape_Area: 1623819823.81 },
      { BoroName: 'The Brönx', Shape_Area: 1186924586.14 },
    ]);
  });

  it('attributes named like the columns the loader adds (geom, ogc_fid) keep their names and values', async () => {
    const file = path.join(dir, 'clash.geojson');
    writeFileSync(
      file,
      JSON.stringify({
        type: 'FeatureCollection',
        features: [{ type: 'Feature', properties: { geom: 'as text', ogc_fid: 'A-17' }, geometry: { type: 'Point', coordinates: [8.54, 47.37] } }],
      }),
    );
    const loaded = await connector.destination!.deliver(
      config,
      { table: 'clash', write_mode: 'replace' },
      deliverInput(file, { format: 'GeoJSON' }),
      connectorContext(),
    );
    expect(loaded.rows_written).toBe(1);
    expect(await sql('SELECT geom, ogc_fid, ST_AsText(geometry) AS wkt FROM clash')).toEqual([{ geom: 'as text', ogc_fid: 'A-17', wkt: 'POINT(8.54 47.37)' }]);
  });
});
