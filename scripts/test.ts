import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resetDir, startPostgres, startTemporal } from './local-services.js';
import { freePort, waitForPort } from '../devservers/ports.js';
import { rewordSummary, runSchemathesis } from './schemathesis.js';
import { sweepNetworks } from '../devservers/network.js';

/**
 * `npm test`: starts a throwaway PostgreSQL cluster and Temporal dev server, runs every vitest
 * suite against them, then starts the real API and worker and runs the Python client's suite
 * and schemathesis (the OpenAPI document against the server) against that. Prints one closing
 * line with the totals; exits non-zero on any failure.
 */
const root = process.cwd();
const dataDir = path.resolve(process.env.SVC_DATA_DIR ?? '.data');
const testDir = path.join(dataDir, 'test');
resetDir(testDir);
// Hosts (network namespaces) an interrupted cluster suite left behind: removed before and after.
const sweep = () => {
  const removed = sweepNetworks();
  if (removed.length) console.log(`[test] removed what an earlier cluster suite left: ${removed.join(', ')}`);
};
sweep();

const totals = { passed: 0, failed: 0, skipped: 0 };
const problems: string[] = [];
// Repeated at the very end, so a log that keeps only its tail still says what failed.
const failures: string[] = [];

const pgPort = await freePort();
const pg = await startPostgres(path.join(testDir, 'pg'), pgPort, ['postgres', 'geoflow_e2e'], { fresh: true, durable: false });
const temporal = await startTemporal(dataDir, await freePort());
// Every temporary folder the suites make (fixtures, connector work folders, test servers) goes
// under one folder of this run, removed at the end: a suite that forgets its own leaves nothing.
// Open like /tmp itself: the MariaDB and sshd test servers drop to other users.
const runTmp = mkdtempSync(path.join(tmpdir(), 'svc-tests-'));
chmodSync(runTmp, 0o1777);
const cleanup = () => {
  temporal.stop();
  pg.stop();
  sweep();
  rmSync(runTmp, { recursive: true, force: true });
};
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});

const baseEnv = {
  ...process.env,
  SVC_DATA_DIR: dataDir,
  SVC_TEST_DATABASE_URL: pg.url('postgres'),
  SVC_TEST_TEMPORAL_ADDRESS: temporal.address,
  UV_THREADPOOL_SIZE: '8',
  TMPDIR: runTmp,
  // The AWS SDK's notice that its 2027 releases need Node 22, in every suite's output (platform/runtime-notices.ts).
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ?? 'true',
  // The suites use this run's own cluster as their PostGIS server, and it is also the database of
  // the services they start: the outbound policy refuses a service's own database port unless an
  // allow entry names it (docs/operations.md, "Outbound connections").
  SVC_OUTBOUND_ALLOW: `127.0.0.1:${pgPort},[::1]:${pgPort},localhost:${pgPort}`,
};

// ---- Types: the server, scripts and tests, then the browser app ------------------------------
if (process.argv.length <= 2) {
  for (const args of [['--noEmit'], ['-p', 'web', '--noEmit']]) {
    const tsc = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', ...args], { stdio: 'inherit' });
    if (tsc.status !== 0) problems.push(`type check failed (tsc ${args.join(' ')})`);
  }
  // Formatting and lint rules (biome.jsonc says which and why): `npm run lint` alone, `npm run format` fixes the formatting.
  const lint = spawnSync(process.execPath, ['node_modules/@biomejs/biome/bin/biome', 'check', '--error-on-warnings', '.'], { stdio: 'inherit' });
  if (lint.status !== 0) problems.push('lint failed (npm run lint)');
}

