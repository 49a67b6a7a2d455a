import path from 'node:path';
import { download } from '../shared/http/download.js';
import { ConnectorError } from '../../domain/transfers.js';
import { fetchJson, missingAs, publicUrl } from '../shared/http/fetch.js';
import { postSignIn } from '../shared/http/sign-in.js';
import type { ConnectorContext } from '../types.js';

/*
 * The part of the Mergin Maps server API a Source needs, as mergin-client (python-api-client)
 * speaks it: POST /v1/auth/login {login, password} answers a session token sent as
 * `Authorization: Bearer …`; /v1/project/paginated?only_namespace=<workspace> lists a workspace's
 * projects; /v1/project/{workspace}/{name}[?version=vN] describes a project version with its
 * files (path, size, checksum = SHA-1, mtime); /v1/project/versions/paginated/{workspace}/{name}
 * lists its versions; /v1/project/raw/{workspace}/{name}?file=…&version=vN answers a file;
 * /v1/workspaces lists the workspaces the user belongs to.
 *
 * The server answers an unknown only_namespace with an empty list, so the workspace is checked
 * against /v1/workspaces before projects are listed (unknown → not_found). A stale session does
 * not answer 401: it answers 403, or empty lists; so a 401/403, or a workspace missing from the
 * list, signs in again once and repeats the request before it counts.
 */

export interface MerginAccess {
  url: string;
  username: string;
  password?: string | undefined;
  workspace: string;
}

export interface MerginProject {
  id?: string;
  name: string;
  namespace: string;
  version?: string;
  updated?: string;
  created?: string;
  creator?: number | string;
  description?: string | null;
  files?: MerginFile[];
}

export interface MerginFile {
  path: string;
  size?: number;
  checksum?: string;
  mtime?: string;
}

export interface MerginWorkspace {
  id?: number;
  name: string;
  role?: string | null;
}

export interface MerginVersion {
  name: string;
  author?: string | null;
  created?: string | null;
}

const JSON_LIMIT = 32 * 1024 * 1024;
const PER_PAGE = 50;

export class MerginClient {
  private token: string | undefined;
  /** Whether this client signed in again after a stale answer (once per operation). */
  private renewed = false;
  private readonly base: string;

  constructor(
    private readonly access: MerginAccess,
    private readonly ctx: ConnectorContext,
  ) {
    this.base = access.url.replace(/\/+$/, '');
  }

  get label(): string {
    return `Mergin Maps at ${publicUrl(this.access.url)}`;
  }

  async signIn(): Promise<string> {
    if (!this.access.password) throw new ConnectorError('authentication_failed', `${this.label}: no password is saved for ${this.access.username}`, {}, false);
    const url = `${this.base}/v1/auth/login`;
    // The server answers wrong credentials with 401 (older ones 400).
    const got = await postSignIn<{ session?: { token?: string }; username?: string }>(
      url,
      { login: this.access.username, password: this.access.password },
      this.label,
      this.ctx.signal,
      JSON_LIMIT,
    );
    const token = got.json?.session?.token;
    if (typeof token !== 'string' || !token)
      throw new ConnectorError('invalid_response', `${this.label} answered the sign-in without a session token: is this a Mergin Maps server?`, {}, false);
    this.token = token;
    return got.json.username ?? this.access.username;
  }

  /** Signs in again, once per operation, after an answer a stale session gives; false when that was done already. */
  private async renew(): Promise<boolean> {
    if (this.renewed) return false;
    this.renewed = true;
    this.ctx.log.info({ server: publicUrl(this.access.url) }, 'Mergin Maps session looks stale; signing in again');
    await this.signIn();
    return true;
  }

  /** Runs an authenticated request; a 401 or 403 signs in again once and repeats it. */
  private async authed<T>(send: (headers: Record<string, string>) => Promise<T>): Promise<T> {
    if (!this.token) await this.signIn();
    try {
      return await send({ authorization: `Bearer ${this.token}` });
    } catch (error) {
      const status = error instanceof ConnectorError ? error.details.http_status : undefined;
      if ((status === 401 || status === 403) && (await this.renew())) return send({ authorization: `Bearer ${this.token}` });
      throw error;
    }
  }

