import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes, scryptSync } from 'node:crypto';
import { existsSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createCipher } from '../platform/cipher.js';
import type { Config } from '../platform/config.js';
import { filesUnder } from '../platform/folder-size.js';
import { parseStorageUrl } from '../platform/s3-file-store.js';
import pkg from '../package.json' with { type: 'json' };

/*
 * `npm run backup`: one archive (a tar file) of what an install needs to come back, taken while it
 * runs (docs/operators.md says what is kept and what is lost):
 *
 *   manifest.json          what is inside, the versions, the key's fingerprint, the Runs in flight
 *   database.dump          the service database (events, read models, sessions, tokens, idempotency
 *                          keys): pg_dump's custom format, one consistent snapshot
 *   files/workspaces/…     the stored files of Workspaces, when they live in the data folder
 *   bucket-manifest.json   or, with SVC_STORAGE_URL, the list of the bucket's objects (key, size,
 *                          ETag): the bucket itself is the object store's to keep (versioning,
 *                          replication), and a restore checks it against this list
 *   secret-key.sealed      the secrets key, only when SVC_BACKUP_PASSPHRASE is set: sealed with a
 *                          key derived from it (scrypt), so the archive alone decrypts nothing
 *
 * The database is dumped first and the files are read after it: every Workspace the dump knows
 * had its files stored before its event was written, so it finds them in the archive (files of
 * later Workspaces are extra, and expire). Temporal's state is not kept: Runs in flight when the
 * backup is taken are recorded as interrupted by a restore (application/restore.ts), and the Job
 * schedules are made again from the Jobs.
 */

export const BACKUP_FORMAT = 'geoflow-backup/1';
export const ARCHIVE = {
  manifest: 'manifest.json',
  database: 'database.dump',
  files: 'files',
  bucket: 'bucket-manifest.json',
  key: 'secret-key.sealed',
} as const;

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  created_at: string;
  service: { version: string; commit: string | null };
  database: { server_version: string; events: number; last_position: string; bytes: number };
  files: { storage: 'data-folder'; objects: number; bytes: number } | { storage: 's3'; url: string; objects: number; bytes: number };
  secret_key: { fingerprint: string; included: 'sealed' | false };
  temporal: { included: false; runs_in_flight: string[] };
}

/** A short, one-way name of the secrets key: tells a restore whether the key it is given is the right one. */
export const keyFingerprint = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 16);

/** The secrets key sealed with a passphrase (scrypt, then AES-256-GCM): what an archive keeps of it. */
interface SealedKey {
  kdf: 'scrypt';
  N: number;
  r: number;
  p: number;
  salt: string;
  sealed: string;
}
const SCRYPT = { N: 1 << 15, r: 8, p: 1 } as const;
const KEY_CONTEXT = 'geoflow-backup/secret-key';
const derive = (passphrase: string, salt: Buffer, params: { N: number; r: number; p: number }) =>
  scryptSync(passphrase, salt, 32, { ...params, maxmem: 256 * params.N * params.r });

export function checkPassphrase(passphrase: string): void {
  if (passphrase.length < 12) throw new Error('SVC_BACKUP_PASSPHRASE must be at least 12 characters');
}

export function sealKey(key: Buffer, passphrase: string): SealedKey {
  checkPassphrase(passphrase);
  const salt = randomBytes(16);
  const sealed = createCipher(derive(passphrase, salt, SCRYPT)).encrypt(key.toString('hex'), KEY_CONTEXT);
  return { kdf: 'scrypt', ...SCRYPT, salt: salt.toString('base64url'), sealed };
}

export function unsealKey(sealed: SealedKey, passphrase: string): Buffer {
  const derived = derive(passphrase, Buffer.from(sealed.salt, 'base64url'), sealed);
  try {
    return Buffer.from(createCipher(derived).decrypt(sealed.sealed, KEY_CONTEXT), 'hex');
  } catch {
    throw new Error('SVC_BACKUP_PASSPHRASE does not open the secrets key in this archive (a different passphrase?)');
  }
}

