import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { formOrJson, HttpAnswer, readBody, sendBytes, sendJson, serveStandIn, type StandIn } from '../standin.js';

/*
 * A stand-in for QFieldCloud's REST API (/api/v1/), written from opengisch/QFieldCloud's views
 * (auth, projects, files) and qfieldcloud-sdk's requests; no QFieldCloud server can be installed
 * from the package registries. It is checked in the suite by qfieldcloud-sdk itself
 * (test/servers/vendor-clients/check_qfieldcloud.py), so it answers what the real one does:
 *
 *   POST auth/login/                 {username, password} as form or JSON → {token, username, email}; wrong → 400
 *   GET  auth/user/                  the signed-in user
 *   GET  projects/?limit&offset      projects the user may read, paged; X-Next-Page when more follow
 *   GET  projects/{id}/              one project (404 unknown, 403 not a collaborator)
 *   GET  files/{id}/                 [{name, size, md5sum, sha256, last_modified, is_attachment, versions: […]}]
 *   GET  files/{id}/{name}/[?version] 302 to presigned storage (/storage/…?signature=…), as the real server
 *                                    answers with object storage behind it
 *
 * `Authorization: Token <token>` (keyword in any case, as Django REST framework accepts it);
 * without a valid one every call but login answers 401. Paths work with and without the final slash.
 */

interface Version {
  version_id: string;
  body: Buffer;
  md5sum: string;
  sha256: string;
  last_modified: Date;
}

interface Project {
  id: string;
  name: string;
  owner: string;
  description: string;
  created_at: string;
  updated_at: string;
  data_last_updated_at: string;
  collaborators: Set<string>;
  files: Map<string, Version[]>;
}

export interface QfcUser {
  username: string;
  password: string;
  token: string;
}

export interface QfcStandIn extends StandIn {
  /** What the presigned storage (another origin) was asked. */
  storageRequests: StandIn['requests'];
  /** A user who owns the projects created with addProject. */
  user: QfcUser;
  /** A valid user who is no collaborator of any project. */
  stranger: QfcUser;
  addProject(name: string, description?: string): string;
  /** Uploads a file (a new version when the name exists), as QField or QFieldSync would. */
  putFile(projectId: string, name: string, body: Buffer): void;
}

