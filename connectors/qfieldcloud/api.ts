import { createHash } from 'node:crypto';
import path from 'node:path';
import { ConnectorError } from '../../domain/transfers.js';
import { download } from '../shared/http/download.js';
import { fetchJson, missingAs, publicUrl } from '../shared/http/fetch.js';
import { postSignIn } from '../shared/http/sign-in.js';
import { listedPathSegments } from '../shared/files/remote-paths.js';
import type { ConnectorContext } from '../types.js';

/*
 * The part of QFieldCloud's REST API (/api/v1/, Django REST framework) a Source needs, as
 * qfieldcloud-sdk speaks it: POST auth/login/ answers a token sent as `Authorization: Token …`;
 * projects/ pages with limit/offset and says where the next page is in X-Next-Page; files/{id}/
 * lists a project's files with their md5 (the storage ETag) and versions; files/{id}/{name}/
 * answers the file (200, or 206 for a range; a redirect elsewhere is followed without the token).
 * Paths end with a slash, as the server expects.
 *
 * Tokens: QFieldCloud keeps one live token per user for each client type it cannot tell apart
 * (geoflow is "unknown" to it), and every sign-in and every authenticated request of one such
 * token expires the user's others (authentication/models.py, AuthToken.save). Signing in per
 * operation therefore made concurrent Runs and inspects on one account throw each other out. So a
 * password sign-in is made once per server and account in this process and shared by every
 * operation; when the server answers 401 with it (expired, or pushed out by the user's own
 * scripts), the client signs in once more and repeats the request once.
 */

export interface QfcAccess {
  url: string;
  username?: string | undefined;
  password?: string | undefined;
  token?: string | undefined;
}

export interface QfcProject {
  id: string;
  name: string;
  owner?: string;
  description?: string;
  updated_at?: string;
  data_last_updated_at?: string;
}

export interface QfcFile {
  name: string;
  size?: number;
  md5sum?: string;
  sha256?: string;
  last_modified?: string;
  versions?: { version_id?: string; md5sum?: string; is_latest?: boolean; last_modified?: string }[];
}

const JSON_LIMIT = 32 * 1024 * 1024;
const PAGE = 250;

/** The API root: the server URL with /api/v1/ added unless it is already there. */
export function apiRoot(url: string): string {
  const base = url.replace(/\/+$/, '');
  return /\/api\/v1$/.test(base) ? `${base}/` : `${base}/api/v1/`;
}

interface Session {
  token: Promise<string>;
  username: string;
}

/** Password sign-ins shared in this process, by server and account (the key is a hash: no password in it). */
const sessions = new Map<string, Session>();

/** Forgets every shared sign-in (tests start from none). */
export function forgetQfcSessions(): void {
  sessions.clear();
}

export class QfcClient {
  /** The saved API token, when the Source has one (never re-signed: there is nothing to sign in with). */
  private readonly fixedToken: string | undefined;
  readonly root: string;

  constructor(
    private readonly access: QfcAccess,
    private readonly ctx: ConnectorContext,
  ) {
    this.root = apiRoot(access.url);
    this.fixedToken = access.token;
  }

  private get sessionKey(): string {
    return createHash('sha256')
      .update(`${this.root}\0${this.access.username ?? ''}\0${this.access.password ?? ''}`)
      .digest('hex');
  }

  get label(): string {
    return `QFieldCloud at ${publicUrl(this.access.url)}`;
  }

  /** Signs in (or joins this process's sign-in for the account) unless a token was given; answers who is signed in. */
  async signIn(): Promise<string> {
    if (this.fixedToken) return this.access.username ?? 'the token';
    await this.session().token;
    return this.session().username;
  }

  /** The shared sign-in of this account, started when there is none. */
  private session(): Session {
    const key = this.sessionKey;
    const existing = sessions.get(key);
    if (existing) return existing;
    return this.startSession(key);
  }

  private startSession(key: string): Session {
    const session = { username: this.access.username ?? '' } as Session;
    session.token = this.login((username) => (session.username = username));
    sessions.set(key, session);
    // A failed sign-in is not kept: the next operation tries again.
    session.token.catch(() => {
      if (sessions.get(key) === session) sessions.delete(key);
    });
    return session;
  }

  /** Replaces the shared sign-in that answered 401, unless another operation already did. */
  private renew(stale: Session): Session {
    const key = this.sessionKey;
    const current = sessions.get(key);
    if (current && current !== stale) return current;
    return this.startSession(key);
  }

