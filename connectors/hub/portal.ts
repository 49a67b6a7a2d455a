import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { arcgisPost, type RestAnswer, type RestFile } from '../shared/arcgis/rest.js';
import type { ConnectorContext } from '../types.js';

/*
 * A portal's sharing API (ArcGIS Online, or ArcGIS Enterprise's Portal): where the token comes
 * from, and the calls the hub connector makes. Every call is a POST with the token in the body
 * (shared/arcgis/rest.ts), so it never sits in a URL; file downloads send it in the
 * X-Esri-Authorization header instead, to the portal's own origin only.
 *
 * The services items name: anyone who can publish an item can make its `url` point anywhere, so
 * the token goes only where Esri's own client sends a portal's token (ArcGISIdentityManager): the
 * portal's origin, the servers the portal says it federates with (portals/self/servers, ArcGIS
 * Enterprise), and for ArcGIS Online its own services on *.arcgis.com. Any other service is read
 * without the token; when that fails, the error says why the token was kept back (issue 32).
 */

export interface HubConfig {
  url: string;
  username?: string | undefined;
  password?: string | undefined;
  api_key?: string | undefined;
}

export interface Portal {
  /** …/sharing/rest, without a trailing slash. */
  sharing: string;
  /** How the portal is named in messages and results. */
  label: string;
  /** An API key or a generated token; absent for anonymous reads of public items. */
  token?: string;
  /** The configured user (username/password), when known without asking. */
  username?: string;
  /** The origins of the servers the portal federates with, once asked (federatedOrigins). */
  federated?: Promise<Set<string>>;
}

/** An item as the portal describes it: a hostile or odd portal may leave anything out. */
export interface PortalItem {
  id: string;
  owner?: string | null;
  title: string;
  type: string;
  name?: string | null;
  url?: string | null;
  tags?: string[];
  typeKeywords?: string[];
  modified?: number;
  access?: string;
  ownerFolder?: string | null;
}

const JSON_LIMIT = 32 * 1024 * 1024;

/** The sharing API of a portal URL: https://www.arcgis.com → …/sharing/rest; an Enterprise portal keeps its path (…/portal). */
export function sharingUrlOf(url: string): string {
  const u = new URL(url);
  const base = u.pathname.replace(/\/+$/, '').replace(/\/(home(\/.*)?|sharing(\/rest)?)$/i, '');
  return `${u.origin}${base}/sharing/rest`;
}

/** The token a configuration gives: the API key, a token generated from username and password, or none. */
export async function openPortal(config: HubConfig, ctx: ConnectorContext): Promise<Portal> {
  const sharing = sharingUrlOf(config.url);
  const label = publicUrl(sharing.replace(/\/sharing\/rest$/, ''));
  if (config.api_key) return { sharing, label, token: config.api_key, ...(config.username ? { username: config.username } : {}) };
  if (config.password && !config.username)
    throw new ConnectorError('authentication_failed', 'a password is saved but no username: set username', { url: label }, false);
  if (!config.username) return { sharing, label };
  if (!config.password)
    throw new ConnectorError('authentication_failed', `no password is saved for ${config.username}: set password (or api_key)`, { url: label }, false);
  try {
    const { json } = await arcgisPost<{ token?: string }>(
      `${sharing}/generateToken`,
      // referer tokens: bound to our portal origin as referer; one hour covers a Run's step
      { username: config.username, password: config.password, client: 'referer', referer: new URL(sharing).origin, expiration: '60' },
      undefined,
      ctx,
      1024 * 1024,
    );
    if (!json.token) throw new ConnectorError('invalid_response', `${label} answered generateToken without a token`, { url: label }, false);
    return { sharing, label, token: json.token, username: config.username };
  } catch (error) {
    // generateToken answers a wrong password with error 400 "Unable to generate token."
    if (error instanceof ConnectorError && error.reason === 'invalid_response' && /generate token/i.test(error.message)) {
      throw new ConnectorError(
        'authentication_failed',
        `${label} refused the username or password of ${config.username}`,
        { url: label, username: config.username },
        false,
      );
    }
    throw error;
  }
}

/** One call of the sharing API (path below …/sharing/rest). */
export function portalCall<T>(
  portal: Portal,
  path: string,
  params: Record<string, string>,
  ctx: ConnectorContext,
  files: RestFile[] = [],
): Promise<RestAnswer<T>> {
  return arcgisPost<T>(`${portal.sharing}/${path}`, params, portal.token, ctx, JSON_LIMIT, files);
}

/** The signed-in user (community/self): the owner of what a Destination publishes. */
export async function currentUser(portal: Portal, ctx: ConnectorContext): Promise<string> {
  if (portal.username) return portal.username;
  if (!portal.token)
    throw new ConnectorError(
      'authentication_failed',
      `publishing to ${portal.label} needs credentials: set api_key, or username and password`,
      { url: portal.label },
      false,
    );
  const { json } = await portalCall<{ username?: string }>(portal, 'community/self', {}, ctx);
  if (!json.username)
    throw new ConnectorError(
      'authentication_failed',
      `${portal.label} does not say whose credentials these are (community/self has no username): set username`,
      { url: portal.label },
      false,
    );
  return json.username;
}

export async function getItem(portal: Portal, id: string, ctx: ConnectorContext): Promise<PortalItem> {
  return (await portalCall<PortalItem>(portal, `content/items/${encodeURIComponent(id)}`, {}, ctx)).json;
}

