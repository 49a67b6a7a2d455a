import {
  context,
  createContextKey,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { Logger } from 'pino';

/*
 * Traces (OpenTelemetry), off unless an OTLP endpoint is configured with the standard variables
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; docs/metrics.md,
 * "Traces"). Off, nothing here is loaded beyond the API package, no context manager exists (so no
 * AsyncLocalStorage is entered: every promise would pay for it) and every helper below is one
 * test of a variable before it calls through. On, the SDK is loaded, spans are batched to the
 * endpoint, and the PostgreSQL client counts the Destination's statements.
 *
 * The spans the service makes itself: an API request (api/telemetry.ts), a Run's step
 * (activities/runs/steps.ts), a delivery with its statement count (application/transfers.ts),
 * each child process (platform/spawner.ts: ogr2ogr, the sandbox) and a small load GDAL runs
 * in-process; Temporal's interceptors (@temporalio/interceptors-opentelemetry) make the
 * workflow and activity spans and carry the context between them.
 */

let tracer: Tracer | null = null;

/** What startTracing set up, for the worker's Temporal interceptors (workflow spans go through the same processor). */
export interface TracingHandles {
  spanProcessor: import('@opentelemetry/sdk-trace-base').SpanProcessor;
  resource: import('@opentelemetry/resources').Resource;
  shutdown(): Promise<void>;
}
let handles: TracingHandles | null = null;

export const tracingOn = (): boolean => tracer !== null;
export const tracingHandles = (): TracingHandles | null => handles;

type Protocol = 'http/protobuf' | 'http/json';

/** Whether the environment asks for traces, and over which OTLP protocol; throws on a setting the service cannot honour. */
export function tracingSettings(env: NodeJS.ProcessEnv = process.env): { protocol: Protocol } | null {
  if (env.OTEL_SDK_DISABLED === 'true') return null;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? 'otlp').split(',').map((e) => e.trim());
  if (exporters.includes('none')) return null;
  if (!env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT && !env.OTEL_EXPORTER_OTLP_ENDPOINT) return null;
  if (!exporters.includes('otlp')) throw new Error(`OTEL_TRACES_EXPORTER must be otlp or none here, got "${env.OTEL_TRACES_EXPORTER}"`);
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new Error(`the OTLP protocol must be http/protobuf or http/json (port 4318 of a collector), got "${protocol}"`);
  }
  return { protocol };
}

/**
 * Starts the SDK when the environment asks for traces (see tracingSettings), as the process
 * `serviceName` (OTEL_SERVICE_NAME wins). Once per process, before anything makes a span.
 */
export async function startTracing(serviceName: string, log: Pick<Logger, 'info' | 'warn'>): Promise<TracingHandles | null> {
  if (handles) return handles;
  const settings = tracingSettings();
  if (!settings) return null;
  const [{ BasicTracerProvider, BatchSpanProcessor }, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, resources] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
  ]);
  const { OTLPTraceExporter } =
    settings.protocol === 'http/json' ? await import('@opentelemetry/exporter-trace-otlp-http') : await import('@opentelemetry/exporter-trace-otlp-proto');
  // The exporter reads the endpoint, headers, timeout and compression from OTEL_EXPORTER_OTLP_*.
  const exporter = new OTLPTraceExporter();
  const resource = resources.Resource.default()
    .merge(new resources.Resource({ 'service.name': serviceName }))
    .merge(resources.envDetectorSync.detect());
  // Batches as OTEL_BSP_* say; the sampler is OTEL_TRACES_SAMPLER's (parent-based, always on by default).
  const spanProcessor = new BatchSpanProcessor(exporter);
  const provider = new BasicTracerProvider({ resource });
  provider.addSpanProcessor(spanProcessor);
  provider.register({ contextManager: new AsyncLocalStorageContextManager(), propagator: new W3CTraceContextPropagator() });
  tracer = trace.getTracer('geoflow');
  await countDestinationStatements(tracer);
  handles = {
    spanProcessor,
    resource,
    async shutdown() {
      await provider.shutdown().catch((error: unknown) => log.warn({ err: error }, 'could not send the last spans'));
    },
  };
  log.info({ protocol: settings.protocol, service: resource.attributes['service.name'] }, 'traces are sent over OTLP');
  return handles;
}

/** Options of withSpan. */
export interface SpanOptions {
  kind?: SpanKind;
  /** Count the PostgreSQL statements made inside (a delivery): set as geoflow.statements at the end. */
  countStatements?: boolean;
}

