import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnProcess, type Spawned } from '../../platform/spawner.js';
import { internalWork, startTracing, tracingSettings, withSpan, type TracingHandles } from '../../platform/tracing.js';
import { adminUrl, skipWithoutDatabase } from '../support/database.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver.js';

/*
 * The tracing helpers in one process, over OTLP/HTTP JSON (the e2e suite covers protobuf): a
 * child process's span and the traceparent it is given, and the statements a delivery counts
 * (the service's own database work left out).
 */

const quiet = { info: () => undefined, warn: () => undefined };

describe('tracingSettings', () => {
  it('is off without an endpoint, or when the SDK or the exporter is turned off', () => {
    expect(tracingSettings({})).toBeNull();
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toEqual({ protocol: 'http/protobuf' });
  });

  it('refuses what it cannot honour, saying what it can', () => {
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      'the OTLP protocol must be http/protobuf or http/json (port 4318 of a collector), got "grpc"',
    );
    expect(() => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(
      'OTEL_TRACES_EXPORTER must be otlp or none here',
    );
  });
});

describe('traces over OTLP/HTTP JSON', () => {
  let otlp: OtlpReceiver;
  let handles: TracingHandles;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlp.endpoint;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
    const started = await startTracing('geoflow-test', quiet);
    if (!started) throw new Error('tracing did not start');
    handles = started;
  });
  afterAll(async () => {
    await handles?.shutdown();
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_PROTOCOL;
    await otlp?.close();
  });

  const output = (child: Spawned) =>
    new Promise<{ out: string; code: number | null }>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('close', (code: number | null) => resolve({ out, code }));
    });

  it("gives a child process a span under the caller's, and the traceparent in its environment", async () => {
    let given = '';
    await withSpan('parent work', { 'geoflow.test': true }, async () => {
      const child = await spawnProcess('sh', ['-c', 'echo "$TRACEPARENT"; exit 3'], {
        env: { PATH: process.env.PATH ?? '' },
        stdout: 'pipe',
        stderr: 'ignore',
      });
      const { out, code } = await output(child);
      expect(code).toBe(3);
      given = out.trim();
    });
    await handles.spanProcessor.forceFlush();
    expect(otlp.contentTypes.length).toBeGreaterThan(0);
    expect(otlp.contentTypes.every((t) => t.startsWith('application/json'))).toBe(true);
    const parent = otlp.spans.find((s) => s.name === 'parent work')!;
    const child = otlp.spans.find((s) => s.name === 'process sh')!;
    expect(parent).toMatchObject({ service: 'geoflow-test', attributes: { 'geoflow.test': true } });
    // A non-zero exit marks the span as failed (status 2: error).
    expect(child).toMatchObject({ traceId: parent.traceId, parentSpanId: parent.spanId, status: 2, attributes: { 'process.exit.code': 3 } });
    // W3C traceparent: version-traceid-spanid-flags, naming the child's own span.
    expect(given).toBe(`00-${child.traceId}-${child.spanId}-01`);
  });

  it.skipIf(skipWithoutDatabase)("counts a delivery's statements, each a span with its verb, and not the service's own", async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query('SELECT 0'); // outside any delivery: no span
      await withSpan(
        'deliver test',
        {},
        async () => {
          await client.query("select 'a value that stays out of traces'");
          await client.query({ text: 'CREATE TEMP TABLE t (v int)' });
          await internalWork(() => client.query('SELECT 2')); // the service's own: not counted
          await expect(client.query('INSERT INTO missing VALUES (1)')).rejects.toThrow(/missing/);
        },
        { countStatements: true },
      );
    } finally {
      await client.end();
    }
    await handles.spanProcessor.forceFlush();
    const delivery = otlp.spans.find((s) => s.name === 'deliver test')!;
    expect(delivery.attributes['geoflow.statements']).toBe(3);
    const statements = otlp.spans.filter((s) => s.name.startsWith('pg '));
    expect(statements.map((s) => [s.name, s.parentSpanId, s.status])).toEqual([
      ['pg SELECT', delivery.spanId, 0],
      ['pg CREATE', delivery.spanId, 0],
      ['pg INSERT', delivery.spanId, 2],
    ]);
    expect(JSON.stringify(otlp.spans)).not.toContain('a value that stays out of traces');
  });
});
