import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Supervisor, type ChildSpec } from '../../scripts/supervisor.js';
import { until as waitUntil } from '../support/until.js';

/** The supervision `npm start` uses, against real processes (small Node programs). */
const node = (name: string, program: string): ChildSpec => ({ name, command: process.execPath, args: ['-e', program], env: process.env });
const idle = 'setInterval(() => {}, 1000)';
const alive = (pid: number | undefined) => {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The supervisor's checks come every few ms: poll as often. */
const until = (what: string, ok: () => boolean, timeoutMs = 10_000) => waitUntil(what, ok, timeoutMs, 20);

describe('Supervisor', () => {
  const lines: string[] = [];
  const startFailures: Array<[string, number]> = [];
  let sut: Supervisor;
  const make = () =>
    (sut = new Supervisor({
      log: (line) => lines.push(line),
      onStartFailure: (name, code) => startFailures.push([name, code]),
      backoff: { initialMs: 100, maxMs: 400, healthyAfterMs: 60_000 },
    }));
  afterEach(async () => {
    await sut?.stop(1000);
    lines.length = 0;
    startFailures.length = 0;
  });

  it('restarts a killed child with growing pauses and says why', async () => {
    make().start(node('worker', idle));
    sut.markReady();
    for (const crash of [1, 2]) {
      const pid = sut.pid('worker')!;
      await until('the child to run', () => alive(pid));
      process.kill(pid, 'SIGKILL');
      await until('a new child', () => sut.pid('worker') !== pid && alive(sut.pid('worker')));
      expect(lines.filter((l) => l.includes('was killed by SIGKILL'))).toHaveLength(crash);
    }
    const restarts = lines.filter((l) => l.includes('restarting it in'));
    expect(restarts[0]).toMatch(/^worker was killed by SIGKILL after [\d.]+ s; restarting it in 0\.1 s$/);
    expect(restarts[1]).toMatch(/restarting it in 0\.2 s \(crash 2 in a row\)$/);
    expect(startFailures).toEqual([]);
  });

  it('restarts a child that exits on its own, with its exit code in the log', async () => {
    make().start(node('api', 'setTimeout(() => process.exit(70), 100)'));
    sut.markReady();
    await until('two restarts', () => lines.filter((l) => l.includes('exited with code 70')).length >= 2);
  });

  it('does not restart a child that fails before the service is ready: the start failed', async () => {
    make().start(node('api', 'process.exit(3)'));
    await until('the start failure', () => startFailures.length > 0);
    // The claim is that no restart follows: nothing to wait for, so give one the time it would take.
    await new Promise((r) => setTimeout(r, 300));
    expect(startFailures).toEqual([['api', 3]]);
    expect(lines.filter((l) => l.includes('running (pid'))).toHaveLength(1);
  });

  it('stops every child on stop(), killing one that ignores SIGTERM, and restarts none', async () => {
    // The stubborn one says (by a file) once its handler is installed.
    const installed = path.join(mkdtempSync(path.join(tmpdir(), 'supervisor-')), 'handler-installed');
    make().start(node('polite', idle));
    sut.start(node('stubborn', `process.on('SIGTERM', () => {}); require('node:fs').writeFileSync(${JSON.stringify(installed)}, ''); ${idle}`));
    sut.markReady();
    const pids = [sut.pid('polite'), sut.pid('stubborn')];
    await until('the stubborn one to install its handler', () => existsSync(installed));
    await sut.stop(500);
    expect(pids.map(alive)).toEqual([false, false]);
    // No restart after stop(): a negative, so a time in which one would have shown.
    await new Promise((r) => setTimeout(r, 200));
    expect(lines.filter((l) => l.includes('restarting'))).toEqual([]);
    expect([sut.pid('polite'), sut.pid('stubborn')]).toEqual(pids);
  });
});
