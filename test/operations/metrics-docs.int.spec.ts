import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { collectProcessMetrics, registry } from '../../platform/metrics.js';

/*
 * The dashboard and docs/metrics.md name the metrics the code registers: a renamed metric
 * would otherwise leave an empty panel or a table row about nothing.
 */

collectProcessMetrics();
const registered = new Set(registry.getMetricsAsArray().map((m) => m.name));
const ours = [...registered].filter((n) => n.startsWith('geoflow_') && !/^geoflow_(process|nodejs)_/.test(n));

/** A series name as a query uses it, back to the metric it belongs to. */
const metricOf = (series: string) => [series, series.replace(/_(bucket|count|sum)$/, '')].find((n) => registered.has(n));

describe('docs of the metrics', () => {
  it('the Grafana dashboard queries only metrics the service registers, and charts every one of ours', () => {
    const dashboard = readFileSync('docs/grafana-dashboard.json', 'utf8');
    const used = [...new Set(dashboard.match(/geoflow_[a-z0-9_]+/g) ?? [])];
    expect(used.filter((n) => !metricOf(n))).toEqual([]);
    const charted = new Set(used.map(metricOf));
    expect(ours.filter((n) => !charted.has(n))).toEqual([]);
    // It parses, and every panel has a query.
    const panels = (JSON.parse(dashboard) as { panels: { type: string; targets?: unknown[] }[] }).panels;
    expect(panels.filter((p) => p.type !== 'row' && !p.targets?.length)).toEqual([]);
  });

  it('docs/metrics.md lists every metric of ours', () => {
    const doc = readFileSync('docs/metrics.md', 'utf8');
    expect(ours.filter((n) => !doc.includes(`\`${n}\``))).toEqual([]);
  });
});
