import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readEnvFile } from './env-file.js';

/** Everything the processes read from the environment, parsed once. */
export interface Config {
  dataDir: string;
  port: number;
  host: string;
  databaseUrl: string;
  eventStoreUrl: string | undefined;
  temporalAddress: string;
  temporalNamespace: string;
  /** The Temporal UI's address for links from the browser app (Run pages), when set. */
  temporalUiUrl: string | null;
  /**
   * A raster tile service the browser's maps draw under the data (SVC_BASEMAP_URL, an XYZ
   * template), with its attribution (SVC_BASEMAP_ATTRIBUTION); null: the Natural Earth basemap
   * shipped with the app, which needs no network.
   */
  basemap: BasemapConfig | null;
  /** Temporal's HTTP API port on the Temporal host (SVC_TEMPORAL_HTTP_PORT, default 7243): refused by the outbound policy. */
  temporalHttpPort: number;
  /**
   * Temporal's other listeners on its host (SVC_TEMPORAL_OTHER_PORTS, comma-separated; none by
   * default), refused by the outbound policy: npm start lists every port of its dev server there
   * (metrics, and the history, matching and worker services).
   */
  temporalOtherPorts: number[];
  taskQueue: string;
  secretKey: Buffer;
  adminEmail: string | undefined;
  adminPassword: string | undefined;
  /** Largest Workspace upload (SVC_MAX_UPLOAD_MB, default 256 as the public contract says; streamed to disk, so raising it costs disk only). */
  maxUploadBytes: number;
  /**
   * Largest input a Job's Run reads from its Source (SVC_MAX_JOB_INPUT_MB, default 51200 = 50 GiB):
   * nightly files are bigger than what people upload by hand, and the free-disk check guards the rest.
   */
  maxJobInputBytes: number;
  /**
   * How long Temporal waits for a heartbeat of a GDAL or transfer activity before it gives the
   * attempt up (SVC_HEARTBEAT_TIMEOUT_S, default 30): the time a dead worker's work takes to move.
   */
  heartbeatTimeoutMs: number;
  /** Wall-clock limit of one GDAL process (a conversion, a pipeline stage): SVC_GDAL_TIMEOUT_MIN, default 50. */
  gdalTimeoutMs: number;
  /** Address-space limit of one GDAL process: SVC_GDAL_MEMORY_MB, default 4096. */
  gdalMemoryBytes: number;
  /** Wall-clock limit of one preview (SVC_PREVIEW_TIMEOUT_S, default 30): a preview is stopped past it, and when its client goes away. */
  previewTimeoutMs: number;
  /** Largest file one stage of a transformed preview may write (SVC_PREVIEW_MAX_MB, default 256). */
  previewMaxBytes: number;
  workspaceTtlMs: number;
  /** Consecutive failed automated Runs (scheduled or triggered) after which a Job disables itself (SVC_JOB_MAX_FAILURES, default 5). */
  jobMaxConsecutiveFailures: number;
  /**
   * How late a scheduled Run may still start after its fire time (SVC_SCHEDULE_CATCHUP_MIN,
   * default 1440 = a day): a fire missed while Temporal or the workers were down is run when they
   * are back within it, once (docs/jobs.md, "After downtime").
   */
  scheduleCatchupMs: number;
  /**
   * Days a finished Run is kept (SVC_RUN_RETENTION_DAYS, default 90): then its record, its files
   * and its workflow histories are removed (application/run-retention.ts). 0 keeps Runs forever.
   */
  runRetentionDays: number;
  edition: string;
  containerImage: string | null;
  publicOrigin: string | undefined;
  logLevel: string;
  /**
   * The outbound policy's operator lists (SVC_OUTBOUND_ALLOW, SVC_OUTBOUND_DENY): CIDR ranges,
   * addresses, host names and groups, parsed and applied by connectors/shared/policy/egress.ts.
   */
  outbound: { allow: string; deny: string };
  /**
   * Where the files of Workspaces and Runs live: null for the data folder (one machine), or an
   * S3-compatible bucket shared by API replicas and workers on any host (SVC_STORAGE_URL).
   */
  storage: StorageConfig | null;
  /** The metrics listeners (docs/metrics.md); a process serves none while its port is unset. */
  metrics: MetricsConfig;
}

