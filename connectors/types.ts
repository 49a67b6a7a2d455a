import type { Logger } from 'pino';
import type { z } from 'zod';
import type { ConnectorFailureReason, DeliveryResult } from '../domain/transfers.js';
import type { ReadOptions } from '../geo/gdal/dataset-ref.js';

/*
 * The contract every connector module (connectors/<type>/) fulfils, and the only thing routes,
 * workflows, activities, the OpenAPI document, the docs and the browser know about a connection
 * type. The registry (connectors/registry.ts) lists one definition per type, like the
 * transformation catalogue in geo/operations/catalog.ts.
 *
 * Configurations reach a connector decrypted, in the process that calls it (the API for test and
 * discover, an activity for extract and deliver). Nothing a connector returns, throws or logs may
 * contain a secret value: results carry what was tried (host, port, bucket, path), never
 * credentials.
 */

export type ConnectionKind = 'source' | 'destination';

/** What a connector is given for one call besides its configuration. */
export interface ConnectorContext {
  /** Aborted on timeout or cancellation; connectors pass it to their clients. */
  signal: AbortSignal;
  log: Logger;
  /** A folder the caller owns and removes afterwards: downloads and temporary files go here. */
  workDir: string;
  /** Most bytes an extract may bring in (the upload limit); enforced while streaming. */
  maxBytes: number;
  /** Called regularly during long transfers (an activity heartbeats with it). */
  progress?: (info: { bytes?: number; features?: number; message?: string; total?: number }) => void;
}

/** The classified, secret-free answer of a connection test (draft or saved). */
export type TestStatus = 'ok' | ConnectorFailureReason;

export interface TestResult {
  ok: boolean;
  status: TestStatus;
  /** One sentence for people, without secrets. */
  message: string;
  /** What was tried: host, port, database, bucket, url without credentials … never a secret. */
  tried: Record<string, string | number | boolean | null>;
  duration_ms: number;
}

/** PostGIS discovery, exactly the spec's response (Sources and Destinations alike). */
export interface Discovery {
  host: string;
  database: string;
  schemas: string[];
  schema?: string;
  tables?: { schema: string; name: string; has_geometry: boolean; geometry_type: string | null }[];
}

/** Incremental reading: what a Source remembers between Runs of one Job. */
export interface SyncState {
  /** Connector-defined and JSON: a cursor column's last value, an ETag, a datetime … */
  cursor: unknown;
}

export interface ExtractOptions {
  /** Present when the Job reads incrementally and a previous Run left a cursor. */
  sync?: SyncState | null;
}

export interface ExtractResult {
  /**
   * The data, as one file inside ctx.workDir that the upload path can open (a GeoPackage written
   * from a database or an API, a downloaded GeoJSON, a .zip holding a shapefile …). The caller
   * prepares and inspects it exactly like an upload.
   */
  file: string;
  /** Name shown for the imported data (a Workspace's filename, a Run's input); its extension picks the driver. */
  filename: string;
  bytes: number;
  /** Features read, when the connector knows (database and API sources). */
  features?: number;
  /** The cursor to keep for the next Run; absent for connectors that cannot read incrementally. */
  sync?: SyncState;
  /** True when the source has not changed since `options.sync` (ETag / Last-Modified): later steps are skipped. */
  unchanged?: boolean;
}

export interface DeliverInput {
  /** The converted output file (a .zip for shapefiles and several-file outputs). */
  file: string;
  filename: string;
  /** Output format id (GDAL driver short name) and media type. */
  format: string;
  mediaType: string | null;
  layers: string[];
  /**
   * Stable per Run (or per Workspace delivery): a retried or resumed deliver step passes the same
   * id, and a connector uses it to make the delivery idempotent (never duplicate rows or files).
   */
  deliveryId: string;
  /** Sync reinitialize: rebuild the target (staged and swapped) instead of appending. */
  reinitialize?: boolean;
  /**
   * How to open `file` when it is what a Run's extract read, delivered as it came: the Job's
   * reading options (source_crs, X/Y/Z columns). Absent for converted outputs, which say it all.
   */
  read?: ReadOptions;
}

