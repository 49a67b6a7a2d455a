import { sql } from 'slonik';
import { z } from 'zod';
import { workspaceDecider, workspaceStream } from '../domain/workspaces/workspace.js';
import { execute } from './commands.js';
import type { Services } from './services.js';

/**
 * The regular cleanup: Workspaces past their lifetime get a WorkspaceExpired event and lose their
 * files; folders that belong to no Workspace (an upload cut off by a crash) go after one lifetime.
 * A Run's files go when its workflow ends (cleanupRun); those of a finished Run still there after
 * one lifetime (that cleanup failed) go here, as do those of Runs the read model does not know.
 * With object storage, removing files removes their objects. Every API process runs it; an
 * advisory lock lets one of them work at a time.
 */
export async function cleanupExpiredWorkspaces(services: Services): Promise<{ expired: number; orphans: number; runs: number }> {
  const { files } = services;
  const now = services.clock();
  return services.pool.connect(async (connection) => {
    const locked = await connection.oneFirst(sql.type(z.object({ ok: z.boolean() }))`SELECT pg_try_advisory_lock(hashtext('workspace-cleanup')) AS ok`);
    if (!locked) return { expired: 0, orphans: 0, runs: 0 };
    try {
      const due = await connection.anyFirst(
        sql.type(z.object({ id: z.string() }))`SELECT id FROM rm.workspaces WHERE status <> 'expired' AND expires_at <= ${now.toISOString()} LIMIT 500`,
      );
      for (const id of due) {
        await files.remove(id);
        await execute(services, workspaceStream(id), workspaceDecider, { type: 'ExpireWorkspace', workspaceId: id, at: now });
      }
      let orphans = 0;
      const known = new Set(await connection.anyFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM rm.workspaces WHERE status <> 'expired'`));
      for (const { owner, modifiedAt } of await files.list('workspaces')) {
        if (known.has(owner)) continue;
        if (now.getTime() - modifiedAt.getTime() > services.config.workspaceTtlMs) {
          await files.remove(owner);
          orphans += 1;
        }
      }
      let runs = 0;
      const unfinished = new Set(await connection.anyFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM rm.runs WHERE finished_at IS NULL`));
      for (const { owner, modifiedAt } of await files.list('runs')) {
        if (unfinished.has(owner)) continue;
        if (now.getTime() - modifiedAt.getTime() > services.config.workspaceTtlMs) {
          await files.remove(owner);
          runs += 1;
        }
      }
      return { expired: due.length, orphans, runs };
    } finally {
      await connection.query(sql.unsafe`SELECT pg_advisory_unlock(hashtext('workspace-cleanup'))`);
    }
  });
}

export function scheduleWorkspaceCleanup(services: Services, everyMs = 60_000): () => void {
  const timer = setInterval(() => {
    cleanupExpiredWorkspaces(services).then(
      (r) => (r.expired || r.orphans || r.runs) && services.log.info(r, 'removed expired workspaces and the files of finished Runs'),
      (error) => services.log.error({ err: error }, 'workspace cleanup failed'),
    );
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