export interface MetricsConfig {
  /** SVC_METRICS_HOST: the address both listeners bind, default 127.0.0.1 (this machine only). */
  host: string;
  /** SVC_METRICS_PORT: the API's listener. */
  apiPort: number | null;
  /** SVC_WORKER_METRICS_PORT: a worker's listener (one port per worker process on a host). */
  workerPort: number | null;
  /** SVC_METRICS_TOKEN: when set, a scrape must send `Authorization: Bearer <token>`. */
  token: string | null;
  /** Where traces go (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT), for the outbound policy; platform/tracing.ts reads the rest. */
  otlpEndpoint: string | null;
}

export interface BasemapConfig {
  /** https://tile.example.org/{z}/{x}/{y}.png ({s}: one of the subdomains a, b, c, as Leaflet fills it). */
  url: string;
  attribution: string;
  /** What the page's Content-Security-Policy allows images from: the template's origin. */
  origin: string;
}

export interface StorageConfig {
  /** SVC_STORAGE_URL as given, e.g. s3://bucket/prefix. */
  url: string;
  /** SVC_STORAGE_ENDPOINT, else AWS_ENDPOINT_URL_S3, else AWS's own for the region. */
  endpoint: string | undefined;
  /** AWS_REGION (or AWS_DEFAULT_REGION), default us-east-1. */
  region: string;
  /** SVC_STORAGE_PATH_STYLE=true for MinIO and Ceph without virtual-host buckets. */
  forcePathStyle: boolean;
  /** Each process's local cache of stored files (SVC_STORAGE_CACHE_MB, default 2048). */
  cacheBytes: number;
  /**
   * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN) when given in this
   * configuration's environment; otherwise the SDK's usual chain (profile, instance or task role).
   */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
}

function storageFrom(env: NodeJS.ProcessEnv): StorageConfig | null {
  const url = env.SVC_STORAGE_URL;
  if (!url) return null;
  if (!/^s3:\/\/[^/]+/.test(url)) throw new Error(`SVC_STORAGE_URL must look like s3://bucket/prefix, got "${url}"`);
  const endpoint = env.SVC_STORAGE_ENDPOINT || env.AWS_ENDPOINT_URL_S3 || undefined;
  const pathStyle = env.SVC_STORAGE_PATH_STYLE ?? 'false';
  if (!['true', 'false'].includes(pathStyle)) throw new Error(`SVC_STORAGE_PATH_STYLE must be true or false, got "${pathStyle}"`);
  return {
    url,
    endpoint,
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    forcePathStyle: pathStyle === 'true',
    cacheBytes: intFrom(env.SVC_STORAGE_CACHE_MB, 2048, 'SVC_STORAGE_CACHE_MB') * 1024 * 1024,
    credentials:
      env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
        ? {
            accessKeyId: env.AWS_ACCESS_KEY_ID,
            secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
            ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
          }
        : undefined,
  };
}

/** A whole number of days where 0 means "never". */
function daysFrom(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number of days (0 keeps forever), got "${value}"`);
  return n;
}

function intFrom(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${value}"`);
  return n;
}

