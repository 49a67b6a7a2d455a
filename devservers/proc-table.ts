import { readdirSync, readFileSync } from 'node:fs';

/*
 * The processes on this machine from one pass over /proc: each one's parent, state, resident
 * memory and CPU time, and (when asked, since it costs a second read per process) its command
 * line. The benches measure the processes they started with it; the test run's stuck-files
 * reporter names what runs below vitest. A pass costs tens of milliseconds on a busy machine.
 */

export interface ProcessInfo {
  parent: number;
  /** R running, S sleeping, D waiting on the disk, Z exited but not yet reaped… */
  state: string;
  rssBytes: number;
  /** User and system time of the process and of its children that have exited, in seconds. */
  cpuSeconds: number;
  /** Its arguments joined by spaces; empty unless asked for. */
  command: string;
}

/** Every process now running, by pid. */
export function processTable(options: { commands?: boolean } = {}): Map<number, ProcessInfo> {
  const table = new Map<number, ProcessInfo>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the command name (which may hold spaces): state (0), ppid (1), … utime (11),
      // stime, cutime, cstime (14), … rss in pages (21).
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
        .replace(/^.*\) /, '')
        .split(' ');
      table.set(Number(entry), {
        parent: Number(stat[1]),
        state: stat[0]!,
        rssBytes: Number(stat[21]) * 4096,
        cpuSeconds: stat.slice(11, 15).reduce((sum, f) => sum + Number(f), 0) / 100,
        command: options.commands ? readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ').trim() : '',
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
