import type { InternalEndpoint } from '../connectors/shared/policy/egress.js';
import type { Config } from '../platform/config.js';

/** host:port of a URL, or null when it does not parse (the policy then simply has one rule fewer). */
function endpointOf(what: string, url: string | undefined, defaultPort: number): InternalEndpoint | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    if (!u.hostname) return null;
    return { what, host: u.hostname, port: Number(u.port) || defaultPort };
  } catch {
    return null;
  }
}

/**
 * The service's own endpoints, which the outbound policy refuses by default: a connection aimed
 * at them could read or change the service's own state (its database, Temporal, its file storage)
 * or reach the API as a second, unauthenticated-looking client. The Temporal web UI the service links Runs to
 * (SVC_TEMPORAL_UI_URL; `npm start` serves one) is among them: it answers any GET about every
 * user's Runs, their inputs and histories, with no credentials; so is Temporal's HTTP API.
 */
export function internalEndpoints(config: Config): InternalEndpoint[] {
  const temporal = endpointOf('Temporal', `tcp://${config.temporalAddress}`, 7233);
  return [
    endpointOf('PostgreSQL', config.databaseUrl, 5432),
    endpointOf('event store', config.eventStoreUrl, 2113),
    temporal,
    // Its HTTP API (7243 unless SVC_TEMPORAL_HTTP_PORT says otherwise; npm start pins the dev
    // server's) lists, starts, signals and terminates workflows with no credentials.
    temporal && { what: 'Temporal HTTP API', host: temporal.host, port: config.temporalHttpPort },
    // The dev server's other listeners (metrics; history, matching and worker services), as npm start lists them.
    ...config.temporalOtherPorts.map((port) => temporal && { what: 'Temporal (another of its listeners)', host: temporal.host, port }),
    { what: 'API', host: config.host, port: config.port },
    // The metrics listeners say which Jobs run and fail, and how much every part stores.
    config.metrics.apiPort && { what: 'metrics', host: config.metrics.host, port: config.metrics.apiPort },
    config.metrics.workerPort && { what: 'metrics', host: config.metrics.host, port: config.metrics.workerPort },
    // The trace collector: a connection aimed at it could send it made-up spans.
    endpointOf('OTLP collector', config.metrics.otlpEndpoint ?? undefined, config.metrics.otlpEndpoint?.startsWith('https:') ? 443 : 80),
    endpointOf('Temporal UI', config.temporalUiUrl ?? undefined, config.temporalUiUrl?.startsWith('https:') ? 443 : 80),
    // The bucket of Workspace and Run files (an S3 connection aimed there could read other users' files).
    endpointOf('file storage', config.storage?.endpoint, config.storage?.endpoint?.startsWith('http:') ? 80 : 443),
  ].filter((e): e is InternalEndpoint => !!e);
}
