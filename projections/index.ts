import { accountsProjector } from './accounts.js';
import { connectionsProjector } from './connections.js';
import { jobsProjector } from './jobs.js';
import type { Projector } from './projector.js';
import { recipesProjector } from './recipes.js';
import { runsProjector } from './runs.js';
import { workspacesProjector } from './workspaces.js';

/**
 * Every projector of the service; a new read model is registered here.
 * Order matters: the jobs projector runs before the runs projector in every pass, and a Run's end is
 * recorded on its Job first (activities/runs.ts, finishRun), so a Run seen ended has its Job updated.
 */
export const projectors: Projector[] = [accountsProjector, recipesProjector, workspacesProjector, connectionsProjector, jobsProjector, runsProjector];
