/** The V1 scopes and what they grant: the spec's Scopes table. */
export const SCOPES: { id: string; grants: string }[] = [
  { id: 'account:read', grants: "Read the owner's profile." },
  { id: 'sources:read', grants: 'List and get Sources, discover PostGIS schemas and tables, list and inspect QFieldCloud and Mergin Maps projects.' },
  { id: 'sources:write', grants: 'Create, update, delete, test Sources.' },
  { id: 'destinations:read', grants: 'List and get Destinations, discover PostGIS schemas and tables.' },
  { id: 'destinations:write', grants: 'Create, update, delete, test Destinations.' },
  { id: 'jobs:read', grants: 'List Jobs, get a Job, list Runs.' },
  { id: 'jobs:write', grants: 'Create, update, enable, disable, delete Jobs; sync reset and reinitialize.' },
  { id: 'jobs:run', grants: 'Run Now and retry a failed Run. Excludes jobs:read.' },
  { id: 'workspaces:read', grants: 'Get a Workspace, read its transformations, all previews, download, transformation catalog. Excludes jobs:read.' },
  { id: 'workspaces:write', grants: 'Create a Workspace (importing a saved Source also needs sources:read) and replace its pipeline. Excludes jobs:write.' },
  { id: 'workspaces:run', grants: 'Convert a Workspace, or deliver the result (delivery also needs destinations:read). Excludes workspaces:read and jobs:run.' },
  { id: 'recipes:read', grants: 'List and get Recipes.' },
  { id: 'recipes:write', grants: 'Create, update, delete Recipes.' },
];
