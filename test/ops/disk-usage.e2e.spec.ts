import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect } from 'vitest';
import { type DiskUsage, LOW_FREE_RATIO } from '../../application/disk-usage.js';
import { startTemporal } from '../../scripts/local-services.js';
import { freePort } from '../../devservers/ports.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest } from '../support/e2e.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { runScript, temporalMissing } from './support.js';

/*
 * npm run disk on a running install: each part's bytes are what the database, the data folder and
 * the Temporal dev server's file really hold (measured here another way), and an upload grows the
 * Workspaces' part by its files.
 */
const skip = skipWithoutDatabase || temporalMissing;
const it = e2eTest({ scopes: ['workspaces:read', 'workspaces:write'] });

/** Bytes and files under a folder, walked here (not with the find the script uses). */
const walk = (dir: string) => {
  let bytes = 0;
  let objects = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    bytes += statSync(path.join(e.parentPath, e.name)).size;
    objects += 1;
  }
  return { bytes, objects };
};

describe.skipIf(skip)(`npm run disk${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const cleanups: (() => unknown)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  });

  it("reports the database, the stored files and Temporal's history as they are, and grows with an upload", async ({ sut, upload: uploadFile }) => {
    const dataDir = sut.services.config.dataDir;
    // The dev server keeps its history in the data folder, as npm start runs it.
    const temporal = await startTemporal(path.resolve(process.env.SVC_DATA_DIR ?? '.data'), await freePort(), { dbFile: path.join(dataDir, 'temporal.db') });
    cleanups.push(() => temporal.stop());
    const env: Record<string, string> = { ...sut.env, SVC_TEMPORAL_ADDRESS: temporal.address };
    const disk = async () => {
      const r = await runScript('scripts/disk-usage.ts', ['--json'], env);
      // The report is printed either way; the exit code says whether this machine's data disk is low.
      const usage = JSON.parse(r.output) as DiskUsage;
      expect(r.code, r.output).toBe(usage.data_disk.free_ratio < LOW_FREE_RATIO ? 3 : 0);
      return usage;
    };
    const part = (usage: DiskUsage, name: string) => usage.parts.find((p) => p.part === name);

    const upload = async (points: number) => {
      const res = await uploadFile(pointsGeoJson(fixtureDir(), points));
      expect(res.statusCode, res.body).toBe(201);
    };
    await upload(50);
    const first = await disk();
    await upload(5000);
    const second = await disk();

    // The database as PostgreSQL measures it, the event store within it, the events counted.
    const client = new pg.Client({ connectionString: env.SVC_DATABASE_URL });
    await client.connect();
    const facts = (
      await client.query<{ db: string; events: string; n: string }>(
        "SELECT pg_database_size(current_database()) AS db, pg_total_relation_size('events') AS events, (SELECT count(*) FROM events) AS n",
      )
    ).rows[0]!;
    // Closed before the app's close drops the database under it.
    await client.end();
    const database = part(second, 'database')!.bytes!;
    expect(database).toBeGreaterThan(0);
    // The database grows only by what the script's own read leaves (statistics, a page or two).
    expect(Math.abs(database - Number(facts.db))).toBeLessThan(0.05 * Number(facts.db));
    expect(part(second, 'database.events')!.bytes).toBe(Number(facts.events));
    expect(part(second, 'database.rm')!.bytes).toBeGreaterThan(0);
    expect(second.counts).toEqual({ events: Number(facts.n), runs: 0 });
    // Every schema's share is within the database's size.
    const shares = second.parts.filter((p) => p.part.startsWith('database.')).reduce((s, p) => s + p.bytes!, 0);
    expect(shares).toBeLessThanOrEqual(database);

    // The stored files: what the Workspaces' folder holds, and the second upload's file (kept as uploaded) on top.
    const stored = walk(path.join(dataDir, 'workspaces'));
    expect(part(second, 'files.workspaces')).toMatchObject({ bytes: stored.bytes, objects: stored.objects });
    expect(part(second, 'files.workspaces')!.bytes! - part(first, 'files.workspaces')!.bytes!).toBeGreaterThanOrEqual(
      statSync(pointsGeoJson(fixtureDir(), 5000)).size,
    );

    // Temporal's history: the dev server's file (and SQLite's side files) in the data folder.
    const temporalBytes = ['temporal.db', 'temporal.db-wal', 'temporal.db-shm']
      .map((f) => path.join(dataDir, f))
      .reduce((s, f) => s + (statSync(f, { throwIfNoEntry: false })?.size ?? 0), 0);
    expect(part(second, 'temporal')!.bytes).toBeGreaterThan(0);
    expect(Math.abs(part(second, 'temporal')!.bytes! - temporalBytes)).toBeLessThan(4 * 1024 * 1024);

    // The data disk as the kernel reports it; the secrets key in the rest of the folder.
    expect(second.data_disk.free_bytes).toBeGreaterThan(0);
    expect(second.data_disk.free_bytes).toBeLessThanOrEqual(second.data_disk.size_bytes);
    expect(part(second, 'data_other')!.bytes).toBeGreaterThanOrEqual(statSync(path.join(dataDir, 'secret.key')).size);
    // Nothing secret in the report: the database's address without its user and password.
    const text = await runScript('scripts/disk-usage.ts', [], env);
    const low = second.data_disk.free_ratio < LOW_FREE_RATIO;
    expect(text.code, text.output).toBe(low ? 3 : 0);
    if (low) expect(text.output).toMatch(/^warning: less than 10 % of the data disk is free/m);
    expect(text.output).toMatch(/^database\s+[\d.]+ MB/m);
    expect(text.output).toMatch(/^files\.workspaces\s+[\d.]+ MB in \d+ files/m);
    expect(text.output).toMatch(/^data disk: [\d.]+ MB free of/m);
    const password = new URL(env.SVC_DATABASE_URL!).password;
    if (password) expect(text.output).not.toContain(password);
  }, 180_000);
});
