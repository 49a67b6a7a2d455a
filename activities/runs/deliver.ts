import { stat } from 'node:fs/promises';
import type { Services } from '../../application/services.js';
import { deliverToDestination, withUploadTotal } from '../../application/transfers.js';
import { DomainError } from '../../domain/errors.js';
import { splitReadOptions } from '../../geo/datasets/read-options.js';
import { localFile } from '../../platform/file-store.js';
import type { StepProgress } from '../../domain/runs/facts.js';
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
    const file = await localFile(files, runId, artifact.file);
    // What an upload is heading for is the artifact's size: a connector counting the bytes it has
    // sent gets the total (and so a percentage) on the Run page without knowing it.
    const total = (await stat(file).catch(() => null))?.size;
    const withTotal = (p: StepProgress) => progress(withUploadTotal(p, total));
    const delivery = await deliverToDestination(
      services,
      {
        ownerId: run.ownerId,
        destinationId: run.snapshot.destination_id,
        target: run.snapshot.destination_target,
        parameters: run.parameters,
        input: {
          file,
          filename: artifact.filename,
          format: artifact.format,
          mediaType: artifact.media_type,
          layers: artifact.layers,
          deliveryId: runId,
          reinitialize: run.sync?.reinitialize ?? false,
          // The extract's file as it came: opened with the Job's reading options.
          ...(artifact.read ? { read: splitReadOptions(artifact.read, 'source_resource').options } : {}),
        },
      },
      transferContext(services, dir, withTotal),
    );
    const size = delivery.bytes_written ?? total ?? null;
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
