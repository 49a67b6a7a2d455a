import { ApiError, get, plainMessage } from '../../api.js';
import { count, h, replace, time } from '../../dom.js';
import type { Page as ListPage, Run } from '../../types.js';
import { live, type Live } from './live.js';
import { duration, isFinished, runDuration, statusBadge, TRIGGER_LABELS } from './run-status.js';
import { columnHeads, tableRegion } from '../table-region.js';

export interface RunsTable {
  node: HTMLElement;
  /** Reloads now and follows the Runs until none is queued or running (after Run Now). */
  refresh(): void;
  dispose(): void;
}

/**
 * The Runs of a Job, newest first, that update themselves while one is queued or running.
 * `onChange` hears about every status change (the Job page then reloads its last Run).
 */
export function runsTable(jobId: string, onChange?: (runs: Run[]) => void): RunsTable {
  const base = `/jobs/${encodeURIComponent(jobId)}`;
  const body = h('div', null, h('p', { class: 'empty' }, 'Loading Runs…'));
  const announce = h('p', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });
  let runs: Run[] = [];
  let cursor: string | null = null;
  let signature = '';

  function render() {
    if (!runs.length) {
      replace(body, h('p', { class: 'empty' }, 'No Runs yet. “Run now” starts one; a schedule starts them on its own.'));
      return;
    }
    replace(
      body,
      tableRegion(
        'Runs',
        { class: 'table runs cards' },
        columnHeads(['Run', 'Status', 'Trigger', 'Started', 'Duration', 'Features']),
        h(
          'tbody',
          null,
          runs.map((r) =>
            h(
              'tr',
              { 'data-run-id': r.id, 'data-status': r.status },
              h('th', { scope: 'row' }, h('a', { href: `#${base}/runs/${encodeURIComponent(r.id)}`, class: 'mono' }, r.id)),
              h('td', { 'data-label': 'Status' }, statusBadge(r.status), r.error ? h('span', { class: 'hint run-error-line' }, ` ${r.error.message}`) : null),
              h(
                'td',
                { 'data-label': 'Trigger' },
                TRIGGER_LABELS[r.trigger] ?? r.trigger,
                r.attempt > 1 ? h('span', { class: 'hint' }, ` (attempt ${r.attempt})`) : null,
              ),
              h('td', { 'data-label': 'Started' }, time(r.started_at ?? r.created_at)),
              h('td', { class: 'num', 'data-label': 'Duration' }, duration(runDuration(r))),
              // File Destinations do not count rows: then what was read is the figure there is.
              h(
                'td',
                { class: 'num', 'data-label': 'Features' },
                r.stats.features_written !== null
                  ? `${count(r.stats.features_written)} written`
                  : r.stats.features_read !== null
                    ? `${count(r.stats.features_read)} read`
                    : '—',
              ),
            ),
          ),
        ),
      ),
      cursor ? h('button', { type: 'button', class: 'button secondary', onclick: () => void more() }, 'Show older Runs') : null,
    );
  }

  async function load(): Promise<boolean> {
    let page: ListPage<Run>;
    try {
      page = await get<ListPage<Run>>(`${base}/runs?limit=20`);
    } catch (error) {
      if (!runs.length) replace(body, h('p', { class: 'alert', role: 'alert' }, plainMessage(error)));
      // The server refused (gone, no right): polling again would not help; a network blip might.
      return !(error instanceof ApiError && error.status >= 400 && error.status < 500);
    }
    // Keep older pages the user opened; the first page is the one that changes.
    const older = runs.slice(20).filter((r) => !page.items.some((x) => x.id === r.id));
    const previous = new Map(runs.map((r) => [r.id, r.status]));
    runs = [...page.items, ...older];
    if (!older.length) cursor = page.next_cursor;
    const changed = runs.filter((r) => previous.has(r.id) && previous.get(r.id) !== r.status);
    if (changed.length) announce.textContent = changed.map((r) => `Run ${r.id} ${r.status}.`).join(' ');
    const now = JSON.stringify(runs.map((r) => [r.id, r.status, r.finished_at]));
    if (now !== signature) {
      signature = now;
      onChange?.(runs);
    }
    render();
    return runs.some((r) => !isFinished(r.status));
  }

  async function more() {
    if (!cursor) return;
    const page = await get<ListPage<Run>>(`${base}/runs?limit=20&cursor=${encodeURIComponent(cursor)}`);
    runs = [...runs, ...page.items.filter((r) => !runs.some((x) => x.id === r.id))];
    cursor = page.next_cursor;
    render();
  }

  const poll: Live = live(load, 1500);
  poll.wake();

  return {
    node: h('div', { class: 'runs-box' }, announce, body),
    refresh: () => poll.wake(),
    dispose: () => poll.stop(),
  };
}
