import type { DataFacts, LayerFacts, StepLog } from '../../domain/runs/facts.js';
import type { DatasetInfo } from '../../geo/datasets/inspect.js';
import type { RunArtifact } from './artifact.js';

/*
 * What a Run's steps put in its log (domain/runs/run.ts StepLog): facts about the data each read
 * and wrote, from what the step has at hand (the inspected dataset, the artifact it received, the
 * connector's answer); the warnings met on the way are the Run's \`warnings\`. Nothing secret: connections by id and
 * type, places as the connectors name them publicly.
 */

/** Characters of a Python step's stdout and stderr kept in the log, each. */
const MAX_OUTPUT = 4_000;

export function layerFacts(info: Pick<DatasetInfo, 'layers'>): LayerFacts[] {
  return info.layers.map((l) => ({ name: l.name, geometry_type: l.geometry_type, crs: l.crs, crs_info: l.crs_info, features: l.feature_count }));
}

/** The features of every layer together, when each layer knows its count. */
export function featuresOf(layers: LayerFacts[]): number | null {
  return layers.every((l) => l.features !== null) ? layers.reduce((n, l) => n + (l.features ?? 0), 0) : null;
}

/** What a step received from the one before: the file, its format and its layers by name. */
export function artifactFacts(artifact: RunArtifact, layers?: LayerFacts[]): DataFacts {
  return {
    filename: artifact.filename,
    format: artifact.format,
    ...(layers
      ? { layers, features: featuresOf(layers) }
      : { layers: artifact.layers.map((name) => ({ name, geometry_type: null, crs: null, features: null })) }),
  };
}

/** A step's log: its facts, a Python step's output truncated. */
export function stepLog(parts: { read?: DataFacts; wrote?: DataFacts; output?: { stdout: string; stderr: string } | null }): StepLog {
  const cut = (s: string) => (s.length > MAX_OUTPUT ? `${s.slice(0, MAX_OUTPUT)}… (${s.length - MAX_OUTPUT} more characters)` : s);
  return {
    ...(parts.read ? { read: parts.read } : {}),
    ...(parts.wrote ? { wrote: parts.wrote } : {}),
    ...(parts.output ? { output: { stdout: cut(parts.output.stdout), stderr: cut(parts.output.stderr) } } : {}),
  };
}
