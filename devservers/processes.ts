import type { ChildProcess } from 'node:child_process';

/** Runs a command somewhere else, e.g. in a network namespace: `ip netns exec <ns> command …`. */
export type Wrap = (command: string, args: string[]) => [string, string[]];

/**
 * Asks a test server to stop (SIGTERM unless `ask` says otherwise) and waits until it has exited,
 * killing it after a grace period.
 */
export async function stopProcess(child: ChildProcess, ask: () => void = () => child.kill('SIGTERM'), graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  ask();
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Keeps the last few KiB a server printed, for the error when it does not start. */
export function tail(child: ChildProcess): () => string {
  let log = '';
  const keep = (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => log;
}
