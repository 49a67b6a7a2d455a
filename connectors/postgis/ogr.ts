import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { egressAddress } from '../shared/policy/egress.js';
import type { ConnectorFailureReason } from '../../domain/transfers.js';
import { runOgr2ogr, transferFailure } from '../shared/files/ogr2ogr.js';
import type { ConnectorContext } from '../types.js';
import { CONNECT_TIMEOUT_MS, describeServer, triedOf, type PostgisConfig } from './client.js';

/*
 * GDAL's PostgreSQL driver (libpq) for the bulk part of an extract or a delivery, run as ogr2ogr
 * (or, for a small delivery, ogr2ogr's library call in the worker: shared/files/translate-here.ts).
 * The password never appears in the connection string (which is on ogr2ogr's command line), in
 * the service's environment or in a log: it is written to a libpq password file, mode 0600, in a
 * folder of its own (mode 0700) inside the call's work folder, named by the connection string's
 * `passfile` parameter, and removed when the transfer ends.
 */

/** A libpq connection-string value, quoted ('…' with \ and ' escaped). */
const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** A .pgpass field: \ and : escaped. */
const passField = (value: string) => value.replace(/\\/g, '\\\\').replace(/:/g, '\\:');

/** Debian's bundle of the system's trusted CAs: what node-postgres verifies against too. */
const SYSTEM_CAS = '/etc/ssl/certs/ca-certificates.crt';

export interface Libpq {
  /** `PG:host=… dbname=…` for GDAL, without the password. */
  dataset: string;
  close(): Promise<void>;
}

/**
 * The GDAL dataset name of the connection and its private password file. `readOnly` makes every
 * transaction of the session read-only (a Source's query can never write).
 */
export async function libpqFor(config: PostgisConfig, ctx: ConnectorContext, options: { readOnly?: boolean } = {}): Promise<Libpq> {
  const dir = await mkdtemp(path.join(ctx.workDir, '.pg-'));
  const passfile = path.join(dir, 'pgpass');
  await writeFile(passfile, `*:*:*:*:${passField(config.password ?? '')}\n`, { mode: 0o600 });
  const params: Record<string, string> = {
    host: config.host,
    // libpq connects to hostaddr, the address the outbound policy checked; host stays the TLS name.
    hostaddr: await egressAddress(config.host, config.port),
    port: String(config.port),
    dbname: config.database,
    user: config.username,
    // Empty, so libpq reads the password file and never takes PGPASSWORD from the environment of a
    // process that loads in-process (the worker's own database may be configured that way).
    password: '',
    passfile,
    sslmode: config.ssl_mode,
    connect_timeout: String(CONNECT_TIMEOUT_MS / 1000),
    application_name: 'geoflow',
  };
  if (config.ssl_mode === 'verify-ca' || config.ssl_mode === 'verify-full') params.sslrootcert = SYSTEM_CAS;
  if (options.readOnly) params.options = '-c default_transaction_read_only=on';
  const dataset = `PG:${Object.entries(params)
    .map(([k, v]) => `${k}=${quote(v)}`)
    .join(' ')}`;
  return { dataset, close: () => rm(dir, { recursive: true, force: true }) };
}

/** libpq and PostgreSQL messages GDAL passes on, by what they mean. */
const messageReasons: [RegExp, ConnectorFailureReason][] = [
  [/password authentication failed|no pg_hba\.conf entry|role .* does not exist/i, 'authentication_failed'],
  [/database .* does not exist|relation .* does not exist|schema .* does not exist/i, 'not_found'],
  [/permission denied|read-only transaction/i, 'permission_denied'],
  [/SSL|certificate/i, 'tls_error'],
  [/timeout expired|canceling statement due to statement timeout/i, 'timeout'],
  [/could not connect|Connection refused|could not translate host name|server closed the connection|no route to host/i, 'unreachable'],
  [/out of memory|could not extend file|No space left/i, 'server_error'],
];

/** Names a transfer in messages: what it does and on which server. */
export const pgLabel = (config: PostgisConfig, what: string) => `${what} (${describeServer(config)})`;

export async function ogr2ogrPg(config: PostgisConfig, ctx: ConnectorContext, what: string, args: string[], limitFile?: string): Promise<void> {
  const label = pgLabel(config, what);
  await runOgr2ogr({ args, label, ...(limitFile ? { limitFile } : {}) }, ctx, transferFailure(messageReasons, label, triedOf(config)));
}
