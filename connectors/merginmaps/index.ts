import { z } from 'zod';
import { classify } from '../shared/policy/classify.js';
import { connectionTest } from '../shared/connection-test.js';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { httpUrl, secret } from '../shared/fields.js';
import { companionsOf, describeLayers, isVectorFile, localPathFor, singleLayerFile } from '../shared/files/project-files.js';
import { defineConnector, type ConnectorContext, type ProjectFile, type ProjectSummary } from '../types.js';
import { MerginClient, type MerginProject } from './api.js';

const configuration = z.strictObject({
  url: httpUrl.default('https://app.merginmaps.com').describe('Mergin Maps server: the public one or a self-hosted one'),
  username: z.string().min(1).max(255).describe('User name or e-mail'),
  password: secret('Password'),
  workspace: z.string().min(1).max(255).describe('Workspace (namespace) whose projects are read'),
});
type MerginConfig = z.output<typeof configuration>;

const version = z.string().regex(/^v\d{1,9}$/, 'a project version such as v12');

const resource = z.strictObject({
  project: z.string().min(1).max(255).describe('Project name in the workspace'),
  file: z
    .string()
    .min(1)
    .max(1024)
    .refine((f) => !f.split('/').includes('..'), 'must not contain ".." segments')
    .describe('File in the project, e.g. survey.gpkg'),
  layer: z.string().min(1).max(255).optional().describe('Layer of the file (a GeoPackage holds several); default: the whole file'),
  version: version.optional().describe('Project version to read (default: the latest)'),
});

/** What a merginmaps Source remembers between Runs: the project version it read and the file's checksum there. */
interface MerginCursor {
  project: string;
  file: string;
  version: string;
  checksum: string | null;
}

const clientOf = (config: MerginConfig, ctx: ConnectorContext) => new MerginClient(config, ctx);

/** A project name, given plainly or as workspace/name (the workspace must be the configured one). */
function projectName(config: MerginConfig, given: string): string {
  const slash = given.indexOf('/');
  if (slash < 0) return given;
  const [workspace, name] = [given.slice(0, slash), given.slice(slash + 1)];
  if (workspace !== config.workspace)
    throw new ConnectorError('not_found', `Project ${given} is not in workspace ${config.workspace}, the one this Source reads`, { project: given }, false);
  return name;
}

/** The server writes `updated` as RFC 1123 in lists and ISO 8601 in details: ISO 8601 either way. */
const isoDate = (value: string | undefined): string | null => {
  if (!value) return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? value : new Date(time).toISOString();
};

const summary = (p: MerginProject): ProjectSummary => ({
  id: p.name,
  name: p.name,
  owner: p.namespace ?? null,
  description: p.description || null,
  updated: isoDate(p.updated),
  version: p.version ?? null,
});

