import type { TestResult } from '../types.js';
import type { ConnectorError } from '../../domain/transfers.js';

/** What a successful probe found: the result's message, and what it adds to `tried`. */
export interface ProbeFound {
  message: string;
  tried?: TestResult['tried'];
}

/**
 * A connection test around one probe: timed, and any failure turned into a classified result
 * (never thrown). `tried` says what was contacted; the probe may add to it (e.g. whether TLS was
 * used). Neither may hold a secret.
 */
export async function probeTest(
  tried: TestResult['tried'],
  probe: () => Promise<ProbeFound>,
  classify: (error: unknown) => ConnectorError,
): Promise<TestResult> {
  const started = Date.now();
  try {
    const found = await probe();
    return { ok: true, status: 'ok', message: found.message, tried: { ...tried, ...found.tried }, duration_ms: Date.now() - started };
  } catch (error) {
    const failure = classify(error);
    return { ok: false, status: failure.reason, message: failure.message, tried, duration_ms: Date.now() - started };
  }
}
