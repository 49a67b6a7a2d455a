import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Keeps the service's processes (API, worker) running under `npm start`. GDAL on a hostile file
 * or the Python step can take a process down; Temporal retries the activity, so restarting the
 * process is all that is needed. A crash restarts the child after a pause that doubles with each
 * crash in a row (a child that stayed up long enough starts again from the shortest pause). Only
 * `stop()` ends it all. Before `markReady()`, an exit is not a crash but a service that cannot
 * start (a port in use, a bad setting): restarting would only repeat it, so `onStartFailure`
 * decides.
 */
export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

export interface Backoff {
  /** Pause before the first restart. */
  initialMs: number;
  /** Longest pause. */
  maxMs: number;
  /** A child that ran this long before it crashed counts as healthy: the pauses start over. */
  healthyAfterMs: number;
}

export const defaultBackoff: Backoff = { initialMs: 1000, maxMs: 30_000, healthyAfterMs: 60_000 };

/** Pause before a restart after `crashesInARow` crashes (1 for the first). */
export function restartDelay(crashesInARow: number, backoff: Backoff = defaultBackoff): number {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.max(0, crashesInARow - 1));
}

/** How a child ended, in words for the log. */
export function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `was killed by ${signal}` : `exited with code ${code}`;
}

interface Supervised {
  spec: ChildSpec;
  child?: ChildProcess;
  startedAt: number;
  crashesInARow: number;
  restartTimer?: NodeJS.Timeout;
}

export interface SupervisorOptions {
  log(line: string): void;
  /** A child ended before the service was ready. */
  onStartFailure(name: string, code: number): void;
  backoff?: Backoff;
  now?: () => number;
}

export class Supervisor {
  private readonly children = new Map<string, Supervised>();
  private ready = false;
  private stopping = false;
  private readonly backoff: Backoff;
  private readonly now: () => number;

  constructor(private readonly options: SupervisorOptions) {
    this.backoff = options.backoff ?? defaultBackoff;
    this.now = options.now ?? Date.now;
  }

  start(spec: ChildSpec): void {
    const entry: Supervised = { spec, startedAt: 0, crashesInARow: 0 };
    this.children.set(spec.name, entry);
    this.launch(entry);
  }

  /** From now on an exit is a crash, and the child is restarted. */
  markReady(): void {
    this.ready = true;
  }

  pid(name: string): number | undefined {
    return this.children.get(name)?.child?.pid;
  }

  /** SIGTERM to every child, SIGKILL to those still running after `graceMs`; no more restarts. */
  async stop(graceMs = 20_000): Promise<void> {
    this.stopping = true;
    const running: ChildProcess[] = [];
    for (const entry of this.children.values()) {
      clearTimeout(entry.restartTimer);
      if (entry.child && entry.child.exitCode === null && entry.child.signalCode === null) running.push(entry.child);
    }
    await Promise.all(
      running.map(
        (child) =>
          new Promise<void>((resolve) => {
            const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
            child.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            child.kill('SIGTERM');
          }),
      ),
    );
  }

  private launch(entry: Supervised): void {
    const { spec } = entry;
    const child = spawn(spec.command, spec.args, { env: spec.env, stdio: 'inherit' });
    entry.child = child;
    entry.startedAt = this.now();
    this.options.log(`${spec.name} running (pid ${child.pid})`);
    child.on('exit', (code, signal) => this.exited(entry, child, code, signal));
    // A spawn failure (missing executable) also ends in 'exit'; keep it from throwing.
    child.on('error', (error) => this.options.log(`${spec.name}: ${error.message}`));
  }

  private exited(entry: Supervised, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.stopping || entry.child !== child) return;
    const { name } = entry.spec;
    const how = describeExit(code, signal);
    if (!this.ready) {
      this.options.log(`${name} ${how} before the service was ready`);
      this.options.onStartFailure(name, code || 1);
      return;
    }
    const ranMs = this.now() - entry.startedAt;
    entry.crashesInARow = ranMs >= this.backoff.healthyAfterMs ? 1 : entry.crashesInARow + 1;
    const delay = restartDelay(entry.crashesInARow, this.backoff);
    this.options.log(
      `${name} ${how} after ${(ranMs / 1000).toFixed(1)} s; restarting it in ${(delay / 1000).toFixed(1)} s` +
        (entry.crashesInARow > 1 ? ` (crash ${entry.crashesInARow} in a row)` : ''),
    );
    entry.restartTimer = setTimeout(() => {
      entry.restartTimer = undefined;
      if (!this.stopping) this.launch(entry);
    }, delay);
  }
}
