import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { DomainError, notFound } from '../domain/errors.js';
import { emptyPipeline, type ConvertOutput, type Inspection, type Pipeline } from '../domain/workspaces/contents.js';
import { isoTime } from '../platform/db.js';
import type { StoredDataset } from '../domain/datasets.js';
import { createOwnedTable, type Projector } from './projector.js';

const workspaces = (schema: string) => sql.identifier([schema, 'workspaces']);

/** The Workspace representation as routes read it; files live on disk under the data folder. */
export const workspacesProjector: Projector = {
  name: 'workspaces',
  // 2: a failed conversion keeps the last good output.
  version: 2,
  tables: ['workspaces'],
  async createTables(tx, schema) {
    await createOwnedTable(
      tx,
      schema,
      'workspaces',
      sql.fragment`status text NOT NULL, filename text NOT NULL, size bigint NOT NULL, origin json NOT NULL, inspection json NOT NULL, dataset json NOT NULL,
        pipeline json NOT NULL, conversion_id text, conversion json, output json, errors json NOT NULL DEFAULT '[]', expires_at timestamptz NOT NULL`,
    );
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS workspaces_expiry ON ${workspaces(schema)} (expires_at) WHERE status <> 'expired'`);
  },
  async apply(tx, schema, event) {
    const d = event.data as Record<string, any>;
    const t = workspaces(schema);
    switch (event.type) {
      case 'WorkspaceCreated':
        await tx.query(sql.unsafe`INSERT INTO ${t} (id, owner_id, status, filename, size, origin, inspection, dataset, pipeline, created_at, updated_at, expires_at)
          VALUES (${d.workspace_id}, ${d.owner_id}, 'inspected', ${d.filename}, ${d.size}, ${sql.json(d.origin)}, ${sql.json(d.inspection)}, ${sql.json(d.dataset)},
            ${sql.json(emptyPipeline as never)}, ${d.at}, ${d.at}, ${d.expires_at})`);
        break;
      case 'WorkspacePipelineSet':
        await tx.query(sql.unsafe`UPDATE ${t} SET pipeline = ${sql.json(d.pipeline)}, updated_at = ${d.at} WHERE id = ${d.workspace_id}`);
        break;
      case 'WorkspaceConversionStarted':
        await tx.query(sql.unsafe`UPDATE ${t} SET status = 'converting', conversion_id = ${d.conversion_id},
          conversion = ${sql.json({ ...d.request, pipeline: d.pipeline })}, updated_at = ${d.at} WHERE id = ${d.workspace_id}`);
        break;
      case 'WorkspaceConverted':
        await tx.query(sql.unsafe`UPDATE ${t} SET status = 'completed', output = ${sql.json({ ...d.output, conversion_id: d.conversion_id })},
          errors = '[]', updated_at = ${d.at} WHERE id = ${d.workspace_id}`);
        break;
      case 'WorkspaceConversionFailed':
        await tx.query(sql.unsafe`UPDATE ${t} SET status = 'failed', errors = ${sql.json([d.error])}, updated_at = ${d.at}
          WHERE id = ${d.workspace_id}`);
        break;
      case 'WorkspaceExpired':
        await tx.query(sql.unsafe`UPDATE ${t} SET status = 'expired', updated_at = ${d.at} WHERE id = ${d.workspace_id}`);
        break;
      default:
        break;
    }
  },
};

/** A row of rm.workspaces, as the use cases and the representation read it. */
const workspaceRow = z.object({
  id: z.string(),
  owner_id: z.string(),
  status: z.string(),
  filename: z.string(),
  size: z.coerce.number(),
  origin: z.record(z.string(), z.unknown()),
  inspection: z.custom<Inspection>(),
  dataset: z.custom<StoredDataset>(),
  pipeline: z.custom<Pipeline>(),
  conversion_id: z.string().nullable(),
  output: z.custom<(ConvertOutput & { conversion_id: string }) | null>(),
  errors: z.array(z.object({ code: z.string(), message: z.string() })),
  created_at: isoTime,
  updated_at: isoTime,
  expires_at: isoTime,
});
export type WorkspaceRow = z.infer<typeof workspaceRow>;

/** Loads the caller's Workspace; missing or foreign is job_not_found, past its lifetime job_expired. */
export async function loadWorkspace(pool: DatabasePool, ownerId: string, id: string, now: Date): Promise<WorkspaceRow> {
  const row = await pool.maybeOne(sql.type(workspaceRow)`SELECT * FROM rm.workspaces WHERE id = ${id} AND owner_id = ${ownerId}`);
  if (!row) throw notFound('job_not_found', 'Workspace', id);
  if (row.status === 'expired' || Date.parse(row.expires_at) <= now.getTime()) {
    throw new DomainError('job_expired', `Workspace ${id} has expired; its files are removed. Create a new one.`, { id, expired_at: row.expires_at });
  }
  return row;
}
