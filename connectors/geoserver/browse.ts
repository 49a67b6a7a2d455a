import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import type { ConnectorContext } from '../types.js';
import { listOf, restGet, type GeoserverAccess } from './rest.js';

/*
 * The browse helpers of a GeoServer connection (GET /sources/{id}/geoserver/…): its workspaces,
 * the data stores of a workspace and the layers of a workspace, as the REST API lists them.
 */

interface Named {
  name: string;
}

async function listed(access: GeoserverAccess, segments: string[], outer: string, inner: string, ctx: ConnectorContext, missing?: string): Promise<string[]> {
  const body = await restGet<unknown>(access, segments, ctx);
  if (body === null) {
    throw new ConnectorError('not_found', missing ?? `${publicUrl(access.base)} has no ${segments.join('/')}`, {}, false);
  }
  return listOf<Named>(body, outer, inner)
    .map((n) => n?.name)
    .filter((n): n is string => typeof n === 'string')
    .sort((a, b) => a.localeCompare(b));
}

export async function listWorkspaces(access: GeoserverAccess, ctx: ConnectorContext): Promise<{ items: { name: string }[] }> {
  const names = await listed(
    access,
    ['workspaces.json'],
    'workspaces',
    'workspace',
    ctx,
    `${publicUrl(access.base)} answered 404 for its workspaces: is the URL the GeoServer web application (…/geoserver)?`,
  );
  return { items: names.map((name) => ({ name })) };
}

/** A listing inside a workspace; a 404 means the workspace is missing. */
const listedInWorkspace = (access: GeoserverAccess, workspace: string, file: string, plural: string, singular: string, ctx: ConnectorContext) =>
  listed(access, ['workspaces', workspace, file], plural, singular, ctx, `GeoServer at ${publicUrl(access.base)} has no workspace ${workspace}`);

export async function listStores(access: GeoserverAccess, workspace: string, ctx: ConnectorContext): Promise<{ workspace: string; items: { name: string }[] }> {
  const names = await listedInWorkspace(access, workspace, 'datastores.json', 'dataStores', 'dataStore', ctx);
  return { workspace, items: names.map((name) => ({ name })) };
}

export async function listLayers(
  access: GeoserverAccess,
  workspace: string,
  ctx: ConnectorContext,
): Promise<{ workspace: string; items: { name: string; qualified_name: string }[] }> {
  const names = await listedInWorkspace(access, workspace, 'layers.json', 'layers', 'layer', ctx);
  // Workspace-scoped listings name layers without the prefix; some versions prefix them.
  const plain = names.map((n) => (n.startsWith(`${workspace}:`) ? n.slice(workspace.length + 1) : n));
  return { workspace, items: plain.map((name) => ({ name, qualified_name: `${workspace}:${name}` })) };
}
