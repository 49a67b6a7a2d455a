import { describe, expect, it } from 'vitest';
import { progressText } from './progress-text.js';

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
