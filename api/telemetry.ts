import type { FastifyInstance, FastifyRequest } from 'fastify';
import { metrics } from '../platform/metrics.js';
import { context, contextFromHeaders, failSpan, SpanKind, startSpanIn, trace, tracingOn, type Span } from '../platform/tracing.js';

/*
 * What the API tells operators about its requests: every answer in
 * geoflow_http_request_duration_seconds by method, route pattern and status (the pattern, never
 * the URL: ids and query strings would make a series per request), and, with traces on, a server
 * span per request whose context the route's handler runs in, so a Run Now's trace begins here
 * (platform/tracing.ts). Registered before the routes: the span reaches a handler through onRoute.
 */

/** A request no route matched (a 404 from the router): one series for all of them. */
const UNMATCHED = '(unmatched)';

const spans = new WeakMap<FastifyRequest, Span>();

export function registerTelemetry(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    metrics.requestDuration.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    const span = spans.get(request);
    if (span) {
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) failSpan(span, new Error(`answered ${reply.statusCode}`));
      span.end();
      spans.delete(request);
    }
    done();
  });
  if (!tracingOn()) return;

  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    // A caller's own trace (traceparent) is continued; otherwise the request starts one.
    const span = startSpanIn(contextFromHeaders(request.headers), `${request.method} ${route}`, SpanKind.SERVER, {
      'http.request.method': request.method,
      'http.route': route,
    });
    spans.set(request, span);
    done();
  });
  app.addHook('onError', (request, _reply, error, done) => {
    const span = spans.get(request);
    if (span) failSpan(span, error);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    spans.get(request)?.end();
    spans.delete(request);
    done();
  });
  // The handler runs in its request's span (hooks before it run where the body's stream was read).
  app.addHook('onRoute', (route) => {
    const handler = route.handler;
    route.handler = function (this: unknown, request, reply) {
      const span = spans.get(request);
      return span
        ? context.with(trace.setSpan(context.active(), span), () => handler.call(this as never, request, reply))
        : handler.call(this as never, request, reply);
    } as typeof handler;
  });
}
