import { describe, expect, it } from 'vitest';
import { httpUrl } from './fields.js';

describe('httpUrl', () => {
  it('refuses a value that is not a URL as an issue, without throwing', () => {
    const result = httpUrl.safeParse('not a url');
    expect(result.success).toBe(false);
  });

  it('refuses credentials inside the URL', () => {
    const result = httpUrl.safeParse('https://user:pw@data.example.org/a.geojson');
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.message)).toContain('put credentials in their own fields, not in the URL');
  });

  it('accepts an http(s) URL', () => {
    expect(httpUrl.safeParse('https://data.example.org/a.geojson').success).toBe(true);
  });
});
