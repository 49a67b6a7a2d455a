import { describe, expect, it } from 'vitest';
import { sourceLocation } from '../../application/transfers.js';
import { artifactFacts, featuresOf, layerFacts, stepLog } from './log.js';

const artifact = {
  dataset: { path: 'run/x.gpkg', open_options: [], driver: null, assumed_crs: null },
  file: 'run/x.gpkg',
  filename: 'x.gpkg',
  format: 'GPKG',
  media_type: 'application/geopackage+sqlite3',
  layers: ['roads', 'rivers'],
};

describe('a Run step log', () => {
  it('counts features only when every layer knows its count', () => {
    const known = layerFacts({
      layers: [
        { name: 'a', geometry_type: 'POINT', crs: 'EPSG:4326', feature_count: 3 },
        { name: 'b', geometry_type: null, crs: null, feature_count: 4 },
      ] as never,
    });
    expect(known).toEqual([
      { name: 'a', geometry_type: 'POINT', crs: 'EPSG:4326', features: 3 },
      { name: 'b', geometry_type: null, crs: null, features: 4 },
    ]);
    expect(featuresOf(known)).toBe(7);
    expect(featuresOf([...known, { name: 'c', geometry_type: 'POINT', crs: null, features: null }])).toBeNull();
  });

  it('names an artifact by file, format and layers', () => {
    expect(artifactFacts(artifact)).toEqual({
      filename: 'x.gpkg',
      format: 'GPKG',
      layers: [
        { name: 'roads', geometry_type: null, crs: null, features: null },
        { name: 'rivers', geometry_type: null, crs: null, features: null },
      ],
    });
  });

  it("cuts a Python step's output and leaves out what it was not given", () => {
    const log = stepLog({ read: { filename: 'x.gpkg' }, output: { stdout: 'y'.repeat(5_000), stderr: 'ok' } });
    expect(log.read).toEqual({ filename: 'x.gpkg' });
    expect('wrote' in log).toBe(false);
    expect(log.output!.stdout).toMatch(/^y{4000}… \(1000 more characters\)$/);
    expect(log.output!.stderr).toBe('ok');
    expect(stepLog({ output: null })).toEqual({});
  });
});

describe('the place a Run read, as its log names it', () => {
  it('is the selector when the Job gives one', () => {
    expect(sourceLocation([], { url: 'https://x.test/a' }, { table: 'roads' })).toEqual({ table: 'roads' });
  });

  it("is the Source's URL without its query or credentials otherwise", () => {
    expect(sourceLocation(['password'], { url: 'https://u:p@data.test/f.geojson?token=abc' }, {})).toEqual({ url: 'https://data.test/f.geojson' });
  });

  it('is nothing when the URL is itself a secret of the type', () => {
    expect(sourceLocation(['url'], { url: 'https://hooks.test/secret' }, {})).toEqual({});
  });
});
