import { connect, withConnection } from '../../connectors/oracle/client.js';
import { connectorContext } from './support.js';
import { namedServer, namedServerMissing, sqlContractSuite } from './sql-contract.js';

/*
 * Oracle against a real server, when SVC_TEST_ORACLE_URL names one:
 * oracle://user:password@host:1521/SERVICE_NAME. The user needs CREATE TABLE, CREATE SYNONYM and
 * quota on its default tablespace (Oracle Spatial is part of every edition since 19c).
 */
const configuration = namedServer('SVC_TEST_ORACLE_URL', 1521, (url) => ({ service_name: decodeURIComponent(url.pathname.slice(1)) }));

const drop = async (c: Awaited<ReturnType<typeof connect>>, name: string) => {
  await c.execute(`DROP SYNONYM "${name}"`).catch(() => undefined);
  await c.execute(`DROP TABLE "${name}" PURGE`).catch(() => undefined);
  await c.execute(`DELETE FROM USER_SDO_GEOM_METADATA WHERE TABLE_NAME = '${name}'`);
};

/** Creates the seeded table (3 stations, EPSG:4326) and drops what earlier runs left. */
const seed = () =>
  withConnection(configuration!, connectorContext(), async (c) => {
    for (const t of ['GEOFLOW_STATIONS', 'GEOFLOW_PLACES', 'GEOFLOW_PARCELS', 'GEOFLOW_JOB']) await drop(c, t);
    await c.execute('CREATE TABLE GEOFLOW_STATIONS (id NUMBER(10) PRIMARY KEY, name VARCHAR2(50 CHAR), geom SDO_GEOMETRY)');
    for (const [id, name, x, y] of [
      [1, 'Bern', 7.44, 46.95],
      [2, 'Chur', 9.53, 46.85],
      [3, 'Genève', 6.14, 46.2],
    ] as const) {
      await c.execute('INSERT INTO GEOFLOW_STATIONS VALUES (:1, :2, SDO_GEOMETRY(2001, 4326, SDO_POINT_TYPE(:3, :4, NULL), NULL, NULL))', [id, name, x, y]);
    }
    await c.execute(
      `INSERT INTO USER_SDO_GEOM_METADATA VALUES ('GEOFLOW_STATIONS', 'GEOM', SDO_DIM_ARRAY(SDO_DIM_ELEMENT('X', -180, 180, 0.05), SDO_DIM_ELEMENT('Y', -90, 90, 0.05)), 4326)`,
    );
    await c.commit();
  });

sqlContractSuite({
  type: 'oracle',
  missing: !configuration && namedServerMissing('oracle', 'SVC_TEST_ORACLE_URL'),
  async start() {
    await seed();
    return {
      configuration: configuration!,
      secrets: [configuration!.password],
      wrongCredentials: { ...configuration!, password: 'wrong-password' },
      target: (table, write_mode) => ({ table, write_mode }),
      tables: { places: 'GEOFLOW_PLACES', parcels: 'GEOFLOW_PARCELS', job: 'GEOFLOW_JOB', upserted: 'GEOFLOW_UPSERTED' },
      seeded: { resource: { table: 'GEOFLOW_STATIONS' }, query: `SELECT name, geom FROM GEOFLOW_STATIONS WHERE name <> 'Chur'`, queryFeatures: 2 },
      async reader() {
        const c = await connect(configuration!, connectorContext());
        return {
          count: async (table) => Number((await c.execute<unknown[]>(`SELECT COUNT(*) FROM "${table}"`)).rows![0]![0]),
          close: () => c.close(),
        };
      },
      stop: async () => undefined,
    };
  },
  // Its target takes write modes create, replace and append (connectors/oracle/index.ts).
  noUpsert: 'the oracle Destination has no write_mode upsert',
  closed: (port) => ({ host: '127.0.0.1', port, service_name: 'GISPDB', username: 'loader', password: 'contract-secret-password' }),
});
