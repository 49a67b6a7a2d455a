import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { bigQueryClient } from '../connectors/bigquery/client.js';
import { bigquery } from '../connectors/bigquery/index.js';
import { withSession } from '../connectors/snowflake/client.js';
import { snowflake } from '../connectors/snowflake/index.js';
import { connectorContext, deliverInput } from '../devservers/connector-context.js';
import { startBigQueryServer } from '../devservers/bigquery/server.js';
import { startFakesnow } from '../devservers/fakesnow/server.js';
import { pointsFile } from './points.js';

/**
 * `npm run bench:warehouses`: BENCH_POINTS points (1,000,000) delivered by the bigquery and
 * snowflake connectors (write_mode replace: CSV written from the GeoPackage, bulk load, swap)
 * against the vendor client's own bulk load of the same rows, as a CSV prepared beforehand by
 * ogr2ogr, in the same run against the same local servers: the BigQuery REST stand-in (a load job
 * through @google-cloud/bigquery's table.load) and fakesnow (snowflake-sdk's PUT + COPY INTO).
 * Both servers are stand-ins, so the ratio measures the connector's own overhead (writing the
 * CSV, the staging table, the swap), not what BigQuery or Snowflake would take.
 */
const POINTS = Number(process.env.BENCH_POINTS ?? 1_000_000);
const dir = path.resolve('.data/bench/files');
const gpkg = pointsFile(dir, POINTS);
const csv = path.join(dir, `points-${POINTS}.csv`);
rmSync(csv, { force: true });
execFileSync('ogr2ogr', ['-f', 'CSV', csv, gpkg, '-lco', 'GEOMETRY=AS_WKT'], { stdio: 'inherit' });

const seconds = async (fn: () => Promise<unknown>) => {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e9;
};
const report = (name: string, baseline: number, connector: number) =>
  console.log(
    `${name}: vendor client ${baseline.toFixed(1)} s, connector ${connector.toFixed(1)} s, ratio ${(connector / baseline).toFixed(2)} (${Math.round(POINTS / connector)} points/s)`,
  );

{
  const server = await startBigQueryServer();
  try {
    const config = { project_id: server.project, dataset: 'bench', credentials_json: JSON.stringify(server.keys.writer), api_endpoint: server.endpoint };
    const bq = bigQueryClient(config);
    await bq.createDataset('bench');
    const baseline = await seconds(() =>
      bq
        .dataset('bench')
        .table('baseline')
        .load(csv, {
          sourceFormat: 'CSV',
          skipLeadingRows: 1,
          writeDisposition: 'WRITE_TRUNCATE',
          schema: {
            fields: [
              { name: 'WKT', type: 'GEOGRAPHY' },
              { name: 'id', type: 'INT64' },
              { name: 'name', type: 'STRING' },
              { name: 'value', type: 'FLOAT64' },
            ],
          },
        }),
    );
    const ctx = connectorContext({ maxBytes: 1024 ** 4 });
    const connector = await seconds(() =>
      bigquery.destination!.deliver(config, { table: 'points', write_mode: 'replace' }, deliverInput(gpkg, randomUUID()), ctx),
    );
    report('bigquery (REST stand-in)', baseline, connector);
  } finally {
    await server.stop();
  }
}

{
  const server = await startFakesnow();
  try {
    const config = { account: 'bench', username: 'bench', password: 'bench', database: 'BENCH', schema: 'PUBLIC', access_url: server.accessUrl };
    const baseline = await seconds(() =>
      withSession(config, connectorContext(), async (s) => {
        await s.query('CREATE OR REPLACE TABLE BASELINE (WKT VARCHAR, ID NUMBER, NAME VARCHAR, VALUE FLOAT)');
        await s.query('CREATE OR REPLACE TEMPORARY STAGE BENCH_STAGE');
        await s.query(`PUT 'file://${csv}' @BENCH_STAGE AUTO_COMPRESS = TRUE OVERWRITE = TRUE`);
        await s.query(`COPY INTO BASELINE FROM @BENCH_STAGE FILE_FORMAT = (TYPE = CSV SKIP_HEADER = 1 FIELD_OPTIONALLY_ENCLOSED_BY = '"')`);
      }),
    );
    const ctx = connectorContext({ maxBytes: 1024 ** 4 });
    const connector = await seconds(() =>
      snowflake.destination!.deliver(config, { table: 'POINTS', write_mode: 'replace', spatial_type: 'auto' }, deliverInput(gpkg, randomUUID()), ctx),
    );
    report('snowflake (fakesnow)', baseline, connector);
  } finally {
    await server.stop();
  }
}
