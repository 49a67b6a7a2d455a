import path from 'node:path';
import { rm, stat } from 'node:fs/promises';
import type { BigQuery } from '@google-cloud/bigquery';
import { safeFilename } from '../../geo/datasets/dataset-files.js';
import { ConnectorError } from '../../domain/transfers.js';
import { asSubquery } from '../shared/sql/sql.js';
import { csvToGeoPackage, RowsCsv, type ColumnKind } from '../shared/sql/table-csv.js';
import type { ConnectorContext, ExtractOptions, ExtractResult } from '../types.js';
import { bigQueryClient, call, describeServer, GEOGRAPHY_EPSG, ident, tableRef, waitForJob, type BigQueryConfig } from './client.js';
import type { SqlResource } from '../shared/sql/definition.js';

/*
 * A BigQuery table or query into one GeoPackage layer. A table is read page by page with
 * tabledata.list (no query, no bytes billed); a query, or a table read incrementally, runs as a
 * query job whose results are read page by page with getQueryResults. Values arrive as BigQuery's
 * REST API sends them (text, TIMESTAMP as microseconds, GEOGRAPHY as WKT), are written to a CSV
 * with GDAL types, and ogr2ogr makes the GeoPackage: the GEOGRAPHY column (the one named, else
 * the first) is the layer's geometry in EPSG:4326, other GEOGRAPHY columns stay WKT text.
 */

export type BigQueryResource = SqlResource<{ geometry_column?: string | undefined }, { geometry_column?: string | undefined }>;

/** What a BigQuery Source remembers between Runs: the cursor column, its type and the largest value read. */
export interface BigQueryCursor {
  column: string;
  type: string;
  /** `CAST(MAX(column) AS STRING)`: a literal of the column's own type. */
  value: string | null;
}

interface SchemaField {
  name: string;
  type: string;
  mode?: string;
  fields?: SchemaField[];
}

const PAGE_ROWS = 10_000;

/** BigQuery's column types (legacy and GoogleSQL names) → column kinds of the CSV. */
export function kindOfBigQuery(field: SchemaField): ColumnKind {
  if (field.mode === 'REPEATED') return 'string';
  switch (field.type.toUpperCase()) {
    case 'INTEGER':
    case 'INT64':
      return 'integer';
    case 'FLOAT':
    case 'FLOAT64':
      return 'real';
    case 'NUMERIC':
    case 'BIGNUMERIC':
      // GDAL has no decimal field: a GeoPackage holds them as REAL.
      return 'real';
    case 'BOOLEAN':
    case 'BOOL':
      return 'boolean';
    case 'DATE':
      return 'date';
    case 'DATETIME':
    case 'TIMESTAMP':
      return 'datetime';
    case 'TIME':
      return 'time';
    default:
      return 'string';
  }
}

/** A REST cell (`{v}`) as text: TIMESTAMP microseconds → ISO 8601 UTC, records and arrays → JSON. */
export function cellText(field: SchemaField, cell: unknown): string | null {
  const v = (cell as { v?: unknown } | null)?.v;
  if (v === null || v === undefined) return null;
  if (field.mode === 'REPEATED' || field.type.toUpperCase() === 'RECORD' || field.type.toUpperCase() === 'STRUCT') return JSON.stringify(plain(field, v));
  const type = field.type.toUpperCase();
  if (type === 'TIMESTAMP') {
    const text = String(v);
    // useInt64Timestamp: microseconds since the epoch; older answers: seconds as a float.
    const micros = /^-?\d+$/.test(text) ? BigInt(text) : BigInt(Math.round(Number(text) * 1e6));
    const ms = Number(micros / 1000n);
    const rest = Number(((micros % 1000n) + 1000n) % 1000n);
    const iso = new Date(ms).toISOString();
    return rest ? iso.replace('Z', `${String(rest).padStart(3, '0')}Z`) : iso;
  }
  if (type === 'BOOLEAN' || type === 'BOOL') return String(v).toLowerCase() === 'true' ? '1' : '0';
  return String(v);
}

