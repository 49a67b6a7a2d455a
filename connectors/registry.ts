import { z } from 'zod';
import { azureblob } from './azureblob/index.js';
import { bigquery } from './bigquery/index.js';
import { ckan } from './ckan/index.js';
import { featureserver } from './featureserver/index.js';
import { gdrive } from './gdrive/index.js';
import { geonode } from './geonode/index.js';
import { geoserver } from './geoserver/index.js';
import { http } from './http/index.js';
import { hub } from './hub/index.js';
import { merginmaps } from './merginmaps/index.js';
import { mysql } from './mysql/index.js';
import { ogcfeatures } from './ogcfeatures/index.js';
import { oracle } from './oracle/index.js';
import { postgis } from './postgis/index.js';
import { qfieldcloud } from './qfieldcloud/index.js';
import { s3 } from './s3/index.js';
import { sftp } from './sftp/index.js';
import { snowflake } from './snowflake/index.js';
import { sqlserver } from './sqlserver/index.js';
import { stac } from './stac/index.js';
import { url } from './url/index.js';
import { webhook } from './webhook/index.js';
import { ConnectorError } from '../domain/transfers.js';
import type { ConnectionKind, ConnectorDefinition } from './types.js';

/**
 * Every connection type, once. Routes, workflows, the OpenAPI document, the docs and the browser
 * read the catalogue from here; a new type is a folder plus one line below.
 */
export const connectors: readonly ConnectorDefinition[] = [
  url,
  http,
  postgis,
  mysql,
  s3,
  azureblob,
  sftp,
  webhook,
  ogcfeatures,
  stac,
  featureserver,
  sqlserver,
  oracle,
  bigquery,
  snowflake,
  gdrive,
  geoserver,
  geonode,
  ckan,
  hub,
  qfieldcloud,
  merginmaps,
];

const byType = new Map(connectors.map((c) => [c.type, c]));

/** The spec's two lists: which types a Source and a Destination may have. */
export const sourceTypes = connectors.filter((c) => c.source).map((c) => c.type);
export const destinationTypes = connectors.filter((c) => c.destination).map((c) => c.type);

export const typesOf = (kind: ConnectionKind) => (kind === 'source' ? sourceTypes : destinationTypes);

/** The connector of a type, for a kind; undefined when the type is unknown or not of that kind. */
export function connectorFor(kind: ConnectionKind, type: string): ConnectorDefinition | undefined {
  const c = byType.get(type);
  return c && (kind === 'source' ? c.source : c.destination) ? c : undefined;
}

export const connectorByType = (type: string) => byType.get(type);

/** Closes what every connector keeps open between transfers (idle database connections): a worker shutting down. */
export async function closeIdleConnections(): Promise<void> {
  await Promise.all(connectors.map((c) => c.closeIdle?.()));
}

/**
 * The one check for a type that is accepted and validated but cannot connect yet
 * (`implemented: false`): testing, browsing, extracting and delivering through it are refused
 * here, with a 422 naming the type, before anything is decrypted or contacted. Every type in the
 * list above is implemented today; the flag stays so that a type can land in two steps (its
 * schema and forms first, then its protocol), as eleven of them did (docs/decisions.md).
 */
export function requireImplemented(connector: ConnectorDefinition, use: ConnectionKind | 'test' | 'projects'): void {
  if (connector.implemented) return;
  const what = { test: 'connection tests', projects: 'browsing its projects', source: 'reading from it', destination: 'delivering to it' }[use];
  throw new ConnectorError(
    'not_implemented',
    `The ${connector.type} connector is accepted and validated, but ${what} is not implemented yet`,
    { type: connector.type },
    false,
  );
}

/** The configuration schema as the API accepts it: a secret may also be null (clear it) or left out (keep it). */
export function configurationBodySchema(connector: ConnectorDefinition): z.ZodObject {
  const relaxed = Object.fromEntries(connector.secrets.map((field) => [field, (connector.configuration.shape[field] as z.ZodType).nullable().optional()]));
  return connector.configuration.extend(relaxed);
}

const json = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;

/** The public catalogue (GET /api/v1/connectors): what clients and forms build from. */
export function publicConnectorCatalog() {
  return connectors.map((c) => ({
    type: c.type,
    label: c.label,
    description: c.description,
    kinds: [...(c.source ? ['source'] : []), ...(c.destination ? ['destination'] : [])] as ConnectionKind[],
    implemented: c.implemented,
    verified_against: c.verifiedAgainst,
    configuration: json(c.configuration),
    secrets: [...c.secrets],
    example: c.example,
    capabilities: {
      test: c.implemented,
      discover: Boolean(c.discover),
      projects: c.implemented && Boolean(c.projects),
      import: c.implemented && Boolean(c.source?.importable),
      deliver: c.implemented && Boolean(c.destination?.deliverable),
      incremental: Boolean(c.source?.incremental),
    },
    source: c.source
      ? {
          resource: json(c.source.resource),
          resource_required: c.source.resourceRequired,
          resource_shorthand: c.source.shorthand ?? null,
          importable: c.source.importable,
          incremental: c.source.incremental,
          incremental_note: c.source.incrementalNote ?? null,
        }
      : null,
    destination: c.destination ? { target: json(c.destination.target), deliverable: c.destination.deliverable } : null,
  }));
}
