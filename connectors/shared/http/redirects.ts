import { ConnectorError } from '../../../domain/transfers.js';

/*
 * What a redirect may take along to the next address: the one rule every HTTP client of the
 * connectors follows (fetch.ts for their own requests, policy-fetch.ts for the Google clients,
 * the Snowflake driver's redirect hook). Credentials stay with the origin they were configured
 * for, as browsers and curl keep them:
 *
 * - another origin (scheme, host or port: https → http of the same host is another origin too)
 *   gets no Authorization, Proxy-Authorization or Cookie header, nor any header the caller names
 *   as secret (an API key header);
 * - a body is never sent to another origin again (307/308 repeat it): a sign-in's password, an
 *   OAuth client secret or a token in a form may be in it. Such a redirect is refused with an
 *   error that names where it pointed, unless the caller says the body holds no secret;
 * - 303, and 301/302 after a POST, continue as a GET without the body (as browsers do);
 * - only http: and https: are followed.
 */

/** Headers that carry credentials by definition. */
export const credentialHeaders: readonly string[] = ['authorization', 'proxy-authorization', 'cookie', 'cookie2'];

export interface HopRequest<B> {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: B | undefined;
}

export interface RedirectRules {
  /** How the first URL is named in messages (no credentials, no query). */
  label: string;
  /** More header names (any case) that carry secrets. */
  secretHeaders?: readonly string[] | undefined;
  /** The body holds nothing secret and may follow a 307/308 to another origin (off by default). */
  bodyMayLeaveOrigin?: boolean | undefined;
  /** The body can be sent again (text or bytes); a stream cannot, so a 307/308 with one is refused. */
  bodyRepeatable?: boolean | undefined;
}

export const REDIRECT_STATUSES: readonly number[] = [301, 302, 303, 307, 308];

/** A URL as shown in messages and results: no user info, no query string (it may carry keys). */
export function publicUrl(raw: string | URL): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid url)';
  }
}

/** The request a redirect answer asks for next, or a ConnectorError that says why it is not followed. */
export function nextHop<B>(current: HopRequest<B>, first: string, status: number, location: string, rules: RedirectRules): HopRequest<B> {
  const next = new URL(location, current.url);
  const where = publicUrl(next);
  if (next.protocol !== 'http:' && next.protocol !== 'https:') {
    throw new ConnectorError('invalid_response', `${rules.label} redirected to a ${next.protocol} URL, which is not followed`, { url: rules.label }, false);
  }
  let { method, body, headers } = current;
  // A GET or HEAD sends no body, whatever it was given.
  if (method === 'GET' || method === 'HEAD') body = undefined;
  if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
    method = method === 'HEAD' ? 'HEAD' : 'GET';
    body = undefined;
    headers = without(headers, (name) => /^content-(type|length|encoding)$/.test(name));
  }
  const leaves = next.origin !== new URL(first).origin;
  if (body !== undefined && leaves && !rules.bodyMayLeaveOrigin) {
    throw new ConnectorError(
      'invalid_response',
      `${rules.label} redirected a ${method} request (HTTP ${status}) to another origin, ${where}: not followed, since its body may hold credentials; save the address that answers directly`,
      { url: rules.label, http_status: status, redirected_to: where },
      false,
    );
  }
  if (body !== undefined && rules.bodyRepeatable === false) {
    throw new ConnectorError(
      'invalid_response',
      `${rules.label} redirected an upload (HTTP ${status}) to ${where}; a streamed body cannot be sent twice: save the address that answers directly`,
      { url: rules.label, http_status: status, redirected_to: where },
      false,
    );
  }
  if (leaves) {
    const secret = new Set([...credentialHeaders, ...(rules.secretHeaders ?? []).map((h) => h.toLowerCase())]);
    headers = without(headers, (name) => secret.has(name));
  }
  return { url: next.toString(), method, headers, body };
}

const without = (headers: Record<string, string>, drop: (lowerName: string) => boolean) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !drop(name.toLowerCase())));