/** A TCP port, or null when unset. */
function portFrom(value: string | undefined, name: string): number | null {
  if (value === undefined || value === '') return null;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${name} must be a TCP port (1-65535), got "${value}"`);
  return port;
}

/** A comma-separated list of TCP ports (empty: none). */
function portsFrom(value: string | undefined, name: string): number[] {
  const ports = (value ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map(Number);
  const bad = ports.find((p) => !Number.isInteger(p) || p < 1 || p > 65535);
  if (bad !== undefined) throw new Error(`${name} must list TCP ports separated by commas, got "${value}"`);
  return ports;
}

/** The key that encrypts connection secrets: SVC_SECRET_KEY (hex or base64, 32 bytes) or a key file made on first start. */
/** SVC_SECRET_KEY's value as the key: 32 bytes, written as 64 hex characters or base64. */
export function parseSecretKey(given: string): Buffer {
  const key = /^[0-9a-f]{64}$/i.test(given) ? Buffer.from(given, 'hex') : Buffer.from(given, 'base64');
  if (key.length !== 32) throw new Error('SVC_SECRET_KEY must be 32 bytes, as 64 hex characters or base64');
  return key;
}

function loadSecretKey(env: NodeJS.ProcessEnv, dataDir: string): Buffer {
  const given = env.SVC_SECRET_KEY;
  if (given) return parseSecretKey(given);
  // With shared storage the processes run on several hosts, each with its own data folder: a key
  // made in one of them would not decrypt what another host's process encrypted.
  if (env.SVC_STORAGE_URL) {
    throw new Error(
      'SVC_SECRET_KEY must be set when SVC_STORAGE_URL is: every host must encrypt and decrypt connection secrets with the same key (openssl rand -hex 32)',
    );
  }
  const file = path.join(dataDir, 'secret.key');
  if (!existsSync(file)) {
    // The API and the worker may both start on a fresh data folder: the key is written whole
    // under another name and linked into place, so the loser of the race reads the winner's key
    // (never a half-written file) instead of failing on EEXIST.
    mkdirSync(dataDir, { recursive: true });
    const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(draft, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
    try {
      linkSync(draft, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(draft);
    }
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
}

/**
 * Where `npm start` writes how to reach the cluster it runs (SVC_DATABASE_URL with its generated
 * password, mode 0600), so that commands run beside it (users:add, projections:rebuild) find the
 * database by themselves.
 */
export const LOCAL_DATABASE_FILE = 'local-database.env';

function databaseUrlFrom(env: NodeJS.ProcessEnv, dataDir: string): string {
  if (env.SVC_DATABASE_URL) return env.SVC_DATABASE_URL;
  const file = path.join(dataDir, LOCAL_DATABASE_FILE);
  const local = existsSync(file) ? readEnvFile(file).SVC_DATABASE_URL : undefined;
  if (!local) throw new Error(`SVC_DATABASE_URL is not set, and ${file} (which npm start writes for its local cluster) does not exist`);
  return local;
}

/** SVC_TEMPORAL_UI_URL: an http(s) origin (and path), kept without a trailing slash. */
function temporalUiUrlFrom(value: string | undefined): string | null {
  if (!value) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`SVC_TEMPORAL_UI_URL must be an http(s) URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`SVC_TEMPORAL_UI_URL must be an http(s) URL, got "${value}"`);
  if (url.username || url.password || url.search) throw new Error('SVC_TEMPORAL_UI_URL must not carry credentials or a query');
  return url.toString().replace(/\/+$/, '');
}

