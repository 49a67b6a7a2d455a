/**
 * A running step's progress in words, with the total and the share done wherever the size is
 * known: "1,234 features · 4.0 of 8.0 MB written · 50%". The share is the step's own (GDAL's
 * percent) when it reports one, else bytes written over the declared total.
 */
export interface StepProgress {
  bytes_written?: number;
  bytes_total?: number;
  features_written?: number;
  percent?: number;
}

const MB = 1024 * 1024;
const mb = (n: number, small: boolean) => (n / MB).toFixed(small ? 1 : 0);

export function progressText(p: StepProgress): string {
  const parts: string[] = [];
  if (p.features_written !== undefined) parts.push(`${p.features_written.toLocaleString('en')} features`);
  const total = p.bytes_total !== undefined && p.bytes_total > 0 ? p.bytes_total : undefined;
  if (p.bytes_written !== undefined) {
    // One precision for both figures, set by the larger, so "9.5 of 12 MB" does not happen.
    const small = (total ?? p.bytes_written) < 10 * MB;
    parts.push(total !== undefined ? `${mb(p.bytes_written, small)} of ${mb(total, small)} MB written` : `${mb(p.bytes_written, small)} MB written`);
  }
  const percent = p.percent ?? (total !== undefined && p.bytes_written !== undefined ? (100 * p.bytes_written) / total : undefined);
  if (percent !== undefined) parts.push(`${Math.min(100, Math.max(0, Math.floor(percent)))}%`);
  return parts.join(' · ');
}

/** What GET /progress says of a followed request, as far as the text is concerned. */
export interface RequestProgressFigures extends StepProgress {
  phase?: 'transfer' | 'inspect' | 'pipeline' | 'write' | null;
}

/**
 * A followed request's progress in words: the figures while it transfers or writes, else what it
 * is doing ("running the pipeline", "reading what arrived"), which has no figures, and the share
 * done for the bar, null while no share is meaningful (the bar then only says that work goes on).
 */
export function requestProgressText(p: RequestProgressFigures): { text: string; percent: number | null } {
  if (p.phase === 'pipeline') return { text: 'running the pipeline', percent: null };
  if (p.phase === 'inspect') return { text: 'reading what arrived', percent: null };
  const text = progressText(p);
  const total = p.bytes_total !== undefined && p.bytes_total > 0 ? p.bytes_total : undefined;
  const percent = p.percent ?? (total !== undefined && p.bytes_written !== undefined ? (100 * p.bytes_written) / total : null);
  return { text: text || (p.phase === 'write' ? 'writing' : ''), percent: percent === null ? null : Math.min(100, Math.max(0, percent)) };
}
