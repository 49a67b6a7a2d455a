import type { z } from 'zod';
import { connectionTest } from '../shared/connection-test.js';
import { classify } from '../shared/policy/classify.js';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { companionsOf, describeLayers, isVectorFile, localPathFor, singleLayerFile } from '../shared/files/project-files.js';
import { findProject, QfcClient, type QfcFile, type QfcProject } from './api.js';
import { type configuration, qfieldcloudDeclaration } from './declaration.js';
import { defineConnector, type ConnectorContext, type ProjectFile, type ProjectSummary } from '../types.js';

type QfcConfig = z.output<typeof configuration>;

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

export const qfieldcloud = defineConnector(qfieldcloudDeclaration, {
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
      async changed(config, selector, ctx, sync) {
        const { project, file } = await locateFile(config, selector, ctx);
        return !sameQfcFile((sync?.cursor ?? null) as QfcCursor | null, { project: project.id, file: file.name, md5sum: latestMd5(file) });
      },
    },
  },
});
