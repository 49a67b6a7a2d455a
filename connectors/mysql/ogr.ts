import { egressAddress } from '../shared/policy/egress.js';
import { ConnectorError, type ConnectorFailureReason } from '../../domain/transfers.js';
import { runOgr2ogr, transferFailure } from '../shared/files/ogr2ogr.js';
import type { ConnectorContext } from '../types.js';
import { CONNECT_TIMEOUT_MS, describeServer, triedOf, type MysqlConfig } from './client.js';

/*
 * GDAL's MySQL driver for the bulk part of an extract or a delivery, run as ogr2ogr. Its dataset
 * name (`MYSQL:db,host=…,user=…`) is on ogr2ogr's command line and in GDAL's error messages, so
 * the password is never put in it: the client library (MariaDB Connector/C) reads it from the
 * MYSQL_PWD variable of the ogr2ogr child's own environment, which is built from nothing and
 * visible only to the service's own user. GDAL's driver offers no TLS settings, which is why
 * transfers refuse `ssl: true` (see the connector's notes).
 */

/** A value of GDAL's comma-separated MYSQL: dataset name. */
const value = (v: string) => (/[,"\\\s]/.test(v) ? `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` : v);

/** `tables=` limits what GDAL opens (it describes every table otherwise); names with separators cannot be listed. */
const listable = (t: string) => !/[,;"\\]/.test(t);

export function mysqlDataset(config: MysqlConfig, tables: string[]): string {
  const parts = [value(config.database), `host=${value(config.host)}`, `port=${config.port}`, `user=${value(config.username)}`];
  const named = tables.filter(listable);
  if (named.length) parts.push(`tables=${value(named.join(';'))}`);
  return `MYSQL:${parts.join(',')}`;
}

const messageReasons: [RegExp, ConnectorFailureReason][] = [
  [/Access denied for user/i, 'authentication_failed'],
  [/Unknown database|doesn't exist/i, 'not_found'],
  [/command denied|Access denied/i, 'permission_denied'],
  [/Can't connect|Unknown (MySQL|MariaDB) server host|Lost connection|gone away/i, 'unreachable'],
  [/timeout|timed out/i, 'timeout'],
];

export function refuseTls(config: MysqlConfig): void {
  if (config.ssl) {
    throw new ConnectorError(
      'tls_error',
      `${describeServer(config)}: transfers cannot use TLS (GDAL's MySQL driver has no TLS settings); set ssl to false on a trusted network or through an SSH tunnel`,
      triedOf(config),
      false,
    );
  }
}

export async function ogr2ogrMysql(config: MysqlConfig, ctx: ConnectorContext, what: string, args: string[], limitFile?: string): Promise<void> {
  // GDAL's client library connects to the address the outbound policy checked, not to a name it would resolve again.
  const address = await egressAddress(config.host, config.port);
  const pinned = args.map((a) => (a.startsWith('MYSQL:') ? a.replace(`,host=${value(config.host)},`, `,host=${value(address)},`) : a));
  await runOgr2ogr(
    {
      args: ['--config', 'MYSQL_TIMEOUT', String(CONNECT_TIMEOUT_MS / 1000), ...pinned],
      env: { MYSQL_PWD: config.password ?? '' },
      label: `${what} (${describeServer(config)})`,
      ...(limitFile ? { limitFile } : {}),
    },
    ctx,
    transferFailure(messageReasons, `${what} (${describeServer(config)})`, triedOf(config)),
  );
}
