import { ApplicationFailure, Context } from '@temporalio/activity';
import { mkdirSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { load, record } from '../application/commands.js';
import { domainErrorsAsFailures, runErrorOf } from '../temporal/failures.js';
import { checkQueueRoom, recordQueuedRun, scheduledRunId, signalRun } from '../application/runs.js';
import type { RunTicket } from '../temporal/tickets.js';
import type { Services } from '../application/services.js';
import { deliverToDestination, extractFromSource } from '../application/transfers.js';
import { DomainError } from '../domain/errors.js';
import { jobDecider, jobStream, syncForRun, type StepName } from '../domain/jobs/job.js';
import { runDecider, runStream, stepAtFault, type ExistingRun, type RunError, type RunStats, type StepProgress } from '../domain/runs/run.js';
import { convertDataset } from '../geo/datasets/convert.js';
import { prepareUpload, stemOf, withoutSecondName } from '../geo/datasets/dataset-files.js';
import { formatCatalog } from '../geo/datasets/formats.js';
import { inspectDataset } from '../geo/datasets/inspect.js';
import { applyPipeline, type PipelineSpec } from '../geo/operations/pipeline.js';
import type { StoredDataset } from '../domain/datasets.js';
import { localDataset, storedDataset } from '../geo/datasets/stored.js';
import { localFile } from '../platform/file-store.js';
import { startHeartbeats } from './heartbeats.js';

/**
 * What one step hands to the next: the dataset to read, and the file a delivery would send if
 * no later step changes it (the extracted file as it came, the GeoPackage a transform wrote, the
 * converted output). Paths are relative to the Run's folder.
 */
export interface RunArtifact {
  dataset: StoredDataset;
  file: string;
  filename: string;
  /** GDAL driver short name (the formats catalog id). */
  format: string;
  media_type: string | null;
  layers: string[];
}

export interface RunPlan {
  proceed: boolean;
  steps: StepName[];
  position: string;
  /** Heartbeat timeout of the step activities (SVC_HEARTBEAT_TIMEOUT_S); absent in histories recorded before it existed. */
  heartbeatTimeoutMs?: number;
}

export interface ExtractOutcome {
  unchanged: boolean;
  /** The cursor the Source returned (kept on the Job if the Run succeeds). */
  sync: { cursor: unknown } | null;
  artifact: RunArtifact;
}

const mediaTypeOf = (format: string) => formatCatalog().find((f) => f.id === format)?.media_type ?? null;

/** A step's work: the Run, its folder, and where to say how far it is (heartbeats and the Run record). */
type StepWork<T> = (run: ExistingRun, dir: string, progress: (p: StepProgress) => void) => Promise<{ result: T; stats?: Partial<RunStats>; skipped?: boolean }>;

/** Progress is recorded on the Run at most this often (heartbeats carry every update). */
const PROGRESS_RECORD_MS = 5_000;

/**
 * The steps of a Run (workflows/run-job.ts) and its bookkeeping. Each step activity records its
 * own start and finish on the Run (idempotent, so a retried attempt appends nothing twice),
 * heartbeats while it works so a dead worker's attempt is retried elsewhere, and leaves its
 * files under the Run's folder for the next step. Sources and Destinations are opened, and their
 * secrets decrypted, here on the worker: payloads carry ids and relative paths only.
 */
export function runActivities(services: Services) {
  const { files } = services;
  const gdalLimits = { timeoutMs: services.config.gdalTimeoutMs, memoryBytes: services.config.gdalMemoryBytes };

  const readRun = async (runId: string): Promise<ExistingRun> => {
    const { state } = await load(services, runStream(runId), runDecider);
    if (state.status === 'absent') throw new DomainError('run_not_found', `Run ${runId} was not found`);
    return state;
  };
  const readJob = async (jobId: string) => (await load(services, jobStream(jobId), jobDecider)).state;

  /**
   * Records the step's start, runs it with heartbeats, records its finish with what it counted.
   * `handOver: false` when the next step runs in the same activity: its files then stay on this
   * worker (a retry of the activity does the step again).
   */
  async function step<T>(runId: string, name: StepName, work: StepWork<T>, handOver = true): Promise<T> {
    try {
      return await attemptStep(runId, name, work, handOver);
    } catch (error) {
      await noteFailedAttempt(runId, name, error);
      throw error;
    }
  }

  /**
   * A failure Temporal will retry (connection refused, timeouts, 5xx, a crash) is noted on the Run,
   * so that whoever watches a Run that keeps `running` sees why; one it will not retry fails the
   * Run instead. The note never changes the failure that Temporal sees.
   */
  async function noteFailedAttempt(runId: string, name: StepName, error: unknown): Promise<void> {
    if (error instanceof ApplicationFailure && error.nonRetryable) return;
    const { info, cancellationSignal } = Context.current();
    if (cancellationSignal.aborted) return;
    await record(services, runStream(runId), runDecider, {
      type: 'NoteFailedAttempt',
      runId,
      step: name,
      attempt: info.attempt,
      error: runErrorOf(error, name),
      at: services.clock(),
    }).catch((noteError: unknown) => services.log.warn({ runId, step: name, err: noteError }, 'could not note a failed attempt on the Run'));
  }

  async function attemptStep<T>(runId: string, name: StepName, work: StepWork<T>, handOver: boolean): Promise<T> {
    return domainErrorsAsFailures(async () => {
      // The Run as the start leaves it: one read of its stream for both.
      const started = await record(services, runStream(runId), runDecider, { type: 'StartStep', runId, step: name, at: services.clock() });
      if (started.state.status === 'absent') throw new DomainError('run_not_found', `Run ${runId} was not found`);
      const run = started.state;
      const heartbeat = startHeartbeats(services.config.heartbeatTimeoutMs);
      const { cancellationSignal } = Context.current();
      const recorder = progressRecorder(runId, name);
      const progress = (p: StepProgress) => {
        heartbeat.progress(p);
        recorder.offer(heartbeat.latest()!);
      };
      try {
        const done = await work(run, await files.workDir(runId, name), progress).catch((error) => {
          // Cancelled (the Job was deleted): say so, rather than with whatever the aborted transfer threw.
          throw cancellationSignal.aborted ? cancellationSignal.reason : error;
        });
        // Stored before the step is recorded done: the next step may run on another worker, and
        // a retry of it after this worker dies finds its input in storage. (A delivery's folder
        // holds only its scratch.)
        if (name !== 'deliver' && handOver) await files.publish(runId, name);
        // The last progress lands before the finish (a note on a finished step is dropped).
        await recorder.stop();
        await record(services, runStream(runId), runDecider, {
          type: 'FinishStep',
          runId,
          step: name,
          status: done.skipped ? 'skipped' : 'succeeded',
          stats: done.stats ?? {},
          at: services.clock(),
        });
        return done.result;
      } finally {
        heartbeat.stop();
        await recorder.stop();
      }
    });
  }

  /**
   * Notes a step's progress on the Run every PROGRESS_RECORD_MS at most, one write at a time, so
   * the Run page, `svc jobs run --wait` and the Python client see a long write move; a failed
   * note is logged, never fails the step.
   */
  function progressRecorder(runId: string, name: StepName) {
    let pending: StepProgress | null = null;
    let lastAt = 0;
    let writing: Promise<void> = Promise.resolve();
    let stopped = false;
    const flush = () => {
      if (!pending || stopped) return;
      const p = pending;
      pending = null;
      lastAt = Date.now();
      writing = writing.then(() =>
        record(services, runStream(runId), runDecider, { type: 'NoteStepProgress', runId, step: name, progress: p, at: services.clock() }).then(
          () => undefined,
          (error: unknown) => services.log.warn({ runId, step: name, err: error }, 'could not note progress on the Run'),
        ),
      );
    };
    return {
      offer(p: StepProgress) {
        pending = p;
        if (Date.now() - lastAt >= PROGRESS_RECORD_MS) flush();
      },
      async stop() {
        flush();
        stopped = true;
        await writing;
      },
    };
  }

  const transferContext = (dir: string, progress?: (p: StepProgress) => void) => ({
    log: services.log,
    workDir: makeDir(dir),
    // A Run reads what its Source holds, up to the Job input limit (not the interactive upload limit).
    maxBytes: services.config.maxJobInputBytes,
    signal: Context.current().cancellationSignal,
    progress: (info: { bytes?: number; features?: number; message?: string }) =>
      progress
        ? progress({
            ...(info.bytes === undefined ? {} : { bytes_written: info.bytes }),
            ...(info.features === undefined ? {} : { features_written: info.features }),
          })
        : Context.current().heartbeat(info),
  });

  /** Reads the Source into the Run's folder (incrementally when it can), then opens it like an upload. */
  const extractWork =
    (runId: string): StepWork<ExtractOutcome> =>
    async (run, dir, progress) => {
      const snapshot = run.snapshot;
      const cursor = run.sync?.cursor ?? null;
      const extracted = await extractFromSource(
        services,
        { ownerId: run.ownerId, sourceId: snapshot.source_id, resource: snapshot.source_resource ?? {}, sync: cursor === null ? null : { cursor } },
        transferContext(path.join(dir, 'download'), progress),
      );
      const sync = extracted.sync ? { cursor: extracted.sync.cursor } : null;
      if (extracted.unchanged) {
        const none = {
          dataset: { path: '', open_options: [], driver: null, assumed_crs: null },
          file: '',
          filename: '',
          format: '',
          media_type: null,
          layers: [],
        };
        return { result: { unchanged: true, sync, artifact: none }, stats: { bytes_read: 0, features_read: 0 } };
      }
      const ref = await prepareUpload(extracted.file, extracted.filename, path.join(dir, 'dataset'), {
        maxUncompressedBytes: services.config.maxJobInputBytes * 4,
      });
      // One name for a file the dataset holds as it came: the step's folder is stored once.
      const file = await withoutSecondName(extracted.file, ref);
      const info = await inspectDataset(ref);
      const counts = info.layers.map((l) => l.feature_count);
      const features = extracted.features ?? (counts.every((n) => n !== null) ? counts.reduce<number>((a, n) => a + (n ?? 0), 0) : null);
      const artifact: RunArtifact = {
        dataset: storedDataset(files, runId, ref),
        file: files.nameOf(runId, file),
        filename: extracted.filename,
        format: info.driver,
        media_type: mediaTypeOf(info.driver),
        layers: info.layers.map((l) => l.name),
      };
      return { result: { unchanged: false, sync, artifact }, stats: { bytes_read: extracted.bytes, features_read: features } };
    };

  /** Publishes the artifact; the Run's id is the delivery id, so a resumed delivery never duplicates rows. */
  const deliverWork =
    (runId: string, a: RunArtifact): StepWork<Record<string, never>> =>
    async (run, dir, progress) => {
      if (!run.snapshot.destination_id) {
        throw new DomainError('invalid_destination', 'The Job has no Destination: set its destination_id, then run it again', { step: 'deliver' });
      }
      const delivery = await deliverToDestination(
        services,
        {
          ownerId: run.ownerId,
          destinationId: run.snapshot.destination_id,
          target: run.snapshot.destination_target,
          input: {
            file: await localFile(files, runId, a.file),
            filename: a.filename,
            format: a.format,
            mediaType: a.media_type,
            layers: a.layers,
            deliveryId: runId,
            reinitialize: run.sync?.reinitialize ?? false,
          },
        },
        transferContext(dir, progress),
      );
      const size = delivery.bytes_written ?? (await stat(await localFile(files, runId, a.file)).catch(() => null))?.size ?? null;
      return { result: {}, stats: { features_written: delivery.rows_written ?? null, bytes_written: size } };
    };

  /** Records the Run as queued (if the API has not yet) and as started; says whether it proceeds. */
  async function beginRunSteps(input: { ticket: RunTicket; workflowId: string; workflowRunId: string }): Promise<Omit<RunPlan, 'heartbeatTimeoutMs'>> {
    const { runId } = input.ticket;
    const queued = await recordQueuedRun(services, input.ticket);
    if (queued.status === 'skipped') return { proceed: false, steps: [], position: queued.position };
    const run = await readRun(runId);
    const steps = run.steps.map((s) => s.name);
    if (run.status === 'running') return { proceed: true, steps, position: '0' };
    if (run.status !== 'queued') return { proceed: false, steps, position: '0' };
    const job = await readJob(run.jobId);
    if (job.status !== 'active') {
      const outcome = await record(services, runStream(runId), runDecider, {
        type: 'CancelRun',
        runId,
        reason: 'The Job was deleted before this Run started',
        at: services.clock(),
      });
      return { proceed: false, steps, position: outcome.position };
    }
    const outcome = await record(services, runStream(runId), runDecider, {
      type: 'StartRun',
      runId,
      workflowId: input.workflowId,
      workflowRunId: input.workflowRunId,
      sync: syncForRun(job.sync),
      at: services.clock(),
    });
    return { proceed: true, steps, position: outcome.position };
  }

  /** A transform-type step: the pipeline engine on the previous step's dataset, into a GeoPackage. */
  async function pipelineStep(runId: string, name: 'transform' | 'python', input: RunArtifact, spec: (run: ExistingRun) => PipelineSpec): Promise<RunArtifact> {
    return step(runId, name, async (run, dir) => {
      const result = await applyPipeline(await localDataset(files, runId, input.dataset), { layers: input.layers, ...spec(run) }, dir);
      if (!result.changed) return { result: input };
      const file = files.nameOf(runId, result.dataset.path);
      const format = result.layers.length === 0 ? 'GTiff' : 'GPKG';
      const filename = `${stemOf(input.filename) || 'result'}${path.extname(result.dataset.path)}`;
      return {
        result: { dataset: storedDataset(files, runId, result.dataset), file, filename, format, media_type: mediaTypeOf(format), layers: result.layers },
      };
    });
  }

  return {
    /**
     * Records the Run as queued (if the API has not yet) and as started, with the sync state it
     * reads with. A Run cancelled while it waited, or of a Job deleted meanwhile, does not start.
     */
    async beginRun(input: { ticket: RunTicket; workflowId: string; workflowRunId: string }): Promise<RunPlan> {
      return domainErrorsAsFailures(async () => {
        const plan = await beginRunSteps(input);
        // The step activities' heartbeat timeout comes from this worker's settings, through the
        // workflow's history (a workflow cannot read the environment).
        return { ...plan, heartbeatTimeoutMs: services.config.heartbeatTimeoutMs };
      });
    },

    /** Reads the Source into the Run's folder (incrementally when it can), then opens it like an upload. */
    async extractStep(input: { runId: string }): Promise<ExtractOutcome> {
      return step(input.runId, 'extract', extractWork(input.runId));
    },

    /** Operations (with output_fields as a final column selection) or the SQL, on every layer. */
    async transformStep(input: { runId: string; input: RunArtifact }): Promise<RunArtifact> {
      return pipelineStep(input.runId, 'transform', input.input, ({ snapshot }) => {
        const fields = snapshot.output_fields?.length ? [{ type: 'select_columns', columns: snapshot.output_fields }] : [];
        return { operations: [...snapshot.operations, ...fields], sql: snapshot.sql };
      });
    },

    /** The Job's Python script, sandboxed, on the whole dataset. */
    async pythonStep(input: { runId: string; input: RunArtifact }): Promise<RunArtifact> {
      return pipelineStep(input.runId, 'python', input.input, ({ snapshot }) => ({
        python: { script: snapshot.python_script ?? '', filename: snapshot.python_filename ?? 'step.py' },
      }));
    },

    async convertStep(input: { runId: string; input: RunArtifact }): Promise<RunArtifact> {
      return step(input.runId, 'convert', async (run, dir, progress) => {
        const from = input.input;
        const result = await convertDataset(
          await localDataset(files, input.runId, from.dataset),
          { outputFormat: run.snapshot.output_format!, baseName: stemOf(from.filename) || 'result' },
          dir,
          {
            ...gdalLimits,
            progress,
            signal: Context.current().cancellationSignal,
          },
        );
        const file = path.join(dir, result.filename);
        const artifact: RunArtifact = {
          // Later steps read the converted file (a .zip for several-file formats stays a file to send).
          dataset: { path: files.nameOf(input.runId, file), open_options: [], driver: null, assumed_crs: null },
          file: files.nameOf(input.runId, file),
          filename: result.filename,
          format: result.format,
          media_type: result.media_type,
          layers: result.layers,
        };
        return { result: artifact };
      });
    },

    /** Publishes the last artifact; the Run's id is the delivery id, so a resumed delivery never duplicates rows. */
    async deliverStep(input: { runId: string; input: RunArtifact }): Promise<Record<string, never>> {
      return step(input.runId, 'deliver', deliverWork(input.runId, input.input));
    },

    /**
     * Extract and deliver in one activity, for a Job with no step between them: the extracted
     * file goes straight from this worker's disk to the Destination, with one activity fewer to
     * schedule and, with object storage, no upload of the file for a next step elsewhere. Each
     * step is still recorded as its own. A retried attempt extracts again (the Run's sync cursor
     * is the one it started with) and delivers under the same delivery id, so rows land once.
     * Having succeeded, it removes the Run's files itself (the workflow then skips cleanupRun),
     * without waiting: the Run is done with them, and the removal is then off the Run's path (the
     * API's cleanup sweep removes whatever a crash leaves behind).
     */
    async extractAndDeliverStep(input: { runId: string }): Promise<Omit<ExtractOutcome, 'artifact'>> {
      const extracted = await step(input.runId, 'extract', extractWork(input.runId), false);
      if (!extracted.unchanged) await step(input.runId, 'deliver', deliverWork(input.runId, extracted.artifact));
      files
        .remove(input.runId)
        .catch((error: unknown) => services.log.warn({ runId: input.runId, err: error }, 'could not remove the files of a finished Run'));
      return { unchanged: extracted.unchanged, sync: extracted.sync };
    },

    /**
     * Tells the Job how its Run ended (consecutive failures, the new sync cursor), then records it on the Run.
     * Returns where the event store stands, for whoever waits on the read models.
     */
    async finishRun(input: {
      runId: string;
      outcome: 'succeeded' | 'failed' | 'cancelled';
      error?: RunError;
      /** The failure as each step of an activity that ran several would record it: the Run says which step failed. */
      byStep?: RunError[];
      reason?: string;
      skippedReason?: string | null;
      sync?: { cursor: unknown } | null;
    }): Promise<{ position: string; error?: RunError }> {
      return domainErrorsAsFailures(async () => {
        const { runId } = input;
        const at = services.clock();
        const run = await readRun(runId);
        let error = input.error;
        if (input.outcome === 'failed' && input.byStep) {
          // An activity that ran several steps failed: the Run's record says in which.
          const atFault = stepAtFault(run);
          error = input.byStep.find((e) => e.step === atFault) ?? error;
        }
        const command =
          input.outcome === 'succeeded'
            ? ({ type: 'SucceedRun', runId, skippedReason: input.skippedReason ?? null, at } as const)
            : input.outcome === 'failed'
              ? ({ type: 'FailRun', runId, error: error!, at } as const)
              : ({ type: 'CancelRun', runId, reason: input.reason ?? 'cancelled', at } as const);
        const sync = input.outcome === 'succeeded' && run.sync ? { cursor: input.sync ? input.sync.cursor : run.sync.cursor, seq: run.sync.seq } : undefined;
        // The Job first: the jobs projector runs before the runs projector, so whoever sees the Run
        // ended also sees its Job's new cursor and counts. A retry after a crash between the two
        // records nothing new for the Job (it ignores a Run it has already recorded).
        const job = await record(services, jobStream(run.jobId), jobDecider, {
          type: 'RecordRunOutcome',
          jobId: run.jobId,
          runId,
          trigger: run.trigger,
          status: input.outcome,
          ...(sync ? { sync } : {}),
          maxConsecutiveFailures: services.config.jobMaxConsecutiveFailures,
          at,
        });
        const ran = await record(services, runStream(runId), runDecider, command);
        const position = BigInt(job.position) > BigInt(ran.position) ? job.position : ran.position;
        return error ? { position, error } : { position };
      });
    },

    async cleanupRun(input: { runId: string }): Promise<void> {
      await files.remove(input.runId);
    },

    /** The Job was deleted: the Runs still waiting are recorded as cancelled. */
    async cancelQueuedRuns(input: { runIds: string[]; reason: string }): Promise<void> {
      for (const runId of input.runIds) {
        if ((await load(services, runStream(runId), runDecider)).state.status === 'absent') continue;
        await record(services, runStream(runId), runDecider, { type: 'CancelRun', runId, reason: input.reason, at: services.clock() });
      }
    },

    /**
     * A schedule fired: ask for a Run as Run Now does. Skipped when the Job is disabled or gone
     * (a pause that raced the fire) or when its queue is full.
     */
    async requestScheduledRun(input: { jobId: string; ownerId: string; workflowId: string; scheduledFor: string | null }): Promise<{ runId: string | null }> {
      return domainErrorsAsFailures(async () => {
        const job = await readJob(input.jobId);
        if (job.status !== 'active' || !job.enabled || job.ownerId !== input.ownerId) return { runId: null };
        const ticket: RunTicket = {
          runId: scheduledRunId(input.workflowId),
          jobId: input.jobId,
          ownerId: input.ownerId,
          trigger: 'schedule',
          retryOf: null,
          scheduledFor: input.scheduledFor,
        };
        const known = (await load(services, runStream(ticket.runId), runDecider)).state.status !== 'absent';
        if (!known) {
          try {
            await checkQueueRoom(services, input.jobId);
          } catch (error) {
            if (error instanceof DomainError && error.code === 'run_queue_full') {
              services.log.warn({ jobId: input.jobId }, 'scheduled Run skipped: the Job has too many Runs waiting');
              return { runId: null };
            }
            throw error;
          }
        }
        await signalRun(services, ticket);
        const queued = await recordQueuedRun(services, ticket);
        return { runId: queued.status === 'skipped' ? null : ticket.runId };
      });
    },
  };
}

/** Makes a folder (and its parents) and gives back its path. */
function makeDir(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}
