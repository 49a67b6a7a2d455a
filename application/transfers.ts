import type { Logger } from 'pino';
import { DomainError } from '../domain/errors.js';
import type { ConnectorError } from '../domain/transfers.js';
import { requireImplemented } from '../connectors/registry.js';
import { publicUrl } from '../connectors/shared/http/fetch.js';
import type { ConnectorContext, ConnectorDefinition, DeliverInput, ExtractResult, SyncState } from '../connectors/types.js';
import { fillTemplate, placeholdersIn, type ParameterValues } from '../domain/jobs/parameters.js';
import type { Delivery } from '../temporal/workspaces.js';
import { openConnection, parseSelector } from './connections.js';
import { transferErrorCode } from '../temporal/failures.js';
import { splitReadOptions } from '../geo/datasets/read-options.js';
import { withSpan } from '../platform/tracing.js';
import type { Services } from './services.js';
import type { StepProgress } from '../domain/runs/facts.js';

/*
 * Moving data through a saved connection: extract from a Source, deliver to a Destination. The
 * API (Workspace import) and the worker's activities (Workspace delivery, the steps of a Run) call
 * these; the connection is opened and decrypted here, in the process that talks to the remote
 * system, and nothing secret leaves: results and ConnectorErrors carry public metadata only.
 */

export interface TransferContext {
  log: Logger;
  workDir: string;
  maxBytes: number;
  signal?: AbortSignal;
  progress?: ConnectorContext['progress'];
}

/** A connector's progress report in the words of a Run's step and of GET /progress (bytes_written of bytes_total). */
export function stepProgressOf(info: Parameters<NonNullable<ConnectorContext['progress']>>[0]): StepProgress {
  return {
    ...(info.bytes === undefined ? {} : { bytes_written: info.bytes }),
    ...(info.total === undefined ? {} : { bytes_total: info.total }),
    ...(info.features === undefined ? {} : { features_written: info.features }),
  };
}

/**
 * A delivery's progress with the file's size as its total when the connector counts the bytes it
 * sent without knowing what they add up to: so the Run page and GET /progress show a percentage.
 */
export function withUploadTotal(p: StepProgress, size: number | undefined): StepProgress {
  return p.bytes_written !== undefined && p.bytes_total === undefined && size ? { ...p, bytes_total: size } : p;
}

function context(ctx: TransferContext): ConnectorContext {
  return { ...ctx, signal: ctx.signal ?? new AbortController().signal };
}

export interface ExtractRequest {
  ownerId: string;
  sourceId: string;
  /** Already checked by the connector's resource schema (application/connections.ts parseSelector), or a Job's template of one. */
  resource: Record<string, unknown>;
  /** A Run's parameter values: a template is filled with them and checked by the connector. */
  parameters?: ParameterValues;
  sync?: SyncState | null;
}

/** A stored selector or target as a call uses it: a template filled with the Run's values and checked again; anything else as stored. */
function selectorFor(connector: ConnectorDefinition, kind: 'source' | 'destination', value: Record<string, unknown>, parameters: ParameterValues | undefined) {
  if (!parameters || placeholdersIn(value).length === 0) return value;
  return parseSelector(connector, kind, fillTemplate(value, parameters), kind === 'source' ? 'source_resource' : 'destination_target');
}

export async function extractFromSource(
  services: Pick<Services, 'store' | 'cipher'>,
  request: ExtractRequest,
  ctx: TransferContext,
): Promise<ExtractResult & { type: string; location: Record<string, unknown> }> {
  const source = await openConnection(services, 'source', request.sourceId, request.ownerId);
  requireImplemented(source.connector, 'source');
  // The reading options (source_crs, x_column, …) are for opening the file, not for the connector.
  const { rest: resource } = splitReadOptions(selectorFor(source.connector, 'source', request.resource, request.parameters), 'source_resource');
  const result = await source.connector.source!.extract(source.config, resource, context(ctx), { sync: request.sync ?? null });
  return { ...result, type: source.type, location: sourceLocation(source.connector.secrets, source.config, resource) };
}

/**
 * What a Run's log names as the place read: the selector (table, object key, layer …), or for a
 * Source whose configuration says everything (url, http) its URL without the query. Public
 * fields only: the secrets of the type are never looked at.
 */
export function sourceLocation(secrets: readonly string[], config: Record<string, unknown>, resource: Record<string, unknown>): Record<string, unknown> {
  if (Object.keys(resource).length) return resource;
  return typeof config.url === 'string' && !secrets.includes('url') ? { url: publicUrl(config.url) } : {};
}

/**
 * The on-change check: whether the Source's data differs from what the cursor describes, asked
 * with its connector's cheap check (never reading the data). The resource is filled and checked
 * by the caller.
 */
export async function sourceChanged(services: Pick<Services, 'store' | 'cipher'>, request: ExtractRequest, ctx: TransferContext): Promise<boolean> {
  const source = await openConnection(services, 'source', request.sourceId, request.ownerId);
  requireImplemented(source.connector, 'source');
  const check = source.connector.source!.changeCheck;
  if (!check) throw new DomainError('not_implemented', `A ${source.type} Source cannot tell whether it changed without reading it`);
  return check.changed(source.config, selectorFor(source.connector, 'source', request.resource, request.parameters), context(ctx), request.sync ?? null);
}

export interface DeliverRequest {
  ownerId: string;
  destinationId: string;
  target: Record<string, unknown>;
  /** As for ExtractRequest. */
  parameters?: ParameterValues;
  input: DeliverInput;
}

export type { Delivery };

export async function deliverToDestination(services: Pick<Services, 'store' | 'cipher'>, request: DeliverRequest, ctx: TransferContext): Promise<Delivery> {
  const destination = await openConnection(services, 'destination', request.destinationId, request.ownerId);
  requireImplemented(destination.connector, 'destination');
  const started = Date.now();
  const target = selectorFor(destination.connector, 'destination', request.target, request.parameters);
  // One span per delivery, with the statements it sent (platform/tracing.ts); nothing with traces off.
  const result = await withSpan(
    `deliver ${destination.type}`,
    { 'geoflow.destination.type': destination.type, 'geoflow.delivery_id': request.input.deliveryId },
    async (span) => {
      const delivered = await destination.connector.destination!.deliver(destination.config, target, request.input, context(ctx));
      if (delivered.rows_written !== undefined) span?.setAttribute('geoflow.rows_written', delivered.rows_written);
      return delivered;
    },
    { countStatements: true },
  );
  return { ...result, destination_id: destination.id, destination_type: destination.type, duration_ms: Date.now() - started };
}

/** The public error of a connector failure, for an operation (import: source_failed; deliver: delivery_failed). */
export function transferError(error: ConnectorError, operation: 'import' | 'deliver'): DomainError {
  const details = { ...error.details, reason: error.reason, retryable: error.retryable };
  const code = transferErrorCode(error.reason, operation);
  if (code === 'not_implemented') return new DomainError(code, error.message, error.details);
  if (code === 'upload_too_large') return new DomainError(code, error.message, { ...details, max_bytes: error.details.max_bytes });
  return new DomainError(code, error.message, details);
}
