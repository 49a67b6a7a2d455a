import { z } from 'zod';
import { NEXT_RUNS, type JobView } from '../../application/jobs.js';
import { runTriggers } from '../../domain/runs/triggers.js';
import { operationShape } from '../../domain/operations.js';
import { notificationEvents } from '../../domain/notifications/subscriptions.js';
import { runStatuses } from '../../domain/runs/statuses.js';
import type { RunView } from '../../projections/runs.js';
import { runWorkflowId } from '../../temporal/ids.js';
import { creationOptions, crsInfo, processingWarning, timestamp } from '../schemas.js';
import { parametersSchema, scheduleSchema, triggersSchema } from './automation-schemas.js';

/*
 * The Job and Run JSON shapes (docs/api-conventions.md), made from what their readers answer
 * (application/jobs.ts JobView, projections/runs.ts RunView).
 */

const stageFlags = z.object({ transform: z.boolean().optional(), convert: z.boolean().optional(), python: z.boolean().optional() });

/** What a Job does: the fields of its body, as stored (a Run's job_snapshot has the same shape). */
export const jobDefinitionSchema = z.object({
  name: z.string(),
  source_id: z.string(),
  source_resource: z.record(z.string(), z.unknown()).nullable(),
  transform_mode: z.enum(['manual', 'recipe', 'sql']).nullable(),
  operations: z.array(operationShape),
  output_fields: z.array(z.string()).nullable(),
  recipe_id: z.string().nullable(),
  sql: z.string().nullable(),
  python_script: z.string().nullable(),
  python_filename: z.string().nullable(),
  output_format: z.string().nullable(),
  creation_options: creationOptions.nullable(),
  destination_id: z.string().nullable().describe('null while the Job has no Destination (its Runs then fail at deliver)'),
  destination_target: z.record(z.string(), z.unknown()),
  schedule: scheduleSchema.nullable(),
  triggers: triggersSchema,
  parameters: parametersSchema,
  pipeline: stageFlags.describe('The stage flags as set: a missing flag means the stage is inferred from the fields'),
  notifications: z
    .array(z.object({ channel_id: z.string(), events: z.array(z.enum(notificationEvents)), slow_after_seconds: z.number().int().nullable() }))
    .describe('Who is told about the Runs of this Job, and of what'),
});

