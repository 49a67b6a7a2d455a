import { createInterface } from 'node:readline';
import { DomainError } from '../../domain/errors.js';
import { errorText, scrubPaths } from '../gdal/gdal.js';
import { type HostOp, hostOps } from './ops.js';

/*
 * The entry of a sandboxed GDAL host (geo/sandbox/host-pool.ts starts it inside bubblewrap):
 * one JSON request per line on stdin, one answer per line on stdout, progress lines in between.
 * It sees only the folders of the dataset it was started for, so whatever a crafted file makes
 * GDAL do here, it reaches nothing else.
 */

// stdout carries the answers: nothing else may print there.
for (const level of ['log', 'info', 'warn', 'debug'] as const) console[level] = console.error;

const send = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  let request: { id: number; op: HostOp; args: unknown[] };
  try {
    request = JSON.parse(line);
  } catch {
    return;
  }
  const { id, op, args } = request;
  const run = hostOps[op] as ((args: unknown[], progress: (p: unknown) => void) => Promise<unknown>) | undefined;
  if (!run) {
    send({ id, error: { message: `no such op: ${String(op)}` } });
    return;
  }
  run(args, (progress) => send({ id, progress })).then(
    (result) => send({ id, result }),
    (error: unknown) =>
      send({
        id,
        error: error instanceof DomainError ? { code: error.code, message: error.message, details: error.details } : { message: scrubPaths(errorText(error)) },
      }),
  );
});
process.stdin.on('end', () => process.exit(0));
