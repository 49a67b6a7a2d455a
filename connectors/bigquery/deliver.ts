import { createHash } from 'node:crypto';
import path from 'node:path';
import type { BigQuery, Job } from '@google-cloud/bigquery';
import { ConnectorError, type DeliveryResult } from '../../domain/transfers.js';
import { writeLayerCsv, type ColumnKind } from '../shared/sql/table-csv.js';
import { freeColumnName, vectorInput } from '../shared/files/vector-input.js';
import type { ConnectorContext, DeliverInput } from '../types.js';
import { bigQueryClient, call, classifyBigQuery, describeServer, GEOGRAPHY_EPSG, ident, tableRef, waitForJob, type BigQueryConfig } from './client.js';
import type { SqlTarget } from '../shared/sql/definition.js';

/*
 * Delivery into a BigQuery table, with load jobs (never streaming inserts): the output is written
 * as CSV (geometry as WKT, reprojected to WGS 84, the only CRS of GEOGRAPHY) and uploaded in ONE
 * load job into a staging table `_geoflow_stage_…` of the dataset, then:
 *   replace  a copy job staging → target with WRITE_TRUNCATE: BigQuery swaps the table's
 *            contents and schema atomically, so readers see the old rows or the new ones;
 *   append   one INSERT … SELECT query job (columns matched by name), atomic like every DML
 *            statement; a missing target is created like `create`;
 *   create   a copy job with WRITE_EMPTY; an existing target is target_exists.
 * Every job's id is derived from the delivery id. BigQuery refuses a second job with an id it
 * knows (409 duplicate), so a retried or resumed delivery finds its own jobs instead of loading
 * twice: jobs are the delivery ledger, kept by BigQuery itself.
 */

export type WriteMode = 'replace' | 'append' | 'create';
export type BigQueryTarget = SqlTarget;

export const STAGE_PREFIX = '_geoflow_stage_';
const tag = (deliveryId: string) => createHash('sha256').update(deliveryId).digest('hex').slice(0, 24);

/** Column kinds → BigQuery types of a new table. */
const bigQueryTypes: Record<ColumnKind, string> = {
  integer: 'INT64',
  real: 'FLOAT64',
  string: 'STRING',
  boolean: 'BOOL',
  date: 'DATE',
  datetime: 'TIMESTAMP',
  time: 'TIME',
  binary: 'BYTES',
};

/** Names BigQuery reserves for its own columns (a column may not start with them). */
const reservedPrefixes = ['_table_', '_file_', '_partition', '_row_timestamp', '__root__', '_colidentifier', '_change_'];

/**
 * Column names as BigQuery takes them everywhere (letters, digits, underscores; not starting with
 * a digit; at most 300 characters; unique without regard to case): accents are dropped
 * (é → e), other characters become `_`, a reserved prefix gets `f`, duplicates get `_2`, `_3` …
 */
export function bigQueryColumnNames(names: string[]): string[] {
  const taken = new Set<string>();
  return names.map((original) => {
    let name = original
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .replace(/[^A-Za-z0-9_]/g, '_');
    if (!name || /^[0-9]/.test(name)) name = `_${name}`;
    if (reservedPrefixes.some((p) => name.toLowerCase().startsWith(p))) name = `f${name}`;
    name = name.slice(0, 300);
    let unique = name;
    for (let n = 2; taken.has(unique.toLowerCase()); n++) unique = `${name.slice(0, 300 - String(n).length - 1)}_${n}`;
    taken.add(unique.toLowerCase());
    return unique;
  });
}

interface Done {
  rows_written: number;
}

const isDuplicate = (error: unknown) => (error as { code?: number }).code === 409;

/** A job of this delivery that already exists (a retry), DONE; null when there is none. */
async function existingJob(config: BigQueryConfig, ctx: ConnectorContext, bq: BigQuery, jobId: string, what: string): Promise<Record<string, any> | null> {
  try {
    const job = bq.job(jobId, config.location ? { location: config.location } : {});
    await call(config, ctx, what, () => job.getMetadata());
    return await waitForJob(config, ctx, job, what);
  } catch (error) {
    if (error instanceof ConnectorError && error.reason === 'not_found') return null;
    throw error;
  }
}

/** Inserts a job with this id, or (409: it exists from an earlier attempt) waits for that one. */
async function runJob(
  config: BigQueryConfig,
  ctx: ConnectorContext,
  bq: BigQuery,
  jobId: string,
  what: string,
  create: () => Promise<Job>,
): Promise<Record<string, any>> {
  let job: Job;
  try {
    job = await create();
  } catch (error) {
    if (!isDuplicate(error)) throw classifyBigQuery(error, `${describeServer(config)}: ${what}`, { job_id: jobId });
    job = bq.job(jobId, config.location ? { location: config.location } : {});
  }
  return waitForJob(config, ctx, job, what);
}

async function tableExists(
  config: BigQueryConfig,
  ctx: ConnectorContext,
  bq: BigQuery,
  table: string,
): Promise<{ fields: { name: string; type: string }[] } | null> {
  try {
    const [metadata] = await call(config, ctx, `reading table ${config.dataset}.${table}`, () => bq.dataset(config.dataset).table(table).getMetadata());
    return { fields: metadata.schema?.fields ?? [] };
  } catch (error) {
    if (error instanceof ConnectorError && error.reason === 'not_found') return null;
    throw error;
  }
}

