import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { wkbToSdo } from '../../connectors/oracle/sdo.js';
import { layerColumns, layerExtent, layerRows, wkbType, WkbTypes, writeRowsAsGeoPackage } from '../../connectors/shared/sql/sql-rows.js';
import { vectorInput } from '../../connectors/shared/files/vector-input.js';
import { gdal } from '../../geo/gdal/gdal.js';
import { geoJsonFile } from './sql-fixtures.js';

/* What the SQL connectors share that reads and writes through GDAL (the rest: connectors/shared/sql/sql-shared.unit.spec.ts). */
describe('what the SQL connectors share', () => {
  it('reads WKB geometry types (ISO and EWKB flags) and picks one layer type', () => {
    const pointZ = new gdal.Point(1, 2, 3).toWKB(gdal.wkbNDR, gdal.wkbVariantIso);
    expect(wkbType(pointZ)).toEqual({ base: 1, z: true, m: false });
    const seen = new WkbTypes();
    seen.add(gdal.Geometry.fromWKT('POLYGON((0 0,1 0,1 1,0 0))').toWKB());
    seen.add(gdal.Geometry.fromWKT('MULTIPOLYGON(((0 0,1 0,1 1,0 0)))').toWKB());
    expect(seen.nlt()).toBe('MULTIPOLYGON');
    expect(new WkbTypes().nlt()).toBeUndefined();
  });

  it('turns typed rows with WKB into a GeoPackage layer through real ogr2ogr', async () => {
    const workDir = mkdtempSync(path.join(tmpdir(), 'svc-sqlrows-'));
    const file = path.join(workDir, 'boroughs.gpkg');
    async function* rows() {
      yield [1, 'Manhattan, "NY"', 1.5, new Date(Date.UTC(2024, 0, 2, 3, 4, 5)), true, gdal.Geometry.fromWKT('POLYGON((0 0,10 0,10 10,0 0))').toWKB()];
      yield [2, null, null, null, false, null];
    }
    const count = await writeRowsAsGeoPackage(
      {
        file,
        layer: 'boroughs',
        columns: [
          { name: 'id', kind: 'integer' },
          { name: 'Name der Gemeinde', kind: 'string' },
          { name: 'area', kind: 'real' },
          { name: 'updated', kind: 'datetime' },
          { name: 'active', kind: 'boolean' },
        ],
        geometry: { name: 'geom', epsg: 2263 },
        rows: rows(),
        label: 'test',
      },
      { signal: new AbortController().signal, log: pino({ level: 'silent' }), workDir, maxBytes: 10_000_000 },
    );
    expect(count).toBe(2);
    const ds = gdal.open(file);
    const layer = ds.layers.get('boroughs');
    expect(layer.srs?.getAuthorityCode()).toBe('2263');
    expect(gdal.Geometry.getName(layer.geomType)).toMatch(/polygon/i);
    expect(layer.fields.getNames()).toEqual(['id', 'Name der Gemeinde', 'area', 'updated', 'active']);
    const first = layer.features.get(1);
    expect(first.fields.get('Name der Gemeinde')).toBe('Manhattan, "NY"');
    expect(first.fields.get('id')).toBe(1);
    expect(first.fields.get('active')).toBe(1);
    expect(first.getGeometry()?.toWKT()).toBe('POLYGON ((0 0,10 0,10 10,0 0))');
    const second = layer.features.get(2);
    expect(second.fields.get('Name der Gemeinde')).toBeNull();
    expect(second.getGeometry()).toBeNull();
    ds.close();
  });

  it('reads a delivered layer back as typed values and ISO WKB that the Oracle conversion takes', async () => {
    const workDir = mkdtempSync(path.join(tmpdir(), 'svc-sqlrows-'));
    const file = geoJsonFile(workDir, 'parcels.geojson', [
      {
        type: 'Feature',
        properties: { name: 'Müller', area: 12.5, n: 3, day: '2024-02-29', at: '2024-02-29T10:00:00Z' },
        geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [0, 0],
              [0, 1],
              [1, 1],
              [1, 0],
              [0, 0],
            ],
          ],
        },
      },
      { type: 'Feature', properties: { name: 'x'.repeat(5000), area: null, n: null, day: null, at: null }, geometry: null },
    ]);
    const layer = await vectorInput({ file, filename: 'parcels.geojson', format: 'GeoJSON', mediaType: null, layers: [], deliveryId: 'd' }, workDir);
    const columns = await layerColumns(layer);
    expect(columns.map((c) => [c.name, c.kind])).toEqual([
      ['name', 'string'],
      ['area', 'real'],
      ['n', 'integer'],
      ['day', 'date'],
      ['at', 'datetime'],
    ]);
    expect(columns[0]).toMatchObject({ maxLength: 5000, maxBytes: 5000 });
    const rows: unknown[][] = [];
    for await (const row of layerRows(layer, columns)) rows.push(row);
    expect(rows[0]!.slice(0, 3)).toEqual(['Müller', 12.5, 3]);
    expect((rows[0]![3] as Date).toISOString()).toBe('2024-02-29T00:00:00.000Z');
    expect((rows[0]![4] as Date).toISOString()).toBe('2024-02-29T10:00:00.000Z');
    expect(rows[1]![5]).toBeNull();
    const sdo = wkbToSdo(rows[0]![5] as Buffer, 4326)!;
    // GeoJSON's clockwise-drawn ring comes out counter-clockwise, as Oracle wants an exterior ring.
    expect(sdo).toMatchObject({ SDO_GTYPE: 2003, SDO_ELEM_INFO: [1, 1003, 1], SDO_ORDINATES: [0, 0, 1, 0, 1, 1, 0, 1, 0, 0] });
    expect(await layerExtent(layer)).toEqual({ minX: 0, minY: 0, maxX: 1, maxY: 1 });
  });

  it("takes a GeoPackage layer's declared geometry type as it is, and finds rows without a geometry when asked", async () => {
    const workDir = mkdtempSync(path.join(tmpdir(), 'svc-vectorinput-'));
    const make = (name: string, rows: (string | null)[], ask: { nullGeometries?: boolean } = { nullGeometries: true }) => {
      const file = path.join(workDir, `${name}.gpkg`);
      const ds = gdal.open(file, 'w', 'GPKG');
      const layer = ds.layers.create(name, gdal.SpatialReference.fromEPSG(4326), gdal.wkbPoint);
      for (const wkt of rows) {
        const f = new gdal.Feature(layer);
        if (wkt) f.setGeometry(gdal.Geometry.fromWKT(wkt));
        layer.features.add(f);
      }
      ds.close();
      return vectorInput({ file, filename: `${name}.gpkg`, format: 'GPKG', mediaType: null, layers: [], deliveryId: 'd' }, path.join(workDir, name), ask);
    };
    const full = await make('full', ['POINT (1 2)', 'POINT (3 4)']);
    expect(full).toMatchObject({ nlt: 'POINT', nullGeometries: false, features: 2, epsg: 4326 });
    const gaps = await make('gaps', ['POINT (1 2)', null]);
    expect(gaps).toMatchObject({ nlt: 'POINT', nullGeometries: true, features: 2 });
    // Not asked: no pass over the rows, and no answer pretending to know.
    const unasked = await make('unasked', ['POINT (1 2)', null], {});
    expect(unasked).toMatchObject({ nlt: 'POINT', nullGeometries: null, features: 2 });
  });
});
