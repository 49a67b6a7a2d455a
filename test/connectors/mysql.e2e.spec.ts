import { expect } from 'vitest';
import { mariadbMissing, startMariadb } from '../servers/mariadb/server.js';
import { sqlContractSuite } from './sql-contract.js';

/** MySQL (MariaDB) Sources and Destinations through /api/v1, with the real worker and Temporal: the SQL Destination contract and MySQL's own checks. */
sqlContractSuite({
  type: 'mysql',
  missing: mariadbMissing,
  async start() {
    const server = await startMariadb();
    const configuration = { host: server.host, port: server.port, database: server.database, username: server.username, password: server.password };
    const c = await server.root(server.database);
    try {
      await c.query(`CREATE TABLE stations (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(50), geom POINT REF_SYSTEM_ID=4326 NOT NULL);
      INSERT INTO stations (name, geom) VALUES ('Bern', ST_GeomFromText('POINT(7.44 46.95)', 4326)), ('Chur', ST_GeomFromText('POINT(9.53 46.85)', 4326)), ('Genève', ST_GeomFromText('POINT(6.14 46.2)', 4326));`);
    } finally {
      await c.end();
    }
    return {
      configuration,
      secrets: [server.password],
      wrongCredentials: { ...configuration, password: 'wrong-password' },
      target: (table, write_mode) => ({ table, write_mode }),
      tables: { places: 'places', parcels: 'parcels', job: 'job', upserted: 'upserted' },
      // The string shorthand for a table.
      seeded: { resource: 'stations', query: "SELECT name, geom FROM stations WHERE name LIKE 'B%'", queryFeatures: 1 },
      async reader() {
        const reader = await server.root(server.database);
        return {
          count: async (table) => Number(((await reader.query(`SELECT COUNT(*) AS n FROM \`${table}\``))[0] as { n: number }[])[0]!.n),
          close: () => reader.end(),
        };
      },
      unsupported: {
        // The mysql connector lists no schemas or tables (connectors/mysql/index.ts has no discover).
        discover: 'the mysql connector has no discover',
      },
      checks: {
        async imported({ send, source, workspace }) {
          expect((await send('POST', `/api/v1/sources/${source}/test`)).json()).toMatchObject({ ok: true, status: 'ok' });
          expect(workspace).toMatchObject({ filename: 'stations.gpkg', driver: 'GPKG' });
          expect(workspace.layers[0]).toMatchObject({ name: 'stations' });
          const missing = await send('POST', '/api/v1/workspaces', { source_id: source, source_resource: { table: 'nowhere' } });
          expect(missing.statusCode).toBe(422);
          expect(missing.json().error).toMatchObject({ code: 'source_failed', details: { reason: 'not_found' } });
          expect(missing.body).not.toContain(server.password);
        },
        async created(created) {
          expect(created.json()).toMatchObject({ target: { database: server.database } });
        },
        async parcels() {
          const c = await server.root(server.database);
          try {
            const [rows] = await c.query('SELECT owner, ST_GeometryType(geom) AS type, ST_SRID(geom) AS srid FROM parcels ORDER BY ogc_fid');
            expect(rows).toEqual([
              { owner: 'Müller', type: 'MULTIPOLYGON', srid: 2056 },
              { owner: 'Løvland', type: 'MULTIPOLYGON', srid: 2056 },
            ]);
          } finally {
            await c.end();
          }
        },
      },
      stop: () => server.stop(),
    };
  },
  closed: (port) => ({ host: '127.0.0.1', port, database: 'gis', username: 'loader', password: 'contract-secret-password' }),
});
