import { describe, expect, it } from 'vitest';
import { csvField } from './table-csv.js';

describe('csvField', () => {
  it('leaves plain values bare, quotes what CSV must quote, and tells null from empty text', () => {
    expect(csvField('Zürich')).toBe('Zürich');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(' padded')).toBe('" padded"');
    expect(csvField(null)).toBe('');
    expect(csvField('')).toBe('""');
  });
});
