import type * as Api from './api-types.js';

/*
 * Shapes of the /api/v1 answers the app reads (docs/api-conventions.md). Those the server's zod
 * schemas describe come from ./api-types.ts, generated from them (scripts/gen-web-types.ts; a unit
 * spec fails when it is stale); the rest are the app's own, or narrower than the server's schema
 * says (the JSON Schemas inside a Connector, a Job's disabled_reason object, a Schedule's kinds).
 */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export type Me = Api.Me;

export type Token = Api.Token;

export interface CreatedToken extends Token {
  token: string;
}

export type Operation = { type: string } & Record<string, unknown>;

export type Recipe = Api.Recipe;

export interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema | false;
  prefixItems?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  format?: string;
  pattern?: string;
  additionalProperties?: JsonSchema | boolean;
}

export interface Transformation {
  id: string;
  label: string;
  description: string;
  category: string;
  requires_geometry: boolean;
  parameters: JsonSchema;
  example: Record<string, unknown>;
}

export type Format = Api.Format;

export interface Field {
  name: string;
  type: string;
}

export type Layer = Api.WorkspaceLayer;

export interface Pipeline {
  layers: string[];
  operations: Operation[];
  sql: string | null;
  python: { script: string; filename: string } | null;
}

export type Workspace = Api.Workspace;

export type DataPreview = Api.DataPreview;

export interface FeatureCollection {
  type: 'FeatureCollection';
  features: { type: 'Feature'; geometry: unknown; properties: Record<string, unknown> | null }[];
}

export interface SpatialPreview {
  workspace_id: string;
  layer: string;
  source_crs: string;
  preview_crs: string;
  returned_count: number;
  feature_count: number;
  truncated: boolean;
  geojson: FeatureCollection;
}

export type ConnectionKind = 'source' | 'destination';

/** One entry of GET /api/v1/connectors: what a connection form is built from. */
export interface Connector {
  type: string;
  label: string;
  description: string;
  kinds: ConnectionKind[];
  implemented: boolean;
  verified_against: string;
  /** JSON Schema of the configuration (secrets included, as write-only strings). */
  configuration: JsonSchema;
  secrets: string[];
  example: Record<string, unknown>;
  capabilities: { test: boolean; discover: boolean; projects: boolean; import: boolean; deliver: boolean; incremental: boolean };
  source: {
    resource: JsonSchema;
    resource_required: boolean;
    resource_shorthand: string | null;
    importable: boolean;
    incremental: boolean;
    incremental_note: string | null;
  } | null;
  destination: { target: JsonSchema; deliverable: boolean } | null;
}

/** A saved Source or Destination: secrets replaced by has_<field> flags. */
export interface Connection {
  id: string;
  name: string;
  type: string;
  configuration: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export type TestResult = Api.ConnectionTestResult;

export type Discovery = Api.PostgisDiscovery;

export type Delivery = Api.Delivery;

export interface System {
  name: string;
  version: string;
  edition: string;
  features: Record<string, boolean>;
  /** Where the Temporal UI is, when the server was told (SVC_TEMPORAL_UI_URL). */
  temporal_ui?: { url: string; namespace: string } | null;
}

export type TransformMode = 'manual' | 'recipe' | 'sql';

export interface Schedule {
  kind: string;
  timezone: string;
  hour?: number;
  minute?: number;
  [key: string]: unknown;
}

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** The Job body of POST and PUT (docs/api-conventions.md). */
export interface JobBody {
  name: string;
  source_id: string;
  source_resource?: Record<string, unknown> | null;
  transform_mode: TransformMode;
  operations?: Operation[];
  output_fields?: string[] | null;
  recipe_id?: string | null;
  sql?: string | null;
  python_script?: string | null;
  python_filename?: string | null;
  output_format?: string | null;
  /** null on a draft Job saved without one (its Runs fail at deliver until it has one). */
  destination_id: string | null;
  destination_target?: Record<string, unknown> | null;
  schedule?: Schedule | null;
  pipeline?: { transform?: boolean; convert?: boolean; python?: boolean };
  enabled?: boolean;
}

export interface Job extends JobBody {
  id: string;
  /** What a Run of this Job runs (the stage flags resolved against the fields). */
  stages?: { transform: boolean; python: boolean; convert: boolean };
  enabled: boolean;
  /** null, or why the Job is disabled (a sentence, or {kind, failures, message}). */
  disabled_reason: string | { kind: string; failures?: number; message?: string } | null;
  next_run_at: string | null;
  last_run: { id: string; status: RunStatus; finished_at: string | null } | null;
  sync: { supported: boolean; cursor: unknown; updated_at: string | null; reset_pending: boolean; reinitialize_pending: boolean };
  created_at: string;
  updated_at: string;
}

export type StepName = 'extract' | 'transform' | 'python' | 'convert' | 'deliver';

export interface RunStep {
  name: StepName | string;
  status: 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  /** Attempts that failed; transient failures are retried while the step stays running. */
  failed_attempts: number;
  last_error: RunError | null;
  /** What a long step reported last while it worked (bytes or features written, share done). */
  progress?: { bytes_written?: number; features_written?: number; percent?: number } | null;
}

export interface RunError {
  code: string;
  message: string;
  step: string | null;
  retryable: boolean;
  reason?: string;
}

export type Run = Api.Run;

/** A project of a QFieldCloud or Mergin Maps Source (POST /sources/{id}/projects). */
export interface FieldProject {
  id: string;
  name: string;
  owner: string | null;
  description: string | null;
  updated: string | null;
  version: string | null;
}

/** POST /sources/{id}/inspect-project: a project's files and the layers of its vector files. */
export interface FieldProjectInspection {
  project: FieldProject;
  version: string | null;
  versions: { name: string; created: string | null; author: string | null }[];
  files: {
    name: string;
    size: number | null;
    checksum: string | null;
    updated: string | null;
    layers: { name: string; geometry_type: string | null; crs: string | null; feature_count: number | null }[] | null;
    error?: string;
  }[];
}

/** GET …/hub/items: a page of a portal search. */
export interface HubItem {
  id: string;
  title: string;
  type: string;
  owner: string;
  url: string | null;
  tags: string[];
  access: string | null;
  modified: string | null;
}
export interface HubItems {
  portal: string;
  query: string;
  total: number;
  start: number;
  next_start: number | null;
  items: HubItem[];
}
export interface HubFolders {
  portal: string;
  username: string;
  folders: { id: string; title: string }[];
}
export interface HubLayers {
  item: HubItem;
  layers: { id: number; name: string; kind: 'layer' | 'table'; geometry_type: string | null }[];
}
