import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { internalEndpoints } from '../../application/internal-endpoints.js';
import { decide, defaultRules, internalRules } from '../../connectors/shared/policy/egress.js';
import { loadConfig } from '../../platform/config.js';
import { startTemporal, temporalServiceEnv } from '../../scripts/local-services.js';
import { freePort } from '../../devservers/ports.js';

/*
 * Issue 32, finding 7: the Temporal dev server `npm start` runs listens on more than its gRPC and
 * HTTP API ports (a Prometheus metrics endpoint, its history, matching and worker services, the
 * UI). Started here as scripts/start.ts starts it, every port it listens on (read with `ss`, not
 * with the helper under test) is refused by the outbound policy the services build from the
 * environment npm start gives them.
 */

const dataDir = path.resolve(process.env.SVC_DATA_DIR ?? '.data');
const cli = path.join(dataDir, 'tools/venv/bin/temporal');
const skip = !existsSync(cli) && `the Temporal CLI is not installed at ${cli}: scripts/ensure.sh (run by npm test) installs it`;

/** The TCP ports `pid` listens on, as `ss` reports them. */
const ssPorts = (pid: number) =>
  execFileSync('ss', ['-Hltnp'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(`pid=${pid},`))
    .map((line) => {
      const local = line.trim().split(/\s+/)[3]!; // State Recv-Q Send-Q Local-Address:Port …
      return Number(local.slice(local.lastIndexOf(':') + 1));
    });

describe.skipIf(skip)("the Temporal dev server's listeners", () => {
  it('are all refused by the outbound policy of the services npm start runs', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'svc-temporal-ports-'));
    const grpc = await freePort();
    const httpPort = await freePort();
    const temporal = await startTemporal(dataDir, grpc, { dbFile: path.join(folder, 'temporal.db'), uiPort: await freePort(), httpPort });
    try {
      const env = {
        SVC_DATA_DIR: folder,
        SVC_DATABASE_URL: 'postgres://geoflow@127.0.0.1:5/geoflow',
        ...temporalServiceEnv(temporal, httpPort),
      };
      const policy = { rules: [...defaultRules, ...(await internalRules(internalEndpoints(loadConfig(env))))] };
      const listening = ssPorts(temporal.process.pid!);
      // gRPC, HTTP API, metrics, UI and the internal services: more than the two refused before.
      expect(listening.length, String(listening)).toBeGreaterThanOrEqual(5);
      for (const port of listening) {
        const verdict = decide(policy, { address: '127.0.0.1', port });
        expect(verdict.action, `port ${port}`).toBe('deny');
        expect(verdict.why).toMatch(/the service's own Temporal/);
      }
    } finally {
      temporal.stop();
    }
  });
});
