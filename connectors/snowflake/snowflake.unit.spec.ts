import { describe, expect, it } from 'vitest';
import { generateKeyPairSync, createPrivateKey } from 'node:crypto';
import { classifySnowflake, ident, literal, normalisePem } from './client.js';
import { snowflakeColumnNames, spatialColumn } from './deliver.js';
import { cursorType, kindOfSnowflake } from './extract.js';

describe('snowflake statements', () => {
  it('quotes identifiers and literals whatever they hold', () => {
    expect(ident('Població "x"')).toBe('"Població ""x"""');
    expect(literal("file:///tmp/it's\\here.csv")).toBe("'file:///tmp/it''s\\\\here.csv'");
  });

  it('picks GEOGRAPHY for WGS 84 (or when asked) and GEOMETRY with the SRID otherwise', () => {
    expect(spatialColumn('auto', 4326)).toEqual({ type: 'GEOGRAPHY', srid: 4326 });
    expect(spatialColumn('auto', 2263)).toEqual({ type: 'GEOMETRY', srid: 2263 });
    expect(spatialColumn('auto', null)).toEqual({ type: 'GEOMETRY', srid: 0 });
    expect(spatialColumn('geography', 2263)).toEqual({ type: 'GEOGRAPHY', srid: 4326 });
    expect(spatialColumn('geometry', 4326)).toEqual({ type: 'GEOMETRY', srid: 4326 });
  });

  it('keeps names as given (case-sensitive), cut at 255 characters and deduplicated', () => {
    expect(snowflakeColumnNames(['Name', 'name', 'Name'])).toEqual(['Name', 'name', 'Name_2']);
    expect(snowflakeColumnNames(['é'.repeat(300)])[0]).toHaveLength(255);
  });

  it('maps result types to column kinds and cursor casts', () => {
    expect(kindOfSnowflake({ name: 'a', type: 'fixed', scale: 0 })).toBe('integer');
    expect(kindOfSnowflake({ name: 'a', type: 'fixed', scale: 2 })).toBe('real');
    expect(kindOfSnowflake({ name: 'a', type: 'timestamp_tz', scale: 9 })).toBe('datetime');
    expect(kindOfSnowflake({ name: 'a', type: 'variant', scale: 0 })).toBe('string');
    expect(cursorType({ name: 'a', type: 'fixed', scale: 0 })).toBe('NUMBER(38, 0)');
    expect(cursorType({ name: 'a', type: 'timestamp_ntz', scale: 9 })).toBe('TIMESTAMP_NTZ');
    expect(cursorType({ name: 'a', type: 'text', scale: 0 })).toBe('VARCHAR');
  });

  it('classifies by Snowflake error codes', () => {
    const cases: [unknown, string][] = [
      [{ code: 390100, message: 'Incorrect username or password was specified.' }, 'authentication_failed'],
      [{ code: 390144 }, 'authentication_failed'],
      [{ code: '002003', sqlState: '42S02' }, 'not_found'],
      [{ code: '003001', sqlState: '42501' }, 'permission_denied'],
      [{ code: '002002' }, 'target_exists'],
      [{ code: '001003', sqlState: '42000' }, 'invalid_data'],
      [{ code: 401001, cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) }, 'unreachable'],
      [{ code: '000630' }, 'timeout'],
    ];
    for (const [error, reason] of cases) expect(classifySnowflake(error, 'Snowflake').reason).toBe(reason);
  });

  it('reads a PEM key pasted into a single-line field (line breaks lost)', () => {
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 1024,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    const oneLine = privateKey.replace(/\n/g, ' ');
    expect(() => createPrivateKey(normalisePem(oneLine))).not.toThrow();
    expect(normalisePem(privateKey)).toBe(privateKey);
  });
});