// ---- TypeScript suites ----------------------------------------------------------------------
const vitestJson = path.join(testDir, 'vitest.json');
const VITEST_LIMIT_MS = 60 * 60_000;
const vitest = spawnSync(
  process.execPath,
  [
    'node_modules/vitest/vitest.mjs',
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${vitestJson}`,
    // Names a file still running far past vitest's own limits, and ends it if nothing else runs (test/support/stuck-files-reporter.ts).
    '--reporter=./test/support/stuck-files-reporter.ts',
    ...process.argv.slice(2),
  ],
  // The last word against a vitest that never ends (its suites take about 20 minutes): stopped at
  // an hour, so what follows still runs and says so, within CI's 90 minutes.
  { stdio: 'inherit', env: baseEnv, timeout: VITEST_LIMIT_MS, killSignal: 'SIGTERM' },
);
if (vitest.error && (vitest.error as NodeJS.ErrnoException).code === 'ETIMEDOUT') problems.push(`vitest was stopped after ${VITEST_LIMIT_MS / 60_000} minutes`);
if (existsSync(vitestJson)) {
  const report = JSON.parse(readFileSync(vitestJson, 'utf8'));
  totals.passed += report.numPassedTests;
  totals.failed += report.numFailedTests;
  totals.skipped += report.numPendingTests + report.numTodoTests;
  if (report.numFailedTests > 0 || report.numFailedTestSuites > 0) problems.push('vitest suites failed');
  failures.push(...vitestFailures(report, root));
} else problems.push('vitest produced no report');
if (vitest.status !== 0 && !problems.length) problems.push(`vitest exited ${vitest.status}`);

// ---- Python client against the real server ---------------------------------------------------
const pythonSuite = path.join(root, 'clients/python/run-tests.sh');
if (existsSync(pythonSuite) && process.argv.length <= 2) {
  const port = await freePort();
  const serverEnv = {
    ...baseEnv,
    SVC_DATABASE_URL: pg.url('geoflow_e2e'),
    SVC_TEMPORAL_ADDRESS: temporal.address,
    SVC_PORT: String(port),
    SVC_DATA_DIR: path.join(testDir, 'server'),
    SVC_ADMIN_EMAIL: 'admin@example.com',
    SVC_ADMIN_PASSWORD: 'python client suite password',
    SVC_TASK_QUEUE: 'python-e2e',
    SVC_LOG_LEVEL: 'warn',
  };
  const worker = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'worker/worker.ts'], { env: serverEnv, stdio: 'inherit' });
  const api = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'api/server.ts'], { env: serverEnv, stdio: 'inherit' });
  try {
    await waitForPort(port, '127.0.0.1', 120_000);
    // conversions need the worker polling, as the API checks before it starts one
    const { waitForPollers } = await import('../devservers/temporal.js');
    const { loadConfig } = await import('../platform/config.js');
    await waitForPollers(loadConfig(serverEnv), { timeoutMs: 60_000 });
    const junit = path.join(testDir, 'pytest.xml');
    const py = await runQuietingSummaries('python client', 'bash', [pythonSuite], {
      env: {
        ...serverEnv,
        SVC_TEST_URL: `http://127.0.0.1:${port}`,
        SVC_TEST_ADMIN_EMAIL: serverEnv.SVC_ADMIN_EMAIL,
        SVC_TEST_ADMIN_PASSWORD: serverEnv.SVC_ADMIN_PASSWORD,
        SVC_DATA_DIR: dataDir,
        PYTEST_ADDOPTS: `--junitxml=${junit}`,
      },
    });
    if (existsSync(junit)) {
      const xml = readFileSync(junit, 'utf8');
      const attr = (name: string) => Number(new RegExp(`<testsuite[^>]* ${name}="(\\d+)"`).exec(xml)?.[1] ?? 0);
      const tests = attr('tests');
      const failed = attr('failures') + attr('errors');
      const skipped = attr('skipped');
      totals.passed += tests - failed - skipped;
      totals.failed += failed;
      totals.skipped += skipped;
      failures.push(...junitFailures(xml));
    }
    if (py !== 0) problems.push(`python client suite exited ${py}`);

    // ---- schemathesis: the OpenAPI document against the same server ---------------------------
    const fuzz = await runSchemathesis({
      base: `http://127.0.0.1:${port}`,
      email: serverEnv.SVC_ADMIN_EMAIL,
      password: serverEnv.SVC_ADMIN_PASSWORD,
      dataDir,
      reportDir: path.join(testDir, 'schemathesis'),
    }).catch((error: Error) => ({ passed: 0, failed: 0, skipped: 0, problem: error.message }));
    totals.passed += fuzz.passed;
    totals.failed += fuzz.failed;
    totals.skipped += fuzz.skipped;
    if (fuzz.problem) problems.push(`schemathesis: ${fuzz.problem}`);
    else if (fuzz.failed) problems.push(`schemathesis found ${fuzz.failed} failing operations (npm run test:schemathesis reruns it alone)`);
  } finally {
    // Let both finish their graceful shutdown before the database goes away.
    const exited = (c: typeof api) => new Promise<void>((r) => (c.exitCode !== null ? r() : c.once('exit', () => r())));
    api.kill('SIGTERM');
    worker.kill('SIGTERM');
    await Promise.race([Promise.all([exited(api), exited(worker)]), new Promise((r) => setTimeout(r, 15_000))]);
  }
}

