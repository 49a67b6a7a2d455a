import { describe, expect, it } from 'vitest';
import { columnGeometryType, freeColumnName } from './vector-input.js';

describe('freeColumnName', () => {
  it('keeps the preferred name when no attribute has it, else takes an alternative, else numbers it', () => {
    expect(freeColumnName(['name'], 'geom', 'geometry')).toBe('geom');
    expect(freeColumnName(['GEOM'], 'geom', 'geometry')).toBe('geometry');
    expect(freeColumnName(['geom', 'Geometry', 'geom_1'], 'geom', 'geometry')).toBe('geom_2');
  });
});

describe('columnGeometryType', () => {
  it('promotes one family to its multi type and gives unrelated kinds a generic column', () => {
    expect(columnGeometryType(3, ['POLYGON', 'MULTIPOLYGON'])).toBe(6);
    expect(columnGeometryType(0, ['POINT', 'POLYGON'])).toBe(0);
    expect(columnGeometryType(1, [])).toBe(1);
  });
});
