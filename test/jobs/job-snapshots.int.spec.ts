import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { load, record, SNAPSHOT_EVERY } from '../../application/commands.js';
import { fold } from '../../domain/decider.js';
import { jobDecider, jobStream, type JobEvent } from '../../domain/jobs/job.js';
import { PostgresEventStore } from '../../eventstore/postgres.js';
import { createTestDatabase, skipWithoutDatabase } from '../support/database.js';

/**
 * A Job's stream takes an event for every Run it has had, so it is loaded from a snapshot: the
 * state must be the one the whole stream folds to, whatever the snapshot's age.
 */
describe.skipIf(skipWithoutDatabase)('Job snapshots', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let store: PostgresEventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PostgresEventStore(db.url);
    await store.init();
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  const at = '2026-11-26T00:00:00.000Z';
  const runs = (from: number, count: number, status = 'succeeded') =>
    Array.from({ length: count }, (_, i) => ({
      type: 'JobRunRecorded',
      data: { job_id: 'snap', run_id: `run_${from + i}`, trigger: 'schedule', status, consecutive_failures: status === 'failed' ? i + 1 : 0, at },
    }));
  const whole = async (id: string) => fold(jobDecider, (await store.readStream(id)) as unknown as JobEvent[]);

  it('loads the state the whole stream folds to, from a snapshot saved on the way', async () => {
    const id = jobStream('snap');
    const definition = { name: 'nightly', source_id: 'src', destination_id: 'dst', operations: [] };
    await store.appendToStream(id, [{ type: 'JobCreated', data: { job_id: 'snap', owner_id: 'usr', definition, enabled: true, at } }], 'no_stream');
    await store.appendToStream(id, runs(1, SNAPSHOT_EVERY + 50), 'any');

    const first = await load({ store }, id, jobDecider);
    expect(first.state).toEqual(await whole(id));
    expect(first.revision).toBe(SNAPSHOT_EVERY + 50);
    const saved = await store.readFromSnapshot(id, jobDecider.snapshotVersion!);
    expect(saved.snapshot?.revision).toBe(SNAPSHOT_EVERY + 50);
    expect(saved.events).toEqual([]);

    // Failures after the snapshot, then the same again read from it.
    await store.appendToStream(id, runs(1000, 3, 'failed'), SNAPSHOT_EVERY + 50);
    const second = await load({ store }, id, jobDecider);
    expect(second.state).toEqual(await whole(id));
    expect(second.state).toMatchObject({ consecutiveFailures: 3 });
    expect(second.revision).toBe(SNAPSHOT_EVERY + 53);
    expect(second.position).toBe((await store.readStream(id)).at(-1)!.position);

    // Deciding on the snapshot's state: a Run already recorded is not recorded twice, a new one
    // is appended at the right revision.
    const repeat = await record({ store }, id, jobDecider, {
      type: 'RecordRunOutcome',
      jobId: 'snap',
      runId: 'run_1002',
      trigger: 'schedule',
      status: 'failed',
      maxConsecutiveFailures: 10,
      at: new Date(at),
    });
    expect(repeat.events).toEqual([]);
    const next = await record({ store }, id, jobDecider, {
      type: 'RecordRunOutcome',
      jobId: 'snap',
      runId: 'run_2000',
      trigger: 'schedule',
      status: 'succeeded',
      maxConsecutiveFailures: 10,
      at: new Date(at),
    });
    expect(next.events.map((e) => e.type)).toEqual(['JobRunRecorded']);
    expect((await load({ store }, id, jobDecider)).state).toEqual(await whole(id));
  });

  it('ignores a snapshot folded by other code (another version)', async () => {
    const id = jobStream('stale');
    const definition = { name: 'n', source_id: 's', destination_id: 'd', operations: [] };
    const created = await store.appendToStream(
      id,
      [{ type: 'JobCreated', data: { job_id: 'stale', owner_id: 'usr', definition, enabled: true, at } }],
      'no_stream',
    );
    await store.saveSnapshot(id, 'job-0', { revision: 0, position: created.position, state: { status: 'deleted' } });
    expect((await load({ store }, id, jobDecider)).state).toMatchObject({ status: 'active', ownerId: 'usr' });
  });
});