cleanup();
// Temporal logs its shutdown on our stderr: let it finish, so the summary below is the last word.
await Promise.race([
  new Promise((r) => (temporal.process.exitCode !== null ? r(null) : temporal.process.once('exit', r))),
  new Promise((r) => setTimeout(r, 10_000)),
]);
if (failures.length) console.error(`\n[test] failed:\n${failures.map((f) => `  - ${f}`).join('\n')}`);
if (problems.length) console.error(`\n[test] ${problems.join('; ')}`);
console.log(`\ntotal: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(problems.length || totals.failed ? 1 : 0);

/**
 * Runs a child whose output ends with a test runner's own closing line (pytest's
 * `=== 446 passed in 30.81s ===`) and passes its output through with that line reworded, so the
 * last runner-style line of `npm test` is always the project's total below, which CI reads.
 */
function runQuietingSummaries(label: string, command: string, args: string[], options: { env: NodeJS.ProcessEnv }): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const reword = (stream: NodeJS.ReadableStream, out: NodeJS.WritableStream) => {
      let rest = '';
      const emit = (line: string) => out.write(`${rewordSummary(label, line)}\n`);
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop()!;
        lines.forEach(emit);
      });
      stream.on('end', () => rest && emit(rest));
    };
    reword(child.stdout, process.stdout);
    reword(child.stderr, process.stderr);
    child.on('close', (code) => resolve(code ?? 1));
  });
}

interface VitestReport {
  testResults: { name: string; status: string; message?: string; assertionResults: { fullName: string; status: string; failureMessages?: string[] }[] }[];
}

/** One line per failed test (file, name, first line of its error), or per suite that failed to load. */
function vitestFailures(report: VitestReport, base: string): string[] {
  const firstLine = (text = '') =>
    text
      .split('\n')
      .find((l) => l.trim())
      ?.trim()
      .slice(0, 300) ?? '';
  return report.testResults.flatMap((file) => {
    const where = path.relative(base, file.name);
    const failed = file.assertionResults.filter((a) => a.status === 'failed');
    if (!failed.length && file.status === 'failed') return [`${where}: ${firstLine(file.message)}`];
    return failed.map((a) => `${where} › ${a.fullName}: ${firstLine(a.failureMessages?.[0])}`);
  });
}

/** One line per failed or erroring pytest case in a JUnit report. */
function junitFailures(xml: string): string[] {
  const cases = xml.matchAll(/<testcase classname="([^"]*)" name="([^"]*)"[^>]*>\s*<(failure|error) message="([^"]*)"/g);
  return [...cases].map(([, cls, name, , message]) => `${cls}::${name}: ${(message ?? '').slice(0, 300)}`);
}
