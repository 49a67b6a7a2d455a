import { describe, expect, it } from 'vitest';
import { host, httpUrl, name } from './fields.js';

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

describe('names and hosts', () => {
  it('refuses blank names and hosts with white space, whatever white space it is (the OpenAPI patterns say the same)', () => {
    for (const blank of [' ', '\ufeff', '\u3000\t']) expect(name('Name').safeParse(blank).success, JSON.stringify(blank)).toBe(false);
    expect(name('Name').parse('  kept ')).toBe('kept');
    for (const bad of [' db.example.com', 'db\ufeff', 'a/b', 'user@db', '']) expect(host.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    expect(host.parse('db.example.com')).toBe('db.example.com');
  });
});
