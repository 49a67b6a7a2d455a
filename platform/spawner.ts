import { type ChildProcess, fork, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { failSpan, startSpan, traceparentOf, type Span } from './tracing.js';

/*
 * Child processes (ogr2ogr, the sandbox's bubblewrap) started by a small helper process instead
 * of by this one. Starting a child forks the process that asks; a fork copies the page tables of
 * everything resident, and the worker holds about half a gigabyte (GDAL, the Temporal core, the
 * workflow bundle): 15–40 ms per child with the event loop stopped, the largest single item in
 * the worker's CPU profile of bench:runs (issue 20). The helper (spawn-helper.mjs) is a bare
 * Node process of ~40 MB whose forks cost about a millisecond. Output comes back over its IPC
 * channel with backpressure; a helper that cannot start or dies is replaced by starting children
 * directly, as before.
 */

export interface SpawnOptions {
  cwd?: string;
  /** The child's whole environment. */
  env: Record<string, string>;
  /** In a process group of its own, so killGroup reaches everything below it. */
  detached?: boolean;
  stdout: 'pipe' | 'ignore';
  stderr: 'pipe' | 'ignore';
  /** The program's name in traces, when `file` only wraps it (bwrap, prlimit); else the file's name. */
  tool?: string;
}

/** What a caller sees of a child: output as 'data' events of Buffers, then 'close' (code, signal) or 'error'. */
export interface Spawned extends EventEmitter {
  readonly stdout: EventEmitter | null;
  readonly stderr: EventEmitter | null;
  /** Kills the child, or with `group` its whole process group (a detached child's). */
  kill(signal: NodeJS.Signals, options?: { group?: boolean }): void;
}

const helperPath = fileURLToPath(new URL('./spawn-helper.mjs', import.meta.url));

type HelperMessage =
  | { op: 'spawned'; id: number; pid: number }
  | { op: 'error'; id: number; message: string; code: string | null }
  | { op: 'stdout' | 'stderr'; id: number; chunk: Buffer }
  | { op: 'close'; id: number; code: number | null; signal: NodeJS.Signals | null };

class RemoteChild extends EventEmitter implements Spawned {
  readonly stdout: EventEmitter | null;
  readonly stderr: EventEmitter | null;
  closed = false;
  /** Known once the helper says the child started. */
  pid: number | undefined;
  readonly detached: boolean;
  constructor(
    readonly id: number,
    private readonly helper: Helper,
    options: SpawnOptions,
  ) {
    super();
    this.detached = options.detached ?? false;
    this.stdout = options.stdout === 'pipe' ? new EventEmitter() : null;
    this.stderr = options.stderr === 'pipe' ? new EventEmitter() : null;
  }
  kill(signal: NodeJS.Signals, options: { group?: boolean } = {}): void {
    if (options.group) this.helper.send({ op: 'kill', id: this.id, pid: this.pid, signal, group: true });
    else if (!this.closed) this.helper.send({ op: 'kill', id: this.id, signal });
  }
  /** Called once, when the child has ended (closed, or could not start). */
  onEnd: () => void = () => undefined;
  finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.closed) return;
    this.closed = true;
    this.onEnd();
    this.emit('close', code, signal);
  }
  fail(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.onEnd();
    this.emit('error', error);
  }
}

