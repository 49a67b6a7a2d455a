import { describe, expect, it } from 'vitest';
import { deciderSpec } from '../../test/support/decider.js';
import { plannedSteps, stagesOf, withDefaults, type JobDefinition } from './definition.js';
import { jobDecider, syncForRun, type ActiveJob, type JobCommand, type JobEvent } from './job.js';
import type { RunTrigger } from '../runs/triggers.js';

const at = new Date('2026-01-01T00:00:00Z');
const { state, decide } = deciderSpec(jobDecider);
const then = (events: JobEvent[], command: JobCommand) => {
  const more = decide(events, command);
  return { events: more, state: state([...events, ...more]) };
};

const definition: JobDefinition = {
  name: 'parcels',
  source_id: 'src_1',
  source_resource: null,
  transform_mode: 'manual',
  operations: [{ type: 'buffer', distance: 5 }],
  output_fields: null,
  recipe_id: null,
  sql: null,
  python_script: null,
  python_filename: null,
  output_format: 'GPKG',
  destination_id: 'dst_1',
  destination_target: { table: 'parcels' },
  schedule: { kind: 'daily', timezone: 'Europe/Berlin', hour: 2, minute: 30 },
  triggers: { on_change: null, after: [] },
  parameters: [],
  pipeline: {},
};
const created: JobEvent = { type: 'JobCreated', data: { job_id: 'job_1', owner_id: 'usr_a', definition, enabled: true, at: at.toISOString() } };
const outcome = (runId: string, status: 'succeeded' | 'failed' | 'cancelled', trigger: RunTrigger = 'schedule', extra = {}): JobCommand => ({
  type: 'RecordRunOutcome',
  jobId: 'job_1',
  runId,
  trigger,
  status,
  maxConsecutiveFailures: 3,
  at,
  ...extra,
});

describe('job decider', () => {
  it('creates, updates, enables, disables and deletes for the owner only', () => {
    expect(decide([], { type: 'CreateJob', jobId: 'job_1', actorId: 'usr_a', definition, enabled: true, at })).toEqual([created]);
    expect(() => decide([created], { type: 'CreateJob', jobId: 'job_1', actorId: 'usr_a', definition, enabled: true, at })).toThrow(/exists/);
    expect(() => decide([created], { type: 'DisableJob', jobId: 'job_1', actorId: 'usr_b', at })).toThrow(/Job job_1 was not found/);
    const disabled = then([created], { type: 'DisableJob', jobId: 'job_1', actorId: 'usr_a', at });
    expect(disabled.events.map((e) => e.type)).toEqual(['JobDisabled']);
    expect(decide([created, ...disabled.events], { type: 'DisableJob', jobId: 'job_1', actorId: 'usr_a', at })).toEqual([]);
    expect(decide([created], { type: 'EnableJob', jobId: 'job_1', actorId: 'usr_a', at })).toEqual([]);
    const update = decide([created], { type: 'UpdateJob', jobId: 'job_1', actorId: 'usr_a', definition: { ...definition, name: 'x' }, enabled: false, at });
    expect(update.map((e) => e.type)).toEqual(['JobUpdated', 'JobDisabled']);
    const deleted = decide([created], { type: 'DeleteJob', jobId: 'job_1', actorId: 'usr_a', at });
    expect(() => decide([created, ...deleted], { type: 'EnableJob', jobId: 'job_1', actorId: 'usr_a', at })).toThrow(/not found/);
    expect(decide([created, ...deleted], outcome('run_1', 'failed'))).toEqual([]);
  });

  it('disables itself after N consecutive failed automated Runs (scheduled or triggered), says why, and counts again after enable', () => {
    let history: JobEvent[] = [created];
    for (const [id, status, trigger] of [
      ['r1', 'failed', 'on_change'],
      ['r2', 'failed', 'manual'],
      ['r3', 'failed', 'webhook'],
    ] as const) {
      history = [...history, ...decide(history, outcome(id, status, trigger))];
    }
    expect(state(history)).toMatchObject({ enabled: true, consecutiveFailures: 2 });
    const third = decide(history, outcome('r4', 'failed'));
    expect(third.map((e) => e.type)).toEqual(['JobRunRecorded', 'JobDisabled']);
    expect(third[1]!.data).toMatchObject({ reason: { kind: 'consecutive_failures', failures: 3 } });
    history = [...history, ...third];
    expect(state(history)).toMatchObject({ enabled: false, disabledReason: { kind: 'consecutive_failures' } });
    history = [...history, ...decide(history, { type: 'EnableJob', jobId: 'job_1', actorId: 'usr_a', at })];
    expect(state(history)).toMatchObject({ enabled: true, disabledReason: null, consecutiveFailures: 0 });
  });

  it('a success resets the count; a repeated outcome (retried activity) is recorded once', () => {
    let history: JobEvent[] = [created, ...decide([created], outcome('r1', 'failed'))];
    history = [...history, ...decide(history, outcome('r2', 'succeeded', 'manual'))];
    expect(state(history)).toMatchObject({ consecutiveFailures: 0 });
    expect(decide(history, outcome('r2', 'succeeded', 'manual'))).toEqual([]);
  });

  it('advances the cursor on success, unless a reset was requested while the Run ran', () => {
    const s1 = then([created], outcome('r1', 'succeeded', 'manual', { sync: { cursor: { etag: 'a' }, seq: 0 } }));
    expect(s1.state).toMatchObject({ sync: { cursor: { etag: 'a' }, seq: 0, reset_pending: false } });
    // A Run starts with seq 0; a reset arrives (seq 1); the Run's cursor must not undo the reset.
    const reset = then([created, ...s1.events], { type: 'ResetSync', jobId: 'job_1', actorId: 'usr_a', at });
    expect(syncForRun((reset.state as ActiveJob).sync)).toEqual({ cursor: null, reinitialize: false, seq: 1 });
    const late = then([created, ...s1.events, ...reset.events], outcome('r2', 'succeeded', 'manual', { sync: { cursor: { etag: 'b' }, seq: 0 } }));
    expect(late.events.map((e) => e.type)).toEqual(['JobRunRecorded']);
    expect(late.state).toMatchObject({ sync: { cursor: { etag: 'a' }, reset_pending: true } });
    // The next Run starts after the reset and clears it.
    const next = then(
      [created, ...s1.events, ...reset.events, ...late.events],
      outcome('r3', 'succeeded', 'manual', { sync: { cursor: { etag: 'c' }, seq: 1 } }),
    );
    expect(next.state).toMatchObject({ sync: { cursor: { etag: 'c' }, reset_pending: false } });
  });

  it('reinitialize asks the next Run to read everything and rebuild the target; a failed Run leaves it pending', () => {
    const re = then([created], { type: 'ReinitializeSync', jobId: 'job_1', actorId: 'usr_a', at });
    expect(syncForRun((re.state as ActiveJob).sync)).toEqual({ cursor: null, reinitialize: true, seq: 1 });
    const failed = then([created, ...re.events], outcome('r1', 'failed', 'manual'));
    expect((failed.state as ActiveJob).sync.reinitialize_pending).toBe(true);
  });
});

