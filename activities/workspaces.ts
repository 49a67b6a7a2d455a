import { Context } from '@temporalio/activity';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { ConvertOutput, ConvertRequest, Pipeline, StoredDataset } from '../domain/workspaces/workspace.js';
import { convertDataset } from '../geo/convert.js';
import { applyPipeline } from '../geo/pipeline.js';
import { WorkspaceFiles } from '../platform/workspace-files.js';
import { domainErrorsAsFailures } from './failures.js';

export interface ConvertWorkspaceInput {
  workspaceId: string;
  conversionId: string;
  dataset: StoredDataset;
  pipeline: Pipeline;
  request: ConvertRequest;
  /** Output file name stem: the uploaded file's name without its extension. */
  baseName: string;
}

/**
 * Upload + stored pipeline → output file, always from the immutable upload (outputs never
 * stack). Heartbeats while GDAL works so Temporal can tell a slow conversion from a dead worker.
 */
export function workspaceActivities(deps: { dataDir: string }) {
  const files = new WorkspaceFiles(deps.dataDir);
  return {
    async convertWorkspace(input: ConvertWorkspaceInput): Promise<ConvertOutput> {
      return domainErrorsAsFailures(async () => {
        const heartbeat = setInterval(() => Context.current().heartbeat(), 10_000);
        const scratch = files.scratch(input.workspaceId, `convert-${input.conversionId}`);
        const outDir = files.outputDir(input.workspaceId, input.conversionId);
        try {
          await rm(outDir, { recursive: true, force: true });
          await mkdir(outDir, { recursive: true });
          const upload = files.datasetRef(input.workspaceId, input.dataset);
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
          );
          return {
            format: result.format,
            filename: result.filename,
            size: result.size,
            media_type: result.media_type ?? null,
            layers: result.layers,
            file: files.relative(input.workspaceId, path.join(outDir, result.filename)),
          };
        } catch (error) {
          await rm(outDir, { recursive: true, force: true });
          throw error;
        } finally {
          clearInterval(heartbeat);
          await rm(scratch, { recursive: true, force: true });
        }
      });
    },
  };
}
