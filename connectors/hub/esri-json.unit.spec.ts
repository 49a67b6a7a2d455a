import { describe, expect, it } from 'vitest';
import { esriGeometryType, signedArea, toEsriGeometry } from './esri-json.js';

const ccw = [
  [0, 0],
  [10, 0],
  [10, 10],
  [0, 10],
  [0, 0],
];
const cw = [...ccw].reverse();

describe('GeoJSON geometries as Esri JSON', () => {
  it('points, multipoints and lines keep their coordinates (Z dropped)', () => {
    expect(toEsriGeometry({ type: 'Point', coordinates: [1, 2, 3] })).toEqual({ x: 1, y: 2 });
    expect(
      toEsriGeometry({
        type: 'MultiPoint',
        coordinates: [
          [1, 2],
          [3, 4],
        ],
      }),
    ).toEqual({
      points: [
        [1, 2],
        [3, 4],
      ],
    });
    expect(
      toEsriGeometry({
        type: 'LineString',
        coordinates: [
          [0, 0],
          [1, 1],
        ],
      }),
    ).toEqual({
      paths: [
        [
          [0, 0],
          [1, 1],
        ],
      ],
    });
    expect(
      toEsriGeometry({
        type: 'MultiLineString',
        coordinates: [
          [
            [0, 0],
            [1, 1],
          ],
          [
            [2, 2],
            [3, 3],
          ],
        ],
      }),
    ).toEqual({
      paths: [
        [
          [0, 0],
          [1, 1],
        ],
        [
          [2, 2],
          [3, 3],
        ],
      ],
    });
    expect(toEsriGeometry(null)).toBeNull();
  });

  it('outer rings clockwise and holes counter-clockwise, whatever the input said', () => {
    const hole = [
      [2, 2],
      [4, 2],
      [4, 4],
      [2, 4],
      [2, 2],
    ]; // counter-clockwise
    const polygon = toEsriGeometry({ type: 'Polygon', coordinates: [ccw, [...hole].reverse()] }) as { rings: number[][][] };
    expect(signedArea(polygon.rings[0]!)).toBeLessThan(0);
    expect(signedArea(polygon.rings[1]!)).toBeGreaterThan(0);
    expect(toEsriGeometry({ type: 'Polygon', coordinates: [cw] })).toEqual({ rings: [cw] });
    const multi = toEsriGeometry({ type: 'MultiPolygon', coordinates: [[ccw], [cw.map(([x, y]) => [x! + 20, y!])]] }) as { rings: number[][][] };
    expect(multi.rings).toHaveLength(2);
    expect(multi.rings.every((r) => signedArea(r) < 0)).toBe(true);
  });

  it('refuses collections and names layer geometry types', () => {
    expect(() => toEsriGeometry({ type: 'GeometryCollection', geometries: [] })).toThrow(/GeometryCollection/);
    expect(esriGeometryType('MultiPolygon')).toBe('esriGeometryPolygon');
    expect(esriGeometryType('LineString')).toBe('esriGeometryPolyline');
    expect(esriGeometryType('MultiPoint')).toBe('esriGeometryMultipoint');
    expect(esriGeometryType(null)).toBeNull();
  });
});
