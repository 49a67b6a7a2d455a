import type { z } from 'zod';
import { classify } from '../shared/policy/classify.js';
import { connectionTest } from '../shared/connection-test.js';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { companionsOf, describeLayers, isVectorFile, localPathFor, singleLayerFile } from '../shared/files/project-files.js';
import { MerginClient, type MerginProject } from './api.js';
import { type configuration, version, merginmapsDeclaration } from './declaration.js';
import { defineConnector, type ConnectorContext, type ProjectFile, type ProjectSummary } from '../types.js';

type MerginConfig = z.output<typeof configuration>;

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

export const merginmaps = defineConnector(merginmapsDeclaration, {
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
