import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startPostgres, type LocalPostgres } from '../../scripts/local-services.js';
import { freePort } from '../../devservers/ports.js';

/**
 * The cluster `npm start` runs: durable and closed to other local users, and folders made by the
 * earlier script (trust on TCP, fsync off) upgraded in place with their data.
 */
const PG_BIN = '/usr/lib/postgresql/15/bin';
const skip =
  !existsSync(`${PG_BIN}/initdb`) && `PostgreSQL 15 is not installed at ${PG_BIN}: run the suite with \`npm test\`, whose scripts/ensure.sh installs it`;
const isRoot = process.getuid?.() === 0;
const root = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'test', `local-postgres-${randomBytes(4).toString('hex')}`);

function asOwner(cmd: string, args: string[]) {
  const r = isRoot ? spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8' }) : spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr || r.stdout}`);
}

/** Exactly what scripts/local-services.ts did before: trust for everyone, fsync off. */
function oldStyleCluster(dir: string, port: number) {
  mkdirSync(dir, { recursive: true });
  if (isRoot) spawnSync('chown', ['postgres:postgres', dir]);
  asOwner(`${PG_BIN}/initdb`, ['-D', dir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8', '--no-sync']);
  asOwner('mkdir', [path.join(dir, 'socket')]);
  asOwner(`${PG_BIN}/pg_ctl`, [
    'start',
    '-w',
    '-D',
    dir,
    '-l',
    path.join(dir, 'server.log'),
    '-o',
    `-p ${port} -k ${path.join(dir, 'socket')} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
  ]);
  asOwner('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-c', 'CREATE DATABASE geoflow']);
  asOwner('psql', [
    '-h',
    '127.0.0.1',
    '-p',
    String(port),
    '-U',
    'postgres',
    '-d',
    'geoflow',
    '-c',
    "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('from before')",
  ]);
}

async function query(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** The error a connection gets, or undefined when it gets in. */
async function refusal(config: pg.ClientConfig): Promise<(Error & { code?: string }) | undefined> {
  const client = new pg.Client(config);
  try {
    await client.connect();
    await client.end();
    return undefined;
  } catch (error) {
    return error as Error & { code?: string };
  }
}

async function expectClosedToOthers(sut: LocalPostgres, port: number) {
  // TCP wants the password: a wrong one and none at all are refused, whatever the user name.
  for (const user of ['postgres', 'nobody']) {
    expect((await refusal({ host: '127.0.0.1', port, user, database: 'geoflow', password: 'guess' }))?.code).toBe('28P01');
  }
  expect(await refusal({ host: '127.0.0.1', port, user: 'postgres', database: 'geoflow' })).toBeDefined();
  // The password is generated, kept in a file only its owner reads, and in the service's URL.
  const password = readFileSync(sut.passwordFile, 'utf8').trim();
  expect(password.length).toBeGreaterThanOrEqual(32);
  expect(statSync(sut.passwordFile).mode & 0o777).toBe(0o600);
  expect(sut.url('geoflow')).toContain(`:${password}@127.0.0.1:${port}/`);
  expect(await query(sut.url('geoflow'), 'SHOW fsync')).toEqual([{ fsync: 'on' }]);
  // The socket the scripts use is the cluster owner's alone.
  expect(statSync(path.join(sut.dir, 'socket', `.s.PGSQL.${port}`)).mode & 0o777).toBe(0o700);
}

describe.skipIf(skip)('the local PostgreSQL cluster of npm start', () => {
  const started: LocalPostgres[] = [];
  afterAll(() => {
    for (const c of started) c.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('upgrades a stopped folder of the earlier script in place: password, pg_hba.conf, fsync on, data kept', async () => {
    const port = await freePort();
    const dir = path.join(root, 'stopped', 'pg');
    oldStyleCluster(dir, port);
    asOwner(`${PG_BIN}/pg_ctl`, ['stop', '-w', '-D', dir]);

    const sut = await startPostgres(dir, port, ['geoflow']);
    started.push(sut);
    await expectClosedToOthers(sut, port);
    expect(await query(sut.url('geoflow'), 'SELECT v FROM kept')).toEqual([{ v: 'from before' }]);
    expect(readFileSync(path.join(dir, 'pg_hba.conf'), 'utf8')).not.toMatch(/^host.*trust/m);

    // A second start (the next `npm start`) reuses the same password and keeps the data.
    sut.stop();
    const again = await startPostgres(dir, port, ['geoflow']);
    expect(again.url('geoflow')).toBe(sut.url('geoflow'));
    expect(await query(again.url('geoflow'), 'SELECT v FROM kept')).toEqual([{ v: 'from before' }]);
  });

  it('restarts a postmaster the earlier script left running with fsync off', async () => {
    const port = await freePort();
    const dir = path.join(root, 'running', 'pg');
    oldStyleCluster(dir, port);
    expect(await query(`postgres://postgres@127.0.0.1:${port}/geoflow`, 'SHOW fsync')).toEqual([{ fsync: 'off' }]);

    const sut = await startPostgres(dir, port, ['geoflow']);
    started.push(sut);
    await expectClosedToOthers(sut, port);
    expect(await query(sut.url('geoflow'), 'SELECT v FROM kept')).toEqual([{ v: 'from before' }]);
  });

  it('runs throwaway clusters (tests, benches) with fsync off, and closed all the same', async () => {
    const port = await freePort();
    const sut = await startPostgres(path.join(root, 'throwaway', 'pg'), port, ['postgres'], { fresh: true, durable: false });
    started.push(sut);
    expect(await query(sut.url('postgres'), 'SHOW fsync')).toEqual([{ fsync: 'off' }]);
    expect((await refusal({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', password: 'guess' }))?.code).toBe('28P01');
  });
});
