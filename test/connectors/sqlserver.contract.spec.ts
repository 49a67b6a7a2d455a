import { connect, query, withConnection } from '../../connectors/sqlserver/client.js';
import { connectorContext } from './support.js';
import { namedServer, namedServerMissing, sqlContractSuite } from './sql-contract.js';

/*
 * SQL Server against a real server, when SVC_TEST_SQLSERVER_URL names one:
 * mssql://user:password@host:1433/database?trust_server_certificate=true (encrypt=false to turn TLS off).
 * The user needs CREATE TABLE in the database and ALTER on the dbo schema.
 */
const configuration = namedServer('SVC_TEST_SQLSERVER_URL', 1433, (url) => ({
  database: decodeURIComponent(url.pathname.slice(1)),
  encrypt: url.searchParams.get('encrypt') !== 'false',
  trust_server_certificate: url.searchParams.get('trust_server_certificate') === 'true',
}));
const run = <T>(fn: Parameters<typeof withConnection<T>>[2]) => withConnection(configuration!, connectorContext(), fn);

sqlContractSuite({
  type: 'sqlserver',
  missing: !configuration && namedServerMissing('sqlserver', 'SVC_TEST_SQLSERVER_URL'),
  async start() {
    // The seeded table (3 stations, EPSG:4326), and nothing earlier runs left.
    await run(async (c) => {
      await query(
        c,
        `DROP TABLE IF EXISTS dbo.geoflow_stations; DROP TABLE IF EXISTS dbo.GEOFLOW_PLACES; DROP TABLE IF EXISTS dbo.GEOFLOW_PARCELS; DROP TABLE IF EXISTS dbo.GEOFLOW_JOB;
        CREATE TABLE dbo.geoflow_stations (id INT IDENTITY PRIMARY KEY, name NVARCHAR(50), geom geometry);
        INSERT INTO dbo.geoflow_stations (name, geom) VALUES (N'Bern', geometry::STGeomFromText('POINT(7.44 46.95)', 4326)), (N'Chur', geometry::STGeomFromText('POINT(9.53 46.85)', 4326)), (N'Genève', geometry::STGeomFromText('POINT(6.14 46.2)', 4326));`,
      );
    });
    return {
      configuration: configuration!,
      secrets: [configuration!.password],
      wrongCredentials: { ...configuration!, password: 'wrong-password' },
      target: (table, write_mode) => ({ schema: 'dbo', table, write_mode }),
      tables: { places: 'GEOFLOW_PLACES', parcels: 'GEOFLOW_PARCELS', job: 'GEOFLOW_JOB', upserted: 'GEOFLOW_UPSERTED' },
      seeded: {
        resource: { schema: 'dbo', table: 'geoflow_stations' },
        query: "SELECT name, geom FROM dbo.geoflow_stations WHERE name <> N'Chur'",
        queryFeatures: 2,
      },
      async reader() {
        const c = await connect(configuration!, connectorContext());
        return {
          count: async (table) => Number((await query(c, `SELECT COUNT(*) FROM dbo.${table}`)).rows[0]![0]),
          close: async () => c.close(),
        };
      },
      stop: async () => undefined,
    };
  },
  // Its target takes write modes create, replace and append (connectors/sqlserver/index.ts).
  noUpsert: 'the sqlserver Destination has no write_mode upsert',
  closed: (port) => ({ host: '127.0.0.1', port, database: 'gis', username: 'loader', password: 'contract-secret-password' }),
});