/** A record's or array's REST value as plain JSON. */
function plain(field: SchemaField, v: unknown): unknown {
  if (field.mode === 'REPEATED') return ((v as { v: unknown }[]) ?? []).map((item) => plain({ ...field, mode: 'NULLABLE' }, item.v));
  if ((field.type.toUpperCase() === 'RECORD' || field.type.toUpperCase() === 'STRUCT') && v && typeof v === 'object') {
    const cells = (v as { f: { v: unknown }[] }).f ?? [];
    return Object.fromEntries((field.fields ?? []).map((sub, i) => [sub.name, plain(sub, cells[i]?.v ?? null)]));
  }
  return v;
}

interface Page {
  rows?: { f: unknown[] }[];
  pageToken?: string;
  schema?: { fields?: SchemaField[] };
  jobComplete?: boolean;
}

/** A REST call through the client's authenticated transport, answered with the raw JSON (values as BigQuery sends them). */
const rest = (bq: BigQuery, request: { uri: string; qs: Record<string, unknown> }) =>
  new Promise<Page>((resolve, reject) => bq.request(request, (error, body) => (error ? reject(error) : resolve(body as Page))));

/** Pages of a table (tabledata.list) or of a finished query job (getQueryResults). */
async function* pages(
  config: BigQueryConfig,
  ctx: ConnectorContext,
  bq: BigQuery,
  source: { table: string } | { jobId: string; location?: string },
): AsyncGenerator<Page> {
  let pageToken: string | undefined;
  do {
    const qs: Record<string, unknown> = { maxResults: PAGE_ROWS, 'formatOptions.useInt64Timestamp': true, ...(pageToken ? { pageToken } : {}) };
    const page = await call(config, ctx, 'reading rows', async () => {
      if ('table' in source) return rest(bq, { uri: `/datasets/${encodeURIComponent(config.dataset)}/tables/${encodeURIComponent(source.table)}/data`, qs });
      for (;;) {
        const body = await rest(bq, {
          uri: `/queries/${encodeURIComponent(source.jobId)}`,
          qs: { ...qs, ...(source.location ? { location: source.location } : {}), timeoutMs: 10_000 },
        });
        if (body.jobComplete !== false) return body;
      }
    });
    yield page;
    pageToken = page.pageToken;
  } while (pageToken);
}

interface Plan {
  name: string;
  /** Read the table directly … */
  table?: string;
  /** … or run this query. */
  query?: string;
  params?: Record<string, unknown>;
  types?: Record<string, string>;
  cursor?: BigQueryCursor;
  unchanged?: boolean;
}

async function tableSchema(config: BigQueryConfig, ctx: ConnectorContext, bq: BigQuery, table: string): Promise<SchemaField[]> {
  const [metadata] = await call(config, ctx, `reading table ${config.dataset}.${table}`, () => bq.dataset(config.dataset).table(table).getMetadata());
  return (metadata.schema?.fields ?? []) as SchemaField[];
}

async function scalar(
  config: BigQueryConfig,
  ctx: ConnectorContext,
  bq: BigQuery,
  query: string,
  params: Record<string, unknown>,
  types: Record<string, string>,
): Promise<string | null> {
  const [job] = await call(config, ctx, 'reading the cursor', () =>
    bq.createQueryJob({ query, params, types, useLegacySql: false, ...(config.location ? { location: config.location } : {}) }),
  );
  await waitForJob(config, ctx, job, 'reading the cursor');
  for await (const page of pages(config, ctx, bq, { jobId: job.id!, ...(job.location ? { location: job.location } : {}) })) {
    const v = (page.rows?.[0]?.f?.[0] as { v?: unknown } | undefined)?.v;
    return v === null || v === undefined ? null : String(v);
  }
  return null;
}

