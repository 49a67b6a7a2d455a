import type { Worker } from '@temporalio/worker';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { afterAll, describe, expect } from 'vitest';
import { derivedRunId, requestAutomatedRun } from '../../application/runs.js';
import { load } from '../../application/commands.js';
import { jobDecider, jobStream } from '../../domain/jobs/job.js';
import { nextFireTimes, type JobSchedule } from '../../domain/jobs/schedule.js';
import { scheduleIdOf, watchScheduleIdOf } from '../../temporal/ids.js';
import { createWorker } from '../../worker/worker.js';
import type { TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { e2eTest, JOB_SCOPES } from '../support/e2e.js';
import { fileBody, finished, type FileServer, type jobsClient } from '../support/jobs.js';
import { untilRead as until } from '../support/until.js';
import { waitForPollers } from '../../devservers/temporal.js';
import { temporalAddress } from '../support/worker.js';

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');
// The spec stops and starts its worker itself (below): Temporal clients, no fixture worker.
const it = e2eTest({ temporal: true, scopes: JOB_SCOPES, env: { SVC_JOB_MAX_FAILURES: '2', SVC_SCHEDULE_CATCHUP_MIN: '0.25' } });

/*
 * Job schedules against the real Temporal dev server. Temporal's time-skipping test server has
 * no Schedules (temporalio/sdk-java#1954), so the daylight-saving cases ask the real server when
 * the Schedule it holds would fire (ListScheduleMatchingTimes: Temporal's own computation over
 * the spec it stores, no waiting) and compare that with the API's next fire times; other tests
 * wait for real fires a minute apart, with the worker stopped and started in between.
 *
 * The catch-up window is 15 s here (SVC_SCHEDULE_CATCHUP_MIN=0.25), so that "too late" can be
 * waited for.
 */
describe.skipIf(skip)('Job schedules on Temporal', () => {
  let sut: TestApp;
  let worker: { run: Promise<void>; worker: Worker; close(): Promise<void> } | undefined;
  let files: FileServer;
  let api: ReturnType<typeof jobsClient>;
  let sourceId: string;
  let missingId: string;
  let destinationId: string;

  /** A worker made (its workflow bundle built) before it is needed; runs from `start()`. */
  const prepareWorker = async () => {
    const made = await createWorker(sut.services.config);
    return {
      start: async () => {
        const run = made.worker.run();
        await waitForPollers(sut.services.config);
        worker = { run, worker: made.worker, close: made.close };
      },
    };
  };
  const stopWorker = async () => {
    if (!worker) return;
    worker.worker.shutdown();
    await worker.run;
    await worker.close();
    worker = undefined;
  };

  it.beforeAll(async ({ sut: theSut, files: theFiles, jobs: theJobs }) => {
    sut = theSut;
    files = theFiles;
    api = theJobs;
    await (await prepareWorker()).start();
    files.put('/places.geojson', fileBody(pointsGeoJson(fixtureDir(), 5)));
    sourceId = (await api.call('POST', '/api/v1/sources', { name: 'places', type: 'url', configuration: { url: `${files.url}/places.geojson` } })).json().id;
    missingId = (await api.call('POST', '/api/v1/sources', { name: 'gone', type: 'url', configuration: { url: `${files.url}/gone.geojson` } })).json().id;
    // Runs deliver to a webhook on the test server: they finish in moments whatever happens.
    destinationId = (await api.call('POST', '/api/v1/destinations', { name: 'hook', type: 'webhook', configuration: { url: `${files.url}/hook` } })).json().id;
  }, 240_000);
  // Before the fixture closes the app the worker serves.
  afterAll(stopWorker);

  const create = async (schedule: JobSchedule | null, extra: Record<string, unknown> = {}) => {
    const res = await api.call('POST', '/api/v1/jobs', { name: 'scheduled', source_id: sourceId, destination_id: destinationId, schedule, ...extra });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  };
  const temporal = () => sut.services.temporal!;
  /** When the Schedule Temporal holds fires in (from, to]: Temporal's own computation. */
  const matchingTimes = async (scheduleId: string, from: string, to: string) => {
    const seconds = (iso: string) => ({ seconds: Date.parse(iso) / 1000 }) as never;
    const r = (await temporal().workflowService.listScheduleMatchingTimes({
      namespace: sut.services.config.temporalNamespace,
      scheduleId,
      startTime: seconds(from),
      endTime: seconds(to),
    })) as { startTime?: { seconds?: unknown }[] | null };
    return (r.startTime ?? []).map((t) => new Date(Number(t.seconds) * 1000).toISOString());
  };
  /** What the API computes for the same span. */
  const expected = (schedule: JobSchedule, from: string, to: string) =>
    nextFireTimes(schedule, new Date(from), 400)
      .map((d) => d.toISOString())
      .filter((t) => t <= new Date(to).toISOString());
  const runsOf = (jobId: string) => api.runsOf(jobId);

  // The days the clocks change in 2027: Europe/Berlin 28 March and 31 October, America/New_York 14 March and 7 November.
  const changeDays = {
    'Europe/Berlin': [
      ['2027-03-27T12:00:00Z', '2027-03-29T12:00:00Z'],
      ['2027-10-30T12:00:00Z', '2027-11-01T12:00:00Z'],
    ],
    'America/New_York': [
      ['2027-03-13T12:00:00Z', '2027-03-15T12:00:00Z'],
      ['2027-11-06T12:00:00Z', '2027-11-08T12:00:00Z'],
    ],
  } as const;
  const kinds = (timezone: string): JobSchedule[] => [
    { kind: 'daily', timezone, hour: 2, minute: 30 },
    { kind: 'daily', timezone, hour: 1, minute: 30 },
    { kind: 'weekly', timezone, days: ['sat', 'sun'], hour: 2, minute: 15 },
    { kind: 'monthly', timezone, days: [1, 'last'], hour: 0, minute: 30 },
    { kind: 'cron', timezone, expression: '*/15 0-4 * * *' },
    { kind: 'interval', timezone, every_minutes: 45 },
  ];

  for (const timezone of ['Europe/Berlin', 'America/New_York'] as const) {
    it(`in ${timezone}, every kind fires where the API says, over both days the clocks change (Temporal's own matching times)`, async () => {
      for (const schedule of kinds(timezone)) {
        const job = await create(schedule);
        const scheduleId = scheduleIdOf(job.id);
        for (const [from, to] of changeDays[timezone]) {
          const fired = await matchingTimes(scheduleId, from, to);
          expect(fired, `${JSON.stringify(schedule)} ${from}`).toEqual(expected(schedule, from, to));
        }
        // The next five the Job shows are the next five Temporal will act on.
        const described = await temporal().schedule.getHandle(scheduleId).describe();
        expect(job.next_run_times).toEqual(described.info.nextActionTimes.slice(0, 5).map((d) => d.toISOString()));
        expect(job.next_run_at).toBe(job.next_run_times[0]);
        await api.call('DELETE', `/api/v1/jobs/${job.id}`);
      }
    }, 240_000);
  }

  it('spells the daylight-saving rule out: Berlin 02:30 shifts to 03:30 CEST in March and runs once, at 02:30 CEST, in October; New York 01:30 runs once, EDT', async () => {
    const berlin = await create({ kind: 'daily', timezone: 'Europe/Berlin', hour: 2, minute: 30 });
    expect(await matchingTimes(scheduleIdOf(berlin.id), '2027-03-27T12:00:00Z', '2027-03-29T12:00:00Z')).toEqual([
      '2027-03-28T01:30:00.000Z',
      '2027-03-29T00:30:00.000Z',
    ]);
    expect(await matchingTimes(scheduleIdOf(berlin.id), '2027-10-30T12:00:00Z', '2027-11-01T12:00:00Z')).toEqual([
      '2027-10-31T00:30:00.000Z',
      '2027-11-01T01:30:00.000Z',
    ]);
    const ny = await create({ kind: 'daily', timezone: 'America/New_York', hour: 1, minute: 30 });
    // Temporal's own timezone calendar would fire 05:30 and 06:30 UTC on 7 November (both 01:30s).
    expect(await matchingTimes(scheduleIdOf(ny.id), '2027-11-06T12:00:00Z', '2027-11-08T12:00:00Z')).toEqual([
      '2027-11-07T05:30:00.000Z',
      '2027-11-08T06:30:00.000Z',
    ]);
    await api.call('DELETE', `/api/v1/jobs/${berlin.id}`);
    await api.call('DELETE', `/api/v1/jobs/${ny.id}`);
  });

  it('previews a schedule before it is saved: the same check and the same times a saved Job shows', async () => {
    const schedule: JobSchedule = { kind: 'cron', timezone: 'US/Eastern', expression: '*/15 9-17 * * mon-fri' };
    const preview = await api.call('POST', '/api/v1/schedules/preview', { schedule, count: 7 });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json()).toMatchObject({
      schedule: { kind: 'cron', timezone: 'America/New_York', expression: '*/15 9-17 * * mon-fri' },
      description: 'cron "*/15 9-17 * * mon-fri" (America/New_York)',
    });
    const job = await create(schedule);
    expect(preview.json().next_run_times.slice(0, 5)).toEqual(job.next_run_times);
    const after = await api.call('POST', '/api/v1/schedules/preview', { schedule, after: '2027-03-12T22:50:00Z', count: 2 });
    expect(after.json().next_run_times).toEqual(['2027-03-15T13:00:00.000Z', '2027-03-15T13:15:00.000Z']);
    const bad = await api.call('POST', '/api/v1/schedules/preview', { schedule: { kind: 'cron', timezone: 'UTC', expression: '0 25 * * *' } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error).toMatchObject({ code: 'validation_error', details: { issues: [{ path: 'body.schedule.expression' }] } });
    expect(bad.json().error.message).toMatch(/hour: 25 is outside 0–23/);
    const refused = await api.call('POST', '/api/v1/jobs', {
      name: 'x',
      source_id: sourceId,
      schedule: { kind: 'interval', timezone: 'UTC', every_minutes: 0 },
    });
    expect(refused.statusCode).toBe(422);
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  it('disable pauses both Schedules and enable resumes them; changes and removals follow the Job', async () => {
    const job = await create({ kind: 'daily', timezone: 'UTC', hour: 3, minute: 0 }, { triggers: { on_change: { every_minutes: 30 } } });
    const handle = temporal().schedule.getHandle(scheduleIdOf(job.id));
    const watch = temporal().schedule.getHandle(watchScheduleIdOf(job.id));
    expect((await handle.describe()).state.paused).toBe(false);
    expect((await watch.describe()).spec.intervals).toEqual([{ every: 1_800_000, offset: expect.any(Number) }]);
    await api.call('POST', `/api/v1/jobs/${job.id}/disable`);
    expect((await handle.describe()).state).toMatchObject({ paused: true, note: 'disabled by its owner' });
    expect((await watch.describe()).state.paused).toBe(true);
    await api.call('POST', `/api/v1/jobs/${job.id}/enable`);
    expect((await handle.describe()).state.paused).toBe(false);
    expect((await watch.describe()).state.paused).toBe(false);
    const body = { name: 'x', source_id: sourceId, destination_id: destinationId };
    await api.call('PUT', `/api/v1/jobs/${job.id}`, { ...body, schedule: { kind: 'weekly', timezone: 'UTC', days: ['wed'], hour: 4, minute: 5 } });
    const next = (await handle.describe()).info.nextActionTimes[0]!;
    expect([next.getUTCDay(), next.getUTCHours(), next.getUTCMinutes()]).toEqual([3, 4, 5]);
    await api.call('PUT', `/api/v1/jobs/${job.id}`, { ...body, schedule: null });
    await expect(handle.describe()).rejects.toThrow(/not found/i);
    await expect(watch.describe()).rejects.toThrow(/not found/i);
    expect((await api.call('DELETE', `/api/v1/jobs/${job.id}`)).statusCode).toBe(204);
  });

  it('disables itself after 2 (SVC_JOB_MAX_FAILURES) consecutive failed automated Runs, says why, and pauses its Schedule', async () => {
    const job = await create({ kind: 'daily', timezone: 'UTC', hour: 3, minute: 0 }, { source_id: missingId });
    const handle = temporal().schedule.getHandle(scheduleIdOf(job.id));
    let triggeredAt = 0;
    for (let n = 1; n <= 2; n++) {
      // Temporal names a scheduled workflow by its fire time to the second (and the Run id follows
      // that name), so two triggers within one second are one fire: keep them apart. The clock
      // itself is the condition here (a later second), so this is a sleep on purpose.
      await new Promise((r) => setTimeout(r, Math.max(0, triggeredAt + 1_500 - Date.now())));
      triggeredAt = Date.now();
      await handle.trigger();
      await until(
        `failed Run ${n}`,
        () => runsOf(job.id),
        (runs) => runs.filter((r) => finished(r.status)).length >= n,
      );
    }
    const runs = await runsOf(job.id);
    expect(runs.map((r) => [r.trigger, r.status])).toEqual([
      ['schedule', 'failed'],
      ['schedule', 'failed'],
    ]);
    const after = await until(
      'disabled',
      async () => (await api.call('GET', `/api/v1/jobs/${job.id}`)).json(),
      (j) => !j.enabled,
      10_000,
    );
    expect(after).toMatchObject({ enabled: false, next_run_at: null, next_run_times: [] });
    expect(after.disabled_reason).toMatch(/2 consecutive failed automated Runs/);
    const state = await until(
      'paused',
      async () => (await handle.describe()).state,
      (s) => s.paused,
      10_000,
    );
    expect(state.note).toMatch(/consecutive failed automated Runs/);
    // Run Now still works on a disabled Job; enabling forgives the failures and resumes the Schedule.
    const manual = await api.call('POST', `/api/v1/jobs/${job.id}/run`);
    expect(manual.statusCode).toBe(201);
    await api.waitForRun(job.id, manual.json().id);
    expect((await api.call('POST', `/api/v1/jobs/${job.id}/enable`)).json()).toMatchObject({ enabled: true, disabled_reason: null });
    expect((await handle.describe()).state.paused).toBe(false);
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  }, 240_000);

  it('fires on its own: an every-minute interval starts a Run for the whole minute it meant', async () => {
    const job = await create({ kind: 'interval', timezone: 'UTC', every_minutes: 1 }, { pipeline: { transform: false, convert: false } });
    const fire = Date.parse(job.next_run_at);
    expect(fire % 60_000).toBe(0);
    const [run] = await until(
      'a scheduled Run',
      () => runsOf(job.id),
      (runs) => runs.length > 0,
      fire - Date.now() + 45_000,
    );
    expect(run).toMatchObject({ trigger: 'schedule', scheduled_for: new Date(fire).toISOString() });
    const done = await api.waitForRun(job.id, run!.id);
    expect(done.steps[0]!.status).toBe('succeeded');
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  }, 150_000);

  it('a fire is a Run while the previous scheduled Run merely waits; behind a running Run one waits and the next folds', async () => {
    files.put('/slow.geojson', fileBody(pointsGeoJson(fixtureDir(), 3)));
    const slowId = (await api.call('POST', '/api/v1/sources', { name: 'slow', type: 'url', configuration: { url: `${files.url}/slow.geojson` } })).json().id;
    const job = await create({ kind: 'daily', timezone: 'UTC', hour: 3, minute: 0 }, { source_id: slowId, pipeline: { transform: false, convert: false } });
    const { ownerId } = (await load(sut.services, jobStream(job.id), jobDecider)).state as { ownerId: string };
    // What a Schedule's request activity does at a fire (the fire "now": neither late nor superseded).
    const fire = (seed: string) =>
      requestAutomatedRun(sut.services, {
        runId: derivedRunId(`${job.id}-${seed}`),
        jobId: job.id,
        ownerId,
        trigger: 'schedule',
        retryOf: null,
        scheduledFor: new Date().toISOString(),
      });
    const settle = () => sut.services.projections.catchUp();

    // No worker: the first fire's Run waits for one; the next fire still becomes a Run of its own.
    const next = await prepareWorker();
    await stopWorker();
    const first = await fire('a');
    await settle();
    expect(first.runId).not.toBeNull();
    const second = await fire('b');
    await settle();
    expect(second).toEqual({ runId: expect.any(String) });
    expect((await runsOf(job.id)).map((r) => r.status)).toEqual(['queued', 'queued']);

    // The worker comes back and the Source answers slowly: the first Run is in progress, the second waits.
    const hold = files.hold('/slow.geojson');
    await next.start();
    await until(
      'the first Run running',
      () => runsOf(job.id),
      (runs) => runs.some((r) => r.id === first.runId && r.status === 'running'),
    );
    // A fire now folds into the scheduled Run waiting behind the running one.
    expect(await fire('c')).toEqual({ runId: null, skipped: 'already_waiting' });
    hold.release();
    for (const id of [first.runId!, second.runId!]) expect((await api.waitForRun(job.id, id)).status).toBe('succeeded');
    expect((await runsOf(job.id)).length).toBe(2);
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  }, 240_000);

  it('after the worker was down: one Run per fire Temporal kept (one in flight, one buffered), none for a fire older than the catch-up window', async () => {
    const job = await create({ kind: 'daily', timezone: 'UTC', hour: 3, minute: 0 }, { pipeline: { transform: false, convert: false } });
    const handle = temporal().schedule.getHandle(scheduleIdOf(job.id));
    const next = await prepareWorker();
    await stopWorker();
    // Three fires while no worker runs: the first's request waits for a worker, the second is
    // buffered behind it, the third is dropped (overlap). A manual trigger() defaults to
    // ALLOW_ALL in the SDK: it is given the policy the Schedule's own fires use.
    const { policies } = await handle.describe();
    expect(policies.overlap).toBe(ScheduleOverlapPolicy.BUFFER_ONE);
    const first = new Date();
    await handle.trigger(ScheduleOverlapPolicy.BUFFER_ONE);
    // Fires named by distinct seconds, and far enough apart that their scheduled times tell them
    // apart (the assertions below): a sleep on purpose.
    await new Promise((r) => setTimeout(r, 1_500));
    const second = new Date();
    await handle.trigger(ScheduleOverlapPolicy.BUFFER_ONE);
    await new Promise((r) => setTimeout(r, 1_500));
    await handle.trigger(ScheduleOverlapPolicy.BUFFER_ONE);
    const described = await until(
      'a fire dropped',
      () => handle.describe(),
      (d) => d.info.numActionsSkippedOverlap >= 1,
      20_000,
    );
    expect(described.info.numActionsTaken).toBe(1);
    await next.start();
    const caughtUp = await until(
      'the two Runs',
      () => runsOf(job.id),
      (runs) => runs.length >= 2,
      60_000,
    );
    const times = caughtUp.map((r) => Date.parse(r.scheduled_for!)).sort((a, b) => a - b);
    expect(caughtUp.every((r) => r.trigger === 'schedule')).toBe(true);
    expect(times[0]).toBeGreaterThanOrEqual(first.getTime() - 1_000);
    expect(times[0]).toBeLessThan(second.getTime() - 500);
    expect(times[1]).toBeGreaterThanOrEqual(second.getTime() - 1_000);
    for (const run of caughtUp) await api.waitForRun(job.id, run.id);
    // Now a fire that waits longer than the window (15 s here) for a worker: it starts nothing.
    const later = await prepareWorker();
    await stopWorker();
    const fired = Date.now();
    await handle.trigger(ScheduleOverlapPolicy.BUFFER_ONE);
    // Outliving the catch-up window with no worker is what this part tests: a sleep on purpose.
    await new Promise((r) => setTimeout(r, Math.max(0, fired + 17_000 - Date.now())));
    await later.start();
    const late = await until(
      'the late fire handled',
      async () => (await handle.describe()).info.recentActions.filter((a) => a.scheduledAt.getTime() >= fired - 1_000),
      (actions) => actions.length === 1 && Boolean(actions[0]!.action?.workflow),
      30_000,
    );
    const lastWorkflow = temporal().workflow.getHandle(late[0]!.action.workflow.workflowId);
    expect(await lastWorkflow.result()).toEqual({ runId: null });
    expect((await runsOf(job.id)).length).toBe(2);
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  }, 300_000);
});
