import { describe, expect, it } from 'vitest';
import { loopbackDriverCases } from '../../test/connectors/support.js';
import { oracle } from './index.js';
import { classifyOracle, connectStringOf, easyConnectEndpoint, reasonOfCode } from './client.js';
import { epsgOfOracleSrid, signedArea, wkbToSdo } from './sdo.js';
import {
  appendStatement,
  columnType,
  createTable,
  cursorMaxExpression,
  dropVersion,
  geomMetadataInsert,
  ident,
  insertStatement,
  kindOfColumn,
  literal,
  qualified,
  selectExpression,
  spatialIndex,
  switchSynonym,
  versionTable,
} from './sql.js';

/* ISO WKB, little-endian, built by hand so the conversion is checked against the standard's layout. */
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
const f64 = (...ns: number[]) =>
  Buffer.concat(
    ns.map((n) => {
      const b = Buffer.alloc(8);
      b.writeDoubleLE(n);
      return b;
    }),
  );
const header = (type: number) => Buffer.concat([Buffer.from([1]), u32(type)]);
const point = (x: number, y: number) => Buffer.concat([header(1), f64(x, y)]);
const ring = (pts: number[][]) => Buffer.concat([u32(pts.length), ...pts.map((p) => f64(...p))]);
const polygon = (...rings: number[][][]) => Buffer.concat([header(3), u32(rings.length), ...rings.map(ring)]);

describe('oracle WKB → SDO_GEOMETRY', () => {
  it('writes a point with its SRID', () => {
    expect(wkbToSdo(point(7.44, 46.95), 4326)).toEqual({
      SDO_GTYPE: 2001,
      SDO_SRID: 4326,
      SDO_POINT: null,
      SDO_ELEM_INFO: [1, 1, 1],
      SDO_ORDINATES: [7.44, 46.95],
    });
  });

  it('writes a 3D line and a measured line with the measure position in SDO_GTYPE', () => {
    const lineZ = Buffer.concat([header(1002), u32(2), f64(0, 0, 10, 1, 1, 11)]);
    expect(wkbToSdo(lineZ, null)).toMatchObject({ SDO_GTYPE: 3002, SDO_ELEM_INFO: [1, 2, 1], SDO_ORDINATES: [0, 0, 10, 1, 1, 11] });
    const lineM = Buffer.concat([header(2002), u32(2), f64(0, 0, 5, 1, 1, 6)]);
    expect(wkbToSdo(lineM, null)).toMatchObject({ SDO_GTYPE: 3302 });
  });

  it('orients exterior rings counter-clockwise and holes clockwise', () => {
    const clockwise = [
      [0, 0],
      [0, 10],
      [10, 10],
      [10, 0],
      [0, 0],
    ];
    const holeCcw = [
      [2, 2],
      [4, 2],
      [4, 4],
      [2, 4],
      [2, 2],
    ];
    const sdo = wkbToSdo(polygon(clockwise, holeCcw), 2263)!;
    expect(sdo.SDO_GTYPE).toBe(2003);
    expect(sdo.SDO_ELEM_INFO).toEqual([1, 1003, 1, 11, 2003, 1]);
    const pairs = (from: number, to: number) =>
      Array.from({ length: (to - from) / 2 }, (_, i) => [sdo.SDO_ORDINATES[from + 2 * i]!, sdo.SDO_ORDINATES[from + 2 * i + 1]!]);
    expect(signedArea(pairs(0, 10))).toBeGreaterThan(0);
    expect(signedArea(pairs(10, 20))).toBeLessThan(0);
  });

  it('writes multipolygons as their rings, multipoints as one cluster, and big-endian WKB too', () => {
    const square = (x: number) => [
      [x, 0],
      [x + 1, 0],
      [x + 1, 1],
      [x, 1],
      [x, 0],
    ];
    const multi = Buffer.concat([header(6), u32(2), polygon(square(0)), polygon(square(5))]);
    expect(wkbToSdo(multi, 4326)).toMatchObject({ SDO_GTYPE: 2007, SDO_ELEM_INFO: [1, 1003, 1, 11, 1003, 1] });
    const mp = Buffer.concat([header(4), u32(2), point(1, 2), point(3, 4)]);
    expect(wkbToSdo(mp, null)).toMatchObject({ SDO_GTYPE: 2005, SDO_ELEM_INFO: [1, 1, 2], SDO_ORDINATES: [1, 2, 3, 4] });
    const be = Buffer.alloc(21);
    be[0] = 0;
    be.writeUInt32BE(1, 1);
    be.writeDoubleBE(3, 5);
    be.writeDoubleBE(4, 13);
    expect(wkbToSdo(be, null)!.SDO_ORDINATES).toEqual([3, 4]);
  });

  it('gives empty geometries as null and refuses curves', () => {
    expect(wkbToSdo(Buffer.concat([header(3), u32(0)]), 4326)).toBeNull();
    expect(() => wkbToSdo(Buffer.concat([header(8), u32(0)]), null)).toThrow(/no SDO_GEOMETRY form/);
    expect(epsgOfOracleSrid(8307)).toBe(4326);
    expect(epsgOfOracleSrid(2263)).toBe(2263);
  });
});