async function plan(config: BigQueryConfig, ctx: ConnectorContext, bq: BigQuery, resource: BigQueryResource, previous: BigQueryCursor | null): Promise<Plan> {
  if ('query' in resource) return { name: 'query', query: `SELECT * FROM ${asSubquery(resource.query)}` };
  const { table } = resource;
  const column = resource.cursor_column;
  if (!column) return { name: table, table };
  const field = (await tableSchema(config, ctx, bq, table)).find((f) => f.name.toLowerCase() === column.toLowerCase());
  if (!field)
    throw new ConnectorError('not_found', `${describeServer(config)}: table ${config.dataset}.${table} has no column ${column}`, { table, column }, false);
  const type = field.type.toUpperCase() === 'INTEGER' ? 'INT64' : field.type.toUpperCase() === 'FLOAT' ? 'FLOAT64' : field.type.toUpperCase();
  // A cursor kept for another column (the Job changed it) does not apply.
  const last = previous?.column === field.name && previous.type === type ? previous.value : null;
  const from = tableRef(config.project_id, config.dataset, table);
  const params: Record<string, unknown> = last !== null ? { last } : {};
  const types: Record<string, string> = last !== null ? { last: type } : {};
  const above = last !== null ? ` WHERE ${ident(field.name)} > @last` : '';
  const max = await scalar(config, ctx, bq, `SELECT CAST(MAX(${ident(field.name)}) AS STRING) AS max FROM ${from}${above}`, params, types);
  const where: string[] = [];
  if (last !== null) where.push(`${ident(field.name)} > @last`);
  // Rows added after the max was read wait for the next Run.
  if (max !== null) {
    where.push(`${ident(field.name)} <= @max`);
    params.max = max;
    types.max = type;
  }
  return {
    name: table,
    query: `SELECT * FROM ${from}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`,
    params,
    types,
    cursor: { column: field.name, type, value: max ?? last },
    unchanged: last !== null && max === null,
  };
}

/** On-change: whether the cursor column holds a value above the last Run's (one aggregate query; BigQuery bills it by the column's bytes). */
export async function bigQueryChanged(config: BigQueryConfig, resource: BigQueryResource, ctx: ConnectorContext, kept: unknown): Promise<boolean> {
  return !(await plan(config, ctx, bigQueryClient(config), resource, (kept ?? null) as BigQueryCursor | null)).unchanged;
}

/**
 * A user's query is read-only by construction: before it runs, a dry run (BigQuery plans it and
 * runs nothing) must call it one SELECT. The subquery wrapping alone did not hold: a `)` in the
 * text closes it, and BigQuery runs the rest as a multi-statement script (DML, DDL, anything the
 * account may do). A dry run of a script answers SCRIPT; DML and DDL answer their own types.
 */
async function mustBeOneSelect(config: BigQueryConfig, ctx: ConnectorContext, bq: BigQuery, query: string): Promise<void> {
  const [, dry] = await call(config, ctx, 'checking the query (dry run)', () =>
    bq.createQueryJob({ query, dryRun: true, useLegacySql: false, ...(config.location ? { location: config.location } : {}) }),
  );
  const type = String((dry as { statistics?: { query?: { statementType?: string } } } | undefined)?.statistics?.query?.statementType ?? 'unknown');
  if (type !== 'SELECT') {
    throw new ConnectorError(
      'invalid_data',
      `${describeServer(config)}: the query is ${type === 'SCRIPT' ? 'a script of several statements' : `a ${type} statement`} (statementType ${type} in BigQuery's dry run), not one SELECT: a query Source only reads, and nothing was run`,
      { statement_type: type },
      false,
    );
  }
}

