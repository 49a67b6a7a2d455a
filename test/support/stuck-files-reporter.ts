import type { Reporter, TestCase, TestModule } from 'vitest/node';
import { processTable, subtree } from '../../devservers/proc-table.js';

/**
 * A vitest reporter that names the test files still running long after vitest's own limits
 * (60 s a test, 120 s a hook) should have ended them, with the test each is in and the processes
 * below vitest at that moment. A file whose worker is blocked outside JavaScript (a synchronous
 * child that never exits, a native call that never returns) is beyond those limits: without this,
 * such a run prints nothing more until whatever runs it gives up, and the log says only where the
 * output stopped.
 */
export interface StuckFilesOptions {
  /** A file running this long is named (with its test and the processes). */
  stuckAfterMs: number;
  /**
   * Once only stuck files remain, each running this long, vitest's workers are ended: vitest then
   * fails those files ("Worker exited unexpectedly") and finishes, and the rest of `npm test` runs,
   * rather than the whole run waiting for ever.
   */
  endAfterMs: number;
  checkEveryMs: number;
  log: (line: string) => void;
}

export default class StuckFilesReporter implements Reporter {
  private readonly running = new Map<string, { since: number; test: string | null; told: boolean }>();
  private timer: NodeJS.Timeout | null = null;
  private readonly options: StuckFilesOptions;

  constructor(options: Partial<StuckFilesOptions> = {}) {
    this.options = { stuckAfterMs: 6 * 60_000, endAfterMs: 15 * 60_000, checkEveryMs: 30_000, log: (line) => console.log(line), ...options };
  }

  onTestRunStart() {
    this.timer = setInterval(() => this.check(), this.options.checkEveryMs);
    this.timer.unref();
  }

  onTestModuleQueued(module: TestModule) {
    this.running.set(module.moduleId, { since: Date.now(), test: null, told: false });
  }

  onTestCaseReady(test: TestCase) {
    const file = this.running.get(test.module.moduleId);
    if (file) file.test = test.fullName;
  }

  onTestModuleEnd(module: TestModule) {
    const file = this.running.get(module.moduleId);
    this.running.delete(module.moduleId);
    if (file?.told) this.options.log(`[stuck files] ${module.relativeModuleId} ended after ${minutes(Date.now() - file.since)}`);
  }

  onTestRunEnd() {
    if (this.timer) clearInterval(this.timer);
  }

  /** Public for its test: what each tick of the timer does. */
  check() {
    const { stuckAfterMs, endAfterMs, log } = this.options;
    const now = Date.now();
    if (this.running.size && [...this.running.values()].every((f) => f.told && now - f.since > endAfterMs)) {
      const workers = endWorkers(process.pid);
      log(`[stuck files] only stuck files remain: ended their workers (${workers.join(', ') || 'none found'})`);
      this.running.clear();
      return;
    }
    const stuck = [...this.running].filter(([, f]) => !f.told && now - f.since > stuckAfterMs);
    if (!stuck.length) return;
    for (const [id, file] of stuck) {
      file.told = true;
      const where = file.test ? `in "${file.test}"` : 'before its first test';
      log(`[stuck files] ${id.replace(`${process.cwd()}/`, '')} has run ${minutes(now - file.since)}, ${where}`);
    }
    log(`[stuck files] processes below vitest now:\n${processesBelow(process.pid)}`);
  }
}

const minutes = (ms: number) => `${(ms / 60_000).toFixed(1)} min`;

/** One line per descendant of `root`: pid, parent, state, and its command line (cut). */
function processesBelow(root: number): string {
  const table = processTable({ commands: true });
  return subtree(table, root)
    .filter((pid) => pid !== root)
    .map((pid) => {
      const p = table.get(pid)!;
      return `  ${pid} (parent ${p.parent}, ${p.state}) ${p.command.slice(0, 200)}`;
    })
    .join('\n');
}

/** Kills vitest's own worker processes (its direct children running a worker entry); their pids. */
function endWorkers(root: number): number[] {
  const workers = [...processTable({ commands: true })].filter(([, p]) => p.parent === root && /vitest\/dist\/workers\//.test(p.command)).map(([pid]) => pid);
  for (const pid of workers)
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  return workers;
}
