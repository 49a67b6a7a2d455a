import { stat } from 'node:fs/promises';
import type { DatasetRef } from '../../../geo/datasets/dataset-files.js';
import { errorText, gdal, openDataset, scrubPaths } from '../../../geo/gdal/gdal.js';
import type { ConnectorContext } from '../../types.js';
import { ConnectorError } from '../../../domain/transfers.js';
import { withSpan } from '../../../platform/tracing.js';

/*
 * A small transfer run by GDAL's ogr2ogr library function in this process
 * (gdal.vectorTranslateAsync, on libuv's threads) instead of the ogr2ogr program: the same
 * translation, without starting a process that loads GDAL and its hundred-odd libraries (a
 * one-feature load took 35-40 ms here against the program's 100-108 ms; bench/runs/NOTES.md).
 *
 * The program stays the rule: it can be killed at a deadline or a cancellation, it can be held to
 * a size, and its environment is built from nothing. An in-process call can do none of that, so it
 * is taken only for a layer small enough to finish in moments, read from a file without open
 * options (at most MAX_FEATURES and MAX_BYTES), and at most SLOTS at a time. Should one still
 * outlive inProcessLimits.stuckAfterMs (a target that accepts a query and never answers), the
 * Run's step fails with a timeout as it would with the program, the stuck call keeps its slot (a
 * GDAL call cannot be stopped) and this process takes no in-process transfer until it returns: a
 * stuck server can hold at most SLOTS of libuv's threads, never the worker.
 */

/** In-process transfers at once, each on one of libuv's threads (UV_THREADPOOL_SIZE is 8 here). */
const SLOTS = 2;
/** The most a transfer taken here may read: moments of work, whatever the target. */
const MAX_FEATURES = 100_000;
const MAX_BYTES = 64 * 1024 * 1024;
/** Longer than any such transfer takes; beyond it the call is reported as stuck (tests shorten it). */
export const inProcessLimits = { stuckAfterMs: 60_000 };

let busy = 0;
let stuck = 0;
let done = 0;

/** Transfers this process has finished here (tests and diagnostics tell the two ways apart by it). */
export const translatedHere = () => done;

export interface TranslateHere {
  /** The dataset GDAL writes to (a `PG:` connection string, without a password). */
  destination: string;
  source: DatasetRef;
  /** Features in the source's layer, when known (an unknown count is not small). */
  features: number | null;
  /** ogr2ogr's arguments without the destination and source: -f, the layer's name, -nln, -lco … */
  args: string[];
  /** Names the transfer in messages (no secrets). */
  label: string;
}

async function small(job: TranslateHere): Promise<boolean> {
  if (job.features === null || job.features > MAX_FEATURES || job.source.openOptions.length > 0) return false;
  const size = await stat(job.source.path).then(
    (s) => (s.isFile() ? s.size : Number.POSITIVE_INFINITY),
    () => Number.POSITIVE_INFINITY,
  );
  return size <= MAX_BYTES;
}

/**
 * What became of a transfer offered here: `done`; `declined` (not small, no free slot, a stuck
 * call, or SVC_GDAL_IN_PROCESS=0); `failed`, which the caller answers by running the program
 * (which replaces what the call left, e.g. with -overwrite): the library keeps only GDAL's last
 * message, often an empty one, where the program's stderr has the lines that say why (a refused
 * INSERT into spatial_ref_sys, the server's own error), which errors are classified by.
 */
export type HereOutcome = 'done' | 'declined' | 'failed';

/** Runs the transfer here when it is small, a slot is free and no call is stuck. */
export async function translateHere(job: TranslateHere, ctx: ConnectorContext): Promise<HereOutcome> {
  if (process.env.SVC_GDAL_IN_PROCESS === '0' || !(await small(job))) return 'declined';
  // Checked and taken with no await between: concurrent deliveries cannot both take the last slot.
  if (busy >= SLOTS || stuck > 0) return 'declined';
  if (ctx.signal.aborted) throw new ConnectorError('timeout', `${job.label}: stopped before it started`);
  busy += 1;
  let late = false;
  // Traced like the program it stands in for (platform/spawner.ts), marked as run in-process.
  const work = withSpan('gdal ogr2ogr', { 'process.executable.name': 'ogr2ogr', 'geoflow.gdal.in_process': true }, async () => {
    const source = await openDataset(job.source);
    try {
      const out = await gdal.vectorTranslateAsync(job.destination, source, job.args);
      // ogr2ogr's library call has committed its last transaction: closing frees the handles.
      out.close();
    } finally {
      source.close();
    }
  }).finally(() => {
    busy -= 1;
    if (late) stuck -= 1;
  });
  let timer: NodeJS.Timeout | undefined;
  const limitMs = inProcessLimits.stuckAfterMs;
  const overdue = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      late = true;
      stuck += 1;
      ctx.log.warn({ label: job.label, limitMs }, 'an in-process GDAL transfer is overdue; transfers run as ogr2ogr until it returns');
      reject(new ConnectorError('timeout', `${job.label}: the server did not finish the load within ${limitMs / 1000} s`));
    }, limitMs);
  });
  let failed = false;
  try {
    await Promise.race([work, overdue]);
  } catch (error) {
    if (error instanceof ConnectorError) throw error;
    ctx.log.debug({ label: job.label, reason: scrubPaths(errorText(error)) }, 'the in-process transfer failed; running ogr2ogr for its diagnosis');
    failed = true;
  } finally {
    clearTimeout(timer);
    // A rejection after the race was lost (the overdue call failing later) is not unhandled.
    work.catch(() => undefined);
  }
  // Like a killed ogr2ogr, a step stopped meanwhile does not count as loaded.
  if (ctx.signal.aborted) throw new ConnectorError('timeout', `${job.label}: stopped (deadline or cancellation)`);
  if (failed) return 'failed';
  done += 1;
  return 'done';
}
