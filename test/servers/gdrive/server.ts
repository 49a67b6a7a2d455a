import { createHash, createVerify, generateKeyPairSync, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { formOrJson, HttpAnswer, readBody, sendBytes, sendJson, serveStandIn, type StandIn } from '../standin.js';

/*
 * A stand-in for the Google Drive v3 REST API, written from Google's Drive v3 reference (files:
 * list, get, get?alt=media, export, create, update; simple, multipart and resumable uploads;
 * shared drives) and Google's OAuth 2.0 token endpoint. Drive cannot run here. It is checked in the
 * suite by google-api-python-client and google-auth (test/servers/vendor-clients/check_gdrive.py):
 * listing, downloading and uploading (resumable) files, signed in both ways this stand-in accepts:
 *
 * - a service account's self-signed JWT (RS256, iss = client_email, scope holding the Drive scope,
 *   not expired), verified with the key pair made at start (serviceAccountKey is the key file);
 * - an access token from POST /token (grant_type=refresh_token with the OAuth client and refresh
 *   token made at start; wrong ones answer 400 invalid_grant / 401 invalid_client).
 *
 * Folders are shared with principals (the service account's e-mail, the OAuth user); anything
 * else is 404 "File not found", as Drive answers for files one cannot see. Items of a shared drive
 * are found only with supportsAllDrives=true. Queries (q) understand what the clients here send:
 * `'<id>' in parents`, `name = '…'`, `mimeType = / != '…'`, `trashed = false`, joined by `and`.
 */

export const DRIVE_SCOPE = 'https://www.googleapis.com/auth/drive';
const FOLDER = 'application/vnd.google-apps.folder';
const SHEET = 'application/vnd.google-apps.spreadsheet';

interface DriveItem {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  driveId?: string;
  modifiedTime: string;
  createdTime: string;
  body: Buffer;
  /** CSV of a Sheet (what export answers). */
  csv?: string;
  appProperties: Record<string, string>;
  trashed: boolean;
  version: number;
  revisions: number;
  sharedWith: Set<string>;
}

interface Session {
  item: Partial<DriveItem> & { id?: string };
  principal: string;
  total: number;
  received: Buffer[];
  bytes: number;
  mimeType: string;
}

export interface GdriveStandIn extends StandIn {
  /** The service account's key file, as Google hands it out (token_uri points here). */
  serviceAccountKey: Record<string, string>;
  oauth: { client_id: string; client_secret: string; refresh_token: string };
  /** The principal an OAuth access token stands for. */
  oauthUser: string;
  addFolder(name: string, options?: { sharedWith?: string[]; sharedDrive?: boolean }): string;
  addFile(folderId: string, name: string, body: Buffer, options?: { mimeType?: string; csv?: string }): string;
  /** Changes a file's content as an edit in Drive would (new revision, new modifiedTime). */
  edit(id: string, body: Buffer): void;
  file(id: string): { name: string; body: Buffer; revisions: number; appProperties: Record<string, string>; parents: string[] } | undefined;
  filesIn(folderId: string): { id: string; name: string }[];
  /** How many resumable sessions were completed (large uploads go that way). */
  resumableUploads(): number;
}

const b64json = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

/** The multipart/related body of an upload: the JSON metadata part, then the media part. */
function multipartParts(body: Buffer, type: string): { metadata: Record<string, unknown>; media: Buffer; mediaType: string } {
  const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1];
  if (!boundary) throw new HttpAnswer(400, { error: { code: 400, message: 'Missing multipart boundary' } });
  const text = body.toString('latin1');
  const parts = text.split(`--${boundary}`).slice(1, -1);
  const parsed = parts.map((p) => {
    const split = p.indexOf('\r\n\r\n');
    const head = p.slice(0, split);
    const content = p.slice(split + 4).replace(/\r\n$/, '');
    return { type: /content-type:\s*([^\r\n]+)/i.exec(head)?.[1] ?? 'application/octet-stream', content: Buffer.from(content, 'latin1') };
  });
  if (parsed.length !== 2) throw new HttpAnswer(400, { error: { code: 400, message: 'Multipart upload needs metadata and media' } });
  return { metadata: JSON.parse(parsed[0]!.content.toString('utf8')) as Record<string, unknown>, media: parsed[1]!.content, mediaType: parsed[1]!.type };
}