/** A configuration as the registry hands it over: parsed with the type's own schema. */
export type Config = Record<string, unknown>;

/** A project of a field-data platform (QFieldCloud, Mergin Maps), as POST /sources/{id}/projects lists it. */
export interface ProjectSummary {
  /** What source_resource.project takes: QFieldCloud's project id, Mergin Maps' project name in the workspace. */
  id: string;
  name: string;
  owner: string | null;
  description: string | null;
  /** ISO 8601, when the platform says. */
  updated: string | null;
  /** The latest project version (Mergin Maps: v1, v2 …), when the platform versions projects. */
  version: string | null;
}

/** One layer of a vector file in a project, read with GDAL from a downloaded copy. */
export interface ProjectLayer {
  name: string;
  geometry_type: string | null;
  crs: string | null;
  feature_count: number | null;
}

export interface ProjectFile {
  /** Path inside the project (source_resource.file). */
  name: string;
  size: number | null;
  /** The file's version or hash (QFieldCloud: its md5/ETag; Mergin Maps: its checksum). */
  checksum: string | null;
  updated: string | null;
  /** Its layers for a vector file; null for other files (project files, photos, styles …). */
  layers: ProjectLayer[] | null;
  /** Why a vector file's layers could not be read (too large, not readable), without server paths. */
  error?: string;
}

export interface ProjectInspection {
  project: ProjectSummary;
  /** The version inspected (Mergin Maps), null where projects are not versioned as a whole. */
  version: string | null;
  /** The project's versions, newest first (Mergin Maps); empty elsewhere. */
  versions: { name: string; created: string | null; author: string | null }[];
  files: ProjectFile[];
}

/** Browsing a field-data platform: POST /sources/{id}/projects and /inspect-project. */
export interface ProjectBrowsing<C extends object = Config> {
  list(config: C, ctx: ConnectorContext): Promise<ProjectSummary[]>;
  /** Lists a project's files and reads the layers of its vector files (downloaded into ctx.workDir). */
  inspect(config: C, query: { project: string; version?: string }, ctx: ConnectorContext): Promise<ProjectInspection>;
}

/*
 * A connection type comes in two parts. Its declaration (connectors/<type>/declaration.ts) is what
 * the API, the OpenAPI document, the docs and the browser need: schemas, secrets, the example and
 * what it can do. Its behaviour (connectors/<type>/index.ts) talks to the service, through a vendor
 * SDK where there is one. The registry imports every declaration and loads a behaviour, with its
 * SDK, the first time a type is used; `defineConnector` joins the two into a ConnectorDefinition.
 */

/**
 * The cheap check an on-change trigger makes every few minutes: the same test the connector's
 * extract makes to skip unchanged data (ETag / Last-Modified, a checksum, a project version, a
 * cursor), made without reading the data.
 */
export interface ChangeCheckDeclaration<R = unknown> {
  /** One line for docs/connectors.md: what is compared. */
  note: string;
  /** Why this selector cannot be checked (a table without cursor_column), or null when it can. */
  unsupported?(resource: R): string | null;
}

export interface ChangeCheckBehaviour<R = unknown, C extends object = Config> {
  /** True when the data differs from what `sync` (the cursor the last succeeded Run kept) describes; no cursor yet: true. */
  changed(config: C, resource: R, ctx: ConnectorContext, sync: SyncState | null): Promise<boolean>;
}

export interface ChangeCheck<R = unknown, C extends object = Config> extends ChangeCheckDeclaration<R>, ChangeCheckBehaviour<R, C> {}

