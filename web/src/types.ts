/** Shapes of the /api/v1 answers the app reads (docs/api-conventions.md). */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface Me {
  id: string;
  email: string;
  name: string;
  auth: { kind: 'session' | 'token'; scopes: string[] };
}

export interface Token {
  id: string;
  name: string;
  scopes: string[];
  prefix: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface CreatedToken extends Token {
  token: string;
}

export type Operation = { type: string } & Record<string, unknown>;

export interface Recipe {
  id: string;
  name: string;
  description: string;
  operations: Operation[];
  created_at: string;
  updated_at: string;
}

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

export interface Format {
  id: string;
  name: string;
  kind: 'vector' | 'raster';
  read: boolean;
  write: boolean;
  extensions: string[];
  media_type: string | null;
  multi_layer: boolean;
}

export interface Field {
  name: string;
  type: string;
}

export interface Layer {
  name: string;
  geometry_type: string | null;
  has_geometry: boolean;
  feature_count: number | null;
  crs: string | null;
  fields: Field[];
}

export interface Pipeline {
  layers: string[];
  operations: Operation[];
  sql: string | null;
  python: { script: string; filename: string } | null;
}

export interface Workspace {
  id: string;
  status: 'inspected' | 'converting' | 'completed' | 'failed';
  filename: string;
  size: number;
  dataset_type: 'vector' | 'raster';
  format: string;
  driver: string;
  layers: Layer[];
  raster: Record<string, unknown> | null;
  crs: string | null;
  warnings: string[];
  pipeline: Partial<Pipeline>;
  output: { format: string; filename: string; size: number; media_type: string | null; layers: string[] } | null;
  errors: { code: string; message: string }[];
  created_at: string;
  expires_at: string;
}

export interface DataPreview {
  workspace_id: string;
  layer: string;
  fields: Field[];
  has_geometry: boolean;
  geometry_type?: string;
  crs?: string;
  row_count?: number | null;
  preview_row_count: number;
  limit: number;
  truncated: boolean;
  rows: Record<string, unknown>[];
}

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
