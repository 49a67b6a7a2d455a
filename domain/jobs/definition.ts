import type { ConvertRequest } from '../workspaces/contents.js';
import type { Subscription } from '../notifications/subscriptions.js';
import type { Operation } from '../operations.js';
import type { ParameterDeclaration } from './parameters.js';
import type { JobSchedule } from './schedule.js';
import { noTriggers, type JobTriggers } from './triggers.js';

/*
 * What a Job does (its definition, as stored and as a Run's snapshot carries it) and what follows
 * from it alone: the stages it runs and a Run's steps. The Job's decider is domain/jobs/job.ts.
 */

export type Stage = 'transform' | 'python' | 'convert';
/** The spec's pipeline flags as the caller set them: an absent key means "inferred". */
export type StageFlags = Partial<Record<Stage, boolean>>;
export type TransformMode = 'manual' | 'recipe' | 'sql';

/**
 * What a Job does, as checked and stored: the Job body after validation, with a Recipe's
 * operations copied in. Fields of a stage set to false are dropped before they get here, so
 * nothing left over can bring that stage back. A Run carries a copy of this (its snapshot).
 */
export interface JobDefinition {
  name: string;
  source_id: string;
  source_resource: Record<string, unknown> | null;
  transform_mode: TransformMode | null;
  operations: Operation[];
  output_fields: string[] | null;
  recipe_id: string | null;
  sql: string | null;
  python_script: string | null;
  python_filename: string | null;
  output_format: string | null;
  /** The output format's creation options, as a Workspace convert takes them (absent in Jobs saved before: none). */
  creation_options?: ConvertRequest['creation_options'];
  /** Null while the Job has no Destination yet: its Runs then fail at deliver, saying so. */
  destination_id: string | null;
  destination_target: Record<string, unknown>;
  schedule: JobSchedule | null;
  /** On-change and after-another-Job triggers (absent in Jobs saved before they existed: none). */
  triggers: JobTriggers;
  /** Run-time parameters, used as {{name}} in source_resource, destination_target and sql (absent before: none). */
  parameters: ParameterDeclaration[];
  pipeline: StageFlags;
  /** Who is told about this Job's Runs (absent in Jobs saved before notifications existed: none). */
  notifications?: Subscription[];
}

/** A definition as stored by any version: fields added later get their "none" value. */
export function withDefaults(d: JobDefinition): JobDefinition {
  return { ...d, triggers: d.triggers ?? noTriggers, parameters: d.parameters ?? [] };
}

/**
 * The stages a Job runs: an explicit flag wins; without one, a stage is there when the Job
 * carries its fields (the spec's "omitted: inferred"). Extract and deliver always run.
 */
export function stagesOf(
  d: Pick<JobDefinition, 'pipeline' | 'transform_mode' | 'operations' | 'recipe_id' | 'sql' | 'python_script' | 'output_format'>,
): Record<Stage, boolean> {
  const inferred: Record<Stage, boolean> = {
    transform: d.transform_mode !== null || d.operations.length > 0 || d.recipe_id !== null || d.sql !== null,
    python: d.python_script !== null,
    convert: d.output_format !== null,
  };
  return {
    transform: d.pipeline.transform ?? inferred.transform,
    python: d.pipeline.python ?? inferred.python,
    convert: d.pipeline.convert ?? inferred.convert,
  };
}

export type StepName = 'extract' | Stage | 'deliver';
/** A Run's steps, in order: extract → transform → python → convert → deliver. */
export function plannedSteps(d: JobDefinition): StepName[] {
  const s = stagesOf(d);
  return [
    'extract',
    ...(s.transform ? ['transform' as const] : []),
    ...(s.python ? ['python' as const] : []),
    ...(s.convert ? ['convert' as const] : []),
    'deliver',
  ];
}
