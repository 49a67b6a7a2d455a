import { accessOf as geonodeAccess } from '../connectors/geonode/api.js';
import { listDatasets, type DatasetQuery } from '../connectors/geonode/browse.js';
import { accessOf as geoserverAccess, type GeoserverAccess } from '../connectors/geoserver/rest.js';
import { listLayers, listStores, listWorkspaces } from '../connectors/geoserver/browse.js';
import { ConnectorError } from '../domain/transfers.js';
import type { ConnectorContext } from '../connectors/types.js';
import { kindNoun, type ConnectionKind } from '../domain/connections/kinds.js';
import { DomainError } from '../domain/errors.js';
import { openConnection, withDeadline } from './connections.js';
import type { Services } from './services.js';

/*
 * Browse helpers of saved GeoServer and GeoNode connections: what a picker shows before a Job's
 * source_resource or destination_target is filled in. The connection is opened (decrypted) here,
 * in the API process, like a connection test; the remote system's failures answer
 * source_failed / delivery_failed with the classified reason, never a secret.
 */

const BROWSE_TIMEOUT_MS = 20_000;

type Base = Omit<ConnectorContext, 'signal'>;

async function opened(services: Pick<Services, 'store' | 'cipher'>, kind: ConnectionKind, id: string, actorId: string, type: 'geoserver' | 'geonode') {
  const connection = await openConnection(services, kind, id, actorId);
  if (connection.type !== type) {
    throw new DomainError(
      kind === 'source' ? 'invalid_source' : 'invalid_destination',
      `These listings are for ${type === 'geoserver' ? 'GeoServer' : 'GeoNode'} ${kindNoun(kind)}s; this one is ${connection.type}`,
      { type: connection.type },
    );
  }
  return connection.config as { url: string; username?: string; password?: string; api_key?: string };
}

async function remote<T>(kind: ConnectionKind, base: Base, fn: (ctx: ConnectorContext) => Promise<T>): Promise<T> {
  try {
    return await withDeadline(BROWSE_TIMEOUT_MS, base, fn);
  } catch (error) {
    if (error instanceof ConnectorError) {
      throw new DomainError(kind === 'source' ? 'source_failed' : 'delivery_failed', error.message, { reason: error.reason, ...error.details });
    }
    throw error;
  }
}

/** A GeoServer listing: its workspaces, or the stores or layers of one workspace. */
export async function browseGeoserver<T>(
  services: Pick<Services, 'store' | 'cipher'>,
  kind: ConnectionKind,
  id: string,
  actorId: string,
  list: (access: GeoserverAccess, ctx: ConnectorContext) => Promise<T>,
  base: Base,
): Promise<T> {
  const config = await opened(services, kind, id, actorId, 'geoserver');
  return remote(kind, base, (ctx) => list(geoserverAccess(config), ctx));
}

export { listLayers, listStores, listWorkspaces };

export async function browseGeonode(
  services: Pick<Services, 'store' | 'cipher'>,
  kind: ConnectionKind,
  id: string,
  actorId: string,
  query: DatasetQuery,
  base: Base,
) {
  const config = await opened(services, kind, id, actorId, 'geonode');
  return remote(kind, base, (ctx) => listDatasets(geonodeAccess(config), query, ctx));
}
