import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { sql } from 'slonik';
import { z } from 'zod';
import { jobDecider, jobStream } from '../domain/jobs/job.js';
import type { RunError } from '../domain/runs/facts.js';
import { runDecider, runStream, stepAtFault } from '../domain/runs/run.js';
import { loadConfig, type Config } from '../platform/config.js';
import { ARCHIVE, bucketOf, keyFingerprint, pgProgram, readBackupManifest, runPgTool, tar, unsealKey, type BackupManifest } from './backup.js';
import { createServices } from './bootstrap.js';
import { load, record } from './commands.js';

/*
 * `npm run restore`: brings an archive of `npm run backup` (application/backup.ts) up in an
 * empty data folder: the database into an empty one (SVC_DATABASE_URL) or into a new local
 * cluster in the data folder (as `npm start` keeps it), the Workspaces' files into the data
 * folder (or the bucket checked against the archive's list of it), the secrets key checked
 * against the archive's fingerprint (or unsealed with SVC_BACKUP_PASSPHRASE and written as the
 * data folder's key file). Temporal's state is not in the archive, so two things are settled here:
 * - Runs that were queued or running when the backup was taken are recorded as failed with the
 *   code `interrupted` (retryable: POST …/retry runs them again), never resumed behind the
 *   operator's back, so no Run happens twice;
 * - the Job schedules' reactor starts again from the first event, so the API's first start makes
 *   every Job's Temporal Schedule again (application/job-schedules.ts).
 */

/** What a data folder holds once an install has used it: a restore goes only where none of these is. */
const INSTALL_FILES = ['pg', 'pg.password', 'temporal.db', 'workspaces', 'runs', 'secret.key', 'local-database.env', 'initial-admin.env'];

/** The secrets key the restored install will use: given (and checked), or unsealed from the archive. */
function resolveKey(archive: string, manifest: BackupManifest, given: Buffer | null, passphrase: string | undefined): { key: Buffer; write: boolean } {
  const wanted = manifest.secret_key.fingerprint;
  if (given) {
    if (keyFingerprint(given) !== wanted) {
      throw new Error(
        `SVC_SECRET_KEY is not the key this archive's secrets were encrypted with (fingerprint ${keyFingerprint(given)}, the archive's ${wanted}); restore with that key`,
      );
    }
    return { key: given, write: false };
  }
  if (manifest.secret_key.included !== 'sealed') {
    throw new Error(
      `this archive does not hold the secrets key (it was taken without SVC_BACKUP_PASSPHRASE): set SVC_SECRET_KEY to the install's key (fingerprint ${wanted})`,
    );
  }
  if (!passphrase) throw new Error('this archive holds the secrets key sealed with a passphrase: set SVC_BACKUP_PASSPHRASE');
  const key = unsealKey(JSON.parse(tar(['-xOf', archive, ARCHIVE.key])), passphrase);
  if (keyFingerprint(key) !== wanted) throw new Error('the sealed key does not match the archive fingerprint: the archive is damaged');
  return { key, write: true };
}

async function databaseIsEmpty(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    const r = await client.query(
      "SELECT 1 FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema') AND tablename <> 'spatial_ref_sys' LIMIT 1",
    );
    return r.rowCount === 0;
  } finally {
    await client.end();
  }
}

/** Objects the archive's list names that the bucket no longer has (or has at another size). */
async function missingObjects(config: Config, archive: string): Promise<{ checked: number; missing: string[] }> {
  const listed = JSON.parse(tar(['-xOf', archive, ARCHIVE.bucket])) as { url: string; objects: { key: string; size: number }[] };
  const { client, bucket, prefix } = bucketOf(config);
  const missing: string[] = [];
  try {
    for (const o of listed.objects) {
      const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: prefix + o.key })).catch(() => null);
      if (!head || head.ContentLength !== o.size) missing.push(o.key);
    }
  } finally {
    client.destroy();
  }
  return { checked: listed.objects.length, missing };
}

/** The error a restore records on a Run it cannot resume. */
export const interruptedError = (step: RunError['step'], takenAt: string): RunError => ({
  code: 'interrupted',
  message: `The Run was in flight when the backup this install was restored from was taken (${takenAt}); a restore does not resume Runs: retry it or run the Job again`,
  step,
  retryable: true,
});

/**
 * Records every Run still queued or running as failed (`interrupted`), on the Run and on its Job,
 * and starts the Job schedules' reactor again from the first event. Returns the Runs it settled.
 */
