import { fillSql } from '../../domain/jobs/parameters.js';
import path from 'node:path';
import type { ExistingRun } from '../../domain/runs/state.js';
import { stemOf } from '../../geo/datasets/dataset-files.js';
import { localDataset, storedDataset } from '../../geo/datasets/stored.js';
import { applyPipeline, inspectDataset } from '../../geo/isolation/index.js';
import type { PipelineSpec } from '../../geo/operations/pipeline.js';
import { mediaTypeOf, type RunArtifact } from './artifact.js';
import { artifactFacts, featuresOf, layerFacts, stepLog } from './log.js';
import type { StepServices } from './step-services.js';
import { runStep } from './steps.js';

/** A transform-type step: the pipeline engine on the previous step's dataset, into a GeoPackage (a GeoTIFF for a raster). */
async function pipelineStep(
  services: StepServices,
  runId: string,
  name: 'transform' | 'python',
  input: RunArtifact,
  spec: (run: ExistingRun) => PipelineSpec,
): Promise<RunArtifact> {
  const { files } = services;
  return runStep(services, runId, name, async (run, dir) => {
    const result = await applyPipeline(await localDataset(files, runId, input.dataset), { layers: input.layers, ...spec(run) }, dir);
    if (!result.changed)
      return { result: input, warnings: result.warnings, log: stepLog({ read: artifactFacts(input), wrote: artifactFacts(input), output: result.python }) };
    const file = files.nameOf(runId, result.dataset.path);
    const format = result.layers.length === 0 ? 'GTiff' : 'GPKG';
    const filename = `${stemOf(input.filename) || 'result'}${path.extname(result.dataset.path)}`;
    // What the step wrote, as the next step will read it: its layers, geometry types, CRSs and counts.
    const written = await inspectDataset(result.dataset);
    const layers = layerFacts(written);
    return {
      result: { dataset: storedDataset(files, runId, result.dataset), file, filename, format, media_type: mediaTypeOf(format), layers: result.layers },
      warnings: result.warnings,
      log: stepLog({
        read: artifactFacts(input),
        wrote: { filename, format, layers, features: featuresOf(layers) },
        output: result.python,
      }),
    };
  });
}

export function pipelineActivities(services: StepServices) {
  return {
    /** Operations (with output_fields as a final column selection) or the SQL, on every layer. */
    async transformStep(input: { runId: string; input: RunArtifact }): Promise<RunArtifact> {
      return pipelineStep(services, input.runId, 'transform', input.input, ({ snapshot, parameters }) => {
        const fields = snapshot.output_fields?.length ? [{ type: 'select_columns', columns: snapshot.output_fields }] : [];
        // Parameters go into the SQL as literals (domain/jobs/parameters.ts).
        return { operations: [...snapshot.operations, ...fields], sql: snapshot.sql === null ? null : fillSql(snapshot.sql, parameters) };
      });
    },

    /** The Job's Python script, sandboxed, on the whole dataset. */
    async pythonStep(input: { runId: string; input: RunArtifact }): Promise<RunArtifact> {
      return pipelineStep(services, input.runId, 'python', input.input, ({ snapshot }) => ({
        python: { script: snapshot.python_script ?? '', filename: snapshot.python_filename ?? 'step.py' },
      }));
    },
  };
}
