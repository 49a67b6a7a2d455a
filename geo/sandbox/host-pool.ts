import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mkdir } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { DomainError } from '../../domain/errors.js';
import { bwrapArgs, bwrapPath, limitArgs, type Mount, sandboxEnv } from './sandbox.js';

/*
 * Long-lived sandboxed Node processes ("hosts") that run GDAL on datasets the service's own
 * processes must not open (geo/isolation/ says which and why). A host is a bubblewrap sandbox
 * whose only readable data are the folders of one dataset (plus writable scratch folders): no
 * network, no environment, the service's data folder and its keys invisible. Starting one costs
 * a Node process with GDAL loaded (about 0.2 s on a quiet machine, 0.5 s on a busy one), so a
 * host is kept for its folders while they are used (a Workspace's inspection, then its
 * previews) and stopped after a short idle time. Requests and answers are JSON lines over its
 * stdin and stdout.
 */

export interface HostBinds {
  /** Folders (or files) the host may read. */
  readable: string[];
  /** Folders it may write (created by the caller). */
  writable: string[];
}

export interface HostCall {
  op: string;
  args: unknown[];
  /** Wall-clock limit of this call; past it the host is stopped and the call fails. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Progress the op reports while it runs (a conversion's). */
  onProgress?: ((progress: unknown) => void) | undefined;
}

export interface HostPoolOptions {
  /** The host's entry module (a bundle the pool builds, or a .ts run through tsx). */
  entry: () => Promise<{ file: string; nodeArgs: string[]; readable: string[] }>;
  /** Address-space limit of a host (it runs GDAL): the GDAL processes' limit. */
  memoryBytes: number;
  /** Most hosts alive at once; a call beyond it waits for one to end. */
  maxHosts: number;
  /** How long an unused host is kept for its folders. */
  idleMs: number;
}

type Answer = { id: number; result?: unknown; error?: { code?: string; message: string; details?: Record<string, unknown> }; progress?: unknown };

/** Why a call stopped when its signal did: the signal's own reason (a preview's deadline says so), else a cancellation. */
const cancelled = (signal: AbortSignal) =>
  signal.reason instanceof Error ? signal.reason : new DomainError('invalid_parameter', 'The request was cancelled', {});

/** What a user hears when this server cannot sandbox: which formats it still reads. */
const noSandbox = (why: string) =>
  new DomainError(
    'invalid_source',
    'This server cannot start its GDAL sandbox, so it reads only GeoPackage, shapefile, GeoJSON, CSV, FlatGeobuf and FileGDB files: ask its operator to make bubblewrap work (docs/security.md)',
    { reason: why.split('\n')[0]!.slice(0, 200) },
  );

/** A failure of the host itself (it crashed or was stopped), not of the op: the file may have crashed GDAL. */
export class HostStopped extends Error {}

