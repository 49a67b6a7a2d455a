import { z } from 'zod';
import { connectionTest } from '../shared/connection-test.js';
import { classify } from '../shared/policy/classify.js';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { httpUrl, secret } from '../shared/fields.js';
import { companionsOf, describeLayers, isVectorFile, localPathFor, singleLayerFile } from '../shared/files/project-files.js';
import { defineConnector, type ConnectorContext, type ProjectFile, type ProjectSummary } from '../types.js';
import { findProject, QfcClient, type QfcFile, type QfcProject } from './api.js';

const configuration = z.strictObject({
  url: httpUrl.default('https://app.qfield.cloud').describe('QFieldCloud server: the public cloud or a self-hosted one'),
  username: z.string().min(1).max(255).optional().describe('User name or e-mail (with password)'),
  password: secret('Password'),
  token: secret('API token, instead of user name and password'),
});
type QfcConfig = z.output<typeof configuration>;

const resource = z.strictObject({
  project: z.string().min(1).max(255).describe('Project id (or owner/name)'),
  file: z
    .string()
    .min(1)
    .max(1024)
    .refine((f) => !f.split('/').includes('..'), 'must not contain ".." segments')
    .describe('File in the project, e.g. survey.gpkg'),
  layer: z.string().min(1).max(255).optional().describe('Layer of the file (a GeoPackage holds several); default: the whole file'),
});

/** What a qfieldcloud Source remembers between Runs: the file it read and its md5 (the storage ETag). */
interface QfcCursor {
  project: string;
  file: string;
  md5sum: string | null;
}

const clientOf = (config: QfcConfig, ctx: ConnectorContext) => new QfcClient(config, ctx);

const summary = (p: QfcProject): ProjectSummary => ({
  id: p.id,
  name: p.name,
  owner: p.owner ?? null,
  description: p.description || null,
  updated: p.data_last_updated_at ?? p.updated_at ?? null,
  version: null,
});

const latestMd5 = (f: QfcFile) => f.md5sum ?? f.versions?.find((v) => v.is_latest)?.md5sum ?? null;

/** Downloads a project file (and a shapefile's companions) into its own folder of ctx.workDir. */
async function fetchFile(client: QfcClient, projectId: string, file: string, all: QfcFile[], ctx: ConnectorContext, slot: string): Promise<string> {
  const local = await localPathFor(ctx, slot, file);
  await client.download(projectId, file, local);
  for (const companion of companionsOf(
    file,
    all.map((f) => f.name),
  ))
    await client.download(projectId, companion, await localPathFor(ctx, slot, companion));
  return local;
}

/** The project and file a selector names, as the server lists them (metadata only). */
async function locateFile(config: QfcConfig, selector: { project: string; file: string }, ctx: ConnectorContext) {
  const client = clientOf(config, ctx);
  const project = await findProject(client, selector.project);
  const all = await client.files(project.id);
  const file = all.find((f) => f.name === selector.file);
  if (!file)
    throw new ConnectorError(
      'not_found',
      `${client.label}: project ${project.name} has no file ${selector.file}`,
      { project: project.id, file: selector.file },
      false,
    );
  return { client, project, file, all };
}

const sameQfcFile = (previous: QfcCursor | null, cursor: QfcCursor) =>
  previous !== null && cursor.md5sum !== null && previous.project === cursor.project && previous.file === cursor.file && previous.md5sum === cursor.md5sum;

