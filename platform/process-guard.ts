import type { Logger } from 'pino';

/*
 * The second line behind "no user request can end a process" (issue 32). The first is that every
 * outbound client catches what a remote server can make it do (connectors/shared/http/policy-fetch.ts
 * replaced the node-fetch whose redirect handling threw inside a socket's event handler). This
 * one is for the next library that throws where nothing can catch: an exception whose first
 * stack frame is in a dependency (node_modules), thrown from one of its callbacks, is logged and
 * the process carries on. Every other user's requests in flight keep going; the one call whose
 * library threw ends at its own deadline (connector calls always have one) with a timeout.
 *
 * An exception from the service's own code, or a burst of library ones (more than `burst` in
 * `windowMs`: something is broken for good), still ends the process, as before: its state may
 * be inconsistent, and `npm start` (scripts/supervisor.ts) restarts it.
 */

export interface GuardOptions {
  burst?: number;
  windowMs?: number;
  /** How the process ends (tests pass their own). */
  exit?: (code: number) => void;
}

/** The package whose code threw: the first stack frame outside Node's own (node:…) is inside node_modules. */
export function thrownByDependency(error: unknown): string | null {
  const stack = error instanceof Error ? (error.stack ?? '') : '';
  const frame = stack.split('\n').find((line) => /^\s+at /.test(line) && !/\(node:|^\s+at node:/.test(line));
  const m = frame ? /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(frame) : null;
  return m ? m[1]! : null;
}

/** Installs the guard on this process (once; the API and the worker call it when they start). */
export function guardProcess(log: Logger, options: GuardOptions = {}): void {
  const { burst = 10, windowMs = 60_000, exit = (code: number) => process.exit(code) } = options;
  const recent: number[] = [];
  process.on('uncaughtException', (error, origin) => {
    const dependency = thrownByDependency(error);
    const now = Date.now();
    if (dependency) {
      recent.push(now);
      while (recent[0]! < now - windowMs) recent.shift();
      if (recent.length <= burst) {
        log.error({ err: error, origin, dependency }, `${dependency} threw where nothing can catch it (${origin}); the process carries on`);
        return;
      }
      log.fatal({ err: error, origin, dependency }, `${recent.length} uncaught exceptions from dependencies within ${windowMs / 1000} s; the process stops`);
    } else {
      log.fatal({ err: error, origin }, `uncaught exception (${origin}); the process stops`);
    }
    exit(1);
  });
}
