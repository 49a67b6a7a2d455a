import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { allScopes } from '../domain/accounts/scopes.js';

/**
 * schemathesis against the real API: every operation of /api/v1/openapi.json, generated from the
 * document itself (so routes added later are covered without touching this file), with every
 * check, authenticated by a PAT holding every scope (the token routes, which take a browser
 * session only, by the session cookie of a login; see schemathesis.toml and hooks.py). Bounded: `SVC_SCHEMATHESIS_EXAMPLES` cases
 * per operation (default 25), a fixed seed unless `SVC_SCHEMATHESIS_SEED` says otherwise.
 *
 * `npm test` runs it against the server it starts for the Python suite. To rerun it alone:
 *   npm run test:schemathesis                    # starts its own PostgreSQL, Temporal, API, worker
 *   SVC_TEST_URL=http://127.0.0.1:8080 SVC_TEST_ADMIN_EMAIL=… SVC_TEST_ADMIN_PASSWORD=… npm run test:schemathesis
 * Each failure prints a curl line to reproduce it; the JUnit report is in the report folder.
 */

export interface SchemathesisResult {
  passed: number;
  failed: number;
  skipped: number;
  /** Set when schemathesis could not run at all (missing install, login refused). */
  problem?: string;
}

const CONFIG = path.resolve('test/schemathesis/schemathesis.toml');
/** Keeps the run from revoking its own token (see the file). */
const HOOKS = path.resolve('test/schemathesis/hooks.py');

/**
 * The operations schemathesis could not get past authentication ("Authentication failed: N
 * operations returned only 401/403 responses"): never tested, whatever the counts say. The
 * configuration makes that warning fail the run (`fail-on`); this names them in our words.
 */
export function authenticationFailures(output: string): string[] | undefined {
  const lines = output.split('\n');
  const at = lines.findIndex((l) => /Authentication failed: \d+ operations? returned only 401\/403/.test(l));
  if (at < 0) return undefined;
  const operations: string[] = [];
  for (const line of lines.slice(at + 1)) {
    if (/^(=+ |💡|[A-Z][a-z]+( [a-z]+)*: \d+ operations?)/.test(line.trim()) && operations.length) break;
    const m = /^\s*- ((?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|QUERY|TRACE) \S+)/.exec(line);
    if (m) operations.push(m[1]!);
  }
  return [...new Set(operations)];
}

export function schemathesisBin(dataDir: string): string {
  return path.join(dataDir, 'tools/schemathesis/bin/schemathesis');
}

/** A login's session cookie value, and a PAT with every scope made through it. */
async function credentials(base: string, email: string, password: string): Promise<{ token: string; tokenId: string; session: string }> {
  const login = await fetch(`${base}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (login.status !== 200) throw new Error(`login as ${email} failed: ${login.status} ${await login.text()}`);
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const session = cookie.slice(cookie.indexOf('=') + 1);
  const created = await fetch(`${base}/api/v1/account/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, origin: base },
    body: JSON.stringify({ name: 'schemathesis', scopes: allScopes, expires_in_days: 1 }),
  });
  if (created.status !== 201) throw new Error(`token creation failed: ${created.status} ${await created.text()}`);
  const { token, id } = (await created.json()) as { token: string; id: string };
  return { token, tokenId: id, session };
}

/**
 * Runs a child to its end without blocking this process's event loop (the API under test may be
 * served by this very process, as in test/schemathesis/), killed after `timeoutMs`.
 */