const stamp = (d: Date) => {
  // QFieldCloud formats last_modified as "%d.%m.%Y %H:%M:%S %Z".
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}.${p(d.getUTCMonth() + 1)}.${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} UTC`;
};

export async function startQfieldcloud(): Promise<QfcStandIn> {
  const users: QfcUser[] = [
    { username: 'surveyor', password: `pw-${randomBytes(8).toString('hex')}`, token: randomBytes(20).toString('hex') },
    { username: 'stranger', password: `pw-${randomBytes(8).toString('hex')}`, token: randomBytes(20).toString('hex') },
  ];
  const projects = new Map<string, Project>();
  const signingKey = randomBytes(16);
  const sign = (key: string) => createHmac('sha256', signingKey).update(key).digest('hex');

  const signedIn = (authorization: string | undefined): QfcUser => {
    const m = /^token\s+(\S+)$/i.exec(authorization ?? '');
    const user = m && users.find((u) => u.token === m[1]);
    if (!user)
      throw new HttpAnswer(401, {
        code: 'not_authenticated',
        message: 'Authentication credentials were not provided or are invalid.',
        detail: 'Invalid token.',
      });
    return user;
  };
  const readable = (id: string, user: QfcUser): Project => {
    const project = projects.get(id);
    if (!project) throw new HttpAnswer(404, { code: 'object_not_found', detail: id });
    if (!project.collaborators.has(user.username))
      throw new HttpAnswer(403, { code: 'permission_denied', detail: 'You do not have permission to perform this action.' });
    return project;
  };
  const projectJson = (p: Project, user: QfcUser) => ({
    id: p.id,
    name: p.name,
    owner: p.owner,
    description: p.description,
    is_public: false,
    private: true,
    created_at: p.created_at,
    updated_at: p.updated_at,
    data_last_updated_at: p.data_last_updated_at,
    status: 'ok',
    user_role: p.owner === user.username ? 'admin' : 'reader',
    user_role_origin: p.owner === user.username ? 'project_owner' : 'collaborator',
  });

  // Presigned storage on an origin of its own, as object storage is (the API token must not go there).
  const storage = await serveStandIn(async (req, res, url) => {
    const path = url.pathname;
    {
      const key = decodeURIComponent(path.slice('/storage/'.length));
      if (url.searchParams.get('signature') !== sign(key)) throw new HttpAnswer(403, { Code: 'SignatureDoesNotMatch' });
      const [, projectId, ...rest] = key.split('/');
      const versionId = url.searchParams.get('versionId');
      const versions = projects.get(projectId!)?.files.get(rest.join('/'));
      const version = versionId ? versions?.find((v) => v.version_id === versionId) : versions?.at(-1);
      if (!version) throw new HttpAnswer(404, { Code: 'NoSuchKey' });
      return sendBytes(req, res, version.body, 'application/octet-stream', {
        etag: `"${version.md5sum}"`,
        'content-disposition': `attachment; filename="${rest.at(-1)}"`,
      });
    }
  });

  const standIn = await serveStandIn(async (req, res, url) => {
    const path = url.pathname.replace(/\/+$/, '');
    if (!path.startsWith('/api/v1/')) throw new HttpAnswer(404, { detail: 'Not found.' });
    const route = path.slice('/api/v1/'.length);

    if (route === 'auth/login' && req.method === 'POST') {
      const body = formOrJson(await readBody(req), req.headers['content-type']);
      const user = users.find((u) => u.username === body.username && u.password === body.password);
      if (!user) throw new HttpAnswer(400, { non_field_errors: ['Unable to log in with provided credentials.'] });
      return sendJson(res, 200, { token: user.token, username: user.username, email: `${user.username}@example.org`, avatar_url: null });
    }
    if (req.method !== 'GET') throw new HttpAnswer(405, { detail: `Method "${req.method}" not allowed.` });
    const user = signedIn(req.headers.authorization);
    if (route === 'auth/user') return sendJson(res, 200, { username: user.username, email: `${user.username}@example.org`, type: 1 });

    if (route === 'projects') {
      const limit = Math.min(Number(url.searchParams.get('limit') ?? 100) || 100, 1000);
      const offset = Number(url.searchParams.get('offset') ?? 0) || 0;
      const visible = [...projects.values()].filter((p) => p.collaborators.has(user.username));
      const page = visible.slice(offset, offset + limit);
      const next: Record<string, string> =
        offset + limit < visible.length ? { 'x-next-page': `${standIn.url}/api/v1/projects/?limit=${limit}&offset=${offset + limit}` } : {};
      return sendJson(
        res,
        200,
        page.map((p) => projectJson(p, user)),
        next,
      );
    }
    let m = /^projects\/([^/]+)$/.exec(route);
    if (m) return sendJson(res, 200, projectJson(readable(m[1]!, user), user));

    m = /^files\/([^/]+)$/.exec(route);
    if (m) {
      const project = readable(m[1]!, user);
      const list = [...project.files.entries()].map(([name, versions]) => {
        const latest = versions.at(-1)!;
        return {
          name,
          size: latest.body.length,
          md5sum: latest.md5sum,
          sha256: latest.sha256,
          last_modified: stamp(latest.last_modified),
          is_attachment: name.startsWith('DCIM/'),
          versions: versions.map((v, i) => ({
            size: v.body.length,
            md5sum: v.md5sum,
            sha256: v.sha256,
            version_id: v.version_id,
            last_modified: stamp(v.last_modified),
            is_latest: i === versions.length - 1,
            display: stamp(v.last_modified),
          })),
        };
      });
      return sendJson(res, 200, list);
    }
    m = /^files\/([^/]+)\/(.+)$/.exec(route);
    if (m) {
      const project = readable(m[1]!, user);
      const name = decodeURIComponent(m[2]!);
      const versions = project.files.get(name);
      const version = url.searchParams.get('version');
      if (!versions || (version && !versions.some((v) => v.version_id === version))) throw new HttpAnswer(404, { code: 'object_not_found', detail: name });
      const key = `projects/${project.id}/${name}`;
      const location = `${storage.url}/storage/${encodeURIComponent(key)}?signature=${sign(key)}${version ? `&versionId=${version}` : ''}`;
      res.writeHead(302, { location, 'content-length': 0 });
      return void res.end();
    }
    throw new HttpAnswer(404, { detail: 'Not found.' });
  });

  return {
    ...standIn,
    storageRequests: storage.requests,
    async stop() {
      await standIn.stop();
      await storage.stop();
    },
    user: users[0]!,
    stranger: users[1]!,
    addProject(name, description = '') {
      const id = randomUUID();
      const now = new Date().toISOString();
      projects.set(id, {
        id,
        name,
        owner: users[0]!.username,
        description,
        created_at: now,
        updated_at: now,
        data_last_updated_at: now,
        collaborators: new Set([users[0]!.username]),
        files: new Map(),
      });
      return id;
    },
    putFile(projectId, name, body) {
      const project = projects.get(projectId)!;
      const versions = project.files.get(name) ?? [];
      versions.push({
        version_id: randomUUID(),
        body,
        md5sum: createHash('md5').update(body).digest('hex'),
        sha256: createHash('sha256').update(body).digest('hex'),
        last_modified: new Date(),
      });
      project.files.set(name, versions);
      project.data_last_updated_at = new Date().toISOString();
    },
  };
}
