import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { until } from '../../support/until.js';

/*
 * A throwaway MariaDB for the mysql connector suites: mariadb-install-db into a temp folder,
 * mariadbd on a free loopback port, as the unprivileged `mysql` user when we are root (the
 * server refuses to run as root). Nothing of the Debian package's own instance is used.
 * test/servers/mariadb/install.sh installs the package.
 */

const INSTALL_DB = ['/usr/bin/mariadb-install-db', '/usr/bin/mysql_install_db'].find((p) => existsSync(p));
const SERVER = ['/usr/sbin/mariadbd', '/usr/sbin/mysqld'].find((p) => existsSync(p));

/** Why the suite must be skipped, or false when a MariaDB can be started. */
export const mariadbMissing: string | false =
  !INSTALL_DB || !SERVER ? 'MariaDB is not installed (mariadb-server; test/servers/mariadb/install.sh installs it, `npm test` runs it)' : false;

export interface LocalMariadb {
  host: string;
  port: number;
  /** A login with every privilege on `database`, and its password. */
  database: string;
  username: string;
  password: string;
  /** A root connection over the server's socket, for arranging and checking. */
  root(database?: string): Promise<mysql.Connection>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

const isRoot = process.getuid?.() === 0;

export async function startMariadb(): Promise<LocalMariadb> {
  if (mariadbMissing) throw new Error(mariadbMissing);
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-mariadb-'));
  chmodSync(dir, 0o755);
  if (isRoot) spawnSync('chown', ['mysql:mysql', dir]);
  const datadir = path.join(dir, 'data');
  const socket = path.join(dir, 'mysqld.sock');
  const user = isRoot ? ['--user=mysql'] : [];
  // Socket authentication: the OS user running the suite is the server's administrator.
  const admin = isRoot ? 'root' : userInfo().username;
  const install = spawnSync(
    INSTALL_DB!,
    ['--no-defaults', `--datadir=${datadir}`, ...user, '--auth-root-authentication-method=socket', `--auth-root-socket-user=${admin}`, '--skip-test-db'],
    { encoding: 'utf8' },
  );
  if (install.status !== 0) throw new Error(`mariadb-install-db failed: ${install.stderr || install.stdout}`);
  const port = await freePort();
  const child: ChildProcess = spawn(
    SERVER!,
    [
      '--no-defaults',
      `--datadir=${datadir}`,
      ...user,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--socket=${socket}`,
      `--pid-file=${path.join(dir, 'mysqld.pid')}`,
      `--log-error=${path.join(dir, 'error.log')}`,
      '--skip-log-bin',
      '--skip-name-resolve',
      // A throwaway server: no flush per commit (GDAL's MySQL driver commits every row it inserts).
      '--innodb-buffer-pool-size=64M',
      '--innodb-log-file-size=16M',
      '--innodb-flush-log-at-trx-commit=0',
      '--character-set-server=utf8mb4',
      '--collation-server=utf8mb4_unicode_ci',
    ],
    { stdio: 'ignore' },
  );
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const root = (database?: string) => mysql.createConnection({ socketPath: socket, user: admin, ...(database ? { database } : {}), multipleStatements: true });
  let refused: unknown;
  await until(
    `mariadbd to accept connections on ${socket}`,
    async () => {
      if (exited) throw new Error(`mariadbd exited at start; see ${path.join(dir, 'error.log')}`);
      try {
        await (await root()).end();
        return true;
      } catch (error) {
        refused = error;
        return false;
      }
    },
    60_000,
    200,
  ).catch((error: unknown) => {
    throw exited ? error : (refused ?? error); // at the deadline, the last refusal says more than the time
  });
  const database = 'gis';
  const username = 'loader';
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const c = await root();
  try {
    await c.query(`CREATE DATABASE ${database} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    await c.query(`CREATE USER '${username}'@'%' IDENTIFIED BY '${password}'`);
    // Every database named gis…: a missing gis_x is then "unknown database", not "access denied".
    await c.query(`GRANT ALL ON \`gis%\`.* TO '${username}'@'%'`);
  } finally {
    await c.end();
  }
  return {
    host: '127.0.0.1',
    port,
    database,
    username,
    password,
    root,
    async stop() {
      if (!exited) {
        child.kill('SIGTERM');
        await new Promise<void>((r) => {
          if (exited) return r();
          const timer = setTimeout(() => {
            child.kill('SIGKILL');
            r();
          }, 20_000);
          child.once('exit', () => {
            clearTimeout(timer);
            r();
          });
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
