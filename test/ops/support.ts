import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The Temporal CLI scripts/ensure.sh installs (the suites here start dev servers of their own). */
export const temporalCli = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'tools/venv/bin/temporal');
export const temporalMissing = !existsSync(temporalCli) && `the Temporal CLI is missing at ${temporalCli} (scripts/ensure.sh installs it)`;

/** Runs an npm script's program (`node --import tsx <script>`) with `env`; resolves with its exit code and output. */
export function runScript(script: string, args: string[], env: Record<string, string>, cwd = process.cwd()): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** The next whole minute at least `ms` from now (a daily schedule's fire time in UTC). */
export function nextMinuteAfter(ms: number): Date {
  return new Date(Math.ceil((Date.now() + ms) / 60_000) * 60_000);
}