export const qfieldcloud = defineConnector({
  type: 'qfieldcloud',
  label: 'QFieldCloud',
  description: 'Files and layers of QFieldCloud projects (field data collected with QField).',
  configuration,
  secrets: ['password', 'token'],
  example: { url: 'https://app.qfield.cloud', username: 'surveyor', password: '…' },
  implemented: true,
  verifiedAgainst:
    "stand-in checked with the vendor's client: a stand-in of the QFieldCloud REST API (test/servers/qfieldcloud) following QFieldCloud v26.25 as its source reads (tokens that expire each other, error bodies, downloads, project names), checked in the suite by qfieldcloud-sdk 0.18.0 (PyPI) listing and downloading its projects; no QFieldCloud server is installable from the package registries. (what a server built from its repository answered in issue 38 is reproduced by the stand-in, not re-run here)",
  notes: [
    "Reads through QFieldCloud's REST API (`/api/v1/`) as `qfieldcloud-sdk` does: `POST auth/login/` with the user name and password answers a token (or the saved API token is used), sent as `Authorization: Token …`; `projects/` lists the projects the account can see; `files/{project}/` lists a project's files with their md5 (the storage ETag); `files/{project}/{file}/` answers the file (a redirect to another origin is followed without the token).",
    '',
    "- **One sign-in per account**: QFieldCloud keeps one live token per user for clients it cannot name (geoflow is one), and every sign-in expires the others; so the service signs in once per server and account and shares that token between all operations running at the same time (Runs, inspects, connection tests). When the server answers 401 (the token expired, or the user's own script of the same kind signed in), it signs in again once and repeats the request. A saved API token is used as it is (an expired one → `authentication_failed`).",
    '',
    "- **source_resource**: `project` (its id, or `owner/name`), `file` (path in the project, e.g. `survey.gpkg`) and optionally `layer`: one layer of a GeoPackage is copied into its own GeoPackage for the Run (a shapefile's `.shx`, `.dbf`, `.prj` and `.cpg` are downloaded with its `.shp`).",
    "- **Unchanged skip** (Jobs): the file's md5 as the server lists it is kept; a Run that finds the same md5 ends early as unchanged without downloading anything.",
    "- **Projects and inspect** (`POST /api/v1/sources/{id}/projects`, `/inspect-project`): projects with id, name, owner, description and last data update; a project's files, and for each vector file (GeoPackage, GeoJSON, FlatGeobuf, KML, GML, GPX, SQLite, shapefile) its layers with geometry type, CRS and feature count, read with GDAL from a copy downloaded to a temporary folder that is removed afterwards.",
    '- **Not a Workspace import**: the spec refuses qfieldcloud on `POST /workspaces`; use it as a Job Source.',
    '- **Failures**: wrong user name or password (401 at sign-in; 400 from older servers) → `authentication_failed`, 403 → `permission_denied`, a missing project or file → `not_found`.',
  ].join('\n'),
  async test(config, ctx) {
    const client = clientOf(config, ctx);
    return connectionTest(
      { url: publicUrl(config.url), auth: config.token ? 'token' : 'password', username: config.username ?? null },
      async () => {
        const who = await client.signIn();
        const projects = await client.projects();
        return `${client.label}: signed in as ${who}; ${projects.length} project(s) visible`;
      },
      (error) => classify(error, client.label),
    );
  },
  projects: {
    async list(config, ctx) {
      return (await clientOf(config, ctx).projects()).map(summary);
    },
    async inspect(config, query, ctx) {
      const client = clientOf(config, ctx);
      const project = await findProject(client, query.project);
      const all = await client.files(project.id);
      const files: ProjectFile[] = [];
      for (const [i, f] of all.entries()) {
        const entry: ProjectFile = { name: f.name, size: f.size ?? null, checksum: latestMd5(f), updated: f.last_modified ?? null, layers: null };
        if (isVectorFile(f.name)) {
          try {
            entry.layers = await describeLayers(await fetchFile(client, project.id, f.name, all, ctx, `file-${i}`));
          } catch (error) {
            const failure = error instanceof ConnectorError ? error : classify(error, `${client.label}: ${f.name}`);
            if (['authentication_failed', 'unreachable', 'timeout'].includes(failure.reason)) throw failure;
            entry.error = failure.message;
          }
        }
        files.push(entry);
      }
      return { project: summary(project), version: null, versions: [], files };
    },
  },
  source: {
    resource,
    resourceRequired: true,
    // The spec refuses qfieldcloud for Workspace import: Jobs only.
    importable: false,
    incremental: true,
    incrementalNote: "the file's md5 (its storage ETag): a Run that finds the same md5 ends early as unchanged, without downloading",
    async extract(config, selector, ctx, options) {
      const { client, project, file, all } = await locateFile(config, selector, ctx);
      const cursor = { project: project.id, file: file.name, md5sum: latestMd5(file) } satisfies QfcCursor;
      if (sameQfcFile((options.sync?.cursor ?? null) as QfcCursor | null, cursor))
        return { file: '', filename: '', bytes: 0, sync: { cursor }, unchanged: true };
      const local = await fetchFile(client, project.id, file.name, all, ctx, 'project-file');
      const taken = await singleLayerFile(local, selector.layer, ctx, `${client.label}: ${file.name}`);
      return { ...taken, sync: { cursor } };
    },
    changeCheck: {
      note: "the file's md5 as the server lists it",
      async changed(config, selector, ctx, sync) {
        const { project, file } = await locateFile(config, selector, ctx);
        return !sameQfcFile((sync?.cursor ?? null) as QfcCursor | null, { project: project.id, file: file.name, md5sum: latestMd5(file) });
      },
    },
  },
});
