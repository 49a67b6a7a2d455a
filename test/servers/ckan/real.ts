import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, waitForPort } from '../../../devservers/ports.js';
import { stopProcess, tail } from '../../../devservers/processes.js';

/*
 * A real CKAN 2.12.0 (PyPI `ckan[requirements]`, venv .data/tools/ckan) with a real Solr 9.10.1
 * (Maven Central's solr-core + solr-test-framework, started through JettySolrRunner by
 * solr/SolrRunner.java) indexing into the core `ckan` with the schema.xml the ckan package ships,
 * Redis from Debian, and a database of the test run's own PostgreSQL. test/servers/ckan/install.sh
 * installs them. Configured with CKAN's own CLI (`ckan generate config`, `db init`,
 * `sysadmin add`, `user token add`), served by `ckan run` (Werkzeug, threaded), seeded by seed.py
 * through ckanapi. Everything lives under one temporary folder, removed by stop().
 */

const tools = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'tools');
const venv = path.join(tools, 'ckan');
const ckanBin = path.join(venv, 'bin', 'ckan');
const python = path.join(venv, 'bin', 'python');
const solrDir = path.join(tools, 'ckan-solr');
const here = path.resolve('test/servers/ckan');

/** What the real CKAN needs and lacks here (the real-CKAN cases skip naming it), or false. */
export function realCkanMissing(): string | false {
  const missing: string[] = [];
  if (!process.env.SVC_TEST_DATABASE_URL) missing.push('PostgreSQL (SVC_TEST_DATABASE_URL; `npm test` starts one)');
  if (!existsSync(ckanBin)) missing.push(`CKAN 2.12.0 (no ${ckanBin})`);
  if (!existsSync(path.join(solrDir, '.stamp'))) missing.push(`Solr 9.10.1 (no ${solrDir}; needs Java 17 and Maven)`);
  if (spawnSync('java', ['-version']).status !== 0) missing.push('Java (java)');
  if (spawnSync('redis-server', ['--version']).status !== 0) missing.push('Redis (redis-server)');
  return missing.length ? `${missing.join(', ')} missing: run \`npm test\` (test/servers/ckan/install.sh installs them)` : false;
}

export interface SeedResource {
  name: string;
  format?: string;
  /** A file uploaded to CKAN's file store. */
  file?: string;
  /** A link (CKAN keeps the URL). */
  url?: string;
}
export interface SeedDataset {
  name: string;
  title: string;
  private?: boolean;
  resources: SeedResource[];
}
/** A resource as CKAN's resource_create answered it. */
export interface CkanResourceRecord {
  id: string;
  name: string;
  format: string;
  url: string;
  url_type: string | null;
  last_modified: string | null;
  mimetype: string | null;
}

export interface RealCkan {
  /** The address it listens on, http://127.0.0.1:PORT. */
  url: string;
  /** Its ckan.site_url: http://localhost:PORT, the same server under another origin. */
  siteUrl: string;
  /** A sysadmin's API token (`ckan user token add`). */
  token: string;
  user: string;
  version: string;
  /** From the first process started to the portal answering, and the seeding, in ms. */
  startupMs: number;
  /** Creates an organization's datasets and resources with ckanapi; answers CKAN's resources by dataset and name. */
  seed(organization: string, datasets: SeedDataset[]): Promise<Record<string, Record<string, CkanResourceRecord>>>;
  /** Uploads another file to a resource (resource_patch). */
  reupload(id: string, file: string): Promise<CkanResourceRecord>;
  stop(): Promise<void>;
}

const exec = promisify(execFile);

