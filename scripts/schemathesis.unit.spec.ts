import { describe, expect, it } from 'vitest';
import { authenticationFailures, rewordSummary } from './schemathesis.js';

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

// An operation answered only 401/403 was never tested: the run must say so, not pass quietly.
describe('authenticationFailures', () => {
  // As schemathesis 4.32 prints it (the run that found the token routes fuzzed with a PAT).
  const report = [
    '=================================== WARNINGS ===================================',
    '',
    'Authentication failed: 3 operations returned only 401/403 responses',
    '',
    '401 Unauthorized (1 operation):',
    '  - GET /api/v1/account/tokens',
    '',
    '403 Forbidden (2 operations):',
    '  - DELETE /api/v1/account/tokens/{id}',
    '  - POST /api/v1/account/tokens',
    '',
    '💡 Ensure valid authentication credentials are set via `--auth` or `-H`',
    '',
    "Missing test data: 13 operations repeatedly returned 404 Not Found, preventing tests from reaching your API's core logic",
    '',
    'No links point to these operations - POST /api/v1/jobs appears to supply the data they need (7 operations):',
    '  - GET /api/v1/jobs/{id}/runs/{runId}',
    '',
    '=================================== SUMMARY ====================================',
    'Warnings:',
    '  ⚠️ Authentication failed: 3 operations returned only 401/403 responses',
  ].join('\n');

  it('names the operations that never got past authentication', () => {
    expect(authenticationFailures(report)).toEqual(['GET /api/v1/account/tokens', 'DELETE /api/v1/account/tokens/{id}', 'POST /api/v1/account/tokens']);
  });

  it('finds the warning even when only the summary line carries it', () => {
    expect(authenticationFailures('Warnings:\n  ⚠️ Authentication failed: 1 operation returned only 401/403 responses\n')).toEqual([]);
  });

  it('is undefined for a run without it', () => {
    expect(authenticationFailures(report.replace(/Authentication failed[^\n]*/g, 'Missing test data: 2 operations'))).toBeUndefined();
  });
});