  private async login(named: (username: string) => void): Promise<string> {
    if (!this.access.username || !this.access.password) {
      throw new ConnectorError('authentication_failed', `${this.label}: give a token, or a user name and password`, {}, false);
    }
    const url = `${this.root}auth/login/`;
    // QFieldCloud answers wrong credentials with 401 authentication_failed; older servers (plain Django REST framework) with 400.
    const got = await postSignIn<{ token?: string; username?: string }>(
      url,
      { username: this.access.username, password: this.access.password },
      this.label,
      this.ctx.signal,
      JSON_LIMIT,
    );
    if (typeof got.json?.token !== 'string' || !got.json.token)
      throw new ConnectorError('invalid_response', `${this.label} answered the sign-in without a token: is this a QFieldCloud server?`, {}, false);
    if (got.json.username) named(got.json.username);
    return got.json.token;
  }

  /** Runs an authenticated request; a 401 on the shared sign-in signs in again once and repeats it. */
  private async authed<T>(send: (headers: Record<string, string>) => Promise<T>): Promise<T> {
    if (this.fixedToken) return send({ authorization: `Token ${this.fixedToken}` });
    const session = this.session();
    const token = await session.token;
    try {
      return await send({ authorization: `Token ${token}` });
    } catch (error) {
      if (!(error instanceof ConnectorError && error.details.http_status === 401)) throw error;
      this.ctx.log.info({ server: publicUrl(this.access.url) }, 'QFieldCloud token expired; signing in again');
      const renewed = await this.renew(session).token;
      return send({ authorization: `Token ${renewed}` });
    }
  }

  private async get<T>(path: string, what: string): Promise<T> {
    const url = `${this.root}${path}`;
    return missingAs(
      this.authed(async (headers) => (await fetchJson<T>({ url, headers, label: publicUrl(url) }, this.ctx.signal, JSON_LIMIT)).json),
      this.label,
      what,
    );
  }

  /** Every project the account can see (its own and shared with it), page by page. */
  async projects(): Promise<QfcProject[]> {
    const all: QfcProject[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const url = `${this.root}projects/?limit=${PAGE}&offset=${offset}`;
      const got = await this.authed((headers) => fetchJson<QfcProject[]>({ url, headers, label: publicUrl(url) }, this.ctx.signal, JSON_LIMIT));
      if (!Array.isArray(got.json))
        throw new ConnectorError('invalid_response', `${this.label} answered the project list with something other than a list`, {}, false);
      all.push(...got.json);
      if (got.json.length < PAGE) break;
    }
    return all;
  }

  async project(id: string): Promise<QfcProject> {
    return this.get<QfcProject>(`projects/${encodeURIComponent(id)}/`, `project ${id}`);
  }

  async files(projectId: string): Promise<QfcFile[]> {
    const files = await this.get<QfcFile[]>(`files/${encodeURIComponent(projectId)}/`, `project ${projectId}`);
    if (!Array.isArray(files)) throw new ConnectorError('invalid_response', `${this.label} answered the file list with something other than a list`, {}, false);
    return files;
  }

  /** Streams a project file to `file` (size-limited); the project path never becomes a server path. */
  async download(projectId: string, name: string, file: string): Promise<number> {
    const url = `${this.root}files/${encodeURIComponent(projectId)}/${listedPathSegments(name, this.label)}/`;
    try {
      const got = await this.authed((headers) =>
        download({ url, headers, label: `${this.label}: ${name}`, filename: path.basename(file) }, { ...this.ctx, workDir: path.dirname(file) }),
      );
      return got.bytes;
    } catch (error) {
      if (error instanceof ConnectorError && error.reason === 'not_found')
        throw new ConnectorError('not_found', `${this.label}: project ${projectId} has no file ${name}`, { file: name }, false);
      throw error;
    }
  }
}

/** The project a selector names: its id, or owner/name, or a name only one visible project has. */
export async function findProject(client: QfcClient, selector: string): Promise<QfcProject> {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(selector)) return client.project(selector);
  const projects = await client.projects();
  const [owner, name] = selector.includes('/') ? selector.split('/', 2) : [undefined, selector];
  const matches = projects.filter((p) => p.name === name && (owner === undefined || p.owner === owner));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0)
    throw new ConnectorError('not_found', `${client.label} has no project ${selector} that this account can see`, { project: selector }, false);
  throw new ConnectorError(
    'invalid_data',
    `${client.label}: ${matches.length} projects are named ${selector}; give the project id or owner/name`,
    { project: selector },
    false,
  );
}
