import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import oracledb from 'oracledb';
import pino from 'pino';
import { TYPES } from 'tedious';
import type { Point } from 'gdal-async';
import { gdal } from '../geo/gdal/gdal.js';
import { connect as connectOracle, type OracleConfig } from '../connectors/oracle/client.js';
import { deliverOracle } from '../connectors/oracle/deliver.js';
import { connect as connectSqlServer, query, type SqlServerConfig } from '../connectors/sqlserver/client.js';
import { deliverSqlServer } from '../connectors/sqlserver/deliver.js';
import type { ConnectorContext } from '../connectors/types.js';
import { pointsFile } from './points.js';

/*
 * `npm run bench:sql-bulk`: 1,000,000 points (SVC_BENCH_POINTS to change) delivered into SQL
 * Server and/or Oracle by the connectors (replace: staged, indexed and swapped), against the same
 * rows loaded with the vendor's own client library the plainest way it offers, measured in the
 * same run: tedious' BulkLoad of x, y, id, name, value into a plain table (SQL Server), and
 * node-oracledb's executeMany of the same columns (Oracle). The ratio is what the connector's
 * staging, WKB → spatial type conversion, spatial index and swap cost on top of the raw load.
 * Runs only against the servers named by SVC_BENCH_SQLSERVER_URL (mssql://user:pw@host:1433/db
 * ?trust_server_certificate=true) and SVC_BENCH_ORACLE_URL (oracle://user:pw@host:1521/SERVICE).
 */

const count = Number(process.env.SVC_BENCH_POINTS ?? 1_000_000);
const workDir = () => mkdtempSync(path.join(tmpdir(), 'svc-bench-sql-'));
const ctx = (): ConnectorContext => ({ signal: new AbortController().signal, log: pino({ level: 'silent' }), workDir: workDir(), maxBytes: 1024 ** 4 });
const seconds = (started: number) => (Date.now() - started) / 1000;

async function* plainRows(file: string): AsyncGenerator<unknown[]> {
  const ds = await gdal.openAsync(file);
  try {
    for await (const f of ds.layers.get(0).features) {
      const p = f.getGeometry() as Point;
      yield [f.fields.get('id'), f.fields.get('name'), f.fields.get('value'), p.x, p.y];
    }
  } finally {
    ds.close();
  }
}

async function sqlServer(config: SqlServerConfig, file: string): Promise<void> {
  const c = await connectSqlServer(config, ctx());
  await query(
    c,
    'DROP TABLE IF EXISTS dbo.geoflow_bench_plain; CREATE TABLE dbo.geoflow_bench_plain (id BIGINT, name NVARCHAR(4000), value FLOAT, x FLOAT, y FLOAT)',
  );
  let started = Date.now();
  await new Promise<void>((resolve, reject) => {
    const load = c.newBulkLoad('dbo.geoflow_bench_plain', { lockTable: true }, (e) => (e ? reject(e) : resolve()));
    load.addColumn('id', TYPES.BigInt, { nullable: true });
    load.addColumn('name', TYPES.NVarChar, { length: 4000, nullable: true });
    for (const n of ['value', 'x', 'y']) load.addColumn(n, TYPES.Float, { nullable: true });
    c.execBulkLoad(load, plainRows(file));
  });
  const baseline = seconds(started);
  await query(c, 'DROP TABLE dbo.geoflow_bench_plain');
  c.close();
  started = Date.now();
  const input = { file, filename: path.basename(file), format: 'GPKG', mediaType: null, layers: ['points'], deliveryId: randomUUID() };
  const result = await deliverSqlServer(config, { schema: 'dbo', table: 'geoflow_bench', write_mode: 'replace', spatial_type: 'geometry' }, input, ctx());
  const connector = seconds(started);
  console.log(
    `sqlserver: ${result.rows_written} points in ${connector.toFixed(1)} s; tedious BulkLoad of the bare columns ${baseline.toFixed(1)} s; ratio ${(connector / baseline).toFixed(2)}`,
  );
}

async function oracle(config: OracleConfig, file: string): Promise<void> {
  const c = await connectOracle(config, ctx());
  await c.execute("BEGIN EXECUTE IMMEDIATE 'DROP TABLE GEOFLOW_BENCH_PLAIN PURGE'; EXCEPTION WHEN OTHERS THEN NULL; END;");
  await c.execute('CREATE TABLE GEOFLOW_BENCH_PLAIN (id NUMBER(19), name VARCHAR2(4000), value BINARY_DOUBLE, x BINARY_DOUBLE, y BINARY_DOUBLE)');
  let started = Date.now();
  let batch: unknown[][] = [];
  const bindDefs = [
    { type: oracledb.NUMBER },
    { type: oracledb.STRING, maxSize: 64 },
    { type: oracledb.NUMBER },
    { type: oracledb.NUMBER },
    { type: oracledb.NUMBER },
  ];
  for await (const row of plainRows(file)) {
    batch.push(row);
    if (batch.length === 5000) {
      await c.executeMany('INSERT INTO GEOFLOW_BENCH_PLAIN VALUES (:1, :2, :3, :4, :5)', batch, { bindDefs, autoCommit: true });
      batch = [];
    }
  }
  if (batch.length) await c.executeMany('INSERT INTO GEOFLOW_BENCH_PLAIN VALUES (:1, :2, :3, :4, :5)', batch, { bindDefs, autoCommit: true });
  const baseline = seconds(started);
  await c.execute('DROP TABLE GEOFLOW_BENCH_PLAIN PURGE');
  await c.close();
  started = Date.now();
  const input = { file, filename: path.basename(file), format: 'GPKG', mediaType: null, layers: ['points'], deliveryId: randomUUID() };
  const result = await deliverOracle(config, { table: 'GEOFLOW_BENCH', write_mode: 'replace' }, input, ctx());
  const connector = seconds(started);
  console.log(
    `oracle: ${result.rows_written} points in ${connector.toFixed(1)} s; executeMany of the bare columns ${baseline.toFixed(1)} s; ratio ${(connector / baseline).toFixed(2)}`,
  );
}

const sqlUrl = process.env.SVC_BENCH_SQLSERVER_URL ? new URL(process.env.SVC_BENCH_SQLSERVER_URL) : null;
const oraUrl = process.env.SVC_BENCH_ORACLE_URL ? new URL(process.env.SVC_BENCH_ORACLE_URL) : null;
if (!sqlUrl && !oraUrl) {
  console.log('bench:sql-bulk needs SVC_BENCH_SQLSERVER_URL and/or SVC_BENCH_ORACLE_URL (no SQL Server or Oracle can run on this machine): nothing measured');
  process.exit(0);
}
const file = pointsFile(path.resolve('.data/bench'), count);
if (sqlUrl) {
  await sqlServer(
    {
      host: sqlUrl.hostname,
      port: Number(sqlUrl.port || 1433),
      database: decodeURIComponent(sqlUrl.pathname.slice(1)),
      username: decodeURIComponent(sqlUrl.username),
      password: decodeURIComponent(sqlUrl.password),
      encrypt: sqlUrl.searchParams.get('encrypt') !== 'false',
      trust_server_certificate: sqlUrl.searchParams.get('trust_server_certificate') === 'true',
    },
    file,
  );
}
if (oraUrl) {
  await oracle(
    {
      host: oraUrl.hostname,
      port: Number(oraUrl.port || 1521),
      service_name: decodeURIComponent(oraUrl.pathname.slice(1)),
      username: decodeURIComponent(oraUrl.username),
      password: decodeURIComponent(oraUrl.password),
    },
    file,
  );
}
