import { describe, expect, it } from 'vitest';
import { rewordSummary } from './schemathesis.js';

// CI reads the last line in a test runner's closing format: only npm test's own total may be one.
describe('rewordSummary', () => {
  const runnerLike = /^=+ .* in [\d.]+s/;

  it('rewords pytest and schemathesis closing lines so they no longer read as a runner summary', () => {
    const pytest = rewordSummary('python client', '============================= 446 passed in 30.81s =============================');
    expect(pytest).toBe('[python client] summary: 446 ok (took 30.81 s)');
    const warnings = rewordSummary('schemathesis', '============================ 3 warnings in 117.87s =============================');
    expect(warnings).toBe('[schemathesis] summary: 3 warnings (took 117.87 s)');
    const mixed = rewordSummary('python client', '==== 1 failed, 445 passed, 2 skipped in 31.00s (0:00:31) ====');
    expect(mixed).not.toMatch(runnerLike);
    expect(mixed).not.toMatch(/\d+ passed/);
    expect(mixed).toContain('1 not ok, 445 ok, 2 skipped');
  });

  it('leaves every other line alone', () => {
    for (const line of ['=== FAILURES ===', 'tests/test_x.py ....', 'total: 3 passed, 0 failed, 0 skipped', '']) {
      expect(rewordSummary('x', line)).toBe(line);
    }
  });
});
