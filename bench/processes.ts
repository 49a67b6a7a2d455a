import { processTable, subtree } from '../devservers/proc-table.js';

/* What the benches read of the processes they measure; each measurement makes one pass over /proc. */

/**
 * CPU seconds of a process and everything below it: its own with its exited children, plus each
 * live descendant's with theirs (the worker's spawn helper and the ogr2ogr processes it starts,
 * PostgreSQL's backends).
 */
export function treeCpuSeconds(root: number, table = processTable()): number {
  return subtree(table, root).reduce((sum, pid) => sum + table.get(pid)!.cpuSeconds, 0);
}

/** Resident bytes of each root process with all its descendants (a worker's GDAL children count as its memory). */
export function treeRss(roots: number[], table = processTable()): number[] {
  return roots.map((root) => subtree(table, root).reduce((sum, pid) => sum + table.get(pid)!.rssBytes, 0));
}
