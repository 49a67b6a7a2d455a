import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { workflowsPath } from '../../worker/worker.js';
import { historyFromFile } from './history-json.js';

/*
 * Histories recorded from real Runs (npm run histories:record) replayed against the current
 * workflow code: a change that would break Runs already in flight (a step added, removed or
 * reordered without versioning) fails here instead of in production.
 */
Runtime.install({ logger: new DefaultLogger('WARN') });
const dir = path.join(path.dirname(new URL(import.meta.url).pathname), 'histories');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort();
const load = (file: string) => JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { events: Record<string, unknown>[] };

describe('recorded Job workflow histories replay against the current code', () => {
  it('has histories of the coordinator, Runs (every step, unchanged source, failure, retry, cancellation) and a schedule fire, also as recorded before the bookkeeping became local activities and before extract and deliver ran as one activity', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'coordinator-two-runs.json',
        'coordinator-cancelled.json',
        'run-succeeded-all-steps.json',
        'run-skipped-unchanged.json',
        'run-failed-extract.json',
        'run-retry.json',
        'run-cancelled.json',
        'scheduled-trigger.json',
        'run-succeeded-all-steps-before-local-bookkeeping.json',
        'run-failed-extract-before-local-bookkeeping.json',
        'run-cancelled-before-local-bookkeeping.json',
        'run-failed-extract-before-extract-and-deliver.json',
        'run-retry-before-extract-and-deliver.json',
        'run-cancelled-before-extract-and-deliver.json',
      ]),
    );
  });

  for (const file of files) {
    it(`replays ${file}`, async () => {
      const history = load(file);
      // Activities, and local activities (a Run's bookkeeping since 'local-bookkeeping'), which the history keeps as markers.
      const activities = history.events.filter(
        (e) =>
          e.activityTaskScheduledEventAttributes ||
          (e.markerRecordedEventAttributes as { markerName?: string } | undefined)?.markerName === 'core_local_activity',
      ).length;
      expect(history.events.length).toBeGreaterThan(5);
      if (file.startsWith('run-')) expect(activities).toBeGreaterThan(1);
      await Worker.runReplayHistory({ workflowsPath, replayName: file }, historyFromFile(history));
    }, 60_000);
  }

  it('notices a history the code no longer produces (the replay really checks)', async () => {
    const history = load('run-succeeded-all-steps.json');
    const scheduled = history.events.filter((e) => e.activityTaskScheduledEventAttributes);
    const step = scheduled[1]!.activityTaskScheduledEventAttributes as { activityType: { name: string } };
    step.activityType.name = 'someOtherStep';
    await expect(Worker.runReplayHistory({ workflowsPath, replayName: 'tampered' }, historyFromFile(history))).rejects.toThrow(DeterminismViolationError);
  }, 60_000);
});