const STATEMENTS = createContextKey('geoflow statements of a delivery');
const INTERNAL = createContextKey("geoflow: the service's own database work");

/**
 * Runs `work` inside a span named `name` (a child of the active one), ended when it settles, with
 * the error recorded when it throws. With traces off, `work` runs as it is (span null).
 */
export async function withSpan<T>(name: string, attributes: Attributes, work: (span: Span | null) => Promise<T>, options: SpanOptions = {}): Promise<T> {
  if (!tracer) return work(null);
  const counter = options.countStatements ? { n: 0 } : null;
  const parent = counter ? context.active().setValue(STATEMENTS, counter).deleteValue(INTERNAL) : context.active();
  return tracer.startActiveSpan(name, { attributes, kind: options.kind ?? SpanKind.INTERNAL }, parent, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      if (counter) span.setAttribute('geoflow.statements', counter.n);
      span.end();
    }
  });
}

/** Marks a span as failed by `error` (its message, never a value that could hold a secret). */
export function failSpan(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  if (error instanceof Error) span.recordException({ name: error.name, message: error.message });
}

/** Starts a span that the caller ends (a child process, whose end is an event); null with traces off. */
export function startSpan(name: string, attributes: Attributes, kind: SpanKind = SpanKind.INTERNAL): Span | null {
  return tracer ? tracer.startSpan(name, { attributes, kind }) : null;
}

/** Starts a span under `parent` (a context extracted from a request), for a caller that checked tracingOn(). */
export function startSpanIn(parent: Context, name: string, kind: SpanKind, attributes: Attributes): Span {
  if (!tracer) throw new Error('traces are off');
  return tracer.startSpan(name, { attributes, kind }, parent);
}

/**
 * The service's own database work (the event store: a step's progress note during a delivery,
 * for one): not counted among the Destination's statements. With traces off, `work` runs as it is.
 */
export function internalWork<T>(work: () => T): T {
  return tracer ? context.with(context.active().setValue(INTERNAL, true), work) : work();
}

/** The active span's context as a W3C traceparent, for a process or a message that carries it on; undefined with traces off. */
export function currentTraceparent(): string | undefined {
  if (!tracer) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** A span's context as a W3C traceparent. */
export function traceparentOf(span: Span): string {
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), carrier);
  return carrier.traceparent ?? '';
}

/** The context a request's W3C headers carry (traceparent, tracestate), for a server span. */
export function contextFromHeaders(headers: Record<string, unknown>) {
  return propagation.extract(context.active(), headers);
}

export { context, SpanKind, trace, type Span };

/**
 * Statements a delivery sends through `pg` (the PostGIS Destination's checks, swap and ledger):
 * each one a client span under the delivery, and counted on it. Only inside a span that asked to
 * count (withSpan countStatements) and not in the service's own work (internalWork): the read
 * models, the event store and the projections make none of these spans. Installed only with
 * traces on, so it costs nothing otherwise. Statements GDAL sends from an ogr2ogr child are that
 * child's span; other database clients (mysql2, tedious, oracledb) are not counted.
 */
async function countDestinationStatements(t: Tracer): Promise<void> {
  const pg = (await import('pg')).default;
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const active = context.active();
    const counter = active.getValue(STATEMENTS) as { n: number } | undefined;
    if (!counter || active.getValue(INTERNAL)) return original.apply(this, args);
    counter.n += 1;
    const first = args[0];
    const text = typeof first === 'string' ? first : typeof (first as { text?: unknown })?.text === 'string' ? (first as { text: string }).text : '';
    // The statement's verb only: its text may hold values of the user's data.
    const operation = /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
    const span = t.startSpan(`pg ${operation}`, { kind: SpanKind.CLIENT, attributes: { 'db.system': 'postgresql', 'db.operation': operation } }, active);
    let result: unknown;
    try {
      result = original.apply(this, args);
    } catch (error) {
      failSpan(span, error);
      span.end();
      throw error;
    }
    const settled = result as { then?: unknown; on?: unknown; once?: unknown };
    if (typeof settled?.then === 'function') {
      (result as Promise<unknown>).then(
        () => span.end(),
        (error: unknown) => {
          failSpan(span, error);
          span.end();
        },
      );
    } else if (typeof settled?.once === 'function') {
      // A submittable (a cursor, a COPY stream): done when it ends (no 'error' listener: one
      // would change what an unhandled error does).
      const emitter = result as NodeJS.EventEmitter;
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        span.end();
      };
      for (const event of ['end', 'finish', 'close']) emitter.once(event, end);
    } else span.end();
    return result;
  };
}