  private async get<T>(pathAndQuery: string, what: string): Promise<T> {
    const url = `${this.base}${pathAndQuery}`;
    return missingAs(
      this.authed(async (headers) => (await fetchJson<T>({ url, headers, label: publicUrl(url) }, this.ctx.signal, JSON_LIMIT)).json),
      this.label,
      what,
    );
  }

  private projectPath(name: string): string {
    return `${encodeURIComponent(this.access.workspace)}/${encodeURIComponent(name)}`;
  }

  /** The workspaces the user belongs to. */
  async workspaces(): Promise<MerginWorkspace[]> {
    const got = await this.get<MerginWorkspace[]>('/v1/workspaces', 'workspace list');
    if (!Array.isArray(got))
      throw new ConnectorError('invalid_response', `${this.label} answered the workspace list with something other than a list`, {}, false);
    return got;
  }

  /** Checks that the user belongs to the configured workspace (an empty list from a stale session signs in again once). */
  async checkWorkspace(): Promise<MerginWorkspace> {
    let list = await this.workspaces();
    let found = list.find((w) => w.name === this.access.workspace);
    if (!found && (await this.renew())) {
      list = await this.workspaces();
      found = list.find((w) => w.name === this.access.workspace);
    }
    if (found) return found;
    const known = list.map((w) => w.name).join(', ');
    throw new ConnectorError(
      'not_found',
      `${this.label} has no workspace ${this.access.workspace} that ${this.access.username} belongs to${known ? ` (they belong to: ${known})` : ''}`,
      { workspace: this.access.workspace },
      false,
    );
  }

  /** The workspace's projects, page by page (the workspace checked first: the server lists an unknown one as empty). */
  async projects(): Promise<MerginProject[]> {
    await this.checkWorkspace();
    const all: MerginProject[] = [];
    for (let page = 1; ; page++) {
      const got = await this.get<{ projects?: MerginProject[]; count?: number }>(
        `/v1/project/paginated?only_namespace=${encodeURIComponent(this.access.workspace)}&page=${page}&per_page=${PER_PAGE}`,
        `workspace ${this.access.workspace}`,
      );
      if (!Array.isArray(got?.projects))
        throw new ConnectorError('invalid_response', `${this.label} answered the project list without a projects list`, {}, false);
      all.push(...got.projects);
      if (got.projects.length < PER_PAGE || all.length >= (got.count ?? 0)) break;
    }
    return all;
  }

  /** A project as of `version` (default: the latest), with its files. */
  async project(name: string, version?: string): Promise<MerginProject> {
    const query = version ? `?version=${encodeURIComponent(version)}` : '';
    const project = await this.get<MerginProject>(
      `/v1/project/${this.projectPath(name)}${query}`,
      `project ${this.access.workspace}/${name}${version ? ` at version ${version}` : ''}`,
    );
    if (!Array.isArray(project?.files)) throw new ConnectorError('invalid_response', `${this.label} described project ${name} without a file list`, {}, false);
    return project;
  }

  /** The project's versions, newest first (at most the latest 100). */
  async versions(name: string): Promise<MerginVersion[]> {
    const got = await this.get<{ versions?: MerginVersion[] }>(
      `/v1/project/versions/paginated/${this.projectPath(name)}?page=1&per_page=100&descending=true`,
      `project ${this.access.workspace}/${name}`,
    );
    return Array.isArray(got?.versions) ? got.versions : [];
  }

  async download(name: string, version: string, file: string, local: string): Promise<number> {
    const url = `${this.base}/v1/project/raw/${this.projectPath(name)}?file=${encodeURIComponent(file)}&version=${encodeURIComponent(version)}`;
    try {
      const got = await this.authed((headers) =>
        download({ url, headers, label: `${this.label}: ${name}/${file}`, filename: path.basename(local) }, { ...this.ctx, workDir: path.dirname(local) }),
      );
      return got.bytes;
    } catch (error) {
      if (error instanceof ConnectorError && error.reason === 'not_found')
        throw new ConnectorError('not_found', `${this.label}: project ${name} has no file ${file} at ${version}`, { file, version }, false);
      throw error;
    }
  }
}
