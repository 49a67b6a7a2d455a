import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * KEY=VALUE files in the data folder (the first user's password, how to reach the local
 * cluster). A shell can `source` them: every value we write is generated and needs no quoting.
 */
export function readEnvFile(file: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim() || line.trimStart().startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq > 0) values[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return values;
}

/**
 * Written whole (temporary file, then rename: a reader never sees half a file) and readable by
 * its owner only, since these files hold secrets.
 */
export function writeEnvFile(file: string, values: Record<string, string>): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(
    temporary,
    `${Object.entries(values)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n')}\n`,
    { mode: 0o600 },
  );
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}
