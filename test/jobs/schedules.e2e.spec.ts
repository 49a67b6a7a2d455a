import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleIdOf } from '../../temporal/ids.js';
import { nextFireTimes, type JobSchedule } from '../../domain/jobs/schedule.js';
import { createTestApp, createToken, login, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { fileBody, finished, jobsClient, startFileServer, type FileServer, type RunJson } from '../support/jobs.js';
import { startTestWorker, temporalAddress } from '../support/worker.js';

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');

/*
 * Job schedules against the real Temporal dev server. Temporal's time-skipping test server has
 * no Schedules (temporalio/sdk-java#1954), so the daylight-saving cases ask the real server when
 * the Schedule it holds would fire (ListScheduleMatchingTimes: Temporal's own computation, no
 * waiting), and one test waits for a real fire less than a minute and a quarter away.
 */
describe.skipIf(skip)('Job schedules on Temporal', () => {
  let sut: TestApp;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let files: FileServer;
  let api: ReturnType<typeof jobsClient>;
  let sourceId: string;
  let missingId: string;
  let destinationId: string;

  beforeAll(async () => {
    sut = await createTestApp({ temporal: true, env: { SVC_JOB_MAX_FAILURES: '2' } });
    worker = await startTestWorker(sut.services.config);
    files = await startFileServer();
    files.put('/places.geojson', fileBody(pointsGeoJson(fixtureDir(), 5)));
    const cookie = await login(sut.app);
    api = jobsClient(() => sut.app, await createToken(sut.app, cookie, ['jobs:read', 'jobs:write', 'jobs:run', 'sources:write', 'destinations:write']));
    sourceId = (await api.call('POST', '/api/v1/sources', { name: 'places', type: 'url', configuration: { url: `${files.url}/places.geojson` } })).json().id;
    missingId = (await api.call('POST', '/api/v1/sources', { name: 'gone', type: 'url', configuration: { url: `${files.url}/gone.geojson` } })).json().id;
    // Runs deliver to a webhook on the test server: they finish in moments whatever happens.
    destinationId = (await api.call('POST', '/api/v1/destinations', { name: 'hook', type: 'webhook', configuration: { url: `${files.url}/hook` } })).json().id;
  });
  afterAll(async () => {
    await worker?.stop();
    await files?.close();
    await sut?.close();
  });

  const create = async (schedule: JobSchedule | null, extra: Record<string, unknown> = {}) => {
    const res = await api.call('POST', '/api/v1/jobs', {
      name: 'scheduled',
      source_id: sourceId,
      destination_id: destinationId,
      schedule,
      ...extra,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  };
  const temporal = () => sut.services.temporal!;
  /** When the Schedule Temporal holds would fire between two instants (Temporal's own computation). */
  const matchingTimes = async (jobId: string, from: string, to: string) => {
    const seconds = (iso: string) => ({ seconds: Date.parse(iso) / 1000 }) as never;
    const r = (await temporal().workflowService.listScheduleMatchingTimes({
      namespace: sut.services.config.temporalNamespace,
      scheduleId: scheduleIdOf(jobId),
      startTime: seconds(from),
      endTime: seconds(to),
    })) as { startTime?: { seconds?: unknown }[] | null };
    return (r.startTime ?? []).map((t) => new Date(Number(t.seconds) * 1000).toISOString());
  };
  const expected = (schedule: JobSchedule, from: string, to: string) =>
    nextFireTimes(schedule, new Date(Date.parse(from) - 1), 40)
      .map((d) => d.toISOString())
      .filter((t) => t < new Date(to).toISOString());

  it('02:30 Europe/Berlin fires once on the spring-forward day and once on the autumn day, as next_run_at says', async () => {
    const schedule: JobSchedule = { kind: 'daily', timezone: 'Europe/Berlin', hour: 2, minute: 30 };
    const job = await create(schedule);
    const spring = await matchingTimes(job.id, '2027-03-27T00:00:00Z', '2027-03-30T00:00:00Z');
    expect(spring).toEqual(['2027-03-27T01:30:00.000Z', '2027-03-28T01:30:00.000Z', '2027-03-29T00:30:00.000Z']);
    const autumn = await matchingTimes(job.id, '2027-10-30T00:00:00Z', '2027-11-02T00:00:00Z');
    expect(autumn).toEqual(['2027-10-30T00:30:00.000Z', '2027-10-31T01:30:00.000Z', '2027-11-01T01:30:00.000Z']);
    // The API's next_run_at comes from the same rule Temporal's Schedule follows.
    expect(spring).toEqual(expected(schedule, '2027-03-27T00:00:00Z', '2027-03-30T00:00:00Z'));
    expect(autumn).toEqual(expected(schedule, '2027-10-30T00:00:00Z', '2027-11-02T00:00:00Z'));
    const described = await temporal().schedule.getHandle(scheduleIdOf(job.id)).describe();
    expect(described.info.nextActionTimes[0]!.toISOString()).toBe(job.next_run_at);
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  it('west of Greenwich too: New York 02:30 runs once on both change days', async () => {
    const schedule: JobSchedule = { kind: 'daily', timezone: 'America/New_York', hour: 2, minute: 30 };
    const job = await create(schedule);
    for (const [from, to] of [
      ['2027-03-13T12:00:00Z', '2027-03-16T12:00:00Z'],
      ['2027-11-06T12:00:00Z', '2027-11-09T12:00:00Z'],
    ]) {
      const times = await matchingTimes(job.id, from!, to!);
      expect(times).toHaveLength(3);
      expect(times).toEqual(expected(schedule, from!, to!));
    }
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  it('disable pauses the Schedule and enable resumes it; a schedule change or removal follows the Job', async () => {
    const job = await create({ kind: 'daily', timezone: 'UTC', hour: 3, minute: 0 });
    const handle = temporal().schedule.getHandle(scheduleIdOf(job.id));
    expect((await handle.describe()).state.paused).toBe(false);
    await api.call('POST', `/api/v1/jobs/${job.id}/disable`);
    expect((await handle.describe()).state).toMatchObject({ paused: true, note: 'disabled by its owner' });
    await api.call('POST', `/api/v1/jobs/${job.id}/enable`);
    expect((await handle.describe()).state.paused).toBe(false);
    await api.call('PUT', `/api/v1/jobs/${job.id}`, {
      name: 'x',
      source_id: sourceId,
      destination_id: destinationId,
      schedule: { kind: 'daily', timezone: 'UTC', hour: 4, minute: 5 },
    });
    expect((await handle.describe()).info.nextActionTimes[0]!.toISOString()).toMatch(/T04:05:00\.000Z$/);
    await api.call('PUT', `/api/v1/jobs/${job.id}`, { name: 'x', source_id: sourceId, destination_id: destinationId, schedule: null });
    await expect(handle.describe()).rejects.toThrow(/not found/i);
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  it('deleting a Job removes its Schedule', async () => {
    const job = await create({ kind: 'daily', timezone: 'UTC', hour: 3, minute: 0 });
    const handle = temporal().schedule.getHandle(scheduleIdOf(job.id));
    await handle.describe();
    expect((await api.call('DELETE', `/api/v1/jobs/${job.id}`)).statusCode).toBe(204);
    await expect(handle.describe()).rejects.toThrow(/not found/i);
  });

  it('disables itself after 2 (SVC_JOB_MAX_FAILURES) consecutive failed scheduled Runs, says why, and pauses its Schedule', async () => {
    const job = await create({ kind: 'daily', timezone: 'UTC', hour: 3, minute: 0 }, { source_id: missingId });
    const handle = temporal().schedule.getHandle(scheduleIdOf(job.id));
    const scheduledRuns = async () => (await api.call('GET', `/api/v1/jobs/${job.id}/runs`)).json().items as RunJson[];
    let triggeredAt = 0;
    for (let n = 1; n <= 2; n++) {
      // Temporal names a scheduled workflow by its fire time to the second (and the Run id follows
      // that name), so two triggers within one second are one fire: keep them apart.
      await new Promise((r) => setTimeout(r, Math.max(0, triggeredAt + 1_500 - Date.now())));
      triggeredAt = Date.now();
      await handle.trigger();
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline && !((await scheduledRuns()).filter((r) => finished(r.status)).length >= n)) await new Promise((r) => setTimeout(r, 250));
    }
    const runs = await scheduledRuns();
    expect(runs.map((r) => [r.trigger, r.status])).toEqual([
      ['schedule', 'failed'],
      ['schedule', 'failed'],
    ]);
    expect(runs[0]!.error).toMatchObject({ code: 'source_failed', reason: 'not_found' });
    const deadline = Date.now() + 10_000;
    let after = (await api.call('GET', `/api/v1/jobs/${job.id}`)).json();
    while (after.enabled && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      after = (await api.call('GET', `/api/v1/jobs/${job.id}`)).json();
    }
    expect(after).toMatchObject({ enabled: false, next_run_at: null });
    expect(after.disabled_reason).toMatch(/2 consecutive failed scheduled Runs/);
    let state = (await handle.describe()).state;
    while (!state.paused && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      state = (await handle.describe()).state;
    }
    expect(state.paused).toBe(true);
    expect(state.note).toMatch(/consecutive failed scheduled Runs/);
    // Run Now still works on a disabled Job.
    const manual = await api.call('POST', `/api/v1/jobs/${job.id}/run`);
    expect(manual.statusCode).toBe(201);
    await api.waitForRun(job.id, manual.json().id);
    // Enabling forgives the failures and resumes the Schedule.
    expect((await api.call('POST', `/api/v1/jobs/${job.id}/enable`)).json()).toMatchObject({ enabled: true, disabled_reason: null });
    expect((await handle.describe()).state.paused).toBe(false);
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  }, 240_000);

  it('fires at its time: a schedule for the next minute starts a Run with trigger schedule', async () => {
    // The next whole minute at least 8 s away, in a timezone with a non-zero offset.
    const timezone = 'Asia/Kolkata';
    let fire = Math.ceil((Date.now() + 8_000) / 60_000) * 60_000;
    const local = new Date(fire + 330 * 60_000);
    const job = await create(
      { kind: 'daily', timezone, hour: local.getUTCHours(), minute: local.getUTCMinutes() },
      { pipeline: { transform: false, convert: false } },
    );
    expect(job.next_run_at).toBe(new Date(fire).toISOString());
    const deadline = fire + 45_000;
    let runs: RunJson[] = [];
    while (Date.now() < deadline && runs.length === 0) {
      await new Promise((r) => setTimeout(r, 500));
      runs = (await api.call('GET', `/api/v1/jobs/${job.id}/runs`)).json().items;
    }
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ trigger: 'schedule', scheduled_for: new Date(fire).toISOString() });
    const done = await api.waitForRun(job.id, runs[0]!.id);
    expect(done.steps[0]!.status).toBe('succeeded');
    fire += 86_400_000;
    expect((await api.call('GET', `/api/v1/jobs/${job.id}`)).json().next_run_at).toBe(new Date(fire).toISOString());
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  }, 120_000);
});
