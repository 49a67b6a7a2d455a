import { describe, expect, it } from 'vitest';
import { classifyBigQuery, ident, serviceAccount, tableRef } from './client.js';
import { bigQueryColumnNames } from './deliver.js';
import { cellText, kindOfBigQuery } from './extract.js';

const base = { project_id: 'p', dataset: 'd' };

describe('bigquery column names', () => {
  it('keeps letters, digits and _; drops accents; fixes leading digits and reserved prefixes; dedupes without case', () => {
    expect(bigQueryColumnNames(['Población total', '2020', '_TABLE_x', 'Name', 'name', 'NAME', 'straße', '名前'])).toEqual([
      'Poblacion_total',
      '_2020',
      'f_TABLE_x',
      'Name',
      'name_2',
      'NAME_3',
      'stra_e',
      '__',
    ]);
    expect(bigQueryColumnNames(['x'.repeat(400)])[0]).toHaveLength(300);
  });
});

describe('bigquery values', () => {
  it('maps REST cells to CSV text: TIMESTAMP microseconds to ISO UTC, booleans to 1/0, records to JSON', () => {
    expect(cellText({ name: 't', type: 'TIMESTAMP' }, { v: '1704164645123456' })).toBe('2024-01-02T03:04:05.123456Z');
    expect(cellText({ name: 't', type: 'TIMESTAMP' }, { v: '1704164645000000' })).toBe('2024-01-02T03:04:05.000Z');
    expect(cellText({ name: 't', type: 'TIMESTAMP' }, { v: '1.704164645E9' })).toBe('2024-01-02T03:04:05.000Z');
    expect(cellText({ name: 'b', type: 'BOOLEAN' }, { v: 'true' })).toBe('1');
    expect(cellText({ name: 'n', type: 'INTEGER' }, { v: null })).toBeNull();
    expect(cellText({ name: 'r', type: 'RECORD', fields: [{ name: 'a', type: 'STRING' }] }, { v: { f: [{ v: 'x' }] } })).toBe('{"a":"x"}');
    expect(cellText({ name: 'l', type: 'STRING', mode: 'REPEATED' }, { v: [{ v: 'a' }, { v: 'b' }] })).toBe('["a","b"]');
    expect(['INTEGER', 'FLOAT64', 'NUMERIC', 'BOOL', 'DATE', 'TIMESTAMP', 'GEOGRAPHY'].map((type) => kindOfBigQuery({ name: 'x', type }))).toEqual([
      'integer',
      'real',
      'real',
      'boolean',
      'date',
      'datetime',
      'string',
    ]);
  });

  it('quotes table paths and names for GoogleSQL', () => {
    expect(tableRef('my-project', 'gis', 'a`b')).toBe('`my-project.gis.a\\`b`');
    expect(ident('Población')).toBe('`Población`');
  });
});

describe('bigquery credentials and errors', () => {
  it('refuses keys that are not service-account keys without quoting them', () => {
    for (const credentials_json of [
      undefined,
      'not json',
      '{"type": "authorized_user", "client_email": "a", "private_key": "b"}',
      '{"client_email": "a@b", "private_key": "SECRET-KEY-TEXT"}',
    ]) {
      let error: unknown;
      try {
        serviceAccount({ ...base, credentials_json });
      } catch (e) {
        error = e;
      }
      expect(error).toMatchObject({ reason: 'authentication_failed' });
      expect((error as Error).message).not.toContain('SECRET-KEY-TEXT');
    }
  });

  it('classifies by HTTP status and BigQuery error reason', () => {
    const cases: [unknown, string][] = [
      [{ code: 401, message: 'x' }, 'authentication_failed'],
      [{ code: 403, errors: [{ reason: 'accessDenied' }] }, 'permission_denied'],
      [{ code: 403, errors: [{ reason: 'rateLimitExceeded' }] }, 'server_error'],
      [{ code: 404, errors: [{ reason: 'notFound' }] }, 'not_found'],
      [{ code: 409, errors: [{ reason: 'duplicate' }] }, 'target_exists'],
      [{ code: 400, errors: [{ reason: 'invalidQuery' }] }, 'invalid_data'],
      [{ code: 503 }, 'server_error'],
      [Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }), 'unreachable'],
    ];
    for (const [error, reason] of cases) expect(classifyBigQuery(error, 'BigQuery').reason).toBe(reason);
  });
});