export async function extractBigQuery(
  config: BigQueryConfig,
  resource: BigQueryResource,
  ctx: ConnectorContext,
  options: ExtractOptions,
): Promise<ExtractResult> {
  const bq = bigQueryClient(config);
  const p = await plan(config, ctx, bq, resource, (options.sync?.cursor ?? null) as BigQueryCursor | null);
  // Nothing newer than the last Run: the rest of the Run is skipped.
  if (p.unchanged) return { file: '', filename: '', bytes: 0, features: 0, sync: options.sync!, unchanged: true };

  let source: { table: string } | { jobId: string; location?: string };
  let schema: SchemaField[] | undefined;
  if (p.table) {
    schema = await tableSchema(config, ctx, bq, p.table);
    source = { table: p.table };
  } else {
    const what = 'query' in resource ? 'running the query' : `reading ${config.dataset}.${p.name}`;
    if ('query' in resource) await mustBeOneSelect(config, ctx, bq, p.query!);
    const [job] = await call(config, ctx, what, () =>
      bq.createQueryJob({
        query: p.query!,
        useLegacySql: false,
        ...(p.params && Object.keys(p.params).length ? { params: p.params, types: p.types } : {}),
        ...(config.location ? { location: config.location } : {}),
      }),
    );
    await waitForJob(config, ctx, job, what);
    source = { jobId: job.id!, ...(job.location ? { location: job.location } : {}) };
  }

  const base = safeFilename(p.name).replace(/\.[^.]*$/, '') || 'data';
  const csv = path.join(ctx.workDir, `${base}.csv`);
  const file = path.join(ctx.workDir, `${base}.gpkg`);
  let writer: RowsCsv | undefined;
  let geometryIndex = -1;
  let fields: SchemaField[] = [];
  let order: number[] = [];
  try {
    for await (const page of pages(config, ctx, bq, source)) {
      if (!writer) {
        fields = schema ?? page.schema?.fields ?? [];
        const named = resource.geometry_column?.toLowerCase();
        geometryIndex = fields.findIndex((f) => f.type.toUpperCase() === 'GEOGRAPHY' && f.mode !== 'REPEATED' && (!named || f.name.toLowerCase() === named));
        if (named && geometryIndex < 0)
          throw new ConnectorError(
            'not_found',
            `${describeServer(config)}: no GEOGRAPHY column ${resource.geometry_column} in the result`,
            { geometry_column: resource.geometry_column },
            false,
          );
        // The geometry first, so GDAL takes it as the layer's geometry (the CSV keeps no other order).
        order = geometryIndex >= 0 ? [geometryIndex, ...fields.map((_, i) => i).filter((i) => i !== geometryIndex)] : fields.map((_, i) => i);
        writer = new RowsCsv(
          csv,
          order.map((i) => ({ name: fields[i]!.name, kind: i === geometryIndex ? 'wkt' : kindOfBigQuery(fields[i]!) })),
          ctx,
        );
      }
      for (const row of page.rows ?? []) await writer.row(order.map((i) => cellText(fields[i]!, row.f[i])));
      ctx.progress?.({ features: writer.rows });
    }
    if (!writer) throw new ConnectorError('invalid_response', `${describeServer(config)}: the answer had no schema`, {}, false);
    await writer.close();
  } catch (error) {
    await writer?.destroy();
    await rm(csv, { force: true });
    throw error;
  }
  const geometry = geometryIndex >= 0 ? { name: fields[geometryIndex]!.name, epsg: GEOGRAPHY_EPSG } : null;
  try {
    await csvToGeoPackage(
      writer,
      file,
      p.name,
      geometry,
      ctx,
      `Reading ${'query' in resource ? 'the query' : `${config.dataset}.${p.name}`} (${describeServer(config)})`,
    );
  } catch (error) {
    await rm(file, { force: true });
    throw error;
  } finally {
    await rm(csv, { force: true });
    await rm(writer.csvt, { force: true });
  }
  const filename = path.basename(file);
  return { file, filename, bytes: (await stat(file)).size, features: writer.rows, ...(p.cursor ? { sync: { cursor: p.cursor } } : {}) };
}
