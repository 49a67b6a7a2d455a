import { describe, expect, it } from 'vitest';
import { parseRange, rangeHeader, resolveRange } from './byte-range.js';

describe('byte ranges', () => {
  it('parses one range of each form and ignores what it does not understand', () => {
    expect(parseRange('bytes=0-99')).toEqual({ start: 0, end: 99 });
    expect(parseRange('bytes=100-')).toEqual({ start: 100 });
    expect(parseRange('bytes=-500')).toEqual({ suffix: 500 });
    for (const h of [undefined, '', 'bytes=-', 'bytes=5-1', 'items=0-1', 'bytes=0-1,5-9', 'bytes=a-b']) expect(parseRange(h)).toBeUndefined();
  });

  it('resolves against the size, clamping the end, and says when a range cannot be satisfied', () => {
    expect(resolveRange({ start: 0, end: 99 }, 50)).toEqual({ start: 0, end: 49 });
    expect(resolveRange({ start: 10 }, 50)).toEqual({ start: 10, end: 49 });
    expect(resolveRange({ suffix: 20 }, 50)).toEqual({ start: 30, end: 49 });
    expect(resolveRange({ suffix: 80 }, 50)).toEqual({ start: 0, end: 49 });
    expect(resolveRange({ start: 50 }, 50)).toBeNull();
    expect(resolveRange({ suffix: 0 }, 50)).toBeNull();
    expect(resolveRange({ suffix: 5 }, 0)).toBeNull();
  });

  it('writes the header an object store reads', () => {
    expect(rangeHeader({ start: 3, end: 9 })).toBe('bytes=3-9');
    expect(rangeHeader({ start: 3 })).toBe('bytes=3-');
    expect(rangeHeader({ suffix: 4 })).toBe('bytes=-4');
  });
});
