import { describe, expect, it } from 'vitest';
import { cursorWindow, previousCursorValue } from './sql-cursor.js';
import { effectiveWriteMode, requireColumns, stagingNames } from './sql-delivery.js';
import { mapColumnNames, truncateName } from './sql-names.js';
import { csvField } from './table-csv.js';
import { csvText } from './sql-rows.js';

const quote = (v: string) => `'${v.replace(/'/g, "''")}'`;

/* What the SQL connectors share, without GDAL; what reads and writes through GDAL is in test/connectors/sql-shared.int.spec.ts. */
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
});