export async function startGdrive(): Promise<GdriveStandIn> {
  const items = new Map<string, DriveItem>();
  const tokens = new Map<string, string>();
  const sessions = new Map<string, Session>();
  let completedSessions = 0;
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyId = randomBytes(20).toString('hex');
  const clientEmail = 'geoflow-test@geoflow-test.iam.gserviceaccount.com';
  const oauth = {
    client_id: `${randomBytes(6).toString('hex')}.apps.googleusercontent.com`,
    client_secret: `GOCSPX-${randomBytes(12).toString('hex')}`,
    refresh_token: `1//${randomBytes(24).toString('base64url')}`,
  };
  const oauthUser = 'field-office@example.org';
  const newId = () =>
    randomBytes(16)
      .toString('base64url')
      .replace(/[^A-Za-z0-9]/g, 'x')
      .slice(0, 28);
  let baseUrl = '';

  function principalOf(req: IncomingMessage): string {
    const m = /^Bearer\s+(\S+)$/.exec(req.headers.authorization ?? '');
    const unauthenticated = new HttpAnswer(
      401,
      {
        error: {
          code: 401,
          message: 'Request had invalid authentication credentials.',
          status: 'UNAUTHENTICATED',
          errors: [{ reason: 'authError', domain: 'global' }],
        },
      },
      { 'www-authenticate': 'Bearer realm="https://accounts.google.com/"' },
    );
    if (!m) throw unauthenticated;
    const token = m[1]!;
    const known = tokens.get(token);
    if (known) return known;
    const parts = token.split('.');
    if (parts.length !== 3) throw unauthenticated;
    try {
      const header = b64json(parts[0]!);
      const claims = b64json(parts[1]!);
      const verifier = createVerify('RSA-SHA256');
      verifier.update(`${parts[0]}.${parts[1]}`);
      const valid = header.alg === 'RS256' && verifier.verify(publicKey, Buffer.from(parts[2]!, 'base64url'));
      const scopes = String(claims.scope ?? '').split(/\s+/);
      const fresh = typeof claims.exp === 'number' && claims.exp * 1000 > Date.now();
      if (valid && fresh && claims.iss === clientEmail && scopes.includes(DRIVE_SCOPE)) return clientEmail;
    } catch {
      // fall through: not a JWT we can read
    }
    throw unauthenticated;
  }

  const notFound = (id: string) =>
    new HttpAnswer(404, {
      error: {
        code: 404,
        message: `File not found: ${id}.`,
        errors: [{ reason: 'notFound', domain: 'global', message: `File not found: ${id}.`, location: 'fileId', locationType: 'parameter' }],
      },
    });
  const rootFolder = (item: DriveItem): DriveItem => {
    let current = item;
    for (let i = 0; i < 20 && current.parents[0] && items.get(current.parents[0]); i++) current = items.get(current.parents[0])!;
    return current;
  };
  const canSee = (item: DriveItem, who: string, allDrives: boolean) => (!item.driveId || allDrives) && rootFolder(item).sharedWith.has(who);
  const visible = (id: string, who: string, allDrives: boolean): DriveItem => {
    const item = items.get(id);
    if (!item || !canSee(item, who, allDrives)) throw notFound(id);
    return item;
  };
  const resource = (item: DriveItem, fields: string | null) => {
    const full = {
      kind: 'drive#file',
      id: item.id,
      name: item.name,
      mimeType: item.mimeType,
      parents: item.parents,
      trashed: item.trashed,
      modifiedTime: item.modifiedTime,
      createdTime: item.createdTime,
      version: String(item.version),
      appProperties: item.appProperties,
      ...(item.driveId ? { driveId: item.driveId } : {}),
      ...(item.mimeType.startsWith('application/vnd.google-apps.') ? {} : { md5Checksum: md5(item.body), size: String(item.body.length) }),
    };
    // Without `fields`, Drive v3 answers the default set only.
    return fields ? full : { kind: full.kind, id: full.id, name: full.name, mimeType: full.mimeType };
  };

  /** A tiny evaluator of the q grammar the clients here use. */
  function matcher(q: string | null): (item: DriveItem) => boolean {
    if (!q) return () => true;
    const clauses = q.split(/\s+and\s+/i);
    const tests = clauses.map((clause) => {
      const unq = (s: string) => s.slice(1, -1).replace(/\\'/g, "'").replace(/\\\\/g, '\\');
      let m = /^('(?:[^'\\]|\\.)*')\s+in\s+parents$/.exec(clause.trim());
      if (m) return (i: DriveItem) => i.parents.includes(unq(m![1]!));
      m = /^(name|mimeType)\s*(=|!=)\s*('(?:[^'\\]|\\.)*')$/.exec(clause.trim());
      if (m) {
        const [, field, op, value] = m;
        return (i: DriveItem) => (op === '=' ? i[field as 'name'] === unq(value!) : i[field as 'name'] !== unq(value!));
      }
      m = /^trashed\s*=\s*(true|false)$/.exec(clause.trim());
      if (m) return (i: DriveItem) => i.trashed === (m![1] === 'true');
      throw new HttpAnswer(400, { error: { code: 400, message: 'Invalid Value', errors: [{ reason: 'invalid', location: 'q', locationType: 'parameter' }] } });
    });
    return (item) => tests.every((t) => t(item));
  }

  function store(item: Partial<DriveItem>, media: Buffer, mimeType: string, who: string, existing?: DriveItem): DriveItem {
    const now = new Date(Date.now() + (existing ? 1 : 0)).toISOString();
    if (existing) {
      existing.body = media;
      existing.modifiedTime = now;
      existing.version += 1;
      existing.revisions += 1;
      if (item.name) existing.name = item.name;
      existing.appProperties = { ...existing.appProperties, ...(item.appProperties ?? {}) };
      return existing;
    }
    const parents = item.parents?.length ? item.parents : [];
    const parent = parents[0] ? items.get(parents[0]) : undefined;
    if (!parent || !canSee(parent, who, true)) throw notFound(parents[0] ?? 'root');
    const created: DriveItem = {
      id: newId(),
      name: String(item.name ?? 'Untitled'),
      mimeType: item.mimeType ?? mimeType,
      parents,
      ...(parent.driveId ? { driveId: parent.driveId } : {}),
      modifiedTime: now,
      createdTime: now,
      body: media,
      appProperties: { ...(item.appProperties ?? {}) },
      trashed: false,
      version: 1,
      revisions: 1,
      sharedWith: new Set(),
    };
    items.set(created.id, created);
    return created;
  }

  const standIn = await serveStandIn(async (req, res, url) => {
    const path = url.pathname.replace(/\/+$/, '');
    const q = url.searchParams;
    const allDrives = q.get('supportsAllDrives') === 'true' || q.get('supportsTeamDrives') === 'true';

    if (path === '/token' && req.method === 'POST') {
      const form = formOrJson(await readBody(req), req.headers['content-type']);
      if (form.client_id !== oauth.client_id || form.client_secret !== oauth.client_secret)
        throw new HttpAnswer(401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' });
      if (form.grant_type !== 'refresh_token' || form.refresh_token !== oauth.refresh_token)
        throw new HttpAnswer(400, { error: 'invalid_grant', error_description: 'Bad Request' });
      const token = `ya29.${randomBytes(24).toString('base64url')}`;
      tokens.set(token, oauthUser);
      return sendJson(res, 200, { access_token: token, expires_in: 3599, scope: DRIVE_SCOPE, token_type: 'Bearer' });
    }

    // Resumable session URIs carry their own id (upload_id) and need no further credentials, as Google's.
    if (path.startsWith('/upload/drive/v3/files') && req.method === 'PUT' && q.get('upload_id')) {
      const session = sessions.get(q.get('upload_id')!);
      if (!session) throw new HttpAnswer(404, { error: { code: 404, message: 'Upload session not found' } });
      const chunk = await readBody(req);
      const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(req.headers['content-range'] ?? '');
      if (range && Number(range[1]) !== session.bytes) {
        // Not where the session is: say what was received, as Drive does.
        res.writeHead(308, session.bytes ? { range: `bytes=0-${session.bytes - 1}` } : {});
        return void res.end();
      }
      session.received.push(chunk);
      session.bytes += chunk.length;
      if (session.bytes < session.total) {
        res.writeHead(308, { range: `bytes=0-${session.bytes - 1}`, 'content-length': 0 });
        return void res.end();
      }
      sessions.delete(q.get('upload_id')!);
      completedSessions += 1;
      const existing = session.item.id ? items.get(session.item.id) : undefined;
      const saved = store(session.item, Buffer.concat(session.received), session.mimeType, session.principal, existing);
      return sendJson(res, 200, resource(saved, q.get('fields') ?? 'id'));
    }

    const who = principalOf(req);

    if (path === '/drive/v3/files' && req.method === 'GET') {
      const match = matcher(q.get('q'));
      const includeAll = q.get('includeItemsFromAllDrives') === 'true' && allDrives;
      const found = [...items.values()].filter((i) => canSee(i, who, includeAll) && match(i));
      if ((q.get('orderBy') ?? '').startsWith('modifiedTime desc')) found.sort((a, b) => b.modifiedTime.localeCompare(a.modifiedTime));
      const size = Math.min(Number(q.get('pageSize') ?? 100) || 100, 1000);
      const start = Number(q.get('pageToken') ?? 0) || 0;
      const page = found.slice(start, start + size);
      const more = start + size < found.length;
      return sendJson(res, 200, {
        kind: 'drive#fileList',
        incompleteSearch: false,
        files: page.map((i) => resource(i, q.get('fields'))),
        ...(more ? { nextPageToken: String(start + size) } : {}),
      });
    }

    let m = /^\/drive\/v3\/files\/([^/]+)\/export$/.exec(path);
    if (m && req.method === 'GET') {
      const item = visible(m[1]!, who, allDrives);
      if (item.mimeType !== SHEET || q.get('mimeType') !== 'text/csv')
        throw new HttpAnswer(400, { error: { code: 400, message: 'Export only supports Docs Editors files.', errors: [{ reason: 'fileNotExportable' }] } });
      return sendBytes(req, res, Buffer.from(item.csv ?? ''), 'text/csv');
    }
    m = /^\/drive\/v3\/files\/([^/]+)$/.exec(path);
    if (m && req.method === 'GET') {
      const item = visible(m[1]!, who, allDrives);
      if (q.get('alt') === 'media') {
        if (item.mimeType.startsWith('application/vnd.google-apps.'))
          throw new HttpAnswer(403, {
            error: {
              code: 403,
              message: 'Only files with binary content can be downloaded. Use Export with Docs Editors files.',
              errors: [{ reason: 'fileNotDownloadable' }],
            },
          });
        return sendBytes(req, res, item.body, 'application/octet-stream');
      }
      return sendJson(res, 200, resource(item, q.get('fields')));
    }

    m = /^\/upload\/drive\/v3\/files(?:\/([^/]+))?$/.exec(path);
    if (m && (req.method === 'POST' || req.method === 'PATCH')) {
      if ((req.method === 'PATCH') !== Boolean(m[1])) throw new HttpAnswer(404, { error: { code: 404, message: 'Not Found' } });
      const existing = m[1] ? visible(m[1], who, allDrives) : undefined;
      const body = await readBody(req);
      const type = q.get('uploadType');
      if (type === 'resumable') {
        const id = randomBytes(12).toString('hex');
        const metadata = body.length ? (JSON.parse(body.toString('utf8')) as Partial<DriveItem>) : {};
        sessions.set(id, {
          item: { ...metadata, ...(existing ? { id: existing.id } : {}) },
          principal: who,
          total: Number(req.headers['x-upload-content-length'] ?? 0),
          received: [],
          bytes: 0,
          mimeType: String(req.headers['x-upload-content-type'] ?? 'application/octet-stream'),
        });
        res.writeHead(200, { location: `${baseUrl}/upload/drive/v3/files${m[1] ? `/${m[1]}` : ''}?uploadType=resumable&upload_id=${id}`, 'content-length': 0 });
        return void res.end();
      }
      let metadata: Partial<DriveItem> = {};
      let media = body;
      let mediaType = String(req.headers['content-type'] ?? 'application/octet-stream');
      if (type === 'multipart') ({ metadata, media, mediaType } = multipartParts(body, mediaType) as never);
      else if (type !== 'media') throw new HttpAnswer(400, { error: { code: 400, message: `Invalid uploadType ${type}` } });
      return sendJson(res, 200, resource(store(metadata, media, mediaType, who, existing), q.get('fields')));
    }
    throw new HttpAnswer(404, { error: { code: 404, message: 'Not Found' } });
  });
  baseUrl = standIn.url;

  const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return {
    ...standIn,
    serviceAccountKey: {
      type: 'service_account',
      project_id: 'geoflow-test',
      private_key_id: keyId,
      private_key: privatePem,
      client_email: clientEmail,
      client_id: '1234567890',
      auth_uri: `${standIn.url}/auth`,
      token_uri: `${standIn.url}/token`,
      universe_domain: 'googleapis.com',
    },
    oauth,
    oauthUser,
    addFolder(name, options = {}) {
      const id = newId();
      const now = new Date().toISOString();
      items.set(id, {
        id,
        name,
        mimeType: FOLDER,
        parents: [],
        ...(options.sharedDrive ? { driveId: `0A${newId().slice(0, 17)}` } : {}),
        modifiedTime: now,
        createdTime: now,
        body: Buffer.alloc(0),
        appProperties: {},
        trashed: false,
        version: 1,
        revisions: 1,
        sharedWith: new Set(options.sharedWith ?? [clientEmail, oauthUser]),
      });
      return id;
    },
    addFile(folderId, name, body, options = {}) {
      const folder = items.get(folderId)!;
      const id = newId();
      const now = new Date().toISOString();
      items.set(id, {
        id,
        name,
        mimeType: options.mimeType ?? 'application/octet-stream',
        parents: [folderId],
        ...(folder.driveId ? { driveId: folder.driveId } : {}),
        modifiedTime: now,
        createdTime: now,
        body,
        ...(options.csv ? { csv: options.csv } : {}),
        appProperties: {},
        trashed: false,
        version: 1,
        revisions: 1,
        sharedWith: new Set(),
      });
      return id;
    },
    edit(id, body) {
      const item = items.get(id)!;
      item.body = body;
      item.version += 1;
      item.revisions += 1;
      item.modifiedTime = new Date(Math.max(Date.now(), Date.parse(item.modifiedTime) + 1)).toISOString();
    },
    file(id) {
      const item = items.get(id);
      return item && { name: item.name, body: item.body, revisions: item.revisions, appProperties: item.appProperties, parents: item.parents };
    },
    filesIn(folderId) {
      return [...items.values()].filter((i) => i.parents.includes(folderId) && !i.trashed).map((i) => ({ id: i.id, name: i.name }));
    },
    resumableUploads: () => completedSessions,
  };
}
