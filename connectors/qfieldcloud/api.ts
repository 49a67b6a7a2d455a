import path from 'node:path';
import { ConnectorError } from '../../domain/transfers.js';
import { download } from '../shared/download.js';
import { fetchJson, publicUrl } from '../shared/fetch.js';
import { listedPathSegments } from '../shared/remote-paths.js';
import type { ConnectorContext } from '../types.js';

/*
 * The part of QFieldCloud's REST API (/api/v1/, Django REST framework) a Source needs, as
 * qfieldcloud-sdk speaks it: POST auth/login/ answers a token sent as `Authorization: Token …`;
 * projects/ pages with limit/offset and says where the next page is in X-Next-Page; files/{id}/
 * lists a project's files with their md5 (the storage ETag) and versions; files/{id}/{name}/
 * answers the file, usually as a redirect to a presigned storage URL (fetch.ts follows it and
 * leaves the token behind when it changes origin). Paths end with a slash, as the server expects.
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

export class QfcClient {
  private token: string | undefined;
  readonly root: string;

  constructor(
    private readonly access: QfcAccess,
    private readonly ctx: ConnectorContext,
  ) {
    this.root = apiRoot(access.url);
    this.token = access.token;
  }

  get label(): string {
    return `QFieldCloud at ${publicUrl(this.access.url)}`;
  }

  /** Signs in with the user name and password unless a token was given; answers who is signed in. */
  async signIn(): Promise<string> {
    if (this.token) return this.access.username ?? 'the token';
    if (!this.access.username || !this.access.password) {
      throw new ConnectorError('authentication_failed', `${this.label}: give a token, or a user name and password`, {}, false);
    }
    const url = `${this.root}auth/login/`;
    try {
      const got = await fetchJson<{ token?: string; username?: string }>(
        {
          url,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: this.access.username, password: this.access.password }),
          label: publicUrl(url),
        },
        this.ctx.signal,
        JSON_LIMIT,
      );
      if (typeof got.json?.token !== 'string' || !got.json.token)
        throw new ConnectorError('invalid_response', `${this.label} answered the sign-in without a token: is this a QFieldCloud server?`, {}, false);
      this.token = got.json.token;
      return got.json.username ?? this.access.username;
    } catch (error) {
      // Django REST framework answers wrong credentials with 400 ("Unable to log in with provided credentials").
      if (error instanceof ConnectorError && error.details.http_status === 400) {
        throw new ConnectorError('authentication_failed', `${this.label} refused the user name or password`, { url: publicUrl(url), http_status: 400 }, false);
      }
      throw error;
    }
  }

  private headers(): Record<string, string> {
    return this.token ? { authorization: `Token ${this.token}` } : {};
  }

  private async get<T>(path: string, what: string): Promise<T> {
    if (!this.token) await this.signIn();
    const url = `${this.root}${path}`;
    try {
      return (await fetchJson<T>({ url, headers: this.headers(), label: publicUrl(url) }, this.ctx.signal, JSON_LIMIT)).json;
    } catch (error) {
      if (error instanceof ConnectorError && error.reason === 'not_found')
        throw new ConnectorError('not_found', `${this.label} has no ${what}`, error.details, false);
      throw error;
    }
  }

  /** Every project the account can see (its own and shared with it), page by page. */
  async projects(): Promise<QfcProject[]> {
    if (!this.token) await this.signIn();
    const all: QfcProject[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const url = `${this.root}projects/?limit=${PAGE}&offset=${offset}`;
      const got = await fetchJson<QfcProject[]>({ url, headers: this.headers(), label: publicUrl(url) }, this.ctx.signal, JSON_LIMIT);
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
    if (!this.token) await this.signIn();
    const url = `${this.root}files/${encodeURIComponent(projectId)}/${listedPathSegments(name, this.label)}/`;
    try {
      const got = await download(
        { url, headers: this.headers(), label: `${this.label}: ${name}`, filename: path.basename(file) },
        { ...this.ctx, workDir: path.dirname(file) },
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
