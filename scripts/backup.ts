import '../platform/runtime-notices.js';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createBackup } from '../application/backup.js';
import { loadConfig } from '../platform/config.js';

/**
 * `npm run backup [-- --out FILE]`: one archive of the install (the service database, its stored
 * files or a list of its bucket, the secrets key sealed with SVC_BACKUP_PASSPHRASE when that is
 * set), taken while the service runs. What it keeps and loses: docs/operators.md.
 */
const { values } = parseArgs({ options: { out: { type: 'string' } } });
const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
const out = path.resolve(values.out ?? `geoflow-backup-${stamp}.tar`);
try {
  const { manifest, bytes, ms } = await createBackup(loadConfig(), out, { passphrase: process.env.SVC_BACKUP_PASSPHRASE || undefined });
  const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;
  console.log(`wrote ${out} (${mb(bytes)}) in ${(ms / 1000).toFixed(1)} s`);
  console.log(`  database: ${manifest.database.events} events (dump ${mb(manifest.database.bytes)})`);
  console.log(
    manifest.files.storage === 's3'
      ? `  files: a list of the ${manifest.files.objects} objects (${mb(manifest.files.bytes)}) in ${manifest.files.url}; the bucket is the object store's to keep`
      : `  files: ${manifest.files.objects} ${manifest.files.objects === 1 ? 'file' : 'files'} of Workspaces (${mb(manifest.files.bytes)})`,
  );
  console.log(
    manifest.secret_key.included
      ? `  secrets key: sealed with SVC_BACKUP_PASSPHRASE (fingerprint ${manifest.secret_key.fingerprint}); keep the passphrase apart from the archive`
      : `  secrets key: NOT in the archive (no SVC_BACKUP_PASSPHRASE); keep SVC_SECRET_KEY or ${path.join(loadConfig().dataDir, 'secret.key')} apart (fingerprint ${manifest.secret_key.fingerprint})`,
  );
  if (manifest.temporal.runs_in_flight.length) {
    console.log(`  Runs in flight: ${manifest.temporal.runs_in_flight.length} (a restore records them as interrupted; Temporal's state is not kept)`);
  }
} catch (error) {
  console.error(`backup failed: ${(error as Error).message}`);
  process.exitCode = 1;
}
