import { describe, expect, it } from 'vitest';
import { engineCreationOptions } from './catalog.js';
import { chosenAttributes, tilerArgs } from './vector-tiles.js';

describe('engine creation options', () => {
  it('completes GeoParquet options with their defaults and normalises names and values', () => {
    expect(engineCreationOptions('GeoParquet', { row_group_size: '100000', compression: 'snappy' })).toEqual({
      COMPRESSION: 'SNAPPY',
      COMPRESSION_LEVEL: '',
      ROW_GROUP_SIZE: '100000',
      SORT: 'HILBERT',
      GEOMETRY_NAME: 'geometry',
    });
  });

  it('refuses unknown names and bad values, naming what is allowed', () => {
    expect(() => engineCreationOptions('GeoParquet', { ROWGROUPS: '5' })).toThrow(
      /no creation option "ROWGROUPS"; its options are: COMPRESSION, COMPRESSION_LEVEL, ROW_GROUP_SIZE, SORT, GEOMETRY_NAME/,
    );
    expect(() => engineCreationOptions('GeoParquet', { COMPRESSION: 'LZO' })).toThrow(/COMPRESSION must be one of ZSTD, SNAPPY/);
    expect(() => engineCreationOptions('GeoParquet', { ROW_GROUP_SIZE: '12.5' })).toThrow(/whole number from 1000/);
    expect(() => engineCreationOptions('GeoParquet', { COMPRESSION: 'SNAPPY', COMPRESSION_LEVEL: '3' })).toThrow(/applies to ZSTD, GZIP and BROTLI/);
    expect(() => engineCreationOptions('GeoParquet', { COMPRESSION: 'GZIP', COMPRESSION_LEVEL: '12' })).toThrow(/GZIP is 1–9/);
    expect(() => engineCreationOptions('GeoParquet', { GEOMETRY_NAME: 'geom; DROP' })).toThrow(/GEOMETRY_NAME must be/);
    expect(() => engineCreationOptions('PMTiles', { MINZOOM: '9', MAXZOOM: '4' })).toThrow(/MINZOOM \(9\) is above MAXZOOM \(4\)/);
    let caught: unknown;
    try {
      engineCreationOptions('PMTiles', { ZOOM: '3' });
    } catch (e) {
      caught = e;
    }
    expect(caught).toMatchObject({ code: 'invalid_parameter', details: { parameter: 'creation_options', option: 'ZOOM' } });
  });

  it('turns tile options into tippecanoe arguments', () => {
    const all = engineCreationOptions('PMTiles', {});
    expect(tilerArgs(all)).toEqual(['-Z', '0', '-z', '14', '-r1', '-S', '1', '--drop-densest-as-needed']);
    expect(
      tilerArgs(
        engineCreationOptions('MBTiles', { MINZOOM: '3', MAXZOOM: '12', SIMPLIFICATION: '0', DROP_DENSEST_AS_NEEDED: 'no', SIMPLIFY_ONLY_LOW_ZOOMS: 'yes' }),
      ),
    ).toEqual(['-Z', '3', '-z', '12', '-r1', '--no-line-simplification', '--simplify-only-low-zooms']);
  });

  it('checks the chosen attributes against the layers', () => {
    const layers = [
      { name: 'a', fields: ['name', 'kind'] },
      { name: 'b', fields: ['height'] },
    ];
    expect(chosenAttributes({ ATTRIBUTES: ' name, height ' }, layers)).toEqual(['name', 'height']);
    expect(chosenAttributes({ ATTRIBUTES: '' }, layers)).toBeNull();
    expect(() => chosenAttributes({ ATTRIBUTES: 'name,colour' }, layers)).toThrow(/ATTRIBUTES names "colour", which no layer has/);
  });
});
