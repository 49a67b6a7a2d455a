import { h } from '../../dom.js';
import type { TestResult } from '../../types.js';
import { humanize } from '../param-field.js';

/** The classification of a connection test (docs/api-conventions.md), in words. */
const STATUS_LABELS: Record<string, string> = {
  ok: 'Connected',
  unreachable: 'Unreachable',
  timeout: 'Timed out',
  authentication_failed: 'Authentication failed',
  permission_denied: 'Permission denied',
  tls_error: 'TLS error',
  not_found: 'Not found',
  invalid_response: 'Unexpected answer',
};

export const testStatusLabel = (status: string) => STATUS_LABELS[status] ?? humanize(status);

/** What a connection test answered: the class, the server's sentence, what was contacted. */
export function testResultView(result: TestResult, note?: string): HTMLElement {
  const tried = Object.entries(result.tried).filter(([, v]) => v !== null && v !== undefined && v !== '');
  return h(
    'div',
    { class: `test-result ${result.ok ? 'ok' : 'failed'}`, 'data-status': result.status },
    h('p', null, h('strong', null, `${testStatusLabel(result.status)}.`), ' ', result.message, h('span', { class: 'hint' }, ` (${result.duration_ms} ms)`)),
    tried.length
      ? h(
          'p',
          { class: 'hint' },
          'Tried: ',
          tried.map(([k, v], i) => [i ? ', ' : '', `${k} `, h('code', null, String(v))]),
        )
      : null,
    note ? h('p', { class: 'hint' }, note) : null,
  );
}
