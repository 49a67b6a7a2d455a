import { auth as googleAuth, drive, type drive_v3 } from '@googleapis/drive';
import { ConnectorError } from '../../domain/transfers.js';
import { classify, reasonOfStatus } from '../shared/policy/classify.js';
import { publicUrl } from '../shared/http/fetch.js';
import { policyFetch } from '../shared/http/policy-fetch.js';

/*
 * Google Drive through Google's own Node client (@googleapis/drive on googleapis-common, with
 * the google-auth-library it pins for credentials, reached through its `auth` export so the
 * client classes match whatever other google-auth-library the project holds): no Drive protocol is written here, except the resumable
 * upload session (googleapis-common only does multipart and simple uploads), which goes through
 * the same authenticated client's request().
 *
 * Credentials:
 * - a service-account key: each request carries a JWT the key signs with the Drive scope
 *   (google-auth-library's self-signed JWT with scopes, useJWTAccessWithScope), so no token
 *   exchange happens and nothing but the key is needed;
 * - an OAuth client id and secret with a refresh token: access tokens come from the token
 *   endpoint (token_url) and are refreshed by the library.
 * `api_url` and `token_url` default to Google's; they point elsewhere only for a stand-in or a
 * private endpoint.
 *
 * Every request (the API's, the token endpoint's, the resumable session's) goes through the auth
 * client's gaxios transporter, whose fetch is connectors/shared/http/policy-fetch.ts instead of
 * node-fetch: each hop, a redirect's included, opens to an address the outbound policy checked,
 * a redirect to another origin carries no token and no body (the token request's client_secret
 * and refresh_token), and no redirect chain can throw where nothing catches (issue 32).
 */

/** The fetch of every Google client here (Drive's and its auth's). */
export const googleFetch = policyFetch({ secretHeaders: ['x-goog-api-key'] });

export const DRIVE_SCOPE = 'https://www.googleapis.com/auth/drive';
export const SHEET_TYPE = 'application/vnd.google-apps.spreadsheet';
export const FOLDER_TYPE = 'application/vnd.google-apps.folder';

type JWT = InstanceType<typeof googleAuth.JWT>;
type OAuth2Client = InstanceType<typeof googleAuth.OAuth2>;

export interface DriveAccess {
  credentials_json?: string | undefined;
  client_id?: string | undefined;
  client_secret?: string | undefined;
  refresh_token?: string | undefined;
  api_url: string;
  token_url: string;
}

export interface DriveHandle {
  api: drive_v3.Drive;
  auth: JWT | OAuth2Client;
  /** Per-call options: the API root (uploads build their URL from the call's own rootUrl). */
  call: { rootUrl: string; signal: AbortSignal };
  root: string;
  label: string;
  /** Which credentials are used, for test results: never their values. */
  method: 'service_account' | 'oauth';
  principal: string | null;
}

interface ServiceAccountKey {
  client_email?: string;
  private_key?: string;
  private_key_id?: string;
}

function authOf(access: DriveAccess, signal: AbortSignal): Pick<DriveHandle, 'auth' | 'method' | 'principal'> {
  // Every request of the client, the token endpoint's included, ends with the call's signal
  // (a token refresh takes no signal of its own and would otherwise wait for ever).
  // Every request of the client goes through the outbound policy and its redirect rule.
  const transporterOptions = { signal, fetchImplementation: googleFetch };
  if (access.credentials_json) {
    let key: ServiceAccountKey;
    try {
      key = JSON.parse(access.credentials_json) as ServiceAccountKey;
    } catch {
      throw new ConnectorError('authentication_failed', 'The service account key is not JSON: paste the whole key file Google gave you', {}, false);
    }
    if (typeof key?.client_email !== 'string' || typeof key.private_key !== 'string') {
      throw new ConnectorError(
        'authentication_failed',
        'The service account key has no client_email or private_key: paste the whole key file Google gave you',
        {},
        false,
      );
    }
    const auth = new googleAuth.JWT({ email: key.client_email, key: key.private_key, keyId: key.private_key_id, scopes: [DRIVE_SCOPE], transporterOptions });
    // A property, not a constructor option, in google-auth-library 10.
    auth.useJWTAccessWithScope = true;
    return { auth, method: 'service_account', principal: key.client_email };
  }
  if (access.client_id && access.client_secret && access.refresh_token) {
    const auth = new googleAuth.OAuth2({
      clientId: access.client_id,
      clientSecret: access.client_secret,
      endpoints: { oauth2TokenUrl: access.token_url },
      transporterOptions,
    });
    auth.setCredentials({ refresh_token: access.refresh_token });
    return { auth, method: 'oauth', principal: null };
  }
  throw new ConnectorError(
    'authentication_failed',
    'Google Drive needs a service account key (credentials_json), or client_id, client_secret and refresh_token',
    {},
    false,
  );
}

export function driveClient(access: DriveAccess, signal: AbortSignal): DriveHandle {
  const root = access.api_url.endsWith('/') ? access.api_url : `${access.api_url}/`;
  const { auth, method, principal } = authOf(access, signal);
  // retry: false: Runs retry a failed step themselves, with backoff, and say so.
  const api = drive({ version: 'v3', auth, rootUrl: root, retry: false } as drive_v3.Options);
  return { api, auth, call: { rootUrl: root, signal }, root, label: `Google Drive at ${publicUrl(root)}`, method, principal };
}

/**
 * A failure of the Drive client as a classified ConnectorError. Google answers 403 both for
 * "no access" and for rate limits (reason userRateLimitExceeded / rateLimitExceeded), which are
 * worth retrying; the token endpoint answers a bad refresh token or client with 400/401
 * invalid_grant / invalid_client. Messages never carry credentials (gaxios errors can quote the
 * request, so only the status and Google's reason are kept).
 */
export function driveFailure(error: unknown, what: string, details: Record<string, unknown> = {}): ConnectorError {
  if (error instanceof ConnectorError) return error;
  const e = error as { status?: number; response?: { status?: number; data?: unknown }; code?: string | number; message?: string };
  const status = e.response?.status ?? (typeof e.status === 'number' ? e.status : undefined);
  if (status === undefined) return classify(error, what, details);
  const data = e.response?.data as { error?: string | { errors?: { reason?: string }[]; message?: string } } | undefined;
  const oauthError = typeof data?.error === 'string' ? data.error : undefined;
  const reason = typeof data?.error === 'object' ? data.error?.errors?.[0]?.reason : undefined;
  if (oauthError && ['invalid_grant', 'invalid_client', 'unauthorized_client'].includes(oauthError)) {
    return new ConnectorError(
      'authentication_failed',
      `${what}: the token endpoint refused the OAuth client or refresh token (${oauthError})`,
      { ...details, http_status: status },
      false,
    );
  }
  if (status === 403 && reason && /rateLimitExceeded/i.test(reason)) {
    return new ConnectorError('server_error', `${what}: Google Drive rate limit (${reason})`, { ...details, http_status: status, reason }, true);
  }
  const classified = reasonOfStatus(status);
  return new ConnectorError(classified, `${what} answered HTTP ${status}${reason ? ` (${reason})` : ''}`, {
    ...details,
    http_status: status,
    ...(reason ? { reason } : {}),
  });
}

/** Drive query strings quote with single quotes; a name may hold them. */
export const quoted = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