describe('webhook', () => {
  const issue = (auth: 'hmac' | 'bearer', sealedSecret: string, actorId = 'usr_a'): JobCommand => ({
    type: 'IssueWebhook',
    jobId: 'job_1',
    actorId,
    auth,
    sealedSecret,
    at,
  });
  it('issues, rotates (keeping when it was created) and revokes, for the owner only', () => {
    const first = then([created], issue('hmac', 'sealed-1'));
    expect(first.state).toMatchObject({ webhook: { auth: 'hmac', sealed_secret: 'sealed-1', rotated_at: null } });
    const later = new Date('2026-02-01T00:00:00Z');
    const rotated = then([created, ...first.events], { ...issue('bearer', 'sealed-2'), at: later } as JobCommand);
    expect(rotated.state).toMatchObject({
      webhook: { auth: 'bearer', sealed_secret: 'sealed-2', created_at: at.toISOString(), rotated_at: later.toISOString() },
    });
    expect(() => decide([created], issue('hmac', 'x', 'usr_b'))).toThrow(/not found/);
    const revoked = then([created, ...first.events, ...rotated.events], { type: 'RevokeWebhook', jobId: 'job_1', actorId: 'usr_a', at });
    expect((revoked.state as ActiveJob).webhook).toBeNull();
    expect(decide([created], { type: 'RevokeWebhook', jobId: 'job_1', actorId: 'usr_a', at })).toEqual([]);
  });

  it('a Job saved before triggers and parameters existed reads as having none', () => {
    const { triggers: _t, parameters: _p, ...old } = definition;
    expect(withDefaults(old as JobDefinition)).toMatchObject({ triggers: { on_change: null, after: [] }, parameters: [] });
  });
});

describe('pipeline stages', () => {
  it('infers stages from the fields when no flag is set, and explicit flags win', () => {
    expect(stagesOf(definition)).toEqual({ transform: true, python: false, convert: true });
    expect(stagesOf({ ...definition, pipeline: { transform: false } })).toEqual({ transform: false, python: false, convert: true });
    expect(stagesOf({ ...definition, transform_mode: null, operations: [], output_format: null, pipeline: { convert: true } })).toEqual({
      transform: false,
      python: false,
      convert: true,
    });
    expect(plannedSteps({ ...definition, python_script: 'print(1)' })).toEqual(['extract', 'transform', 'python', 'convert', 'deliver']);
    expect(plannedSteps({ ...definition, pipeline: { transform: false, convert: false } })).toEqual(['extract', 'deliver']);
  });
});