function runChild(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; onTimeout?: () => Promise<void> },
): Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    const timer = setTimeout(() => {
      void (options.onTimeout?.() ?? Promise.resolve()).catch(() => undefined).finally(() => child.kill('SIGKILL'));
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

/**
 * Said when schemathesis is killed for its time: whether the API still answers a public and an
 * authenticated request, since a hung API and a hung schemathesis otherwise read the same (one CI
 * run stopped after the examples phase, with nothing printed for 15 minutes). True when both
 * answered 200: then the hang was schemathesis's own, and it runs once more.
 */
async function probeApi(base: string, token: string): Promise<boolean> {
  const asks: [string, Record<string, string>][] = [
    ['/api/v1/system', {}],
    ['/api/v1/auth/me', { authorization: `Bearer ${token}` }],
  ];
  let answered = 0;
  for (const [url, headers] of asks) {
    const started = performance.now();
    const answer = await fetch(`${base}${url}`, { headers, signal: AbortSignal.timeout(5_000) }).then(
      (r) => {
        if (r.status === 200) answered++;
        return `HTTP ${r.status}`;
      },
      (error: unknown) => `no answer (${(error as Error).name})`,
    );
    console.log(`[schemathesis] out of time; the API asked GET ${url}: ${answer} after ${(performance.now() - started).toFixed(0)} ms`);
  }
  return answered === asks.length;
}

function countJunit(file: string): Omit<SchemathesisResult, 'problem'> {
  const xml = readFileSync(file, 'utf8');
  const cases = xml.match(/<testcase\b[\s\S]*?(?:\/>|<\/testcase>)/g) ?? [];
  let failed = 0;
  let skipped = 0;
  for (const c of cases) {
    if (/<(failure|error)\b/.test(c)) failed++;
    else if (/<skipped\b/.test(c)) skipped++;
  }
  return { passed: cases.length - failed - skipped, failed, skipped };
}

export async function runSchemathesis(options: {
  base: string;
  email: string;
  password: string;
  dataDir: string;
  reportDir: string;
  /** Only the operations whose path matches (a test of the configuration itself). */
  includePathRegex?: string;
  /** Only these phases (examples, coverage, fuzzing, stateful); default all. */
  phases?: string;
}): Promise<SchemathesisResult> {
  const bin = schemathesisBin(options.dataDir);
  if (!existsSync(bin)) return { passed: 0, failed: 0, skipped: 0, problem: `schemathesis is not installed at ${bin}: run scripts/ensure.sh` };
  const { token, tokenId, session } = await credentials(options.base, options.email, options.password);
  mkdirSync(options.reportDir, { recursive: true });
  const junit = path.join(options.reportDir, 'schemathesis.xml');
  const examples = process.env.SVC_SCHEMATHESIS_EXAMPLES ?? '25';
  const seed = process.env.SVC_SCHEMATHESIS_SEED ?? '20251123';
  const log = path.join(options.reportDir, 'schemathesis.log');
  console.log(`\n[schemathesis] ${options.base}/api/v1/openapi.json, ${examples} examples per operation, seed ${seed}; its report: ${log}`);
  // Whether the API answered both probes when schemathesis was last killed for its time.
  let apiAnswered = false;
  const attempt = () =>
    runChild(
      bin,
      [
        '--config-file',
        CONFIG,
        'run',
        `${options.base}/api/v1/openapi.json`,
        '--checks',
        'all',
        '--max-examples',
        examples,
        '--seed',
        seed,
        '--workers',
        '2',
        '--generation-database',
        'none',
        '--no-color',
        '--report',
        'junit',
        '--report-junit-path',
        junit,
        ...(options.includePathRegex ? ['--include-path-regex', options.includePathRegex] : []),
        ...(options.phases ? ['--phases', options.phases] : []),
      ],
      // The token and the session reach schemathesis through the environment (the config file reads it), never argv.
      // Its cache folder lands beside the report, not in the checkout.
      // Its own report goes to a file: it closes with a line in a test runner's format
      // (`=== 3 warnings in 117s ===`) that must not be mistaken for the total of `npm test`.
      {
        cwd: options.reportDir,
        env: { ...process.env, SCHEMATHESIS_TOKEN: token, SCHEMATHESIS_TOKEN_ID: tokenId, SCHEMATHESIS_SESSION: session, SCHEMATHESIS_HOOKS: HOOKS },
        timeoutMs: 15 * 60_000,
        onTimeout: async () => {
          apiAnswered = await probeApi(options.base, token);
        },
      },
    );
  let run = await attempt();
  if (run.signal === 'SIGKILL' && apiAnswered) {
    // The API answered while schemathesis printed nothing: a hang of schemathesis itself (its
    // coverage phase has had several). Once more; the report and the figures are that run's.
    console.log('[schemathesis] it hung while the API answered; running it once more');
    apiAnswered = false;
    run = await attempt();
  }
  const output = `${run.stdout ?? ''}${run.stderr ?? ''}`;
  writeFileSync(log, output);
  const lines = output.split('\n');
  // Warnings and failures, in our words; the full report stays in the file.
  const from = lines.findIndex((l) => /^=+ (FAILURES|WARNINGS|ERRORS) =+$/.test(l));
  if (from >= 0 || run.status !== 0) {
    const shown = (from >= 0 ? lines.slice(from) : lines.slice(-40)).map((l) => rewordSummary('schemathesis', l));
    console.log(shown.join('\n'));
  }
  const cases = /(\d+) generated, (\d+) passed(?:, (\d+) failed)?(?:, (\d+) skipped)?/.exec(output);
  if (cases) console.log(`[schemathesis] generated cases: ${cases[1]}, of which ${cases[2]} passed, ${cases[3] ?? 0} failed, ${cases[4] ?? 0} skipped`);
  if (!existsSync(junit)) return { passed: 0, failed: 0, skipped: 0, problem: `schemathesis exited ${run.status ?? run.signal} without a report` };
  // Checked apart from the exit status: an operation refused every time passed every check it was given.
  const unauthenticated = authenticationFailures(output);
  if (unauthenticated) {
    return {
      ...countJunit(junit),
      problem: `schemathesis never got past authentication on ${unauthenticated.length ? unauthenticated.join(', ') : 'some operations'} (only 401/403 answers): they were not tested`,
    };
  }
  const counts = countJunit(junit);
  if (run.status !== 0 && counts.failed === 0) return { ...counts, problem: `schemathesis exited ${run.status ?? run.signal}` };
  return counts;
}

/**
 * A test runner's closing line (`=== 446 passed in 30.81s ===`, `=== 3 warnings in 117s ===`),
 * reworded so that it no longer reads as one; other lines unchanged.
 */
export function rewordSummary(label: string, line: string): string {
  const m = /^=+ (.*\bin [\d.]+s(?: \([^)]*\))?) =+$/.exec(line.trim());
  if (!m) return line;
  return `[${label}] summary: ${m[1]!
    .replace(/ in ([\d.]+)s\b/, ' (took $1 s)')
    .replace(/\bpassed\b/, 'ok')
    .replace(/\bfailed\b/, 'not ok')}`;
}

// Run alone: against SVC_TEST_URL, or a stack of its own.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const dataDir = path.resolve(process.env.SVC_DATA_DIR ?? '.data');
  let base = process.env.SVC_TEST_URL;
  let email = process.env.SVC_TEST_ADMIN_EMAIL ?? '';
  let password = process.env.SVC_TEST_ADMIN_PASSWORD ?? '';
  let stop = async (): Promise<void> => undefined;
  if (!base) {
    const { startStack } = await import('./stack.js');
    const stack = await startStack('schemathesis');
    ({ base } = stack);
    ({ email, password } = stack.admin);
    stop = stack.stop;
  }
  let result: SchemathesisResult;
  try {
    // SVC_SCHEMATHESIS_PATHS: only the operations whose path matches this regex (while fixing a few).
    const includePathRegex = process.env.SVC_SCHEMATHESIS_PATHS || undefined;
    result = await runSchemathesis({ base, email, password, dataDir, reportDir: path.join(dataDir, 'schemathesis'), includePathRegex });
  } finally {
    await stop();
  }
  if (result.problem) console.error(`[schemathesis] ${result.problem}`);
  console.log(`\nschemathesis: ${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped`);
  process.exit(result.problem || result.failed ? 1 : 0);
}
