import type { ConnectorContext, TestResult } from '../types.js';
import { classify, reasonOfStatus } from './classify.js';
import { publicUrl } from './download.js';

/**
 * A connection test over HTTP: one request (HEAD, then a GET with Range if HEAD is refused),
 * classified. `tried` says what was contacted, never credentials.
 */
export async function testHttp(
  request: { url: string; headers?: Record<string, string> },
  ctx: ConnectorContext,
  tried: Record<string, string | number | boolean | null>,
): Promise<TestResult> {
  const started = Date.now();
  const done = (result: Omit<TestResult, 'duration_ms' | 'tried'>): TestResult => ({ ...result, tried, duration_ms: Date.now() - started });
  const label = publicUrl(request.url);
  try {
    let response = await fetch(request.url, { method: 'HEAD', headers: request.headers, redirect: 'follow', signal: ctx.signal });
    if (response.status === 405 || response.status === 501) {
      response = await fetch(request.url, { method: 'GET', headers: { ...request.headers, range: 'bytes=0-0' }, redirect: 'follow', signal: ctx.signal });
      await response.body?.cancel();
    }
    if (response.ok || response.status === 206) return done({ ok: true, status: 'ok', message: `${label} answered HTTP ${response.status}` });
    const reason = reasonOfStatus(response.status);
    return done({ ok: false, status: reason, message: `${label} answered HTTP ${response.status}` });
  } catch (error) {
    const failure = classify(error, label);
    return done({ ok: false, status: failure.reason, message: failure.message });
  }
}
