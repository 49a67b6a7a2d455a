import { get } from '../api.js';
import { h } from '../dom.js';
import type { statusLine } from '../forms.js';
import type { RequestProgress as Progress } from '../types.js';
import { requestProgressText, type RequestProgressFigures } from './progress-text.js';

type StatusLine = ReturnType<typeof statusLine>;

/**
 * An id for one request the page follows. Built from getRandomValues rather than randomUUID,
 * which browsers offer only on HTTPS or localhost: the app is often reached over plain HTTP on a
 * team's network.
 */
export function newProgressId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** The server's figures without its nulls, as the text takes them. */
function known(p: Progress): RequestProgressFigures {
  return {
    ...(p.bytes_written === null ? {} : { bytes_written: p.bytes_written }),
    ...(p.bytes_total === null ? {} : { bytes_total: p.bytes_total }),
    ...(p.features_written === null ? {} : { features_written: p.features_written }),
    ...(p.percent === null ? {} : { percent: p.percent }),
    phase: p.phase,
  };
}

/**
 * Runs one long request (a Workspace import, convert or delivery) under a fresh progress_id and
 * shows on `status`, each second while it runs, the time so far and what GET /progress says: "Delivering
 * to “Ingest”… 12 s · 8.0 of 24 MB written · 33%" with a bar, or what it is doing where that has
 * no figures ("Converting… 40 s · running the pipeline"). Polls that fail (404 until the
 * server has begun, a network blip) leave the line as it was; the request's own answer decides.
 */
export async function followRequest<T>(status: StatusLine, label: string, start: (progressId: string) => Promise<T>): Promise<T> {
  const id = newProgressId();
  const started = Date.now();
  let latest: Progress | null = null;
  // A poll answered after the request did must not write over what the caller shows next.
  let done = false;
  const show = () => {
    if (done) return;
    const seconds = `${Math.round((Date.now() - started) / 1000)} s`;
    const { text, percent } = latest ? requestProgressText(known(latest)) : { text: '', percent: null };
    status.set(
      h(
        'span',
        { class: 'request-progress', 'data-testid': 'request-progress' },
        h('span', null, text ? `${label} ${seconds} · ${text}` : `${label} ${seconds}`),
        // Without a share known the bar is indeterminate: it still says that work goes on.
        percent === null ? h('progress', { max: '100' }) : h('progress', { max: '100', value: String(Math.min(100, percent)) }),
      ),
      'busy',
    );
  };
  let polling = false;
  const timer = window.setInterval(() => {
    show();
    if (polling) return;
    polling = true;
    get<Progress>(`/progress/${id}`)
      .then((p) => {
        if (p.status !== 'running') return;
        latest = p;
        show();
      })
      .catch(() => undefined)
      .finally(() => {
        polling = false;
      });
  }, 1000);
  show();
  try {
    return await start(id);
  } finally {
    done = true;
    window.clearInterval(timer);
  }
}
