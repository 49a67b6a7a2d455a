import { Context } from '@temporalio/activity';
import { load, record } from '../application/commands.js';
import { domainErrorsAsFailures } from '../temporal/failures.js';
import type { Services } from '../application/services.js';
import { deliverToDestination, stepProgressOf, withUploadTotal, type TransferContext } from '../application/transfers.js';
import { progressReporter } from '../application/operation-progress.js';
import type { Delivery, DeliverWorkspaceInput } from '../temporal/workspaces.js';
import { DomainError } from '../domain/errors.js';
import { usable, workspaceDecider, workspaceStream } from '../domain/workspaces/workspace.js';
import { localFile } from '../platform/file-store.js';

/**
 * Delivery of a Workspace's converted output, as activities of deliverWorkspaceWorkflow. The
 * Destination is opened (and its secrets decrypted) here on the worker; the workflow's payloads
 * carry ids and the public target only.
 */
export function deliveryActivities(services: Pick<Services, 'store' | 'clock' | 'config' | 'cipher' | 'log' | 'files' | 'pool'>) {
  const { files } = services;
  return {
    async deliverWorkspaceOutput(input: DeliverWorkspaceInput): Promise<Delivery> {
      return domainErrorsAsFailures(async () => {
        const state = usable(
          (await load(services, workspaceStream(input.workspaceId), workspaceDecider)).state,
          input.actorId,
          input.workspaceId,
          services.clock(),
        );
        if (!state.output) throw new DomainError('job_not_ready', 'Nothing to deliver: the Workspace has no converted output');
        const output = state.output;
        // The output's size is what an upload is heading for, so a connector counting the bytes it
        // sent gives a percentage without knowing the total (as a Run's deliver step does).
        const mirror = progressReporter(services, input.progress);
        const report = (info: Parameters<NonNullable<TransferContext['progress']>>[0]) => {
          const withTotal = withUploadTotal(stepProgressOf(info), output.size);
          Context.current().heartbeat(withTotal);
          mirror?.(withTotal);
        };
        const heartbeat = setInterval(() => Context.current().heartbeat(), 5_000);
        const workDir = await files.workDir(input.workspaceId, `tmp/deliver-${input.deliveryId}`);
        try {
          return await deliverToDestination(
            services,
            {
              ownerId: input.actorId,
              destinationId: input.destinationId,
              target: input.target,
              input: {
                file: await localFile(files, input.workspaceId, output.file),
                filename: output.filename,
                format: output.format,
                mediaType: output.media_type,
                layers: output.layers,
                deliveryId: input.deliveryId,
              },
            },
            {
              log: services.log,
              workDir,
              maxBytes: services.config.maxUploadBytes,
              signal: Context.current().cancellationSignal,
              progress: report,
            },
          );
        } finally {
          clearInterval(heartbeat);
          await files.remove(input.workspaceId, `tmp/deliver-${input.deliveryId}`);
        }
      });
    },

    async recordWorkspaceDelivery(input: {
      workspaceId: string;
      actorId: string;
      delivery: Delivery & { delivery_id: string };
    }): Promise<{ position: string }> {
      return domainErrorsAsFailures(async () => {
        const d = input.delivery;
        const outcome = await record(services, workspaceStream(input.workspaceId), workspaceDecider, {
          type: 'RecordDelivery',
          workspaceId: input.workspaceId,
          actorId: input.actorId,
          delivery: {
            delivery_id: d.delivery_id,
            destination_id: d.destination_id,
            destination_type: d.destination_type,
            target: d.target,
            rows_written: d.rows_written ?? null,
            bytes_written: d.bytes_written ?? null,
            duration_ms: d.duration_ms,
          },
          at: services.clock(),
        });
        return { position: outcome.position };
      });
    },
  };
}
