import type { DatabasePool } from 'slonik';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { progressWriter } from './operation-progress.js';

/** A pool that records the JSON each UPDATE merges in, answering after `delayMs`. */
function recordingPool(delayMs = 0) {
  const merged: Record<string, unknown>[] = [];
  const pool = {
    query: (token: { values: unknown[] }) => {
      merged.push(JSON.parse(String(token.values[0])) as Record<string, unknown>);
      return new Promise((resolve) => setTimeout(resolve, delayMs));
    },
  } as unknown as DatabasePool;
  return { pool, merged };
}

describe('progressWriter', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());
  const key = { ownerId: 'usr_1', progressId: 'web-abcdef12' };

  it('writes the first report at once and the latest of a burst a second later, merged', async () => {
    const { pool, merged } = recordingPool();
    const report = progressWriter(pool, key, () => undefined).report;
    report({ bytes_written: 1, bytes_total: 100 });
    await vi.advanceTimersByTimeAsync(0);
    expect(merged).toEqual([{ bytes_written: 1, bytes_total: 100 }]);
    for (let i = 2; i <= 50; i++) report({ bytes_written: i });
    await vi.advanceTimersByTimeAsync(500);
    expect(merged).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(600);
    expect(merged).toEqual([
      { bytes_written: 1, bytes_total: 100 },
      { bytes_written: 50, bytes_total: 100 },
    ]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(merged).toHaveLength(2);
  });

  it('never has two writes in flight: a slow database delays the next one', async () => {
    const { pool, merged } = recordingPool(3_000);
    const report = progressWriter(pool, key, () => undefined).report;
    report({ bytes_written: 1 });
    await vi.advanceTimersByTimeAsync(0);
    report({ bytes_written: 2 });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(merged).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(merged.map((m) => m.bytes_written)).toEqual([1, 2]);
  });

  it('hands a failed write to onError and goes on', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const pool = {
      query: () => (++calls === 1 ? Promise.reject(new Error('connection lost')) : Promise.resolve()),
    } as unknown as DatabasePool;
    const report = progressWriter(pool, key, (e) => errors.push(e)).report;
    report({ bytes_written: 1 });
    await vi.advanceTimersByTimeAsync(0);
    report({ bytes_written: 2 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(errors).toHaveLength(1);
    expect(calls).toBe(2);
  });
});
