import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { HttpAnswer, readBody, sendBytes, sendJson, serveStandIn, type StandIn } from '../standin.js';

/*
 * A stand-in for the Mergin Maps server API, written from MerginMaps/server's v1 project API and
 * python-api-client (mergin-client); no Mergin Maps server can be installed from the package
 * registries. It is checked in the suite by mergin-client itself
 * (test/servers/vendor-clients/check_merginmaps.py), so it answers what the real one does:
 *
 *   GET  /config                                   server type and version (no auth)
 *   POST /v1/auth/login                            {login, password} → {session: {token, expire}, username, …}; wrong → 401
 *   GET  /v1/user/profile                          the signed-in user
 *   GET  /v1/project/paginated?only_namespace&page&per_page   {projects: […], count}
 *   GET  /v1/project/{ns}/{name}[?version=vN]      project info at a version: files [{path, size, checksum (SHA-1), mtime}]
 *   GET  /v1/project/versions/paginated/{ns}/{name}?page&per_page&descending   {versions: […], count}
 *   GET  /v1/project/raw/{ns}/{name}?file&version[&diff]   the file as of that version (Range → 206, as the client asks in chunks)
 *
 * `Authorization: Bearer <token>`; without a valid one every call but /config and login answers
 * 401; a user outside the workspace gets 403.
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
  /** Pushes a new project version with these files changed or added; answers its name (v2 …). */
  push(project: string, files: Record<string, Buffer>): string;
}

export async function startMerginmaps(): Promise<MerginStandIn> {
  const users: MerginUser[] = [
    { username: 'surveyor', password: `pw-${randomBytes(8).toString('hex')}` },
    { username: 'stranger', password: `pw-${randomBytes(8).toString('hex')}` },
  ];
  const workspace = 'field-team';
  const sessions = new Map<string, MerginUser>();
  const projects = new Map<string, Project>();

  const signedIn = (authorization: string | undefined): MerginUser => {
    const m = /^Bearer\s+(\S+)$/.exec(authorization ?? '');
    const user = m && sessions.get(m[1]!);
    if (!user) throw new HttpAnswer(401, { detail: 'Authentication information is missing or invalid.', code: 'Unauthorized' });
    return user;
  };
  const find = (ns: string, name: string, user: MerginUser): Project => {
    const project = projects.get(`${ns}/${name}`);
    if (!project) throw new HttpAnswer(404, { detail: 'Project not found' });
    if (user.username !== users[0]!.username) throw new HttpAnswer(403, { detail: 'You do not have permissions for this project' });
    return project;
  };
  const at = (project: Project, version: string | null): ProjectVersion => {
    const v = version ? project.versions.find((x) => x.name === version) : project.versions.at(-1);
    if (!v) throw new HttpAnswer(404, { detail: `Version ${version} not found` });
    return v;
  };
  const info = (p: Project, v: ProjectVersion) => ({
    id: p.id,
    name: p.name,
    namespace: p.namespace,
    version: v.name,
    created: p.created,
    updated: p.versions.at(-1)!.created,
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
  const versionJson = (p: Project, v: ProjectVersion) => ({
    name: v.name,
    author: v.author,
    created: v.created,
    project_name: p.name,
    namespace: p.namespace,
    changes: { added: [], updated: [], removed: [] },
    project_size: 0,
    user_agent: 'stand-in',
  });

  const standIn = await serveStandIn(async (req, res, url) => {
    const path = url.pathname;
    if (path === '/config') return sendJson(res, 200, { server_type: 'ce', version: '2025.2.0', diagnostic_logs_url: '', user_self_registration: false });
    if (path === '/v1/auth/login' && req.method === 'POST') {
      const body = JSON.parse((await readBody(req)).toString('utf8') || '{}') as { login?: string; password?: string };
      const user = users.find((u) => u.username === body.login && u.password === body.password);
      if (!user) throw new HttpAnswer(401, { detail: 'Invalid username or password' });
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
    if (req.method !== 'GET') throw new HttpAnswer(405, { detail: 'Method not allowed' });
    const user = signedIn(req.headers.authorization);
    if (path === '/v1/user/profile') return sendJson(res, 200, { username: user.username, email: `${user.username}@example.org` });

    if (path === '/v1/project/paginated') {
      const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
      const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? 50) || 50);
      const only = url.searchParams.get('only_namespace');
      const visible = user.username === users[0]!.username ? [...projects.values()].filter((p) => !only || p.namespace === only) : [];
      const slice = visible.slice((page - 1) * perPage, page * perPage).map((p) => {
        const { files: _files, ...rest } = info(p, p.versions.at(-1)!);
        return rest;
      });
      return sendJson(res, 200, { projects: slice, count: visible.length });
    }
    let m = /^\/v1\/project\/versions\/paginated\/([^/]+)\/([^/]+)$/.exec(path);
    if (m) {
      const project = find(decodeURIComponent(m[1]!), decodeURIComponent(m[2]!), user);
      const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
      const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? 100) || 100);
      const ordered = url.searchParams.get('descending') === 'true' ? [...project.versions].reverse() : project.versions;
      return sendJson(res, 200, {
        versions: ordered.slice((page - 1) * perPage, page * perPage).map((v) => versionJson(project, v)),
        count: project.versions.length,
      });
    }
    m = /^\/v1\/project\/raw\/([^/]+)\/([^/]+)$/.exec(path);
    if (m) {
      const project = find(decodeURIComponent(m[1]!), decodeURIComponent(m[2]!), user);
      const version = at(project, url.searchParams.get('version'));
      const file = version.files.get(url.searchParams.get('file') ?? '');
      if (!file) throw new HttpAnswer(404, { detail: 'File not found' });
      return sendBytes(req, res, file.body, 'application/octet-stream');
    }
    m = /^\/v1\/project\/([^/]+)\/([^/]+)$/.exec(path);
    if (m) {
      const project = find(decodeURIComponent(m[1]!), decodeURIComponent(m[2]!), user);
      return sendJson(res, 200, info(project, at(project, url.searchParams.get('version'))));
    }
    throw new HttpAnswer(404, { detail: 'Not found' });
  });

  return {
    ...standIn,
    user: users[0]!,
    stranger: users[1]!,
    workspace,
    addProject(name) {
      const now = new Date().toISOString();
      projects.set(`${workspace}/${name}`, {
        id: randomUUID(),
        name,
        namespace: workspace,
        created: now,
        versions: [{ name: 'v0', author: users[0]!.username, created: now, files: new Map() }],
      });
    },
    push(name, files) {
      const project = projects.get(`${workspace}/${name}`)!;
      const previous = project.versions.at(-1)!;
      const next = new Map(previous.files);
      const now = new Date().toISOString();
      for (const [path, body] of Object.entries(files)) next.set(path, { path, body, checksum: createHash('sha1').update(body).digest('hex'), mtime: now });
      const version = { name: `v${project.versions.length}`, author: users[0]!.username, created: now, files: next };
      project.versions.push(version);
      return version.name;
    },
  };
}
