/**
 * A Run's log (issue 33): for each finished step, what it read and wrote — the Source or
 * Destination and the place in it, the file, format, bytes, features, and each layer's geometry
 * type and CRS (code, name and unit) — the warnings it gave (the Run's `warnings`, by step) and a Python step's output.
 */
import { bytes, count, h } from '../../dom.js';
import type { Run } from '../../types.js';
import { crsText } from '../crs.js';
import { STEP_LABELS } from './run-status.js';

type Log = NonNullable<Run['steps'][number]['log']>;
type Facts = NonNullable<Log['read']>;

/** "table: roads" or the URL, as the connector names the place. */
function placeText(location: Record<string, unknown> | undefined): string | null {
  if (!location || !Object.keys(location).length) return null;
  return Object.entries(location)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
}

function factsView(label: string, facts: Facts | undefined): HTMLElement | null {
  if (!facts) return null;
  const parts: string[] = [];
  if (facts.connection) parts.push(`${facts.connection.type} ${facts.connection.id}`);
  const place = placeText(facts.location);
  if (place) parts.push(place);
  if (facts.filename) parts.push(facts.filename);
  if (facts.format) parts.push(facts.format);
  if (facts.bytes !== undefined && facts.bytes !== null) parts.push(bytes(facts.bytes));
  if (facts.features !== undefined && facts.features !== null) parts.push(`${count(facts.features)} features`);
  const layers = (facts.layers ?? []).filter((l) => l.geometry_type || l.crs || l.features !== null);
  return h(
    'div',
    { class: 'log-facts' },
    h('p', null, h('strong', null, `${label}: `), parts.join(' · ') || '—'),
    layers.length
      ? h(
          'ul',
          { class: 'log-layers' },
          layers.map((l) =>
            h(
              'li',
              null,
              h('code', null, l.name),
              ` ${[l.geometry_type, l.crs ? crsText(l.crs, l.crs_info) : null, l.features === null ? null : `${count(l.features)} features`].filter(Boolean).join(' · ')}`,
            ),
          ),
        )
      : null,
  );
}

/** The log of every step that kept one, with its warnings; null when no step did (older Runs, or none finished yet). */
export function runLog(run: Run): HTMLElement | null {
  const entries = run.steps
    .map((step) => ({ step, warnings: run.warnings.filter((w) => w.step === step.name) }))
    .filter(({ step, warnings }) => step.log || warnings.length);
  if (!entries.length) return null;
  return h(
    'ol',
    { class: 'run-log', 'data-testid': 'run-log' },
    entries.map(({ step, warnings }) =>
      h(
        'li',
        { 'data-step': step.name },
        h('h3', null, STEP_LABELS[step.name] ?? step.name),
        factsView('Read', step.log?.read),
        factsView('Wrote', step.log?.wrote),
        warnings.length
          ? h(
              'ul',
              { class: 'log-warnings', 'aria-label': 'Warnings' },
              warnings.map((w) => h('li', { class: 'warning' }, w.layer ? `${w.layer}: ${w.message}` : w.message, ' ', h('code', null, w.code))),
            )
          : null,
        step.log?.output && (step.log.output.stdout || step.log.output.stderr)
          ? h(
              'details',
              null,
              h('summary', null, 'What the script printed'),
              step.log.output.stdout ? h('pre', null, step.log.output.stdout) : null,
              step.log.output.stderr ? h('pre', { class: 'stderr' }, step.log.output.stderr) : null,
            )
          : null,
      ),
    ),
  );
}
