import { ConnectorError } from '../../domain/transfers.js';
import { failUnlessOk, httpRequest, publicUrl, readText } from '../shared/http/fetch.js';
import type { ConnectorContext } from '../types.js';

/*
 * Calls of CKAN's Action API (`POST {portal}/api/3/action/{name}` with a JSON body). CKAN wraps
 * every answer in {"success": …, "result": …} or {"success": false, "error": {"__type": …,
 * "message": …}}, with an HTTP status that agrees (404 Not Found Error, 403 Authorization Error,
 * 409 Validation Error). The API token travels in the Authorization header, to the portal only.
 */

export interface CkanAccess {
  /** The portal's URL without a trailing slash (CKAN may live under a path: https://host/data). */
  portal: string;
  token?: string;
}

export interface CkanResource {
  id: string;
  package_id?: string;
  name?: string | null;
  format?: string | null;
  url?: string | null;
  url_type?: string | null;
  last_modified?: string | null;
  metadata_modified?: string | null;
  created?: string | null;
  hash?: string | null;
  size?: number | null;
  mimetype?: string | null;
}

export interface CkanDataset {
  id: string;
  name: string;
  title?: string;
  private?: boolean;
  resources: CkanResource[];
}

interface ActionAnswer<T> {
  success?: boolean;
  result?: T;
  error?: { __type?: string; message?: string } & Record<string, unknown>;
}

const errorReasons: Record<string, ConnectorError['reason']> = {
  'Not Found Error': 'not_found',
  'Authorization Error': 'permission_denied',
  'Validation Error': 'invalid_response',
};

export const portalOf = (url: string) => url.replace(/[?#].*$/, '').replace(/\/+$/, '');

/** Headers for requests to the portal itself: the token, when there is one. */
export const authHeaders = (access: CkanAccess): Record<string, string> => (access.token ? { authorization: access.token } : {});

/** One action; its `result`, or a classified ConnectorError naming the action (never the token). */
export async function action<T>(access: CkanAccess, name: string, params: Record<string, unknown>, ctx: ConnectorContext): Promise<T> {
  const url = `${access.portal}/api/3/action/${name}`;
  const label = publicUrl(url);
  // No redirects: the Authorization header must not follow one, and CKAN's API does not redirect.
  const got = await httpRequest(
    {
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...authHeaders(access) },
      body: JSON.stringify(params),
      label,
      maxRedirects: 0,
    },
    ctx.signal,
  );
  const status = got.response.status;
  const isJson = /json/i.test(got.response.headers.get('content-type') ?? '');
  if (!got.response.ok && !isJson) await failUnlessOk(got, label);
  const { text } = await readText(got.response, 32 * 1024 * 1024, label);
  let answer: ActionAnswer<T>;
  try {
    answer = JSON.parse(text);
  } catch {
    if (!got.response.ok) await failUnlessOk(got, label);
    throw new ConnectorError('invalid_response', `${label} did not answer JSON: is ${publicUrl(access.portal)} a CKAN portal?`, { url: label }, false);
  }
  if (answer?.success === true) return answer.result as T;
  const type = answer?.error?.__type;
  if (type === undefined) {
    if (!got.response.ok) await failUnlessOk(got, label);
    throw new ConnectorError('invalid_response', `${label} answered JSON that is not a CKAN action result`, { url: label }, false);
  }
  const message = String(answer.error?.message ?? type).slice(0, 200);
  let reason = errorReasons[type] ?? (status >= 500 ? 'server_error' : 'invalid_response');
  // Without a token, "not authorized" means: this needs one.
  if (reason === 'permission_denied' && !access.token) reason = 'authentication_failed';
  const hint =
    reason === 'authentication_failed'
      ? ' (a private dataset? set api_key)'
      : reason === 'permission_denied'
        ? " (the token's user may not read it, or the token is not valid)"
        : '';
  throw new ConnectorError(
    reason,
    `CKAN ${name} answered ${type}: ${message}${hint}`,
    { url: label, action: name, http_status: status },
    reason === 'server_error',
  );
}
