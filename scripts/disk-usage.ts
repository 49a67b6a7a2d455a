import '../platform/runtime-notices.js';
import { parseArgs } from 'node:util';
import { formatDiskUsage, LOW_FREE_RATIO, measureDiskUsage } from '../application/disk-usage.js';
import { loadConfig } from '../platform/config.js';

/**
 * `npm run disk [-- --json]`: the disk each part of the install uses (database, stored files or
 * bucket, Temporal's history, the rest of the data folder) and the data disk's free space, read
 * while the service runs. Exits 3 when less than 10 % of the data disk is free, for a cron job or
 * a check to alert on. docs/operators.md, "Disk usage".
 */
const { values } = parseArgs({ options: { json: { type: 'boolean', default: false } } });
try {
  const usage = await measureDiskUsage(loadConfig());
  console.log(values.json ? JSON.stringify(usage, null, 2) : formatDiskUsage(usage));
  if (usage.data_disk.free_ratio < LOW_FREE_RATIO) process.exitCode = 3;
} catch (error) {
  console.error(`disk usage failed: ${(error as Error).message}`);
  process.exitCode = 1;
}
