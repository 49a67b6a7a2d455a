import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { ConnectorContext } from '../types.js';
import { connect, type PostgisConfig } from './client.js';

/*
 * Idle connections a delivery hands back for the next delivery into the same database. A new
 * connection costs the server a process, a SCRAM exchange and loading PostGIS's library (about
 * 7 ms of server CPU and 3 ms of ours, against under 1 ms for the checks on an open connection;
 * docs/decisions.md, "idle PostGIS connections between deliveries"): Runs of a Job that fires every
 * minute, or many Jobs into one database, would pay it every time. Only connections that finished
 * cleanly come back (no transaction open, no statement failed), at most `poolLimits.perDatabase`
 * per database (SVC_POSTGIS_IDLE_CONNECTIONS) and each for `poolLimits.idleMs`, so a DBA sees a
 * few idle "geoflow" sessions for seconds after a burst, never a standing pool. GDAL's own
 * connection for the load is not pooled, and neither are a Source's: its checks run the user's
 * query, whose effects on a session (an advisory lock, a setting) must not reach another transfer.
 * A delivery runs no SQL of the user's.
 */

/** SVC_POSTGIS_IDLE_CONNECTIONS: idle connections kept per database (0: none, every delivery connects). */
function perDatabaseSetting(): number {
  const value = Number(process.env.SVC_POSTGIS_IDLE_CONNECTIONS ?? 8);
  return Number.isInteger(value) && value >= 0 ? value : 8;
}

/** How many idle connections one database keeps, and for how long (tests shorten it). */
export const poolLimits = { perDatabase: perDatabaseSetting(), idleMs: 10_000 };

interface Idle {
  client: pg.Client;
  timer: NodeJS.Timeout;
}
const idle = new Map<string, Idle[]>();
/** Clients whose end is watched already (a client comes back many times; one listener is enough). */
const watched = new WeakSet<pg.Client>();

/** One key per server, database, role and password (hashed: the key never holds the secret). */
function keyOf(config: PostgisConfig): string {
  const password = createHash('sha256')
    .update(config.password ?? '')
    .digest('hex');
  return [config.host, config.port, config.database, config.username, config.ssl_mode, password].join('\0');
}

/** A client's socket: unreferenced while idle (an idle connection must not keep a process alive), destroyed once the server closed it. */
const socketOf = (client: pg.Client) =>
  (client as unknown as { connection?: { stream?: { destroyed?: boolean; ref?(): void; unref?(): void } } }).connection?.stream;

function forget(key: string, client: pg.Client): void {
  const list = idle.get(key);
  const at = list?.findIndex((entry) => entry.client === client) ?? -1;
  if (!list || at < 0) return;
  clearTimeout(list[at]!.timer);
  list.splice(at, 1);
  if (list.length === 0) idle.delete(key);
}

/** A connection to the database: an idle one when there is one (the newest), otherwise a new one. */
export async function borrow(config: PostgisConfig, ctx: ConnectorContext): Promise<pg.Client> {
  const key = keyOf(config);
  for (let entry = idle.get(key)?.at(-1); entry; entry = idle.get(key)?.at(-1)) {
    forget(key, entry.client);
    const socket = socketOf(entry.client);
    // Closed by the server a moment ago, its end not yet seen: a new connection instead.
    if (socket?.destroyed) continue;
    socket?.ref?.();
    return entry.client;
  }
  return connect(config, ctx);
}

/** Back for the next delivery, or closed when the database keeps enough already. Only clean connections: errors close theirs instead. */
export function giveBack(config: PostgisConfig, client: pg.Client): void {
  const key = keyOf(config);
  const list = idle.get(key) ?? [];
  if (list.length >= poolLimits.perDatabase) {
    void client.end().catch(() => undefined);
    return;
  }
  const timer = setTimeout(() => {
    forget(key, client);
    void client.end().catch(() => undefined);
  }, poolLimits.idleMs);
  timer.unref();
  socketOf(client)?.unref?.();
  if (!watched.has(client)) {
    watched.add(client);
    // The server closed it (restart, pg_terminate_backend, idle_session_timeout): not handed out again.
    client.once('end', () => forget(key, client));
  }
  list.push({ client, timer });
  idle.set(key, list);
}

/** Closes every idle connection (a worker shutting down, tests). */
export async function closeIdle(): Promise<void> {
  const all = [...idle.values()].flat();
  idle.clear();
  await Promise.all(
    all.map(({ client, timer }) => {
      clearTimeout(timer);
      return client.end().catch(() => undefined);
    }),
  );
}

/** Idle connections kept now, over all databases (tests). */
export const idleCount = () => [...idle.values()].reduce((n, list) => n + list.length, 0);
