/** The scopes of the spec's table. A PAT carries a subset; a browser session holds all of them. */
export const scopes = {
  'account:read': "Read the owner's profile.",
  'sources:read': 'List and get Sources, discover PostGIS schemas and tables, list and inspect QFieldCloud and Mergin Maps projects.',
  'sources:write': 'Create, update, delete, test Sources.',
  'destinations:read': 'List and get Destinations, discover PostGIS schemas and tables.',
  'destinations:write': 'Create, update, delete, test Destinations.',
  'jobs:read': 'List Jobs, get a Job, list Runs.',
  'jobs:write': 'Create, update, enable, disable, delete Jobs; sync reset and reinitialize.',
  'jobs:run': 'Run Now and retry a failed Run. Excludes jobs:read.',
  'workspaces:read': 'Get a Workspace, read its transformations, all previews, download, transformation catalog. Excludes jobs:read.',
  'workspaces:write': 'Create a Workspace (importing a saved Source also needs sources:read) and replace its pipeline. Excludes jobs:write.',
  'workspaces:run': 'Convert a Workspace, or deliver the result (delivery also needs destinations:read). Excludes workspaces:read and jobs:run.',
  'recipes:read': 'List and get Recipes.',
  'recipes:write': 'Create, update, delete Recipes.',
  // Beyond the spec's table: notification channels are a resource of their own (docs/api-conventions.md).
  'notifications:read': 'List and get notification channels.',
  'notifications:write': 'Create, update, delete and test notification channels.',
} as const;

export type Scope = keyof typeof scopes;
export const allScopes = Object.keys(scopes) as Scope[];
export const isScope = (s: string): s is Scope => s in scopes;