export const merginmaps = defineConnector({
  type: 'merginmaps',
  label: 'Mergin Maps',
  description: 'Files and layers of Mergin Maps projects (field data collected with the Mergin Maps app), by project version.',
  configuration,
  secrets: ['password'],
  example: { url: 'https://app.merginmaps.com', username: 'surveyor', password: '…', workspace: 'my-team' },
  implemented: true,
  verifiedAgainst:
    "stand-in checked with the vendor's client: a stand-in of the Mergin Maps server API (test/servers/merginmaps) following MerginMaps/server 2026.4 as its source reads (history from v1, change counts, problem+json errors, list and detail dates, /v1/workspaces, stale sessions), checked in the suite by mergin-client 0.15.0 (PyPI) listing projects and downloading a project version; no Mergin Maps server is installable from the package registries",
  notes: [
    "Reads through the Mergin Maps server API as `mergin-client` does: `POST /v1/auth/login` with the user name and password answers a session token, sent as `Authorization: Bearer …`; `/v1/project/paginated?only_namespace=<workspace>` lists the workspace's projects; `/v1/project/<workspace>/<project>?version=vN` lists a version's files (path, size, SHA-1 checksum); `/v1/project/raw/<workspace>/<project>?file=…&version=vN` answers a file as it was at that version.",
    '',
    '- **source_resource**: `project` (its name in the workspace), `file` (e.g. `survey.gpkg`), optionally `layer` (copied into its own GeoPackage for the Run) and `version` (e.g. `v12`; default the latest).',
    "- **Unchanged skip** (Jobs): the project version read and the file's checksum are kept; a Run that finds the same version, or a newer version in which the file did not change, ends early as unchanged without downloading. A new version that changed the file is read.",
    "- **Projects and inspect** (`POST /api/v1/sources/{id}/projects`, `/inspect-project` with an optional `version`): projects with name, workspace, description, last update and latest version; a version's files, the project's versions (newest first, at most 100), and for each vector file its layers with geometry type, CRS and feature count, read with GDAL from a temporary copy.",
    '- **Not a Workspace import**: the spec refuses merginmaps on `POST /workspaces`; use it as a Job Source.',
    '- **Workspace**: checked against `GET /v1/workspaces` (the workspaces the user belongs to) before projects are listed, because the server lists an unknown workspace as empty: one the user does not belong to → `not_found`, naming the ones they do.',
    '- **Stale sessions**: the server answers a session that went stale with 403 or empty lists rather than 401; such an answer signs in again once and repeats the request before it counts.',
    '- **Failures**: wrong user name or password → `authentication_failed`, 403 (after signing in again) → `permission_denied`, a missing workspace, project, version or file → `not_found`.',
  ].join('\n'),
  async test(config, ctx) {
    const client = clientOf(config, ctx);
    return connectionTest(
      { url: publicUrl(config.url), username: config.username, workspace: config.workspace },
      async () => {
        const who = await client.signIn();
        const projects = await client.projects();
        return `${client.label}: signed in as ${who}; workspace ${config.workspace} has ${projects.length} project(s)`;
      },
      (error) => classify(error, client.label),
    );
  },
  projects: {
    async list(config, ctx) {
      return (await clientOf(config, ctx).projects()).map(summary);
    },
    async inspect(config, query, ctx) {
      if (query.version !== undefined && !version.safeParse(query.version).success) {
        throw new ConnectorError('invalid_data', `"${query.version}" is not a project version (v1, v2 …)`, { version: query.version }, false);
      }
      const client = clientOf(config, ctx);
      const name = projectName(config, query.project);
      const project = await client.project(name, query.version);
      const at = project.version ?? query.version ?? 'v0';
      const paths = project.files!.map((f) => f.path);
      const files: ProjectFile[] = [];
      for (const [i, f] of project.files!.entries()) {
        const entry: ProjectFile = { name: f.path, size: f.size ?? null, checksum: f.checksum ?? null, updated: f.mtime ?? null, layers: null };
        if (isVectorFile(f.path)) {
          try {
            const local = await localPathFor(ctx, `file-${i}`, f.path);
            await client.download(name, at, f.path, local);
            for (const c of companionsOf(f.path, paths)) await client.download(name, at, c, await localPathFor(ctx, `file-${i}`, c));
            entry.layers = await describeLayers(local);
          } catch (error) {
            const failure = error instanceof ConnectorError ? error : classify(error, `${client.label}: ${f.path}`);
            if (['authentication_failed', 'unreachable', 'timeout'].includes(failure.reason)) throw failure;
            entry.error = failure.message;
          }
        }
        files.push(entry);
      }
      const versions = (await client.versions(name)).map((v) => ({ name: v.name, created: v.created ?? null, author: v.author ?? null }));
      return { project: summary(project), version: at, versions, files };
    },
  },
  source: {
    resource,
    resourceRequired: true,
    // The spec refuses merginmaps for Workspace import: Jobs only.
    importable: false,
    incremental: true,
    incrementalNote:
      "the project version and the file's checksum: the same version, or a newer one that left the file as it was, ends the Run early as unchanged",
    async extract(config, selector, ctx, options) {
      const { client, name, project, at, file, cursor } = await locateFile(config, selector, ctx);
      if (sameMerginFile((options.sync?.cursor ?? null) as MerginCursor | null, cursor))
        return { file: '', filename: '', bytes: 0, sync: { cursor }, unchanged: true };
      const local = await localPathFor(ctx, 'project-file', file.path);
      await client.download(name, at, file.path, local);
      for (const c of companionsOf(
        file.path,
        project.files!.map((f) => f.path),
      ))
        await client.download(name, at, c, await localPathFor(ctx, 'project-file', c));
      const taken = await singleLayerFile(local, selector.layer, ctx, `${client.label}: ${name}/${file.path}`);
      return { ...taken, sync: { cursor } };
    },
    changeCheck: {
      note: "the project's version and the file's checksum from the project's metadata",
      async changed(config, selector, ctx, sync) {
        return !sameMerginFile((sync?.cursor ?? null) as MerginCursor | null, (await locateFile(config, selector, ctx)).cursor);
      },
    },
  },
});

/** The project version and file a selector names (metadata only): what extract and the change check compare. */
async function locateFile(config: MerginConfig, selector: { project: string; file: string; version?: string | undefined }, ctx: ConnectorContext) {
  const client = clientOf(config, ctx);
  const name = projectName(config, selector.project);
  const project = await client.project(name, selector.version);
  const at = project.version ?? selector.version ?? 'v0';
  const file = project.files!.find((f) => f.path === selector.file);
  if (!file)
    throw new ConnectorError(
      'not_found',
      `${client.label}: project ${name} has no file ${selector.file} at ${at}`,
      { project: name, file: selector.file, version: at },
      false,
    );
  const cursor = { project: name, file: file.path, version: at, checksum: file.checksum ?? null } satisfies MerginCursor;
  return { client, name, project, at, file, cursor };
}

/** The same file, at the same version or with the same checksum in a newer one. */
const sameMerginFile = (previous: MerginCursor | null, cursor: MerginCursor) =>
  previous !== null &&
  previous.project === cursor.project &&
  previous.file === cursor.file &&
  (previous.version === cursor.version || (cursor.checksum !== null && previous.checksum === cursor.checksum));
