import { describe, expect, it } from 'vitest';
import { scrubText } from './redact.js';

describe('scrubText', () => {
  it('removes tokens, URL credentials and password assignments from free text', () => {
    const text = `auth svcpat_${'a'.repeat(43)} failed for postgres://gis:s3cret@db:5432/x (password=hunter2)`;
    const out = scrubText(text);
    expect(out).not.toMatch(/a{43}|s3cret|hunter2/);
    expect(out).toContain('postgres://gis:[redacted]@db:5432/x');
  });
});
