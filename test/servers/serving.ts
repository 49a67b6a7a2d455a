import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { stopProcess, tail } from '../../devservers/processes.js';
import { until } from '../support/until.js';

/**
 * Waits for a server process a suite has just spawned (pygeoapi, stac-fastapi) until `url` answers
 * 2xx, and returns its stop (the process ended, its folder `dir` removed). When it exits first or
 * does not answer within `timeoutMs`, it is stopped and the error ends with what it printed last.
 */
export async function untilServing(
  name: string,
  child: ChildProcess,
  dir: string,
  url: string,
  init?: RequestInit,
  timeoutMs = 60_000,
): Promise<() => Promise<void>> {
  const log = tail(child);
  const stop = async () => {
    await stopProcess(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until(
      `${name} to answer ${url}`,
      async () => {
        if (child.exitCode !== null) throw new Error(`${name} exited at start`);
        try {
          return (await fetch(url, init)).ok;
        } catch {
          return false; // not listening yet
        }
      },
      timeoutMs,
      250,
    );
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}: ${log()}`);
  }
  return stop;
}