export async function deliverBigQuery(config: BigQueryConfig, target: BigQueryTarget, input: DeliverInput, ctx: ConnectorContext): Promise<DeliveryResult> {
  const bq = bigQueryClient(config);
  const { table } = target;
  const requested: WriteMode = input.reinitialize && target.write_mode === 'append' ? 'replace' : target.write_mode;
  const id = tag(input.deliveryId);
  const stage = `${STAGE_PREFIX}${id}`;
  const jobs = { load: `geoflow_${id}_load`, copy: `geoflow_${id}_copy`, append: `geoflow_${id}_append` };
  const location = config.location ? { location: config.location } : {};
  const where = `${config.dataset}.${table}`;

  const layer = await vectorInput(input, ctx.workDir);
  let reprojected: { from: string; to: string } | null = null;
  const result = (done: Done, mode: WriteMode): DeliveryResult => ({
    target: {
      project: config.project_id,
      dataset: config.dataset,
      table,
      write_mode: mode,
      ...(layer.base !== 100 ? { crs: `EPSG:${GEOGRAPHY_EPSG}`, geometry_type: 'GEOGRAPHY' } : {}),
      ...(reprojected ? { reprojected } : {}),
    },
    rows_written: done.rows_written,
  });
  if (layer.base !== 100 && layer.epsg !== GEOGRAPHY_EPSG)
    reprojected = { from: layer.epsg ? `EPSG:${layer.epsg}` : 'the layer CRS', to: `EPSG:${GEOGRAPHY_EPSG}` };

  // A retry of a delivery whose last job already ran: nothing is written twice.
  for (const [jobId, mode] of [
    [jobs.copy, requested === 'create' ? 'create' : 'replace'],
    [jobs.append, 'append'],
  ] as const) {
    const done = await existingJob(config, ctx, bq, jobId, 'looking for an earlier attempt');
    if (done) {
      const load = await existingJob(config, ctx, bq, jobs.load, 'looking for an earlier attempt');
      return result({ rows_written: Number(load?.statistics?.load?.outputRows ?? done.statistics?.query?.numDmlAffectedRows ?? 0) }, mode);
    }
  }

  const existing = await tableExists(config, ctx, bq, table);
  if (requested === 'create' && existing)
    throw new ConnectorError('target_exists', `${where} already exists in project ${config.project_id} (write_mode create never overwrites)`, { table }, false);
  const mode: WriteMode = requested === 'append' && !existing ? 'create' : requested;

  // The load file: geometry first (WKT, WGS 84), then the attributes.
  const names = bigQueryColumnNames(layer.fields);
  const geometryName = freeColumnName(names, 'geom', 'geometry');
  const csv = path.join(ctx.workDir, `${id}.csv`);
  const written = await writeLayerCsv(layer, csv, { targetEpsg: GEOGRAPHY_EPSG, geometryName }, ctx);
  const fields = [
    ...(written.geometry ? [{ name: geometryName, type: 'GEOGRAPHY', mode: 'NULLABLE' }] : []),
    ...written.columns.map((c, i) => ({ name: names[i]!, type: bigQueryTypes[c.kind], mode: 'NULLABLE' })),
  ];
  if (mode === 'append') {
    const have = new Set(existing!.fields.map((f) => f.name.toLowerCase()));
    const missing = fields.filter((f) => !have.has(f.name.toLowerCase())).map((f) => f.name);
    if (missing.length)
      throw new ConnectorError(
        'invalid_data',
        `${where} has no column ${missing.join(', ')} of the output (append matches columns by name)`,
        { missing },
        false,
      );
  }

  const stageTable = bq.dataset(config.dataset).table(stage);
  try {
    const load = await runJob(config, ctx, bq, jobs.load, 'loading the staging table', async () => {
      const [job] = await stageTable.createLoadJob(csv, {
        jobId: jobs.load,
        ...location,
        sourceFormat: 'CSV',
        skipLeadingRows: 1,
        allowQuotedNewlines: true,
        encoding: 'UTF-8',
        schema: { fields },
        writeDisposition: 'WRITE_TRUNCATE',
        createDisposition: 'CREATE_IF_NEEDED',
      });
      return job;
    });
    const rows = Number(load.statistics?.load?.outputRows ?? written.rows);
    const destination = { projectId: config.project_id, datasetId: config.dataset, tableId: table };
    const source = { projectId: config.project_id, datasetId: config.dataset, tableId: stage };
    if (mode === 'append') {
      const columns = fields.map((f) => ident(f.name)).join(', ');
      await runJob(config, ctx, bq, jobs.append, `appending to ${where}`, async () => {
        const [job] = await bq.createQueryJob({
          jobId: jobs.append,
          ...location,
          useLegacySql: false,
          query: `INSERT INTO ${tableRef(config.project_id, config.dataset, table)} (${columns}) SELECT ${columns} FROM ${tableRef(config.project_id, config.dataset, stage)}`,
        });
        return job;
      });
    } else {
      await runJob(config, ctx, bq, jobs.copy, `${mode === 'replace' ? 'replacing' : 'creating'} ${where}`, async () => {
        const [job] = await bq.createJob({
          jobId: jobs.copy,
          ...location,
          configuration: {
            copy: {
              sourceTables: [source],
              destinationTable: destination,
              writeDisposition: mode === 'replace' ? 'WRITE_TRUNCATE' : 'WRITE_EMPTY',
              createDisposition: 'CREATE_IF_NEEDED',
            },
          },
        });
        return job;
      });
    }
    return result({ rows_written: rows }, mode);
  } finally {
    await call(config, { ...ctx, signal: AbortSignal.timeout(20_000) }, 'dropping the staging table', () => stageTable.delete({ ignoreNotFound: true })).catch(
      () => undefined,
    );
  }
}
