import { describe, expect, it } from 'vitest';
import { type DiskUsage, formatDiskUsage } from './disk-usage.js';

const usage = (free: number): DiskUsage => ({
  measured_at: '2026-11-28T03:00:00.000Z',
  parts: [
    { part: 'database', bytes: 8 * 1048576, where: 'postgresql://db:5432/geoflow' },
    { part: 'database.events', bytes: 2 * 1048576, where: 'postgresql://db:5432/geoflow', note: 'event store (table events)' },
    { part: 'files.workspaces', bytes: 1048576, objects: 1, where: '/srv/data/workspaces' },
    { part: 'temporal', bytes: null, where: 'temporal:7233', note: 'Temporal keeps its history in its own persistence: measure it there' },
  ],
  data_disk: { path: '/srv/data', size_bytes: 100 * 1048576, free_bytes: free * 1048576, free_ratio: free / 100 },
  counts: { events: 40, runs: 4 },
});

describe('formatDiskUsage', () => {
  it('prints each part with its size, files and place, the database per Run, and the free space', () => {
    const text = formatDiskUsage(usage(50));
    expect(text).toContain('database.events');
    expect(text).toMatch(/files\.workspaces\s+1\.0 MB in 1 file {2}\/srv\/data\/workspaces/);
    expect(text).toMatch(/temporal\s+— {2}temporal:7233 \(Temporal keeps/);
    expect(text).toContain('recorded: 40 events, 4 Runs, 2048.0 kB of database per Run');
    expect(text).toContain('data disk: 50.0 MB free of 100.0 MB (50.0 %) under /srv/data');
    expect(text).not.toContain('warning');
  });

  it('warns when less than a tenth of the data disk is free', () => {
    expect(formatDiskUsage(usage(9))).toMatch(/^warning: less than 10 % of the data disk is free/m);
  });
});