export async function startRealCkan(): Promise<RealCkan> {
  const started = performance.now();
  const dir = mkdtempSync(path.join(tmpdir(), 'ckan-'));
  const children: ChildProcess[] = [];
  const database = `ckan_${randomBytes(5).toString('hex')}`;
  const adminUrl = process.env.SVC_TEST_DATABASE_URL!;
  const stopAll = async () => {
    for (const child of children.reverse()) await stopProcess(child);
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).finally(() => admin.end());
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [solrPort, redisPort] = await Promise.all([startSolr(dir, children), startRedis(dir, children), createDatabase(adminUrl, database)]);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const siteUrl = `http://localhost:${port}`;
    const ini = path.join(dir, 'ckan.ini');
    const ckan = (args: string[], input?: string) =>
      new Promise<string>((resolve, reject) => {
        const child = execFile(ckanBin, ['-c', ini, ...args], { cwd: dir, env: ckanEnv(), maxBuffer: 1 << 22 }, (error, stdout, stderr) =>
          error ? reject(new Error(`ckan ${args.join(' ')} failed: ${stderr.slice(-2000)}`)) : resolve(stdout),
        );
        if (input !== undefined) child.stdin?.end(input);
      });
    await exec(ckanBin, ['generate', 'config', ini], { cwd: dir, env: ckanEnv() });
    const dbUrl = adminUrl.replace(/\/[^/?]*(\?|$)/, `/${database}$1`);
    mkdirSync(path.join(dir, 'storage'));
    // The settings, as `ckan config-tool` would write them (it loads the whole environment, database included, first).
    const settings: Record<string, string> = {
      // SQLAlchemy 2 knows the postgresql:// scheme only
      'sqlalchemy.url': dbUrl.replace(/^postgres:/, 'postgresql:'),
      solr_url: `http://127.0.0.1:${solrPort}/solr/ckan`,
      'ckan.redis.url': `redis://127.0.0.1:${redisPort}/0`,
      'ckan.site_url': siteUrl,
      'ckan.storage_path': path.join(dir, 'storage'),
      'ckan.site_title': 'geoflow test portal',
    };
    let text = readFileSync(ini, 'utf8');
    for (const [key, value] of Object.entries(settings)) {
      const line = new RegExp(`^#?\\s*${key.replace(/\./g, '\\.')}\\s*=.*$`, 'm');
      text = line.test(text) ? text.replace(line, `${key} = ${value}`) : text.replace('[app:main]\n', `[app:main]\n${key} = ${value}\n`);
    }
    writeFileSync(ini, text);
    await ckan(['db', 'init']);
    const user = 'geoflow';
    // `sysadmin add` offers to create a user it does not know: yes.
    await ckan(['sysadmin', 'add', user, 'email=geoflow@example.com', `password=${randomBytes(12).toString('hex')}`], 'y\n');
    const server = spawn(ckanBin, ['-c', ini, 'run', '-H', '127.0.0.1', '-p', String(port), '-r', '-D', '-t'], {
      cwd: dir,
      env: ckanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(server);
    const log = tail(server);
    const tokenOut = await ckan(['user', 'token', 'add', user, 'geoflow-tests']);
    const token = /\n\s*(\S+)\s*$/.exec(tokenOut)?.[1];
    if (!token) throw new Error(`ckan user token add printed no token: ${tokenOut.slice(-500)}`);
    await waitForPort(port, '127.0.0.1', 90_000).catch((error: Error) => {
      throw new Error(`ckan run did not listen: ${error.message}\n${log()}`);
    });
    const status = (await (await fetch(`${url}/api/3/action/status_show`)).json()) as { result: { ckan_version: string } };
    const seedPlan = async (plan: unknown) => {
      const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) => {
        const child = execFile(python, [path.join(here, 'seed.py')], { maxBuffer: 1 << 24 }, (error, out, err) =>
          error ? reject(new Error(`seed.py failed: ${err.slice(-3000)}`)) : resolve({ stdout: out }),
        );
        child.stdin?.end(JSON.stringify(plan));
      });
      return JSON.parse(stdout);
    };
    return {
      url,
      siteUrl,
      token,
      user,
      version: status.result.ckan_version,
      startupMs: Math.round(performance.now() - started),
      seed: (organization, datasets) => seedPlan({ url, token, organization, datasets }),
      reupload: (id, file) => seedPlan({ url, token, reupload: { id, file } }),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll().catch(() => undefined);
    throw error;
  }
}

function ckanEnv(): NodeJS.ProcessEnv {
  // CKAN reads CKAN_* variables as settings: none of the test run's own may leak in.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CKAN_')));
  return { ...env, PATH: `${path.join(venv, 'bin')}:${process.env.PATH}` };
}

async function createDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`).finally(() => admin.end());
}

/** Solr with one core, `ckan`, whose schema is the one the ckan package ships; answers its port. */
async function startSolr(dir: string, children: ChildProcess[]): Promise<number> {
  const home = path.join(dir, 'solr');
  const conf = path.join(home, 'ckan', 'conf');
  mkdirSync(conf, { recursive: true });
  writeFileSync(path.join(home, 'solr.xml'), '<solr></solr>\n');
  writeFileSync(path.join(home, 'ckan', 'core.properties'), 'name=ckan\n');
  const site = spawnSync(python, ['-c', 'import ckan, os; print(os.path.dirname(ckan.__file__))'], { encoding: 'utf8' }).stdout.trim();
  copyFileSync(path.join(site, 'config', 'solr', 'schema.xml'), path.join(conf, 'schema.xml'));
  copyFileSync(path.join(here, 'solr', 'solrconfig.xml'), path.join(conf, 'solrconfig.xml'));
  // The schema's analyzers name these word lists; CKAN's own Solr image ships them empty.
  for (const words of ['protwords.txt', 'synonyms.txt', 'stopwords.txt']) writeFileSync(path.join(conf, words), '');
  const solr = spawn(
    'java',
    [
      '-Xmx384m',
      `-Dsolr.log.dir=${path.join(dir, 'solr-logs')}`,
      `-Dsolr.install.dir=${home}`,
      '-cp',
      `${path.join(solrDir, 'classes')}:${path.join(solrDir, 'lib', '*')}`,
      'SolrRunner',
      home,
    ],
    // stdin stays open: SolrRunner exits when it closes (this process gone, even killed).
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  children.push(solr);
  const log = tail(solr);
  return new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`Solr did not start within 90 s:\n${log()}`)), 90_000);
    solr.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const ready = /SOLR READY (\d+)/.exec(out);
      if (ready) {
        clearTimeout(timer);
        resolve(Number(ready[1]));
      }
    });
    solr.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Solr exited (${code}) before it was ready:\n${log()}`));
    });
  });
}

async function startRedis(dir: string, children: ChildProcess[]): Promise<number> {
  const port = await freePort();
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(redis);
  const log = tail(redis);
  await waitForPort(port, '127.0.0.1', 30_000).catch((error: Error) => {
    throw new Error(`redis-server did not start: ${error.message}\n${log()}`);
  });
  return port;
}
