import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../platform/config.js';
import { internalEndpoints } from './internal-endpoints.js';

describe('internalEndpoints', () => {
  const base = {
    SVC_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-internal-')),
    SVC_DATABASE_URL: 'postgres://gis@db:5433/geo',
    SVC_SECRET_KEY: 'ab'.repeat(32),
  };

  it("names the file storage endpoint among the service's own once SVC_STORAGE_URL has one", () => {
    expect(internalEndpoints(loadConfig(base)).map((e) => e.what)).not.toContain('file storage');
    const endpoints = internalEndpoints(loadConfig({ ...base, SVC_STORAGE_URL: 's3://files', SVC_STORAGE_ENDPOINT: 'http://minio:9000' }));
    expect(endpoints).toContainEqual({ what: 'file storage', host: 'minio', port: 9000 });
    expect(internalEndpoints(loadConfig({ ...base, SVC_STORAGE_URL: 's3://files', AWS_ENDPOINT_URL_S3: 'https://rgw.example.org' }))).toContainEqual({
      what: 'file storage',
      host: 'rgw.example.org',
      port: 443,
    });
  });

  it('names the metrics listeners and the trace collector once they are configured', () => {
    expect(internalEndpoints(loadConfig(base)).map((e) => e.what)).not.toContain('metrics');
    const endpoints = internalEndpoints(
      loadConfig({ ...base, SVC_METRICS_PORT: '9464', SVC_WORKER_METRICS_PORT: '9465', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }),
    );
    expect(endpoints).toContainEqual({ what: 'metrics', host: '127.0.0.1', port: 9464 });
    expect(endpoints).toContainEqual({ what: 'metrics', host: '127.0.0.1', port: 9465 });
    expect(endpoints).toContainEqual({ what: 'OTLP collector', host: 'collector', port: 4318 });
  });
});