/** PostgreSQL's client programs: those of the local PostgreSQL 15 that scripts/ensure.sh installs, else the PATH's. */
export function pgProgram(name: 'pg_dump' | 'pg_restore'): string {
  const local = `/usr/lib/postgresql/15/bin/${name}`;
  return existsSync(local) ? local : name;
}

/**
 * Runs pg_dump or pg_restore against a database URL, the password in the environment (never on
 * the command line, where `ps` shows it). Resolves with what it printed; fails with its message.
 */
export function runPgTool(program: string, url: string, args: string[]): Promise<string> {
  const u = new URL(url);
  const env = { ...process.env, PGPASSWORD: decodeURIComponent(u.password), PGSSLMODE: u.searchParams.get('sslmode') ?? process.env.PGSSLMODE ?? 'prefer' };
  const connection = [
    '--host',
    u.hostname,
    '--port',
    u.port || '5432',
    '--username',
    decodeURIComponent(u.username),
    '--dbname',
    decodeURIComponent(u.pathname.slice(1)),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(program, [...connection, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', (error) => reject(new Error(`${path.basename(program)} could not run: ${error.message}`)));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${path.basename(program)} failed (exit ${code}): ${out.trim().slice(-2000)}`))));
  });
}

/**
 * Runs tar; fails with its message. `changing`: files may change or go while they are read (a
 * backup of a running service: an upload still streaming, a Workspace expiring), which GNU tar
 * reports with exit status 1; those belong to no Workspace the dump names, so that is no failure.
 */
export function tar(args: string[], options: { changing?: boolean } = {}): string {
  const r = spawnSync('tar', [...(options.changing ? ['--warning=no-file-changed', '--warning=no-file-removed'] : []), ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw new Error(`tar could not run: ${r.error.message}`);
  if (r.status !== 0 && !(options.changing && r.status === 1)) throw new Error(`tar ${args[0]} failed: ${r.stderr.trim()}`);
  return r.stdout;
}

async function databaseFacts(url: string) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    const version = (await client.query<{ v: string }>('SHOW server_version')).rows[0]!.v;
    const events = (await client.query<{ n: string; last: string | null }>('SELECT count(*) AS n, max(position)::text AS last FROM events')).rows[0]!;
    const inFlight = (
      await client.query<{ id: string }>(`SELECT q.data->>'run_id' AS id FROM events q
        WHERE q.type = 'RunQueued' AND NOT EXISTS (
          SELECT 1 FROM events f WHERE f.stream_id = q.stream_id AND f.type IN ('RunSucceeded', 'RunFailed', 'RunCancelled'))
        ORDER BY q.position`)
    ).rows.map((row) => row.id);
    return { version, events: Number(events.n), last: events.last ?? '0', inFlight };
  } finally {
    await client.end();
  }
}

/** A client of the install's bucket (SVC_STORAGE_URL and its settings), with its bucket and prefix. */
export function bucketOf(config: Config): { client: S3Client; bucket: string; prefix: string } {
  const storage = config.storage!;
  const client = new S3Client({
    region: storage.region,
    endpoint: storage.endpoint,
    forcePathStyle: storage.forcePathStyle,
    ...(storage.credentials ? { credentials: storage.credentials } : {}),
  });
  return { client, ...parseStorageUrl(storage.url) };
}

/** Every object under the install's prefix: key (below the prefix), size, ETag. */
export async function bucketObjects(config: Config): Promise<{ key: string; size: number; etag: string }[]> {
  const { client, bucket, prefix } = bucketOf(config);
  const objects: { key: string; size: number; etag: string }[] = [];
  let token: string | undefined;
  try {
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) objects.push({ key: o.Key!.slice(prefix.length), size: o.Size ?? 0, etag: o.ETag ?? '' });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  } finally {
    client.destroy();
  }
  return objects;
}

