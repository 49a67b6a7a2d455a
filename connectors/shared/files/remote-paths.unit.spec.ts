import { describe, expect, it } from 'vitest';
import { listedPathSegments, relativeKey, underBase, underPrefix } from './remote-paths.js';

describe('remote paths', () => {
  it('puts keys under the prefix as a folder, with or without its trailing slash', () => {
    expect(underPrefix('', 'a/b.gpkg')).toBe('a/b.gpkg');
    expect(underPrefix('nightly', 'b.gpkg')).toBe('nightly/b.gpkg');
    expect(underPrefix('nightly/', 'b.gpkg')).toBe('nightly/b.gpkg');
  });

  it('appends the delivered filename to a key that names a folder', () => {
    expect(underPrefix('nightly/', 'exports/', 'parcels.gpkg')).toBe('nightly/exports/parcels.gpkg');
    expect(underPrefix('', 'exports/x.gpkg', 'parcels.gpkg')).toBe('exports/x.gpkg');
    expect(underBase('/incoming', 'daily/', 'parcels.zip')).toBe('/incoming/daily/parcels.zip');
    expect(underBase('.', 'a/./b.zip')).toBe('a/b.zip');
  });

  it('refuses keys that climb out or start at the root', () => {
    const key = relativeKey('key');
    expect(key.safeParse('a/../../etc/passwd').success).toBe(false);
    expect(key.safeParse('/etc/passwd').success).toBe(false);
    expect(key.safeParse('').success).toBe(false);
    expect(key.safeParse('a/b..c/d.gpkg').success).toBe(true);
  });

  it('makes a listed name URL path segments, refusing the ones that would climb out', () => {
    expect(listedPathSegments('DCIM/tree 1#.jpg', 'the server')).toBe('DCIM/tree%201%23.jpg');
    expect(listedPathSegments('a..b/c.gpkg', 'the server')).toBe('a..b/c.gpkg');
    for (const name of ['..', '../../auth/user', 'a/../../b.gpkg', './x.gpkg', 'a//b.gpkg', '/etc/x', 'a\\..\\b'])
      expect(() => listedPathSegments(name, 'the server'), name).toThrow(/not a path inside the project/);
  });
});
