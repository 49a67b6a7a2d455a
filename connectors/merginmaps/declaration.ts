import { z } from 'zod';
import { httpUrl, projectFile, secret } from '../shared/fields.js';
import { declareConnector } from '../types.js';

export const configuration = z.strictObject({
  url: httpUrl.default('https://app.merginmaps.com').describe('Mergin Maps server: the public one or a self-hosted one'),
  username: z.string().min(1).max(255).describe('User name or e-mail'),
  password: secret('Password'),
  workspace: z.string().min(1).max(255).describe('Workspace (namespace) whose projects are read'),
});

export const version = z.string().regex(/^v\d{1,9}$/, 'a project version such as v12');

const resource = z.strictObject({
  project: z.string().min(1).max(255).describe('Project name in the workspace'),
  ...projectFile,
  version: version.optional().describe('Project version to read (default: the latest)'),
});

/** What the registry knows of merginmaps without loading its behaviour (index.ts) or its SDK. */
export const merginmapsDeclaration = declareConnector({
  type: 'merginmaps',
  label: 'Mergin Maps',
  description: 'Files and layers of Mergin Maps projects (field data collected with the Mergin Maps app), by project version.',
  configuration,
  secrets: ['password'],
  example: { url: 'https://app.merginmaps.com', username: 'surveyor', password: '…', workspace: 'my-team' },
  implemented: true,
  verifiedAgainst:
    "stand-in checked with the vendor's client: a stand-in of the Mergin Maps server API (test/servers/merginmaps) following MerginMaps/server 2026.4 as its source reads (history from v1, change counts, problem+json errors, list and detail dates, /v1/workspaces, stale sessions), checked in the suite by mergin-client 0.15.0 (PyPI) listing projects and downloading a project version; no Mergin Maps server is installable from the package registries",
  browsesProjects: true,
  source: {
    resource,
    resourceRequired: true,
    // The spec refuses merginmaps for Workspace import: Jobs only.
    importable: false,
    incremental: true,
    incrementalNote:
      "the project version and the file's checksum: the same version, or a newer one that left the file as it was, ends the Run early as unchanged",
    changeCheck: {
      note: "the project's version and the file's checksum from the project's metadata",
    },
  },
});
