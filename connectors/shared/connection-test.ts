import type { TestResult } from '../types.js';
import type { ConnectorError } from '../../domain/transfers.js';

/**
 * A connection test as every connector answers it: `attempt` tries the real thing and says what
 * worked; any failure is classified by `failure`. `tried` (what was contacted, never a secret)
 * may be filled in by the attempt, e.g. with the host key a server presented.
 */
export async function connectionTest(
  tried: TestResult['tried'],
  attempt: () => Promise<string>,
  failure: (error: unknown) => ConnectorError,
): Promise<TestResult> {
  const started = Date.now();
  try {
    const message = await attempt();
    return { ok: true, status: 'ok', message, tried, duration_ms: Date.now() - started };
  } catch (error) {
    const classified = failure(error);
    return { ok: false, status: classified.reason, message: classified.message, tried, duration_ms: Date.now() - started };
  }
}