export interface SourceDeclaration<R = unknown> {
  /** source_resource: the per-use selector (table, query, object key, layer, collection, asset); strict. */
  resource: z.ZodType<R>;
  /** A plain string given as source_resource means this field (postgis: table, s3: key …). */
  shorthand?: string;
  /** False for url/http: the configuration says everything. */
  resourceRequired: boolean;
  /** Whether a Workspace may import from it (the spec refuses gdrive, ckan, qfieldcloud, merginmaps). */
  importable: boolean;
  /** What incremental reading means for this type (docs); absent when it cannot read incrementally. */
  incrementalNote?: string;
  /** Whether extract honours options.sync. */
  incremental: boolean;
  /** On-change triggers: absent for a type that cannot tell a change without reading the data. */
  changeCheck?: ChangeCheckDeclaration<R>;
}

export interface SourceBehaviour<R = unknown, C extends object = Config> {
  extract(config: C, resource: R, ctx: ConnectorContext, options: ExtractOptions): Promise<ExtractResult>;
  changeCheck?: ChangeCheckBehaviour<R, C>;
}

export interface SourceSupport<R = unknown, C extends object = Config> extends SourceDeclaration<R>, SourceBehaviour<R, C> {
  changeCheck?: ChangeCheck<R, C>;
}

export interface DestinationDeclaration<T = unknown> {
  /** destination_target: the per-use target (schema, table, write_mode, object key, remote path …); strict. */
  target: z.ZodType<T>;
  /** Whether a Workspace may deliver to it (the spec refuses gdrive). */
  deliverable: boolean;
}

export interface DestinationBehaviour<T = unknown, C extends object = Config> {
  deliver(config: C, target: T, input: DeliverInput, ctx: ConnectorContext): Promise<DeliveryResult>;
}

export interface DestinationSupport<T = unknown, C extends object = Config> extends DestinationDeclaration<T>, DestinationBehaviour<T, C> {}

/** The declarative part of a connection type: eager, and free of any SDK. */
export interface ConnectorDeclaration<R = unknown, T = unknown> {
  /** The `type` value of the spec's lists (url, postgis, s3 …). */
  type: string;
  label: string;
  description: string;
  /** The configuration, strict (unknown fields are refused), secrets included (optional there). */
  configuration: z.ZodObject;
  /** An example configuration for the docs and forms (secrets as placeholders). */
  example: Record<string, unknown>;
  /** Configuration fields that are secret: sealed before any event, shown only as has_<field>. */
  secrets: readonly string[];
  /**
   * False for a type that is accepted and validated but cannot connect yet: the registry's
   * `requireImplemented` then refuses test, browse, import and deliver with a 422 naming the type.
   */
  implemented: boolean;
  /** The server the integration tests run it against, or why it is not verified (docs). */
  verifiedAgainst: string;
  /** Its behaviour has `discover` (schemas and tables: the SQL types). */
  discovers?: boolean;
  /** Its behaviour has `projects` (the field-data platforms). */
  browsesProjects?: boolean;
  source?: SourceDeclaration<R>;
  destination?: DestinationDeclaration<T>;
}

/**
 * One connection type, declaration and behaviour together. `C` is its parsed configuration: a
 * module's `defineConnector` infers `C`, `R` and `T` from its declaration's schemas, so no
 * connector casts what it is given. The registry holds them as `ConnectorDefinition` (the
 * default), which every typed one is assignable to: the methods below are declared as methods,
 * so their parameters are compared bivariantly, and the registry only ever passes a configuration
 * its schema parsed. Its Markdown notes for docs/connectors.md are connectors/<type>/README.md.
 */
export interface ConnectorDefinition<C extends object = Config, R = unknown, T = unknown> extends Omit<ConnectorDeclaration<R, T>, 'source' | 'destination'> {
  test(config: C, ctx: ConnectorContext): Promise<TestResult>;
  discover?(config: C, query: { schema?: string }, ctx: ConnectorContext): Promise<Discovery>;
  /** Projects and their files, for the field-data platforms (qfieldcloud, merginmaps). */
  projects?: ProjectBrowsing<C>;
  source?: SourceSupport<R, C>;
  destination?: DestinationSupport<T, C>;
  /** Closes connections the connector keeps open between transfers (a worker shutting down). */
  closeIdle?(): Promise<void>;
}

