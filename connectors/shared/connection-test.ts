import type { TestResult } from '../types.js';
import type { ConnectorError } from '../../domain/transfers.js';
import { probeTest } from './test-result.js';

/**
 * A connection test as every connector answers it: `attempt` tries the real thing and says what
 * worked; any failure is classified by `failure`. `tried` (what was contacted, never a secret)
 * may be filled in by the attempt, e.g. with the host key a server presented. (probeTest, for an
 * attempt that says the message only.)
 */
export function connectionTest(tried: TestResult['tried'], attempt: () => Promise<string>, failure: (error: unknown) => ConnectorError): Promise<TestResult> {
  return probeTest(tried, async () => ({ message: await attempt() }), failure);
}
