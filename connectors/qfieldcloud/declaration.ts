import { z } from 'zod';
import { httpUrl, projectFile, secret } from '../shared/fields.js';
import { declareConnector } from '../types.js';

export const configuration = z.strictObject({
  url: httpUrl.default('https://app.qfield.cloud').describe('QFieldCloud server: the public cloud or a self-hosted one'),
  username: z.string().min(1).max(255).optional().describe('User name or e-mail (with password)'),
  password: secret('Password'),
  token: secret('API token, instead of user name and password'),
});

const resource = z.strictObject({
  project: z.string().min(1).max(255).describe('Project id (or owner/name)'),
  ...projectFile,
});

/** What the registry knows of qfieldcloud without loading its behaviour (index.ts) or its SDK. */
export const qfieldcloudDeclaration = declareConnector({
  type: 'qfieldcloud',
  label: 'QFieldCloud',
  description: 'Files and layers of QFieldCloud projects (field data collected with QField).',
  configuration,
  secrets: ['password', 'token'],
  example: { url: 'https://app.qfield.cloud', username: 'surveyor', password: '…' },
  implemented: true,
  verifiedAgainst:
    "stand-in checked with the vendor's client: a stand-in of the QFieldCloud REST API (test/servers/qfieldcloud) following QFieldCloud v26.25 as its source reads (tokens that expire each other, error bodies, downloads, project names), checked in the suite by qfieldcloud-sdk 0.18.0 (PyPI) listing and downloading its projects; no QFieldCloud server is installable from the package registries. (what a server built from its repository answered in issue 38 is reproduced by the stand-in, not re-run here)",
  browsesProjects: true,
  source: {
    resource,
    resourceRequired: true,
    // The spec refuses qfieldcloud for Workspace import: Jobs only.
    importable: false,
    incremental: true,
    incrementalNote: "the file's md5 (its storage ETag): a Run that finds the same md5 ends early as unchanged, without downloading",
    changeCheck: {
      note: "the file's md5 as the server lists it",
    },
  },
});
