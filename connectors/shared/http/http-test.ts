import type { ConnectorContext, TestResult } from '../../types.js';
import { classify, reasonOfStatus } from '../policy/classify.js';
import { httpRequest, publicUrl, type HttpRequest } from './fetch.js';

/**
 * A connection test over HTTP, classified; `tried` says what was contacted, never credentials.
 * GET endpoints get a HEAD, then a one-byte ranged GET when HEAD is not answered with 2xx (many
 * servers and signed URLs refuse HEAD but serve GET). POST endpoints get their real request,
 * whose body is not read.
 */
export async function testHttp(request: HttpRequest, ctx: ConnectorContext, tried: Record<string, string | number | boolean | null>): Promise<TestResult> {
  const started = Date.now();
  const done = (result: Omit<TestResult, 'duration_ms' | 'tried'>): TestResult => ({ ...result, tried, duration_ms: Date.now() - started });
  const label = request.label ?? publicUrl(request.url);
  try {
    let response: Response;
    if (request.method === 'POST') {
      response = (await httpRequest(request, ctx.signal)).response;
    } else {
      response = (await httpRequest({ ...request, method: 'HEAD' }, ctx.signal)).response;
      if (!response.ok) {
        await response.body?.cancel();
        response = (await httpRequest({ ...request, method: 'GET', headers: { ...request.headers, range: 'bytes=0-0' } }, ctx.signal)).response;
      }
    }
    await response.body?.cancel();
    if (response.ok) return done({ ok: true, status: 'ok', message: `${label} answered HTTP ${response.status}` });
    return done({ ok: false, status: reasonOfStatus(response.status), message: `${label} answered HTTP ${response.status}` });
  } catch (error) {
    const failure = classify(error, label);
    return done({ ok: false, status: failure.reason, message: failure.message });
  }
}

/**
 * A connection test made of connector-specific steps (fetch a landing page, check it is what the
 * type expects): a thrown ConnectorError becomes the classified result.
 */
export async function testSteps(tried: Record<string, string | number | boolean | null>, label: string, steps: () => Promise<string>): Promise<TestResult> {
  const started = Date.now();
  try {
    const message = await steps();
    return { ok: true, status: 'ok', message, tried, duration_ms: Date.now() - started };
  } catch (error) {
    const failure = classify(error, label);
    return { ok: false, status: failure.reason, message: failure.message, tried, duration_ms: Date.now() - started };
  }
}
