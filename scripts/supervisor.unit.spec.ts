import { describe, expect, it } from 'vitest';
import { describeExit, restartDelay, type Backoff } from './supervisor.js';

describe('restart pauses', () => {
  const backoff: Backoff = { initialMs: 1000, maxMs: 30_000, healthyAfterMs: 60_000 };

  it('double with each crash in a row, up to the longest pause', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map((n) => restartDelay(n, backoff))).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
  });

  it('say how a child ended', () => {
    expect(describeExit(null, 'SIGKILL')).toBe('was killed by SIGKILL');
    expect(describeExit(1, null)).toBe('exited with code 1');
  });
});
