import { stemOf } from '../../geo/datasets/dataset-files.js';
import { localDataset } from '../../geo/datasets/stored.js';
import { convertToFile } from '../convert.js';
import type { RunArtifact } from './artifact.js';
import { artifactFacts, stepLog } from './log.js';
import type { StepServices } from './step-services.js';
import { runStep } from './steps.js';

export function convertActivities(services: StepServices) {
  const { files } = services;
  return {
    /** The previous step's dataset in the Job's output_format, through the convert Workspaces use (activities/convert.ts). */
    async convertStep(input: { runId: string; input: RunArtifact }): Promise<RunArtifact> {
      const { runId, input: from } = input;
      return runStep(services, runId, 'convert', async (run, dir, progress) => {
        const out = await convertToFile(services, {
          owner: runId,
          dataset: await localDataset(files, runId, from.dataset),
          request: {
            outputFormat: run.snapshot.output_format!,
            creationOptions: run.snapshot.creation_options ?? null,
            baseName: stemOf(from.filename) || 'result',
          },
          outDir: dir,
          progress,
        });
        return {
          result: {
            // Later steps read the converted file (a .zip for several-file formats stays a file to send).
            dataset: { path: out.file, open_options: [], driver: null, assumed_crs: null },
            file: out.file,
            filename: out.filename,
            format: out.format,
            media_type: out.media_type,
            layers: out.layers,
          },
          ...(out.warnings?.length ? { warnings: out.warnings } : {}),
          log: stepLog({
            read: artifactFacts(from),
            wrote: {
              filename: out.filename,
              format: out.format,
              bytes: out.size,
              layers: out.layers.map((name: string) => ({ name, geometry_type: null, crs: null, features: null })),
            },
          }),
        };
      });
    },
  };
}