export async function settleAfterRestore(config: Config, takenAt: string): Promise<string[]> {
  const services = await createServices(config, { temporal: false, projections: true, housekeeping: false, name: 'restore' });
  try {
    // From the events, not the read models (a projector of another version may still be replaying them).
    const inFlight = await services.pool.anyFirst(
      sql.type(z.object({ id: z.string() }))`SELECT q.data->>'run_id' AS id FROM events q
        WHERE q.type = 'RunQueued' AND NOT EXISTS (
          SELECT 1 FROM events f WHERE f.stream_id = q.stream_id AND f.type IN ('RunSucceeded', 'RunFailed', 'RunCancelled'))
        ORDER BY q.position`,
    );
    let last = 0n;
    for (const runId of inFlight) {
      const { state: run } = await load(services, runStream(runId), runDecider);
      if (run.status === 'absent') continue;
      const at = services.clock();
      const error = interruptedError(stepAtFault(run), takenAt);
      const job = await record(services, jobStream(run.jobId), jobDecider, {
        type: 'RecordRunOutcome',
        jobId: run.jobId,
        runId,
        trigger: run.trigger,
        status: 'failed',
        maxConsecutiveFailures: config.jobMaxConsecutiveFailures,
        at,
      });
      const failed = await record(services, runStream(runId), runDecider, { type: 'FailRun', runId, error, at });
      for (const p of [job.position, failed.position]) if (BigInt(p) > last) last = BigInt(p);
    }
    await services.pool.query(sql.unsafe`UPDATE rm.checkpoints SET position = 0 WHERE projector = 'job-schedules'`);
    await services.projections.waitFor(last, 120_000);
    return inFlight as string[];
  } finally {
    await services.close();
  }
}

export interface RestorePlan {
  archive: string;
  dataDir: string;
  /** SVC_DATABASE_URL: restore into this (empty) database; else into a new local cluster in the data folder. */
  databaseUrl: string | null;
  /** SVC_SECRET_KEY, when set. */
  givenKey: Buffer | null;
  passphrase: string | undefined;
}

export interface RestoreResult {
  manifest: BackupManifest;
  databaseUrl: string;
  keyFile: string | null;
  files: { restored: number } | { checked: number; missing: string[] };
  interrupted: string[];
  ms: number;
}

/**
 * Restores in three steps, the first two of which need no running service: the database, the
 * files and the key; then the Runs in flight are settled through the domain (a service of its
 * own, without Temporal). `startLocalDatabase` makes the local cluster when no URL is given (it is
 * the caller's, to keep this module free of scripts): it answers the URL and a stop function.
 */
export async function restoreBackup(
  plan: RestorePlan,
  startLocalDatabase: (dataDir: string) => Promise<{ url: string; stop(): void }>,
): Promise<RestoreResult> {
  const started = Date.now();
  const manifest = readBackupManifest(plan.archive);
  const found = existsSync(plan.dataDir) ? INSTALL_FILES.filter((f) => existsSync(path.join(plan.dataDir, f))) : [];
  if (found.length) throw new Error(`${plan.dataDir} is not empty (it holds ${found.join(', ')}): restore into an empty data folder (SVC_DATA_DIR)`);
  const { key, write } = resolveKey(plan.archive, manifest, plan.givenKey, plan.passphrase);
  mkdirSync(plan.dataDir, { recursive: true });

  let local: { url: string; stop(): void } | null = null;
  try {
    let databaseUrl = plan.databaseUrl;
    if (databaseUrl) {
      if (!(await databaseIsEmpty(databaseUrl))) throw new Error('the database of SVC_DATABASE_URL is not empty: restore into a new, empty database');
    } else {
      local = await startLocalDatabase(plan.dataDir);
      databaseUrl = local.url;
    }
    const work = mkdtempSync(path.join(tmpdir(), 'geoflow-restore-'));
    try {
      tar(['-xf', plan.archive, '-C', work, ARCHIVE.database]);
      // pg_dump's own objects (the PostGIS extension the database already has) are kept as they are.
      await runPgTool(pgProgram('pg_restore'), databaseUrl, [
        '--no-owner',
        '--no-privileges',
        '--exit-on-error',
        '--single-transaction',
        path.join(work, ARCHIVE.database),
      ]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }

    let files: RestoreResult['files'];
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      SVC_DATA_DIR: plan.dataDir,
      SVC_DATABASE_URL: databaseUrl,
      SVC_SECRET_KEY: key.toString('hex'),
    };
    const config = loadConfig(env);
    if (manifest.files.storage === 's3') {
      if (!config.storage) throw new Error(`the archive's files are in ${manifest.files.url}: set SVC_STORAGE_URL (and its settings) to restore`);
      files = await missingObjects(config, plan.archive);
    } else {
      const listed = tar(['-tf', plan.archive])
        .split('\n')
        .filter((l) => l.startsWith(`${ARCHIVE.files}/`) && !l.endsWith('/'));
      if (listed.length) tar(['-xf', plan.archive, '-C', plan.dataDir, '--strip-components=1', ARCHIVE.files]);
      files = { restored: listed.length };
    }

    const interrupted = await settleAfterRestore(config, manifest.created_at);
    let keyFile: string | null = null;
    if (write) {
      keyFile = path.join(plan.dataDir, 'secret.key');
      writeFileSync(keyFile, key.toString('hex'), { mode: 0o600 });
      chmodSync(keyFile, 0o600);
    }
    return { manifest, databaseUrl, keyFile, files, interrupted, ms: Date.now() - started };
  } finally {
    local?.stop();
  }
}
