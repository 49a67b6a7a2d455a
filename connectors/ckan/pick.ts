import { ConnectorError } from '../../domain/transfers.js';
import type { CkanDataset, CkanResource } from './action.js';

/*
 * Which resource of a dataset a selector means, and whether it changed since the last Run:
 * pure logic, apart from the Action API calls (action.ts).
 */

/** CKAN formats are free text ("CSV", "csv", ".csv", "text/csv"): compare them loosely. */
export function sameFormat(format: string | null | undefined, wanted: string): boolean {
  const norm = (f: string) =>
    f
      .trim()
      .toLowerCase()
      .replace(/^\./, '')
      .replace(/^(text|application)\//, '');
  return Boolean(format) && norm(format!) === norm(wanted);
}

/** When a resource last changed: its file (last_modified), else its metadata, else its creation. */
export const changedAt = (r: CkanResource) => r.last_modified ?? r.metadata_modified ?? r.created ?? '';

/** The resource of `dataset` named or numbered `resource`, or the newest of `format`. */
export function pickResource(dataset: CkanDataset, selector: { resource?: string; format?: string }): CkanResource {
  const resources = dataset.resources ?? [];
  const listing = resources.map((r) => `${r.name ?? r.id} (${r.format || 'no format'})`).join(', ') || 'none';
  if (selector.resource !== undefined) {
    const byId = resources.find((r) => r.id === selector.resource);
    if (byId) return byId;
    const named = resources.filter((r) => r.name === selector.resource);
    if (named.length === 1) return named[0]!;
    if (named.length > 1) {
      throw new ConnectorError(
        'invalid_response',
        `dataset ${dataset.name} has ${named.length} resources named "${selector.resource}": give the resource's id instead`,
        { dataset: dataset.name, ids: named.map((r) => r.id) },
        false,
      );
    }
    throw new ConnectorError(
      'not_found',
      `dataset ${dataset.name} has no resource with id or name "${selector.resource}"; it has: ${listing}`,
      { dataset: dataset.name },
      false,
    );
  }
  const candidates = resources.filter((r) => sameFormat(r.format, selector.format!));
  if (candidates.length === 0) {
    throw new ConnectorError(
      'not_found',
      `dataset ${dataset.name} has no ${selector.format} resource; it has: ${listing}`,
      { dataset: dataset.name, format: selector.format },
      false,
    );
  }
  // ISO 8601 timestamps of one portal compare as strings; later position breaks ties (newer uploads are appended).
  return candidates.reduce((newest, r) => (changedAt(r) >= changedAt(newest) ? r : newest));
}

/** What a ckan Source remembers between Runs. */
export interface CkanCursor {
  resource_id: string;
  last_modified: string | null;
  hash: string | null;
  /** The download's own validators, for portals that keep neither of the above. */
  etag: string | null;
  http_last_modified: string | null;
}

/**
 * True when the resource is the one read last time and its metadata says the file did not change
 * (same last_modified and hash, at least one of them known). Unknown: the download decides (ETag).
 */
export function unchangedByMetadata(previous: CkanCursor | null, resource: CkanResource): boolean {
  if (!previous || previous.resource_id !== resource.id) return false;
  const lastModified = resource.last_modified ?? null;
  const hash = resource.hash || null;
  if (lastModified === null && hash === null) return false;
  return previous.last_modified === lastModified && previous.hash === hash;
}
