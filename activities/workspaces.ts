import { Context } from '@temporalio/activity';
import path from 'node:path';
import { record } from '../application/commands.js';
import { domainErrorsAsFailures } from '../temporal/failures.js';
import type { Services } from '../application/services.js';
import { workspaceDecider, workspaceStream, type ConvertOutput, type ConvertRequest, type Pipeline } from '../domain/workspaces/workspace.js';
import { convertDataset } from '../geo/datasets/convert.js';
import { applyPipeline } from '../geo/operations/pipeline.js';
import type { StoredDataset } from '../domain/datasets.js';
import { localDataset } from '../geo/datasets/stored.js';
import { startHeartbeats } from './heartbeats.js';

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
}

export type FinishConversionInput = ConversionRef & ({ output: ConvertOutput } | { error: { code: string; message: string } });

/**
 * The Workspace convert, as activities of convertWorkspaceWorkflow: record the start (which fixes
 * the pipeline the conversion uses), convert, record the outcome. Recording is idempotent: a
 * retried activity repeats a command the decider has already seen and appends nothing.
 */
export function workspaceActivities(services: Pick<Services, 'store' | 'clock' | 'config' | 'files'>) {
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
        const heartbeat = startHeartbeats(services.config.heartbeatTimeoutMs);
        const scratchName = `tmp/convert-${input.conversionId}`;
        const scratch = await files.workDir(input.workspaceId, scratchName);
        const outName = `outputs/${input.conversionId}`;
        const outDir = await files.workDir(input.workspaceId, outName);
        try {
          const upload = await localDataset(files, input.workspaceId, input.dataset);
          const { dataset: source } = await applyPipeline(upload, input.pipeline, scratch);
          const result = await convertDataset(
            source,
            {
              outputFormat: input.request.output_format,
              targetCrs: input.request.target_crs,
              layers: input.request.layers.length ? input.request.layers : null,
              baseName: input.baseName,
            },
            outDir,
            {
              timeoutMs: services.config.gdalTimeoutMs,
              memoryBytes: services.config.gdalMemoryBytes,
              progress: (p) => heartbeat.progress(p),
              signal: Context.current().cancellationSignal,
            },
          );
          // Stored before the conversion is recorded: the download may land on any API replica.
          await files.publish(input.workspaceId, outName);
          return {
            format: result.format,
            filename: result.filename,
            size: result.size,
            media_type: result.media_type ?? null,
            layers: result.layers,
            file: files.nameOf(input.workspaceId, path.join(outDir, result.filename)),
          };
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
