import type * as Api from './api-types.js';

/*
 * Shapes of the /api/v1 answers the app reads (docs/api-conventions.md), all from ./api-types.ts,
 * which is generated from the server's zod schemas (scripts/gen-web-types.ts; a unit spec fails
 * when it is stale). Nothing here copies a field of the API by hand: a type is a generated one,
 * a part of one, or a generated one where a field the schema leaves open (`Record<string,
 * unknown>`: the JSON Schemas inside a Connector or a Transformation, the GeoJSON of a preview) is
 * read as the format it is. The rest are formats, not API types (JSON Schema, GeoJSON) and the
 * list envelope every list shares.
 */

/** Every list's envelope (docs/api-conventions.md: cursor pagination). */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** The subset of JSON Schema (2020-12) the forms build fields from. */
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

/** RFC 7946, as the spatial preview sends it (lon/lat, 2D). */
export interface FeatureCollection {
  type: 'FeatureCollection';
  features: { type: 'Feature'; geometry: unknown; properties: Record<string, unknown> | null }[];
}

/** `T` with the fields `K` (JSON Schemas in the API's schema, typed as open objects) read as JSON Schema. */
type WithSchemas<T, K extends keyof T> = Omit<T, K> & { [F in K]: null extends T[F] ? JsonSchema | null : JsonSchema };

export type Me = Api.Me;
export type Token = Api.Token;
export type CreatedToken = Api.CreatedToken;
export type System = Api.System;

export type Operation = Api.Operation;
export type Recipe = Api.Recipe;
export type Transformation = WithSchemas<Api.Transformation, 'parameters'>;
export type Format = Api.Format;

export type Layer = Api.WorkspaceLayer;
export type Field = Layer['fields'][number];
export type Pipeline = Api.StoredPipeline;
export type Workspace = Api.Workspace;
export type DataPreview = Api.DataPreview;
export type CrsInfo = Api.CrsInfo;
export type SpatialPreview = Omit<Api.SpatialPreview, 'geojson'> & { geojson: FeatureCollection };

export type ConnectionKind = Api.Connector['kinds'][number];

/** One entry of GET /api/v1/connectors: what a connection form is built from. */
export type Connector = Omit<WithSchemas<Api.Connector, 'configuration'>, 'source' | 'destination'> & {
  source: WithSchemas<NonNullable<Api.Connector['source']>, 'resource'> | null;
  destination: WithSchemas<NonNullable<Api.Connector['destination']>, 'target'> | null;
};

/** A saved Source or Destination (the two have one shape): secrets replaced by has_<field> flags. */
export type Connection = Api.Source;
export type TestResult = Api.ConnectionTestResult;
export type Discovery = Api.PostgisDiscovery;
export type Delivery = Api.Delivery;
/** How far a long request started with a progress_id has got (GET /progress/{id}). */
export type RequestProgress = Api.Progress;

export type TransformMode = NonNullable<Api.Job['transform_mode']>;
export type Schedule = Api.JobSchedule;
/** The Job body of POST and PUT (docs/api-conventions.md). */
export type JobBody = Api.JobBody;
export type Job = Api.Job;

export type Run = Api.Run;
export type RunStatus = Run['status'];
export type RunStep = Run['steps'][number];
export type StepName = RunStep['name'];
export type RunError = NonNullable<Run['error']>;

/** A project of a QFieldCloud or Mergin Maps Source (POST /sources/{id}/projects). */
export type FieldProject = Api.FieldProject;
/** POST /sources/{id}/inspect-project: a project's files and the layers of its vector files. */
export type FieldProjectInspection = Api.FieldProjectInspection;

/** GET …/hub/items, …/hub/folders, …/hub/items/{id}/layers: a portal's search, folders and layers. */
export type HubItem = Api.HubItem;
export type HubItems = Api.HubItems;
export type HubFolders = Api.HubFolders;
export type HubLayers = Api.HubLayers;
