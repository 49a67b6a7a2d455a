import '../platform/runtime-notices.js';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { restoreBackup } from '../application/restore.js';
import { parseSecretKey } from '../platform/config.js';
import { startPostgres } from './local-services.js';
import { freePort } from '../devservers/ports.js';

/**
 * `npm run restore -- ARCHIVE`: brings an archive of `npm run backup` up in an empty data folder
 * (SVC_DATA_DIR): into SVC_DATABASE_URL's empty database, or a new local cluster in the data
 * folder as `npm start` keeps it. The secrets key: SVC_SECRET_KEY (checked against the archive),
 * or the archive's own, unsealed with SVC_BACKUP_PASSPHRASE. Then `npm start`. docs/operators.md.
 */
const { positionals } = parseArgs({ allowPositionals: true });
if (positionals.length !== 1) {
  console.error('usage: npm run restore -- ARCHIVE   (into SVC_DATA_DIR, default ./.data, which must be empty)');
  process.exit(2);
}
const env = process.env;
const dataDir = path.resolve(env.SVC_DATA_DIR ?? '.data');
const given = env.SVC_SECRET_KEY ? parseSecretKey(env.SVC_SECRET_KEY) : null;
try {
  const result = await restoreBackup(
    {
      archive: path.resolve(positionals[0]!),
      dataDir,
      databaseUrl: env.SVC_DATABASE_URL || null,
      givenKey: given,
      passphrase: env.SVC_BACKUP_PASSPHRASE || undefined,
    },
    async (dir) => {
      // The cluster npm start will run from this folder; started here on a free port only to load it.
      const pg = await startPostgres(path.join(dir, 'pg'), await freePort(), ['geoflow']);
      return { url: pg.url('geoflow'), stop: () => pg.stop() };
    },
  );
  const { manifest, files, interrupted, ms } = result;
  console.log(`restored the backup of ${manifest.created_at} (geoflow ${manifest.service.version}) into ${dataDir} in ${(ms / 1000).toFixed(1)} s`);
  console.log(
    `  database: ${manifest.database.events} events${env.SVC_DATABASE_URL ? ' into SVC_DATABASE_URL' : `, in the local cluster ${path.join(dataDir, 'pg')}`}`,
  );
  if ('restored' in files) console.log(`  files: ${files.restored} ${files.restored === 1 ? 'file' : 'files'} of Workspaces`);
  else if (files.missing.length)
    console.log(
      `  bucket: ${files.missing.length} of ${files.checked} objects the backup listed are missing or changed, e.g. ${files.missing.slice(0, 3).join(', ')}`,
    );
  else console.log(`  bucket: all ${files.checked} objects the backup listed are there`);
  console.log(result.keyFile ? `  secrets key: unsealed into ${result.keyFile}` : '  secrets key: SVC_SECRET_KEY, checked against the archive');
  if (interrupted.length) {
    const one = interrupted.length === 1;
    console.log(
      `  ${interrupted.length} ${one ? 'Run' : 'Runs'} in flight at the backup recorded as interrupted (retry ${one ? 'it' : 'them'}): ${interrupted.join(', ')}`,
    );
  }
  console.log('  Job schedules: made again in Temporal by the API at its first start');
  console.log('next: npm start (the same settings)');
} catch (error) {
  console.error(`restore failed: ${(error as Error).message}`);
  process.exitCode = 1;
}