/** The manifest of an archive of npm run backup (refused when it is not one, or of another format). */
export function readBackupManifest(archive: string): BackupManifest {
  if (!existsSync(archive)) throw new Error(`${archive} does not exist`);
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(tar(['-xOf', archive, ARCHIVE.manifest])) as BackupManifest;
  } catch (error) {
    throw new Error(`${archive} is not an archive of npm run backup: ${(error as Error).message}`);
  }
  if (manifest.format !== BACKUP_FORMAT) throw new Error(`${archive} is a ${manifest.format} archive; this version reads ${BACKUP_FORMAT}`);
  return manifest;
}

/** How many files a folder holds and their bytes. */
function gitCommit(): string | null {
  const r = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', cwd: path.dirname(new URL(import.meta.url).pathname) });
  return r.status === 0 ? r.stdout.trim() : null;
}

export interface BackupResult {
  archive: string;
  bytes: number;
  manifest: BackupManifest;
  ms: number;
}

/** Writes the archive (`out`, a new file). The service may run meanwhile. */
export async function createBackup(config: Config, out: string, options: { passphrase?: string } = {}): Promise<BackupResult> {
  const started = Date.now();
  if (config.eventStoreUrl) {
    throw new Error('the events are in KurrentDB (SVC_EVENTSTORE_URL): back them up with its own tools; npm run backup keeps a PostgreSQL event store');
  }
  if (existsSync(out)) throw new Error(`${out} exists already: name a new file`);
  if (options.passphrase) checkPassphrase(options.passphrase);
  const work = mkdtempSync(path.join(tmpdir(), 'geoflow-backup-'));
  try {
    const facts = await databaseFacts(config.databaseUrl);
    // One snapshot of the whole database; compressed, restorable table by table.
    await runPgTool(pgProgram('pg_dump'), config.databaseUrl, [
      '--format=custom',
      '--no-owner',
      '--no-privileges',
      '--file',
      path.join(work, ARCHIVE.database),
    ]);
    const members: string[][] = [];
    let files: BackupManifest['files'];
    if (config.storage) {
      const objects = await bucketObjects(config);
      writeFileSync(path.join(work, ARCHIVE.bucket), `${JSON.stringify({ url: config.storage.url, objects }, null, 1)}\n`);
      members.push([ARCHIVE.bucket]);
      files = { storage: 's3', url: config.storage.url, objects: objects.length, bytes: objects.reduce((n, o) => n + o.size, 0) };
    } else {
      // A Run's files live only while it runs, and Runs in flight are not resumed: Workspaces only.
      const workspaces = path.join(config.dataDir, 'workspaces');
      files = existsSync(workspaces) ? { storage: 'data-folder', ...(await filesUnder(workspaces)) } : { storage: 'data-folder', objects: 0, bytes: 0 };
      if (existsSync(workspaces)) members.push(['--transform', `s,^workspaces,${ARCHIVE.files}/workspaces,`, '-C', config.dataDir, 'workspaces']);
    }
    if (options.passphrase) writeFileSync(path.join(work, ARCHIVE.key), `${JSON.stringify(sealKey(config.secretKey, options.passphrase))}\n`, { mode: 0o600 });
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      created_at: new Date().toISOString(),
      service: { version: pkg.version, commit: gitCommit() },
      database: { server_version: facts.version, events: facts.events, last_position: facts.last, bytes: statSync(path.join(work, ARCHIVE.database)).size },
      files,
      secret_key: { fingerprint: keyFingerprint(config.secretKey), included: options.passphrase ? 'sealed' : false },
      temporal: { included: false, runs_in_flight: facts.inFlight },
    };
    writeFileSync(path.join(work, ARCHIVE.manifest), `${JSON.stringify(manifest, null, 2)}\n`);
    const own = [ARCHIVE.manifest, ARCHIVE.database, ...(options.passphrase ? [ARCHIVE.key] : [])];
    // Written under a temporary name and renamed: a backup cut off leaves no archive that looks
    // whole. Readable by its owner only: it holds the sessions and the sealed connection secrets.
    const partial = `${out}.partial`;
    writeFileSync(partial, '', { mode: 0o600 });
    tar(['-cf', partial, '-C', work, ...own, ...members.flat()], { changing: true });
    renameSync(partial, out);
    return { archive: out, bytes: statSync(out).size, manifest, ms: Date.now() - started };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