export interface SearchPage {
  total: number;
  start: number;
  num: number;
  nextStart: number;
  results: PortalItem[];
}

export async function searchItems(
  portal: Portal,
  q: string,
  ctx: ConnectorContext,
  page: { start?: number; num?: number; sortField?: string; sortOrder?: 'asc' | 'desc' } = {},
): Promise<SearchPage> {
  const params: Record<string, string> = { q, start: String(page.start ?? 1), num: String(page.num ?? 20) };
  if (page.sortField) params.sortField = page.sortField;
  if (page.sortOrder) params.sortOrder = page.sortOrder;
  return (await portalCall<SearchPage>(portal, 'search', params, ctx)).json;
}

export interface Folder {
  id: string;
  title: string;
}

export async function userFolders(portal: Portal, user: string, ctx: ConnectorContext): Promise<Folder[]> {
  const { json } = await portalCall<{ folders?: Folder[] }>(portal, `content/users/${encodeURIComponent(user)}`, { num: '1' }, ctx);
  return (json.folders ?? []).map((f) => ({ id: f.id, title: f.title }));
}

/** The service URL of a feature layer item (…/FeatureServer, without a layer id or trailing slash). */
export function serviceUrlOf(item: PortalItem): string {
  if (!item.url) throw new ConnectorError('invalid_response', `item ${item.id} (${item.type}) has no service URL`, { item_id: item.id }, false);
  const url = item.url
    .replace(/[?#].*$/, '')
    .replace(/\/+$/, '')
    .replace(/\/\d+$/, '');
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol) || new URL(url).username || new URL(url).password)
    throw new ConnectorError('invalid_response', `item ${item.id} names a service URL that is not a plain http(s) URL`, { item_id: item.id }, false);
  return url;
}

/** ArcGIS Online's environment of a URL on *.arcgis.com (production, dev or qa), as Esri's client tells them apart; null elsewhere. */
function onlineEnvironment(url: URL): string | null {
  const m = /^(.+)\.arcgis\.com$/i.exec(url.hostname);
  if (!m || url.protocol !== 'https:') return null;
  const label = m[1]!.split('.').pop()!.toLowerCase();
  return label.includes('dev') ? 'dev' : label.includes('qa') ? 'qa' : 'production';
}

/**
 * The origins of the servers the portal federates with (ArcGIS Enterprise's portals/self/servers:
 * each server's `url` and `adminUrl`), asked once per portal. ArcGIS Online has no such list; a
 * portal that refuses the call or answers nonsense federates with nothing.
 */
function federatedOrigins(portal: Portal, ctx: ConnectorContext): Promise<Set<string>> {
  portal.federated ??= portalCall<{ servers?: { url?: unknown; adminUrl?: unknown }[] }>(portal, 'portals/self/servers', {}, ctx).then(
    ({ json }) =>
      new Set(
        (Array.isArray(json.servers) ? json.servers : [])
          .flatMap((s) => [s?.url, s?.adminUrl])
          .filter((u): u is string => typeof u === 'string' && URL.canParse(u) && /^https?:$/.test(new URL(u).protocol))
          .map((u) => new URL(u).origin),
      ),
    () => new Set<string>(),
  );
  return portal.federated;
}

/** Whether the portal's token may be sent to `url`: the portal's origin, a federated server's, or (ArcGIS Online) its own services. */
export async function mayCarryToken(portal: Portal, url: string, ctx: ConnectorContext): Promise<boolean> {
  const target = new URL(url);
  const home = new URL(portal.sharing);
  if (target.origin === home.origin) return true;
  const online = onlineEnvironment(home);
  if (online && onlineEnvironment(target) === online) return true;
  return (await federatedOrigins(portal, ctx)).has(target.origin);
}

/** How the service an item names is read: with the portal's token where it may go, else without. */
export interface ServiceAccess {
  service: string;
  token?: string;
  /** The portal has a token but the service is not where it may go (mayCarryToken). */
  withheld: boolean;
}

export async function serviceAccess(portal: Portal, item: PortalItem, ctx: ConnectorContext): Promise<ServiceAccess> {
  const service = serviceUrlOf(item);
  if (!portal.token) return { service, withheld: false };
  if (await mayCarryToken(portal, service, ctx)) return { service, token: portal.token, withheld: false };
  return { service, withheld: true };
}

/**
 * Runs a call to a service read without the portal's token; a refusal (token required, no
 * permission) then says why the token was kept back, so a user knows it is not their key.
 */
export async function explainWithheld<T>(access: ServiceAccess, portal: Portal, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!access.withheld || !(error instanceof ConnectorError) || !['authentication_failed', 'permission_denied'].includes(error.reason)) throw error;
    throw new ConnectorError(
      error.reason,
      `${new URL(access.service).origin} is neither ${portal.label} nor a server it federates with (portals/self/servers), so the portal's credentials were not sent there; read without them, it answered: ${error.message}`,
      { ...error.details, service: publicUrl(access.service), credentials_withheld: true },
      false,
    );
  }
}

export const isFeatureService = (item: PortalItem) => item.type === 'Feature Service';

/** Headers for downloading an item's file: the token, to the portal's own origin only. */
export function downloadHeaders(portal: Portal): Record<string, string> {
  return portal.token ? { 'x-esri-authorization': `Bearer ${portal.token}` } : {};
}
