import { hostname } from 'node:os';
import type { Services } from '../application/services.js';
import { gdal } from '../geo/gdal/gdal.js';
import { automationActivities } from './automation.js';
import { deliveryActivities } from './deliveries.js';
import { notificationActivities } from './notifications.js';
import { runActivities } from './runs/index.js';
import { workspaceActivities } from './workspaces.js';

export interface ActivityDeps {
  workerName: string;
  /** The application services of the worker process (event store, pool, clock, cipher …). */
  services: Services;
}

/** Activities come from a factory so tests can build them with other dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...workspaceActivities(deps.services),
    ...deliveryActivities(deps.services),
    ...runActivities(deps.services),
    ...automationActivities(deps.services),
    ...notificationActivities(deps.services),
    async describeWorker(): Promise<{ gdal: string; worker: string }> {
      return { gdal: gdal.version, worker: deps.workerName };
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
export const defaultWorkerName = () => `worker@${hostname()}:${process.pid}`;
