import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { HttpAnswer, readBody, sendBytes, sendJson, serveStandIn, type StandIn } from '../standin.js';

/*
 * A stand-in for the Mergin Maps server API. It follows MerginMaps/server 2026.4.x as its source
 * reads at commit 196a8a9 (May 2026; checked in server/mergin: sync/public_api.yaml and
 * public_api_controller.py for the routes and GET /v1/workspaces, sync/schemas.py for project,
 * list and version bodies, app.py for error bodies and dates) and python-api-client
 * (mergin-client); no Mergin Maps server can be installed from the package registries. It is
 * checked in the suite by mergin-client itself (test/servers/vendor-clients/check_merginmaps.py):
 *
 *   GET  /config                                   server type and version (no auth)
 *   POST /v1/auth/login                            {login, password} → {session: {token, expire}, username, …}; wrong → 401
 *   GET  /v1/user/profile                          the signed-in user
 *   GET  /v1/workspaces                            [{id, name, description, project_count, disk_usage, storage, role}] of the user
 *   GET  /v1/project/paginated?only_namespace&page&per_page   {projects: […], count}; an unknown namespace: an empty list
 *   GET  /v1/project/{ns}/{name}[?version=vN]      project info at a version: files [{path, size, checksum (SHA-1), mtime}]
 *   GET  /v1/project/versions/paginated/{ns}/{name}?page&per_page&descending   {versions: […], count}
 *   GET  /v1/project/raw/{ns}/{name}?file&version[&diff]   the file as of that version (Range → 206, as the client asks in chunks)
 *
 * As the real server: a project's history starts at v1 (a project with no push is at v0 and lists
 * no versions); a version's `changes` are counts ({added, updated, updated_diff, removed}); the
 * project list gives `updated` as Flask renders a datetime (RFC 1123, "Mon, 25 May 2026 17:49:39
 * GMT") and the project detail as "2026-05-25T17:49:39Z"; errors are application/problem+json
 * {code, detail}. `Authorization: Bearer <token>`; without one every call but /config and login
 * answers 401; a user outside the workspace gets 403. A stale session (expireSessions) answers 403
 * for a project and empty lists for workspaces and projects, not 401, as the real server does once
 * the session's user can no longer be loaded.
 */

interface StoredFile {
  path: string;
  body: Buffer;
  checksum: string;
  mtime: string;
}

interface ProjectVersion {
  name: string;
  author: string;
  created: string;
  files: Map<string, StoredFile>;
}

interface Project {
  id: string;
  name: string;
  namespace: string;
  created: string;
  versions: ProjectVersion[];
}

export interface MerginUser {
  username: string;
  password: string;
}

export interface MerginStandIn extends StandIn {
  user: MerginUser;
  /** A valid user who is not a member of the workspace. */
  stranger: MerginUser;
  workspace: string;
  addProject(name: string): void;
  /** Makes every session stale (as after a restart with another secret key, or a long pause). */
  expireSessions(): void;
  /** Makes every session stale when the next request for a path starting with `prefix` arrives. */
  expireSessionsAt(prefix: string): void;
  /** Sign-ins answered with a token. */
  signIns: number;
  /** Pushes a new project version with these files changed or added; answers its name (v2 …). */
  push(project: string, files: Record<string, Buffer>): string;
}