/** A module's declaration, its literal types kept (`discovers: true`, its schemas) for `defineConnector`. */
export function declareConnector<const D extends ConnectorDeclaration>(declaration: D): D {
  return declaration;
}

type ConfigOf<D extends ConnectorDeclaration> = z.output<D['configuration']>;
type ResourceOf<D> = D extends { source: { resource: z.ZodType<infer R> } } ? R : unknown;
type TargetOf<D> = D extends { destination: { target: z.ZodType<infer T> } } ? T : unknown;

/**
 * The behaviour a declaration promises, no more and no less: `discover` when it `discovers`,
 * `projects` when it `browsesProjects`, `extract` for a Source, `changeCheck.changed` when the
 * Source declares a change check, `deliver` for a Destination.
 */
export type BehaviourOf<D extends ConnectorDeclaration, C extends object = ConfigOf<D>, R = ResourceOf<D>, T = TargetOf<D>> = {
  test(config: C, ctx: ConnectorContext): Promise<TestResult>;
  closeIdle?(): Promise<void>;
} & (D extends { discovers: true } ? { discover(config: C, query: { schema?: string }, ctx: ConnectorContext): Promise<Discovery> } : { discover?: never }) &
  (D extends { browsesProjects: true } ? { projects: ProjectBrowsing<C> } : { projects?: never }) &
  (D extends { source: infer S }
    ? {
        source: Pick<SourceBehaviour<R, C>, 'extract'> &
          (S extends { changeCheck: object } ? { changeCheck: ChangeCheckBehaviour<R, C> } : { changeCheck?: never });
      }
    : { source?: never }) &
  (D extends { destination: object } ? { destination: DestinationBehaviour<T, C> } : { destination?: never });

/**
 * A connector module's definition: its declaration joined with its behaviour, typed by its own
 * schemas (`test`, `discover`, `extract` and `deliver` receive `z.output<typeof configuration>`, and
 * `configuration.parse` gives that type too, for tests that call a connector directly).
 */
export function defineConnector<const D extends ConnectorDeclaration>(
  declaration: D,
  behaviour: BehaviourOf<D>,
): ConnectorDefinition<ConfigOf<D>, ResourceOf<D>, TargetOf<D>> & { configuration: D['configuration'] } {
  const { source: sourceBehaviour, destination: destinationBehaviour, ...methods } = behaviour as ConnectorBehaviourParts;
  const { source, destination, ...fields } = declaration as ConnectorDeclaration;
  const definition: ConnectorDefinition = { ...fields, ...methods };
  if (source && sourceBehaviour) {
    const { changeCheck, ...parts } = source;
    definition.source = {
      ...parts,
      extract: sourceBehaviour.extract,
      ...(changeCheck && sourceBehaviour.changeCheck ? { changeCheck: { ...changeCheck, changed: sourceBehaviour.changeCheck.changed } } : {}),
    };
  }
  if (destination && destinationBehaviour) definition.destination = { ...destination, deliver: destinationBehaviour.deliver };
  // The one cast: BehaviourOf<D> has made sure that every part D declares has its behaviour.
  return definition as ConnectorDefinition<ConfigOf<D>, ResourceOf<D>, TargetOf<D>> & { configuration: D['configuration'] };
}

/** Any behaviour as `defineConnector` reads it (BehaviourOf<D> without the conditions). */
interface ConnectorBehaviourParts extends Omit<ConnectorDefinition, keyof ConnectorDeclaration> {
  source?: SourceBehaviour;
  destination?: DestinationBehaviour;
}
