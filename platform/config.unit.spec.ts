import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCAL_DATABASE_FILE, loadConfig } from './config.js';
import { parseStorageUrl } from './s3-file-store.js';
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

describe('loadConfig: the basemap tile service', () => {
  const base = { SVC_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-config-')), SVC_DATABASE_URL: 'postgres://gis@db/geo' };

  it('is absent unless SVC_BASEMAP_URL is set (the app then draws its own Natural Earth basemap)', () => {
    expect(loadConfig(base).basemap).toBeNull();
  });

  it('keeps the template and its attribution, and names the origin the page may load images from', () => {
    expect(
      loadConfig({ ...base, SVC_BASEMAP_URL: 'http://tiles.internal:8081/osm/{z}/{x}/{y}.png', SVC_BASEMAP_ATTRIBUTION: '© OpenStreetMap' }).basemap,
    ).toEqual({
      url: 'http://tiles.internal:8081/osm/{z}/{x}/{y}.png',
      attribution: '© OpenStreetMap',
      origin: 'http://tiles.internal:8081',
    });
    expect(loadConfig({ ...base, SVC_BASEMAP_URL: 'https://{s}.tile.example.org/{z}/{x}/{-y}{r}.png' }).basemap).toMatchObject({
      attribution: '',
      origin: 'https://*.tile.example.org',
    });
  });

  it('refuses what is not an http(s) tile template', () => {
    for (const bad of [
      'https://tiles.example.org/{z}/{x}.png',
      'ftp://tiles.example.org/{z}/{x}/{y}.png',
      'javascript:alert(1)//{z}/{x}/{y}',
      'https://user:pw@tiles.example.org/{z}/{x}/{y}.png',
      'https://tiles.{s}.example.org/{z}/{x}/{y}.png',
    ]) {
      expect(() => loadConfig({ ...base, SVC_BASEMAP_URL: bad }), bad).toThrow(/SVC_BASEMAP_URL/);
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

describe('loadConfig: file storage', () => {
  const base = { SVC_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-config-')), SVC_DATABASE_URL: 'postgres://gis@db/geo' };
  const key = 'ab'.repeat(32);

  it('is the data folder unless SVC_STORAGE_URL is set', () => {
    expect(loadConfig(base).storage).toBeNull();
  });

  it('takes the bucket, endpoint, path style, cache size and keys from the environment', () => {
    const storage = loadConfig({
      ...base,
      SVC_SECRET_KEY: key,
      SVC_STORAGE_URL: 's3://team-files/geoflow',
      AWS_ENDPOINT_URL_S3: 'http://minio:9000',
      SVC_STORAGE_PATH_STYLE: 'true',
      SVC_STORAGE_CACHE_MB: '64',
      AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'not-a-secret',
    }).storage;
    expect(storage).toEqual({
      url: 's3://team-files/geoflow',
      endpoint: 'http://minio:9000',
      region: 'us-east-1',
      forcePathStyle: true,
      cacheBytes: 64 * 1024 * 1024,
      credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'not-a-secret' },
    });
    expect(
      loadConfig({ ...base, SVC_SECRET_KEY: key, SVC_STORAGE_URL: 's3://b1/', SVC_STORAGE_ENDPOINT: 'http://ceph:7480', AWS_ENDPOINT_URL_S3: 'http://x' })
        .storage,
    ).toMatchObject({ endpoint: 'http://ceph:7480', forcePathStyle: false, credentials: undefined });
  });

  it("requires SVC_SECRET_KEY with shared storage (a key file in one host's data folder would not decrypt another's secrets)", () => {
    expect(() => loadConfig({ ...base, SVC_STORAGE_URL: 's3://team-files/geoflow' })).toThrow(/SVC_SECRET_KEY must be set when SVC_STORAGE_URL is/);
  });

  it('refuses a storage URL that is not s3://bucket/prefix and a path style that is not a boolean', () => {
    expect(() => loadConfig({ ...base, SVC_SECRET_KEY: key, SVC_STORAGE_URL: '/mnt/shared' })).toThrow(/SVC_STORAGE_URL must look like/);
    expect(() => loadConfig({ ...base, SVC_SECRET_KEY: key, SVC_STORAGE_URL: 's3://b1', SVC_STORAGE_PATH_STYLE: 'yes' })).toThrow(/SVC_STORAGE_PATH_STYLE/);
  });
});

describe('parseStorageUrl', () => {
  it('splits the bucket from a key prefix that ends in a slash', () => {
    expect(parseStorageUrl('s3://team-files')).toEqual({ bucket: 'team-files', prefix: '' });
    expect(parseStorageUrl('s3://team-files/a/b/')).toEqual({ bucket: 'team-files', prefix: 'a/b/' });
    expect(() => parseStorageUrl('s3://Team_Files/x')).toThrow(/s3:\/\/bucket\/prefix/);
  });
});

describe('loadConfig: the metrics listeners', () => {
  const base = { SVC_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-config-')), SVC_DATABASE_URL: 'postgres://gis@db/geo' };

  it('serves none unless a port is set, on 127.0.0.1 without a token by default', () => {
    expect(loadConfig(base).metrics).toEqual({ host: '127.0.0.1', apiPort: null, workerPort: null, token: null, otlpEndpoint: null });
    expect(loadConfig({ ...base, SVC_METRICS_PORT: '9464', SVC_METRICS_HOST: '0.0.0.0', SVC_METRICS_TOKEN: 's3cret' }).metrics).toMatchObject({
      host: '0.0.0.0',
      apiPort: 9464,
      token: 's3cret',
    });
  });

  it('refuses a port that is not one', () => {
    expect(() => loadConfig({ ...base, SVC_METRICS_PORT: '80a' })).toThrow('SVC_METRICS_PORT must be a TCP port (1-65535), got "80a"');
    expect(() => loadConfig({ ...base, SVC_WORKER_METRICS_PORT: '70000' })).toThrow('SVC_WORKER_METRICS_PORT must be a TCP port');
  });
});

describe('loadConfig: Run retention', () => {
  const base = { SVC_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-config-')), SVC_DATABASE_URL: 'postgres://gis@db/geo' };

  it('keeps finished Runs 90 days unless told; 0 keeps them forever', () => {
    expect(loadConfig(base).runRetentionDays).toBe(90);
    expect(loadConfig({ ...base, SVC_RUN_RETENTION_DAYS: '7' }).runRetentionDays).toBe(7);
    expect(loadConfig({ ...base, SVC_RUN_RETENTION_DAYS: '0' }).runRetentionDays).toBe(0);
  });

  it('refuses what is not a whole number of days', () => {
    expect(() => loadConfig({ ...base, SVC_RUN_RETENTION_DAYS: '1.5' })).toThrow(/SVC_RUN_RETENTION_DAYS must be a whole number of days/);
    expect(() => loadConfig({ ...base, SVC_RUN_RETENTION_DAYS: '-1' })).toThrow(/SVC_RUN_RETENTION_DAYS/);
  });
});
