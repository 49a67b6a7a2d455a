import { readdirSync, readFileSync } from 'node:fs';

/*
 * What the benches read of the processes they measure, from one pass over /proc: each process's
 * parent, resident memory and CPU time. A pass costs tens of milliseconds on a busy machine, so
 * each measurement makes one.
 */

interface ProcessInfo {
  parent: number;
  rssBytes: number;
  /** User and system time of the process and of its children that have exited, in seconds. */
  cpuSeconds: number;
}

/** Every process now running, by pid. */
export function processTable(): Map<number, ProcessInfo> {
  const table = new Map<number, ProcessInfo>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the command name (which may hold spaces): state, ppid, … utime (11), stime,
      // cutime, cstime (14), … rss in pages (21).
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
        .replace(/^.*\) /, '')
        .split(' ');
      table.set(Number(entry), {
        parent: Number(stat[1]),
        rssBytes: Number(stat[21]) * 4096,
        cpuSeconds: stat.slice(11, 15).reduce((sum, f) => sum + Number(f), 0) / 100,
      });
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

/** The pids of `root` and everything running below it. */
export function subtree(table: Map<number, ProcessInfo>, root: number): number[] {
  return [...table.keys()].filter((pid) => {
    for (let p: number | undefined = pid; p && p > 1; p = table.get(p)?.parent) if (p === root) return true;
    return false;
  });
}

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
