import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { TestCase, TestModule } from 'vitest/node';
import StuckFilesReporter from './stuck-files-reporter.js';

const module = (id: string) => ({ moduleId: `${process.cwd()}/${id}`, relativeModuleId: id }) as TestModule;
const testIn = (m: TestModule, fullName: string) => ({ module: m, fullName }) as TestCase;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the stuck-files reporter', () => {
  it('names a file running past its limit, with its test and the processes below, and not one that ended', async () => {
    const lines: string[] = [];
    const reporter = new StuckFilesReporter({ stuckAfterMs: 50, endAfterMs: 60_000, log: (l) => lines.push(l) });
    const stuck = module('test/a.e2e.spec.ts');
    const ended = module('test/b.e2e.spec.ts');
    reporter.onTestModuleQueued(stuck);
    reporter.onTestModuleQueued(ended);
    reporter.onTestCaseReady(testIn(stuck, 'a › waits for ever'));
    reporter.onTestModuleEnd(ended);
    // A child of this process stands for what the stuck file started.
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'a-server-the-test-started']);
    try {
      await pause(100);
      reporter.check();
      reporter.check();
      expect(lines[0]).toMatch(/^\[stuck files\] test\/a\.e2e\.spec\.ts has run 0\.0 min, in "a › waits for ever"$/);
      expect(lines[1]).toContain(`${child.pid} (parent ${process.pid}`);
      expect(lines[1]).toContain('a-server-the-test-started');
      expect(lines.join('\n')).not.toContain('b.e2e.spec.ts');
      // Told once, not at every check.
      expect(lines).toHaveLength(2);
      reporter.onTestModuleEnd(stuck);
      expect(lines[2]).toMatch(/^\[stuck files\] test\/a\.e2e\.spec\.ts ended after /);
    } finally {
      child.kill();
    }
  });

  it('ends vitest workers once only stuck files remain, past the second limit, and leaves other children', async () => {
    const lines: string[] = [];
    const reporter = new StuckFilesReporter({ stuckAfterMs: 20, endAfterMs: 80, log: (l) => lines.push(l) });
    reporter.onTestModuleQueued(module('test/c.e2e.spec.ts'));
    // Children of this process: one whose command names a vitest worker entry, one that does not.
    const worker = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '/x/node_modules/vitest/dist/workers/forks.js']);
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    const exited = new Promise<NodeJS.Signals | null>((r) => worker.once('exit', (_code, signal) => r(signal)));
    try {
      await pause(40);
      reporter.check();
      expect(worker.exitCode).toBeNull();
      await pause(80);
      reporter.check();
      expect(await exited).toBe('SIGKILL');
      expect(lines.at(-1)).toBe(`[stuck files] only stuck files remain: ended their workers (${worker.pid})`);
      expect(other.exitCode).toBeNull();
      expect(other.signalCode).toBeNull();
    } finally {
      worker.kill();
      other.kill();
    }
  });
});