describe('oracle statements', () => {
  it('quotes identifiers and literals', () => {
    expect(ident('LEVEL')).toBe('"LEVEL"');
    expect(ident('a"b')).toBe('"a""b"');
    expect(qualified('GIS', 'Parcels')).toBe('"GIS"."Parcels"');
    expect(qualified(undefined, 'T')).toBe('"T"');
    expect(literal("it's")).toBe("'it''s'");
  });

  it('maps kinds to Oracle types: text past 4000 bytes to CLOB', () => {
    expect(columnType('integer')).toBe('NUMBER(19)');
    expect(columnType('real')).toBe('BINARY_DOUBLE');
    expect(columnType('string', 4000)).toBe('VARCHAR2(4000 BYTE)');
    expect(columnType('string', 4001)).toBe('CLOB');
    expect(columnType('datetime')).toBe('TIMESTAMP(3)');
    expect(kindOfColumn({ dbTypeName: 'NUMBER', precision: 10, scale: 0 })).toBe('integer');
    expect(kindOfColumn({ dbTypeName: 'NUMBER', precision: 0, scale: -127 })).toBe('real');
    expect(kindOfColumn({ dbTypeName: 'MDSYS.SDO_GEOMETRY' })).toBeNull();
    expect(kindOfColumn({ dbTypeName: 'DATE' })).toBe('datetime');
    expect(kindOfColumn({ dbTypeName: 'XMLTYPE' })).toBeUndefined();
  });

  it('reads geometries as WKB through Oracle and the cursor as text', () => {
    expect(selectExpression('GEOM', 't', true)).toBe('SDO_UTIL.TO_WKBGEOMETRY(t."GEOM") AS "GEOM"');
    expect(selectExpression('NAME', 't', false)).toBe('t."NAME"');
    expect(cursorMaxExpression('t."UPDATED"')).toBe('TO_CHAR(MAX(t."UPDATED"))');
  });

  it('creates a version table, inserts with array binds, dates converted by the server', () => {
    const columns = [
      { name: 'NAME', kind: 'string' as const, maxBytes: 10 },
      { name: 'day', kind: 'date' as const, maxBytes: 0 },
      { name: 'at', kind: 'datetime' as const, maxBytes: 0 },
    ];
    const v = versionTable('abcdef0123456789');
    expect(v).toBe('_GEOFLOW_V_ABCDEF0123456789');
    expect(createTable(v, columns, 'GEOM')).toBe(
      'CREATE TABLE "_GEOFLOW_V_ABCDEF0123456789" ("NAME" VARCHAR2(4000 BYTE), "day" DATE, "at" TIMESTAMP(3), "GEOM" MDSYS.SDO_GEOMETRY)',
    );
    expect(insertStatement(v, columns, 'GEOM')).toBe(
      `INSERT /*+ APPEND_VALUES */ INTO "_GEOFLOW_V_ABCDEF0123456789" ("NAME", "day", "at", "GEOM") VALUES (:1, TO_DATE(:2, 'YYYY-MM-DD'), TO_TIMESTAMP(:3, 'YYYY-MM-DD"T"HH24:MI:SS.FF3'), :4)`,
    );
  });

  it('registers metadata (the globe for geodetic SRIDs, padded bounds otherwise) and a spatial index', () => {
    expect(geomMetadataInsert('T', 'GEOM', 4326, true, null, false)).toBe(
      "INSERT INTO USER_SDO_GEOM_METADATA (TABLE_NAME, COLUMN_NAME, DIMINFO, SRID) VALUES ('T', 'GEOM', SDO_DIM_ARRAY(SDO_DIM_ELEMENT('X', -180, 180, 0.05), SDO_DIM_ELEMENT('Y', -90, 90, 0.05)), 4326)",
    );
    const projected = geomMetadataInsert('T', 'GEOM', 2263, false, { minX: 0, minY: 0, maxX: 1000, maxY: 500 }, true);
    expect(projected).toContain("SDO_DIM_ELEMENT('X', -10, 1010, 0.0005)");
    expect(projected).toContain("SDO_DIM_ELEMENT('Z'");
    expect(spatialIndex('T', 'GEOM', 'ab', 1903000000)).toBe('CREATE INDEX "_GEOFLOW_SX_AB" ON "T" ("GEOM") INDEXTYPE IS MDSYS.SPATIAL_INDEX_V2');
    expect(spatialIndex('T', 'GEOM', 'ab', 1201000000)).toContain('MDSYS.SPATIAL_INDEX');
  });

  it('switches a synonym for replace, appends with reprojection, drops a version with its metadata', () => {
    expect(switchSynonym('PARCELS', '_GEOFLOW_V_1')).toBe('CREATE OR REPLACE SYNONYM "PARCELS" FOR "_GEOFLOW_V_1"');
    expect(appendStatement('PARCELS', '_GEOFLOW_V_1', ['NAME'], { name: 'GEOM', transformTo: 2263 })).toBe(
      'INSERT INTO "PARCELS" ("NAME", "GEOM") SELECT "NAME", SDO_CS.TRANSFORM("GEOM", 2263) FROM "_GEOFLOW_V_1"',
    );
    expect(dropVersion('_GEOFLOW_V_1')).toEqual([
      'DROP TABLE "_GEOFLOW_V_1" CASCADE CONSTRAINTS PURGE',
      "DELETE FROM USER_SDO_GEOM_METADATA WHERE TABLE_NAME = '_GEOFLOW_V_1'",
    ]);
  });
});

