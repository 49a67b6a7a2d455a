import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { DeliverWorkspaceWorkflow, DeliverWorkspaceInput } from '../temporal/workspaces.js';
import { timeouts } from '../temporal/timeouts.js';

const { recordWorkspaceDelivery } = proxyActivities<Activities>(timeouts.record);
const { deliverWorkspaceOutput } = proxyActivities<Activities>(timeouts.interactiveTransfer);

/**
 * A Workspace delivery: publish the converted output to a Destination, then record what was
 * delivered. The HTTP call waits for it. Transient remote failures are retried a few times
 * (someone is waiting); classified permanent ones fail at once and keep their reason.
 */
export async function deliverWorkspaceWorkflow(input: DeliverWorkspaceInput): ReturnType<DeliverWorkspaceWorkflow> {
  const delivery = await deliverWorkspaceOutput(input);
  const { position } = await recordWorkspaceDelivery({
    workspaceId: input.workspaceId,
    actorId: input.actorId,
    delivery: { ...delivery, delivery_id: input.deliveryId },
  });
  return { delivery, position };
}
