import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { runSchemathesis, schemathesisBin } from '../../scripts/schemathesis.js';
import { ADMIN, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest } from '../support/e2e.js';

/*
 * The three token operations need a browser session (the spec: a token cannot create tokens).
 * schemathesis, given only a PAT, saw nothing but 401/403 from them ("Authentication failed: 3
 * operations returned only 401/403 responses"). This runs the project's own schemathesis
 * configuration on those operations alone and checks that they are now fuzzed past authentication.
 */

const dataDir = path.resolve(process.env.SVC_DATA_DIR ?? '.data');
const skip =
  skipWithoutDatabase || (!existsSync(schemathesisBin(dataDir)) && `schemathesis is not installed at ${schemathesisBin(dataDir)}: run scripts/ensure.sh`);

const it = e2eTest();

describe.skipIf(skip)('schemathesis on the session-only token operations', () => {
  let sut: TestApp;
  let base: string;

  it.beforeAll(async ({ sut: theSut }) => {
    sut = theSut;
    base = await sut.app.listen({ port: 0, host: '127.0.0.1' });
  });

  it('reaches them with the session cookie, and they pass every check', { timeout: 300_000 }, async () => {
    const reportDir = mkdtempSync(path.join(tmpdir(), 'svc-schemathesis-'));
    const previous = process.env.SVC_SCHEMATHESIS_EXAMPLES;
    process.env.SVC_SCHEMATHESIS_EXAMPLES = '3';
    try {
      const result = await runSchemathesis({
        base,
        email: ADMIN.email,
        password: ADMIN.password,
        dataDir,
        reportDir,
        includePathRegex: '/account/tokens',
        // Three operations alone give the stateful phase too few moves; the full run has it.
        phases: 'examples,coverage,fuzzing',
      });
      const log = readFileSync(path.join(reportDir, 'schemathesis.log'), 'utf8');
      expect(log).not.toMatch(/Authentication failed|only 401\/403/i);
      expect(result.problem, log.slice(-3000)).toBeUndefined();
      expect(result.failed, log.slice(-3000)).toBe(0);
      expect(result.passed).toBeGreaterThanOrEqual(3);
      // Tokens were really created through the session (a 2xx), not only refused.
      const tokens = await sut.app.inject({ method: 'GET', url: '/api/v1/account/tokens', headers: { cookie: `svc_session=${await login()}` } });
      expect(tokens.json().items.length).toBeGreaterThan(1);
    } finally {
      if (previous === undefined) delete process.env.SVC_SCHEMATHESIS_EXAMPLES;
      else process.env.SVC_SCHEMATHESIS_EXAMPLES = previous;
    }
  });

  async function login(): Promise<string> {
    const res = await sut.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: ADMIN });
    return res.cookies.find((c) => c.name === 'svc_session')!.value;
  }
});
