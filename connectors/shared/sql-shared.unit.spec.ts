import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { gdal } from '../../geo/datasets/gdal.js';
import { cursorWindow, previousCursorValue } from './sql-cursor.js';
import { effectiveWriteMode, requireColumns, stagingNames } from './sql-delivery.js';
import { mapColumnNames, truncateName } from './sql-names.js';
import { writeFileSync } from 'node:fs';
import { wkbToSdo } from '../oracle/sdo.js';
import { csvField } from './table-csv.js';
import { csvText, layerColumns, layerExtent, layerRows, wkbType, WkbTypes, writeRowsAsGeoPackage } from './sql-rows.js';
import { vectorInput } from './vector-input.js';

const quote = (v: string) => `'${v.replace(/'/g, "''")}'`;

describe('what the SQL connectors share', () => {
  it('reads the rows between the last Run and the largest value now, and knows when nothing is new', () => {
    expect(previousCursorValue('id', { column: 'id', value: '7' })).toBe('7');
    expect(previousCursorValue('updated', { column: 'id', value: '7' })).toBeNull();
    expect(cursorWindow('id', '"id"', null, '9', quote)).toEqual({ where: [`"id" <= '9'`], cursor: { column: 'id', value: '9' }, unchanged: false });
    expect(cursorWindow('id', '"id"', "7'", '9', quote).where).toEqual([`"id" > '7'''`, `"id" <= '9'`]);
    expect(cursorWindow('id', '"id"', '9', null, quote)).toEqual({ where: [`"id" > '9'`], cursor: { column: 'id', value: '9' }, unchanged: true });
    expect(cursorWindow('id', '"id"', null, null, quote).unchanged).toBe(false);
  });

  it('names staging tables by delivery, rebuilds on reinitialise, and refuses appends with unknown columns', () => {
    const a = stagingNames('run-1');
    expect(a).toEqual(stagingNames('run-1'));
    expect(a.stage).toMatch(/^_geoflow_stage_[0-9a-f]{16}$/);
    expect(a.old).toBe(a.stage.replace('stage', 'old'));
    expect(effectiveWriteMode('append', { reinitialize: true })).toBe('replace');
    expect(effectiveWriteMode('create', { reinitialize: true })).toBe('create');
    expect(() => requireColumns('t', ['a', 'b'], ['a'], (n) => `"${n}"`)).toThrow(/has no column "b"/);
    expect(() => requireColumns('t', ['a'], ['a', 'z'], (n) => n)).not.toThrow();
  });

  it('maps column names to what a database holds: cut, upper-cased when plain (Oracle), unique without case', () => {
    expect(truncateName('ü'.repeat(70), { maxLength: 128, unit: 'bytes' })).toBe('ü'.repeat(64));
    expect(mapColumnNames(['name', 'Name', 'level', 'Größe der Fläche'], { maxLength: 128, unit: 'bytes', upperCasePlain: true }, ['GEOM'])).toEqual([
      'NAME',
      'NAME_2',
      'LEVEL',
      'Größe der Fläche',
    ]);
    expect(mapColumnNames(['geom', 'x'.repeat(130), 'x'.repeat(129)], { maxLength: 128, unit: 'chars' }, ['geom', 'fid'])).toEqual([
      'geom_2',
      'x'.repeat(128),
      `${'x'.repeat(126)}_2`,
    ]);
  });

  it('writes driver values as CSV text: dates in ISO 8601, bytes as hex, booleans as 1/0, nothing for null and NaN', () => {
    expect(csvText('a, "b"\nc', 'string')).toBe('a, "b"\nc');
    expect(csvField(csvText('a, "b"\nc', 'string'))).toBe('"a, ""b""\nc"');
    expect(csvText(null, 'integer')).toBeNull();
    expect(csvText(new Date(Date.UTC(2024, 1, 29, 13, 5, 7, 250)), 'datetime')).toBe('2024-02-29T13:05:07.250Z');
    expect(csvText(new Date(Date.UTC(2024, 1, 29)), 'date')).toBe('2024-02-29');
    expect(csvText(true, 'boolean')).toBe('1');
    expect(csvText(Buffer.from([1, 171]), 'binary')).toBe('01AB');
    expect(csvText(Number.NaN, 'real')).toBeNull();
  });

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
    const file = path.join(workDir, 'parcels.geojson');
    writeFileSync(
      file,
      JSON.stringify({
        type: 'FeatureCollection',
        features: [
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
        ],
      }),
    );
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