class Helper {
  private nextId = 1;
  private readonly children = new Map<number, RemoteChild>();
  private constructor(private readonly process: ChildProcess) {
    process.on('message', (m: HelperMessage) => this.receive(m));
    // The helper died: its children are killed here (they would run on, orphaned, while the step
    // that started them is retried), reported as killed, and the next child starts a new helper.
    process.once('exit', () => {
      if (helper === this) helper = undefined;
      // A copy: each finish() removes its child from the map.
      for (const child of [...this.children.values()]) {
        try {
          if (child.pid) globalThis.process.kill(child.detached ? -child.pid : child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
        child.finish(null, 'SIGKILL');
      }
    });
    // An idle helper does not keep this process alive.
    process.unref();
    process.channel?.unref();
  }

  static async start(): Promise<Helper | null> {
    try {
      const child = fork(helperPath, [], { execArgv: [], serialization: 'advanced', stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
      return new Helper(child);
    } catch {
      return null;
    }
  }

  get alive(): boolean {
    return this.process.connected;
  }

  send(message: object): void {
    if (this.process.connected) this.process.send(message);
  }

  spawn(file: string, args: string[], options: SpawnOptions): Spawned {
    const id = this.nextId++;
    const child = new RemoteChild(id, this, options);
    this.children.set(id, child);
    // Only while a child runs does the helper keep this process alive (as a child of its own would).
    if (this.children.size === 1) this.process.channel?.ref();
    child.onEnd = () => {
      this.children.delete(id);
      if (this.children.size === 0) this.process.channel?.unref();
    };
    this.send({
      op: 'spawn',
      id,
      file,
      args,
      cwd: options.cwd,
      env: options.env,
      detached: options.detached ?? false,
      stdout: options.stdout,
      stderr: options.stderr,
    });
    return child;
  }

  private receive(m: HelperMessage): void {
    const child = this.children.get(m.id);
    if (!child) return;
    if (m.op === 'spawned') child.pid = m.pid;
    else if (m.op === 'stdout' || m.op === 'stderr') child[m.op]?.emit('data', Buffer.from(m.chunk));
    else if (m.op === 'close') child.finish(m.code, m.signal);
    else if (m.op === 'error') {
      child.fail(Object.assign(new Error(m.message), m.code ? { code: m.code } : {}));
    }
  }
}

let helper: Helper | undefined;
let starting: Promise<Helper | null> | undefined;

/** A child started directly by this process, behind the same interface. */
function direct(file: string, args: string[], options: SpawnOptions): Spawned {
  const child = spawn(file, args, {
    cwd: options.cwd,
    env: options.env,
    detached: options.detached ?? false,
    stdio: ['ignore', options.stdout, options.stderr],
  });
  const spawned = Object.assign(child as unknown as Spawned, {
    kill(signal: NodeJS.Signals, o: { group?: boolean } = {}) {
      try {
        if (o.group && child.pid) process.kill(-child.pid, signal);
        else child.kill(signal);
      } catch {
        // already gone
      }
    },
  });
  return spawned;
}

/**
 * Starts `file` with `args` through the helper (started on first use), or directly when
 * SVC_SPAWN_HELPER=0 or the helper cannot run.
 */
export async function spawnProcess(file: string, args: string[], options: SpawnOptions): Promise<Spawned> {
  const tool = options.tool ?? path.basename(file);
  const span = startSpan(`process ${tool}`, { 'process.executable.name': tool });
  if (!span) return start(file, args, options);
  // The child may carry the trace on (the OpenTelemetry convention for environments).
  const traced = start(file, args, { ...options, env: { ...options.env, TRACEPARENT: traceparentOf(span) } });
  return traced.then(
    (child) => endWithChild(span, child),
    (error: unknown) => {
      span.end();
      throw error;
    },
  );
}

/** Ends the child's span when it closes or fails, by watching what it emits (no listener of ours changes how an unhandled 'error' behaves). */
function endWithChild(span: Span, child: Spawned): Spawned {
  const emit = child.emit.bind(child);
  let ended = false;
  child.emit = (event: string | symbol, ...args: unknown[]) => {
    if (!ended && (event === 'close' || event === 'error')) {
      ended = true;
      if (event === 'close') span.setAttribute('process.exit.code', (args[0] as number | null) ?? -1);
      if (event === 'error') failSpan(span, args[0]);
      else if (args[0] !== 0) failSpan(span, new Error(`exited with ${String(args[0] ?? args[1])}`));
      span.end();
    }
    return emit(event, ...args);
  };
  return child;
}

async function start(file: string, args: string[], options: SpawnOptions): Promise<Spawned> {
  if (process.env.SVC_SPAWN_HELPER === '0') return direct(file, args, options);
  if (!helper?.alive) {
    starting ??= Helper.start().finally(() => {
      starting = undefined;
    });
    helper = (await starting) ?? undefined;
  }
  return helper ? helper.spawn(file, args, options) : direct(file, args, options);
}
