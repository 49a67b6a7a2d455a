import { describe, expect, it } from 'vitest';
import { progressText, requestProgressText } from './progress-text.js';

const MB = 1024 * 1024;

describe('progressText', () => {
  it('gives the total and the share when the size is declared', () => {
    expect(progressText({ bytes_written: 8 * MB, bytes_total: 32 * MB })).toBe('8 of 32 MB written · 25%');
    expect(progressText({ bytes_written: 1.5 * MB, bytes_total: 6 * MB, features_written: 1234 })).toBe('1,234 features · 1.5 of 6.0 MB written · 25%');
  });

  it("prefers the step's own percent to the byte ratio", () => {
    expect(progressText({ bytes_written: 2 * MB, bytes_total: 4 * MB, percent: 60.4 })).toBe('2.0 of 4.0 MB written · 60%');
  });

  it('says what is known without a total', () => {
    expect(progressText({ bytes_written: 8 * MB })).toBe('8.0 MB written');
    expect(progressText({ features_written: 10 })).toBe('10 features');
    expect(progressText({})).toBe('');
  });

  it('never shows more than 100% when more was written than declared', () => {
    expect(progressText({ bytes_written: 5 * MB, bytes_total: 4 * MB })).toBe('5.0 of 4.0 MB written · 100%');
  });
});

describe('requestProgressText', () => {
  it('gives the figures and the share while a request transfers or writes', () => {
    expect(requestProgressText({ phase: 'transfer', bytes_written: 8 * MB, bytes_total: 32 * MB })).toEqual({ text: '8 of 32 MB written · 25%', percent: 25 });
    expect(requestProgressText({ phase: 'write', bytes_written: 3 * MB, percent: 40 })).toEqual({ text: '3.0 MB written · 40%', percent: 40 });
    expect(requestProgressText({ phase: 'write' })).toEqual({ text: 'writing', percent: null });
  });

  it('says what it does where that has no figures, with no share for the bar', () => {
    // The transfer reached its total; 100 % would say the import is done while it is inspected.
    expect(requestProgressText({ phase: 'inspect', bytes_written: 32 * MB, bytes_total: 32 * MB })).toEqual({ text: 'reading what arrived', percent: null });
    expect(requestProgressText({ phase: 'pipeline' })).toEqual({ text: 'running the pipeline', percent: null });
  });

  it('keeps the share within 0–100 and reads an unknown phase as figures', () => {
    expect(requestProgressText({ bytes_written: 40 * MB, bytes_total: 32 * MB }).percent).toBe(100);
    expect(requestProgressText({ phase: null, features_written: 5 })).toEqual({ text: '5 features', percent: null });
  });
});
