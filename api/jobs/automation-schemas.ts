import { z } from 'zod';
import { MAX_PARAMETERS, parameterTypes } from '../../domain/jobs/parameters.js';
import { MAX_INTERVAL_MINUTES, weekdayNames } from '../../domain/jobs/schedule.js';
import { afterWhen, MAX_AFTER, MAX_CHECK_MINUTES } from '../../domain/jobs/triggers.js';

/*
 * The zod shapes of a Job's automation: its schedule (five kinds), triggers and parameters, as
 * bodies take them (strict) and as answers give them. The Job routes, the schedule preview and
 * the OpenAPI document read them from here.
 */

const timezone = z.string().min(1).max(100).describe('IANA timezone, e.g. Europe/Berlin (stored canonical: US/Eastern → America/New_York)');
const hour = z.number().int().min(0).max(23);
const minute = z.number().int().min(0).max(59);
const weekday = z.enum(weekdayNames);
const monthDay = z.union([z.number().int().min(1).max(31), z.literal('last')]);

const kinds = {
  daily: z.object({ kind: z.literal('daily'), timezone, hour, minute }).describe('Every day at hour:minute'),
  weekly: z
    .object({ kind: z.literal('weekly'), timezone, days: z.array(weekday).min(1).max(7), hour, minute })
    .describe('On the days named (mon … sun) at hour:minute'),
  monthly: z
    .object({ kind: z.literal('monthly'), timezone, days: z.array(monthDay).min(1).max(32), hour, minute })
    .describe('On the days of the month named (1–31; a month without that day is skipped; "last" is its last day) at hour:minute'),
  cron: z
    .object({
      kind: z.literal('cron'),
      timezone,
      expression: z
        .string()
        .min(1)
        .max(200)
        .describe('Five fields (minute hour day-of-month month day-of-week) as in cron, or @hourly, @daily, @weekly, @monthly, @yearly'),
    })
    .describe('A cron expression in the timezone'),
  interval: z
    .object({ kind: z.literal('interval'), timezone, every_minutes: z.number().int().min(1).max(MAX_INTERVAL_MINUTES) })
    .describe("Every N minutes of elapsed time (daylight saving does not change it), aligned to the timezone's standard clock"),
};

/** A schedule in a body: strict, one of five kinds. */
export const scheduleBody = z
  .discriminatedUnion('kind', [kinds.daily.strict(), kinds.weekly.strict(), kinds.monthly.strict(), kinds.cron.strict(), kinds.interval.strict()])
  .meta({ id: 'ScheduleBody', description: 'When the Job runs: daily, weekly, monthly, cron or interval, in an IANA timezone (docs/jobs.md, "Schedules")' });

/** A schedule as stored and shown. */
export const scheduleSchema = z
  .discriminatedUnion('kind', [kinds.daily, kinds.weekly, kinds.monthly, kinds.cron, kinds.interval])
  .meta({ id: 'JobSchedule', description: 'When the Job runs (see docs/jobs.md for daylight-saving days and downtime)' });

const afterEntry = z.object({
  job_id: z.string().min(1).max(100).describe('Another Job of yours'),
  when: z.enum(afterWhen).describe('Which ends of its Runs start this Job: succeeded, failed, or any (either; a cancelled Run starts nothing)'),
});

export const triggersBody = z
  .object({
    on_change: z
      .object({ every_minutes: z.number().int().min(1).max(MAX_CHECK_MINUTES) })
      .strict()
      .nullable()
      .optional()
      .describe("Run when the Source changes, checked every N minutes with its connector's cheap check (never by reading the data)"),
    after: z
      .array(afterEntry.extend({ when: afterEntry.shape.when.default('succeeded') }).strict())
      .max(MAX_AFTER)
      .nullable()
      .optional()
      .describe('Run when a Run of one of these Jobs ends as named; a circle of Jobs is refused'),
  })
  .strict()
  .meta({ id: 'JobTriggersBody' });

export const triggersSchema = z
  .object({
    on_change: z.object({ every_minutes: z.number().int() }).nullable(),
    after: z.array(afterEntry),
  })
  .meta({ id: 'JobTriggers' });

const parameterValue = z.union([z.string().max(10_000), z.number(), z.boolean()]);

const parameterFields = {
  name: z.string().min(1).max(63).describe('Used as {{name}} in source_resource, destination_target and sql'),
  type: z.enum(parameterTypes),
};

export const parametersBody = z
  .array(
    z
      .object({
        ...parameterFields,
        default: parameterValue.nullable().optional().describe('Used when a Run is given no value; without one a value is required'),
        description: z.string().max(1000).nullable().optional(),
        choices: z.array(parameterValue).max(100).nullable().optional().describe('The only values accepted'),
      })
      .strict(),
  )
  .max(MAX_PARAMETERS)
  .meta({ id: 'JobParametersBody' });

export const parametersSchema = z
  .array(z.object({ ...parameterFields, default: parameterValue.nullable(), description: z.string().nullable(), choices: z.array(parameterValue).nullable() }))
  .meta({ id: 'JobParameters' });

/** Values for a Run: names of the Job's parameters (numbers and booleans may come as text). */
export const parameterValues = z.record(z.string().max(63), parameterValue).describe("Values for the Job's parameters; the rest take their defaults");
