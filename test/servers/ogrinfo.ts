import { execFileSync } from 'node:child_process';

/*
 * A layer's CRS and geometry kind as GDAL's ogrinfo reports them, read in a child process. The
 * stand-ins run inside a test's process, next to the worker: gdal-async there can hand back a
 * stale CRS wrapper for a file read before (see docs/decisions.md, "CRS reads").
 */
export function ogrLayerInfo(file: string, table?: string): { epsg: number | null; geometry: string } {
  const out = execFileSync('ogrinfo', ['-ro', '-so', file, ...(table ? [table] : [])], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' } });
  const ids = [...out.matchAll(/^\s{0,4}ID\["EPSG",(\d+)\]\]?$/gm)];
  const top = ids.length ? ids[ids.length - 1]![1] : undefined;
  const geometry = /^Geometry: (.+)$/m.exec(out)?.[1]?.trim() ?? 'Unknown';
  return { epsg: top ? Number(top) : null, geometry };
}
