import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { formOrJson, HttpAnswer, readBody, sendBytes, sendJson, serveStandIn, type StandIn } from '../standin.js';

/*
 * A stand-in for QFieldCloud's REST API (/api/v1/). It follows opengisch/QFieldCloud v26.25
 * (commit ccae91d, August 2026; checked in docker-app/qfieldcloud: authentication/models.py and
 * authentication.py for tokens, core/rest_utils.py and core/exceptions.py for error bodies,
 * filestorage/view_helpers.py for downloads, project/models.py for project names) and
 * qfieldcloud-sdk's requests; no QFieldCloud server can be installed from the package registries.
 * It is checked in the suite by qfieldcloud-sdk itself (test/servers/vendor-clients/check_qfieldcloud.py):
 *
 *   POST auth/login/                 {username, password} as form or JSON → {token, username, email};
 *                                    wrong → 401 {code: "authentication_failed", message}
 *   GET  auth/user/                  the signed-in user
 *   GET  projects/?limit&offset      projects the user may read, paged; X-Next-Page when more follow
 *   GET  projects/{id}/              one project (404 unknown, 403 not a collaborator)
 *   GET  files/{id}/                 [{name, size, md5sum, sha256, last_modified, is_attachment, versions: […]}]
 *   GET  files/{id}/{name}/[?version] the file itself, 200 (206 for a Range), as nginx answers it
 *                                    through X-Accel-Redirect: no redirect to storage
 *
 * Errors are {code, message} with the status of QFieldCloud's exception (401, 403, 404, 405).
 * `Authorization: Token <token>` (keyword in any case, as Django REST framework accepts it).
 * Tokens behave as AuthToken does: each has a client type guessed from the User-Agent at sign-in
 * (`sdk|…`, `cli|…`, `qfield|…`, a QGIS or browser agent, else "unknown"); for the single-token
 * types (qfield, qfieldsync, unknown) every sign-in and every authenticated request expires the
 * user's other live tokens of that type; an expired or unknown token answers 401
 * {code: "token_authentication_failed"}. Each user also has an API token of type "sdk"
 * (`user.token`), which sign-ins of other types leave alone. Project names are letters, digits,
 * `_`, `-` and `.` (no spaces), as the server validates them. Paths work with and without the
 * final slash.
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

interface Token {
  key: string;
  user: QfcUser;
  clientType: string;
  expired: boolean;
}

/** AuthToken.guess_client_type. */
const clientType = (userAgent: string): string => {
  if (userAgent.startsWith('qfield|')) return 'qfield';
  if (userAgent.startsWith('sdk|')) return 'sdk';
  if (userAgent.startsWith('cli|')) return 'cli';
  if (/ QGIS\/[34]\d{4}(\/.*)?$/.test(userAgent)) return 'qfieldsync';
  if (/^Mozilla\/5.0 .+?(AppleWebKit\/\d{1,5}.\d{1,5} \(KHTML, like Gecko\)|Firefox\/[\d.]{1,5})/.test(userAgent)) return 'browser';
  return 'unknown';
};
const SINGLE_TOKEN_CLIENTS = new Set(['qfield', 'qfieldsync', 'unknown']);

export interface QfcStandIn extends StandIn {
  /** Sign-ins answered with a token, per user name. */
  signIns: Map<string, number>;
  /** Expires every token of every user, as AUTH_TOKEN_EXPIRATION_HOURS does in time. */
  expireTokens(): void;
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
  const tokens: Token[] = users.map((user) => ({ key: user.token, user, clientType: 'sdk', expired: false }));
  const signIns = new Map<string, number>();
  /** AuthToken.save: a single-token client's save expires the user's other live tokens of its type. */
  const save = (token: Token) => {
    if (!SINGLE_TOKEN_CLIENTS.has(token.clientType)) return;
    for (const other of tokens) if (other !== token && other.user === token.user && other.clientType === token.clientType) other.expired = true;
  };

  const signedIn = (authorization: string | undefined): QfcUser => {
    const m = /^token\s+(\S+)$/i.exec(authorization ?? '');
    if (!m) throw new HttpAnswer(401, { code: 'not_authenticated', message: 'Not authenticated' });
    const token = tokens.find((t) => t.key === m[1]);
    if (!token || token.expired) throw new HttpAnswer(401, { code: 'token_authentication_failed', message: 'Token authentication failed' });
    save(token); // the last-used time is saved on every request
    return token.user;
  };
  const readable = (id: string, user: QfcUser): Project => {
    const project = projects.get(id);
    if (!project) throw new HttpAnswer(404, { code: 'object_not_found', message: 'Object not found' });
    if (!project.collaborators.has(user.username)) throw new HttpAnswer(403, { code: 'permission_denied', message: 'Permission denied' });
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

  const standIn = await serveStandIn(async (req, res, url) => {
    const path = url.pathname.replace(/\/+$/, '');
    if (!path.startsWith('/api/v1/')) throw new HttpAnswer(404, { code: 'object_not_found', message: 'Object not found' });
    const route = path.slice('/api/v1/'.length);

    if (route === 'auth/login' && req.method === 'POST') {
      const body = formOrJson(await readBody(req), req.headers['content-type']);
      const user = users.find((u) => u.username === body.username && u.password === body.password);
      if (!user) throw new HttpAnswer(401, { code: 'authentication_failed', message: 'Authentication failed' });
      const token: Token = { key: randomBytes(30).toString('hex'), user, clientType: clientType(String(req.headers['user-agent'] ?? '')), expired: false };
      tokens.push(token);
      save(token);
      signIns.set(user.username, (signIns.get(user.username) ?? 0) + 1);
      return sendJson(res, 200, { token: token.key, username: user.username, email: `${user.username}@example.org`, avatar_url: null });
    }
    if (req.method !== 'GET') throw new HttpAnswer(405, { code: 'api_error', message: 'API Error' });
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
      const chosen = version ? versions?.find((v) => v.version_id === version) : versions?.at(-1);
      if (!chosen) throw new HttpAnswer(404, { code: 'object_not_found', message: 'Object not found' });
      return sendBytes(req, res, chosen.body, 'application/octet-stream', {
        etag: `"${chosen.md5sum}"`,
        'content-disposition': `attachment; filename="${name.split('/').at(-1)}"`,
      });
    }
    throw new HttpAnswer(404, { code: 'object_not_found', message: 'Object not found' });
  });

  return {
    ...standIn,
    signIns,
    expireTokens() {
      for (const token of tokens) token.expired = true;
    },
    user: users[0]!,
    stranger: users[1]!,
    addProject(name, description = '') {
      // project/models.py (Project.name) validates names with this pattern.
      if (!/^[a-zA-Z0-9_\-.]+$/.test(name)) throw new Error(`QFieldCloud refuses the project name ${JSON.stringify(name)}: letters, digits, _ - . only`);
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
