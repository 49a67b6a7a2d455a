import { accountsProjector } from './accounts.js';
import { connectionsProjector } from './connections.js';
import { jobsProjector } from './jobs.js';
import { notificationChannelsProjector } from './notification-channels.js';
import type { Projector } from './projector.js';
import { recipesProjector } from './recipes.js';
import { runsProjector } from './runs.js';
import { workspacesProjector } from './workspaces.js';

/**
 * Every projector of the service; a new read model is registered here.
 * A Run's end is recorded on its Job first (finishRun, activities/runs/bookkeeping.ts), and the
 * runs projector follows the jobs projector (never applies past its checkpoint, whichever process
 * projects which), so a Run seen ended has its Job's last Run and sync cursor updated. Listing
 * jobs first saves the runs projector a wait within a pass.
 */
export const projectors: Projector[] = [
  accountsProjector,
  recipesProjector,
  workspacesProjector,
  connectionsProjector,
  notificationChannelsProjector,
  jobsProjector,
  runsProjector,
];