export async function startMerginmaps(): Promise<MerginStandIn> {
  const users: MerginUser[] = [
    { username: 'surveyor', password: `pw-${randomBytes(8).toString('hex')}` },
    { username: 'stranger', password: `pw-${randomBytes(8).toString('hex')}` },
  ];
  const workspace = 'field-team';
  const sessions = new Map<string, MerginUser | 'stale'>();
  const projects = new Map<string, Project>();
  let signIns = 0;
  let staleAt: string | null = null;
  const problem = (status: number, code: string, detail: string) =>
    new HttpAnswer(status, { code, detail: `${detail} (${code})` }, { 'content-type': 'application/problem+json' });
  /** Flask's rendering of a datetime in a JSON body (http_date). */
  const httpDate = (iso: string) => new Date(iso).toUTCString();
  /** DateTimeWithZ: "%Y-%m-%dT%H:%M:%S%zZ" of a naive UTC datetime. */
  const withZ = (iso: string) => `${iso.slice(0, 19)}Z`;

  const signedIn = (authorization: string | undefined): MerginUser | 'stale' => {
    const m = /^Bearer\s+(\S+)$/.exec(authorization ?? '');
    const user = m && sessions.get(m[1]!);
    if (!user) throw new HttpAnswer(401, { detail: 'Authentication information is missing or invalid.', code: 'Unauthorized' });
    return user;
  };
  const find = (ns: string, name: string, user: MerginUser | 'stale'): Project => {
    const project = projects.get(`${ns}/${name}`);
    if (!project) throw problem(404, 'ProjectNotFound', 'Project not found');
    if (user === 'stale' || user.username !== users[0]!.username) throw problem(403, 'Forbidden', 'You do not have permissions for this project');
    return project;
  };
  const empty = (p: Project): ProjectVersion => ({ name: 'v0', author: users[0]!.username, created: p.created, files: new Map() });
  const at = (project: Project, version: string | null): ProjectVersion => {
    const v = version ? (version === 'v0' ? empty(project) : project.versions.find((x) => x.name === version)) : (project.versions.at(-1) ?? empty(project));
    if (!v) throw problem(404, 'VersionNotFound', `Version ${version} not found`);
    return v;
  };
  const latest = (p: Project) => p.versions.at(-1) ?? empty(p);
  const info = (p: Project, v: ProjectVersion) => ({
    id: p.id,
    name: p.name,
    namespace: p.namespace,
    version: v.name,
    created: withZ(p.created),
    updated: withZ(latest(p).created),
    creator: 1,
    access: {
      public: false,
      owners: [1],
      ownersnames: [users[0]!.username],
      readers: [1],
      readersnames: [users[0]!.username],
      writers: [1],
      writersnames: [users[0]!.username],
    },
    permissions: { delete: true, update: true, upload: true },
    tags: [],
    uploads: [],
    disk_usage: [...v.files.values()].reduce((s, f) => s + f.body.length, 0),
    role: 'owner',
    workspace_id: 1,
    files: [...v.files.values()].map((f) => ({ path: f.path, size: f.body.length, checksum: f.checksum, mtime: f.mtime })),
  });
  const versionJson = (p: Project, v: ProjectVersion, i: number) => {
    const before = i > 0 ? p.versions[i - 1]!.files : new Map<string, StoredFile>();
    const added = [...v.files.keys()].filter((k) => !before.has(k)).length;
    const updated = [...v.files.entries()].filter(([k, f]) => before.has(k) && before.get(k)!.checksum !== f.checksum).length;
    return {
      name: v.name,
      author: v.author,
      created: withZ(v.created),
      project_name: p.name,
      namespace: p.namespace,
      changes: { added, updated, updated_diff: 0, removed: [...before.keys()].filter((k) => !v.files.has(k)).length },
      project_size: [...v.files.values()].reduce((s, f) => s + f.body.length, 0),
    };
  };

  const standIn = await serveStandIn(async (req, res, url) => {
    const path = url.pathname;
    if (path === '/config') return sendJson(res, 200, { server_type: 'ce', version: '2025.2.0', diagnostic_logs_url: '', user_self_registration: false });
    if (path === '/v1/auth/login' && req.method === 'POST') {
      const body = JSON.parse((await readBody(req)).toString('utf8') || '{}') as { login?: string; password?: string };
      const user = users.find((u) => u.username === body.login && u.password === body.password);
      if (!user) throw problem(401, 'Unauthorized', 'Invalid username or password');
      signIns++;
      const token = randomBytes(24).toString('base64url');
      sessions.set(token, user);
      const expire = new Date(Date.now() + 12 * 3600_000).toISOString();
      return sendJson(res, 200, {
        session: { token, expire },
        username: user.username,
        email: `${user.username}@example.org`,
        id: users.indexOf(user) + 1,
        receive_notifications: false,
        verified_email: true,
      });
    }
    if (req.method !== 'GET') throw problem(405, 'MethodNotAllowed', 'Method not allowed');
    if (staleAt !== null && path.startsWith(staleAt)) {
      staleAt = null;
      for (const token of sessions.keys()) sessions.set(token, 'stale');
    }
    const user = signedIn(req.headers.authorization);
    if (path === '/v1/user/profile') {
      if (user === 'stale') throw problem(403, 'Forbidden', 'Forbidden');
      return sendJson(res, 200, { username: user.username, email: `${user.username}@example.org` });
    }
    const member = user !== 'stale' && user.username === users[0]!.username;
    if (path === '/v1/workspaces') {
      const own = [...projects.values()].filter((p) => p.namespace === workspace);
      return sendJson(
        res,
        200,
        member ? [{ id: 1, name: workspace, description: null, project_count: own.length, disk_usage: 0, storage: 104857600, role: 'owner' }] : [],
      );
    }

    if (path === '/v1/project/paginated') {
      const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
      const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? 50) || 50);
      const only = url.searchParams.get('only_namespace');
      const visible = member ? [...projects.values()].filter((p) => !only || p.namespace === only) : [];
      const slice = visible.slice((page - 1) * perPage, page * perPage).map((p) => {
        const { files: _files, ...rest } = info(p, latest(p));
        return { ...rest, created: withZ(p.created), updated: httpDate(latest(p).created) };
      });
      return sendJson(res, 200, { projects: slice, count: visible.length });
    }
    let m = /^\/v1\/project\/versions\/paginated\/([^/]+)\/([^/]+)$/.exec(path);
    if (m) {
      const project = find(decodeURIComponent(m[1]!), decodeURIComponent(m[2]!), user);
      const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
      const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? 100) || 100);
      const all = project.versions.map((v, i) => versionJson(project, v, i));
      const ordered = url.searchParams.get('descending') === 'true' ? all.reverse() : all;
      return sendJson(res, 200, {
        versions: ordered.slice((page - 1) * perPage, page * perPage),
        count: project.versions.length,
      });
    }
    m = /^\/v1\/project\/raw\/([^/]+)\/([^/]+)$/.exec(path);
    if (m) {
      const project = find(decodeURIComponent(m[1]!), decodeURIComponent(m[2]!), user);
      const version = at(project, url.searchParams.get('version'));
      const file = version.files.get(url.searchParams.get('file') ?? '');
      if (!file) throw problem(404, 'FileNotFound', 'File not found');
      return sendBytes(req, res, file.body, 'application/octet-stream');
    }
    m = /^\/v1\/project\/([^/]+)\/([^/]+)$/.exec(path);
    if (m) {
      const project = find(decodeURIComponent(m[1]!), decodeURIComponent(m[2]!), user);
      return sendJson(res, 200, info(project, at(project, url.searchParams.get('version'))));
    }
    throw problem(404, 'NotFound', 'Not found');
  });

  return {
    ...standIn,
    user: users[0]!,
    stranger: users[1]!,
    workspace,
    get signIns() {
      return signIns;
    },
    expireSessions() {
      for (const token of sessions.keys()) sessions.set(token, 'stale');
    },
    expireSessionsAt(prefix) {
      staleAt = prefix;
    },
    addProject(name) {
      const now = new Date().toISOString();
      projects.set(`${workspace}/${name}`, { id: randomUUID(), name, namespace: workspace, created: now, versions: [] });
    },
    push(name, files) {
      const project = projects.get(`${workspace}/${name}`)!;
      const next = new Map(project.versions.at(-1)?.files);
      const now = new Date().toISOString();
      for (const [path, body] of Object.entries(files)) next.set(path, { path, body, checksum: createHash('sha1').update(body).digest('hex'), mtime: now });
      const version = { name: `v${project.versions.length + 1}`, author: users[0]!.username, created: now, files: next };
      project.versions.push(version);
      return version.name;
    },
  };
}
