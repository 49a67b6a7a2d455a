import { describe, expect, it } from 'vitest';
import { nltName, outputGeometry, sameGeometryType } from './geometry-types.js';

const mix = (bases: number[], z = false, m = false) => ({ bases, z, m, allZ: z });

describe('outputGeometry', () => {
  it('keeps one type as it is', () => {
    expect(outputGeometry(mix([3]))).toEqual({ kind: 'uniform', code: 3 });
    expect(outputGeometry(mix([1], true))).toEqual({ kind: 'uniform', code: 1001 });
  });

  it('promotes single and multi parts of one kind to multi', () => {
    expect(outputGeometry(mix([3, 6]))).toEqual({ kind: 'uniform', code: 6 });
    expect(outputGeometry(mix([2, 5], true, true))).toEqual({ kind: 'uniform', code: 3005 });
    expect(outputGeometry(mix([1, 4]))).toEqual({ kind: 'uniform', code: 4 });
  });

  it('says which kinds mix, and that an empty layer tells nothing', () => {
    expect(outputGeometry(mix([1, 3]))).toEqual({ kind: 'mixed', labels: ['POINT', 'POLYGON'] });
    expect(outputGeometry(mix([3, 6, 7]))).toEqual({ kind: 'mixed', labels: ['POLYGON', 'MULTIPOLYGON', 'GEOMETRYCOLLECTION'] });
    expect(outputGeometry(mix([3, 4]))).toEqual({ kind: 'mixed', labels: ['POLYGON', 'MULTIPOINT'] });
    expect(outputGeometry(mix([]))).toEqual({ kind: 'unknown' });
  });
});

describe('nltName and sameGeometryType', () => {
  it('spells types as ogr2ogr -nlt takes them', () => {
    expect(nltName(6)).toBe('MULTIPOLYGON');
    expect(nltName(1001)).toBe('POINTZ');
    expect(nltName(3002)).toBe('LINESTRINGZM');
    expect(nltName(2004)).toBe('MULTIPOINTM');
  });

  it('compares ISO and 2.5D codes of the same type', () => {
    expect(sameGeometryType(1003, 0x80000003)).toBe(true);
    expect(sameGeometryType(3, 6)).toBe(false);
    expect(sameGeometryType(1003, 3)).toBe(false);
  });
});