/** SVC_BASEMAP_URL: an http(s) XYZ tile template with {z}, {x} and {y}; {s} may stand for a subdomain. */
function basemapFrom(value: string | undefined, attribution: string | undefined): BasemapConfig | null {
  if (!value) return null;
  const refuse = (why: string) => new Error(`SVC_BASEMAP_URL ${why}, got "${value}"`);
  if (!value.includes('{z}') || !value.includes('{x}') || !/\{-?y\}/.test(value)) throw refuse('must be a tile URL template with {z}, {x} and {y}');
  let url: URL;
  try {
    // The placeholders are not valid in a host name: parse with stand-ins.
    url = new URL(value.replace(/\{-?[a-z]+\}/g, '0'));
  } catch {
    throw refuse('must be an http(s) URL template');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse('must be an http(s) URL template');
  if (url.username || url.password) throw refuse('must not carry credentials (it is public in GET /api/v1/system)');
  const hostTemplate = /^https?:\/\/([^/:?#]+)/.exec(value)?.[1] ?? url.hostname;
  // {s}.tile.example.org: any subdomain of tile.example.org
  const subdomains = hostTemplate.startsWith('{s}.');
  if ((subdomains ? hostTemplate.slice(4) : hostTemplate).includes('{')) throw refuse('may use {s} only as the first label of the host');
  const host = subdomains ? `*.${url.hostname.split('.').slice(1).join('.')}` : url.hostname;
  return { url: value, attribution: attribution?.trim() ?? '', origin: `${url.protocol}//${host}${url.port ? `:${url.port}` : ''}` };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = path.resolve(env.SVC_DATA_DIR ?? '.data');
  const databaseUrl = databaseUrlFrom(env, dataDir);
  return {
    dataDir,
    port: intFrom(env.SVC_PORT, 8080, 'SVC_PORT'),
    host: env.SVC_HOST ?? '127.0.0.1',
    databaseUrl,
    eventStoreUrl: env.SVC_EVENTSTORE_URL || undefined,
    temporalAddress: env.SVC_TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    temporalNamespace: env.SVC_TEMPORAL_NAMESPACE ?? 'default',
    temporalUiUrl: temporalUiUrlFrom(env.SVC_TEMPORAL_UI_URL),
    basemap: basemapFrom(env.SVC_BASEMAP_URL, env.SVC_BASEMAP_ATTRIBUTION),
    temporalHttpPort: intFrom(env.SVC_TEMPORAL_HTTP_PORT, 7243, 'SVC_TEMPORAL_HTTP_PORT'),
    temporalOtherPorts: portsFrom(env.SVC_TEMPORAL_OTHER_PORTS, 'SVC_TEMPORAL_OTHER_PORTS'),
    taskQueue: env.SVC_TASK_QUEUE ?? 'geoflow',
    secretKey: loadSecretKey(env, dataDir),
    adminEmail: env.SVC_ADMIN_EMAIL || undefined,
    adminPassword: env.SVC_ADMIN_PASSWORD || undefined,
    maxUploadBytes: intFrom(env.SVC_MAX_UPLOAD_MB, 256, 'SVC_MAX_UPLOAD_MB') * 1024 * 1024,
    maxJobInputBytes: intFrom(env.SVC_MAX_JOB_INPUT_MB, 51_200, 'SVC_MAX_JOB_INPUT_MB') * 1024 * 1024,
    heartbeatTimeoutMs: intFrom(env.SVC_HEARTBEAT_TIMEOUT_S, 30, 'SVC_HEARTBEAT_TIMEOUT_S') * 1000,
    gdalTimeoutMs: intFrom(env.SVC_GDAL_TIMEOUT_MIN, 50, 'SVC_GDAL_TIMEOUT_MIN') * 60_000,
    gdalMemoryBytes: intFrom(env.SVC_GDAL_MEMORY_MB, 4096, 'SVC_GDAL_MEMORY_MB') * 1024 * 1024,
    previewTimeoutMs: intFrom(env.SVC_PREVIEW_TIMEOUT_S, 30, 'SVC_PREVIEW_TIMEOUT_S') * 1000,
    previewMaxBytes: intFrom(env.SVC_PREVIEW_MAX_MB, 256, 'SVC_PREVIEW_MAX_MB') * 1024 * 1024,
    workspaceTtlMs: intFrom(env.SVC_JOB_TTL, 60, 'SVC_JOB_TTL') * 60_000,
    jobMaxConsecutiveFailures: Math.floor(intFrom(env.SVC_JOB_MAX_FAILURES, 5, 'SVC_JOB_MAX_FAILURES')),
    // Temporal's least catch-up window is 10 s.
    scheduleCatchupMs: Math.max(10_000, intFrom(env.SVC_SCHEDULE_CATCHUP_MIN, 1440, 'SVC_SCHEDULE_CATCHUP_MIN') * 60_000),
    runRetentionDays: daysFrom(env.SVC_RUN_RETENTION_DAYS, 90, 'SVC_RUN_RETENTION_DAYS'),
    edition: env.SVC_EDITION ?? 'on-premise',
    containerImage: env.SVC_CONTAINER_IMAGE || null,
    publicOrigin: env.SVC_PUBLIC_ORIGIN || undefined,
    logLevel: env.SVC_LOG_LEVEL ?? 'info',
    outbound: { allow: env.SVC_OUTBOUND_ALLOW ?? '', deny: env.SVC_OUTBOUND_DENY ?? '' },
    storage: storageFrom(env),
    metrics: {
      host: env.SVC_METRICS_HOST || '127.0.0.1',
      apiPort: portFrom(env.SVC_METRICS_PORT, 'SVC_METRICS_PORT'),
      workerPort: portFrom(env.SVC_WORKER_METRICS_PORT, 'SVC_WORKER_METRICS_PORT'),
      token: env.SVC_METRICS_TOKEN || null,
      otlpEndpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT || null,
    },
  };
}
