import { StringDecoder } from 'node:string_decoder';
import { spawnProcess } from '../../../platform/spawner.js';
import { stat } from 'node:fs/promises';
import { unsandboxedGdalEnv } from '../../../geo/gdal/gdal.js';
import { gdalErrors } from '../../../geo/gdal/gdal-tool.js';
import type { ConnectorContext } from '../../types.js';
import { ConnectorError, type ConnectorFailureReason } from '../../../domain/transfers.js';

/*
 * ogr2ogr as a child process, for the bulk transfers of the database connectors (a table into a
 * GeoPackage, a converted output into a staging table). A child rather than GDAL in the service's
 * process because it can be stopped: a cancelled or timed-out transfer, or an extract past the
 * size limit, kills it, where an in-process GDAL call runs to its end. Its environment is built
 * from nothing (the service's own variables, its secret key among them, never reach it); the
 * connector adds what the driver needs, e.g. the path of a private password file.
 */

export interface Ogr2ogrRun {
  args: string[];
  /** Variables for the child only, added to PATH and LANG. */
  env?: Record<string, string>;
  /** A file whose size is held to ctx.maxBytes while it is written (an extract's output). */
  limitFile?: string;
  /** Names the transfer in messages (no secrets). */
  label: string;
}

export interface Ogr2ogrFailure {
  exitCode: number | null;
  /** GDAL's error lines, paths removed. */
  errors: string[];
}

const POLL_MS = 250;

/** The databases the connectors' ogr2ogr reads from and writes to. */
const DATABASE_DRIVERS = ['PostgreSQL', 'MySQL'];

/**
 * Runs ogr2ogr; resolves with its stderr on success. A non-zero exit rejects with whatever
 * `fail` makes of GDAL's errors (connectors classify them); the signal and the size limit reject
 * with timeout / too_large after killing the child.
 */
export async function runOgr2ogr(run: Ogr2ogrRun, ctx: ConnectorContext, fail: (failure: Ogr2ogrFailure) => ConnectorError): Promise<string> {
  if (ctx.signal.aborted) throw new ConnectorError('timeout', `${run.label}: stopped before it started`);
  const child = await spawnProcess('ogr2ogr', run.args, {
    // What it reads may be a user's file: only the drivers the worker itself would open it with.
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', ...unsandboxedGdalEnv(DATABASE_DRIVERS), ...run.env },
    stdout: 'ignore',
    stderr: 'pipe',
  });
  let stderr = '';
  const decoder = new StringDecoder('utf8');
  child.stderr!.on('data', (chunk: Buffer) => {
    // Keep the head (the first errors explain) within bounds.
    if (stderr.length < 64 * 1024) stderr += decoder.write(chunk);
  });
  let stopped: ConnectorError | undefined;
  const stop = (why: ConnectorError) => {
    if (stopped) return;
    stopped = why;
    child.kill('SIGKILL');
  };
  const onAbort = () => stop(new ConnectorError('timeout', `${run.label}: stopped (deadline or cancellation)`));
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  let lastReport = 0;
  const watcher = run.limitFile
    ? setInterval(() => {
        stat(run.limitFile!).then(
          (s) => {
            if (s.size > ctx.maxBytes) {
              stop(
                new ConnectorError('too_large', `${run.label}: the data is larger than the limit of ${ctx.maxBytes} bytes`, { max_bytes: ctx.maxBytes }, false),
              );
            } else if (ctx.progress && s.size - lastReport > 8 * 1024 * 1024) {
              lastReport = s.size;
              ctx.progress({ bytes: s.size });
            }
          },
          () => undefined,
        );
      }, POLL_MS)
    : undefined;
  try {
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code) => resolve(code));
    });
    if (stopped) throw stopped;
    if (exitCode !== 0) throw fail({ exitCode, errors: gdalErrors(stderr) });
    // The last growth may have come after the last look.
    if (run.limitFile && (await stat(run.limitFile)).size > ctx.maxBytes) {
      throw new ConnectorError('too_large', `${run.label}: the data is larger than the limit of ${ctx.maxBytes} bytes`, { max_bytes: ctx.maxBytes }, false);
    }
    return stderr;
  } catch (error) {
    if (stopped) throw stopped;
    if (error instanceof ConnectorError) throw error;
    throw new ConnectorError('server_error', `${run.label}: ogr2ogr could not run (${(error as Error).message})`);
  } finally {
    if (watcher) clearInterval(watcher);
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Classifies a failed ogr2ogr by the driver's messages GDAL passed on (`reasons`, first match
 * wins; anything else is a data problem, invalid_data). The message is GDAL's first real error.
 */
export function transferFailure(reasons: [RegExp, ConnectorFailureReason][], what: string, details: Record<string, unknown>) {
  return (failure: Ogr2ogrFailure): ConnectorError => {
    const text = failure.errors.join(' ');
    const reason = reasons.find(([re]) => re.test(text))?.[1] ?? 'invalid_data';
    const first = failure.errors.find((e) => !/^Terminating translation prematurely/i.test(e)) ?? `ogr2ogr exited with ${failure.exitCode}`;
    return new ConnectorError(reason, `${what}: ${first}`, { ...details, errors: failure.errors.slice(0, 5) });
  };
}
