import { existsSync, readdirSync, statfsSync, statSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { Config } from '../platform/config.js';
import { filesUnder } from '../platform/folder-size.js';
import { bucketObjects } from './backup.js';

/*
 * The disk each part of an install uses, for `npm run disk` (docs/operators.md, "Disk usage"):
 * the service database (its event store, read models and sessions apart), the local PostgreSQL
 * cluster's folder when `npm start` runs one, the stored files (Workspaces' and Runs' folders, or
 * the bucket's objects), Temporal's history (the dev server's file), the rest of the data folder,
 * and the free space of the data folder's disk. A part that cannot be measured says why instead
 * of a number, so the rest still prints when, say, the database is down.
 */

export interface DiskPart {
  /** A stable name: database, database.<schema or table>, postgres_folder, files.<folder>, bucket.<prefix>, temporal, data_other. */
  part: string;
  bytes: number | null;
  /** Files or objects it holds, where that is known. */
  objects?: number;
  /** Where it lives (a folder, a file, a database or bucket address without credentials). */
  where: string;
  /** Why there is no number, or what it means. */
  note?: string;
}

export interface DiskUsage {
  measured_at: string;
  parts: DiskPart[];
  /** The file system holding SVC_DATA_DIR. */
  data_disk: { path: string; size_bytes: number; free_bytes: number; free_ratio: number };
  /** Events and Runs recorded, to read the database's size per Run. */
  counts: { events: number; runs: number } | null;
}

/** A database address for display: host, port and database, never the user or password. */
function databaseWhere(url: string): string {
  try {
    const u = new URL(url);
    return `postgresql://${u.host}${u.pathname}`;
  } catch {
    return 'SVC_DATABASE_URL';
  }
}

async function databaseParts(url: string, withCounts: boolean): Promise<{ parts: DiskPart[]; counts: DiskUsage['counts'] }> {
  const where = databaseWhere(url);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
  } catch (error) {
    return { parts: [{ part: 'database', bytes: null, where, note: `not reachable: ${(error as Error).message}` }], counts: null };
  }
  try {
    const total = Number((await client.query<{ n: string }>('SELECT pg_database_size(current_database()) AS n')).rows[0]!.n);
    // Each schema's tables with their indexes and TOAST; the event store's table on its own.
    const bySchema = (
      await client.query<{ name: string; n: string }>(`
        SELECT CASE WHEN n.nspname = 'public' AND c.relname = 'events' THEN 'events' ELSE n.nspname END AS name,
               sum(pg_total_relation_size(c.oid))::bigint AS n
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE c.relkind IN ('r', 'm', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
         GROUP BY 1 ORDER BY 2 DESC`)
    ).rows;
    const label: Record<string, string> = { events: 'event store (table events)', rm: 'read models (schema rm)', app: 'sessions (schema app)' };
    const parts: DiskPart[] = [{ part: 'database', bytes: total, where, note: 'pg_database_size: tables, indexes and catalogs' }];
    for (const row of bySchema) {
      parts.push({ part: `database.${row.name}`, bytes: Number(row.n), where, note: label[row.name] ?? `schema ${row.name}` });
    }
    // Counting reads the whole events table: for `npm run disk`, not for every scrape.
    if (!withCounts) return { parts, counts: null };
    const counts = (
      await client.query<{ events: string; runs: string }>(
        `SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM events WHERE type = 'RunQueued') AS runs`,
      )
    ).rows[0]!;
    return { parts, counts: { events: Number(counts.events), runs: Number(counts.runs) } };
  } catch (error) {
    return { parts: [{ part: 'database', bytes: null, where, note: `could not be measured: ${(error as Error).message}` }], counts: null };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The folders of the data folder that are parts of their own (the rest is `data_other`). */
const OWN_FOLDERS = ['pg', 'workspaces', 'runs'];
/** The local Temporal dev server's database (npm start keeps it in the data folder), with SQLite's side files. */
const TEMPORAL_FILES = ['temporal.db', 'temporal.db-wal', 'temporal.db-shm'];

async function bucketParts(config: Config): Promise<DiskPart[]> {
  const where = config.storage!.url;
  try {
    const byPrefix = new Map<string, { bytes: number; objects: number }>();
    for (const o of await bucketObjects(config)) {
      const top = o.key.split('/')[0] || '(top)';
      const sum = byPrefix.get(top) ?? { bytes: 0, objects: 0 };
      sum.bytes += o.size;
      sum.objects += 1;
      byPrefix.set(top, sum);
    }
    if (byPrefix.size === 0) return [{ part: 'bucket', bytes: 0, objects: 0, where, note: 'no objects under the prefix' }];
    return [...byPrefix].map(([prefix, sum]) => ({
      part: `bucket.${prefix}`,
      bytes: sum.bytes,
      objects: sum.objects,
      where: `${where.replace(/\/$/, '')}/${prefix}`,
    }));
  } catch (error) {
    return [{ part: 'bucket', bytes: null, where, note: `could not be listed: ${(error as Error).message}` }];
  }
}

/** Everything else in the data folder (the secrets key, scratch folders, logs, installed tools). */
async function restOfDataFolder(dataDir: string): Promise<DiskPart> {
  let bytes = 0;
  let objects = 0;
  const skip = new Set([...OWN_FOLDERS, ...TEMPORAL_FILES]);
  for (const entry of existsSync(dataDir) ? readdirSync(dataDir, { withFileTypes: true }) : []) {
    if (skip.has(entry.name) || entry.isSymbolicLink()) continue;
    const full = path.join(dataDir, entry.name);
    if (entry.isDirectory()) {
      const sum = await filesUnder(full);
      bytes += sum.bytes;
      objects += sum.objects;
    } else if (entry.isFile()) {
      bytes += statSync(full).size;
      objects += 1;
    }
  }
  return { part: 'data_other', bytes, objects, where: dataDir, note: 'the rest of the data folder (secrets key, scratch, tools)' };
}

export interface MeasureOptions {
  /**
   * List the bucket's objects (SVC_STORAGE_URL), walk the rest of the data folder and count the
   * events and Runs. `npm run disk` does; the API's metrics, measuring every minute, leave these
   * out: a bucket's own metrics tell its size, the rest (installed tools, scratch) hardly changes,
   * and counting reads every event.
   */
  everything?: boolean;
}

/**
 * Measures every part: `npm run disk` prints it, and the API's `geoflow_storage_bytes` gauge is
 * set from it (application/metrics-collectors.ts), so both name the same parts. Reads only: the
 * service may run meanwhile.
 */
export async function measureDiskUsage(config: Config, { everything = true }: MeasureOptions = {}): Promise<DiskUsage> {
  const { dataDir } = config;
  const database = await databaseParts(config.databaseUrl, everything);
  const parts = [...database.parts];

  const pgFolder = path.join(dataDir, 'pg');
  if (existsSync(pgFolder)) {
    const sum = await filesUnder(pgFolder);
    parts.push({
      part: 'postgres_folder',
      bytes: sum.bytes,
      objects: sum.objects,
      where: pgFolder,
      note: "the local cluster npm start runs: every database, WAL and PostgreSQL's own files",
    });
  }

  if (config.storage) {
    if (everything) parts.push(...(await bucketParts(config)));
  } else {
    for (const folder of ['workspaces', 'runs']) {
      const sum = await filesUnder(path.join(dataDir, folder));
      parts.push({ part: `files.${folder}`, bytes: sum.bytes, objects: sum.objects, where: path.join(dataDir, folder) });
    }
  }

  const temporalFiles = TEMPORAL_FILES.map((f) => path.join(dataDir, f)).filter((f) => existsSync(f));
  parts.push(
    temporalFiles.length
      ? {
          part: 'temporal',
          bytes: temporalFiles.reduce((s, f) => s + statSync(f).size, 0),
          where: temporalFiles[0]!,
          note: "the dev server's history of every workflow (closed ones kept for the namespace's retention)",
        }
      : { part: 'temporal', bytes: null, where: config.temporalAddress, note: 'Temporal keeps its history in its own persistence: measure it there' },
  );

  if (everything) parts.push(await restOfDataFolder(dataDir));

  const fs = statfsSync(existsSync(dataDir) ? dataDir : path.dirname(dataDir));
  const size = fs.blocks * fs.bsize;
  const free = fs.bavail * fs.bsize;
  return {
    measured_at: new Date().toISOString(),
    parts,
    data_disk: { path: dataDir, size_bytes: size, free_bytes: free, free_ratio: size ? free / size : 0 },
    counts: database.counts,
  };
}

/** Below this share of free space `npm run disk` warns (and exits 3), before Runs fail with insufficient_storage. */
export const LOW_FREE_RATIO = 0.1;

const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;

/** The report as `npm run disk` prints it. */
export function formatDiskUsage(usage: DiskUsage): string {
  const lines: string[] = [];
  const width = Math.max(...usage.parts.map((p) => p.part.length));
  for (const p of usage.parts) {
    const size = p.bytes === null ? '—' : mb(p.bytes);
    const objects = p.objects === undefined ? '' : ` in ${p.objects} ${p.objects === 1 ? 'file' : 'files'}`;
    const indent = p.part.startsWith('database.') ? '  ' : '';
    lines.push(`${indent}${p.part.padEnd(width - indent.length)}  ${size.padStart(11)}${objects}  ${p.where}${p.note ? ` (${p.note})` : ''}`);
  }
  if (usage.counts) {
    const db = usage.parts.find((p) => p.part === 'database')?.bytes;
    const perRun = db && usage.counts.runs ? `, ${(db / usage.counts.runs / 1024).toFixed(1)} kB of database per Run` : '';
    lines.push(`recorded: ${usage.counts.events} events, ${usage.counts.runs} Runs${perRun}`);
  }
  const d = usage.data_disk;
  lines.push(`data disk: ${mb(d.free_bytes)} free of ${mb(d.size_bytes)} (${(d.free_ratio * 100).toFixed(1)} %) under ${d.path}`);
  if (d.free_ratio < LOW_FREE_RATIO) {
    lines.push(
      `warning: less than ${LOW_FREE_RATIO * 100} % of the data disk is free; Runs and uploads fail with insufficient_storage when it is full (docs/operators.md, "Disk usage")`,
    );
  }
  return lines.join('\n');
}
