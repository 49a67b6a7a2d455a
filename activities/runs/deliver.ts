import { stat } from 'node:fs/promises';
import type { Services } from '../../application/services.js';
import { deliverToDestination } from '../../application/transfers.js';
import { DomainError } from '../../domain/errors.js';
import { localFile } from '../../platform/file-store.js';
import type { RunArtifact } from './artifact.js';
import { artifactFacts, stepLog } from './log.js';
import type { StepServices } from './step-services.js';
import { runStep, transferContext, type StepWork } from './steps.js';

type DeliverServices = StepServices & Pick<Services, 'cipher'>;

/**
 * Publishes the artifact to the Job's Destination, opened (and its secrets decrypted) here on the
 * worker. The Run's id is the delivery id, so a resumed delivery never duplicates rows.
 */
export function deliverWork(services: DeliverServices, runId: string, artifact: RunArtifact): StepWork<Record<string, never>> {
  const { files } = services;
  return async (run, dir, progress) => {
    if (!run.snapshot.destination_id) {
      throw new DomainError('invalid_destination', 'The Job has no Destination: set its destination_id, then run it again', { step: 'deliver' });
    }
    const delivery = await deliverToDestination(
      services,
      {
        ownerId: run.ownerId,
        destinationId: run.snapshot.destination_id,
        target: run.snapshot.destination_target,
        parameters: run.parameters,
        input: {
          file: await localFile(files, runId, artifact.file),
          filename: artifact.filename,
          format: artifact.format,
          mediaType: artifact.media_type,
          layers: artifact.layers,
          deliveryId: runId,
          reinitialize: run.sync?.reinitialize ?? false,
        },
      },
      transferContext(services, dir, progress),
    );
    const size = delivery.bytes_written ?? (await stat(await localFile(files, runId, artifact.file)).catch(() => null))?.size ?? null;
    return {
      result: {},
      stats: { features_written: delivery.rows_written ?? null, bytes_written: size },
      log: stepLog({
        read: { ...artifactFacts(artifact), bytes: size },
        wrote: {
          connection: { id: delivery.destination_id, type: delivery.destination_type },
          location: delivery.target,
          features: delivery.rows_written ?? null,
          bytes: delivery.bytes_written ?? null,
        },
      }),
    };
  };
}

export function deliverActivities(services: DeliverServices) {
  return {
    /** Publishes the last artifact; the Run's id is the delivery id, so a resumed delivery never duplicates rows. */
    async deliverStep(input: { runId: string; input: RunArtifact }): Promise<Record<string, never>> {
      return runStep(services, input.runId, 'deliver', deliverWork(services, input.runId, input.input));
    },
  };
}
