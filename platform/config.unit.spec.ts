import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCAL_DATABASE_FILE, loadConfig } from './config.js';
import { readEnvFile, writeEnvFile } from './env-file.js';

describe('loadConfig: the database', () => {
  const dataDir = () => mkdtempSync(path.join(tmpdir(), 'svc-config-'));
  const local = 'postgres://postgres:0123abcd@127.0.0.1:54329/geoflow';

  it('finds the local cluster npm start wrote into the data folder when SVC_DATABASE_URL is not set', () => {
    const dir = dataDir();
    writeEnvFile(path.join(dir, LOCAL_DATABASE_FILE), { SVC_DATABASE_URL: local });
    expect(loadConfig({ SVC_DATA_DIR: dir }).databaseUrl).toBe(local);
  });

  it('prefers SVC_DATABASE_URL', () => {
    const dir = dataDir();
    writeEnvFile(path.join(dir, LOCAL_DATABASE_FILE), { SVC_DATABASE_URL: local });
    expect(loadConfig({ SVC_DATA_DIR: dir, SVC_DATABASE_URL: 'postgres://gis@db/geo' }).databaseUrl).toBe('postgres://gis@db/geo');
  });

  it('says where it looked when there is neither', () => {
    const dir = dataDir();
    expect(() => loadConfig({ SVC_DATA_DIR: dir })).toThrow(`SVC_DATABASE_URL is not set, and ${path.join(dir, LOCAL_DATABASE_FILE)}`);
  });
});

describe('loadConfig: the Temporal UI address', () => {
  const base = { SVC_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-config-')), SVC_DATABASE_URL: 'postgres://gis@db/geo' };

  it('is absent unless SVC_TEMPORAL_UI_URL is set, and kept without a trailing slash', () => {
    expect(loadConfig(base).temporalUiUrl).toBeNull();
    expect(loadConfig({ ...base, SVC_TEMPORAL_UI_URL: 'http://127.0.0.1:8233/' }).temporalUiUrl).toBe('http://127.0.0.1:8233');
    expect(loadConfig({ ...base, SVC_TEMPORAL_UI_URL: 'https://ops.example.org/temporal/' }).temporalUiUrl).toBe('https://ops.example.org/temporal');
  });

  it('refuses what is not a plain http(s) address', () => {
    for (const bad of ['127.0.0.1:8233', 'javascript:alert(1)', 'ftp://x', 'https://user:pw@ops.example.org', 'https://ops.example.org/?token=1']) {
      expect(() => loadConfig({ ...base, SVC_TEMPORAL_UI_URL: bad }), bad).toThrow(/SVC_TEMPORAL_UI_URL/);
    }
  });
});

describe('env files', () => {
  it('are written whole, for their owner only, and read back', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'svc-env-')), 'sub', 'x.env');
    writeEnvFile(file, { A: 'postgres://u:p@h:1/d', B: 'b=c' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readEnvFile(file)).toEqual({ A: 'postgres://u:p@h:1/d', B: 'b=c' });
  });
});
