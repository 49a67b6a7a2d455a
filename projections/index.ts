import { accountsProjector } from './accounts.js';
import { connectionsProjector } from './connections.js';
import { jobsProjector } from './jobs.js';
import type { Projector } from './projector.js';
import { recipesProjector } from './recipes.js';
import { runsProjector } from './runs.js';
import { workspacesProjector } from './workspaces.js';

/** Every projector of the service; a new read model is registered here. */
export const projectors: Projector[] = [accountsProjector, recipesProjector, workspacesProjector, connectionsProjector, jobsProjector, runsProjector];
