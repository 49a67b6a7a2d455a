/** The Jobs list: what each reads and delivers, when it runs, and how its last Run went. */
import { allConnections } from '../components/connections/kinds.js';
import { disabledReason, scheduleText, statusBadge } from '../components/jobs/run-status.js';
import { h, time } from '../dom.js';
import type { Page, PageContext } from '../router.js';
import type { Connection, Job } from '../types.js';
import { pagedListPage } from '../components/list-page.js';
import { columnHeads, tableRegion } from '../components/table-region.js';

const enc = encodeURIComponent;

/** "Warehouse → Data lake", with the names of the saved connections when they still exist. */
export function routeText(
  job: Pick<Job, 'source_id' | 'destination_id'>,
  sources: Map<string, Connection>,
  destinations: Map<string, Connection>,
): HTMLElement {
  const name = (map: Map<string, Connection>, id: string | null, path: string) => {
    if (!id) return h('span', { class: 'hint' }, 'no Destination yet');
    const c = map.get(id);
    return c ? h('a', { href: `#${path}/${enc(c.id)}` }, c.name) : h('span', { class: 'hint' }, `${id} (deleted)`);
  };
  return h(
    'span',
    { class: 'job-route' },
    name(sources, job.source_id, '/sources'),
    h('span', { 'aria-label': ' to ' }, ' → '),
    name(destinations, job.destination_id, '/destinations'),
  );
}

export function jobsPage({ app }: PageContext): Page {
  return pagedListPage<Job, [Connection[], Connection[]]>(app, {
    title: 'Jobs',
    newHref: '#/jobs/new',
    newLabel: 'New Job',
    lead: 'Saved automation: each Job reads a Source, transforms and converts, and delivers to a Destination, on its schedule or on Run Now. Schedules are shown in each Job’s timezone, next runs in yours.',
    path: '/jobs',
    also: () => Promise.all([allConnections('source'), allConnections('destination')]),
    empty: ([sources, destinations]) =>
      h(
        'div',
        { class: 'empty card' },
        h('p', null, 'No Jobs yet.'),
        h(
          'p',
          null,
          'A Job moves data from a Source to a Destination on a schedule, with the same transformations as the Workspace. ',
          sources.length && destinations.length
            ? null
            : ['It needs a saved ', h('a', { href: '#/sources/new' }, 'Source'), ' and a saved ', h('a', { href: '#/destinations/new' }, 'Destination'), '.'],
        ),
        h('p', null, h('a', { class: 'button', href: '#/jobs/new' }, 'Create the first Job')),
      ),
    table: (items, [sources, destinations]) => {
      const sourceMap = new Map(sources.map((c) => [c.id, c]));
      const destinationMap = new Map(destinations.map((c) => [c.id, c]));
      return tableRegion(
        'Jobs',
        { class: 'table jobs cards' },
        columnHeads(['Name', 'Source → Destination', 'Schedule', 'Next run (your time)', 'State', 'Last Run']),
        h(
          'tbody',
          null,
          items.map((job) => {
            const reason = disabledReason(job);
            return h(
              'tr',
              { 'data-job-id': job.id },
              h('th', { scope: 'row' }, h('a', { href: `#/jobs/${enc(job.id)}` }, job.name)),
              h('td', { 'data-label': 'Route' }, routeText(job, sourceMap, destinationMap)),
              h('td', { 'data-label': 'Schedule' }, scheduleText(job)),
              h('td', { 'data-label': 'Next run' }, time(job.next_run_at, job.schedule ? '—' : 'Not scheduled')),
              h(
                'td',
                { 'data-label': 'State' },
                h('span', { class: `badge ${job.enabled ? 'active' : 'expired'}` }, job.enabled ? 'Enabled' : 'Disabled'),
                reason ? h('p', { class: 'hint' }, reason) : null,
              ),
              h(
                'td',
                { 'data-label': 'Last Run' },
                job.last_run
                  ? h(
                      'a',
                      { href: `#/jobs/${enc(job.id)}/runs/${enc(job.last_run.id)}`, class: 'last-run' },
                      statusBadge(job.last_run.status),
                      ' ',
                      time(job.last_run.finished_at, ''),
                    )
                  : h('span', { class: 'hint' }, 'Never run'),
              ),
            );
          }),
        ),
      );
    },
  });
}
