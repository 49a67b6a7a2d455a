import { z } from 'zod';
import { azureblobDeclaration } from './azureblob/declaration.js';
import { bigqueryDeclaration } from './bigquery/declaration.js';
import { ckanDeclaration } from './ckan/declaration.js';
import { featureserverDeclaration } from './featureserver/declaration.js';
import { gdriveDeclaration } from './gdrive/declaration.js';
import { geonodeDeclaration } from './geonode/declaration.js';
import { geoserverDeclaration } from './geoserver/declaration.js';
import { httpDeclaration } from './http/declaration.js';
import { hubDeclaration } from './hub/declaration.js';
import { merginmapsDeclaration } from './merginmaps/declaration.js';
import { mysqlDeclaration } from './mysql/declaration.js';
import { ogcfeaturesDeclaration } from './ogcfeatures/declaration.js';
import { oracleDeclaration } from './oracle/declaration.js';
import { postgisDeclaration } from './postgis/declaration.js';
import { qfieldcloudDeclaration } from './qfieldcloud/declaration.js';
import { s3Declaration } from './s3/declaration.js';
import { sftpDeclaration } from './sftp/declaration.js';
import { snowflakeDeclaration } from './snowflake/declaration.js';
import { sqlserverDeclaration } from './sqlserver/declaration.js';
import { stacDeclaration } from './stac/declaration.js';
import { urlDeclaration } from './url/declaration.js';
import { webhookDeclaration } from './webhook/declaration.js';
import { ConnectorError } from '../domain/transfers.js';
import { lazyConnector } from './lazy.js';
import type { ConnectionKind, ConnectorDefinition } from './types.js';

export { loadConnector, loadedTypes } from './lazy.js';

/**
 * Every connection type, once. Routes, workflows, the OpenAPI document, the docs and the browser
 * read the catalogue from here; a new type is a folder plus one line below. Each line pairs the
 * type's declaration, imported now, with its behaviour module, imported (with its SDK) the first
 * time the type tests, browses, reads or writes (connectors/lazy.ts).
 */
export const connectors: readonly ConnectorDefinition[] = [
  lazyConnector(urlDeclaration, () => import('./url/index.js').then((m) => m.url)),
  lazyConnector(httpDeclaration, () => import('./http/index.js').then((m) => m.http)),
  lazyConnector(postgisDeclaration, () => import('./postgis/index.js').then((m) => m.postgis)),
  lazyConnector(mysqlDeclaration, () => import('./mysql/index.js').then((m) => m.mysql)),
  lazyConnector(s3Declaration, () => import('./s3/index.js').then((m) => m.s3)),
  lazyConnector(azureblobDeclaration, () => import('./azureblob/index.js').then((m) => m.azureblob)),
  lazyConnector(sftpDeclaration, () => import('./sftp/index.js').then((m) => m.sftp)),
  lazyConnector(webhookDeclaration, () => import('./webhook/index.js').then((m) => m.webhook)),
  lazyConnector(ogcfeaturesDeclaration, () => import('./ogcfeatures/index.js').then((m) => m.ogcfeatures)),
  lazyConnector(stacDeclaration, () => import('./stac/index.js').then((m) => m.stac)),
  lazyConnector(featureserverDeclaration, () => import('./featureserver/index.js').then((m) => m.featureserver)),
  lazyConnector(sqlserverDeclaration, () => import('./sqlserver/index.js').then((m) => m.sqlserver)),
  lazyConnector(oracleDeclaration, () => import('./oracle/index.js').then((m) => m.oracle)),
  lazyConnector(bigqueryDeclaration, () => import('./bigquery/index.js').then((m) => m.bigquery)),
  lazyConnector(snowflakeDeclaration, () => import('./snowflake/index.js').then((m) => m.snowflake)),
  lazyConnector(gdriveDeclaration, () => import('./gdrive/index.js').then((m) => m.gdrive)),
  lazyConnector(geoserverDeclaration, () => import('./geoserver/index.js').then((m) => m.geoserver)),
  lazyConnector(geonodeDeclaration, () => import('./geonode/index.js').then((m) => m.geonode)),
  lazyConnector(ckanDeclaration, () => import('./ckan/index.js').then((m) => m.ckan)),
  lazyConnector(hubDeclaration, () => import('./hub/index.js').then((m) => m.hub)),
  lazyConnector(qfieldcloudDeclaration, () => import('./qfieldcloud/index.js').then((m) => m.qfieldcloud)),
  lazyConnector(merginmapsDeclaration, () => import('./merginmaps/index.js').then((m) => m.merginmaps)),
];

const byType = new Map(connectors.map((c) => [c.type, c]));

/** The spec's two lists: which types a Source and a Destination may have. */
export const sourceTypes = connectors.filter((c) => c.source).map((c) => c.type);
export const destinationTypes = connectors.filter((c) => c.destination).map((c) => c.type);

/** Source types whose connector has a change check (on-change triggers). */
export const typesWithChangeCheck = () => connectors.filter((c) => c.source?.changeCheck).map((c) => c.type);
export const typesOf = (kind: ConnectionKind) => (kind === 'source' ? sourceTypes : destinationTypes);

/** The connector of a type, for a kind; undefined when the type is unknown or not of that kind. */
export function connectorFor(kind: ConnectionKind, type: string): ConnectorDefinition | undefined {
  const c = byType.get(type);
  return c && (kind === 'source' ? c.source : c.destination) ? c : undefined;
}

export const connectorByType = (type: string) => byType.get(type);

/** Closes what every loaded connector keeps open between transfers (idle database connections): a worker shutting down. */
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
      change_check: Boolean(c.source?.changeCheck),
    },
    source: c.source
      ? {
          resource: json(c.source.resource),
          resource_required: c.source.resourceRequired,
          resource_shorthand: c.source.shorthand ?? null,
          importable: c.source.importable,
          incremental: c.source.incremental,
          incremental_note: c.source.incrementalNote ?? null,
          change_check_note: c.source.changeCheck?.note ?? null,
        }
      : null,
    destination: c.destination ? { target: json(c.destination.target), deliverable: c.destination.deliverable } : null,
  }));
}
