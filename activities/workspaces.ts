import { record } from '../application/commands.js';
import { domainErrorsAsFailures } from '../temporal/failures.js';
import type { Services } from '../application/services.js';
import type { ConvertOutput, ConvertRequest, Pipeline } from '../domain/workspaces/contents.js';
import { workspaceDecider, workspaceStream } from '../domain/workspaces/workspace.js';
import { applyPipeline } from '../geo/isolation/index.js';
import type { StoredDataset } from '../domain/datasets.js';
import { localDataset } from '../geo/datasets/stored.js';
import { convertToFile } from './convert.js';
import { startHeartbeats } from './heartbeats.js';
import { DomainError } from '../domain/errors.js';
import { progressReporter } from '../application/operation-progress.js';
import type { ProgressTarget } from '../temporal/workspaces.js';

export interface ConversionRef {
  workspaceId: string;
  conversionId: string;
}

export interface StartConversionInput extends ConversionRef {
  actorId: string;
  request: ConvertRequest;
}

export interface ConvertWorkspaceInput extends ConversionRef {
  dataset: StoredDataset;
  pipeline: Pipeline;
  request: ConvertRequest;
  /** Output file name stem: the uploaded file's name without its extension. */
  baseName: string;
  /** The uploaded file's name, which the download must not carry (absent in workflows started before). */
  uploadFilename?: string;
  /** Datasets of other Workspaces of the caller that operations read (workspace_id), by id. */
  related?: Record<string, StoredDataset>;
  progress?: ProgressTarget;
}

export type FinishConversionInput = ConversionRef & ({ output: ConvertOutput } | { error: { code: string; message: string } });

/**
 * The Workspace convert, as activities of convertWorkspaceWorkflow: record the start (which fixes
 * the pipeline the conversion uses), convert, record the outcome. Recording is idempotent: a
 * retried activity repeats a command the decider has already seen and appends nothing.
 */
export function workspaceActivities(services: Pick<Services, 'store' | 'clock' | 'config' | 'files' | 'pool' | 'log'>) {
  const { files } = services;
  return {
    async startWorkspaceConversion(input: StartConversionInput): Promise<{ pipeline: Pipeline; position: string; heartbeatTimeoutMs?: number }> {
      return domainErrorsAsFailures(async () => {
        const outcome = await record(services, workspaceStream(input.workspaceId), workspaceDecider, {
          type: 'StartConversion',
          workspaceId: input.workspaceId,
          actorId: input.actorId,
          conversionId: input.conversionId,
          request: input.request,
          at: services.clock(),
        });
        if (outcome.state.status === 'absent') throw new Error('unreachable: a started conversion has a Workspace');
        // The convert activity's heartbeat timeout (SVC_HEARTBEAT_TIMEOUT_S) reaches the workflow from here.
        return { pipeline: outcome.state.pipeline, position: outcome.position, heartbeatTimeoutMs: services.config.heartbeatTimeoutMs };
      });
    },

    async finishWorkspaceConversion(input: FinishConversionInput): Promise<{ position: string }> {
      const at = services.clock();
      const command =
        'output' in input
          ? { type: 'CompleteConversion' as const, workspaceId: input.workspaceId, conversionId: input.conversionId, output: input.output, at }
          : { type: 'FailConversion' as const, workspaceId: input.workspaceId, conversionId: input.conversionId, error: input.error, at };
      const outcome = await record(services, workspaceStream(input.workspaceId), workspaceDecider, command);
      return { position: outcome.position };
    },

    /**
     * Upload + stored pipeline → output file, always from the immutable upload (outputs never
     * stack). Heartbeats while GDAL works so Temporal can tell a slow conversion from a dead worker.
     */
    async convertWorkspace(input: ConvertWorkspaceInput): Promise<ConvertOutput> {
      return domainErrorsAsFailures(async () => {
        const mirror = progressReporter(services, input.progress);
        const heartbeat = startHeartbeats(services.config.heartbeatTimeoutMs, mirror);
        const scratchName = `tmp/convert-${input.conversionId}`;
        const scratch = await files.workDir(input.workspaceId, scratchName);
        const outName = `outputs/${input.conversionId}`;
        const outDir = await files.workDir(input.workspaceId, outName);
        try {
          const upload = await localDataset(files, input.workspaceId, input.dataset);
          const related = input.related ?? {};
          const datasets = async (id: string) => {
            if (!related[id]) throw new DomainError('invalid_transformation', `workspace_id ${JSON.stringify(id)} is not known here`, { workspace_id: id });
            return localDataset(files, id, related[id]);
          };
          const { dataset: source, warnings: pipelineWarnings } = await applyPipeline(upload, input.pipeline, scratch, { datasets });
          // The pipeline has no figures of its own; what follows, the write, has GDAL's percentage.
          mirror?.({ phase: 'write' });
          const output = await convertToFile(services, {
            owner: input.workspaceId,
            dataset: source,
            request: {
              outputFormat: input.request.output_format,
              targetCrs: input.request.target_crs,
              layers: input.request.layers.length ? input.request.layers : null,
              baseName: input.baseName,
              creationOptions: input.request.creation_options ?? null,
              transformation: input.request.transformation ?? null,
              ...(input.uploadFilename ? { avoidFilename: input.uploadFilename } : {}),
            },
            outDir,
            progress: (p) => heartbeat.progress(p),
          });
          // Stored before the conversion is recorded: the download may land on any API replica.
          await files.publish(input.workspaceId, outName);
          return { ...output, warnings: [...pipelineWarnings, ...(output.warnings ?? [])] };
        } catch (error) {
          await files.remove(input.workspaceId, outName);
          throw error;
        } finally {
          heartbeat.stop();
          await files.remove(input.workspaceId, scratchName);
        }
      });
    },
  };
}
