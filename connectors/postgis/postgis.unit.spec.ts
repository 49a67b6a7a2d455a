import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { columnGeometryType, nltOf } from '../shared/files/vector-input.js';
import { geometryLabel } from './catalog.js';
import { classifyPg, reasonOfSqlstate } from './client.js';
import { pgName } from './deliver.js';
import { asSubquery } from '../shared/sql/sql.js';
import { libpqFor } from './ogr.js';

describe('postgis connector pieces', () => {
  it('labels PostGIS geometry types in WKT spelling with their dimensions', () => {
    expect(geometryLabel('MULTIPOLYGON', 2)).toBe('MULTIPOLYGON');
    expect(geometryLabel('POINT', 3)).toBe('POINT Z');
    expect(geometryLabel('POINTM', 3)).toBe('POINT M');
    expect(geometryLabel('LINESTRING', 4)).toBe('LINESTRING ZM');
    expect(geometryLabel('GEOMETRY', 2)).toBe('GEOMETRY');
  });

  it('gives a table one column type for the geometry types in its data', () => {
    expect(columnGeometryType(3, ['POLYGON'])).toBe(3);
    expect(columnGeometryType(3, ['POLYGON', 'MULTIPOLYGON'])).toBe(6);
    expect(columnGeometryType(0, ['LINESTRING', 'MULTILINESTRING'])).toBe(5);
    expect(columnGeometryType(0, ['POINT', 'POLYGON'])).toBe(0);
    expect(columnGeometryType(1, [])).toBe(1);
    expect(nltOf(6, true, false)).toBe('MULTIPOLYGONZ');
    expect(nltOf(0, false, false)).toBe('GEOMETRY');
    expect(nltOf(100, false, false)).toBe('NONE');
  });

  it('classifies by SQLSTATE, keeping the server message', () => {
    expect(reasonOfSqlstate('28P01')).toBe('authentication_failed');
    expect(reasonOfSqlstate('3D000')).toBe('not_found');
    expect(reasonOfSqlstate('42501')).toBe('permission_denied');
    expect(reasonOfSqlstate('42601')).toBe('invalid_data');
    expect(reasonOfSqlstate('08006')).toBe('unreachable');
    const e = classifyPg(Object.assign(new Error('relation "x" does not exist'), { code: '42P01' }), 'PostgreSQL at h:5432');
    expect(e).toMatchObject({ reason: 'not_found', retryable: false, message: 'PostgreSQL at h:5432: relation "x" does not exist' });
    expect(classifyPg(new Error('The server does not support SSL connections'), 'db').reason).toBe('tls_error');
  });

  it('truncates identifiers to 63 bytes on a character boundary', () => {
    expect(pgName('a'.repeat(70))).toBe('a'.repeat(63));
    const umlauts = pgName('ü'.repeat(40));
    expect(Buffer.byteLength(umlauts)).toBe(62);
  });

  it('wraps a user query as a subquery that a trailing comment or semicolon cannot break', () => {
    expect(asSubquery('SELECT 1 -- one\n;\n')).toBe('(\nSELECT 1 -- one\n)');
  });

  it('keeps the password out of the connection string, in a private password file', async () => {
    const workDir = mkdtempSync(path.join(tmpdir(), 'svc-unit-'));
    const ctx = { signal: new AbortController().signal, log: pino({ level: 'silent' }), workDir, maxBytes: 1 };
    const libpq = await libpqFor({ host: 'localhost', port: 5432, database: "it's", username: 'u', password: 'p:w\\x', ssl_mode: 'verify-full' }, ctx, {
      readOnly: true,
    });
    expect(libpq.dataset).not.toContain('p:w');
    // libpq connects to the address the outbound policy checked; the name stays for TLS.
    expect(libpq.dataset).toMatch(/hostaddr='(127\.0\.0\.1|::1)'/);
    expect(libpq.dataset).toContain("host='localhost'");
    expect(libpq.dataset).toContain("dbname='it\\'s'");
    expect(libpq.dataset).toContain("sslmode='verify-full'");
    expect(libpq.dataset).toContain("options='-c default_transaction_read_only=on'");
    const passfile = /passfile='([^']+)'/.exec(libpq.dataset)![1]!;
    expect(readFileSync(passfile, 'utf8')).toBe('*:*:*:*:p\\:w\\\\x\n');
    expect(statSync(passfile).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(passfile)).mode & 0o777).toBe(0o700);
    await libpq.close();
    expect(() => statSync(passfile)).toThrow();
  });
});