class Host {
  readonly child: ChildProcess;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; onProgress?: ((p: unknown) => void) | undefined }>();
  busy = 0;
  idleTimer: NodeJS.Timeout | undefined;
  ended = false;
  private stderr = '';
  readonly exited: Promise<void>;

  constructor(argv: string[]) {
    this.child = spawn(argv[0]!, argv.slice(1), { env: {}, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.child.stderr!.on('data', (chunk: Buffer) => {
      // The last few kilobytes say why a host died (GDAL's last words, a V8 out-of-memory).
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-8192);
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => this.answer(line));
    this.exited = new Promise((resolve) => {
      const end = (why: string) => {
        if (this.ended) return;
        this.ended = true;
        for (const p of this.pending.values()) p.reject(new HostStopped(why));
        this.pending.clear();
        resolve();
      };
      this.child.once('error', (e) => end(e.message));
      this.child.once('exit', (code, signal) => end(signal ? `stopped by ${signal}` : `exited with ${code}`));
    });
  }

  lastWords(): string {
    return this.stderr.trim().split('\n').slice(-3).join(' ').slice(0, 500);
  }

  private answer(line: string): void {
    let msg: Answer;
    try {
      msg = JSON.parse(line) as Answer;
    } catch {
      return; // not ours: a library printed on stdout
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    if (msg.progress !== undefined) {
      p.onProgress?.(msg.progress);
      return;
    }
    this.pending.delete(msg.id);
    if (msg.error) {
      p.reject(
        msg.error.code
          ? new DomainError(msg.error.code as never, msg.error.message, msg.error.details ?? {})
          : new Error(`sandboxed GDAL: ${msg.error.message}`),
      );
    } else p.resolve(msg.result);
  }

  call(op: string, args: unknown[], onProgress?: (p: unknown) => void): Promise<unknown> {
    if (this.ended) return Promise.reject(new HostStopped('the host has ended'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      this.child.stdin!.write(`${JSON.stringify({ id, op, args })}\n`);
    });
  }

  stop(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    try {
      if (this.child.pid) process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

/** The key of a set of binds: the same folders share a host. */
function keyOf(binds: HostBinds): string {
  const norm = (list: string[]) => [...new Set(list.map((p) => path.resolve(p)))].sort();
  return createHash('sha256')
    .update(JSON.stringify([norm(binds.readable), norm(binds.writable)]))
    .digest('hex');
}

/** The folders to bind: a file is bound by its folder; nested folders after their parents, so a writable child overlays a read-only parent. */
export function mountsOf(binds: HostBinds): Mount[] {
  const mounts = new Map<string, Mount>();
  const folderOf = (p: string) => {
    const abs = path.resolve(p);
    return existsSync(abs) && statSync(abs).isDirectory() ? abs : path.dirname(abs);
  };
  for (const p of binds.readable) {
    const dir = folderOf(p);
    if (!mounts.has(dir)) mounts.set(dir, { host: dir, inside: dir });
  }
  for (const p of binds.writable) {
    const dir = path.resolve(p);
    mounts.set(dir, { host: dir, inside: dir, writable: true });
  }
  return [...mounts.values()].sort((a, b) => a.host.length - b.host.length);
}

export class HostPool {
  private readonly hosts = new Map<string, Host>();
  private waiting: (() => void)[] = [];
  private closed = false;

  constructor(private readonly options: HostPoolOptions) {}

  /** Runs op in the host for these binds (started if needed); a crash or timeout stops that host. */
  async run(binds: HostBinds, call: HostCall): Promise<unknown> {
    if (call.signal?.aborted) throw cancelled(call.signal);
    const key = keyOf(binds);
    const host = await this.acquire(key, binds);
    host.busy += 1;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      host.stop();
    }, call.timeoutMs);
    const onAbort = () => host.stop();
    call.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await host.call(call.op, call.args, call.onProgress);
    } catch (error) {
      if (!(error instanceof HostStopped)) throw error;
      if (timedOut) throw new DomainError('processing_timeout', `Reading the dataset was stopped after ${Math.round(call.timeoutMs / 1000)} s`, {});
      if (call.signal?.aborted) throw cancelled(call.signal);
      if (/^bwrap: /m.test(host.lastWords())) throw noSandbox(host.lastWords());
      throw new DomainError('invalid_source', 'GDAL stopped while reading the file: it is damaged or crafted', { reason: host.lastWords() || error.message });
    } finally {
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', onAbort);
      host.busy -= 1;
      if (host.ended) this.forget(key, host);
      else if (host.busy === 0) this.park(key, host);
    }
  }

  private park(key: string, host: Host): void {
    host.idleTimer = setTimeout(() => {
      host.stop();
      this.forget(key, host);
    }, this.options.idleMs);
    host.idleTimer.unref();
  }

  private forget(key: string, host: Host): void {
    if (this.hosts.get(key) === host) {
      this.hosts.delete(key);
      this.waiting.shift()?.();
    }
  }

  private async acquire(key: string, binds: HostBinds): Promise<Host> {
    for (;;) {
      if (this.closed) throw new HostStopped('the service is stopping');
      const existing = this.hosts.get(key);
      if (existing && !existing.ended) {
        if (existing.idleTimer) clearTimeout(existing.idleTimer);
        return existing;
      }
      if (this.hosts.size < this.options.maxHosts) break;
      // Full: an idle host makes room at once, else wait for one to end.
      const idle = [...this.hosts.entries()].find(([, h]) => h.busy === 0);
      if (idle) {
        idle[1].stop();
        this.hosts.delete(idle[0]);
        break;
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    const host = new Host(await this.argv(binds));
    this.hosts.set(key, host);
    void host.exited.then(() => this.forget(key, host));
    return host;
  }

  private async argv(binds: HostBinds): Promise<string[]> {
    const bw = bwrapPath();
    if (!bw) throw noSandbox('bubblewrap (bwrap) is not installed');
    // bubblewrap binds only what exists: the folders a host writes are made first.
    for (const dir of binds.writable) await mkdir(dir, { recursive: true });
    const entry = await this.options.entry();
    const node = process.execPath;
    const code = [...entry.readable, ...(node.startsWith('/usr/') ? [] : [path.dirname(node)])];
    const mounts = [...code.map((p) => ({ host: p, inside: p })), ...mountsOf(binds)];
    const env = sandboxEnv({ SVC_SANDBOXED: '1', SVC_SPAWN_HELPER: '0', UV_THREADPOOL_SIZE: '4', NODE_OPTIONS: '' });
    return [...bwrapArgs(bw, { mounts }, env), ...limitArgs(this.options.memoryBytes, 8 * 1024 ** 3), node, ...entry.nodeArgs, entry.file];
  }

  /** Stops every host (the service is stopping). */
  close(): void {
    this.closed = true;
    for (const host of this.hosts.values()) host.stop();
    this.hosts.clear();
    for (const w of this.waiting.splice(0)) w();
  }
}

/** A private folder for the host's bundle, removed when this process exits. */
export function privateBundleDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'geoflow-gdal-host-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