export const jobSchema = jobDefinitionSchema
  .extend({
    id: z.string(),
    stages: z
      .object({ transform: z.boolean(), python: z.boolean(), convert: z.boolean() })
      .describe('The stages a Run of this Job runs (flags applied, the rest inferred)'),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable().describe('Why the Job disabled itself (repeated failed scheduled Runs); null otherwise'),
    next_run_at: timestamp.nullable().describe('Next scheduled Run; null without a schedule or while disabled'),
    next_run_times: z.array(timestamp).describe(`The next ${NEXT_RUNS} scheduled Runs (empty without a schedule or while disabled)`),
    schedule_description: z.string().nullable().describe('The schedule in words (null without one)'),
    webhook: z
      .object({
        url: z.string().describe('POST here to start a Run (docs/jobs.md, "Webhook trigger")'),
        auth: z.enum(['hmac', 'bearer']),
        created_at: timestamp,
        rotated_at: timestamp.nullable(),
      })
      .nullable()
      .describe('The inbound webhook trigger, if issued; its secret is shown once, when issued or rotated'),
    followers: z
      .array(z.object({ id: z.string(), name: z.string(), when: z.enum(['succeeded', 'failed', 'any']) }))
      .describe('Jobs that run after this one (their triggers.after names it)'),
    last_run: z.object({ id: z.string(), status: z.enum(runStatuses), finished_at: timestamp.nullable() }).nullable(),
    sync: z.object({
      supported: z.boolean().describe('Whether the Source reads incrementally'),
      cursor: z.unknown().describe('Where the last succeeded Run stopped reading (connector-defined)'),
      updated_at: timestamp.nullable(),
      reset_pending: z.boolean(),
      reinitialize_pending: z.boolean(),
    }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Job' });

const runErrorSchema = z.object({ code: z.string(), message: z.string(), step: z.string().nullable(), retryable: z.boolean(), reason: z.string().optional() });

const layerFactsSchema = z.object({
  name: z.string(),
  geometry_type: z.string().nullable(),
  crs: z.string().nullable(),
  crs_info: crsInfo.nullable().optional().describe('Code, name and unit of the CRS (absent in Runs logged before it was kept)'),
  features: z.number().nullable(),
});

const dataFactsSchema = z
  .object({
    connection: z.object({ id: z.string(), type: z.string() }).optional().describe('The Source or Destination'),
    location: z.record(z.string(), z.unknown()).optional().describe('The table, object key, layer or URL (without query) read or written'),
    filename: z.string().optional(),
    format: z.string().nullable().optional().describe('GDAL driver short name'),
    bytes: z.number().nullable().optional(),
    features: z.number().nullable().optional(),
    layers: z.array(layerFactsSchema).optional(),
  })
  .meta({ id: 'RunDataFacts' });

const stepLogSchema = z
  .object({
    read: dataFactsSchema.optional(),
    wrote: dataFactsSchema.optional(),
    output: z.object({ stdout: z.string(), stderr: z.string() }).optional().describe('What a Python step printed (truncated)'),
  })
  .meta({ id: 'RunStepLog' });

export const notificationRecordSchema = z
  .object({
    id: z.string(),
    event: z.enum(notificationEvents),
    channel_id: z.string(),
    channel_type: z.string(),
    channel_name: z.string(),
    status: z.enum(['delivered', 'failed']),
    attempts: z.number().int(),
    error: z.string().nullable(),
    at: timestamp,
  })
  .meta({ id: 'RunNotification' });

const stepSchema = z.object({
  name: z.enum(['extract', 'transform', 'python', 'convert', 'deliver']),
  status: z.enum(['pending', 'running', 'succeeded', 'failed', 'skipped']),
  started_at: timestamp.nullable(),
  finished_at: timestamp.nullable(),
  duration_ms: z.number().nullable(),
  failed_attempts: z
    .number()
    .int()
    .describe(
      'Attempts of this step that failed; transient failures (connection refused, timeouts, 5xx) are retried with backoff while the step stays running',
    ),
  last_error: runErrorSchema.nullable().describe('The error of the latest failed attempt (null when none failed)'),
  progress: z
    .object({
      bytes_written: z.number().int().optional().describe('Bytes of output written so far'),
      bytes_total: z
        .number()
        .int()
        .optional()
        .describe(
          'Bytes the step will have written when done, when known up front (the declared size of what a Source sends, the size of the file a delivery uploads)',
        ),
      features_written: z.number().int().optional().describe('Features written so far'),
      percent: z.number().min(0).max(100).optional().describe('Share done, when the GDAL tool reports it'),
    })
    .nullable()
    .describe('What the step reported last while it worked (a long write reports every few seconds); null before it reported'),
  log: stepLogSchema
    .nullable()
    .describe("What the step read and wrote (its warnings are in the Run's `warnings`); null until it finished (and in Runs recorded before logs were kept)"),
});

export const runSchema = z
  .object({
    id: z.string(),
    job_id: z.string(),
    status: z.enum(runStatuses),
    trigger: z.enum(runTriggers).describe('What started it: manual (Run Now), schedule, retry, on_change, webhook or after (another Job)'),
    attempt: z.number().int().describe('1, or one more than the Run it retries'),
    retry_of: z.string().nullable(),
    retried_by: z.string().nullable().describe('The Run that retried this failed one'),
    retry_definition: z
      .enum(['current', 'original'])
      .nullable()
      .describe("A retry: whether it ran the Job as it was when retried (current) or the failed Run's own snapshot (original)"),
    parameters: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).describe('The parameter values it ran with'),
    triggered_by: z
      .object({ job_id: z.string(), run_id: z.string() })
      .nullable()
      .describe('An after-trigger Run: the Run of the other Job whose end started it'),
    started_runs: z.array(z.object({ job_id: z.string(), run_id: z.string() })).describe('Runs of other Jobs that its end started'),
    delivery_id: z.string().nullable().describe("A webhook Run: the caller's delivery id"),
    scheduled_for: timestamp.nullable(),
    created_at: timestamp,
    started_at: timestamp.nullable(),
    finished_at: timestamp.nullable(),
    steps: z.array(stepSchema),
    stats: z.object({
      features_read: z.number().nullable(),
      features_written: z.number().nullable(),
      bytes_read: z.number().nullable(),
      bytes_written: z.number().nullable(),
    }),
    skipped_reason: z.string().nullable().describe('source_unchanged when the Source had not changed since the last Run'),
    warnings: z
      .array(processingWarning.extend({ step: z.string().describe('The step that said it: extract, transform, python, convert') }))
      .describe('What the steps changed or doubted without failing: fields a format renamed (with the mapping), values cut, geometries repaired'),
    error: runErrorSchema.nullable(),
    workflow: z
      .object({ workflow_id: z.string(), run_id: z.string().nullable() })
      .describe('Find it in the Temporal UI or with `temporal workflow show --workflow-id …`'),
    job_snapshot: jobDefinitionSchema.describe('The Job as this Run runs it'),
    notifications: z.array(notificationRecordSchema).describe('Notifications about this Run, once each was delivered or given up on'),
  })
  .meta({ id: 'Run' });

/** Where a Job's webhook is: an absolute URL when the public origin is known (SVC_PUBLIC_ORIGIN, or the request's). */
export const webhookUrl = (origin: string, jobId: string) => `${origin}/api/v1/hooks/jobs/${jobId}`;

/** A Job as the API shows it: what its use cases answer, with its webhook's URL. */
export function representJob(job: JobView, origin = ''): z.infer<typeof jobSchema> {
  return { ...job, webhook: job.webhook ? { url: webhookUrl(origin, job.id), ...job.webhook } : null };
}

/** A Run as the API shows it: what its reader answers, with where to find its workflow. */
export function representRun(run: RunView): z.infer<typeof runSchema> {
  const { workflow_id, workflow_run_id, ...shown } = run;
  return { ...shown, workflow: { workflow_id: workflow_id ?? runWorkflowId(run.id), run_id: workflow_run_id } };
}