describe('oracle connections', () => {
  it('classifies by ORA- and NJS- codes', () => {
    expect(reasonOfCode('ORA-01017')).toBe('authentication_failed');
    expect(reasonOfCode('ORA-12514')).toBe('not_found');
    expect(reasonOfCode('ORA-01031')).toBe('permission_denied');
    expect(reasonOfCode('ORA-00955')).toBe('target_exists');
    expect(reasonOfCode('ORA-13349')).toBe('invalid_data');
    expect(classifyOracle(Object.assign(new Error('ORA-00942: table or view does not exist\nHelp: …'), { code: 'ORA-00942' }), 'Oracle at h')).toMatchObject({
      reason: 'not_found',
      message: 'Oracle at h: ORA-00942: table or view does not exist',
    });
  });

  it('builds a connect descriptor from host, port and service, or takes an Easy Connect string', () => {
    expect(connectStringOf({ host: 'db', port: 1521, service_name: 'X', username: 'u' })).toBe(
      '(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=db)(PORT=1521))(CONNECT_DATA=(SERVICE_NAME=X)))',
    );
    expect(connectStringOf({ port: 1521, connect_string: 'tcps://db:2484/GIS', username: 'u' })).toBe('tcps://db:2484/GIS');
    expect(() => connectStringOf({ host: 'db', port: 1521, service_name: 'X)(HOST=evil', username: 'u' })).toThrow(/must not contain/);
    expect(() => connectStringOf({ port: 1521, username: 'u' })).toThrow(/host and service_name, or connect_string/);
  });

  it('reads the host and port an Easy Connect string names, for the outbound policy (a full descriptor it cannot read)', () => {
    expect(easyConnectEndpoint('tcps://db.example.org:2484/GIS')).toEqual({ host: 'db.example.org', port: 2484 });
    expect(easyConnectEndpoint('//db/GIS')).toEqual({ host: 'db', port: 1521 });
    expect(easyConnectEndpoint('[::1]:1522/GIS?connect_timeout=5')).toEqual({ host: '::1', port: 1522 });
    expect(easyConnectEndpoint('(DESCRIPTION=(ADDRESS=(HOST=x)))')).toBeNull();
    // The checked address goes into our own descriptor; the configured host must still be plain.
    expect(connectStringOf({ host: 'db', port: 1521, service_name: 'X', username: 'u' }, '10.0.0.5')).toContain('(HOST=10.0.0.5)');
  });
});

// node-oracledb (Thin) against a closed and a silent port.
loopbackDriverCases(oracle, (port) => ({ host: '127.0.0.1', port, service_name: 'GISPDB', username: 'u', password: 'PLANTED-pw' }));
