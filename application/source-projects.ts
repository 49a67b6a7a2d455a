import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { ConnectorError } from '../domain/transfers.js';
import { requireImplemented } from '../connectors/registry.js';
import type { ConnectorContext, ProjectBrowsing, ProjectInspection, ProjectSummary } from '../connectors/types.js';
import { DomainError } from '../domain/errors.js';
import { openConnection, withDeadline, type OpenedConnection } from './connections.js';
import type { Services } from './services.js';
import { transferError } from './transfers.js';

/*
 * The projects of a field-data Source (qfieldcloud, merginmaps) and what one of them holds, for
 * POST /sources/{id}/projects and /inspect-project: the caller picks project, file and layer for a
 * Job from these. Only the owner's Sources are opened (another user's is a non-enumerating 404);
 * other types are invalid_source. Inspecting downloads the project's vector files into a folder
 * of its own under the data folder, removed afterwards whatever happens.
 */

const LIST_TIMEOUT_MS = 30_000;
const INSPECT_TIMEOUT_MS = 120_000;

type Needs = Pick<Services, 'store' | 'cipher' | 'config'>;

/** The owner's Source and its project browsing; invalid_source for a type that has none. */
async function openFieldSource(services: Needs, sourceId: string, ownerId: string): Promise<{ source: OpenedConnection; projects: ProjectBrowsing }> {
  const source = await openConnection(services, 'source', sourceId, ownerId);
  const projects = source.connector.projects;
  if (!projects) {
    throw new DomainError('invalid_source', `Projects can be listed for QFieldCloud and Mergin Maps Sources only; this one is ${source.type}`, {
      type: source.type,
    });
  }
  return { source, projects };
}

async function inWorkFolder<T>(services: Needs, log: Logger, ms: number, fn: (ctx: ConnectorContext) => Promise<T>): Promise<T> {
  const workDir = await mkdtemp(path.join(services.config.dataDir, 'project-inspect-'));
  try {
    return await withDeadline(ms, { log, workDir, maxBytes: services.config.maxUploadBytes }, fn);
  } catch (error) {
    // The remote's refusal as the API's error: source_failed with the classified reason.
    if (error instanceof ConnectorError) throw transferError(error, 'import');
    throw error;
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

export async function listSourceProjects(services: Needs, sourceId: string, ownerId: string, log: Logger): Promise<ProjectSummary[]> {
  const { source, projects } = await openFieldSource(services, sourceId, ownerId);
  return inWorkFolder(services, log, LIST_TIMEOUT_MS, (ctx) => {
    requireImplemented(source.connector, 'projects');
    return projects.list(source.config, ctx);
  });
}

export async function inspectSourceProject(
  services: Needs,
  sourceId: string,
  ownerId: string,
  query: { project: string; version?: string },
  log: Logger,
): Promise<ProjectInspection> {
  const { source, projects } = await openFieldSource(services, sourceId, ownerId);
  return inWorkFolder(services, log, INSPECT_TIMEOUT_MS, (ctx) => {
    requireImplemented(source.connector, 'projects');
    return projects.inspect(source.config, query, ctx);
  });
}
